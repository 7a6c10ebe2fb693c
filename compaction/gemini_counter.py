"""Gemini CLI's token estimator (``estimateTokenCountSync``, ``packages/core/src/utils/tokenCalculation.ts``),
re-created for our messages as the ``gemini-cli`` counter.

The estimate of a list of parts is the floor of the sum of each part's share:

- a ``text`` part: a quarter token per UTF-16 code unit up to 127 and 1.5 tokens per other unit, or, for a text
  longer than 100,000 units, its length / 4;
- a ``functionResponse`` part: (the tool name's length + the length of ``JSON.stringify(response)``) / 4, plus the
  estimate of its nested media ``parts`` (floored on its own; nesting deeper than 3 counts nothing);
- an image (``inlineData`` / ``fileData`` with an ``image/`` type): 3,000 tokens; a PDF: 25,800;
- any other part (a ``functionCall``, other media): ``JSON.stringify(part).length`` / 4.

Every share is a whole number of quarter tokens, so the counter keeps quarters and floors once, exactly as the
JavaScript sum (of exact binary fractions) does. A message counts the parts :mod:`.gemini_contents` gives it; a
system message counts as the text of ``systemInstruction``; tool schemas are not estimated (Gemini CLI never does).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from .conversation import Message
from .conversation import ToolSchema
from .gemini_contents import message_parts
from .js_text import ascii_units
from .js_text import js_stringify
from .js_text import utf16_len
from .tokens import Counter
from .tokens import Tally
from .tokens import _IdCache

#: quarter tokens per token (Gemini CLI's DEFAULT_CHARS_PER_TOKEN)
CHARS_PER_TOKEN = 4
NON_ASCII_QUARTERS = 6  # 1.5 tokens
IMAGE_TOKENS = 3_000
PDF_TOKENS = 25_800
MAX_CHARS_FOR_FULL_HEURISTIC = 100_000
MAX_RECURSION_DEPTH = 3


def text_quarters(text: str) -> int:
    """A text's share, in quarter tokens."""
    length = utf16_len(text)
    if length > MAX_CHARS_FOR_FULL_HEURISTIC:
        return length
    ascii_count = ascii_units(text)
    return ascii_count + (length - ascii_count) * NON_ASCII_QUARTERS


def part_quarters(part: Mapping[str, Any], depth: int = 0) -> int:
    """One part's share of ``estimateTokenCountSync``, in quarter tokens."""
    if isinstance(part.get("text"), str):
        return text_quarters(part["text"])
    response_part = part.get("functionResponse")
    if response_part:
        return _function_response_quarters(response_part, depth)
    media = _media_tokens(part)
    if media is not None:
        return media * CHARS_PER_TOKEN
    return utf16_len(js_stringify(part))


def _function_response_quarters(body: Mapping[str, Any], depth: int) -> int:
    quarters = utf16_len(str(body.get("name") or ""))
    response = body.get("response")
    if isinstance(response, str):
        quarters += utf16_len(response)
    elif response is not None:
        quarters += utf16_len(js_stringify(response))
    nested = body.get("parts")
    if nested:
        quarters += estimate_parts(nested, depth + 1) * CHARS_PER_TOKEN
    return quarters


def _media_tokens(part: Mapping[str, Any]) -> int | None:
    data = part.get("inlineData") or {}
    uri = part.get("fileData") or {}
    mime = (data.get("mimeType") if isinstance(data, Mapping) else None) or (
        uri.get("mimeType") if isinstance(uri, Mapping) else None)
    if not isinstance(mime, str):
        return None
    if mime.startswith("image/"):
        return IMAGE_TOKENS
    if mime.startswith("application/pdf"):
        return PDF_TOKENS
    return None


def estimate_parts(parts: Sequence[Mapping[str, Any]], depth: int = 0) -> int:
    """``estimateTokenCountSync(parts)``."""
    if depth > MAX_RECURSION_DEPTH:
        return 0
    return sum(part_quarters(p, depth) for p in parts) // CHARS_PER_TOKEN


def estimate_text(text: str) -> int:
    """``estimateTokenCountSync([{text}])``."""
    return text_quarters(text) // CHARS_PER_TOKEN


class GeminiCliCounter(Counter):
    """``estimateTokenCountSync`` over the parts of the messages (see the module docstring)."""

    spec = "gemini-cli"

    def __init__(self) -> None:
        self._quarters: _IdCache[int] = _IdCache()

    def quarters(self, message: Message) -> int:
        """A message's share, in quarter tokens (cached)."""
        return self._quarters.get(message, lambda m: sum(part_quarters(p) for p in message_parts(m)))

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return sum(self.quarters(m) for m in messages) // CHARS_PER_TOKEN

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _QuarterTally(self)
        for m in messages:
            tally.append(m)
        return tally


class _QuarterTally(Tally):
    __slots__ = ("_counter", "_quarters")

    def __init__(self, counter: GeminiCliCounter) -> None:
        self._counter = counter
        self._quarters = 0

    def append(self, message: Message) -> None:
        self._quarters += self._counter.quarters(message)

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        self._quarters += self._counter.quarters(new) - self._counter.quarters(old)
        return True

    def checkpoint(self) -> int:
        return self._quarters

    def rewind(self, mark: int) -> None:
        self._quarters = mark

    def value(self, with_tools: bool = True) -> int:
        return self._quarters // CHARS_PER_TOKEN
