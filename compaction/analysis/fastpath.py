"""A sweep fast path for Haystack tool-result pruning with the ``approx`` counter.

Pruning only ever replaces tool results in place with placeholders, oldest eligible first, so for a given log the
whole run is determined by a few arrays: the rendered length of every message and of its placeholder, the LLM-call
positions, and the tool-calling step structure. With those computed once, each configuration of a sweep costs
O(compactions + pruned results) plus vectorised arithmetic, instead of a full replay: between compactions the
estimate grows monotonically, so the next trigger is found by a vectorised search. The rules reproduced are exactly
those of :class:`~compaction.strategies.haystack.ToolResultPruning` in a :class:`HookRunner` (tests compare every
metric with full replays).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import numpy as np

from ..conversation import COMPACTION_META_KEY
from ..conversation import Conversation
from ..conversation import Message
from ..conversation import ToolResult
from ..policy import validate_threshold
from ..strategies.haystack import PRUNING_PLACEHOLDER
from ..strategies.haystack import agent_step_spans
from ..tokens import ApproxCounter
from ..tokens import make_counter
from ..tokens import render_tools
from .costs import PriceModel
from .costs import message_time

if TYPE_CHECKING:
    from ..setups import Setup

STRATEGY = "haystack.tool_result_pruning"
_VARIABLE = {"context_window", "compact_at", "compact_to", "min_keep_steps", "min_tokens"}


#: what pruning may replace under a ``min_tokens`` (see :func:`_eligible`)
_Eligible = tuple[np.ndarray, list[int], list[int], list[int], list[int]]


@dataclass
class _Memo:
    """What runs over one layout compute once: the eligible results per ``min_tokens``, the cold calls per TTL
    (seconds), the baseline dollars per prices, and each result's last need with the calls' original indices."""

    eligible: dict[int, _Eligible] = field(default_factory=dict)
    cold: dict[int, np.ndarray] = field(default_factory=dict)
    baseline: dict[PriceModel, float] = field(default_factory=dict)
    quiet: dict[PriceModel, dict[str, Any]] = field(default_factory=dict)
    need: np.ndarray | None = None
    call_originals: np.ndarray | None = None


@dataclass(frozen=True)
class _Layout:
    """Per-log arrays shared by every configuration."""

    cpt: float
    tools_units: int
    prefix_units: np.ndarray  # joined units of the first p messages (p = 0..n), separators included
    prefix_nontext: np.ndarray  # non-text tokens of the first p messages
    calls: np.ndarray  # prefix length (position of the assistant message) of each LLM call
    result_positions: np.ndarray  # positions of tool-result messages, in order
    result_tok: np.ndarray  # count_one of each result
    saved_tok: np.ndarray  # count_one(result) - count_one(placeholder)
    saved_units: np.ndarray
    saved_nontext: np.ndarray
    skippable: np.ndarray  # results carrying compaction meta or a skip key: never pruned
    step_starts: list[int]  # start of each tool-calling step
    step_first_result: list[int]  # its first result position
    call_times: list[float | None]
    output_tokens: list[int]
    output_array: np.ndarray
    #: the conversation index of each position (log summaries are not positions)
    originals: tuple[int, ...]
    baseline_units: np.ndarray  # with tools
    # the same figures as Python lists and per call, for the scalar steps of a run
    call_units_with_tools: list[int] = field(default_factory=list)
    call_nontext: list[int] = field(default_factory=list)
    call_positions: list[int] = field(default_factory=list)
    result_positions_list: list[int] = field(default_factory=list)
    #: runs' memo: cold calls per TTL, baseline dollars per prices, each result's last need
    memo: _Memo = field(default_factory=_Memo, compare=False)


def _placeholder_message(m: Message, placeholder: str) -> Message:
    result = m.tool_result
    assert result is not None  # only tool results are replaced by the placeholder
    return Message("tool", tool_result=ToolResult(result.origin, placeholder.replace("{tool_name}", result.origin.name),
                                                  result.error))


def _layout(conv: Conversation, counter: str, cpt: float, placeholder: str, skip_keys: tuple[str, ...]) -> _Layout:
    """The layout of ``conv`` for these settings, kept in its memo (it lives and dies with the conversation).
    ``counter``: the setup's approx counter, ``cpt`` characters a token (the layout is the same for any spelling of
    it; measured with the setup's own counter, it shares the messages' measures with the setup's replays)."""
    return conv.memoized(("fastpath layout", cpt, placeholder, skip_keys),
                         lambda: _build_layout(conv, counter, cpt, placeholder, skip_keys))


