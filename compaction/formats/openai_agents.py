"""OpenAI Agents SDK sessions: a ``SQLiteSession`` / ``AdvancedSQLiteSession`` database file, or a run's own JSON
(``result.to_state().to_json()``).

* **SQLite** (``agents.db``, any file starting with the SQLite magic header): the session tables
  (``agent_sessions`` / ``agent_messages`` by default; a renamed pair is found by its ``session_id`` and
  ``message_data`` columns). Each row's ``message_data`` is one Responses API input item (JSON), read in ``id``
  order by the shared Responses item reader; every session id is its own conversation. An
  ``AdvancedSQLiteSession`` adds ``message_structure`` (turns and branches: each branch other than ``main`` is
  its own conversation, ``<session>:<branch>``) and ``turn_usage`` (usage per user turn: attached to the turn's
  LLM call when the turn made exactly one request, else kept in ``Source.meta["turn_usage"]``). The file is
  opened in memory, read-only, and only ever read with plain SELECTs on those tables.
* **RunState JSON** (``$schemaVersion``, ``original_input``, ``model_responses``, ``generated_items``): the
  run's input items, then its generated items' ``raw_item``; each model response's ``usage`` goes to the
  assistant message that holds its output items.

``compaction`` items (``OpenAIResponsesCompactionSession`` replaces the stored history by the server's compacted
output: the user messages and one opaque compaction item) are the log's own compactions. A bare JSON list of
session items (``session.get_items()``) is the Responses input format: it loads as ``openai-responses`` (the
same messages; the SDK stores no usage with its items).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Usage
from ..errors import LoadError
from ._fields import TOO_DEEP
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from ._sqlite import open_database
from ._sqlite import quoted
from ._sqlite import tables
from ._sqlite import text
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_responses import ItemReader

FORMAT = "openai-agents"
SESSIONS_TABLE, MESSAGES_TABLE = "agent_sessions", "agent_messages"
MAIN_BRANCH = "main"
#: RunState keys that mark the SDK's own JSON of a run
STATE_KEYS = ("$schemaVersion", "model_responses")
#: generated RunState items that are not sent to the model
UNSENT_ITEMS = frozenset({"tool_approval_item"})


def usage_of(raw: Any) -> Usage | None:
    """Agents SDK ``Usage`` (``input_tokens`` include cached ones; the details may be an object or a list of
    them, as ``serialize_usage`` writes)."""
    if not isinstance(raw, Mapping):
        return None
    details = raw.get("input_tokens_details")
    if isinstance(details, list):
        details = details[0] if details else {}
    details = as_mapping(details)
    total_in = as_count(raw.get("input_tokens"))
    cached = min(as_count(details.get("cached_tokens")), total_in)
    written = min(as_count(details.get("cache_write_tokens")), total_in - cached)
    return Usage(input_tokens=total_in - cached - written, output_tokens=as_count(raw.get("output_tokens")),
                 cache_read_tokens=cached, cache_write_tokens=written, cache_write_5m_tokens=written)


def _json_item(raw: Any, where: str, reader: ItemReader) -> Any:
    """A row's ``message_data``: the JSON of one item, or None with a warning."""
    if not isinstance(raw, bytes):
        reader.warnings.append(LoadWarning(f"{where}: message_data is {type_name(raw)}, expected JSON text; skipped",
                                           field="message_data"))
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        reason = (exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8" if isinstance(
            exc, UnicodeDecodeError) else "nested too deeply" if isinstance(exc, RecursionError) else str(exc))
        reader.warnings.append(LoadWarning(f"{where}: message_data is not valid JSON ({reason}); skipped",
                                           field="message_data"))
        return None


# ------------------------------------------------------------------------------------------------- SQLite
@dataclass
class _Thread:
    """The items of one session branch, read in order."""

    key: str
    reader: ItemReader = field(default_factory=ItemReader)
    turn_of_message: dict[int, int] = field(default_factory=dict)  # message index -> user turn


def _message_tables(found: dict[str, str]) -> tuple[str, str | None] | None:
    """(messages table, sessions table) of the SDK's schema, the default names first."""
    if MESSAGES_TABLE in found:
        return MESSAGES_TABLE, SESSIONS_TABLE if SESSIONS_TABLE in found else None
    for name, sql in found.items():
        if "message_data" in sql and "session_id" in sql:
            return name, next((n for n, s in found.items() if n != name and "session_id" in s
                               and "PRIMARY KEY" in s.upper() and "message_data" not in s), None)
    return None


