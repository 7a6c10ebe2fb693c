"""Drives aider-chat 0.86.2's real chat-history code: ``ChatSummary`` with the real weak ``Model`` (its own token
counting and metadata; only the model call is stubbed) and ``Coder``'s own ``move_back_cur_messages``,
``summarize_start``, ``summarize_worker`` and ``summarize_end`` (the background thread included).

Runs inside the oracle environment (aider-chat installed; not Compaction Lab), with LITELLM_LOCAL_MODEL_COST_MAP set
so litellm reads its bundled model metadata instead of downloading it. Reads ``{"runs": [run, ...], "count":
{"model", "messages"}}`` on stdin; a run is

    {"weak_model", "weak_model_max_input_tokens" (0: the model's own), "max_chat_history_tokens",
     "ops": [["cur", message] | ["move_back", saved_message or null] | ["call"]], "summaries": [text, ...]}

``cur`` appends a message to ``cur_messages``; ``move_back`` is what ``send_message`` does after applying edits;
``call`` is a send: ``summarize_end`` (as ``format_messages`` does), then the chat it sends is recorded. Prints
``{"runs": [{"calls": [[message, ...]], "summary_requests": [[message, ...]], "warnings": [...]}], "counts": [...]}``
where ``counts`` are the weak model's ``token_count`` of each message of ``count``.
"""

from __future__ import annotations

import json
import os
import sys
import types
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from aider import models  # noqa: E402
from aider.coders.base_coder import Coder  # noqa: E402
from aider.history import ChatSummary  # noqa: E402

_MODELS: dict[str, Any] = {}


def real_model(name: str) -> Any:
    if name not in _MODELS:
        _MODELS[name] = models.Model(name)
    return _MODELS[name]


class WeakModel:
    """The real weak model, except that its model call returns the given summaries (and records the request)."""

    def __init__(self, name: str, max_input_tokens: int, summaries: list[str], requests: list) -> None:
        self.real = real_model(name)
        self.name = self.real.name
        self.info = dict(self.real.info)
        if max_input_tokens:
            self.info["max_input_tokens"] = max_input_tokens
        self.summaries, self.requests = summaries, requests

    def token_count(self, messages: Any) -> int:
        return self.real.token_count(messages)

    def simple_send_with_retries(self, messages: list[dict]) -> str:
        self.requests.append([dict(m) for m in messages])
        return self.summaries.pop(0) if self.summaries else "(past the replay)"


class IO:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def tool_output(self, *args: Any, **kwargs: Any) -> None:
        pass

    def tool_warning(self, message: str = "", **kwargs: Any) -> None:
        self.warnings.append(str(message))


def drive(run: dict[str, Any]) -> dict[str, Any]:
    requests: list = []
    weak = WeakModel(run["weak_model"], run["weak_model_max_input_tokens"], list(run["summaries"]), requests)
    coder = types.SimpleNamespace(done_messages=[], cur_messages=[], summarizer_thread=None,
                                  summarized_done_messages=[], summarizing_messages=None, verbose=False, io=IO())
    coder.summarizer = ChatSummary([weak], run["max_chat_history_tokens"])
    for name in ("move_back_cur_messages", "summarize_start", "summarize_end", "summarize_worker"):
        setattr(coder, name, types.MethodType(getattr(Coder, name), coder))
    calls = []
    for op in run["ops"]:
        if op[0] == "cur":
            coder.cur_messages += [op[1]]
        elif op[0] == "move_back":
            coder.move_back_cur_messages(op[1])
        else:
            coder.summarize_end()
            calls.append([dict(m) for m in coder.done_messages + coder.cur_messages])
    coder.summarize_end()
    return {"calls": calls, "summary_requests": requests, "warnings": coder.io.warnings}


if __name__ == "__main__":
    answer = sys.stdout
    sys.stdout = sys.stderr  # aider prints its failed metadata download; the answer alone goes to stdout
    spec = json.load(sys.stdin)
    out: dict[str, Any] = {"runs": [drive(run) for run in spec.get("runs", [])]}
    count = spec.get("count")
    if count:
        model = real_model(count["model"])
        out["counts"] = [model.token_count(m) for m in count["messages"]]
        out["summary_counts"] = [model.token_count([m]) for m in count["messages"] if m.get("role") == "user"]
    json.dump(out, answer, ensure_ascii=False)
