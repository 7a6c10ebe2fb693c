"""Token counters: exact re-creations of the frameworks' own, with per-message caching.

Each counter answers ``count(messages, tools)`` with the number the framework itself would compute for that list,
and offers a :class:`Tally`: a running count of a growing list, so a replay pays for each message once instead of
recounting the whole conversation before every LLM call.

Counters (``--counter`` specs):

- ``approx[:CHARS_PER_TOKEN]`` — Haystack ``ApproximateTokenCounter``: the conversation is rendered to one text
  (``"\\n"``-joined, ASCII-escaped JSON tool arguments), its length divided by chars-per-token and floored once,
  plus 85 per image and 1000 per file.
- ``tiktoken[:ENCODING]`` — Haystack ``TiktokenCounter``: the same rendering encoded with tiktoken (``o200k_base``
  by default). BPE is not additive across the ``"\\n"`` joins, so the joined count is the sum of per-message counts
  plus an exact correction per join, computed on the few pre-tokenizer chunks around it.
- ``maf-dotnet`` — Microsoft Agent Framework .NET default: UTF-8 bytes of message content / 4, integer, per group.
- ``maf-python`` — agent-framework-core ``CharacterEstimatorTokenizer``: ``max(1, len(json) // 4)`` per message.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import File, Image, Message, ToolSchema, placeholder
from .tiktoken_offline import EncodingUnavailable, get_encoding

DEFAULT_COUNTER = "approx"
COUNTER_SPECS = ("approx", "approx:CHARS_PER_TOKEN", "tiktoken:ENCODING", "maf-dotnet", "maf-python")


# --------------------------------------------------------------------------------------------- Haystack rendering
def render_haystack(message: Message, include_ids: bool = False, describe=placeholder) -> str:
    """One message as Haystack's counters (and, with ids, its summarizer) render it. Reasoning is never rendered."""
    role = message.role
    result = message.tool_result
    if result is not None:
        ident = f" id={result.origin.id}" if include_ids and result.origin.id else ""
        err = " (error)" if result.error else ""
        body = result.result if isinstance(result.result, str) else "".join(
            part if isinstance(part, str) else describe(part) for part in result.result
        )
        return f"[tool:{result.origin.name}{ident}{err}] {body}"
    lines: list[str] = []
    if message.texts:
        lines.append(f"[{role}] " + "\n".join(message.texts))
    for call in message.tool_calls:
        args = json.dumps(call.arguments, default=str, sort_keys=True)
        ident = f" id={call.id}" if include_ids and call.id else ""
        lines.append(f"[{role} -> tool_call{ident}] {call.name}({args})")
    for part in (*message.images, *message.files):
        lines.append(f"[{role}] {describe(part)}")
    return "\n".join(lines) if lines else f"[{role}] <no content>"


def render_tools(tools: Sequence[ToolSchema]) -> str:
    """Tool schemas as Haystack renders them for counting (``""`` when there are none)."""
    if not tools:
        return ""
    return json.dumps([t.spec() for t in tools], default=str, sort_keys=True)


def non_text_units(message: Message) -> tuple[int, int]:
    """(images, files) in a message, including parts nested in a tool result."""
    images, files = len(message.images), len(message.files)
    result = message.tool_result
    if result is not None and not isinstance(result.result, str):
        images += sum(isinstance(p, Image) for p in result.result)
        files += sum(isinstance(p, File) for p in result.result)
    return images, files


# --------------------------------------------------------------------------------------------------- interfaces
class Tally(ABC):
    """A running count of a list that only grows (rebuilt from scratch after a compaction)."""

    @abstractmethod
    def append(self, message: Message) -> None:
        """Account for one more message at the end of the list."""

    @abstractmethod
    def value(self, with_tools: bool = True) -> int:
        """The counter's count of the list so far (with the tool schemas, or without)."""