def _build_layout(conv: Conversation, spec: str, cpt: float, placeholder: str, skip_keys: tuple[str, ...]
                  ) -> _Layout:
    counter = make_counter(spec)
    assert isinstance(counter, ApproxCounter) and counter.chars_per_token == cpt
    messages = [m for i, m in enumerate(conv.messages) if i not in conv.log_summary_indices]
    parts = [counter.parts(m) for m in messages]  # (units: the rendering's length, as len(render_haystack(m)))
    units = np.array([p.units for p in parts], dtype=np.int64)
    nontext = np.array([p.images * 85 + p.files * 1000 for p in parts], dtype=np.int64)
    n = len(messages)
    prefix_units = np.zeros(n + 1, dtype=np.int64)
    prefix_units[1:] = np.cumsum(units) + np.arange(n)  # p messages joined by p-1 separators
    prefix_nontext = np.zeros(n + 1, dtype=np.int64)
    prefix_nontext[1:] = np.cumsum(nontext)
    calls = np.array([p for p, m in enumerate(messages) if m.role == "assistant"], dtype=np.int64)
    results = [p for p, m in enumerate(messages) if m.tool_result is not None]
    tok, saved_tok, saved_units, saved_nt, skip = [], [], [], [], []
    for p in results:
        m = messages[p]
        pruned = _placeholder_message(m, placeholder)
        orig = counter.count_one(m)
        tok.append(orig)
        saved_tok.append(orig - counter.count_one(pruned))
        saved_units.append(int(units[p]) - counter.parts(pruned).units)
        saved_nt.append(int(nontext[p]))
        skip.append(COMPACTION_META_KEY in m.meta or any(k in m.meta for k in skip_keys))
    spans = [(a, b) for a, b in agent_step_spans(messages) if b > a + 1]
    tools_units = len(render_tools(conv.tools))
    times, outputs = [], []
    for p in calls:
        times.append(message_time(messages[p - 1]) if p > 0 else None)
        original_index = conv.messages.index(messages[p]) if conv.log_summary_indices else int(p)
        usage = conv.usage.get(original_index)
        outputs.append(usage.output_tokens if usage is not None and usage.output_tokens else
                       counter.count_one(messages[p]))
    return _Layout(
        cpt=cpt, tools_units=tools_units, prefix_units=prefix_units, prefix_nontext=prefix_nontext, calls=calls,
        result_positions=np.array(results, dtype=np.int64), result_tok=np.array(tok, dtype=np.int64),
        saved_tok=np.array(saved_tok, dtype=np.int64), saved_units=np.array(saved_units, dtype=np.int64),
        saved_nontext=np.array(saved_nt, dtype=np.int64), skippable=np.array(skip, dtype=bool),
        step_starts=[a for a, _ in spans], step_first_result=[a + 1 for a, _ in spans],
        call_times=times, output_tokens=outputs, output_array=np.array(outputs, dtype=np.int64),
        originals=tuple(i for i in range(len(conv.messages)) if i not in conv.log_summary_indices),
        baseline_units=_with_tools(prefix_units[calls], prefix_nontext[calls], tools_units, cpt, calls),
        call_units_with_tools=(prefix_units[calls] + tools_units).tolist(), call_nontext=prefix_nontext[calls].tolist(),
        call_positions=calls.tolist(), result_positions_list=list(results),
    )


