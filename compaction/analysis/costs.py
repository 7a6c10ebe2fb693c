"""What a replay costs with prompt caching: cache reads, cache writes, uncached input and output, per LLM call.

Tokens saved is not money saved. A provider caches the prompt prefix; the next call reads the part that is
byte-identical (cheap) and pays full price — plus, at Anthropic, a write surcharge — for everything after the first
changed message. Every compaction rewrites an early message, so the call after it re-writes most of the context.

Per call: the cached prefix is the longest run of leading messages identical to the previous call's context, if the
gap since that call is within the cache TTL (timestamps from the log; none → assume warm) and the prefix reaches the
provider's minimum cacheable length (rounded down to its caching increment). Then

- Anthropic: ``read = prefix``, ``write = rest of the input`` (the whole prompt is cached at the last breakpoint),
  billed at 0.1× / 1.25× (5-minute TTL) or 2× (1-hour TTL) the input price;
- OpenAI: ``cached = prefix`` at the model's cached-input discount, the rest uncached, no write surcharge.

Summarizer calls are priced as their own uncached requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from functools import lru_cache
from importlib import resources
from itertools import compress
from itertools import count
from itertools import repeat
from operator import is_
from operator import is_not
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple

from ..conversation import Conversation
from ..conversation import Message
from ..conversation import ToolSchema
from ..replay import CallDelta
from ..replay import Replay
from ..timeline import last_difference
from ..tokens import Counter

if TYPE_CHECKING:
    import pandas as pd

TTL_SECONDS = {"5m": 300, "1h": 3600}


@dataclass(frozen=True)
class PriceModel:
    """Prices of one model (USD per million tokens) and its provider's caching rules."""

    model: str
    provider: str
    input_per_mtok: float
    output_per_mtok: float
    cache_read_multiplier: float = 0.1
    cache_write_5m_multiplier: float = 1.25
    cache_write_1h_multiplier: float = 2.0
    min_cacheable_tokens: int = 1024
    cache_increment_tokens: int = 1
    write_surcharge: bool = True
    ttl: str = "5m"

    @property
    def ttl_seconds(self) -> int:
        return TTL_SECONDS[self.ttl]

    @property
    def write_multiplier(self) -> float:
        if not self.write_surcharge:
            return 1.0
        return self.cache_write_1h_multiplier if self.ttl == "1h" else self.cache_write_5m_multiplier

    def dollars(self, uncached: int, read: int, write: int, output: int) -> float:
        p_in = self.input_per_mtok / 1e6
        return (uncached * p_in + read * p_in * self.cache_read_multiplier + write * p_in * self.write_multiplier
                + output * self.output_per_mtok / 1e6)


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    """The bundled, dated price data (``prices.json``)."""
    table: dict[str, Any] = json.loads(resources.files(__package__).joinpath("prices.json").read_text(encoding="utf-8"))
    return table


def price_model(model: str = "claude-sonnet-4-6", ttl: str = "5m", **overrides: Any) -> PriceModel:
    """A :class:`PriceModel` from the price table, with any field overridden (``input_per_mtok=…``)."""
    if ttl not in TTL_SECONDS:
        raise ValueError(f"cache TTL must be one of {', '.join(TTL_SECONDS)}, got {ttl!r}")
    table = price_table()
    if model not in table["models"]:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(table['models'])} (or pass prices explicitly)")
    row = dict(table["models"][model])
    provider = row.pop("provider")
    fields = {**table["providers"][provider], **row, **overrides}
    fields.pop("source", None)  # where a figure was read: data for people, not a price
    return PriceModel(model=model, provider=provider, ttl=ttl, **fields)


def prices_for(conversation: Conversation, ttl: str = "5m", **overrides: Any) -> PriceModel:
    """The price preset of the model ``conversation`` names (else its provider's default preset; see
    :func:`compaction.models.resolve_price_model`), with any field overridden."""
    from ..models import resolve_price_model

    return price_model(resolve_price_model(conversation).value, ttl, **overrides)


class CallCost(NamedTuple):
    """The token split and price of one LLM call (a named tuple: a replay's pricing makes one per call, and a frozen
    dataclass of these fields took ~3 us to build)."""

    step: int
    input_tokens: int
    cache_read: int
    cache_write: int
    uncached: int
    output: int
    dollars: float
    cold: bool  # the cache had expired (gap > TTL)
    prefix_messages: int
    summarizer_input: int = 0
    summarizer_output: int = 0
    summarizer_dollars: float = 0.0


