"""Gemini CLI sessions (``~/.gemini/tmp/<projectHash>/chats/session-<time>-<id8>.jsonl``; before v0.39 it wrote one
``.json`` object; a subagent's session sits in ``chats/<parent session id>/<agent id>.jsonl``).

The file is replayed as Gemini CLI's loader replays it (:mod:`._gemini_session`: rewinds drop messages, ``$set``
updates session fields, a ``$set.messages`` checkpoint that rewrites the history is the agent's own compaction or
masking, marked where it happened), and each message record becomes messages as :mod:`._gemini_records`
describes: ``user`` → user, ``gemini`` → one assistant message per model response (thoughts as reasoning, tool calls
each followed by its result as a tool message, ``tokens`` as the call's usage), ``info`` / ``warning`` / ``error``
notices are not sent to the model (skipped, counted in a warning).

``Source``: the conversation id is the ``sessionId``; ``model`` is the model most responses name; ``agent_version``
is the installed version when an update notice states it ("Gemini CLI update available! 0.23.0 → 0.24.0");
``meta`` keeps ``projectHash``, ``startTime``, ``lastUpdated``, ``summary``, ``kind`` and ``directories``. A
``kind: "subagent"`` session is its own conversation; its ``parent`` is the session id of the folder it sits in.
Tool calls keep ``status``, ``agentId`` (the subagent a call started) and ``displayName`` in ``extra``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import Source
from ..conversation import Usage
from ..conversation import structural_warnings
from ._fields import TOO_DEEP
from ._fields import as_text
from ._gemini_records import MESSAGE_TYPES
from ._gemini_records import NOTICE_TYPES
from ._gemini_records import RecordReader
from ._gemini_records import is_media_turn
from ._gemini_records import record_keys
from ._gemini_session import Mark
from ._gemini_session import SessionLog
from ._gemini_session import Slot
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format

#: session fields kept in ``Source.meta``
META_FIELDS = ("projectHash", "startTime", "lastUpdated", "summary", "kind", "directories")
#: the update notice Gemini CLI records as an ``info`` message; it names the version that is running
_UPDATE_NOTICE = re.compile(r"Gemini CLI update available! (\d+\.\d+\.\d+[\w.+-]*) \u2192")


def read(doc: Document) -> list[Conversation]:
    """The session as one conversation."""
    log = SessionLog(record_keys)
    for line, record in iter_records(doc):
        try:
            log.record(record, line)
        except RecursionError:
            log.warnings.append(LoadWarning(TOO_DEEP, line=line))
    return [_conversation(log, doc.path)]


def _conversation(log: SessionLog, path: str | None) -> Conversation:
    warnings = log.warnings
    reader = RecordReader()
    messages: list[Message] = []
    usage: dict[int, Usage] = {}
    events: list[LogEvent] = []
    summaries: set[int] = set()
    notices: Counter[str] = Counter()
    version: str | None = None
    for item in log.items:
        if isinstance(item, Mark):
            events.append(LogEvent(len(messages), item.kind, cleared=item.cleared, summary=item.summary))
            continue
        kind = as_text(item.record.get("type"))
        if kind in NOTICE_TYPES and not is_media_turn(item.record):
            notices[kind] += 1
            version = version or _running_version(item.record)
            continue
        if kind not in MESSAGE_TYPES:
            warnings.append(LoadWarning(f"message {item.id!r} of unknown type {kind!r} skipped", line=item.line,
                                        field="type"))
            continue
        local: list[LoadWarning] = []
        try:
            made = reader.read(item.record, f"message {item.id!r}", _meta(item), local)
        except RecursionError:
            warnings.append(LoadWarning(TOO_DEEP, line=item.line))
            continue
        warnings += [LoadWarning(w.message, item.line, w.field) for w in local]
        if made.usage is not None and made.messages and made.messages[0].meta.get("generated") is not False:
            usage[len(messages)] = made.usage
        if item.summary:
            summaries.update(range(len(messages), len(messages) + len(made.messages)))
        messages += made.messages
    warnings += _notice_warnings(notices)
    if log.dropped:
        warnings.append(LoadWarning(f"{log.dropped} message(s) rewound or rolled back by Gemini CLI left out: the "
                                    "model's later calls did not see them"))
    warnings += structural_warnings(messages)
    return Conversation(tuple(messages), (), _source(log, path, messages, version, warnings), usage=usage,
                        events=tuple(events), log_summary_indices=frozenset(summaries))


def _meta(slot: Slot) -> dict[str, Any]:
    meta: dict[str, Any] = {"id": slot.id}
    if isinstance(slot.record.get("timestamp"), str):
        meta["timestamp"] = slot.record["timestamp"]
    if slot.summary:
        meta["log_compaction_summary"] = True
    return meta


def _running_version(record: Mapping[str, Any]) -> str | None:
    found = _UPDATE_NOTICE.search(as_text(record.get("content")) or "")
    return found.group(1) if found else None


def _notice_warnings(notices: Counter[str]) -> list[LoadWarning]:
    if not notices:
        return []
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(notices.items()))
    return [LoadWarning(f"skipped {counts} message(s): notices Gemini CLI showed the person, never sent to the model",
                        field="type")]


def _source(log: SessionLog, path: str | None, messages: list[Message], version: str | None,
            warnings: list[LoadWarning]) -> Source:
    metadata = log.metadata
    models = Counter(m.meta["model"] for m in messages if m.role == "assistant" and isinstance(m.meta.get("model"), str)
                     and m.meta.get("generated") is not False)
    meta = {k: metadata[k] for k in META_FIELDS if _is_json_field(metadata.get(k))}
    session = as_text(metadata.get("sessionId")) or "0"
    parent = _parent_session(path) if metadata.get("kind") == "subagent" else None
    return Source("gemini-cli", path, session, tuple(warnings), model=models.most_common(1)[0][0] if models else None,
                  agent_version=version, parent=parent, meta=meta)


def _is_json_field(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _parent_session(path: str | None) -> str | None:
    """A subagent's parent session: the folder Gemini CLI nests it in (``chats/<parent session id>/``)."""
    if not path:
        return None
    folder = PurePath(path).parent.name
    return folder if folder and folder != "chats" else None