def _with_tools(units: np.ndarray, nontext: np.ndarray, tools_units: int, cpt: float, lengths: np.ndarray
                ) -> np.ndarray:
    """Vectorised ``tally.value(with_tools=True)``."""
    text = units + tools_units
    out = np.floor(text / cpt).astype(np.int64) + nontext
    if tools_units == 0:
        out = np.where(lengths > 0, out, 0)
    values: np.ndarray = out
    return values


def _count(units: int, nontext: int, length: int, cpt: float, tools_units: int = 0) -> int:
    if length == 0 and tools_units == 0:
        return 0
    return int((units + tools_units) / cpt) + nontext


@dataclass
class _Run:
    tokens_sent: np.ndarray
    compacted: list[int]
    declined: int
    pruned: list[int]  # indices (into the layout's results) of the results pruned, in order
    pruned_step: list[int]  # the step that pruned each
    read: np.ndarray
    write: np.ndarray
    uncached: np.ndarray


def _run(lay: _Layout, window: int, compact_at: float, compact_to: float, min_keep_steps: int, min_tokens: int,
         prices: PriceModel, cold: np.ndarray) -> _Run:
    """The run of one configuration. Between compactions the estimate only grows, so the next trigger is found by a
    binary search; the savings in effect at each call are a step function of the compactions, expanded at the end."""
    cpt, T = lay.cpt, lay.tools_units
    calls = lay.calls
    K = len(calls)
    units_k = lay.prefix_units[calls]
    nontext_k = lay.prefix_nontext[calls]
    A, B, C = lay.call_units_with_tools, lay.call_nontext, lay.call_positions
    eligible, cum_tok, cum_units, cum_nt, eligible_positions = _eligible(lay, min_tokens)
    threshold = window * compact_at
    target_base = int(window * compact_to)
    zero_first = T == 0
    su = snt = 0  # units and non-text tokens saved so far
    ptr = 0
    starts, seg_su, seg_snt = [0], [0], [0]  # from call starts[i] on, the savings seg_su[i], seg_snt[i] apply
    first_change = np.full(K, -1, dtype=np.int64)  # first message a compaction at k rewrote
    after: dict[int, int] = {}  # tokens sent at a triggered call
    compacted: list[int] = []
    pruned_step: list[int] = []
    declined = 0
    k = 0
    while k < K:
        lo, hi = k, K  # the first call at or after k whose estimate reaches the threshold
        while lo < hi:
            mid = (lo + hi) // 2
            est = 0 if zero_first and C[mid] == 0 else math.floor((A[mid] - su) / cpt) + B[mid] - snt
            if est >= threshold:
                hi = mid
            else:
                lo = mid + 1
        if lo >= K:
            break
        k = lo
        estimated = 0 if zero_first and C[k] == 0 else math.floor((A[k] - su) / cpt) + B[k] - snt
        a = C[k]
        current = _count(int(units_k[k]) - su, int(nontext_k[k]) - snt, a, cpt)
        target = max(target_base - (estimated - current), 0)
        changed = False
        if current > target:
            # protected: results of the last `min_keep_steps` tool-calling steps that started before the call
            started = bisect_left(lay.step_starts, a)
            first_protected = lay.step_first_result[max(started - min_keep_steps, 0)] if started else a
            # the oldest eligible results before the protected ones, until the count reaches the target (each
            # saves tokens, so the running saving grows strictly: two binary searches find where the walk stops)
            avail = bisect_left(eligible_positions, first_protected, ptr) - ptr
            if avail > 0:
                reach = bisect_left(cum_tok, cum_tok[ptr] + current - target, ptr + 1)
                end = ptr + min(avail, reach - ptr)
                first_change[k] = eligible_positions[ptr]
                current -= cum_tok[end] - cum_tok[ptr]
                su += cum_units[end] - cum_units[ptr]
                snt += cum_nt[end] - cum_nt[ptr]
                pruned_step.extend([k] * (end - ptr))
                ptr = end
                changed = True
        if changed:
            compacted.append(k)
            starts.append(k + 1)
            seg_su.append(su)
            seg_snt.append(snt)
        else:
            declined += 1
        after[k] = _count(int(units_k[k]) - su, int(nontext_k[k]) - snt, a, cpt, T)
        k += 1
    bounds = np.array([*starts, K], dtype=np.int64)
    counts = bounds[1:] - bounds[:-1]  # np.diff, which numpy's stubs type as timedelta64 here
    saved_units_before = np.repeat(np.array(seg_su, dtype=np.int64), counts)
    saved_nontext_before = np.repeat(np.array(seg_snt, dtype=np.int64), counts)
    sent = _with_tools(units_k - saved_units_before, nontext_k - saved_nontext_before, T, cpt, calls)
    if after:
        sent[np.fromiter(after, dtype=np.int64, count=len(after))] = np.fromiter(after.values(), dtype=np.int64,
                                                                              count=len(after))
    read, write, uncached = _cache_split(lay, sent, first_change, saved_units_before, saved_nontext_before, prices,
                                         cold)
    return _Run(sent, compacted, declined, eligible[:ptr].tolist(), pruned_step, read, write, uncached)


