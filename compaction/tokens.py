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
- ``langchain[:CHARS_PER_TOKEN]`` — LangChain ``count_tokens_approximately`` (see :mod:`.langchain_counter`).
- ``aider`` — Aider's chat-history count: cl100k_base tokens of each message's JSON, summed (see
  :mod:`.aider_counter`).
- ``maf-python`` — agent-framework-core ``CharacterEstimatorTokenizer``: ``max(1, len(json) // 4)`` per message,
  the JSON holding the message id the framework would assign (``msg_<position>``) when the log has none.
- ``gemini-cli`` — Gemini CLI ``estimateTokenCountSync`` over the messages as Gemini contents (see
  :mod:`.gemini_counter`).
"""

from __future__ import annotations

import json
import re
import weakref
from abc import ABC
from abc import abstractmethod
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any
from typing import Generic
from typing import TypeVar
from typing import cast

from . import tiktoken_offline
from .conversation import File
from .conversation import Image
from .conversation import Message
from .conversation import ToolSchema
from .conversation import placeholder
from .errors import ConfigError
from .registry import Registry
from .tiktoken_offline import EncodingUnavailable

DEFAULT_COUNTER = "approx"


# --------------------------------------------------------------------------------------------- Haystack rendering
#: ``json.dumps(arguments, default=str, sort_keys=True)`` with one encoder built once (dumps builds one per call)
_arguments_json = json.JSONEncoder(default=str, sort_keys=True).encode


def render_haystack(
    message: Message, include_ids: bool = False, describe: Callable[[Image | File], str] = placeholder
) -> str:
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
        args = _arguments_json(call.arguments)
        ident = f" id={call.id}" if include_ids and call.id else ""
        lines.append(f"[{role} -> tool_call{ident}] {call.name}({args})")
    non_text: tuple[Image | File, ...] = (*message.images, *message.files)
    for part in non_text:
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

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        """Account for ``old`` (between ``previous`` and ``following``) having been replaced by ``new`` in place.

        Returns False when this tally cannot update in place (the caller then rebuilds it)."""
        return False

    def checkpoint(self) -> Any:
        """A mark of the count so far that :meth:`rewind` returns to, or None when this tally keeps no marks (the
        caller then recounts the prefix it wanted)."""
        return None

    def rewind(self, mark: Any) -> None:
        """Return to a :meth:`checkpoint` of this tally: the list is cut back to what it was then."""
        raise ValueError(f"{type(self).__name__} keeps no checkpoints")

    def extend(self, messages: Sequence[Message]) -> None:
        """``append`` each message."""
        for m in messages:
            self.append(m)

    def extend_marked(self, messages: Sequence[Message]) -> list[Any]:
        """``append`` each message; the :meth:`checkpoint` after each one."""
        marks = []
        for m in messages:
            self.append(m)
            marks.append(self.checkpoint())
        return marks

    def carry(self, start: Any, end: Any) -> bool:
        """Count on as if the messages this tally counted between its marks ``start`` and ``end`` came next (they
        followed a message then, and follow one now), without reading them again; False when this tally cannot (the
        caller then extends by them)."""
        return False


class Counter(ABC):
    """A token counter; ``spec`` is the string that recreates it (``approx:4.0``, ``tiktoken:o200k_base``…)."""

    spec: str
    #: True when the framework counts the whole list as one text (Haystack): not a sum of per-message counts.
    joined: bool = False
    #: True when a :meth:`tally` started without tools and grown by ``append`` always reads what ``count`` of the
    #: same list says (a counter whose tally numbers messages otherwise than ``count`` does, or that was not shown to
    #: agree, leaves it False and is recounted instead)
    tally_grows_as_count: bool = False

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


_V = TypeVar("_V")


class _IdCache(Generic[_V]):
    """Per-object cache keyed by object identity (messages are immutable and hash by identity).

    Entries hold weak references to the objects they are about, so the cache never keeps one alive: a log the user
    has moved on from is freed whole, however many counters have measured it. An entry is a tuple: a weak reference,
    optionally a second one (or ``None``: no second object), then the value; it matches only while each reference
    still resolves to the object asked about. The entries of freed objects are swept out whenever the cache has
    doubled since its last sweep (amortized O(1) per entry).
    """

    __slots__ = ("_data", "_sweep_at")

    def __init__(self) -> None:
        self._data: dict[Any, tuple[Any, ...]] = {}
        self._sweep_at = _FIRST_SWEEP

    def get(self, message: Message, compute: Callable[[Message], _V]) -> _V:
        """The value cached for ``message``, computed by ``compute(message)`` on a miss."""
        hit = self._data.get(id(message))
        if hit is not None and hit[0]() is message:
            cached: _V = hit[1]
            return cached
        value = compute(message)
        self.put(id(message), (weakref.ref(message), value))
        return value

    def entry(self, key: Any) -> tuple[Any, ...] | None:
        """The entry stored under ``key`` (check its references before use)."""
        return self._data.get(key)

    def put(self, key: Any, entry: tuple[Any, ...]) -> None:
        """Store ``entry`` under ``key``, first sweeping out dead entries if the cache has doubled since the last
        sweep."""
        if len(self._data) >= self._sweep_at:
            self._sweep_at = max(_FIRST_SWEEP, 2 * self._sweep())
        self._data[key] = entry

    def _sweep(self) -> int:
        """Drop the entries whose objects are gone; the number left."""
        data = self._data
        dead = [key for key, e in data.items()
                if e[0]() is None or (len(e) > 2 and e[1] is not None and e[1]() is None)]
        for key in dead:
            del data[key]
        return len(data)


#: entries a weakly keyed cache holds before its first sweep
_FIRST_SWEEP = 4096
#: tool lists whose rendering a counter keeps
_TOOL_LISTS_KEPT = 32
#: edge texts whose token counts a tiktoken counter keeps (they are short and repeat: a role, a tool name…)
_EDGE_TEXTS_KEPT = 65536


def _bounded_put(data: dict[Any, Any], key: Any, value: Any, limit: int) -> None:
    """``data[key] = value``, first dropping the oldest entries so that at most ``limit`` are held."""
    while len(data) >= limit:
        del data[next(iter(data))]
    data[key] = value


# ------------------------------------------------------------------------------------------- Haystack counters
@dataclass(slots=True)
class _JoinedParts:
    """Per-message contribution to a joined-text count."""

    units: int  # characters (approx) or tokens (tiktoken) of the rendered message
    images: int
    files: int


@dataclass(slots=True)
class _EdgedParts(_JoinedParts):
    """Tiktoken's parts: also the texts at the rendered message's two edges and their token counts, all a join's
    correction needs from the message."""

    head: str
    tail: str
    head_units: int
    tail_units: int


class _HaystackCounter(Counter):
    """Shared logic of Haystack's two local counters: count the ``"\\n"``-joined rendering plus tool schemas."""

    joined = True
    tally_grows_as_count = True
    #: units a "\n" join adds whatever the messages around it (None when it depends on them, as with BPE)
    newline_join_units: int | None = None

    def __init__(self, tokens_per_image: int = 85, tokens_per_file: int = 1000) -> None:
        self.tokens_per_image = tokens_per_image
        self.tokens_per_file = tokens_per_file
        self._parts: _IdCache[_JoinedParts] = _IdCache()
        #: keyed by the schemas' identities (schemas hold dicts, so they are not hashable); the tuple keeps them alive,
        #: so only the last few tool lists are held
        self._tools_cache: dict[tuple[int, ...], tuple[tuple[ToolSchema, ...], str]] = {}

    # units of text --------------------------------------------------------------------------------------------
    @abstractmethod
    def _text_units(self, text: str) -> int: ...

    @abstractmethod
    def _join_units(self, left: Message, sep: str, right_text: str, right: Message | None) -> int:
        """Extra units when ``right`` is joined after ``left`` with ``sep`` (0 for character counts of sep-less)."""

    @abstractmethod
    def _finish(self, units: int) -> int: ...

    def parts(self, message: Message) -> _JoinedParts:
        """The message's contribution (cached): its rendering measured once."""
        return self._parts.get(message, self._compute_parts)

    def _compute_parts(self, message: Message) -> _JoinedParts:
        images, files = non_text_units(message)
        return self._measure(render_haystack(message), images, files)

    def _measure(self, text: str, images: int, files: int) -> _JoinedParts:
        """The parts of a message rendered as ``text``."""
        return _JoinedParts(self._text_units(text), images, files)

    def _tools_text(self, tools: Sequence[ToolSchema]) -> str:
        if not tools:
            return ""
        schemas = tuple(tools)
        key = tuple(map(id, schemas))
        hit = self._tools_cache.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], schemas, strict=True)):
            return hit[1]
        text = render_tools(schemas)
        _bounded_put(self._tools_cache, key, (schemas, text), _TOOL_LISTS_KEPT)
        return text

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        tally = self.tally(messages, tools)
        return tally.value(with_tools=True)

    def count_one(self, message: Message) -> int:
        hit = self._parts.entry(id(message))  # (parts(), without a call more: a message index counts every group)
        p = hit[1] if hit is not None and hit[0]() is message else self.parts(message)
        return self._finish(p.units) + p.images * self.tokens_per_image + p.files * self.tokens_per_file

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _JoinedTally(self, self._tools_text(tools))
        tally.extend(messages)
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
        self.extend((message,))

    def extend(self, messages: Sequence[Message]) -> None:
        """``append`` for each message, in one tight loop (a replay rebuilds its tally after every compaction)."""
        self._extend(messages, None)

    def extend_marked(self, messages: Sequence[Message]) -> list[tuple[int, int, Message | None, int]]:
        marks: list[tuple[int, int, Message | None, int]] = []
        self._extend(messages, marks)
        return marks

    def _extend(self, messages: Sequence[Message], marks: list[tuple[int, int, Message | None, int]] | None) -> None:
        c = self._counter
        cached = c._parts._data.get  # the dict itself: this loop is the hottest in a replay
        join_constant = c.newline_join_units
        units, nontext, last, n = self._units, self._nontext, self._last, self._n
        per_image, per_file = c.tokens_per_image, c.tokens_per_file
        for m in messages:
            hit = cached(id(m))
            p = hit[1] if hit is not None and hit[0]() is m else c.parts(m)
            units += p.units
            if last is not None:
                units += join_constant if join_constant is not None else c._join_units(last, "\n", "", m)
            if p.images or p.files:
                nontext += p.images * per_image + p.files * per_file
            last = m
            n += 1
            if marks is not None:
                marks.append((units, nontext, last, n))
        self._units, self._nontext, self._last, self._n = units, nontext, last, n

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        c = self._counter
        before, after = c.parts(old), c.parts(new)
        units = after.units - before.units
        if previous is not None:
            units += c._join_units(previous, "\n", "", new) - c._join_units(previous, "\n", "", old)
        if following is not None:
            units += c._join_units(new, "\n", "", following) - c._join_units(old, "\n", "", following)
        elif self._last is old:
            self._last = new
        self._units += units
        self._nontext += ((after.images - before.images) * c.tokens_per_image
                          + (after.files - before.files) * c.tokens_per_file)
        return True

    def checkpoint(self) -> tuple[int, int, Message | None, int]:
        return self._units, self._nontext, self._last, self._n

    def carry(self, start: tuple[int, int, Message | None, int], end: tuple[int, int, Message | None, int]) -> bool:
        """With a constant join, what messages add to the count does not depend on what precedes them (as long as
        something does): the difference of the two marks."""
        if self._counter.newline_join_units is None or self._last is None or start[2] is None:
            return False
        self._units += end[0] - start[0]
        self._nontext += end[1] - start[1]
        self._last = end[2]
        self._n += end[3] - start[3]
        return True

    def rewind(self, mark: tuple[int, int, Message | None, int]) -> None:
        self._units, self._nontext, self._last, self._n = mark

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
            raise ConfigError(f"`chars_per_token` must be greater than 0, got {chars_per_token}.")
        super().__init__(tokens_per_image, tokens_per_file)
        self.chars_per_token = float(chars_per_token)
        self.spec = f"approx:{self.chars_per_token:g}" if self.chars_per_token != 4.0 else "approx:4.0"

    def _text_units(self, text: str) -> int:
        return len(text)

    newline_join_units = 1

    def _join_units(self, left: Message, sep: str, right_text: str, right: Message | None) -> int:
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
        self._enc = tiktoken_offline.get_encoding(encoding)  # raises EncodingUnavailable
        import regex

        self._pattern = regex.compile(self._enc._pat_str)
        self._resyncs = encoding in _RESYNC_ENCODINGS
        self._find_resync = regex.compile(_RESYNC_PATTERN).search
        #: (left, right or the text after left, separator) -> (weak left, weak right or None, extra units)
        self._joins: _IdCache[int] = _IdCache()
        self._edge_units_memo: dict[str, int] = {}

    def _text_units(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))  # tiktoken's cheaper equivalent of encode(disallowed_special=())

    def _edge_units(self, text: str) -> int:
        """``_text_units`` of an edge or join text, memoized by value: edges repeat (a role, a tool name…)."""
        units = self._edge_units_memo.get(text)
        if units is None:
            units = self._text_units(text)
            _bounded_put(self._edge_units_memo, text, units, _EDGE_TEXTS_KEPT)
        return units

    def _measure(self, text: str, images: int, files: int) -> _EdgedParts:
        units = self._text_units(text)
        head, tail = self._split_edges(text)
        if head is text:  # a short text is its own head and tail
            return _EdgedParts(units, images, files, text, text, units, units)
        return _EdgedParts(units, images, files, head, tail, self._edge_units(head), self._edge_units(tail))

    def _split_edges(self, text: str) -> tuple[str, str]:
        """(first k chunks, last k + 1 chunks) of ``text``, k = the margin; ``(text, text)`` when it has at most 2k
        chunks. Chunk ends only grow, so it has more than 2k chunks exactly when the (k + 2)-th last chunk end is not
        before the k-th chunk end."""
        k = self._MARGIN_CHUNKS
        tail_start = self._nth_last_chunk_end(text, k + 2)
        if tail_start is None:
            return text, text
        head_end = next(islice(self._pattern.finditer(text), k - 1, None)).end()
        if tail_start < head_end:
            return text, text
        return text[:head_end], text[tail_start:]

    def _nth_last_chunk_end(self, text: str, n: int) -> int | None:
        """The ``n``-th last chunk end of ``text`` as a scan of the whole text finds it (None if it has fewer chunks).

        With a known pattern, the scan starts at the last resync point before a window at the end instead (a chunk
        boundary whatever precedes it), widening the window until it holds ``n`` chunks; the pattern has no
        look-behind, so the chunks after it are the same. Those patterns match every character, so their chunks
        follow one another and the chunk lengths alone give the ends."""
        if self._resyncs:
            window = 16
            while window < len(text):
                found = self._find_resync(text, 0, len(text) - window + 1)
                if found is None:
                    break
                start = found.start() + 1
                chunks = self._pattern.findall(text, start)
                if len(chunks) >= n:
                    return len(text) - sum(map(len, chunks[len(chunks) - n + 1 :]))
                window *= 2
        ends = [match.end() for match in self._pattern.finditer(text)]
        return ends[-n] if len(ends) >= n else None

    def _join_units(self, left: Message, sep: str, right_text: str, right: Message | None) -> int:
        key = (id(left), id(right) if right is not None else right_text, sep)
        hit = self._joins.entry(key)
        if hit is not None and hit[0]() is left and (hit[1] is None if right is None else hit[1]() is right):
            known: int = hit[2]
            return known
        # this counter's _measure makes every cached part an _EdgedParts
        before = cast(_EdgedParts, self.parts(left))
        if right is not None:
            after = cast(_EdgedParts, self.parts(right))
            head, head_units = after.head, after.head_units
        else:
            head = self._split_edges(right_text)[0]
            head_units = self._text_units(head)
        extra = self._edge_units(before.tail + sep + head) - before.tail_units - head_units
        self._joins.put(key, (weakref.ref(left), None if right is None else weakref.ref(right), extra))
        return extra

    def _finish(self, units: int) -> int:
        return units


