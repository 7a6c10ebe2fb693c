"""Shared helpers of the benchmark scripts: timing, peak memory, and the figure-vs-target rows they print.

A :class:`Figure` is one measured number with its target; every benchmark returns a list of them, prints them, and
``run_all.py`` gathers them into one summary table. Figures are printed, never asserted: the machine decides.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Figure:
    """One measured figure: ``value`` in ``unit``, and the target it is held to (``limit`` and how it compares)."""

    name: str
    value: float
    unit: str
    target: str = ""
    limit: float | None = None
    higher_is_better: bool = False
    note: str = ""

    @property
    def verdict(self) -> str:
        """``ok`` / ``MISSED`` against the limit, ``-`` for figures without one."""
        if self.limit is None:
            return "-"
        met = self.value >= self.limit if self.higher_is_better else self.value <= self.limit
        return "ok" if met else "MISSED"

    def row(self) -> str:
        value = f"{self.value:,.3f}" if abs(self.value) < 100 else f"{self.value:,.0f}"
        return f"{self.name:<58} {value:>12} {self.unit:<6} {self.target:<18} {self.verdict:<6} {self.note}"


HEADER = f"{'figure':<58} {'value':>12} {'unit':<6} {'target':<18} {'result':<6} note"


def data_parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a benchmark that reads the cached data folder: described by the first line of its module
    docstring ``doc``, with ``--dir``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--dir", help="benchmark data folder (default benchmarks/.data)")
    return parser


def print_figures(figures: Sequence[Figure], title: str = "") -> None:
    """Print figures as an aligned table."""
    if title:
        print(f"\n== {title}")
    print(HEADER)
    print("-" * len(HEADER))
    for f in figures:
        print(f.row(), flush=True)


@dataclass
class Timing:
    """Wall-clock and CPU seconds of a timed block (CPU is the steadier figure on a shared machine)."""

    wall: float = 0.0
    cpu: float = 0.0


@contextmanager
def timed() -> Iterator[Timing]:
    """``with timed() as t: ...`` fills ``t.wall`` and ``t.cpu`` (this process only) when the block ends."""
    t = Timing()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield t
    finally:
        t.wall, t.cpu = time.perf_counter() - wall, time.process_time() - cpu


@contextmanager
def settled_heap() -> Iterator[None]:
    """Take what the process already holds (loaded logs, earlier results) out of the garbage collector's sight for
    the block, as the app does after each run (``compaction.ui.heap``): a full collection walks every tracked object,
    so without this a replay's time depends on how much the benchmark happens to hold and on when a collection
    strikes, not on the replay. What the block itself allocates is collected as usual."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[Timing, Any]:
    """The fastest (by wall clock) of ``repeats`` runs of ``fn``, and the last result."""
    best: Timing | None = None
    result = None
    for _ in range(repeats):
        with timed() as t:
            result = fn()
        if best is None or t.wall < best.wall:
            best = t
    assert best is not None
    return best, result