"""Replay time of every registered strategy on the 1,000- and 2,000-call logs (and 10,000 for the fast ones), with
the approx and tiktoken counters, and the memory a ``Replay`` keeps (its snapshots of the stored history).

Each strategy runs with its defaults and the default policy (200k window, compact_at 0.7, compact_to 0.4), on a
settled heap (``figures.settled_heap``: the loaded logs are kept out of the collector's sight, as the app keeps its
caches). The growth exponent between 1,000 and 2,000 calls (time ~ calls^k) flags strategies that are O(N^2) or worse
(k > 1.5): in time, and in snapshot size (a snapshot stores what follows the prefix it shares with the one before it,
and a whole copy at every keyframe).

    python benchmarks/replay_scaling.py [--dir DIR] [--strategy NAME ...] [--fast-limit SECONDS]
"""

from __future__ import annotations

import math
import sys

from figures import Figure
from figures import data_parser
from figures import print_figures
from figures import settled_heap
from figures import timed

import compaction
from compaction.replay import Replay

QUADRATIC_EXPONENT = 1.5


def snapshot_footprint(rep: Replay) -> tuple[int, float]:
    """(entry slots over all snapshots, approximate MB they hold: 8 bytes a slot plus each distinct entry once)."""
    slots = 0
    distinct: dict[int, object] = {}
    for snap in rep.snapshots:
        slots += len(snap.own)
        for e in snap.own:
            distinct[id(e)] = e
    entry_size = sys.getsizeof(next(iter(distinct.values()))) if distinct else 0
    return slots, (slots * 8 + len(distinct) * entry_size) / 1e6


def _exponent(small: float, large: float, ratio: float) -> float:
    if small <= 0 or large <= 0:
        return float("nan")
    return math.log(large / small) / math.log(ratio)


def strategy_figures(name: str, convs: dict[int, compaction.Conversation], fast_limit: float) -> list[Figure]:
    """Figures for one strategy."""
    out = []
    times, sizes = {}, {}
    for calls in (1000, 2000):
        with settled_heap(), timed() as t:
            rep = compaction.replay(convs[calls], name, counter="approx")
        times[calls] = t.cpu
        slots, mb = snapshot_footprint(rep)
        sizes[calls] = slots
        out.append(Figure(f"{name} approx {calls} calls", t.wall, "s",
                          note=f"CPU {t.cpu:.2f} s, {rep.summary()['compactions']} compactions, "
                          f"{len(rep.snapshots)} snapshots, {slots:,} entry slots (~{mb:.0f} MB)"))
    k_time = _exponent(times[1000], times[2000], 2)
    k_size = _exponent(sizes[1000], sizes[2000], 2)
    flag = []
    if k_time > QUADRATIC_EXPONENT:
        flag.append("time O(N^2)")
    if k_size > QUADRATIC_EXPONENT:
        flag.append("snapshots O(N^2)")
    out.append(Figure(f"{name} growth exponent 1k->2k (CPU time)", k_time, "k", f"<= {QUADRATIC_EXPONENT}",
                      QUADRATIC_EXPONENT, note=f"snapshot exponent {k_size:.2f}; {', '.join(flag) or 'near-linear'}"))
    with settled_heap(), timed() as t:
        rep = compaction.replay(convs[2000], name, counter="tiktoken:o200k_base")
    out.append(Figure(f"{name} tiktoken 2000 calls", t.wall, "s", note=f"CPU {t.cpu:.2f} s, "
                      f"{rep.summary()['compactions']} compactions"))
    if times[2000] <= fast_limit and 10000 in convs:
        with settled_heap(), timed() as t:
            rep = compaction.replay(convs[10000], name, counter="approx")
        slots, mb = snapshot_footprint(rep)
        out.append(Figure(f"{name} approx 10000 calls", t.wall, "s",
                          note=f"CPU {t.cpu:.2f} s, {rep.summary()['compactions']} compactions, {slots:,} entry "
                          f"slots (~{mb:.0f} MB); exponent 2k->10k {_exponent(times[2000], t.cpu, 5):.2f}"))
    return out


def run(data_dir: str | None = None, strategies: list[str] | None = None, fast_limit: float = 1.0,
        echo: bool = False) -> list[Figure]:
    """Figures for every (or the named) strategies; ``echo`` prints each strategy's figures as they come."""
    from make_logs import calls_log

    convs = {n: compaction.load(calls_log(n, data_dir)) for n in (1000, 2000, 10000)}
    # counters cache counts per message: warm them, so no strategy pays for tokenizing the log (measured elsewhere)
    for n, conv in convs.items():
        for spec in ("approx", "tiktoken:o200k_base") if n < 10000 else ("approx",):
            compaction.make_counter(spec).tally(conv.messages, conv.tools)
    figures = []
    for name in strategies or sorted(compaction.strategies()):
        found = strategy_figures(name, convs, fast_limit)
        if echo:
            for f in found:
                print(f.row(), flush=True)
        figures += found
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--strategy", action="append", help="only this strategy (repeatable)")
    parser.add_argument("--fast-limit", type=float, default=1.0,
                        help="run the 10,000-call log for strategies whose 2,000-call CPU time is at most this")
    args = parser.parse_args(argv)
    from figures import HEADER

    print("\n== replay scaling")
    print(HEADER)
    figures = run(args.dir, args.strategy, args.fast_limit, echo=True)
    print_figures([f for f in figures if "exponent" in f.name], "growth exponents")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
