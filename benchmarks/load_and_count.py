"""Load + count a ~20 MB log, against the time tiktoken alone takes to encode its rendered text (the load's peak
memory is in ``memory.py``).

Counting is what a replay does: every message counted once, appended to a running tally (Haystack's joined-text
count), with the ``approx`` counter and with ``tiktoken:o200k_base``. The reference is ``encode`` of
``render_haystack(message)`` for every message (rendering done beforehand, not timed).
Target: (load + approx + tiktoken count) ≤ 1.5 × encode alone.

    python benchmarks/load_and_count.py [--log PATH] [--dir DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from figures import Figure, best_of, print_figures, timed

import compaction
from compaction.tiktoken_offline import get_encoding
from compaction.tokens import render_haystack

ENCODING = "o200k_base"
RATIO_TARGET = 1.5


def count_once(conv: compaction.Conversation, spec: str) -> int:
    """Count every message once, as a replay does: one running tally, one append per message."""
    tally = compaction.make_counter(spec).tally(tools=conv.tools)
    for message in conv.messages:
        tally.append(message)
    return tally.value()


def run(log: Path) -> list[Figure]:
    """Measure and return the figures for ``log``."""
    size_mb = log.stat().st_size / 1e6
    get_encoding(ENCODING)  # encoding load time is not part of the figures
    compaction.make_counter(f"tiktoken:{ENCODING}")

    with timed() as t_load:
        conv = compaction.load(log)
    with timed() as t_approx:
        approx = count_once(conv, "approx")
    with timed() as t_tik:
        exact = count_once(conv, f"tiktoken:{ENCODING}")

    encoding = get_encoding(ENCODING)
    texts = [render_haystack(m) for m in conv.messages]
    t_encode, encoded = best_of(2, lambda: sum(len(encoding.encode(t, disallowed_special=())) for t in texts))

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
               RATIO_TARGET),
        Figure("(load + both counts) / encode alone, CPU", total_cpu / t_encode.cpu, "x", f"<= {RATIO_TARGET}",
               RATIO_TARGET, note="CPU time: steadier on a busy machine"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="log to measure (default: the cached ~20 MB log)")
    parser.add_argument("--dir", help="benchmark data folder (default benchmarks/.data)")
    args = parser.parse_args(argv)
    from make_logs import sized_log

    log = Path(args.log) if args.log else sized_log(20, args.dir)
    print_figures(run(log), "load and count")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
