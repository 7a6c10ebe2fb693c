"""Aider's chat-history token count (aider-chat 0.86.2, ``Model.token_count`` of the weak model), re-created.

``ChatSummary`` counts each message on its own: ``json.dumps`` of the message dict (ASCII-escaped, ``", "`` and
``": "`` separators, keys in insertion order), encoded by ``litellm.encode`` for the weak model. For the OpenAI and
Gemini weak models (``gpt-4o-mini``, ``gemini/gemini-2.5-flash`` …) litellm has no tokenizer of its own and uses
tiktoken's ``cl100k_base``, special tokens read as text. The total is the sum over the messages; tool schemas are
not counted (aider sends none).

Aider's messages are ``{"role", "content"}`` with text content. A message of another agent's log maps onto the
chat-completions dict (``tool_calls``, ``tool_call_id``, ``name`` when it has them) with its text as the content
(``""`` for a message with calls only; attachments left out: aider sends images only with the files, never in the
chat history).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import tiktoken_offline
from .conversation import Message
from .conversation import ToolSchema
from .tokens import Counter
from .tokens import Tally
from .tokens import _IdCache

#: the encoding litellm falls back to for the weak models aider pairs with OpenAI and Gemini main models
ENCODING = "cl100k_base"


def aider_message(message: Message) -> dict[str, Any]:
    """The message as the dict aider keeps in its chat history (see the module docstring)."""
    from .formats.openai_chat import message_to_openai  # local: formats build on the counters

    out = message_to_openai(message)
    if not isinstance(out.get("content"), str):
        out["content"] = message.text
    return out


def aider_json(message: Message) -> str:
    """``json.dumps`` of the message's dict, as ``Model.token_count`` measures it."""
    return json.dumps(aider_message(message))


class AiderCounter(Counter):
    """The sum over the messages of cl100k_base tokens of each message's JSON (raises ``EncodingUnavailable`` when
    the encoding cannot be loaded)."""

    spec = "aider"

    def __init__(self) -> None:
        self._encoding = tiktoken_offline.get_encoding(ENCODING)
        self._cache: _IdCache[int] = _IdCache()

    def count_one(self, message: Message) -> int:
        return self._cache.get(message, lambda m: len(self._encoding.encode_ordinary(aider_json(m))))

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return sum(self.count_one(m) for m in messages)

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _SumTally(self)
        for m in messages:
            tally.append(m)
        return tally


class _SumTally(Tally):
    __slots__ = ("_counter", "_total")

    def __init__(self, counter: AiderCounter) -> None:
        self._counter = counter
        self._total = 0

    def append(self, message: Message) -> None:
        self._total += self._counter.count_one(message)

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        self._total += self._counter.count_one(new) - self._counter.count_one(old)
        return True

    def checkpoint(self) -> int:
        return self._total

    def rewind(self, mark: int) -> None:
        self._total = mark

    def value(self, with_tools: bool = True) -> int:
        return self._total
