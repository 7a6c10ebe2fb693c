"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl`` and the subagent files of a
session, ``<session>/subagents/agent-<id>.jsonl``).

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
* ``attachment`` records (hook output, the skill list, memory files, IDE selections, reminders…) are what Claude
  Code adds to the context on its own: each type that reaches the model becomes a user message flagged ``is_meta``
  (``meta["attachment"]`` names its type) with the text the model saw (:mod:`.claude_code_attachments`), placed
  where Claude Code sends it: right after the latest assistant message or tool result before it (it moves up past
  user prompts and meta messages, never past a compaction). Types that never reach the model are counted in one
  warning per type. ``system`` records of subtype ``local_command`` (a slash command's output) are sent as user
  messages too.
* The log's own compactions: a ``system`` record with ``subtype: compact_boundary`` (``compactMetadata.trigger``,
  ``preTokens``, ``postTokens``) becomes a :class:`LogEvent` (kind ``compaction``) placed before the next message;
  the following ``isCompactSummary`` user record is loaded as a user message whose index is in
  ``log_summary_indices`` (replays leave it out by default) and its text is the event's summary. A
  ``microcompact_boundary`` (``microcompactMetadata``: ``trigger``, ``preTokens``, ``tokensSaved``,
  ``compactedToolIds``) is the agent clearing old tool results in place: a :class:`LogEvent` of kind
  ``microcompact`` with the cleared call ids.
* Subagents are their own conversations (each has its own context window), with id ``agent-<agentId>``,
  ``Source.parent`` the main conversation and ``Source.parent_call_id`` the ``Task`` / ``Agent`` call that started
  it: Claude Code 2.1 embeds each subagent's messages in the session file as ``progress`` records
  (``data.type: agent_progress``, ``data.agentId``, the message in ``data.message``, the Task call in
  ``parentToolUseID``); older versions wrote ``isSidechain`` records with ``agentId`` (or, before that, only a
  ``parentUuid`` chain: ``sidechain``, ``sidechain-2``…); a subagent side file holds only its own sidechain records
  (its ``agent-<id>.meta.json`` companion, when present, adds ``agentType`` and ``description``), and is linked to
  its session when both are loaded together (a folder or several files: :func:`combine`). The main thread is
  conversation ``main`` and comes first.
* ``Source.model`` is the model most LLM calls of a conversation used, ``Source.agent_version`` the Claude Code
  ``version`` most of its records carry (``meta["versions"]`` lists them all when it changed), ``meta["session_id"]``
  the session. A subagent's meta has its ``agent_id``, the Task's ``agent_type`` and ``description``, and the totals
  Claude Code reported in the Task result (``task_result``).
* Synthetic assistant records (``model: "<synthetic>"``, API error notices) are not LLM outputs: skipped with a
  warning. Records repeated with the same ``uuid`` (resumed sessions) are read once. Other ``system`` records,
  other ``progress`` records (hook and shell progress) and the bookkeeping types (snapshots, queue operations,
  titles) are not sent to the model: skipped.

Message ``meta`` keeps ``uuid`` and ``timestamp`` (ISO text) of the (first) record, and for assistant messages
``message_id`` and ``model``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from . import claude_code_attachments as attachments
from ._fields import TOO_DEEP
from ._fields import UnknownTypes
from ._fields import as_id
from ._fields import as_mapping
from ._fields import as_text
from ._fields import optional_count
from ._fields import type_name
from ._parts import Parts
from .anthropic_messages import messages_of
from .anthropic_messages import read_blocks
from .anthropic_messages import usage_of
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format

MAIN = "main"
#: record types that never reach the model
BOOKKEEPING_TYPES = frozenset({"file-history-snapshot", "queue-operation", "summary", "custom-title", "tag",
                               "agent-name", "agent-color", "agent-setting", "pr-link", "last-prompt", "mode",
                               "attribution-snapshot", "speculation-accept"})
SYNTHETIC_MODEL = "<synthetic>"
#: the tools that start a subagent (``Task``, renamed ``Agent`` in later versions)
SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
#: the fields of a subagent's ``.meta.json`` kept in its conversation's meta
AGENT_METADATA_KEYS = {"agentType": "agent_type", "description": "description", "worktreePath": "worktree_path"}
#: the figures of a Task result (``toolUseResult``) kept in a subagent's ``meta["task_result"]``
TASK_RESULT_KEYS = {"status": "status", "totalTokens": "total_tokens", "totalToolUseCount": "total_tool_uses",
                    "totalDurationMs": "duration_ms"}