#: Encodings whose pre-tokenizer pattern (o200k, cl100k) has resync points: positions where a chunk ends whatever text
#: precedes them. (1) Right after an ASCII letter followed by an ASCII character that is neither a letter nor "'": a
#: letter is only ever in a letter run or a contraction ("'s"…), and neither goes on past a character that is not a
#: letter, a mark or a contraction's "'". (2) Right after a newline whose line goes on with spaces/tabs and then
#: printable ASCII (not "/" right after the newline): every alternative that can hold a newline (a whitespace run ending
#: in newlines, a punctuation run's trailing newlines and slashes) stops there. These patterns also match every
#: character, so their chunks follow one another. Other patterns are scanned whole.
_RESYNC_ENCODINGS = frozenset({"o200k_base", "o200k_harmony", "cl100k_base"})
#: a reverse search (``(?r)``) for the text around a resync point, which is always one character after its start
_RESYNC_PATTERN = r"(?r)[A-Za-z][\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f]|\n(?:[ \t]+[!-~]|[!-.0-~])"


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


class MafDotnetCounter(Counter):
    """Agent Framework .NET default estimate: ``ByteCount / 4`` (integer), where ByteCount is content bytes.

    ``count`` treats the given list as one group (``sum(bytes) // 4``); the .NET message index counts per group.
    """

    spec = "maf-dotnet"
    tally_grows_as_count = True

    def __init__(self) -> None:
        self._bytes: _IdCache[int] = _IdCache()

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

    def checkpoint(self) -> int:
        return self._bytes

    def rewind(self, mark: int) -> None:
        self._bytes = mark

    def replace(self, previous: Message | None, old: Message, new: Message, following: Message | None) -> bool:
        self._bytes += self._counter.content_bytes(new) - self._counter.content_bytes(old)
        return True

    def value(self, with_tools: bool = True) -> int:
        return self._bytes // 4


