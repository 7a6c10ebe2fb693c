"""Reading OpenCode's own session store into ``{info, messages: [{info, parts}]}`` records, as ``opencode export``
writes them.

Two layouts exist. Current OpenCode keeps everything in one SQLite file, ``<data>/opencode.db``: tables ``session``
(columns), ``message`` and ``part`` (the object minus its ids in a JSON ``data`` column). Older versions kept one
JSON file per object under ``<data>/storage/``: ``session/<projectID>/<sessionID>.json``,
``message/<sessionID>/<messageID>.json`` and ``part/<messageID>/<partID>.json`` (the layout OpenCode's own
JSON-to-SQLite migration reads). Messages are ordered by creation time then id, parts by id, as OpenCode orders
them. The database is opened read-only and never written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..conversation import LoadWarning
from ..errors import LoadError
from .base import COMPANION_LIMIT

DATABASE = "opencode.db"
#: the largest single storage file read (a part holds one tool output)
FILE_LIMIT = COMPANION_LIMIT


@dataclass
class SessionRecord:
    """One session as ``opencode export`` would write it, with what went wrong while collecting it."""

    id: str
    info: Mapping[str, Any]
    messages: list[Any]
    path: str | None = None
    warnings: list[LoadWarning] = field(default_factory=list)
    #: the ``task`` tool call of the parent session that started this one (known when both were read)
    parent_call_id: str | None = None


def read_store(folder: Path) -> list[SessionRecord] | None:
    """Every session of the OpenCode store at ``folder`` (see the module doc for what it may be), parents before
    their subagents; None when ``folder`` is not an OpenCode store."""
    records: list[SessionRecord] | None = None
    if (folder / DATABASE).is_file():
        records = _database(folder / DATABASE)
    storage = _storage_root(folder)
    if storage is not None:
        known = {r.id for r in records or []}
        records = [*(records or []), *(r for r in _storage(storage) if r.id not in known)]
    elif records is None and folder.parent.name == "message" and (folder.parent.parent / "part").is_dir():
        records = [_storage_session(folder.parent.parent, folder.name)]
    if records is None:
        return None
    return _ordered_and_linked(records)


def _storage_root(folder: Path) -> Path | None:
    for candidate in (folder / "storage", folder):
        if (candidate / "message").is_dir() and (candidate / "part").is_dir():
            return candidate
    return None


# ------------------------------------------------------------------------------------------------- SQLite
def _database(path: Path) -> list[SessionRecord]:
    try:
        db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise LoadError(str(path), f"cannot open OpenCode's database ({exc})") from None
    try:
        return _database_sessions(db, str(path))
    except sqlite3.Error as exc:
        raise LoadError(str(path), f"not a readable OpenCode database ({exc}); expected its session, message and "
                        "part tables") from None
    finally:
        db.close()


def _database_sessions(db: sqlite3.Connection, where: str) -> list[SessionRecord]:
    columns = {row[1] for row in db.execute("PRAGMA table_info(session)")}
    if not {"id", "time_created"} <= columns:
        raise LoadError(where, "no OpenCode session table (expected columns id, time_created…)", field="session")
    wanted = [c for c in ("id", "parent_id", "title", "version", "directory", "agent", "model", "time_created")
              if c in columns]
    sessions = [dict(zip(wanted, row, strict=True))
                for row in db.execute(f"SELECT {', '.join(wanted)} FROM session ORDER BY time_created, id")]
    messages: dict[str, list[tuple[str, Any]]] = {}
    warnings: dict[str, list[LoadWarning]] = {}
    for ident, session, data in db.execute("SELECT id, session_id, data FROM message ORDER BY time_created, id"):
        value = _decoded(data, f"{where}: message {ident}", warnings.setdefault(session, []))
        if isinstance(value, dict):
            messages.setdefault(session, []).append((ident, {**value, "id": ident, "sessionID": session}))
    parts: dict[str, list[Any]] = {}
    for ident, message, session, data in db.execute("SELECT id, message_id, session_id, data FROM part ORDER BY "
                                                    "message_id, id"):
        value = _decoded(data, f"{where}: part {ident}", warnings.setdefault(session, []))
        if isinstance(value, dict):
            parts.setdefault(message, []).append({**value, "id": ident, "sessionID": session, "messageID": message})
    records = []
    for row in sessions:
        info = _session_info(row)
        entries = [{"info": info_, "parts": parts.get(ident, [])} for ident, info_ in messages.get(row["id"], [])]
        records.append(SessionRecord(row["id"], info, entries, where, warnings.get(row["id"], [])))
    return records


def _session_info(row: Mapping[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = {"id": row["id"], "time": {"created": row.get("time_created")}}
    for column, key in (("parent_id", "parentID"), ("title", "title"), ("version", "version"),
                        ("directory", "directory"), ("agent", "agent")):
        if isinstance(row.get(column), str):
            info[key] = row[column]
    return info


def _decoded(data: Any, where: str, warnings: list[LoadWarning]) -> Any:
    try:
        value = json.loads(data)
    except (TypeError, ValueError, RecursionError):
        warnings.append(LoadWarning(f"{where} skipped: its data is not valid JSON", field="data"))
        return None
    if not isinstance(value, dict):
        warnings.append(LoadWarning(f"{where} skipped: its data is not a JSON object", field="data"))
    return value


# --------------------------------------------------------------------------------------------- JSON files
def _storage(storage: Path) -> list[SessionRecord]:
    infos: dict[str, Mapping[str, Any]] = {}
    for path in sorted((storage / "session").glob("*/*.json")):
        value = _json_file(path, [])
        if isinstance(value, Mapping):
            infos[path.stem] = value
    idents = sorted(set(infos) | {p.name for p in (storage / "message").iterdir() if p.is_dir()})
    return [_storage_session(storage, ident, infos.get(ident)) for ident in idents]


def _storage_session(storage: Path, ident: str, info: Mapping[str, Any] | None = None) -> SessionRecord:
    warnings: list[LoadWarning] = []
    if info is None:
        found = sorted((storage / "session").glob(f"*/{ident}.json"))
        info = _json_file(found[0], warnings) if found else None
    if not isinstance(info, Mapping):
        info = {"id": ident}
    entries: list[dict[str, Any]] = []
    for path in _files(storage / "message" / ident):
        message = _json_file(path, warnings)
        if not isinstance(message, Mapping):
            continue
        parts = [p for p in (_json_file(f, warnings) for f in _files(storage / "part" / path.stem))
                 if isinstance(p, Mapping)]
        entries.append({"info": {**message, "id": message.get("id", path.stem)},
                        "parts": sorted(parts, key=lambda p: str(p.get("id", "")))})
    entries.sort(key=lambda e: (_number(e["info"].get("time", {})), str(e["info"]["id"])))
    return SessionRecord(ident, info, entries, str(storage / "message" / ident), warnings)


def _files(folder: Path) -> Iterable[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else ()


def _number(time: Any) -> float:
    created = time.get("created") if isinstance(time, Mapping) else None
    return float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else 0.0


def _json_file(path: Path, warnings: list[LoadWarning]) -> Any:
    try:
        if not path.is_file() or path.stat().st_size > FILE_LIMIT:
            warnings.append(LoadWarning(f"{path}: skipped (not a regular file, or larger than "
                                        f"{FILE_LIMIT >> 20} MiB)"))
            return None
        return json.loads(path.read_bytes())
    except OSError as exc:
        warnings.append(LoadWarning(f"{path}: skipped, cannot read it ({exc.strerror or exc})"))
    except (ValueError, RecursionError):
        warnings.append(LoadWarning(f"{path}: skipped, not valid UTF-8 JSON"))
    return None


# ------------------------------------------------------------------------------------------- subagents
def _ordered_and_linked(records: list[SessionRecord]) -> list[SessionRecord]:
    """Top-level sessions in order, each followed by its subagents; each subagent linked to its parent's ``task``
    call (``state.metadata.sessionId``)."""
    calls: dict[str, str] = {}
    for record in records:
        for entry in record.messages:
            for part in entry.get("parts", []) if isinstance(entry, Mapping) else []:
                state = part.get("state") if isinstance(part, Mapping) else None
                child = state.get("metadata", {}).get("sessionId") if isinstance(state, Mapping) and isinstance(
                    state.get("metadata"), Mapping) else None
                if isinstance(child, str) and isinstance(part.get("callID"), str):
                    calls[child] = part["callID"]
    by_id = {r.id: r for r in records}
    children: dict[str, list[SessionRecord]] = {}
    roots = []
    for record in records:
        record.parent_call_id = calls.get(record.id)
        parent = record.info.get("parentID")
        if isinstance(parent, str) and parent in by_id and parent != record.id:
            children.setdefault(parent, []).append(record)
        else:
            roots.append(record)
    ordered: list[SessionRecord] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:  # depth first, without recursion (a store may nest subagents deeply)
        record = stack.pop()
        if record.id in seen:
            continue
        seen.add(record.id)
        ordered.append(record)
        stack += reversed(children.get(record.id, []))
    ordered += [r for r in records if r.id not in seen]  # parent cycles: keep them, in storage order
    return ordered
