"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``:

* ``session_meta``: its ``instructions`` (or ``base_instructions.text``) become the system message;
* ``response_item``: a Responses API item (user / developer / assistant ``message``, ``reasoning``,
  ``function_call`` / ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``,
  ``local_shell_call``…), read by the shared Responses item reader: the output items of one model turn between two
  inputs form one assistant message. Tool outputs keep the text the model received; when it is the JSON
  ``{"output", "metadata"}`` envelope of older shells, ``exit_code`` and ``duration_seconds`` go to ``meta``;
* ``event_msg`` with ``token_count``: ``info.last_token_usage`` is the usage of one LLM call (``input_tokens``
  includes ``cached_input_tokens``, which become cache reads) and ``info.model_context_window`` the model's window
  (``Source.context_window``). Codex repeats the same figures after each tool output: a record whose running
  total did not change is not a new call. The usage goes to the model turn it is written next to (0.5x writes it
  before the turn's items, later versions after them);
* ``web_search_call`` items (the hosted web search, run inside the model's response) become ``web_search`` tool calls
  with a result after the turn's assistant message (the shared item reader); an item without its ``action`` takes
  it from the ``event_msg`` ``web_search_end`` record of the same call (by ``call_id``, else in order). The log never
  holds the search results: the result is a stand-in text (or the sources, when the action lists them);
* ``compacted``: the run compacted its history; the summary (``message``) is loaded as a user message in
  ``log_summary_indices`` (replays leave it out by default) and a :class:`LogEvent` marks the spot. An
  ``event_msg`` ``context_compacted`` without a ``compacted`` record marks it too.

Other ``event_msg`` records (``user_message``, ``agent_message``, ``agent_reasoning`` echo response items),
``turn_context`` and ``ghost_snapshot`` items are not sent to the model: skipped (``turn_context.model`` names the
model: ``Source.model`` is the one most turns used; ``session_meta.cli_version`` is ``Source.agent_version``). Legacy rollouts (before the
``payload`` wrapper: a first ``{"id", "timestamp", "instructions"}`` line, then bare items) are read too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Usage
from ._fields import TOO_DEEP
from ._fields import UnknownTypes
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import optional_count
from ._fields import type_name
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format
from .openai_responses import RESPONSES_TYPES
from .openai_responses import ItemReader

WRAPPED_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
SKIPPED_ITEMS = frozenset({"ghost_snapshot", "other"})


class _Rollout:
    """Reading state of one rollout file."""

    def __init__(self) -> None:
        self.reader = ItemReader(skip_types=SKIPPED_ITEMS)
        self.unknown = UnknownTypes("record")
        self.context_window: int | None = None
        self._last_total: str | None = None
        self._compacted_at: int | None = None  # message count right after the last compacted record
        self.models: Counter[str] = Counter()  # turn_context models, one count per turn
        self.cli_version: str | None = None
        self.web_searches: list[tuple[str | None, dict[str, Any]]] = []  # (call id, arguments) of web_search_end
        self._marked_at: int | None = None  # message count right after a context_compacted event

    def record(self, record: Any, line: int | None, first: bool) -> None:
        if not isinstance(record, Mapping):
            self.reader.warnings.append(LoadWarning(f"skipped: expected a JSON object, got {type_name(record)}",
                                                    line=line))
            return
        kind = as_text(record.get("type"))
        payload = record.get("payload")
        meta = {"timestamp": record["timestamp"]} if isinstance(record.get("timestamp"), str) else {}
        if kind in WRAPPED_TYPES:
            if not isinstance(payload, Mapping):
                self.reader.warnings.append(LoadWarning(f"{kind} record skipped: 'payload' is {type_name(payload)}, "
                                                        "expected an object", line=line, field="payload"))
                return
            self._wrapped(kind, payload, line, meta)
        elif "record_type" in record:
            return  # legacy rollout state line
        elif first and "type" not in record and "role" not in record and "id" in record:
            self._instructions(record)
        elif kind in RESPONSES_TYPES or kind == "message" or (kind is None and "role" in record):
            self.reader.add(record, f"line {line}", line, meta)
        else:
            self.unknown.add(record.get("type"), line)

    def _wrapped(self, kind: str, payload: Mapping[str, Any], line: int | None, meta: dict[str, Any]) -> None:
        if kind == "session_meta":
            self._instructions(payload)
            self.cli_version = self.cli_version or as_text(payload.get("cli_version"))
        elif kind == "turn_context":
            if as_text(payload.get("model")):
                self.models[payload["model"]] += 1
        elif kind == "response_item":
            self.reader.add(payload, f"line {line}", line, meta)
        elif kind == "event_msg":
            event = payload.get("type")
            if event == "token_count":
                self._token_count(payload.get("info"), line)
            elif event == "context_compacted":
                self._context_compacted(line)
            elif event == "web_search_end":
                self._web_search_end(payload)
        elif kind == "compacted":
            self._compacted(payload, line, meta)

    def _instructions(self, payload: Mapping[str, Any]) -> None:
        text = as_text(payload.get("instructions")) or as_text(as_mapping(payload.get("base_instructions")).get("text"))
        if text and not self.reader.slots:
            self.reader.slots.append(Message("system", (text,)))

    def _token_count(self, info: Any, line: int | None) -> None:
        if info is None:
            return  # written before the first call of a session: no usage yet
        if not isinstance(info, Mapping) or not isinstance(info.get("last_token_usage"), Mapping):
            self.reader.warnings.append(LoadWarning("token_count without 'info.last_token_usage'; skipped", line=line,
                                                    field="payload.info.last_token_usage"))
            return
        window = optional_count(info.get("model_context_window"))
        if window:
            self.context_window = window
        last = info["last_token_usage"]
        total = json.dumps(info.get("total_token_usage") or last, sort_keys=True, default=str)
        if total == self._last_total:
            return
        self._last_total = total
        prompt = as_count(last.get("input_tokens"))
        cached = min(as_count(last.get("cached_input_tokens")), prompt)
        self.reader.call_usage(Usage(input_tokens=prompt - cached, output_tokens=as_count(last.get("output_tokens")),
                                     cache_read_tokens=cached))

    def _web_search_end(self, payload: Mapping[str, Any]) -> None:
        """What a web search looked for (``action``, else ``query``), for a ``web_search_call`` item without it."""
        action = {k: v for k, v in as_mapping(payload.get("action")).items() if k != "sources"}
        query = as_text(payload.get("query"))
        if query and not (set(action) - {"type"}):
            action = {"type": as_text(action.get("type")) or "search", "query": query}
        self.web_searches.append((as_text(payload.get("call_id")), action))

    def _context_compacted(self, line: int | None) -> None:
        if self._compacted_at == len(self.reader.slots):
            return  # the compacted record already marked this compaction
        self.reader.compaction(None, line)
        self._marked_at = len(self.reader.slots)

    def _compacted(self, payload: Mapping[str, Any], line: int | None, meta: dict[str, Any]) -> None:
        if self._marked_at == len(self.reader.slots):
            self.reader.events.pop()  # the context_compacted event came first: this record completes it
        self.reader.compaction(as_text(payload.get("message")) or None, line, meta)
        self._compacted_at = len(self.reader.slots)
        self._marked_at = None


def read(doc: Document) -> list[Conversation]:
    rollout = _Rollout()
    for position, (line, record) in enumerate(iter_records(doc)):
        try:
            rollout.record(record, line, position == 0)
        except RecursionError:
            rollout.reader.warnings.append(LoadWarning(TOO_DEEP, line=line))
    rollout.reader.fill_web_searches(rollout.web_searches)
    model = rollout.models.most_common(1)[0][0] if rollout.models else None
    return [rollout.reader.conversation("codex", doc.path, "0", warnings=rollout.unknown.warnings(),
                                        context_window=rollout.context_window, model=model,
                                        agent_version=rollout.cli_version)]


def detect(doc: Document) -> str | None:
    if doc.kind != "jsonl":
        return "not JSONL"
    records = [r for _, r in doc.records[:200]]
    if any(isinstance(r, Mapping) and r.get("type") in ("session_meta", "response_item")
           and isinstance(r.get("payload"), Mapping) for r in records):
        return None
    first = records[0] if records else None
    if (isinstance(first, Mapping) and "id" in first and "timestamp" in first and "type" not in first
            and any(isinstance(r, Mapping) and as_text(r.get("type")) in RESPONSES_TYPES | {"message"}
                    for r in records[1:])):
        return None
    return "no Codex rollout records (session_meta / response_item with a payload)"


register_format(
    FormatInfo(
        name="codex",
        title="OpenAI Codex CLI rollout",
        detect=detect,
        read=read,
        extensions=(".jsonl",),
        description="Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): response items as one "
        "assistant message per model turn, token_count usage and context window, compacted summaries.",
        reads="The instructions, every response item (messages, reasoning summaries, function, custom and shell "
        "calls with their outputs, web searches as web_search tool calls) with one assistant message per model turn, "
        "token_count usage per call and the model's context window, compacted summaries as the log's own "
        "compactions, the model (turn_context) and cli_version.",
        leaves_out="Event records that only echo response items for the terminal, turn contexts and ghost snapshots. "
        "A web search's results are not in the rollout (the API keeps them inside the response): its tool result is "
        "a stated stand-in text.",
    )
)
