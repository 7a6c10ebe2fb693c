"""Reading an untrusted SQLite database from bytes: opened in memory, read-only, with an authorizer that lets
through nothing but reads, so nothing stored in the file (views, triggers, schema functions) can run."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from typing import Any

from ..errors import LoadError

#: a table name this module will put into a query (quoted): plain identifiers only
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_ALLOWED = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ})
#: Python 3.11+ opens a database straight from bytes; 3.10 goes through a private temporary copy
IN_MEMORY = hasattr(sqlite3.Connection, "deserialize")


def _authorize(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def _without_wal_flag(data: bytes) -> bytes:
    """The bytes with the header's read/write versions set to 1 (rollback journal): a database last written in WAL
    mode (version 2) cannot be opened from memory otherwise. What is still in its ``-wal`` file is not in these
    bytes either way."""
    if len(data) >= 20 and (data[18] == 2 or data[19] == 2):
        return data[:18] + b"\x01\x01" + data[20:]
    return data


@contextlib.contextmanager
def open_database(data: bytes, path: str | None) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database in ``data``; a damaged file is a :class:`LoadError`."""
    data = _without_wal_flag(data)
    temp: str | None = None
    try:
        if IN_MEMORY:
            conn = sqlite3.connect(":memory:")
            conn.deserialize(data)
        else:  # Python 3.10: no deserialize; an immutable read-only open of a private temporary copy
            handle, temp = tempfile.mkstemp(suffix=".sqlite")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            conn = sqlite3.connect(f"file:{temp}?mode=ro&immutable=1", uri=True)
        conn.text_factory = bytes  # text is decoded by the reader: a damaged row must cost only itself
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.set_authorizer(_authorize)
    except sqlite3.Error as exc:
        if temp:
            os.unlink(temp)
        raise LoadError(path, f"not a readable SQLite database ({exc})") from None
    try:
        yield conn
    except sqlite3.Error as exc:
        raise LoadError(path, f"the SQLite database is damaged or not as expected ({exc})") from None
    except UnicodeDecodeError:  # sqlite3 decodes its error messages, which can quote damaged schema text
        raise LoadError(path, "the SQLite database is damaged (its schema is not UTF-8 text)") from None
    finally:
        conn.close()
        if temp:
            os.unlink(temp)


def tables(conn: sqlite3.Connection) -> dict[str, str]:
    """Ordinary tables (not views or virtual tables) with plain names, and the SQL that created each."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    found = {text(name): text(sql) for name, sql in rows}
    return {name: sql for name, sql in found.items()
            if _PLAIN_NAME.fullmatch(name) and not sql.lstrip().upper().startswith("CREATE VIRTUAL")}


def text(value: Any) -> str:
    """A TEXT value as read with ``text_factory = bytes``: decoded, with damaged bytes replaced; NULL is ''."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def quoted(name: str) -> str:
    """A table name from :func:`tables`, quoted for a query."""
    if not _PLAIN_NAME.fullmatch(name):
        raise ValueError(f"not a plain table name: {name!r}")
    return f'"{name}"'