@dataclass
class _Draft:
    """An assistant message being assembled from the records of one API response."""

    parts: Parts
    meta: dict[str, Any]
    usage: Usage | None = None


@dataclass
class _Thread:
    """One conversation of the file (the main thread or a subagent) while it is read."""

    key: str
    slots: list[Message | _Draft] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    drafts: dict[str, int] = field(default_factory=dict)  # message.id -> slot index
    events: list[dict[str, Any]] = field(default_factory=list)
    summaries: set[int] = field(default_factory=set)
    warnings: list[LoadWarning] = field(default_factory=list)
    awaiting_summary: int | None = None  # index in events of a boundary whose summary record has not come yet
    versions: Counter[str] = field(default_factory=Counter)
    session_id: str | None = None
    #: a subagent: the id of the call that started it, and whether its records were embedded as progress records
    parent_call_id: str | None = None
    embedded: bool = False

    def note_record(self, record: Mapping[str, Any]) -> None:
        """Count the record's Claude Code ``version`` and keep the session id."""
        version = as_text(record.get("version"))
        if version:
            self.versions[version] += 1
        self.session_id = self.session_id or as_text(record.get("sessionId"))

    def add_assistant(self, record: Mapping[str, Any], message: Mapping[str, Any], line: int | None) -> Parts:
        parts = self.blocks(message.get("content"), line)
        message_id = as_text(message.get("id"))
        usage = usage_of(message.get("usage"))
        slot = self.drafts.get(message_id) if message_id else None
        draft = self.slots[slot] if slot is not None else None
        if isinstance(draft, _Draft):
            draft.parts.merge(parts)
            draft.usage = usage or draft.usage
            return parts
        self.awaiting_summary = None
        meta = _record_meta(record)
        if message_id:
            meta["message_id"] = message_id
            self.drafts[message_id] = len(self.slots)
        if isinstance(message.get("model"), str):
            meta["model"] = message["model"]
        self.slots.append(_Draft(parts, meta, usage))
        return parts

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

    def add_context(self, message: Message) -> None:
        """Insert a message Claude Code adds on its own (an attachment) where it sends it: after the latest
        assistant message or tool result, moving up past user prompts and meta messages but never past an earlier
        attachment (they keep their order), a compaction boundary or a summary."""
        position = len(self.slots)
        floor = max((e["message_index"] for e in self.events), default=0)
        while position > floor:
            before = self.slots[position - 1]
            if (isinstance(before, _Draft) or before.role in ("assistant", "tool") or "attachment" in before.meta
                    or position - 1 in self.summaries or _continues_tool_record(self.slots, position - 1)):
                break
            position -= 1
        self.slots.insert(position, message)

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
        self.events.append({
            "message_index": len(self.slots),
            "kind": "compaction",
            "trigger": as_text(meta.get("trigger")),
            "pre_tokens": optional_count(meta.get("preTokens")),
            "post_tokens": optional_count(meta.get("postTokens")),
        })
        self.awaiting_summary = len(self.events) - 1

    def add_microcompact(self, record: Mapping[str, Any], line: int | None) -> None:
        meta = as_mapping(record.get("microcompactMetadata"))
        raw_ids = meta.get("compactedToolIds")
        cleared = tuple(i for i in (as_id(v) for v in raw_ids) if i) if isinstance(raw_ids, list) else ()
        if not isinstance(raw_ids, list):
            self.warnings.append(LoadWarning("microcompact_boundary without a 'compactedToolIds' list: which results "
                                             "were cleared is unknown", line=line,
                                             field="microcompactMetadata.compactedToolIds"))
        self.events.append({
            "message_index": len(self.slots),
            "kind": "microcompact",
            "trigger": as_text(meta.get("trigger")),
            "pre_tokens": optional_count(meta.get("preTokens")),
            "tokens_saved": optional_count(meta.get("tokensSaved")),
            "cleared": cleared,
            "line": line,
        })

    def blocks(self, content: Any, line: int | None) -> Parts:
        local: list[LoadWarning] = []
        parts = read_blocks(content, f"line {line}", self.calls, local)
        self.warnings += [replace(w, line=line) for w in local]
        return parts

    def conversation(self, path: str | None, shared: list[LoadWarning], parent: str | None,
                     meta: Mapping[str, Any]) -> Conversation:
        messages: list[Message] = []
        usage: dict[int, Usage] = {}
        models: Counter[str] = Counter()
        for index, slot in enumerate(self.slots):
            if isinstance(slot, _Draft):
                p = slot.parts
                messages.append(Message("assistant", tuple(p.texts), tuple(p.tool_calls), None, tuple(p.reasoning),
                                        tuple(p.images), tuple(p.files), None, slot.meta))
                if slot.usage is not None:
                    usage[index] = slot.usage
                if isinstance(slot.meta.get("model"), str):
                    models[slot.meta["model"]] += 1
            else:
                messages.append(slot)
        events = tuple(LogEvent(**{k: v for k, v in e.items() if k != "line"}) for e in self.events)
        warnings = (*shared, *self.warnings, *self._uncleared_warnings(messages), *structural_warnings(messages))
        source_meta = {**({"session_id": self.session_id} if self.session_id else {}), **meta}
        if len(self.versions) > 1:
            source_meta["versions"] = sorted(self.versions)
        source = Source("claude-code", path, self.key, warnings, model=_most_common(models),
                        agent_version=_most_common(self.versions), parent=parent,
                        parent_call_id=self.parent_call_id, meta=source_meta)
        return Conversation(tuple(messages), (), source, usage=usage, events=events,
                            log_summary_indices=frozenset(self.summaries))

    def _uncleared_warnings(self, messages: list[Message]) -> list[LoadWarning]:
        """A note for each microcompaction that names tool calls this log does not hold (cleared earlier in a
        session whose first part is in another file)."""
        known = {c.id for m in messages for c in m.tool_calls}
        out = []
        for e in self.events:
            missing = [i for i in e.get("cleared", ()) if i not in known]
            if missing:
                out.append(LoadWarning(f"microcompact_boundary clears {len(missing)} of {len(e['cleared'])} tool "
                                       "results whose calls are not in this log (an earlier part of the session)",
                                       line=e.get("line"), field="microcompactMetadata.compactedToolIds"))
        return out


