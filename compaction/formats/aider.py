"""Aider's logs, both plain text in the repository root:

* ``.aider.chat.history.md`` (written by default): the Markdown transcript of every session — read by
  :mod:`._aider_writes` (back into the pieces aider appended) and :mod:`._aider_chat` (what of it reached the model);
* ``.aider.llm.history`` (``--llm-history-file``): every request sent to the main model and its reply, exactly —
  read by :mod:`._aider_llm_history`.

Detection is strict: a transcript starts with ``# aider chat started at <date> <time>``, an LLM history with
``TO LLM <iso time>``; no other text is taken for Aider's. Aider has no tool calls: edits are SEARCH/REPLACE (or
whole-file, diff) blocks in the reply's text, and are read as text.
"""

from __future__ import annotations

import re

from ..conversation import Conversation
from ..errors import LoadError
from ._aider_chat import SessionReader
from ._aider_llm_history import BLOCK
from ._aider_llm_history import read_llm_history
from ._aider_writes import HEADER
from ._aider_writes import sessions
from .base import Document
from .base import FormatInfo
from .base import register_format


def _first_line(doc: Document) -> str:
    text = doc.text or ""
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    return text[start:end if end >= 0 else len(text)].rstrip("\r")


def _kind(doc: Document) -> str | None:
    """``chat`` (a chat history), ``llm`` (an LLM history) or None."""
    if doc.kind != "text":
        return None
    first = _first_line(doc)
    if HEADER.match(first):
        return "chat"
    if BLOCK.match(first) and first.startswith("TO LLM "):
        return "llm"
    return None


def detect(doc: Document) -> str | None:
    if doc.kind != "text":
        return "not a text file"
    if _kind(doc) is None:
        return "the first line is neither '# aider chat started at <date> <time>' nor 'TO LLM <time>'"
    return None


def read(doc: Document) -> list[Conversation]:
    kind = _kind(doc)
    text = re.sub(r"\r\n?", "\n", doc.text or "")
    if kind == "llm":
        return read_llm_history(text, doc.path)
    if kind == "chat":
        conversations: list[Conversation] = []
        for number, session in enumerate(sessions(text), 1):
            conversations += SessionReader(session, number, doc.path).conversations()
        return conversations
    raise LoadError(doc.path, "not an Aider chat history ('# aider chat started at …') or LLM history ('TO LLM …')")


register_format(
    FormatInfo(
        name="aider",
        title="Aider chat or LLM history",
        detect=detect,
        read=read,
        extensions=(".md", ".history"),
        description="Aider's .aider.chat.history.md (one conversation per session, usage from the Tokens lines) and "
        ".aider.llm.history (the exact requests and replies).",
        reads=".aider.chat.history.md: each session (and each stretch after /clear) as a conversation: the inputs, "
        "every reply as an LLM call with the rounded usage of its Tokens: line, and the messages aider adds to the "
        "chat itself (commit notes, added files, edit errors and lint errors sent back, /run and /web content, "
        "interruptions), commands kept but never sent; model and aider version from the announcements. "
        ".aider.llm.history: each run as its last exact request plus every reply, aider's own summaries marked.",
        leaves_out="Aider makes no tool calls: edit blocks in replies are text. The chat history holds neither the "
        "system prompt, the repo map nor the files' contents (only the LLM history has them), nor command output or "
        "web pages (a stand-in marks each), nor aider's chat-history summaries; its usage is rounded. In an LLM "
        "history earlier calls are read from the run's last request, where aider puts the repo map first and the "
        "files after the chat, so an earlier call is replayed without the files that followed it; it has no usage.",
    )
)