class MafPythonCounter(Counter):
    """agent-framework-core ``CharacterEstimatorTokenizer`` as ``annotate_token_counts`` applies it: per message,
    ``max(1, len(json) // 4)`` of its JSON (role, message id, contents), summed over the list.

    The message id is part of the measured JSON. A message whose meta has no ``message_id`` gets the id the framework
    assigns before counting: ``msg_<position in the list>``, or, when another message already owns that id, the next
    free ``msg_<n>`` from ``n = len(list)`` (``count``) or from the position after it (``tally``, which appends one
    message at a time as ``append_compaction_message`` does).
    """

    spec = "maf-python"

    def __init__(self) -> None:
        self._lengths: _IdCache[int] = _IdCache()

    def json_length(self, message: Message, assigned_id: str | None = None) -> int:
        """Characters of the JSON the estimator measures; ``assigned_id`` for a message without its own id."""
        from .formats.agent_framework import token_json  # local: formats depend on this module

        length = self._lengths.get(message, lambda m: len(token_json(m)))
        # token_json sorts keys (contents, message_id, role): an assigned id adds `"message_id": "<id>", `
        return length + (len(assigned_id) + 18 if assigned_id is not None else 0)

    def tokens(self, message: Message, assigned_id: str | None = None) -> int:
        return max(1, self.json_length(message, assigned_id) // 4)

    def count_one(self, message: Message) -> int:
        return self.count((message,))

    def count(self, messages: Sequence[Message], tools: Sequence[ToolSchema] = ()) -> int:
        ids = framework_message_ids(messages)
        return sum(self.tokens(m, assigned) for m, assigned in zip(messages, ids, strict=True))

    def tally(self, messages: Sequence[Message] = (), tools: Sequence[ToolSchema] = ()) -> Tally:
        tally = _MafPythonTally(self)
        for m in messages:
            tally.append(m)
        return tally


def own_message_id(message: Message) -> str | None:
    """The message's own id, if its meta has a non-empty one (the framework replaces empty ids)."""
    value = message.meta.get("message_id")
    return str(value) if value else None


def framework_message_ids(messages: Sequence[Message]) -> list[str | None]:
    """The ids agent-framework-core assigns to a list (``None`` where a message keeps its own id)."""
    taken = {own for m in messages if (own := own_message_id(m)) is not None}
    assigned: list[str | None] = []
    for position, m in enumerate(messages):
        assigned.append(None if own_message_id(m) is not None else free_message_id(position, len(messages), taken))
    return assigned


def free_message_id(position: int, fallback_from: int, taken: set[str]) -> str:
    """The id agent-framework-core gives a message at ``position``: ``msg_<position>``, or when taken the next free
    ``msg_<n>`` from ``n = fallback_from`` (the id is added to ``taken``)."""
    candidate = f"msg_{position}"
    number = fallback_from
    while candidate in taken:
        candidate = f"msg_{number}"
        number += 1
    taken.add(candidate)
    return candidate


class _MafPythonTally(Tally):
    __slots__ = ("_counter", "_total", "_taken", "_n")

    def __init__(self, counter: MafPythonCounter) -> None:
        self._counter = counter
        self._total = 0
        self._taken: set[str] = set()
        self._n = 0

    def append(self, message: Message) -> None:
        own = own_message_id(message)
        if own is not None:
            self._taken.add(own)
            assigned = None
        else:
            assigned = free_message_id(self._n, self._n + 1, self._taken)
        self._total += self._counter.tokens(message, assigned)
        self._n += 1

    def value(self, with_tools: bool = True) -> int:
        return self._total


# ------------------------------------------------------------------------------------------------------ factory
@dataclass(frozen=True)
class CounterChoice:
    """The counter actually built for a spec, and why it differs from the request (if it does)."""

    counter: Counter
    requested: str
    notice: str | None = None


@dataclass(frozen=True)
class CounterKind:
    """One kind of counter the ``--counter`` spec names: ``NAME`` or ``NAME:ARGUMENT``."""

    name: str
    #: what it re-creates ("Haystack ApproximateTokenCounter")
    title: str
    #: the counter for a spec's argument (the text after the colon, "" when there is none; already validated)
    build: Callable[[str], Counter]
    #: what the argument is ("CHARS_PER_TOKEN", "ENCODING"); empty when the kind takes none
    argument: str = ""
    #: whether the argument must be a positive, finite number
    numeric: bool = False
    #: specs the UI offers, with their labels (the first is the kind's default)
    presets: tuple[tuple[str, str], ...] = ()

    def specs(self) -> tuple[str, ...]:
        """The spec forms this kind accepts, for help texts (``approx``, ``approx:CHARS_PER_TOKEN``)."""
        if not self.argument:
            return (self.name,)
        return (f"{self.name}:{self.argument}",) if not self.numeric and self.name == "tiktoken" else (
            self.name, f"{self.name}:{self.argument}")


def _langchain(arg: str) -> Counter:
    from .langchain_counter import LangchainCounter  # local: it builds on this module

    return LangchainCounter(float(arg) if arg else 4.0)


def _gemini_cli(arg: str) -> Counter:
    from .gemini_counter import GeminiCliCounter  # local: it builds on this module

    return GeminiCliCounter()


def _aider(arg: str) -> Counter:
    from .aider_counter import AiderCounter  # local: it builds on this module

    return AiderCounter()


#: every counter kind by name
COUNTER_KINDS: Registry[CounterKind] = Registry("counter")
for _kind in (
    CounterKind("approx", "Haystack ApproximateTokenCounter", lambda arg: ApproxCounter(float(arg) if arg else 4.0),
                "CHARS_PER_TOKEN", numeric=True,
                presets=(("approx", "approx · 4 chars/token"), ("approx:custom", "approx · custom chars/token"))),
    CounterKind("tiktoken", "Haystack TiktokenCounter", lambda arg: TiktokenCounter(arg or "o200k_base"), "ENCODING",
                presets=(("tiktoken:o200k_base", "tiktoken · o200k_base"),
                         ("tiktoken:cl100k_base", "tiktoken · cl100k_base"))),
    CounterKind("maf-dotnet", "Agent Framework .NET default (UTF-8 bytes / 4)", lambda arg: MafDotnetCounter(),
                presets=(("maf-dotnet", "Agent Framework .NET"),)),
    CounterKind("maf-python", "agent-framework-core CharacterEstimatorTokenizer", lambda arg: MafPythonCounter(),
                presets=(("maf-python", "Agent Framework Python"),)),
    CounterKind("langchain", "LangChain count_tokens_approximately", _langchain, "CHARS_PER_TOKEN", numeric=True),
    CounterKind("gemini-cli", "Gemini CLI estimateTokenCountSync", _gemini_cli,
                presets=(("gemini-cli", "Gemini CLI estimator"),)),
    CounterKind("aider", "Aider chat history (cl100k_base over each message's JSON)", _aider),
):
    COUNTER_KINDS.register(_kind.name, _kind)


#: the chars per token a counter spec may name (real tokenizers lie around 1.5–6; beyond this range a count is noise)
CHARS_PER_TOKEN_RANGE = (0.01, 10_000.0)
#: what a counter kind's non-numeric argument may be (a tiktoken encoding name)
_ARGUMENT_NAME = re.compile(r"[A-Za-z0-9_]{1,40}")


def counter_specs() -> tuple[str, ...]:
    """Every spec form the registered counter kinds accept (for help texts and error messages)."""
    return tuple(form for kind in COUNTER_KINDS.all().values() for form in kind.specs())


def check_counter_spec(spec: str | None) -> tuple[CounterKind, str]:
    """The kind and argument of a counter spec; a ``ValueError`` names what was expected (nothing is loaded)."""
    text = (spec or DEFAULT_COUNTER).strip()
    name, _, arg = text.partition(":")
    if name not in COUNTER_KINDS or (arg and not COUNTER_KINDS.get(name).argument):
        raise ConfigError(f"unknown counter {text!r}; expected one of: {', '.join(counter_specs())}")
    kind = COUNTER_KINDS.get(name)
    if arg and not kind.numeric and not _ARGUMENT_NAME.fullmatch(arg):
        raise ConfigError(f"counter {text!r}: expected {kind.argument} to be a name such as o200k_base")
    if kind.numeric and arg:
        try:
            number = float(arg)
        except ValueError:
            number = float("nan")
        if not CHARS_PER_TOKEN_RANGE[0] <= number <= CHARS_PER_TOKEN_RANGE[1]:
            low, high = CHARS_PER_TOKEN_RANGE
            raise ConfigError(f"counter {text!r}: chars per token must be a positive number from {low} to {high}, "
                              f"got {arg!r}")
    return kind, arg


_COUNTERS: dict[str, Counter] = {}


def make_counter(spec: str = DEFAULT_COUNTER) -> Counter:
    """Build (or reuse) the counter named by ``spec``. Raises ``ValueError`` for a malformed spec and
    :class:`EncodingUnavailable` when a tiktoken encoding cannot be loaded."""
    spec = (spec or DEFAULT_COUNTER).strip()
    cached = _COUNTERS.get(spec)
    if cached is not None:
        return cached
    kind, arg = check_counter_spec(spec)
    counter = _COUNTERS[spec] = kind.build(arg)
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