class Counter(ABC):
    """A token counter; ``spec`` is the string that recreates it (``approx:4.0``, ``tiktoken:o200k_base``…)."""

    spec: str
    #: True when the framework counts the whole list as one text (Haystack): not a sum of per-message counts.
    joined: bool = False

    @abstractmethod
    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        """The framework's own count of ``messages`` (plus ``tools`` where it counts schemas)."""

    def count_one(self, message: Message) -> int:
        """``count([message])``, cached."""
        return self.count((message,))

    @abstractmethod
    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        """A running count starting from ``messages``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class _IdCache:
    """Per-message cache keyed by object identity (messages are immutable; the entry keeps them alive)."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: dict[int, tuple[Message, Any]] = {}

    def get(self, message: Message, compute) -> Any:
        hit = self._data.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = compute(message)
        self._data[id(message)] = (message, value)
        return value


# ------------------------------------------------------------------------------------------- Haystack counters
@dataclass
class _JoinedParts:
    """Per-message contribution to a joined-text count."""

    units: int  # characters (approx) or tokens (tiktoken) of the rendered message
    images: int
    files: int


class _HaystackCounter(Counter):
    """Shared logic of Haystack's two local counters: count the ``"\\n"``-joined rendering plus tool schemas."""

    joined = True

    def __init__(self, tokens_per_image: int = 85, tokens_per_file: int = 1000) -> None:
        self.tokens_per_image = tokens_per_image
        self.tokens_per_file = tokens_per_file
        self._parts = _IdCache()
        self._tools_cache: dict[tuple[ToolSchema, ...], str] = {}

    # units of text --------------------------------------------------------------------------------------------
    @abstractmethod
    def _text_units(self, text: str) -> int: ...

    @abstractmethod
    def _join_units(self, left: Message | None, sep: str, right_text: str, right: Message | None) -> int:
        """Extra units when ``right`` is joined after ``left`` with ``sep`` (0 for character counts of sep-less)."""

    @abstractmethod
    def _finish(self, units: int) -> int: ...

    def parts(self, message: Message) -> _JoinedParts:
        def compute(m: Message) -> _JoinedParts:
            images, files = non_text_units(m)
            return _JoinedParts(self._text_units(render_haystack(m)), images, files)

        return self._parts.get(message, compute)

    def _tools_text(self, tools: Sequence[ToolSchema]) -> str:
        key = tuple(tools)
        text = self._tools_cache.get(key)
        if text is None:
            text = self._tools_cache[key] = render_tools(key)
        return text

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        tally = self.tally(messages, tools)
        return tally.value(with_tools=True)

    def count_one(self, message: Message) -> int:
        p = self.parts(message)
        return self._finish(p.units) + p.images * self.tokens_per_image + p.files * self.tokens_per_file

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _JoinedTally(self, self._tools_text(tools))
        for m in messages:
            tally.append(m)
        return tally


class _JoinedTally(Tally):
    __slots__ = ("_counter", "_tools_text", "_tools_units", "_units", "_nontext", "_last", "_n")

    def __init__(self, counter: _HaystackCounter, tools_text: str) -> None:
        self._counter = counter
        self._tools_text = tools_text
        self._tools_units = counter._text_units(tools_text) if tools_text else 0
        self._units = 0
        self._nontext = 0
        self._last: Message | None = None
        self._n = 0

    def append(self, message: Message) -> None:
        c = self._counter
        p = c.parts(message)
        self._units += p.units
        if self._last is not None:
            self._units += c._join_units(self._last, "\n", "", message)
        self._nontext += p.images * c.tokens_per_image + p.files * c.tokens_per_file
        self._last = message
        self._n += 1

    def value(self, with_tools: bool = True) -> int:
        c = self._counter
        if with_tools and self._tools_text:
            units = self._units + self._tools_units
            if self._last is not None:
                units += c._join_units(self._last, "", self._tools_text, None)
            return c._finish(units) + self._nontext
        if self._n == 0:
            return 0
        return c._finish(self._units) + self._nontext