@dataclass
class CostReport:
    """Per-call costs of one run (a replay, or the uncompacted baseline)."""

    prices: PriceModel
    calls: list[CallCost] = field(default_factory=list)

    @property
    def total_dollars(self) -> float:
        return sum(c.dollars + c.summarizer_dollars for c in self.calls)

    def totals(self) -> dict[str, float]:
        return {
            "input_tokens": sum(c.input_tokens for c in self.calls),
            "cache_read": sum(c.cache_read for c in self.calls),
            "cache_write": sum(c.cache_write for c in self.calls),
            "uncached": sum(c.uncached for c in self.calls),
            "output": sum(c.output for c in self.calls),
            "summarizer_tokens": sum(c.summarizer_input + c.summarizer_output for c in self.calls),
            "summarizer_dollars": sum(c.summarizer_dollars for c in self.calls),
            "dollars": self.total_dollars,
            "cold_calls": sum(c.cold for c in self.calls),
        }

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame([c._asdict() for c in self.calls])


def _timestamp(message: Message) -> float | None:
    raw = message.meta.get("timestamp")
    if isinstance(raw, (int, float)):
        return float(raw / 1000 if raw > 1e11 else raw)
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class CallInput:
    """What one LLM call sent and produced, for pricing."""

    step: int
    context: Sequence[Message]
    output_tokens: int
    model_calls: Sequence[Mapping[str, int]] = ()


class CallUpdate(NamedTuple):
    """One LLM call given as a change of the call before it: that call's first ``keep`` messages, then ``new``
    (what a replay knows without rebuilding each context; a named tuple, as :class:`CallCost`)."""

    step: int
    keep: int
    new: Sequence[Message]
    output_tokens: int
    model_calls: Sequence[Mapping[str, int]] = ()


