"""Peak memory (RSS) of a fresh process: loading the ~20 MB and ~200 MB logs, and loading the 10,000-call log then
replaying it under strategies that compact on most calls, with the analyses the app runs on each replay
(information loss, costs), every replay kept alive as the app keeps its setups.

Target: peak RSS < 300 MB + 5 × the log's size. Each case runs in its own process, so its peak is its own
(``VmHWM`` on Linux).

    python benchmarks/memory.py [--dir DIR] [--skip-replays]
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from figures import ROOT
from figures import Figure
from figures import data_parser
from figures import print_figures

RSS_BASE_MB, RSS_PER_LOG_BYTE = 300.0, 5.0
#: compaction on most calls of the 10,000-call log at the default policy: the most snapshots and changes
REPLAYED = ("haystack.tool_result_pruning", "agent_framework.tool_result_compaction", "swe_agent.last_n_observations")

#: the child process: reports its peak RSS after the imports, the load and each replay (MB)
_CHILD = """
import json, resource, sys
def peak():
    # Linux: VmHWM is this program's own high-water mark (ru_maxrss keeps the forking parent's across exec)
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024 / 1e6
    except OSError:
        pass
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1e6 if sys.platform == "darwin" else kib * 1024 / 1e6
args = json.loads(sys.argv[1])
import compaction
from compaction.analysis.costs import compare_costs
from compaction.analysis.information import information_loss
out = {"import": peak()}
conv = compaction.load(args["log"])
out["load"] = peak()
out["messages"] = len(conv.messages)
kept = []
for name in args["strategies"]:
    rep = compaction.replay(conv, name)
    information_loss(rep)
    compare_costs(rep)
    kept.append(rep)
    out[name] = peak()
    out[name + ":compactions"] = rep.summary()["compactions"]
print(json.dumps(out))
"""


def measure(log: Path, strategies: tuple[str, ...] = ()) -> dict[str, float]:
    """Peak RSS (MB) of a fresh process after importing compaction, loading ``log`` and replaying each strategy."""
    args = json.dumps({"log": str(log.resolve()), "strategies": list(strategies)})
    out = subprocess.run([sys.executable, "-c", _CHILD, args], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def limit_for(log: Path) -> float:
    """The target for ``log``: 300 MB + 5 × its size."""
    return RSS_BASE_MB + RSS_PER_LOG_BYTE * log.stat().st_size / 1e6


def load_figure(log: Path) -> Figure:
    """Peak RSS of a process that loads ``log``."""
    peaks = measure(log)
    return Figure(f"peak RSS loading {log.name}", peaks["load"], "MB", f"< {limit_for(log):.0f}", limit_for(log),
                  note=f"{log.stat().st_size / 1e6:.0f} MB log, {peaks['messages']:,} messages; "
                  f"{peaks['import']:.0f} MB after imports")


def replay_figure(log: Path, strategies: tuple[str, ...] = REPLAYED) -> Figure:
    """Peak RSS of a process that loads ``log`` and keeps a replay (and its analyses) per strategy."""
    peaks = measure(log, strategies)
    steps = "; ".join(f"{name} {peaks[name + ':compactions']:,} compactions -> {peaks[name]:.0f} MB"
                      for name in strategies)
    return Figure(f"peak RSS loading and replaying {log.name}", max(peaks[name] for name in strategies), "MB",
                  f"< {limit_for(log):.0f}", limit_for(log), note=f"load {peaks['load']:.0f} MB; {steps}")


def run(data_dir: str | None = None, replays: bool = True) -> list[Figure]:
    """Every memory figure whose input exists (the ~200 MB log only when ``make_logs.py --large`` built it)."""
    from make_logs import calls_log
    from make_logs import data_dir as folder
    from make_logs import sized_log

    figures = [load_figure(sized_log(20, data_dir))]
    large = folder(data_dir) / "size-200mb.openai.json"
    if large.exists():
        figures.append(load_figure(large))
    if replays:
        figures.append(replay_figure(calls_log(10000, data_dir)))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--skip-replays", action="store_true", help="only the loads")
    args = parser.parse_args(argv)
    print_figures(run(args.dir, not args.skip_replays), "memory")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
