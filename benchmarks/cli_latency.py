"""The command line end to end, in fresh processes: ``sweep`` of 400 configurations on a 1,000-call log and ``info``
on a 4 MB log, each the best of ``--repeats`` runs, against the floor of starting Python and importing the CLI.

Targets (issue 18): sweep < 1.2 s, info < 0.5 s. Bytecode is cached as an installed package's would be (the first,
unmeasured run compiles it).

    python benchmarks/cli_latency.py [--dir DIR] [--repeats 3]
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import Figure
from figures import data_parser
from figures import print_figures
from make_logs import calls_log
from make_logs import sized_log

ROOT = Path(__file__).resolve().parents[1]
SWEEP_TARGET_S = 1.2
INFO_TARGET_S = 0.5


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of ``python -m compaction ARGV`` in a fresh process."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "compaction-bench-pycache")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(argv: list[str], repeats: int) -> tuple[float, float]:
    """The fastest (wall) of ``repeats`` runs, after one unmeasured warm-up."""
    _run(argv)
    return min((_run(argv) for _ in range(repeats)), key=lambda t: t[0])


def run(data_dir: str | None = None, repeats: int = 3) -> list[Figure]:
    """The CLI latency figures."""
    log = calls_log(1000, data_dir)
    four = sized_log(4, data_dir)
    out = Path(tempfile.mkdtemp(prefix="cli-bench-")) / "sweep.csv"
    floor_wall, floor_cpu = best(["-c", "import compaction.cli"], repeats)
    sweep = ["-m", "compaction", "sweep", str(log), "--strategy", "haystack.tool_result_pruning",
             "--axis", "compact_at=0.5:0.95:20", "--axis", "compact_to=0.1:0.6:20", "-o", str(out)]
    figures = [Figure("python -c 'import compaction.cli' (the floor)", floor_wall, "s", "-",
                      note=f"CPU {floor_cpu:.2f} s")]
    for label, extra in (("", []), (", --no-information", ["--no-information"])):
        wall, cpu = best(sweep + extra, repeats)
        figures.append(Figure(f"CLI sweep 400 configs, 1,000-call log{label}", wall, "s", f"< {SWEEP_TARGET_S:g}",
                              SWEEP_TARGET_S, note=f"CPU {cpu:.2f} s; {wall / floor_wall:.1f}× the floor"))
    wall, cpu = best(["-m", "compaction", "info", str(four)], repeats)
    figures.append(Figure(f"CLI info, {four.stat().st_size / 1e6:.1f} MB log", wall, "s", f"< {INFO_TARGET_S:g}",
                          INFO_TARGET_S, note=f"CPU {cpu:.2f} s; {wall / floor_wall:.1f}× the floor"))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print_figures(run(args.dir, args.repeats), "command line latency")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