def _eligible(lay: _Layout, min_tokens: int) -> _Eligible:
    """The results pruning may replace under ``min_tokens`` (indices into the layout's results), and from the first
    of them the running sums of the tokens, units and non-text tokens each saves, and their positions."""
    if min_tokens not in lay.memo.eligible:
        eligible = np.nonzero((~lay.skippable) & (lay.result_tok > min_tokens) & (lay.saved_tok > 0))[0]

        def running(values: np.ndarray) -> list[int]:
            return [0, *np.cumsum(values[eligible]).tolist()]

        lay.memo.eligible[min_tokens] = (eligible, running(lay.saved_tok), running(lay.saved_units),
                                         running(lay.saved_nontext), lay.result_positions[eligible].tolist())
    return lay.memo.eligible[min_tokens]


def _cold_calls(lay: _Layout, prices: PriceModel) -> np.ndarray:
    """Calls whose cache is unusable: the first call, and calls after a gap longer than the TTL."""
    ttl = prices.ttl_seconds
    if ttl not in lay.memo.cold:
        lay.memo.cold[ttl] = _find_cold_calls(lay, prices)
    return lay.memo.cold[ttl]


def _find_cold_calls(lay: _Layout, prices: PriceModel) -> np.ndarray:
    cold = np.zeros(len(lay.calls), dtype=bool)
    previous_time = None
    for k, now in enumerate(lay.call_times):
        cold[k] = k == 0 or (previous_time is not None and now is not None and now - previous_time > prices.ttl_seconds)
        if now is not None:
            previous_time = now
    return cold