def _continues_tool_record(slots: list[Message | _Draft], index: int) -> bool:
    """True when the user message at ``index`` is the text part of a record whose tool results come just before it
    (one user record with ``tool_result`` blocks and text is one message to Claude Code)."""
    message = slots[index]
    if index == 0 or isinstance(message, _Draft):
        return False
    before = slots[index - 1]
    uuid = message.meta.get("uuid")
    return (isinstance(before, Message) and before.role == "tool" and uuid is not None
            and before.meta.get("uuid") == uuid)


def _most_common(counts: Counter[str]) -> str | None:
    return counts.most_common(1)[0][0] if counts else None


def _record_meta(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record[k] for k in ("uuid", "timestamp") if isinstance(record.get(k), str)}


class _Threads:
    """Routes records to their conversation: main thread, or a subagent by agent id or parent chain; and keeps
    what ties the subagents to the Task calls that started them."""

    def __init__(self) -> None:
        self.threads: dict[str, _Thread] = {}
        self._chain: dict[str, str] = {}  # uuid -> thread key, for sidechains without agentId
        #: Task / Agent call id -> its input (subagent_type, description, prompt)
        self.task_inputs: dict[str, Mapping[str, Any]] = {}
        #: agent id -> the call that started it, and the figures of its Task result
        self.agent_calls: dict[str, str] = {}
        self.task_results: dict[str, dict[str, Any]] = {}

    def for_record(self, record: Mapping[str, Any]) -> _Thread:
        key = self._key(record)
        uuid = as_text(record.get("uuid"))
        if uuid and key != MAIN:
            self._chain[uuid] = key
        return self.thread(key)

    def thread(self, key: str) -> _Thread:
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

    def note_task_calls(self, parts: Parts) -> None:
        for call in parts.tool_calls:
            if call.name in SUBAGENT_TOOLS and call.id:
                self.task_inputs[call.id] = call.arguments

    def note_task_result(self, record: Mapping[str, Any], message: Mapping[str, Any]) -> None:
        """A Task result names the agent it ran (``toolUseResult.agentId``) and its totals."""
        result = record.get("toolUseResult")
        if not isinstance(result, Mapping) or not as_text(result.get("agentId")):
            return
        agent = result["agentId"]
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, Mapping) and block.get("type") == "tool_result" and (
                    use_id := as_id(block.get("tool_use_id"))):
                self.agent_calls.setdefault(agent, use_id)
                break
        self.task_results[agent] = {ours: result[theirs] for theirs, ours in TASK_RESULT_KEYS.items()
                                    if isinstance(result.get(theirs), (str, int, float))}

    def ordered(self) -> list[_Thread]:
        return sorted(self.threads.values(), key=lambda t: t.key != MAIN)

    def subagent_meta(self, thread: _Thread) -> tuple[str | None, dict[str, Any]]:
        """(parent conversation id, meta) of a subagent thread."""
        agent = thread.key[len("agent-"):] if thread.key.startswith("agent-") else None
        if agent is None:
            return (MAIN if MAIN in self.threads else None), {}
        thread.parent_call_id = thread.parent_call_id or self.agent_calls.get(agent)
        meta: dict[str, Any] = {"agent_id": agent}
        if thread.embedded:
            meta["embedded"] = True
        task = self.task_inputs.get(thread.parent_call_id or "", {})
        for theirs, ours in (("subagent_type", "agent_type"), ("description", "description")):
            if isinstance(task.get(theirs), str):
                meta[ours] = task[theirs]
        if agent in self.task_results:
            meta["task_result"] = self.task_results[agent]
        return (MAIN if MAIN in self.threads else None), meta


