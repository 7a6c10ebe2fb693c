"""LangChain's ``count_tokens_approximately`` (langchain-core ``messages.utils``), re-created for our messages.

Per message: characters of the content (a string's length; for a list of content blocks, text blocks by their text,
image blocks as a fixed 85 tokens, any other block by the length of its Python ``repr``), plus, for an AI message
with string content, the ``repr`` of its tool calls; plus a tool message's ``tool_call_id``; plus the OpenAI role
name (``system``/``user``/``assistant``/``tool``) and the message's ``name``. The message costs
``ceil(chars / chars_per_token) + 3``; the total is the sum (tool schemas are not counted: the middleware passes none).

Our messages map onto LangChain's as a LangChain agent holds them (``convert_to_messages`` of an OpenAI-style log,
plus the agent's tool node): a message with one text part (or none) and nothing else has string content; otherwise
its content is a list of blocks (reasoning, text, image, file), which — as in LangChain — also means its tool calls
are not counted separately. A tool message is named after its tool (the tool node sets ``name=<tool>`` on every
``ToolMessage`` it makes), so the tool's name is counted even when the log gave the message no name of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .conversation import File
from .conversation import Image
from .conversation import Message
from .conversation import ToolSchema
from .errors import ConfigError
from .tokens import Counter
from .tokens import Tally
from .tokens import _IdCache

TOKENS_PER_IMAGE = 85
EXTRA_TOKENS_PER_MESSAGE = 3.0
#: meta key of a message whose content LangChain holds as a list of blocks even when a single text part is left
#: (a partial copy ``trim_messages`` made of a message with list content)
LIST_CONTENT = "langchain_list_content"


def langchain_content(message: Message) -> str | list[Any]:
    """The ``content`` LangChain would hold for ``message`` (string, or a list of content blocks)."""
    result = message.tool_result
    if result is not None:
        if isinstance(result.result, str):
            return result.result
        return [_block(part) for part in result.result]
    plain = not message.reasoning and not message.images and not message.files and len(message.texts) <= 1
    if plain and not message.meta.get(LIST_CONTENT):
        return message.texts[0] if message.texts else ""
    blocks: list[Any] = [{"type": "reasoning", "reasoning": r} for r in message.reasoning]
    blocks += [{"type": "text", "text": t} for t in message.texts]
    non_text: tuple[Image | File, ...] = (*message.images, *message.files)
    blocks += [_block(part) for part in non_text]
    return blocks


def _block(part: str | Image | File) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Image):
        if part.source and part.source != "base64":
            return {"type": "image", "mime_type": part.mime_type, "url": part.source}
        return {"type": "image", "mime_type": part.mime_type, "base64": "..."}  # the bytes are not kept
    return {"type": "file", "mime_type": part.mime_type, "filename": part.filename}


def langchain_name(message: Message) -> str | None:
    """The ``name`` LangChain holds for ``message``: its own, else, for a tool message, its tool's (the name of the
    call it answers; for a result whose call the log lost, the name the reader gave it)."""
    if message.name:
        return message.name
    if message.tool_result is not None:
        return message.tool_result.tool_name or None
    return None


def langchain_tool_calls(message: Message) -> list[dict[str, Any]]:
    """An AI message's ``tool_calls`` as LangChain stores them."""
    return [{"name": c.name, "args": dict(c.arguments), "id": c.id, "type": "tool_call"} for c in message.tool_calls]


def approximate_tokens(message: Message, chars_per_token: float = 4.0) -> float:
    """One message's share of ``count_tokens_approximately`` (before the final ceiling)."""
    content = langchain_content(message)
    chars = 0
    images = 0
    if isinstance(content, str):
        chars += len(content)
    else:
        for block in content:
            kind = block.get("type", "")
            if kind in ("image", "image_url"):
                images += 1
            elif kind == "text":
                chars += len(block.get("text", ""))
            else:
                chars += len(repr(block))
    if message.role == "assistant" and isinstance(content, str) and message.tool_calls:
        chars += len(repr(langchain_tool_calls(message)))
    if message.tool_result is not None:
        chars += len(message.tool_result.call_id or "")
    chars += len(message.role)
    chars += len(langchain_name(message) or "")
    return images * TOKENS_PER_IMAGE + math.ceil(chars / chars_per_token) + EXTRA_TOKENS_PER_MESSAGE


class LangchainCounter(Counter):
    """``count_tokens_approximately(messages, chars_per_token)`` (defaults: 4.0 chars per token, 3 extra tokens
    per message, names counted, no usage-metadata scaling)."""

    def __init__(self, chars_per_token: float = 4.0) -> None:
        if chars_per_token <= 0:
            raise ConfigError(f"`chars_per_token` must be greater than 0, got {chars_per_token}.")
        self.chars_per_token = float(chars_per_token)
        self.spec = "langchain" if self.chars_per_token == 4.0 else f"langchain:{self.chars_per_token:g}"
        self._cache: _IdCache[float] = _IdCache()

    def _share(self, message: Message) -> float:
        return self._cache.get(message, lambda m: approximate_tokens(m, self.chars_per_token))

    def count_one(self, message: Message) -> int:
        return math.ceil(self._share(message))

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return math.ceil(sum(self._share(m) for m in messages))

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _LangchainTally(self)
        for m in messages:
            tally.append(m)
        return tally


class _LangchainTally(Tally):
    __slots__ = ("_counter", "_total")

    def __init__(self, counter: LangchainCounter) -> None:
        self._counter = counter
        self._total = 0.0

    def append(self, message: Message) -> None:
        self._total += self._counter._share(message)

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        # every share is a whole number of tokens, so the float total stays exact under additions and subtractions
        self._total += self._counter._share(new) - self._counter._share(old)
        return True

    def value(self, with_tools: bool = True) -> int:
        return math.ceil(self._total)