def _cache_split(lay: _Layout, sent: np.ndarray, first_change: np.ndarray, saved_units: np.ndarray,
                 saved_nontext: np.ndarray, prices: PriceModel,
                 cold: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cache read/write/uncached per call, as :func:`costs.split_tokens` computes them, vectorised.

    The reusable prefix of call k is the previous call's whole context, or up to the first message a compaction at
    k rewrote; either way every result pruned before k lies inside it, so its savings are those in effect at k."""
    K = len(sent)
    if K == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    previous_len = np.concatenate(([0], lay.calls[:-1]))
    p = np.where(first_change < 0, previous_len, np.minimum(first_change, previous_len))
    units = lay.prefix_units[p] - saved_units
    nontext = lay.prefix_nontext[p] - saved_nontext
    prefix_tokens = _with_tools(units, nontext, lay.tools_units, lay.cpt, p)
    increment = max(prices.cache_increment_tokens, 1)
    can_read = (~cold) & (prefix_tokens >= prices.min_cacheable_tokens)
    read = np.where(can_read, np.minimum(prefix_tokens // increment * increment, sent), 0)
    cacheable = sent >= prices.min_cacheable_tokens
    write = np.where(cacheable & prices.write_surcharge, sent - read, 0)
    return read, write, sent - read - write


def _counter_ratio(setup: Setup) -> float | None:
    """The approx counter's characters per token when the fast path covers ``setup``'s strategy and counter."""
    kind, _, arg = setup.counter.partition(":")
    if setup.strategy != STRATEGY or kind != "approx":
        return None
    return float(arg) if arg else 4.0


@dataclass(frozen=True)
class _Prepared:
    """What every configuration of one setup's strategy parameters on one log shares."""

    lay: _Layout
    params: dict[str, Any]
    prices: PriceModel
    cold: np.ndarray
    baseline: float


def _prepare(conv: Conversation, setup: Setup, cpt: float, prices: PriceModel) -> _Prepared:
    params = {"min_keep_steps": 1, "min_tokens": 200, "placeholder": PRUNING_PLACEHOLDER,
              "skip_meta_keys": ("tool_result_offloaded",), **setup.params}
    lay = _layout(conv, setup.counter, cpt, params["placeholder"], tuple(params["skip_meta_keys"]))
    cold = _cold_calls(lay, prices)
    return _Prepared(lay, params, prices, cold, _baseline_dollars(lay, prices, cold))


def fast_sweep_rows(conv: Conversation, setup: Setup, combos: Sequence[Mapping[str, Any]], prices: PriceModel,
                    with_information: bool = False) -> list[dict[str, Any]] | None:
    """Sweep rows for pruning + approx, or ``None`` when this setup needs full replays. With ``with_information``
    each row also gets the information-loss score, from the results the run pruned and when."""
    cpt = _counter_ratio(setup)
    if cpt is None or any(set(values) - _VARIABLE for values in combos):
        return None
    prepared = _prepare(conv, setup, cpt, prices)
    rows = []
    for values in combos:
        s = setup.with_values(values)
        rows.append({**values, **_row(conv, prepared, s, s.params, with_information)})
    return rows


def fast_rows(conv: Conversation, setups: Sequence[Setup], prices: PriceModel, with_information: bool = False
              ) -> list[dict[str, Any]] | None:
    """The rows of ``setups`` — one strategy, parameters and counter, any policy — for pruning + approx, or ``None``
    when they need full replays (what :func:`fast_sweep_rows` gives each, from one layout)."""
    if not setups:
        return []
    first = setups[0]
    cpt = _counter_ratio(first)
    if cpt is None or any((s.strategy, s.params, s.counter) != (first.strategy, first.params, first.counter)
                          for s in setups):
        return None
    prepared = _prepare(conv, first, cpt, prices)
    return [_row(conv, prepared, s, {}, with_information) for s in setups]


def _row(conv: Conversation, prepared: _Prepared, s: Setup, params: Mapping[str, Any], with_information: bool
         ) -> dict[str, Any]:
    """The metrics of one configuration (``params``: its own parameters over the prepared ones), or its error."""
    p = {**prepared.params, **params}
    try:
        # it checks whatever the window is (none is a ConfigError, reported in the row)
        validate_threshold(cast(int, s.context_window), s.compact_at, s.compact_to)
        if int(p["min_keep_steps"]) < 1:
            raise ValueError(f"`min_keep_steps` must be at least 1, got {p['min_keep_steps']}.")
        if int(p["min_tokens"]) < 0:
            raise ValueError(f"`min_tokens` must be at least 0, got {p['min_tokens']}.")
    except ValueError as exc:
        return {"error": str(exc)}
    assert s.context_window is not None  # validate_threshold
    lay, prices = prepared.lay, prepared.prices
    if _quiet(lay, s.context_window * s.compact_at):
        row = {**_quiet_row(lay, prices, prepared.baseline),
               "calls_over_window": int(np.count_nonzero(lay.baseline_units > s.context_window))}
        if with_information:
            row["information_loss"] = 0  # (nothing pruned)
        return row
    run = _run(lay, s.context_window, s.compact_at, s.compact_to, int(p["min_keep_steps"]), int(p["min_tokens"]),
               prices, prepared.cold)
    row = {
        "dollars": _dollars(prices, run.uncached, run.read, run.write, lay),
        "baseline_dollars": prepared.baseline,
        "peak_tokens": int(run.tokens_sent.max()) if len(run.tokens_sent) else 0,
        "tokens_sent": int(run.tokens_sent.sum()),
        "compactions": len(run.compacted),
        "declined": run.declined,
        "thrash": sum(1 for x, y in zip(run.compacted, run.compacted[1:]) if y == x + 1),
        "calls_over_window": int(np.count_nonzero(run.tokens_sent > s.context_window)),
    }
    if with_information:
        row["information_loss"] = _information_score(conv, lay, run)
    return row


def _quiet(lay: _Layout, threshold: float) -> bool:
    """No call's estimate reaches ``threshold``: :func:`_run` finds no trigger (the estimates only grow, so the last
    call's is the highest) and sends what the uncompacted run sends."""
    last = len(lay.call_positions) - 1
    if last < 0:
        return True
    estimate = 0 if lay.tools_units == 0 and lay.call_positions[last] == 0 else \
        math.floor(lay.call_units_with_tools[last] / lay.cpt) + lay.call_nontext[last]
    return estimate < threshold


def _quiet_row(lay: _Layout, prices: PriceModel, baseline: float) -> dict[str, Any]:
    """The metrics of a run that never triggers, but for its calls over the window: the baseline's (the same arrays
    :func:`_run` computes then, once per layout and prices)."""
    if prices not in lay.memo.quiet:
        sent = lay.baseline_units
        lay.memo.quiet[prices] = {"dollars": baseline, "baseline_dollars": baseline,
                                  "peak_tokens": int(sent.max()) if len(sent) else 0, "tokens_sent": int(sent.sum()),
                                  "compactions": 0, "declined": 0, "thrash": 0}
    return lay.memo.quiet[prices]


def _information_score(conv: Conversation, lay: _Layout, run: _Run) -> int:
    """:func:`~.information.information_loss` ``.score`` of the run: pruning only ever prunes, so each pruned result
    is first not kept at the call that pruned it, and it counts when a later message needed it from that call on
    (each result's last need is found once per log, then every configuration compares arrays)."""
    if not run.pruned:
        return 0
    need, call_originals = lay.memo.need, lay.memo.call_originals
    if need is None or call_originals is None:  # each result's last need, found the first time a run prunes it
        need = lay.memo.need = np.full(len(lay.result_positions_list), -2, dtype=np.int64)
        call_originals = lay.memo.call_originals = np.array([lay.originals[p] for p in lay.call_positions],
                                                            dtype=np.int64)
    pruned = np.array(run.pruned, dtype=np.int64)
    unknown = pruned[need[pruned] == -2]
    if unknown.size:
        from .information import _conversation_index

        index = _conversation_index(conv)
        for r in unknown.tolist():
            need[r] = index.latest_need(lay.originals[lay.result_positions_list[r]])
    removed_from = call_originals[np.array(run.pruned_step, dtype=np.int64)]
    return int(np.count_nonzero(need[pruned] >= removed_from))


def _baseline_dollars(lay: _Layout, prices: PriceModel, cold: np.ndarray) -> float:
    """The uncompacted run's dollars, once per layout and prices."""
    if prices not in lay.memo.baseline:
        sent = lay.baseline_units
        zeros = np.zeros(len(sent), dtype=np.int64)
        read, write, uncached = _cache_split(lay, sent, np.full(len(sent), -1, dtype=np.int64), zeros, zeros, prices,
                                             cold)
        lay.memo.baseline[prices] = _dollars(prices, uncached, read, write, lay)
    return lay.memo.baseline[prices]


def _dollars(prices: PriceModel, uncached: np.ndarray, read: np.ndarray, write: np.ndarray, lay: _Layout) -> float:
    """Total USD of a run (same formula as :meth:`PriceModel.dollars`, summed)."""
    p_in = prices.input_per_mtok / 1e6
    per_call = (uncached * p_in + read * (p_in * prices.cache_read_multiplier)
                + write * (p_in * prices.write_multiplier) + lay.output_array * (prices.output_per_mtok / 1e6))
    return float(per_call.sum())