class _Reader:
    """Reading state of one session file."""

    def __init__(self) -> None:
        self.threads = _Threads()
        self.shared: list[LoadWarning] = []
        self.unknown = UnknownTypes("record")
        self.unknown_attachments = UnknownTypes("attachment record")
        self.unsent_attachments = UnknownTypes("attachment record", "that never reaches the model, of type",
                                               "that never reach the model, of type")
        self.seen: set[str] = set()
        self.duplicates: list[int | None] = []

    def record(self, record: Any, line: int | None) -> None:
        if not isinstance(record, Mapping):
            self.shared.append(LoadWarning(f"skipped: expected a JSON object, got {type_name(record)}", line=line))
            return
        kind = as_text(record.get("type"))
        if kind in BOOKKEEPING_TYPES:
            return
        if kind == "progress":
            self._progress(record, line)
        elif kind in ("user", "assistant", "system", "attachment"):
            if self._repeated(record, line):
                return
            thread = self.threads.for_record(record)
            thread.note_record(record)
            self._message_record(record, kind, line, thread)
        else:
            self.unknown.add(record.get("type"), line)

    def _repeated(self, record: Mapping[str, Any], line: int | None) -> bool:
        uuid = as_text(record.get("uuid"))
        if not uuid:
            return False
        if uuid in self.seen:
            self.duplicates.append(line)
            return True
        self.seen.add(uuid)
        return False

    def _progress(self, record: Mapping[str, Any], line: int | None) -> None:
        """A subagent's message embedded in the session (``data.type: agent_progress``); other progress records
        (hooks, shell output) are terminal-only."""
        data = as_mapping(record.get("data"))
        if data.get("type") != "agent_progress":
            return
        agent = as_text(data.get("agentId"))
        inner = data.get("message")
        if not agent or not isinstance(inner, Mapping):
            self.shared.append(LoadWarning("agent_progress record without 'data.agentId' and 'data.message' skipped",
                                           line=line, field="data"))
            return
        kind = as_text(inner.get("type"))
        if kind not in ("user", "assistant", "attachment", "system"):
            self.unknown.add(f"agent_progress/{inner.get('type')}", line)
            return
        if self._repeated(inner, line):
            return
        thread = self.threads.thread(f"agent-{agent}")
        thread.embedded = True
        thread.note_record(record)
        call = as_id(record.get("parentToolUseID"))
        if call:
            thread.parent_call_id = thread.parent_call_id or call
            self.threads.agent_calls.setdefault(agent, call)
        self._message_record(inner, kind, line, thread)

    def _message_record(self, record: Mapping[str, Any], kind: str, line: int | None, thread: _Thread) -> None:
        if kind == "system":
            self._system(record, line, thread)
            return
        if kind == "attachment":
            self._attachment(record, line, thread)
            return
        message = record.get("message")
        if not isinstance(message, Mapping):
            thread.warnings.append(LoadWarning(f"{kind} record skipped: 'message' is {type_name(message)}, expected "
                                               "an object", line=line, field="message"))
            return
        if kind == "assistant":
            if message.get("model") == SYNTHETIC_MODEL or record.get("isApiErrorMessage") is True:
                thread.warnings.append(LoadWarning("synthetic assistant record (API error or placeholder) skipped: "
                                                   "not an LLM output", line=line, field="message.model"))
                return
            self.threads.note_task_calls(thread.add_assistant(record, message, line))
        else:
            self.threads.note_task_result(record, message)
            thread.add_user(record, message, line)

    def _system(self, record: Mapping[str, Any], line: int | None, thread: _Thread) -> None:
        subtype = record.get("subtype")
        if subtype == "compact_boundary":
            thread.add_boundary(record)
        elif subtype == "microcompact_boundary":
            thread.add_microcompact(record, line)
        elif subtype == "local_command" and as_text(record.get("content")):
            # a slash command's output: Claude Code sends it to the model as a user message
            thread.add_user(record, {"content": record["content"]}, line)
            added = thread.slots[-1]
            assert isinstance(added, Message)  # add_user appends a message
            thread.slots[-1] = added.with_meta(local_command=True)

    def _attachment(self, record: Mapping[str, Any], line: int | None, thread: _Thread) -> None:
        attachment = record.get("attachment")
        if not isinstance(attachment, Mapping):
            thread.warnings.append(LoadWarning(f"attachment record skipped: 'attachment' is {type_name(attachment)}, "
                                               "expected an object", line=line, field="attachment"))
            return
        kind = as_text(attachment.get("type")) or ""
        version = attachments.parse_version(record.get("version"))
        reaches = attachments.reaches_model(kind, version)
        if reaches is None:
            self.unknown_attachments.add(attachment.get("type"), line)
            return
        sent = attachments.render(attachment, version) if reaches else None
        if sent is None:
            self.unsent_attachments.add(kind, line)
            return
        meta = {**_record_meta(record), "attachment": kind}
        if sent.is_meta:
            meta["is_meta"] = True
        if sent.stand_in:
            meta["stand_in"] = True
        thread.add_context(Message("user", sent.texts, images=sent.images, meta=meta))

    def conversations(self, path: str | None) -> list[Conversation]:
        if self.duplicates:
            count = f"{len(self.duplicates)} records" if len(self.duplicates) > 1 else "1 record"
            self.shared.append(LoadWarning(f"{count} repeating an earlier record's uuid skipped (first at this line)",
                                           line=self.duplicates[0], field="uuid"))
        self.shared += self.unknown.warnings() + self.unknown_attachments.warnings() + self.unsent_attachments.warnings()
        ordered = self.threads.ordered()
        if not ordered:
            raise LoadError(path, "no user or assistant records in this Claude Code log", field="type")
        out = []
        for i, thread in enumerate(ordered):
            if thread.key == MAIN:
                parent, meta = None, ({"subagents": dict(self.threads.agent_calls)} if self.threads.agent_calls
                                      else {})
            else:
                parent, meta = self.threads.subagent_meta(thread)
            # file-level warnings go with the first conversation (the main thread), once
            out.append(thread.conversation(path, self.shared if i == 0 else [], parent, meta))
        return out


