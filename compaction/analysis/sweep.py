"""Sweeps: one setup over a grid of one or two parameters, and the best setting under constraints.

A sweep reuses one tokenization: counters cache counts per message, and every configuration of a sweep shares the
same counter and the same loaded conversation. Haystack tool-result pruning with an ``approx`` counter — the
setup people tune most — additionally takes a fast path (:mod:`.fastpath`) that computes each configuration in time
proportional to its compactions rather than its LLM calls; its results are tested equal to full replays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from ..conversation import Conversation
from ..errors import CompactionError
from ..policy import validate_threshold
from ..setups import POLICY_KEYS
from ..setups import Setup
from ..strategies import get_strategy
from .costs import PriceModel
from .costs import baseline_dollars
from .costs import price_model
from .costs import replay_costs
from .information import information_score

if TYPE_CHECKING:
    import pandas as pd

METRICS = ("dollars", "peak_tokens", "compactions", "thrash", "information_loss", "tokens_sent", "declined",
           "calls_over_window")


def thrash_count(compacted_steps: Sequence[int]) -> int:
    """Compactions that happen on the call right after another compaction."""
    return sum(1 for a, b in zip(compacted_steps, compacted_steps[1:]) if b == a + 1)


def _resolved(conv: Conversation, setup: Setup) -> Setup:
    """``setup`` with the log's own window when it gives none (as a replay resolves it)."""
    if setup.context_window is not None:
        return setup
    from ..models import resolve_context_window

    return setup.replace(context_window=int(resolve_context_window(conv).value))


def _window(setup: Setup) -> int:
    """The window of a setup :func:`_resolved` resolved (or one swept over, which every row then states)."""
    assert setup.context_window is not None, "the setup's window is resolved before it is evaluated"
    return setup.context_window


def evaluate(conv: Conversation, setup: Setup, prices: PriceModel | None = None,
             with_information: bool = True, fast: bool = True) -> dict[str, Any]:
    """Every sweep metric for one setup. Invalid settings give ``{"error": reason}``.

    Setups the fast path covers (Haystack pruning with ``approx``) are computed there — the same numbers, tested —
    unless ``fast=False``; everything else from a full replay. ``calls_over_window`` counts the calls that sent more
    than the context window (the log's own window when the setup gives none)."""
    return _evaluate(conv, _resolved(conv, setup), prices or price_model(), with_information, fast)[0]


def _evaluate(conv: Conversation, setup: Setup, prices: PriceModel, with_information: bool, fast: bool = True
              ) -> tuple[dict[str, Any], int | None]:
    """The row of one setup, and — when its replay never triggered, compacted, projected or called a model — the
    highest count any call measured before compacting (else None)."""
    if fast:
        from .fastpath import fast_sweep_rows

        rows = fast_sweep_rows(conv, setup, [{}], prices, with_information)
        if rows is not None:
            return rows[0], None
    try:
        rep = setup.run(conv)
    except ValueError as exc:
        return {"error": str(exc)}, None
    summary = rep.summary()
    compacted = [s.step for s in rep.steps if s.compacted]
    row: dict[str, Any] = {
        "dollars": replay_costs(rep, prices).total_dollars,
        "baseline_dollars": baseline_dollars(rep, prices),
        "peak_tokens": summary["peak_tokens_sent"],
        "tokens_sent": summary["total_tokens_sent"],
        "compactions": summary["compactions"],
        "declined": summary["declined_triggers"],
        "thrash": thrash_count(compacted),
        "calls_over_window": sum(1 for s in rep.steps if s.tokens_sent > rep.context_window),
    }
    if with_information:
        row["information_loss"] = information_score(rep)
    quiet = all(not s.triggered and not s.model_calls and s.tokens_sent == s.tokens_before for s in rep.steps)
    return row, max((s.tokens_before for s in rep.steps), default=0) if quiet else None


def evaluate_many(conv: Conversation, setups: Sequence[Setup], prices: PriceModel | None = None,
                  with_information: bool = True) -> list[dict[str, Any]]:
    """:func:`evaluate` of every setup, each row the same, with one replay shared where the rows cannot differ:

    - a strategy whose policy uses no thresholds (``policy`` "window" or "none") replays the same whatever
      ``compact_at`` and ``compact_to`` are: one replay per strategy, parameters, counter and window;
    - a threshold strategy whose replay never triggered (nor compacted, projected or called a model) at
      ``compact_at`` replays the same at every lower ``compact_at`` (and any ``compact_to``) whose trigger still
      lies above every count its calls measured: setups are replayed from the highest ``compact_at`` down.

    ``tests/test_sweep.py`` holds every registered strategy to these rules on real logs."""
    prices = prices or price_model()
    resolved = [_resolved(conv, s) for s in setups]
    rows: list[dict[str, Any] | None] = [None] * len(resolved)
    groups: dict[tuple[Hashable, ...], list[int]] = {}
    for i, s in enumerate(resolved):
        groups.setdefault((s.strategy, s.params, s.counter, s.context_window), []).append(i)
    from .fastpath import fast_rows

    for members in groups.values():
        fast = fast_rows(conv, [resolved[i] for i in members], prices, with_information)
        if fast is not None:  # (the same rows as each setup's own _evaluate, from one layout)
            for i, row in zip(members, fast):
                rows[i] = row
            continue
        first = resolved[members[0]]
        try:
            policy = get_strategy(first.strategy).policy
        except CompactionError:
            policy = "threshold"
        ordered = sorted(members, key=lambda i: -resolved[i].compact_at)
        shared: dict[str, Any] | None = None
        quiet_below: int | None = None  # a quiet replay measured at most this
        for i in ordered:
            s = resolved[i]
            if shared is not None and _valid(s) and (policy != "threshold" or (
                    quiet_below is not None and _window(s) * s.compact_at > quiet_below)):
                rows[i] = dict(shared)
                continue
            row, quiet = _evaluate(conv, s, prices, with_information)
            rows[i] = row
            if "error" in row:
                continue
            if policy != "threshold":
                shared = row
            elif quiet is not None and shared is None:
                shared, quiet_below = row, quiet
    return [r for r in rows if r is not None]


