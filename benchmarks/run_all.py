"""Run every benchmark and print a summary table of figure vs target.

    python benchmarks/run_all.py [--dir DIR] [--skip NAME ...] [--large]

Inputs are generated on first use into the cache folder (see ``make_logs.py``). Each benchmark prints its own
figures as it finishes; the summary at the end repeats the figures that have a target, plus the replay-scaling
exponents. Each benchmark runs in a fresh Python process. Figures are measurements of this machine at this moment:
nothing is asserted.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from figures import Figure
from figures import data_parser
from figures import print_figures
from figures import timed

BENCHMARKS = ("replay_vs_haystack", "load_and_count", "memory", "sweep_and_fleet", "fleet_scaling", "cli_latency",
              "replay_scaling", "app_latency", "browser_latency")


def _runner(name: str, data_dir: str | None) -> Callable[[], list[Figure]]:
    from make_logs import calls_log
    from make_logs import sized_log

    if name == "replay_vs_haystack":
        import replay_vs_haystack

        def compare() -> list[Figure]:
            results, figures = replay_vs_haystack.run(data_dir)
            replay_vs_haystack.print_table(results)
            if any(r.differences for r in results):
                raise RuntimeError("our replay and haystack-ai's hook disagree: "
                                   + "; ".join(d for r in results for d in r.differences[:3]))
            return figures

        return compare
    if name == "load_and_count":
        import load_and_count

        return lambda: load_and_count.run(sized_log(20, data_dir))
    if name == "sweep_and_fleet":
        import sweep_and_fleet

        return lambda: sweep_and_fleet.run(data_dir)
    if name == "fleet_scaling":
        import tempfile
        from pathlib import Path

        import fleet_scaling

        corpus = Path(tempfile.gettempdir()) / "compaction-fleet-corpus-10"
        return lambda: fleet_scaling.run(fleet_scaling.build_corpus(10, corpus), None, True)
    if name == "cli_latency":
        import cli_latency

        return lambda: cli_latency.run(data_dir)
    if name == "replay_scaling":
        import replay_scaling

        return lambda: replay_scaling.run(data_dir)
    if name == "memory":
        import memory

        return lambda: memory.run(data_dir)
    if name == "browser_latency":
        import browser_latency

        log = browser_latency.largest_claude_code_log() or calls_log(1000, data_dir)
        return lambda: browser_latency.run(log)
    import app_latency

    return lambda: app_latency.run(calls_log(1000, data_dir))


def run_one(name: str, data_dir: str | None) -> list[Figure]:
    """Run benchmark ``name`` and return its figures."""
    return _runner(name, data_dir)()


def run_in_fresh_process(name: str, data_dir: str | None) -> list[Figure]:
    """:func:`run_one` in a new Python process: no benchmark is timed on a heap (and caches) that others left, as
    users' processes would not be."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(run_one, name, data_dir).result()


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--skip", action="append", default=[], choices=BENCHMARKS, help="leave a benchmark out")
    parser.add_argument("--large", action="store_true", help="also build the ~200 MB log (the memory benchmark loads "
                        "it whenever it exists)")
    args = parser.parse_args(argv)

    from make_logs import make_all

    with timed() as t:
        make_all(args.dir, large=args.large)
    print(f"inputs ready in {t.wall:.1f} s")
    summary: list[Figure] = []
    failed: list[str] = []
    for name in BENCHMARKS:
        if name in args.skip:
            continue
        try:
            with timed() as t:
                figures = run_in_fresh_process(name, args.dir)
        except Exception:  # noqa: BLE001 - one broken benchmark must not hide the others' figures
            traceback.print_exc()
            failed.append(name)
            continue
        print_figures(figures, f"{name} ({t.wall:.0f} s)")
        summary += [f for f in figures if f.limit is not None]
    print_figures(summary, "summary: figures with a target")
    missed = [f for f in summary if f.verdict == "MISSED"]
    print(f"\n{len(summary) - len(missed)} of {len(summary)} targets met" +
          (f"; benchmarks that failed to run: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