# ------------------------------------------------------------------------------------------------ detection
def detect(doc: Document) -> str | None:
    if doc.kind == "json":
        value = doc.value
        if (isinstance(value, Mapping) and isinstance(value.get("sessionId"), str)
                and isinstance(value.get("projectHash"), str) and isinstance(value.get("messages"), list)):
            return None
        return "no Gemini CLI session object ('sessionId', 'projectHash' and a 'messages' list)"
    if doc.kind != "jsonl":
        return "not JSON or JSONL"
    for _, record in doc.records[:200]:
        if not isinstance(record, Mapping):
            continue
        if (isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str)
                and "type" not in record):
            return None
        if isinstance(record.get("$rewindTo"), str) or (
                isinstance(record.get("id"), str) and record.get("type") == "gemini" and "content" in record):
            return None
    return "no Gemini CLI records (a 'sessionId' + 'projectHash' line, 'gemini' messages or '$rewindTo')"


register_format(
    FormatInfo(
        name="gemini-cli",
        title="Gemini CLI session",
        detect=detect,
        read=read,
        extensions=(".jsonl", ".json"),
        description="Gemini CLI sessions (~/.gemini/tmp/*/chats/session-*.jsonl, older .json): gemini responses with "
        "thoughts, tool calls and results, token usage; rewinds, checkpoints, the agent's own compressions.",
        reads="Both session forms: user prompts, every gemini response (text, thought summaries as reasoning, tool "
        "calls each followed by the functionResponse text it sent back, tokens as usage with cached input as cache "
        "reads), $rewindTo (the rewound messages are left out) and $set records (session fields; a messages "
        "checkpoint that rewrites the history is marked as a compaction or masking, its summary kept apart), model, "
        "session id and subagent kind.",
        leaves_out="info / warning / error notices (shown to the person, never sent to the model; counted in a "
        "warning); the system prompt and tool schemas, which Gemini CLI does not record; displayContent (UI only). "
        "Before v0.32 a tool-only response without thoughts could be folded into the previous gemini message by "
        "Gemini CLI itself; such a record is read as the one response it became.",
    )
)
