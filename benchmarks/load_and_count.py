"""Load + count a ~20 MB log, against the time tiktoken alone takes to encode its rendered text (the load's peak
memory is in ``memory.py``).

Counting is what a replay does: every message counted once, appended to a running tally (Haystack's joined-text
count), with the ``approx`` counter and with ``tiktoken:o200k_base``. The reference is ``encode`` of
``render_haystack(message)`` for every message (rendering done beforehand, not timed).
Target: (load + approx + tiktoken count) ≤ 1.5 × encode alone.

Both sides are the fastest of ``--repeats`` runs. Each of our runs loads the log afresh and counts with counters
built for it, so nothing is cached from the run before; one-time process costs (the encoding's load, the import of
the readers) are paid before timing, as the reference's are. Each run starts on a settled heap (what earlier
benchmarks of ``run_all.py`` left in this process is out of the garbage collector's sight, as in a fresh process).

    python benchmarks/load_and_count.py [--log PATH] [--dir DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from figures import Figure
from figures import Timing
from figures import best_of
from figures import print_figures
from figures import settled_heap
from figures import timed

import compaction
from compaction.tiktoken_offline import get_encoding
from compaction.tokens import ApproxCounter
from compaction.tokens import Counter
from compaction.tokens import TiktokenCounter
from compaction.tokens import render_haystack

ENCODING = "o200k_base"
RATIO_TARGET = 1.5


def count_once(conv: compaction.Conversation, counter: Counter) -> int:
    """Count every message once, as a replay does: one running tally, one append per message."""
    tally = counter.tally(tools=conv.tools)
    for message in conv.messages:
        tally.append(message)
    return tally.value()


def _load_and_count(log: Path) -> tuple[Timing, Timing, Timing, compaction.Conversation, int, int]:
    """One cold run: load ``log``, count it with a new approx counter, then with a new tiktoken counter."""
    approx_counter, tiktoken_counter = ApproxCounter(), TiktokenCounter(ENCODING)
    with settled_heap():
        with timed() as t_load:
            conv = compaction.load(log)
        with timed() as t_approx:
            approx = count_once(conv, approx_counter)
        with timed() as t_tik:
            exact = count_once(conv, tiktoken_counter)
    return t_load, t_approx, t_tik, conv, approx, exact


def run(log: Path, repeats: int = 3) -> list[Figure]:
    """Measure and return the figures for ``log`` (each side the fastest of ``repeats`` runs)."""
    size_mb = log.stat().st_size / 1e6
    get_encoding(ENCODING)  # one-time process costs are not part of the figures: the encoding's load
    compaction.formats()  # and the import of every reader (detection imports them all on first use)

    runs = [_load_and_count(log) for _ in range(repeats)]
    t_load, t_approx, t_tik, conv, approx, exact = min(runs, key=lambda r: r[0].wall + r[1].wall + r[2].wall)
    del runs

    encoding = get_encoding(ENCODING)
    texts = [render_haystack(m) for m in conv.messages]
    t_encode, encoded = best_of(repeats, lambda: sum(len(encoding.encode(t, disallowed_special=())) for t in texts))

    total = t_load.wall + t_approx.wall + t_tik.wall
    total_cpu = t_load.cpu + t_approx.cpu + t_tik.cpu
    calls = len(conv.llm_call_indices)
    where = f"{log.name}, {size_mb:.1f} MB, {len(conv.messages):,} msgs, {calls:,} calls"
    return [
        Figure("load (parse + normalize)", t_load.wall, "s", note=where),
        Figure("count approx (tally, each message once)", t_approx.wall, "s", note=f"{approx:,} tokens"),
        Figure(f"count tiktoken:{ENCODING} (tally, each message once)", t_tik.wall, "s", note=f"{exact:,} tokens"),
        Figure("tiktoken encode alone of rendered messages", t_encode.wall, "s", note=f"{encoded:,} tokens"),
        Figure("tiktoken count above encode alone, CPU", t_tik.cpu - t_encode.cpu, "s",
               note="rendering, edge chunks, join corrections, caches"),
        Figure("(load + both counts) / encode alone, wall", total / t_encode.wall, "x", f"<= {RATIO_TARGET}",
               RATIO_TARGET, note=f"fastest of {repeats} each"),
        Figure("(load + both counts) / encode alone, CPU", total_cpu / t_encode.cpu, "x", f"<= {RATIO_TARGET}",
               RATIO_TARGET, note="CPU time: steadier on a busy machine"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="log to measure (default: the cached ~20 MB log)")
    parser.add_argument("--dir", help="benchmark data folder (default benchmarks/.data)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side; the fastest is reported")
    args = parser.parse_args(argv)
    from make_logs import sized_log

    log = Path(args.log) if args.log else sized_log(20, args.dir)
    print_figures(run(log, args.repeats), "load and count")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
