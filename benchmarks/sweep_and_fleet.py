"""A 20 x 20 sweep on a 1,000-call log, and a fleet of 100 logs x 50 setups, with 1 and 2 worker processes.

Sweep: ``compaction.analysis.sweep.sweep`` of the default setup (Haystack tool-result pruning, approx counter) over
compact_at x compact_to (20 values each), without and with the information-loss signal. Target < 2 s on 2 cores.
Fleet: ``compaction.analysis.fleet.fleet`` over the cached folder of 100 mixed-format logs, 2 strategies x 25
compact_at/compact_to combinations (50 setups). Target < 60 s.

    python benchmarks/sweep_and_fleet.py [--dir DIR] [--quick]
"""

from __future__ import annotations

from pathlib import Path

from figures import Figure
from figures import data_parser
from figures import print_figures
from figures import timed

import compaction
from compaction.analysis.fleet import find_logs
from compaction.analysis.fleet import fleet
from compaction.analysis.sweep import linspace
from compaction.analysis.sweep import sweep
from compaction.setups import Setup

SWEEP_TARGET_S = 2.0
FLEET_TARGET_S = 60.0
SWEEP_AXES = {"compact_at": linspace(0.5, 0.95, 20), "compact_to": linspace(0.1, 0.6, 20)}
FLEET_STRATEGIES = ("haystack.tool_result_pruning", "agent_framework.tool_result_compaction")
FLEET_COMPACT_AT = (0.6, 0.7, 0.8, 0.9, 0.95)
FLEET_COMPACT_TO = (0.2, 0.3, 0.4, 0.5, 0.55)
#: small enough that every fleet log (20–400 calls) crosses the trigger
FLEET_WINDOW = 40_000


def fleet_setups() -> list[tuple[str, Setup]]:
    """The 50 named setups of the fleet benchmark."""
    return [(f"{name} at={a} to={b}", Setup(name, context_window=FLEET_WINDOW).with_values({"compact_at": a,
                                                                                            "compact_to": b}))
            for name in FLEET_STRATEGIES for a in FLEET_COMPACT_AT for b in FLEET_COMPACT_TO]


def sweep_figures(log: Path) -> list[Figure]:
    setup = Setup("haystack.tool_result_pruning")
    figures = []
    for workers in (1, 2):
        for info in (False, True):
            conv = compaction.load(log)  # a fresh copy: nothing cached by an earlier measurement helps
            with timed() as t:
                result = sweep(conv, setup, SWEEP_AXES, with_information=info, workers=workers)
            valid = sum("error" not in r for r in result.rows)
            figures.append(Figure(f"sweep 20x20, information={'yes' if info else 'no'}, workers={workers}", t.wall,
                                  "s", f"< {SWEEP_TARGET_S:g}", SWEEP_TARGET_S,
                                  note=f"{len(result.rows)} configs ({valid} valid), {len(conv.llm_call_indices):,} "
                                  f"calls; CPU {t.cpu:.2f} s"))
    return figures


def fleet_figures(folder: Path, logs: int | None = None, worker_counts: tuple[int, ...] = (1, 2)) -> list[Figure]:
    paths = find_logs(folder)[:logs]
    setups = fleet_setups()
    figures = []
    for workers in worker_counts:
        with timed() as t:
            result = fleet(paths, setups, workers=workers)
        compacting = sum(1 for r in result.rows if r.get("compactions"))
        figures.append(Figure(f"fleet {len(paths)} logs x {len(setups)} setups, workers={workers}", t.wall, "s",
                              f"< {FLEET_TARGET_S:g}", FLEET_TARGET_S if len(paths) == 100 else None,
                              note=f"{len(result.rows)} rows, {len(result.errors)} errors, {compacting} with "
                              f"compactions; {t.wall / max(len(result.rows), 1) * 1000:.1f} ms per replay"))
    return figures


def run(data_dir: str | None = None, quick: bool = False) -> list[Figure]:
    """Sweep and fleet figures (``quick``: the fleet on 10 logs with 2 workers only)."""
    from make_logs import calls_log
    from make_logs import fleet_folder

    figures = sweep_figures(calls_log(1000, data_dir))
    if quick:
        figures += fleet_figures(fleet_folder(data_dir), logs=10, worker_counts=(2,))
    else:
        figures += fleet_figures(fleet_folder(data_dir))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="fleet on 10 logs, 2 workers only")
    args = parser.parse_args(argv)
    print_figures(run(args.dir, args.quick), "sweep and fleet")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
