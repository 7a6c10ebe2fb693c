"""Claude Code's own rough token estimate of messages (``roughTokenCountEstimation``: characters / 4, rounded).

Claude Code estimates what the last reported call does not cover: the messages added since (tool results, a new
prompt, attachments). Each text block counts ``round(len / 4)``; a tool result counts its content the same way; an
image 1,334 or 2,000 tokens; tool calls, thinking and documents nothing before 2.1.74 (then name + JSON input, the
thinking text, 2,000 per document); attachments nothing before 2.1.33 (then their JSON, here their text as the log
reader renders it). Which rule applies is a :class:`~._claude_code_versions.Behaviour`.

A loaded message merges the records of one response (Claude Code keeps one record per content block), so "the
records after the first" are the blocks after the first: reasoning first, then text, then tool calls, the order
Claude Code streams them in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from ..conversation import File
from ..conversation import Image
from ..conversation import Message
from ._claude_code_versions import Behaviour

#: what Claude Code counts for a document block (2.1.74 on) and for an image in a result it microcompacts
DOCUMENT_TOKENS = 2000


def rough(text: str, chars_per_token: int = 4) -> int:
    """``Math.round(len / chars_per_token)``, JavaScript's rounding (halves up)."""
    return math.floor(len(text) / chars_per_token + 0.5)


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in order, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _part(part: object, b: Behaviour) -> int:
    if isinstance(part, str):
        return rough(part)
    if isinstance(part, Image):
        return b.image_tokens
    if isinstance(part, File):
        return DOCUMENT_TOKENS if b.counts_tool_use else 0
    return 0


def _call(name: str, arguments: Mapping[str, Any]) -> int:
    return rough(name + js_json(dict(arguments)))


def blocks(message: Message) -> list[tuple[str, Any]]:
    """The content blocks of ``message`` in the order Claude Code records them: ``(kind, value)`` with kind
    ``thinking``, ``text``, ``image``, ``document``, ``tool_use`` or ``tool_result``."""
    if message.tool_result is not None:
        return [("tool_result", message.tool_result)]
    out: list[tuple[str, Any]] = [("thinking", r) for r in message.reasoning]
    out += [("text", t) for t in message.texts]
    out += [("image", i) for i in message.images] + [("document", f) for f in message.files]
    out += [("tool_use", c) for c in message.tool_calls]
    return out


def _block(kind: str, value: Any, b: Behaviour) -> int:
    if kind == "text":
        return rough(value)
    if kind == "image":
        return b.image_tokens
    if kind == "document":
        return DOCUMENT_TOKENS if b.counts_tool_use else 0
    if kind == "tool_result":
        result = value.result
        return rough(result) if isinstance(result, str) else sum(_part(p, b) for p in result)
    if not b.counts_tool_use:
        return 0
    if kind == "tool_use":
        return _call(value.name, value.arguments)
    return rough(value)  # thinking


def estimate(message: Message, b: Behaviour) -> int:
    """Claude Code's estimate of one message (an attachment counts only where the release counts attachments)."""
    if "attachment" in message.meta and not b.counts_attachments:
        return 0
    return sum(_block(kind, value, b) for kind, value in blocks(message))


def estimate_all(messages: Iterable[Message], b: Behaviour) -> int:
    return sum(estimate(m, b) for m in messages)


def estimate_after_first_block(message: Message, b: Behaviour) -> int:
    """The estimate of a response's records after its first (what a measure anchored on the first record adds)."""
    return sum(_block(kind, value, b) for kind, value in blocks(message)[1:])


def output_estimate(message: Message) -> int:
    """A response's output tokens by its content, for the releases whose log lacks them: text, thinking and tool
    inputs at four characters a token."""
    tokens = sum(rough(t) for t in message.texts) + sum(rough(r) for r in message.reasoning)
    return tokens + sum(_call(c.name, c.arguments) for c in message.tool_calls)