def split_tokens(total: int, prefix_tokens: int, no_cache: bool, prices: PriceModel) -> tuple[int, int, int]:
    """(cache read, cache write, uncached) of one call's ``total`` input tokens given its reusable prefix.

    ``no_cache``: the first call, or the cache expired since the previous call."""
    read = 0
    if not no_cache and prefix_tokens >= prices.min_cacheable_tokens:
        step = max(prices.cache_increment_tokens, 1)
        read = min(prefix_tokens // step * step, total)
    write = (total - read) if prices.write_surcharge and total >= prices.min_cacheable_tokens else 0
    return read, write, total - read - write


def message_time(message: Message) -> float | None:
    """The message's timestamp in seconds, if the log recorded one."""
    return _timestamp(message)


def _stamps(conv: Conversation) -> Callable[[Message], float | None]:
    """:func:`message_time`, each of ``conv``'s messages read once (kept in its memo; the messages it holds are
    alive while it is, so their ids name them; any other message is read when asked)."""
    known = conv.memoized(("message times",), lambda: {id(m): _timestamp(m) for m in conv.messages})

    def stamp(message: Message) -> float | None:
        key = id(message)
        return known[key] if key in known else _timestamp(message)

    return stamp


class _RunningContext:
    """The context of the latest call and its running count, with count marks, so a call that shares a prefix with
    the one before rewinds to it instead of recounting, and one that ends with what the call before ended with carries
    that count over (a compaction rewrites a stretch of a long history: only that stretch is counted).

    ``_marks[k]`` is the count after the first ``k`` messages, known for the first ``len(_marks)`` positions; the
    others are made when asked for, from the last one known (a carried stretch leaves them unknown)."""

    def __init__(self, counter: Counter, tools: Sequence[ToolSchema]) -> None:
        self.counter, self.tools = counter, tools
        self.messages: list[Message] = []
        self.tally = counter.tally(tools=tools)
        self._marks: list[Any] = [self.tally.checkpoint()]  # (a tally's marks are opaque; None: it keeps none)

    def _mark(self, k: int) -> Any:
        """The count after the first ``k`` messages (the tally stays where it is)."""
        marks = self._marks
        if k >= len(marks):
            here = self.tally.checkpoint()
            self.tally.rewind(marks[-1])
            marks.extend(self.tally.extend_marked(self.messages[len(marks) - 1:k]))
            self.tally.rewind(here)
        return marks[k]

    def cut(self, keep: int, tail: int = 0) -> tuple[Any, Any] | None:
        """Keep the first ``keep`` messages only. With ``tail``: the marks around the last ``tail`` messages cut off,
        for :meth:`carry` (None when there are none, or this tally keeps no marks)."""
        size = len(self.messages)
        if keep == size:
            return None
        if self._marks[0] is None:  # this counter keeps no marks: recount the prefix
            del self.messages[keep:]
            self.tally = self.counter.tally(self.messages, self.tools)
            self._marks = [None] * (keep + 1)
            return None
        ends = (self._mark(size - tail), self.tally.checkpoint()) if 0 < tail < size else None
        mark = self._mark(keep)
        del self.messages[keep:]
        self.tally.rewind(mark)
        del self._marks[keep + 1:]
        return ends

    def holding(self, counter: Counter, messages: Sequence[Message]) -> _RunningContext:
        """A new running context with ``counter`` (of this one's spec) and the same tools, holding ``messages``: when
        this one starts with those very messages, their marks are copied instead of counted again (marks are values
        of the count: the baseline's context serves every replay of its conversation up to its first change)."""
        other = _RunningContext(counter, self.tools)
        size = len(messages)
        if self._marks[0] is not None and size < len(self._marks) and _same_objects(self.messages, messages) == size:
            other.messages = list(messages)
            other._marks = self._marks[:size + 1]
            other.tally.rewind(other._marks[size])
        else:
            other.extend(messages)
        return other

    def extend(self, messages: Sequence[Message]) -> None:
        if len(self._marks) > len(self.messages):  # marks known up to here: keep making them
            self._marks.extend(self.tally.extend_marked(messages))
        else:
            self.tally.extend(messages)
        self.messages.extend(messages)

    def carry(self, ends: tuple[Any, Any] | None, messages: Sequence[Message]) -> None:
        """Extend by ``messages``: the last ones :meth:`cut` cut off, which returned ``ends``; their count is carried
        over when the tally can (their marks are then made when asked for)."""
        if ends is None or not self.tally.carry(*ends):
            self.extend(messages)
        else:
            self.messages.extend(messages)


def price_calls(calls: Iterable[CallInput | CallUpdate], counter: Counter, prices: PriceModel,
                tools: Sequence[ToolSchema] = (), hidden_prefix_tokens: int = 0, *,
                after: tuple[CostReport, Sequence[Message], float | None] | None = None) -> CostReport:
    """Price a sequence of calls with the prefix-cache model described in the module docstring.

    Calls come as whole contexts (:class:`CallInput`) or as changes of the call before (:class:`CallUpdate`).
    ``hidden_prefix_tokens``: a stable prefix every call sends that the log does not show (a provider-side system
    prompt, tool definitions); calibration estimates it from reported usage. ``after``: the calls continue a run
    already priced — its report (extended in place and returned), the context its last call sent and the latest
    timestamp its calls saw."""
    return _price(calls, _RunningContext(counter, tools), prices, hidden_prefix_tokens, after, None, _timestamp)


def _price(calls: Iterable[CallInput | CallUpdate], running: _RunningContext, prices: PriceModel,
           hidden_prefix_tokens: int, after: tuple[CostReport, Sequence[Message], float | None] | None,
           times: list[float | None] | None, stamp: Callable[[Message], float | None]) -> CostReport:
    """:func:`price_calls`; ``times``, when given, receives the latest timestamp seen after each call; ``stamp``
    reads a message's timestamp (:func:`message_time`, or what a conversation keeps of it)."""
    report = CostReport(prices) if after is None else after[0]
    tools = running.tools
    previous_time: float | None = None
    if after is not None:
        running.extend(after[1])
        previous_time = after[2]
    ttl, priced = prices.ttl_seconds, report.calls
    no_summarizer = prices.dollars(0, 0, 0, 0)  # what a call without summarizer calls pays for them
    for call in calls:
        previous = running.messages
        had_previous = bool(previous)
        if isinstance(call, CallInput):
            keep = _same_objects(previous, call.context)
            new = call.context[keep:]
        else:
            keep, new = min(call.keep, len(previous)), call.new
        # a copy with the same content still reads from the cache, though it is counted anew
        p = keep
        while p < len(previous) and p - keep < len(new) and _same(previous[p], new[p - keep]):
            p += 1
        # what the context before ended with, still sent after the stretch a compaction rewrote, is carried over
        carried, end = _carried(previous, keep, new, p - keep)
        ends = running.cut(keep, carried)
        if p > keep:
            running.extend(new[:p - keep])
        prefix_tokens = running.tally.value(with_tools=True) if p or tools else 0
        if carried:
            running.extend(new[p - keep:end - carried])
            running.carry(ends, new[end - carried:end])
            running.extend(new[end:])
        else:
            running.extend(new[p - keep:] if p > keep else new)
        context = running.messages
        total = running.tally.value(with_tools=True) + hidden_prefix_tokens
        prefix_tokens += hidden_prefix_tokens
        now = stamp(context[-1]) if context else None
        cold = previous_time is not None and now is not None and now - previous_time > ttl
        read, write, uncached = split_tokens(total, prefix_tokens, not had_previous or cold, prices)
        if call.model_calls:
            s_in = sum(c.get("input_tokens", 0) for c in call.model_calls)
            s_out = sum(c.get("output_tokens", 0) for c in call.model_calls)
            summarizer_dollars = prices.dollars(s_in, 0, 0, s_out)
        else:
            s_in = s_out = 0
            summarizer_dollars = no_summarizer
        priced.append(CallCost(  # (by position: keywords took twice as long to parse)
            call.step, total, read, write, uncached, call.output_tokens,
            prices.dollars(uncached, read, write, call.output_tokens), cold, p, s_in, s_out, summarizer_dollars))
        previous_time = now if now is not None else previous_time
        if times is not None:
            times.append(previous_time)
    return report


def _same_objects(previous: Sequence[Message], context: Sequence[Message]) -> int:
    """Leading messages of ``context`` that are the very objects ``previous`` starts with."""
    return next(compress(count(), map(is_not, previous, context)), min(len(previous), len(context)))


def _carried(previous: list[Message], keep: int, new: Sequence[Message], start: int) -> tuple[int, int]:
    """(``n``, ``end``): ``new[end - n:end]`` (after ``new[:start]``) are the very objects ``previous[keep:]`` ends
    with — what a call that rewrote a stretch of the context before it still sends, before what the log appended
    since. (0, 0) when ``new`` does not hold the last message of ``previous[keep:]``."""
    if len(previous) <= keep or len(new) <= start:
        return 0, 0
    back = next(compress(count(), map(is_, reversed(new), repeat(previous[-1], len(new) - start))), None)
    if back is None:
        return 0, 0
    end = len(new) - back
    limit = min(len(previous) - keep, end - start)
    return last_difference(previous, new[:end] if isinstance(new, list) else list(new[:end]), limit), end


def _same(a: Message, b: Message) -> bool:
    return a is b or a.same_content(b)


def _output_tokens(rep: Replay, message_index: int, use_reported: bool) -> int:
    usage = rep.conversation.usage.get(message_index)
    if use_reported and usage is not None and usage.output_tokens:
        return usage.output_tokens
    return rep.counter.count_one(rep.conversation.messages[message_index])


def replay_updates(rep: Replay, use_reported_output: bool = True) -> Iterator[CallUpdate]:
    """Every call of a replay as a change of the one before, from the replay's snapshots and their changes."""
    return _updates(rep, use_reported_output, rep.deltas(), 0)


def _updates(rep: Replay, use_reported_output: bool, deltas: Iterable[CallDelta], sent: int) -> Iterator[CallUpdate]:
    """:func:`replay_updates` of ``deltas``, a run of the replay's calls whose call before sent ``sent`` messages."""
    for delta in deltas:
        step, appended = delta.step, [e.message for e in delta.appended]
        output = _output_tokens(rep, step.message_index, use_reported_output)
        change = delta.change
        if change is None:
            keep, new = sent, appended
        else:
            suffix = rep.sent_from(delta.snapshot, change.resume)
            keep = min(change.common_sent, sent)
            new = [*appended[:change.common_sent - keep], *suffix]
        sent = keep + len(new)
        yield CallUpdate(step.step, keep, new, output, step.model_calls)


def replay_costs(rep: Replay, prices: PriceModel, use_reported_output: bool = True) -> CostReport:
    """Price every call of a replay as compacted. Up to its first change (a new snapshot, or a summarizer call) the
    replay sends what the uncompacted run sends, call for call, so those calls are the baseline's (priced once per
    conversation): pricing starts from there, with the context and the latest timestamp the baseline had."""
    base = _baseline(rep, prices, use_reported_output)
    steps = rep.steps
    first = 0
    for step in steps:
        if step.snapshot or step.model_calls or first >= len(base.report.calls) or \
                base.report.calls[first].step != step.step:
            break
        first += 1
    report = CostReport(prices, base.report.calls[:first])
    if first == len(steps):
        return report
    sent = [e.message for e in rep.appended_since(0, steps[first - 1].message_index)] if first else []
    updates = _updates(rep, use_reported_output, rep.deltas(first), len(sent))
    return _price(updates, base.context.holding(rep.counter, sent), prices, 0,
                  (report, (), base.times[first - 1] if first else None), None, _stamps(rep.conversation))


def _baseline_updates(rep: Replay, use_reported_output: bool) -> Iterator[CallUpdate]:
    """The uncompacted run: every call sends the whole log so far (an extension of the call before)."""
    sent = 0
    for delta in rep.deltas():
        new = [e.message for e in delta.appended]
        yield CallUpdate(delta.step.step, sent, new, _output_tokens(rep, delta.step.message_index, use_reported_output))
        sent += len(new)


@dataclass(frozen=True)
class _Baseline:
    """The uncompacted run priced, the latest timestamp seen after each of its calls, its total, and the context of
    its last call with its count marks (read only: see :meth:`_RunningContext.holding`)."""

    report: CostReport
    times: list[float | None]
    dollars: float
    context: _RunningContext


def _baseline(rep: Replay, prices: PriceModel, use_reported_output: bool) -> _Baseline:
    """The baseline of ``rep``'s conversation, once per conversation, skipped messages, counter and prices."""
    def compute() -> _Baseline:
        times: list[float | None] = []
        context = _RunningContext(rep.counter, rep.conversation.tools)
        report = _price(_baseline_updates(rep, use_reported_output), context, prices, 0, None, times,
                        _stamps(rep.conversation))
        return _Baseline(report, times, report.total_dollars, context)

    return rep.conversation.memoized(("cost baseline", rep.skipped, rep.counter.spec, prices, use_reported_output),
                                     compute)


def baseline_costs(rep: Replay, prices: PriceModel, use_reported_output: bool = True) -> CostReport:
    """Price the same calls with no compaction (every call sends the whole log so far). The same for every setup of
    one log and counter, so computed once per log, counter and prices."""
    return _baseline(rep, prices, use_reported_output).report


def baseline_dollars(rep: Replay, prices: PriceModel) -> float:
    """``baseline_costs(rep, prices).total_dollars``, summed once per conversation (a sweep's every row states it)."""
    return _baseline(rep, prices, True).dollars


@dataclass(frozen=True)
class CostComparison:
    """A setup against the uncompacted baseline: fewer tokens is not the same as cheaper."""

    setup: CostReport
    baseline: CostReport

    @property
    def tokens_shed(self) -> int:
        return int(self.baseline.totals()["input_tokens"] - self.setup.totals()["input_tokens"])

    @property
    def dollars_saved(self) -> float:
        return self.baseline.total_dollars - self.setup.total_dollars

    @property
    def net_cheaper(self) -> bool:
        """Cheaper after cache effects (and summarizer calls), not just fewer tokens."""
        return self.dollars_saved > 0

    def summary(self) -> dict[str, Any]:
        s, b = self.setup.totals(), self.baseline.totals()
        return {
            "tokens_shed": self.tokens_shed,
            "fewer_tokens": self.tokens_shed > 0,
            "dollars": round(s["dollars"], 6),
            "baseline_dollars": round(b["dollars"], 6),
            "dollars_saved": round(self.dollars_saved, 6),
            "net_cheaper": self.net_cheaper,
            "cache_read": s["cache_read"],
            "cache_write": s["cache_write"],
            "uncached": s["uncached"],
            "baseline_cache_write": b["cache_write"],
            "summarizer_dollars": round(s["summarizer_dollars"], 6),
        }


def compare_costs(rep: Replay, prices: PriceModel | None = None) -> CostComparison:
    """Price a replay and its baseline with the same model (by default the preset of the model its log names)."""
    prices = prices or prices_for(rep.conversation)
    return CostComparison(replay_costs(rep, prices), baseline_costs(rep, prices))