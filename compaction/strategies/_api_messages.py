"""The stored history as the Anthropic ``MessageParam`` list Cline and Roo Code keep (``api_conversation_history``).

Both agents count, keep and drop *API messages*: one assistant message, or one user message holding the tool results
of the assistant message before it followed by the user's text (environment details, feedback). The replay's
messages split a user API message into tool messages and a user message; :func:`api_messages` groups them back:

* an assistant message is one API message;
* a run of tool and user messages is one user API message;
* a message the agent itself inserted (a Roo Code summary or truncation marker) is an API message of its own;
* system messages before the first API message are the system prompt, sent apart: they belong to none.

A user API message's *blocks*, in order, are its tool results (each one block, as the readers join a result's text)
then the text parts of its user messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..history import Entry
from .history_runner import leading_system
from .history_runner import text_of


@dataclass(frozen=True)
class ApiMessage:
    """Stored entries ``start`` … ``end - 1`` as one Anthropic message."""

    start: int
    end: int
    role: str  # "user" | "assistant"

    def entries(self, stored: Sequence[Entry]) -> Sequence[Entry]:
        return stored[self.start:self.end]


def _own_message(entry: Entry) -> bool:
    """An entry the agent inserted as a message of its own (summary, marker, notice)."""
    return entry.inserted is not None


def api_messages(stored: Sequence[Entry]) -> list[ApiMessage]:
    """The API messages of the stored history (excluded entries are not sent, so they belong to none)."""
    out: list[ApiMessage] = []
    start: int | None = None
    role = ""
    first = leading_system(stored)
    for i in range(first, len(stored)):
        entry = stored[i]
        if entry.excluded:
            continue
        this = "assistant" if entry.message.role == "assistant" else "user"
        alone = _own_message(entry)
        if start is not None and (this != role or alone or role == "assistant" or _own_message(stored[start])):
            out.append(ApiMessage(start, i, role))
            start = None
        if start is None:
            start, role = i, this
    if start is not None:
        out.append(ApiMessage(start, len(stored), role))
    return out


def blocks(entries: Sequence[Entry]) -> list[tuple[int, int | None, str]]:
    """A user API message's text blocks: ``(entry position within the message, text part or None for a tool
    result, text)``, tool results first as stored, then user text parts."""
    out: list[tuple[int, int | None, str]] = []
    for k, entry in enumerate(entries):
        message = entry.message
        if message.tool_result is not None:
            out.append((k, None, text_of(message)))
        else:
            out.extend((k, j, text) for j, text in enumerate(message.texts))
    return out