class ApproxCounter(_HaystackCounter):
    """Haystack ``ApproximateTokenCounter(chars_per_token, tokens_per_image, tokens_per_file)``."""

    def __init__(self, chars_per_token: float = 4.0, tokens_per_image: int = 85, tokens_per_file: int = 1000) -> None:
        if chars_per_token <= 0:
            raise ValueError(f"`chars_per_token` must be greater than 0, got {chars_per_token}.")
        super().__init__(tokens_per_image, tokens_per_file)
        self.chars_per_token = float(chars_per_token)
        self.spec = f"approx:{self.chars_per_token:g}" if self.chars_per_token != 4.0 else "approx:4.0"

    def _text_units(self, text: str) -> int:
        return len(text)

    def _join_units(self, left, sep, right_text, right) -> int:
        return len(sep)

    def _finish(self, units: int) -> int:
        return int(units / self.chars_per_token)


class TiktokenCounter(_HaystackCounter):
    """Haystack ``TiktokenCounter(encoding)``: tiktoken over the same rendering (special tokens read as text)."""

    #: chunks of context kept on each side of a join when computing its correction
    _MARGIN_CHUNKS = 3

    def __init__(self, encoding: str = "o200k_base", tokens_per_image: int = 85, tokens_per_file: int = 1000) -> None:
        super().__init__(tokens_per_image, tokens_per_file)
        self.encoding = encoding
        self.spec = f"tiktoken:{encoding}"
        self._enc = get_encoding(encoding)  # raises EncodingUnavailable
        import regex

        self._pattern = regex.compile(self._enc._pat_str)
        self._edges = _IdCache()  # message -> (head, tail) texts around its edges
        self._join_cache: dict[tuple[int, int, str], tuple[Message | None, Message | None, int]] = {}

    def _text_units(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))

    def _edge_texts(self, message: Message) -> tuple[str, str]:
        """(first chunks, last chunks) of the rendered message, cut at pre-tokenizer chunk boundaries."""

        def compute(m: Message) -> tuple[str, str]:
            return self._split_edges(render_haystack(m))

        return self._edges.get(message, compute)

    def _split_edges(self, text: str) -> tuple[str, str]:
        bounds = [match.end() for match in self._pattern.finditer(text)]
        k = self._MARGIN_CHUNKS
        if len(bounds) <= 2 * k:
            return text, text
        return text[: bounds[k - 1]], text[bounds[-k - 2] :]

    def _join_units(self, left, sep, right_text, right) -> int:
        key = (id(left), id(right) if right is not None else hash(right_text), sep)
        hit = self._join_cache.get(key)
        if hit is not None and hit[0] is left and hit[1] is right:
            return hit[2]
        tail = self._edge_texts(left)[1]
        head = self._edge_texts(right)[0] if right is not None else self._split_edges(right_text)[0]
        extra = self._text_units(tail + sep + head) - self._text_units(tail) - self._text_units(head)
        self._join_cache[key] = (left, right, extra)
        return extra

    def _finish(self, units: int) -> int:
        return units


# ------------------------------------------------------------------------------------ Agent Framework counters
def maf_content_bytes(message: Message) -> int:
    """UTF-8 bytes the .NET estimator counts for a message: content only, no roles, ids or JSON punctuation."""

    def b(text: str | None) -> int:
        return len(text.encode("utf-8")) if text else 0

    total = sum(b(t) for t in message.texts) + sum(b(r) for r in message.reasoning)
    for call in message.tool_calls:
        total += b(call.id) + b(call.name)
        for key, value in call.arguments.items():
            total += b(key) + b(_dotnet_to_string(value))
    result = message.tool_result
    if result is not None:
        total += b(result.call_id) + b(result.text)
    for image in message.images:
        total += b(image.mime_type) + b(image.source)
    for file in message.files:
        total += b(file.mime_type) + b(file.filename)
    return total


