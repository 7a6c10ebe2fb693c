"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl`` and ``subagents/*.jsonl``).

Each line is one record. How records become messages:

* ``user`` / ``assistant`` records carry an Anthropic ``message`` (content blocks as in the Messages API). Claude
  Code writes one record per content block of a response, all with the same ``message.id``, sometimes with tool
  results in between: those records are merged back into one assistant message (one message = one LLM output),
  and the usage of the call is the one on its last record (the records are streaming snapshots).
* ``message.usage`` becomes the call's :class:`Usage`: ``input_tokens``, ``output_tokens``,
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` with its ``ephemeral_5m/1h`` split.
* ``isMeta`` user records (skill bodies, system reminders, local-command caveats) are not typed by the person but
  are sent to the model, so they are loaded as user messages flagged ``meta["is_meta"] = True``: they count in
  the context, and turn-based views can tell them from real user turns.
* The log's own compactions: a ``system`` record with ``subtype: compact_boundary`` (``compactMetadata.trigger``,
  ``preTokens``, ``postTokens``) becomes a :class:`LogEvent` placed before the next message; the following
  ``isCompactSummary`` user record is loaded as a user message whose index is in ``log_summary_indices`` (replays
  leave it out by default) and its text is the event's summary.
* Sidechains (``isSidechain: true``: Task subagents, the auto-compaction request) are separate conversations, keyed
  by ``agentId`` (``agent-<id>``) or, in older logs without it, by their ``parentUuid`` chain (``sidechain``,
  ``sidechain-2``…). The main thread is conversation ``main`` and comes first.
* Synthetic assistant records (``model: "<synthetic>"``, API error notices) are not LLM outputs: skipped with a
  warning. Records repeated with the same ``uuid`` (resumed sessions) are read once. Other ``system`` records
  and the bookkeeping types (snapshots, progress, queue operations, titles) are not sent to the model: skipped.

Message ``meta`` keeps ``uuid`` and ``timestamp`` (ISO text) of the (first) record, and for assistant messages
``message_id`` and ``model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Conversation, LoadWarning, LogEvent, Message, Source, ToolCall, Usage, structural_warnings
from ._fields import TOO_DEEP, UnknownTypes, as_mapping, as_text, optional_count, type_name
from ._parts import Parts
from .anthropic_messages import messages_of, read_blocks, usage_of
from .base import Document, FormatInfo, LoadError, iter_records, register_format

MAIN = "main"
#: record types that never reach the model
BOOKKEEPING_TYPES = frozenset({"file-history-snapshot", "progress", "queue-operation", "summary", "custom-title",
                               "tag", "agent-name", "pr-link", "last-prompt"})
SYNTHETIC_MODEL = "<synthetic>"


@dataclass
class _Draft:
    """An assistant message being assembled from the records of one API response."""

    parts: Parts
    meta: dict[str, Any]
    usage: Usage | None = None


@dataclass
class _Thread:
    """One conversation of the file (the main thread or a sidechain) while it is read."""

    key: str
    slots: list[Message | _Draft] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    drafts: dict[str, int] = field(default_factory=dict)  # message.id -> slot index
    events: list[dict[str, Any]] = field(default_factory=list)
    summaries: set[int] = field(default_factory=set)
    warnings: list[LoadWarning] = field(default_factory=list)
    awaiting_summary: int | None = None  # index in events of a boundary whose summary record has not come yet

    def add_assistant(self, record: Mapping[str, Any], message: Mapping[str, Any], line: int | None) -> None:
        parts = self.blocks(message.get("content"), line)
        message_id = as_text(message.get("id"))
        usage = usage_of(message.get("usage"))
        slot = self.drafts.get(message_id) if message_id else None
        draft = self.slots[slot] if slot is not None else None
        if isinstance(draft, _Draft):
            draft.parts.merge(parts)
            draft.usage = usage or draft.usage
            return
        self.awaiting_summary = None
        meta = _record_meta(record)
        if message_id:
            meta["message_id"] = message_id
            self.drafts[message_id] = len(self.slots)
        if isinstance(message.get("model"), str):
            meta["model"] = message["model"]
        self.slots.append(_Draft(parts, meta, usage))

    def add_user(self, record: Mapping[str, Any], message: Mapping[str, Any], line: int | None) -> None:
        parts = self.blocks(message.get("content"), line)
        meta = _record_meta(record)
        summary = record.get("isCompactSummary") is True
        if record.get("isMeta") is True:
            meta["is_meta"] = True
        if summary:
            meta["log_compaction_summary"] = True
        local: list[LoadWarning] = []
        made = messages_of("user", parts, meta, f"line {line}", local)
        self.warnings += [replace(w, line=line) for w in local]
        if not made:
            self.warnings.append(LoadWarning("user record with no content skipped", line=line, field="message.content"))
            return
        if summary:
            self.note_summary(made, line)
        else:
            self.awaiting_summary = None  # a boundary's summary record comes right after it, or not at all
        self.slots += made

    def note_summary(self, made: list[Message], line: int | None) -> None:
        start = len(self.slots)
        self.summaries.update(range(start, start + len(made)))
        text = "\n".join(m.text for m in made)
        if self.awaiting_summary is not None:
            self.events[self.awaiting_summary]["summary"] = text
            self.awaiting_summary = None
        else:
            self.events.append({"message_index": start, "kind": "compaction", "summary": text})
            self.warnings.append(LoadWarning("compaction summary without a compact_boundary record", line=line))

    def add_boundary(self, record: Mapping[str, Any]) -> None:
        meta = as_mapping(record.get("compactMetadata"))
        trigger = meta.get("trigger")
        self.events.append({
            "message_index": len(self.slots),
            "kind": "compaction",
            "trigger": trigger if isinstance(trigger, str) else None,
            "pre_tokens": optional_count(meta.get("preTokens")),
            "post_tokens": optional_count(meta.get("postTokens")),
        })
        self.awaiting_summary = len(self.events) - 1

    def blocks(self, content: Any, line: int | None) -> Parts:
        local: list[LoadWarning] = []
        parts = read_blocks(content, f"line {line}", self.calls, local)
        self.warnings += [replace(w, line=line) for w in local]
        return parts

    def conversation(self, path: str | None, shared: list[LoadWarning]) -> Conversation:
        messages: list[Message] = []
        usage: dict[int, Usage] = {}
        for index, slot in enumerate(self.slots):
            if isinstance(slot, _Draft):
                p = slot.parts
                slot_message = Message("assistant", tuple(p.texts), tuple(p.tool_calls), None, tuple(p.reasoning),
                                       tuple(p.images), tuple(p.files), None, slot.meta)
                if slot.usage is not None:
                    usage[index] = slot.usage
                messages.append(slot_message)
            else:
                messages.append(slot)
        events = tuple(LogEvent(**e) for e in self.events)
        warnings = (*shared, *self.warnings, *structural_warnings(messages))
        return Conversation(tuple(messages), (), Source("claude-code", path, self.key, warnings), usage=usage,
                            events=events, log_summary_indices=frozenset(self.summaries))


def _record_meta(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("uuid", "timestamp") if isinstance(record.get(k), str)}


class _Threads:
    """Routes records to their conversation: main thread, or a sidechain by agent id or parent chain."""

    def __init__(self) -> None:
        self.threads: dict[str, _Thread] = {}
        self._chain: dict[str, str] = {}  # uuid -> thread key, for sidechains without agentId

    def for_record(self, record: Mapping[str, Any]) -> _Thread:
        key = self._key(record)
        uuid = as_text(record.get("uuid"))
        if uuid and key != MAIN:
            self._chain[uuid] = key
        if key not in self.threads:
            self.threads[key] = _Thread(key)
        return self.threads[key]

    def _key(self, record: Mapping[str, Any]) -> str:
        if record.get("isSidechain") is not True:
            return MAIN
        agent = record.get("agentId")
        if isinstance(agent, str) and agent:
            return f"agent-{agent}"
        parent = as_text(record.get("parentUuid"))
        if parent and parent in self._chain:
            return self._chain[parent]
        n = sum(1 for k in self.threads if k == "sidechain" or k.startswith("sidechain-"))
        return "sidechain" if n == 0 else f"sidechain-{n + 1}"

    def ordered(self) -> list[_Thread]:
        return sorted(self.threads.values(), key=lambda t: t.key != MAIN)


def read(doc: Document) -> list[Conversation]:
    threads = _Threads()
    shared: list[LoadWarning] = []
    unknown = UnknownTypes("record")
    seen: set[str] = set()
    duplicates: list[int | None] = []
    for line, record in iter_records(doc):
        if not isinstance(record, Mapping):
            shared.append(LoadWarning(f"skipped: expected a JSON object, got {type_name(record)}", line=line))
            continue
        kind = as_text(record.get("type"))
        if kind in BOOKKEEPING_TYPES:
            continue
        if kind not in ("user", "assistant", "system"):
            unknown.add(record.get("type"), line)
            continue
        uuid = as_text(record.get("uuid"))
        if uuid:
            if uuid in seen:
                duplicates.append(line)
                continue
            seen.add(uuid)
        try:
            _read_record(record, kind, line, threads)
        except RecursionError:
            shared.append(LoadWarning(TOO_DEEP, line=line))
    if duplicates:
        count = f"{len(duplicates)} records" if len(duplicates) > 1 else "1 record"
        shared.append(LoadWarning(f"{count} repeating an earlier record's uuid skipped (first at this line)",
                                  line=duplicates[0], field="uuid"))
    shared += unknown.warnings()
    ordered = threads.ordered()
    if not ordered:
        raise LoadError(doc.path, "no user or assistant records in this Claude Code log", field="type")
    # file-level warnings go with the first conversation (the main thread), once
    return [t.conversation(doc.path, shared if i == 0 else []) for i, t in enumerate(ordered)]


def _read_record(record: Mapping[str, Any], kind: str, line: int | None, threads: _Threads) -> None:
    thread = threads.for_record(record)
    if kind == "system":
        if record.get("subtype") == "compact_boundary":
            thread.add_boundary(record)
        return
    message = record.get("message")
    if not isinstance(message, Mapping):
        thread.warnings.append(LoadWarning(f"{kind} record skipped: 'message' is {type_name(message)}, expected an "
                                           "object", line=line, field="message"))
        return
    if kind == "assistant":
        if message.get("model") == SYNTHETIC_MODEL or record.get("isApiErrorMessage") is True:
            thread.warnings.append(LoadWarning("synthetic assistant record (API error or placeholder) skipped: not an "
                                               "LLM output", line=line, field="message.model"))
            return
        thread.add_assistant(record, message, line)
    else:
        thread.add_user(record, message, line)


def detect(doc: Document) -> str | None:
    if doc.kind not in ("jsonl", "json"):
        return "not JSONL"
    if doc.kind == "json" and not isinstance(doc.value, Mapping):
        return "not JSONL records"
    for _, record in iter_records(doc):
        if (isinstance(record, Mapping) and record.get("type") in ("user", "assistant")
                and isinstance(record.get("message"), Mapping)
                and any(k in record for k in ("sessionId", "parentUuid", "isSidechain"))):
            return None
    return "no Claude Code records (type user/assistant with 'message' and 'sessionId'/'parentUuid')"


register_format(
    FormatInfo(
        name="claude-code",
        title="Claude Code session",
        detect=detect,
        read=read,
        extensions=(".jsonl",),
        description="Claude Code session transcripts (~/.claude/projects/*.jsonl, subagents/*.jsonl): records of one "
        "response merged, usage with cache split, compact_boundary events, sidechains as their own conversations.",
    )
)