def read(doc: Document) -> list[Conversation]:
    reader = _Reader()
    for line, record in iter_records(doc):
        try:
            reader.record(record, line)
        except RecursionError:
            reader.shared.append(LoadWarning(TOO_DEEP, line=line))
    return _with_agent_metadata(reader.conversations(doc.path), doc)


def _with_agent_metadata(conversations: list[Conversation], doc: Document) -> list[Conversation]:
    """A subagent file's ``agent-<id>.meta.json`` companion (``agentType``, ``description``, ``worktreePath``, written
    by later versions) adds to its conversation's meta."""
    name = Path(doc.path).name if doc.path else ""
    if not name.endswith(".jsonl"):
        return conversations
    raw = doc.companion(name[: -len(".jsonl")] + ".meta.json")
    try:
        value = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, Mapping):
        return conversations
    found = {ours: value[theirs] for theirs, ours in AGENT_METADATA_KEYS.items() if isinstance(value.get(theirs), str)}
    return [replace(c, source=replace(c.source, meta={**found, **c.source.meta}))
            if c.id != MAIN and found else c for c in conversations]


def combine(groups: list[list[Conversation]]) -> list[list[Conversation]]:
    """Sessions and subagent files read together: a subagent file's conversation gets the session's main
    conversation as parent (by ``sessionId``) and the Task call that started it; a subagent both embedded in the
    session (progress records) and kept in its own file is read from its file, which is complete (it also holds
    the subagent's final answer), and the embedded copy is left out with a note on the main conversation."""
    mains: dict[str, Conversation] = {}
    #: (session id, agent id) of the subagents read from their own files (the session id as the meta holds it)
    own_files: set[tuple[Any, str]] = set()
    session: Any  # meta values are JSON, whatever the log held
    agent: Any
    for conv in (c for group in groups for c in group):
        session = conv.source.meta.get("session_id")
        if conv.id == MAIN and isinstance(session, str):
            mains.setdefault(session, conv)
        agent = conv.source.meta.get("agent_id")
        if isinstance(agent, str) and not conv.source.meta.get("embedded"):
            own_files.add((session, agent))
    dropped: dict[Any, list[str]] = {}  # by the session id as the meta holds it
    out: list[list[Conversation]] = []
    for group in groups:
        kept = []
        for conv in group:
            meta = conv.source.meta
            session, agent = meta.get("session_id"), meta.get("agent_id")
            if meta.get("embedded") and (session, agent) in own_files:
                dropped.setdefault(session, []).append(conv.id)
                continue
            main = mains.get(session) if isinstance(session, str) else None
            if conv.id != MAIN and conv.source.parent is None and main is not None:
                call = conv.source.parent_call_id or as_mapping(main.source.meta.get("subagents")).get(agent)
                conv = replace(conv, source=replace(conv.source, parent=main.id, parent_call_id=call,
                                                    meta={**meta, "parent_path": main.source.path}))
            kept.append(conv)
        out.append(kept)
    return [[_note_dropped(c, dropped) for c in group] for group in out]


