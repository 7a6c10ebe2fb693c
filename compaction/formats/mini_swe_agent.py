"""mini-swe-agent trajectories (``.traj.json``): ``{"messages": [...], "info": {...}, "trajectory_format":
"mini-swe-agent-1[.x]", "instance_id"?}``.

``messages`` is the exact list the model was prompted with (chat-completions shape), each message with an ``extra``
object: for assistant messages the provider ``response`` (its ``usage`` becomes the call's :class:`Usage`), ``cost``
and ``timestamp``; for observations the raw command output. Rules:

* Tool-calling runs answer ``tool_calls`` with role ``tool`` messages. Text-action runs (``mini-swe-agent-1``) put
  the command in a ```` ```bash ```` block of the reply (the agent runs a reply with exactly one such block) and the
  output in the next ``user`` message: as in the SWE-agent reader, the command becomes a tool call named after its
  command word with arguments ``{"command": ...}``, the reply keeps the text around the block, and the output
  becomes the call's tool result (:mod:`._text_actions`). A reply with no or several blocks gets the agent's
  format-error message, which stays a user message.
* The run ends with a message of role ``exit`` (``extra.exit_status``, ``extra.submission``) that no model ever saw.
  When the last response still has an unanswered call, the exit message is that call's outcome (the command printed
  the submission), so it becomes the tool result of the call that printed ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``
  (else of the last open call); otherwise it is kept as a closing user message. Either way ``meta`` records
  ``mini_swe_agent_role: "exit"`` and the exit status.
* The conversation id is the ``instance_id`` when the file names one, else ``"0"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Source
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from ._text_actions import with_text_actions
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import read_messages_with_meta
from .openai_chat import usage_from_openai

_ROLES = ("system", "user", "assistant", "tool")
_SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
#: mini-swe-agent's default ``action_regex``: the command of a text-action reply
ACTION_BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)


def detect(doc: Document) -> str | None:
    """None when ``doc`` is a mini-swe-agent trajectory, else why not."""
    if doc.kind != "json":
        return "not a single JSON document"
    value = doc.value
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        return "no object with a 'messages' list"
    fmt = value.get("trajectory_format")
    if not (isinstance(fmt, str) and fmt.startswith("mini-swe-agent")) and "mini_version" not in as_mapping(
            value.get("info")):
        return "no 'trajectory_format: mini-swe-agent-…' (nor info.mini_version)"
    return None


def _open_calls(raw: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(call id, arguments text) of the tool calls not yet answered in the prepared messages."""
    open_calls: dict[str, str] = {}
    for m in raw:
        if m["role"] == "assistant" and isinstance(m.get("tool_calls"), list):
            for tc in m["tool_calls"]:
                tc = as_mapping(tc)
                if isinstance(tc.get("id"), str):
                    args = as_mapping(tc.get("function")).get("arguments")
                    open_calls[tc["id"]] = args if isinstance(args, str) else json.dumps(args, default=str)
        elif m["role"] == "tool" and isinstance(m.get("tool_call_id"), str):
            open_calls.pop(m["tool_call_id"], None)
    return list(open_calls.items())


def _exit_message(entry: Mapping[str, Any], raw: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    extra = as_mapping(entry.get("extra"))
    meta = {"mini_swe_agent_role": "exit"}
    if as_text(extra.get("exit_status")):
        meta["exit_status"] = extra["exit_status"]
    open_calls = _open_calls(raw)
    if open_calls:
        submitting = [cid for cid, args in open_calls if _SUBMIT_MARKER in args]
        call_id = submitting[-1] if submitting else open_calls[-1][0]
        return {"role": "tool", "tool_call_id": call_id, "content": entry.get("content")}, meta
    return {"role": "user", "content": entry.get("content")}, meta


def _actions(messages: list[Message]) -> dict[int, str]:
    """The command of each text-action reply (an assistant message without tool calls holding exactly one
    ```` ```bash ```` block), by message index."""
    found = {}
    for index, message in enumerate(messages):
        if message.role == "assistant" and not message.tool_calls:
            blocks = ACTION_BLOCK.findall(message.text)
            if len(blocks) == 1:
                found[index] = blocks[0]
    return found


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    extra = as_mapping(entry.get("extra"))
    return {k: extra[k] for k in ("timestamp", "cost") if isinstance(extra.get(k), (int, float, str))}


def read(doc: Document) -> list[Conversation]:
    """The trajectory as one conversation."""
    value = doc.value
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        raise LoadError(doc.path, "expected a mini-swe-agent trajectory with a 'messages' list", field="messages")
    warnings: list[LoadWarning] = []
    raw: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    responses: list[Any] = []
    for i, entry in enumerate(value["messages"]):
        if not isinstance(entry, Mapping):
            warnings.append(LoadWarning(f"messages[{i}]: skipped, expected an object, got {type_name(entry)}",
                                        field="messages"))
            continue
        role = entry.get("role")
        if role == "exit":
            message, meta = _exit_message(entry, raw)
        elif role in _ROLES:
            message, meta = {k: v for k, v in entry.items() if k != "extra"}, _meta(entry)
        else:
            warnings.append(LoadWarning(f"messages[{i}]: skipped, unknown role {role!r}", field="role"))
            continue
        raw.append(message)
        metas.append(meta)
        responses.append(as_mapping(as_mapping(entry.get("extra")).get("response")).get("usage"))
    messages, _, read_warnings = read_messages_with_meta(raw, metas, doc.path)
    messages = with_text_actions(messages, _actions(messages), lambda i: f"action-{i}", lambda _i, _m: True)
    usage: dict[int, Usage] = {}
    for index, (read_message, reported) in enumerate(zip(messages, responses, strict=True)):
        found = usage_from_openai(reported) if read_message.role == "assistant" else None
        if found is not None:
            usage[index] = found
    warnings += read_warnings + structural_warnings(messages)
    conversation_id = as_text(value.get("instance_id")) or "0"
    return [Conversation(tuple(messages), (), Source("mini-swe-agent", doc.path, conversation_id, tuple(warnings)),
                         usage=usage)]


register_format(
    FormatInfo(
        name="mini-swe-agent",
        title="mini-swe-agent trajectory",
        detect=detect,
        read=read,
        extensions=(".traj.json", ".json"),
        description="mini-swe-agent .traj.json: the prompted messages (tool calls or text actions), per-call usage "
        "from the saved responses, the final 'exit' message as the submitting call's outcome.",
        reads="The messages the model was prompted with, usage per call from the saved responses, tool calls with "
        "their results, and text actions (one bash block per reply) turned into tool calls named after the command "
        "word with the next observation as the result; the exit message as the outcome of the last open call.",
        leaves_out="Costs and raw command outputs kept beside the prompt (the prompt holds what the model saw). Text "
        "actions are text to the model: the tool calls are our reading of them, and their JSON form counts a few "
        "characters differently from the bash block the model wrote.",
    )
)