def _dotnet_to_string(value: Any) -> str:
    """``object.ToString()`` of a JSON argument value as .NET would produce it (JsonElement raw text for objects)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _SumTally(Tally):
    __slots__ = ("_counter", "_total")

    def __init__(self, counter: Counter) -> None:
        self._counter = counter
        self._total = 0

    def append(self, message: Message) -> None:
        self._total += self._counter.count_one(message)

    def value(self, with_tools: bool = True) -> int:
        return self._total


class MafDotnetCounter(Counter):
    """Agent Framework .NET default estimate: ``ByteCount / 4`` (integer), where ByteCount is content bytes.

    ``count`` treats the given list as one group (``sum(bytes) // 4``); the .NET message index counts per group.
    """

    spec = "maf-dotnet"

    def __init__(self) -> None:
        self._bytes = _IdCache()

    def content_bytes(self, message: Message) -> int:
        return self._bytes.get(message, maf_content_bytes)

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return sum(self.content_bytes(m) for m in messages) // 4

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _ByteTally(self)
        for m in messages:
            tally.append(m)
        return tally


class _ByteTally(Tally):
    __slots__ = ("_counter", "_bytes")

    def __init__(self, counter: MafDotnetCounter) -> None:
        self._counter = counter
        self._bytes = 0

    def append(self, message: Message) -> None:
        self._bytes += self._counter.content_bytes(message)

    def value(self, with_tools: bool = True) -> int:
        return self._bytes // 4


class MafPythonCounter(Counter):
    """agent-framework-core ``CharacterEstimatorTokenizer`` applied per message to its JSON (role, id, contents)."""

    spec = "maf-python"

    def __init__(self) -> None:
        self._cache = _IdCache()

    def count_one(self, message: Message) -> int:
        from .formats.agent_framework import token_json  # local: formats depend on this module

        return self._cache.get(message, lambda m: max(1, len(token_json(m)) // 4))

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        return sum(self.count_one(m) for m in messages)

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _SumTally(self)
        for m in messages:
            tally.append(m)
        return tally


# ------------------------------------------------------------------------------------------------------ factory
@dataclass(frozen=True)
class CounterChoice:
    """The counter actually built for a spec, and why it differs from the request (if it does)."""

    counter: Counter
    requested: str
    notice: str | None = None


_COUNTERS: dict[str, Counter] = {}


def make_counter(spec: str = DEFAULT_COUNTER) -> Counter:
    """Build (or reuse) the counter named by ``spec``. Raises ``ValueError`` for a malformed spec and
    :class:`EncodingUnavailable` when a tiktoken encoding cannot be loaded."""
    spec = (spec or DEFAULT_COUNTER).strip()
    cached = _COUNTERS.get(spec)
    if cached is not None:
        return cached
    kind, _, arg = spec.partition(":")
    if kind == "approx":
        try:
            cpt = float(arg) if arg else 4.0
        except ValueError:
            raise ValueError(f"counter {spec!r}: chars per token must be a number, got {arg!r}") from None
        counter: Counter = ApproxCounter(cpt)
    elif kind == "tiktoken":
        counter = TiktokenCounter(arg or "o200k_base")
    elif kind == "maf-dotnet" and not arg:
        counter = MafDotnetCounter()
    elif kind == "maf-python" and not arg:
        counter = MafPythonCounter()
    else:
        raise ValueError(f"unknown counter {spec!r}; expected one of: {', '.join(COUNTER_SPECS)}")
    _COUNTERS[spec] = counter
    return counter


def resolve_counter(spec: str = DEFAULT_COUNTER) -> CounterChoice:
    """Like :func:`make_counter`, but a tiktoken encoding that cannot be loaded falls back to ``approx`` with a
    notice saying why (the CLI prints it, the app shows it)."""
    try:
        return CounterChoice(make_counter(spec), spec)
    except EncodingUnavailable as exc:
        return CounterChoice(
            make_counter("approx"),
            spec,
            notice=f"Counter {spec!r} is unavailable ({exc}); using the approximate counter (approx:4.0) instead.",
        )
