"""Short, safe text for ``repr`` and notebook tables: every value from a log is clipped to one short line, and HTML
escapes it (a log is never HTML)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING

from .conversation import squeezed_preview

if TYPE_CHECKING:
    from .conversation import Conversation

#: the longest id and file name a label shows
ID_CHARS = 40
NAME_CHARS = 60


def clip(text: object, limit: int) -> str:
    """``text`` on one line (whitespace runs made one space), at most ``limit`` characters (an ellipsis marks a cut)."""
    return squeezed_preview(str(text), limit)


def counted(n: int, noun: str) -> str:
    """``1 call``, ``2,048 calls``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def file_name(path: str | None) -> str | None:
    """The last part of a path (a log's own name), clipped; None without a path."""
    if not path:
        return None
    return clip(PurePath(str(path)).name or str(path), NAME_CHARS)


def short_label(conversation: Conversation) -> str:
    """``claude-code 'main' of session.jsonl``: the format, the conversation id and the file, each clipped."""
    label = f"{clip(conversation.format, 30)} {clip(conversation.id, ID_CHARS)!r}"
    name = file_name(conversation.source.path)
    return f"{label} of {name}" if name else label


def html_table(rows: Iterable[tuple[str, object]], title: str | None = None) -> str:
    """A two-column table (name, value) with an optional bold title; names and values are escaped."""
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th><td style='text-align:left'>"
                   f"{html.escape(str(v))}</td></tr>" for k, v in rows)
    head = f"<b>{html.escape(title)}</b>" if title else ""
    return f"{head}<table>{body}</table>"