def _structure(conn: sqlite3.Connection, found: dict[str, str]) -> dict[int, tuple[str, int | None]]:
    """``message_structure`` of an AdvancedSQLiteSession: message id -> (branch, user turn)."""
    if "message_structure" not in found:
        return {}
    rows = conn.execute("SELECT message_id, branch_id, user_turn_number FROM message_structure ORDER BY id")
    return {mid: (text(branch) or MAIN_BRANCH, turn if isinstance(turn, int) else None)
            for mid, branch, turn in rows if isinstance(mid, int)}


def _turn_usage(conn: sqlite3.Connection, found: dict[str, str]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """``turn_usage`` rows by (session, branch)."""
    if "turn_usage" not in found:
        return {}
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    rows = conn.execute("SELECT session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, "
                        "input_tokens_details, output_tokens_details FROM turn_usage ORDER BY user_turn_number")
    for session, branch, turn, requests, tokens_in, tokens_out, details_in, details_out in rows:
        try:
            details = json.loads(details_in) if isinstance(details_in, bytes) else {}
        except (ValueError, RecursionError):
            details = {}
        out.setdefault((text(session), text(branch) or MAIN_BRANCH), []).append({
            "turn": turn, "requests": as_count(requests), "input_tokens": as_count(tokens_in),
            "output_tokens": as_count(tokens_out), "input_tokens_details": details if isinstance(details, dict)
            else {}, "output_tokens_details": text(details_out) or None})
    return out


def read_sqlite(doc: Document) -> list[Conversation]:
    with open_database(doc.raw or b"", doc.path) as conn:
        found = tables(conn)
        names = _message_tables(found)
        if names is None:
            raise LoadError(doc.path, "an SQLite database without the Agents SDK's session tables (agent_messages "
                            "with session_id and message_data)", field=MESSAGES_TABLE)
        messages_table, _ = names
        structure = _structure(conn, found)
        usage_rows = _turn_usage(conn, found)
        rows = conn.execute(f"SELECT id, session_id, message_data FROM {quoted(messages_table)} ORDER BY id")
        threads: dict[str, _Thread] = {}
        for row_id, session_id, data in rows:
            branch, turn = structure.get(row_id, (MAIN_BRANCH, None)) if isinstance(row_id, int) else (MAIN_BRANCH,
                                                                                                       None)
            session = text(session_id)
            key = session if branch == MAIN_BRANCH else f"{session}:{branch}"
            thread = threads.setdefault(key, _Thread(key))
            where = f"{messages_table} row {row_id}"
            item = _json_item(data, where, thread.reader)
            if item is None:
                continue
            before = len(thread.reader.slots)
            try:
                thread.reader.add(item, where, None, {"row_id": row_id})
            except RecursionError:
                thread.reader.warnings.append(LoadWarning(f"{where}: {TOO_DEEP}"))
            if turn is not None:
                for index in range(min(before, len(thread.reader.slots) - 1), len(thread.reader.slots)):
                    thread.turn_of_message.setdefault(index, turn)
    if not threads:
        raise LoadError(doc.path, f"the Agents SDK database holds no session items ({messages_table} is empty)")
    warnings = _wal_warning(doc)
    out = []
    for i, thread in enumerate(threads.values()):
        session, _, branch = thread.key.partition(":")
        conv = thread.reader.conversation(FORMAT, doc.path, thread.key, warnings=warnings if i == 0 else ())
        out.append(_with_turn_usage(conv, thread, usage_rows.get((session, branch or MAIN_BRANCH), [])))
    return out


def _wal_warning(doc: Document) -> list[LoadWarning]:
    """A warning when the database's write-ahead log lies beside it with content this file does not hold yet."""
    if not doc.path:
        return []
    wal = doc.companion(Path(doc.path).name + "-wal")
    if not wal:
        return []
    return [LoadWarning(f"{Path(doc.path).name}-wal beside the database holds {len(wal):,} bytes not yet "
                        "checkpointed into it: the newest items may be missing (close the session, or copy the "
                        "database with sqlite3's .backup, to include them)")]


def _with_turn_usage(conv: Conversation, thread: _Thread, turns: list[dict[str, Any]]) -> Conversation:
    """Attach each one-request turn's usage to its LLM call; keep all turn usage in ``Source.meta``."""
    if not turns:
        return conv
    usage = dict(conv.usage)
    calls_by_turn: dict[int, list[int]] = {}
    for index in conv.llm_call_indices:
        turn = thread.turn_of_message.get(index)
        if turn is not None:
            calls_by_turn.setdefault(turn, []).append(index)
    for row in turns:
        calls = calls_by_turn.get(row["turn"], [])
        if row["requests"] == 1 and len(calls) == 1 and calls[0] not in usage:
            usage[calls[0]] = usage_of(row) or Usage()
    meta = {**conv.source.meta, "turn_usage": turns}
    return replace(conv, usage=usage, source=replace(conv.source, meta=meta))


# ------------------------------------------------------------------------------------------------- RunState
def read_state(doc: Document) -> list[Conversation]:
    state = doc.value
    reader = ItemReader(skip_types=frozenset())
    original = state.get("original_input")
    if isinstance(original, str):
        reader.add({"role": "user", "content": original}, "original_input")
    elif isinstance(original, list):
        for i, item in enumerate(original):
            reader.add(item, f"original_input item {i}")
    else:
        reader.warnings.append(LoadWarning(f"original_input is {type_name(original)}, expected text or items",
                                           field="original_input"))
    generated = state.get("generated_items")
    for i, item in enumerate(generated if isinstance(generated, list) else []):
        if not isinstance(item, Mapping):
            reader.warnings.append(LoadWarning(f"generated item {i}: expected an object, got {type_name(item)}",
                                               field="generated_items"))
            continue
        if as_text(item.get("type")) in UNSENT_ITEMS:
            continue
        reader.add(item.get("raw_item"), f"generated item {i} ({item.get('type')})")
    conv = reader.conversation(FORMAT, doc.path, _state_id(state))
    usage = _response_usage(conv, state.get("model_responses"))
    agent = as_text(as_mapping(state.get("current_agent")).get("name"))
    meta = {k: v for k, v in (("schema_version", as_text(state.get("$schemaVersion"))), ("agent", agent),
                              ("current_turn", state.get("current_turn"))) if v is not None}
    return [replace(conv, usage={**conv.usage, **usage}, source=replace(conv.source, meta=meta))]


def _state_id(state: Mapping[str, Any]) -> str:
    trace = as_mapping(state.get("trace"))
    return as_text(state.get("conversation_id")) or as_text(trace.get("trace_id")) or "0"


def _response_usage(conv: Conversation, responses: Any) -> dict[int, Usage]:
    """Each model response's usage, on the assistant message holding its output items (matched by item and call
    ids)."""
    by_id: dict[str, int] = {}
    for index in conv.llm_call_indices:
        message = conv.messages[index]
        ids = [as_text(message.meta.get("item_id")), *(c.id for c in message.tool_calls)]
        for item_id in ids:
            if item_id:
                by_id.setdefault(item_id, index)
    out: dict[int, Usage] = {}
    for response in responses if isinstance(responses, list) else []:
        if not isinstance(response, Mapping):
            continue
        usage = usage_of(response.get("usage"))
        output = cast("list[Any]", response.get("output")) if isinstance(response.get("output"), list) else []
        for item in output:
            item = as_mapping(item)
            found_at = by_id.get(as_text(item.get("id")) or "") or by_id.get(as_text(item.get("call_id")) or "")
            if found_at is not None and usage is not None:
                out.setdefault(found_at, usage)
                break
    return out


# ------------------------------------------------------------------------------------------------- entry points
def _is_state(value: Any) -> bool:
    return isinstance(value, Mapping) and all(k in value for k in STATE_KEYS) and (
        "original_input" in value or "generated_items" in value)


def detect(doc: Document) -> str | None:
    if doc.kind == "sqlite":
        return None
    if doc.kind == "json" and _is_state(doc.value):
        return None
    return "neither an SQLite session database nor a RunState JSON ($schemaVersion, model_responses)"


def read(doc: Document) -> list[Conversation]:
    if doc.kind == "sqlite":
        return read_sqlite(doc)
    if doc.kind == "json" and _is_state(doc.value):
        return read_state(doc)
    raise LoadError(doc.path, "expected an Agents SDK SQLite session database or a RunState JSON")


register_format(
    FormatInfo(
        name=FORMAT,
        title="OpenAI Agents SDK session",
        detect=detect,
        read=read,
        extensions=(".db", ".sqlite", ".sqlite3", ".json"),
        description="OpenAI Agents SDK SQLiteSession / AdvancedSQLiteSession databases (each session its own "
        "conversation) and RunState JSON (result.to_state().to_json()): Responses items, usage, compaction items.",
        reads="Every stored session item (Responses input items: messages, function and hosted tool calls and "
        "outputs, reasoning, compaction items as the log's compactions), each session id (and each "
        "AdvancedSQLiteSession branch) as its own conversation, per-turn usage of AdvancedSQLiteSession "
        "(attached to a turn's LLM call when the turn made one request); a RunState's input and generated items "
        "with each model response's usage.",
        leaves_out="The agent's instructions and tool definitions (sessions do not store them); usage of plain "
        "SQLiteSession databases (not stored); items still in an unchecked -wal file; traces (the SDK exports "
        "them to the OpenAI backend or prints them as Python text, never as a local file). A bare JSON list of "
        "session items loads as openai-responses, with the same messages.",
    )
)