def _note_dropped(conv: Conversation, dropped: dict[Any, list[str]]) -> Conversation:
    names = dropped.get(conv.source.meta.get("session_id")) if conv.id == MAIN else None
    if not names:
        return conv
    several = len(names) > 1
    note = LoadWarning(f"subagent{'s' if several else ''} {', '.join(names)} read from {'their' if several else 'its'} "
                       "own file; the copy embedded in this session's progress records is left out")
    return replace(conv, source=replace(conv.source, warnings=(*conv.source.warnings, note)))


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
        combine=combine,
        extensions=(".jsonl",),
        description="Claude Code session transcripts (~/.claude/projects/*.jsonl, subagents/*.jsonl): records of one "
        "response merged, usage with cache split, compact and microcompact boundaries, attachments, subagents as their "
        "own conversations.",
        reads="User and assistant records (the records of one response merged into one LLM call, its usage with the "
        "cache split), meta messages and the attachment records Claude Code sends to the model (hook output, skill "
        "list, memory files, IDE context, reminders: each as a meta user message where Claude Code places it), "
        "compact_boundary and microcompact_boundary as the log's own compactions (with the cleared tool call ids), and "
        "every subagent (embedded agent_progress records, sidechains, or its own file in a folder) as its own "
        "conversation linked to the Task call that started it; the model and Claude Code version.",
        leaves_out="Records that never reach the model (snapshots, hook and shell progress, terminal-only attachment "
        "types, counted in a warning), synthetic API-error records and repeated records. The fixed wording Claude Code "
        "puts around an attachment is paraphrased and its long plan/auto-mode instructions are a short stand-in; a "
        "subagent embedded in the session lacks its final answer (Claude Code records it only as the Task result), "
        "which its own file, when loaded with the session, has.",
    )
)