def _valid(setup: Setup) -> bool:
    if setup.context_window is None:  # (what validate_threshold refuses too)
        return False
    try:
        validate_threshold(setup.context_window, setup.compact_at, setup.compact_to)
    except ValueError:
        return False
    return True


@dataclass
class SweepResult:
    """One row per configuration: the varied values, then the metrics."""

    setup: Setup
    axes: dict[str, list[Any]]
    rows: list[dict[str, Any]]

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows)

    def best(self, *, safety: float = 1.0, max_compactions: int | None = None, top: int = 3
             ) -> list[dict[str, Any]]:
        """Cheapest configurations with ``peak <= context_window × safety`` and at most ``max_compactions``,
        best first, each with a ``why`` sentence."""
        ok: list[dict[str, Any]] = []
        for row in self.rows:
            if "error" in row:
                continue
            window = row["context_window"] if "context_window" in row else _window(self.setup)
            if row["peak_tokens"] > window * safety:
                continue
            if max_compactions is not None and row["compactions"] > max_compactions:
                continue
            ok.append(row)
        ok.sort(key=lambda r: (r["dollars"], r["peak_tokens"], r["compactions"]))
        out = []
        for rank, row in enumerate(ok[:top]):
            values = ", ".join(f"{k}={row[k]}" for k in self.axes)
            why = (f"{values}: ${row['dollars']:.4f} (baseline ${row['baseline_dollars']:.4f}), peak "
                   f"{row['peak_tokens']:,} tokens ≤ {safety:g} × window, {row['compactions']} compactions, "
                   f"{row['thrash']} back-to-back")
            out.append({**row, "rank": rank + 1, "why": why})
        return out


def grid(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the axis values."""
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]


def linspace(start: float, stop: float, count: int, digits: int = 4) -> list[float]:
    """``count`` evenly spaced values from ``start`` to ``stop`` (rounded)."""
    if count < 2:
        return [round(start, digits)]
    step = (stop - start) / (count - 1)
    return [round(start + i * step, digits) for i in range(count)]


def _evaluate_chunk(args: tuple[Conversation, Setup, list[dict[str, Any]], PriceModel, bool]) -> list[dict[str, Any]]:
    conv, setup, combos, prices, info = args
    rows = evaluate_many(conv, [setup.with_values(values) for values in combos], prices, info)
    return [{**values, **row} for values, row in zip(combos, rows)]


def sweep(conv: Conversation, setup: Setup, axes: Mapping[str, Sequence[Any]], *,
          prices: PriceModel | None = None, with_information: bool = True, workers: int = 1,
          progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Evaluate ``setup`` at every combination of ``axes`` (policy keys or strategy parameters).

    Invalid combinations (e.g. ``compact_to >= compact_at``) get an ``error`` instead of metrics. ``workers > 1``
    spreads the work over processes; ``progress(done, total)`` is called as chunks finish.
    """
    info = get_strategy(setup.strategy)
    known = set(POLICY_KEYS) | {p.name for p in info.params}
    for name in axes:
        if name not in known:
            raise ValueError(f"cannot sweep {name!r}: {setup.strategy} has parameters {', '.join(sorted(known))}")
    prices = prices or price_model()
    combos = grid(axes)
    if "context_window" not in axes:
        setup = _resolved(conv, setup)
    from .fastpath import fast_sweep_rows

    fast = fast_sweep_rows(conv, setup, combos, prices, with_information)
    if fast is not None:
        if progress:
            progress(len(fast), len(fast))
        return SweepResult(setup, {k: list(v) for k, v in axes.items()}, fast)

    rows: list[dict[str, Any]] = []
    # one chunk on one worker: setups that replay the same share one replay (evaluate_many)
    chunk = max(1, math.ceil(len(combos) / (workers * 4))) if workers > 1 else max(len(combos), 1)
    chunks = [combos[i : i + chunk] for i in range(0, len(combos), chunk)]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            for done in pool.map(_evaluate_chunk, [(conv, setup, c, prices, with_information) for c in chunks]):
                rows.extend(done)
                if progress:
                    progress(len(rows), len(combos))
    else:
        for c in chunks:
            rows.extend(_evaluate_chunk((conv, setup, c, prices, with_information)))
            if progress:
                progress(len(rows), len(combos))
    return SweepResult(setup, {k: list(v) for k, v in axes.items()}, rows)
