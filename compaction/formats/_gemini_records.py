"""One Gemini CLI ``MessageRecord`` as the messages the model read or wrote (``chatRecordingTypes.ts``).

* ``gemini`` records are one model response: ``content`` (its text, or a part list), ``thoughts`` (thought
  summaries: ``subject`` + ``description``) as reasoning, ``toolCalls`` (``id``, ``name``, ``args``, ``status``,
  ``result``: the ``functionResponse`` part list sent back) as tool calls, each answered by a tool message right
  after, ``tokens`` as the call's usage and ``model``. A record with neither ``model`` nor ``tokens`` was written
  by Gemini CLI itself (``recordSyntheticMessage``: e.g. "Binary content received"), not by a model:
  ``meta["generated"] = False``.
* ``user`` records are the person's prompt (text, media). Gemini CLI ≥ 0.44 also records each tool response turn
  as a ``user`` record whose parts are ``functionResponse``\\ s: a response already read from its call's ``result``
  is not read twice; one for a call without a stored result becomes that call's tool message.
* ``info`` / ``warning`` / ``error`` records are notices the CLI showed the person (update hints, compression
  notes, quota errors) and never sent to the model; the one exception is the ``info`` turn that carries media read
  by a tool (``inlineData`` / ``fileData`` parts, injected as the next request), which is read as a user message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import Usage
from ._fields import as_count
from ._fields import as_id
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from ._gemini_parts import function_call
from ._gemini_parts import read_parts
from ._gemini_parts import tool_result_of

MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
NOTICE_TYPES = frozenset({"info", "error", "warning"})
#: a message's comparable content: role, text, tool calls (id, name), tool result (call id, text)
Key = tuple[str, str, tuple[tuple[str | None, str], ...], tuple[str | None, str] | None]


def usage_of(tokens: Any) -> Usage | None:
    """``tokens`` (``TokensSummary``) as :class:`Usage`.

    ``input`` is Gemini's ``promptTokenCount``, which includes ``cached`` (``cachedContentTokenCount``): the
    uncached rest is ``input_tokens``, the cached part ``cache_read_tokens``. ``tool``
    (``toolUsePromptTokenCount``, the results of the model's built-in tools) is prompt the model read too, and
    Gemini counts it apart from ``promptTokenCount``. ``output`` (``candidatesTokenCount``) excludes the model's
    ``thoughts``; both are output it generated. A record of all zeros (Gemini CLI writes 0 for each count the response's
    usage metadata lacked) reports nothing: None."""
    if not isinstance(tokens, Mapping):
        return None
    prompt = as_count(tokens.get("input"))
    if not (prompt or as_count(tokens.get("output")) or as_count(tokens.get("thoughts"))):
        return None
    cached = min(as_count(tokens.get("cached")), prompt)
    return Usage(input_tokens=prompt - cached + as_count(tokens.get("tool")),
                 output_tokens=as_count(tokens.get("output")) + as_count(tokens.get("thoughts")),
                 cache_read_tokens=cached)


def thought_text(thought: Any) -> str | None:
    """A recorded thought summary as the model wrote it (``**subject**`` then the description)."""
    thought = as_mapping(thought)
    subject = (as_text(thought.get("subject")) or "").strip()
    description = (as_text(thought.get("description")) or "").strip()
    if subject and description:
        return f"**{subject}**\n\n{description}"
    return subject or description or None


def is_synthetic(record: Mapping[str, Any]) -> bool:
    """A ``gemini`` record no model produced (Gemini CLI writes those without ``model`` and ``tokens``)."""
    return record.get("model") is None and record.get("tokens") is None


def is_media_turn(record: Mapping[str, Any]) -> bool:
    """An ``info`` record that carries media injected into the next request (read as a user message)."""
    content = record.get("content")
    items = content if isinstance(content, list) else [content]
    return any(isinstance(p, Mapping) and (isinstance(p.get("inlineData"), Mapping)
                                           or isinstance(p.get("fileData"), Mapping)) for p in items)


@dataclass
class Made:
    """The messages one record became; ``usage`` belongs to the first (the model response)."""

    messages: list[Message] = field(default_factory=list)
    usage: Usage | None = None


class RecordReader:
    """Reads records in conversation order, remembering the tool calls seen and the ones already answered."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        self.answered: set[str] = set()
        self.warnings: list[LoadWarning] = []

    def read(self, record: Mapping[str, Any], where: str, meta: Mapping[str, Any],
             warnings: list[LoadWarning]) -> Made:
        """The messages of ``record`` (its type was checked to be a message type); what it had to skip goes to
        ``warnings``."""
        self.warnings = warnings
        kind = record.get("type")
        if kind == "gemini":
            return self._response(record, where, meta)
        return Made(self._user(record, where, meta))

    def _response(self, record: Mapping[str, Any], where: str, meta: Mapping[str, Any]) -> Made:
        read = read_parts(record.get("content"), where, self.warnings)
        if read.responses:
            self.warnings.append(LoadWarning(f"{where}: functionResponse parts in a gemini message skipped",
                                             field="content"))
        reasoning = [t for t in map(thought_text, _list(record.get("thoughts"), "thoughts", where, self.warnings))
                     if t]
        calls_made = [self._call(raw, f"{where}, toolCalls[{j}]")
                      for j, raw in enumerate(_list(record.get("toolCalls"), "toolCalls", where, self.warnings))]
        recorded = [r for r in calls_made if r is not None]
        stored_ids = {call.id for call, _ in recorded if call.id}
        calls = [call for call, _ in recorded] + [c for c in read.parts.tool_calls if not (c.id and c.id in stored_ids)]
        message_meta = dict(meta)
        if isinstance(record.get("model"), str):
            message_meta["model"] = record["model"]
        if is_synthetic(record):
            message_meta["generated"] = False
        parts = read.parts
        reply = Message("assistant", tuple(parts.texts), tuple(calls), None, (*reasoning, *parts.reasoning),
                        tuple(parts.images), tuple(parts.files), None, message_meta)
        for call in calls:
            if call.id:
                self.calls[call.id] = call
        made = Made([reply], usage_of(record.get("tokens")))
        for call, raw in recorded:
            result = self._stored_result(call, raw, where)
            if result is not None:
                made.messages.append(Message("tool", tool_result=result, meta=dict(meta)))
        return made

    def _call(self, raw: Any, where: str) -> tuple[ToolCall, Mapping[str, Any]] | None:
        if not isinstance(raw, Mapping):
            self.warnings.append(LoadWarning(f"{where}: skipped, expected a tool call object, got {type_name(raw)}",
                                             field="toolCalls"))
            return None
        call = function_call(raw)
        if call is None:
            self.warnings.append(LoadWarning(f"{where}: tool call without a name skipped", field="toolCalls.name"))
            return None
        extra = {k: raw[k] for k in ("status", "agentId", "displayName") if isinstance(raw.get(k), str)}
        return ToolCall(call.id, call.name, call.arguments, extra or None), raw

    def _stored_result(self, call: ToolCall, raw: Mapping[str, Any], where: str) -> ToolResult | None:
        if raw.get("result") is None:
            return None
        found = tool_result_of(raw["result"], call.id, f"{where}, result", self.warnings)
        if found is None:
            self.warnings.append(LoadWarning(f"{where}: tool call {call.id or call.name!r} has a result without a "
                                             "functionResponse; left unanswered", field="toolCalls.result"))
            return None
        if call.id:
            self.answered.add(call.id)
        result, error = found
        return ToolResult(call, result, error or raw.get("status") == "error")

    def _user(self, record: Mapping[str, Any], where: str, meta: Mapping[str, Any]) -> list[Message]:
        read = read_parts(record.get("content"), where, self.warnings)
        out: list[Message] = []
        for response in read.responses:
            if response.call_id and response.call_id in self.answered:
                continue  # the same response, already read from its call's stored result
            origin = self.calls.get(response.call_id or "") or ToolCall(response.call_id, response.name or "unknown")
            if origin.id:
                self.answered.add(origin.id)
            out.append(Message("tool", tool_result=ToolResult(origin, response.result, response.error),
                               meta=dict(meta)))
        parts = read.parts
        if parts.tool_calls:
            self.warnings.append(LoadWarning(f"{where}: functionCall parts in a user message skipped",
                                             field="content"))
        if parts.texts or parts.images or parts.files:
            message_meta = dict(meta)
            if record.get("type") != "user":
                message_meta["gemini_type"] = record.get("type")
            out.append(Message("user", tuple(parts.texts), (), None, (), tuple(parts.images), tuple(parts.files),
                               None, message_meta))
        return out


def _list(value: Any, name: str, where: str, warnings: list[LoadWarning]) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    warnings.append(LoadWarning(f"{where}: '{name}' is {type_name(value)}, expected a list; skipped", field=name))
    return []


def record_keys(record: Mapping[str, Any]) -> list[Key]:
    """The comparable content of a record's messages, read on its own (for matching a rewritten history against the
    messages it replaces; thoughts and media are left out: history copies drop thoughts)."""
    kind = as_text(record.get("type"))
    if kind not in MESSAGE_TYPES or (kind in NOTICE_TYPES and not is_media_turn(record)):
        return []
    return [key_of(m) for m in RecordReader().read(record, "", {}, []).messages]


def key_of(message: Message) -> Key:
    """A message's comparable content."""
    result = message.tool_result
    return (message.role, "".join(message.texts).strip(), tuple((c.id, c.name) for c in message.tool_calls),
            (result.call_id, result.text) if result is not None else None)


def record_id(record: Any) -> str | None:
    """A message record's ``id`` (Gemini CLI tells message records from others by a string id)."""
    return as_id(record.get("id")) if isinstance(record, Mapping) and isinstance(record.get("id"), str) else None
