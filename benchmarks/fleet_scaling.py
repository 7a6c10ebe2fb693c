"""Fleet scaling on the real logs replicated to >= 200 sessions: rows per CPU-second, 1 vs 2 local workers, Dask vs
the local pool, and each against its floor.

The corpus is ``../shared/real_logs`` copied ``--replicas`` times into a temporary folder, each copy given a
different number of trailing newlines (the same replays, a different digest, so nothing is shared by the cache).
Every measurement runs in a fresh process (its imports included) and is charged the CPU of that process and of its
workers; outputs are fresh, so every row is computed. Setups: the fleet benchmark's 50 (2 strategies × 25
compact_at/compact_to) at a 40,000-token window, information loss scored.

Targets (issue 18): 2 workers >= 1.8× one worker; Dask <= 1.1× the local pool at the same worker count; rows per
CPU-second >= 3× the code before (``--before-src DIR``: a checkout of the earlier code, measured the same way).

    python benchmarks/fleet_scaling.py [--replicas 10] [--corpus DIR] [--before-src DIR] [--no-dask] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import Figure
from figures import print_figures

ROOT = Path(__file__).resolve().parents[1]
REAL_LOGS = ROOT.parent / "shared" / "real_logs"
if not REAL_LOGS.exists():
    REAL_LOGS = Path("/work/shared/real_logs")
SPEEDUP_TARGET = 1.8
DASK_TARGET = 1.1
ROWS_TARGET_RATIO = 3.0


def build_corpus(replicas: int, folder: Path) -> Path:
    """``replicas`` copies of the real logs under ``folder`` (reused when already there)."""
    files = [p for p in sorted(REAL_LOGS.rglob("*")) if p.is_file() and p.name != "README.md"]
    if not files:
        raise SystemExit(f"no real logs at {REAL_LOGS}")
    for r in range(replicas):
        copy = folder / f"r{r:02d}"
        copy.mkdir(parents=True, exist_ok=True)
        for p in files:
            target = copy / f"{p.parent.name}__{p.name}"
            if not target.exists():
                target.write_bytes(p.read_bytes() + b"\n" * r)
    return folder


def child(args: argparse.Namespace) -> None:
    """One measurement (in its own process): prints rows, wall seconds and the fleet's own figures as JSON."""
    if args.old:  # the earlier code, not this checkout
        sys.path[:] = [os.environ["PYTHONPATH"], *(p for p in sys.path if Path(p).resolve() != ROOT)]
    sys.path.insert(1, str(Path(__file__).resolve().parent))
    from sweep_and_fleet import fleet_setups

    import compaction
    from compaction.analysis.fleet import find_logs
    from compaction.analysis.fleet import fleet

    assert not args.old or Path(compaction.__file__).resolve().is_relative_to(Path(os.environ["PYTHONPATH"]).resolve())
    paths = [p for p in find_logs(args.corpus) if p.suffix != ".md"]  # the files the earlier code finds too
    setups = fleet_setups()
    kwargs = {}
    cluster = None
    if args.engine == "dask":
        from dask.distributed import LocalCluster

        started = time.perf_counter()
        import dask

        from compaction.analysis.fleet_engines import WORKER_CONFIG

        with dask.config.set(WORKER_CONFIG):  # as the engine starts its own local cluster
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        kwargs = {"engine": "dask", "scheduler": cluster.scheduler_address}
        startup = time.perf_counter() - started
    else:
        startup = 0.0
    worker_cpu: list[float] = []
    dask_pids = [nanny.pid for nanny in cluster.workers.values()] if cluster is not None else []
    dask_before = [_process_cpu(pid) for pid in dask_pids]
    if not args.old and args.engine == "local" and args.workers > 1:
        from compaction.analysis import fleet_engines

        close = fleet_engines.Engine.__exit__

        def measured_exit(self, *exc):  # each pool process's CPU seconds, read before the pool shuts down
            worker_cpu.extend(_process_cpu(pid) for pid in list(getattr(self._pool, "_processes", None) or ()))
            return close(self, *exc)

        fleet_engines.Engine.__exit__ = measured_exit
    out = Path(tempfile.mkdtemp(prefix="fleet-bench-")) / "rows.csv"
    started, cpu = time.perf_counter(), time.process_time()
    if args.old:
        result = fleet(paths, setups, workers=args.workers)
    else:
        result = fleet(paths, setups, workers=args.workers, output=out, **kwargs)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    worker_cpu.extend(_process_cpu(pid) - before for pid, before in zip(dask_pids, dask_before))
    if cluster is not None:
        cluster.close()
    rows = sum(1 for r in result.rows if r.get("setup") is not None and "error" not in r and r.get("error") is None)
    print(json.dumps({"rows": rows, "wall": wall, "startup": startup, "files": len(paths), "worker_cpu": worker_cpu,
                      "fleet_cpu": cpu}))


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(corpus: Path, engine: str, workers: int, src: Path | None = None) -> dict:
    """Run one measurement in a fresh process; its figures with the CPU of it and its workers."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package runs: compiled once, then cached
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "compaction-bench-pycache")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--engine", engine, "--workers", str(workers),
           "--corpus", str(corpus)]
    if src is not None:
        env["PYTHONPATH"] = str(src)
        cmd.append("--old")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=src or ROOT)
    total = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"measurement failed: {done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures["process_wall"] = total
    return figures


def _fleet_cpu(run: dict) -> str:
    """The CPU seconds of a run's workers and of its own process (the parent) while fleet() ran."""
    return " + ".join(f"{c:.2f}" for c in run["worker_cpu"]) + f" CPU-s in workers, {run['fleet_cpu']:.2f} in the parent"


def _best(runs: list[dict]) -> dict:
    """The run with the shortest fleet() wall time (the one the machine disturbed least)."""
    return min(runs, key=lambda r: r["wall"])


def run(corpus: Path, before_src: Path | None, dask: bool, repeats: int = 2) -> list[Figure]:
    """Every figure of the scaling benchmark. The configurations (the earlier code's single worker included) are
    measured in turn, ``repeats`` rounds, and each figure takes its best round: on a shared machine the others' load
    comes and goes."""
    measure(corpus, "local", 1)  # warm the bytecode cache and the file system cache once, unmeasured
    if dask:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            dask = False
    runs: dict[str, list[dict]] = {"before": [], "one": [], "two": [], "dask": []}
    for _ in range(repeats):
        if before_src is not None:  # in every round too, beside the same round's single worker
            runs["before"].append(measure(corpus, "local", 1, before_src))
        runs["one"].append(measure(corpus, "local", 1))
        runs["two"].append(measure(corpus, "local", 2))
        if dask:
            runs["dask"].append(measure(corpus, "dask", 2))
    one, two = _best(runs["one"]), _best(runs["two"])
    rate = max(r["rows"] / r["cpu"] for r in runs["one"])
    figures = [
        Figure(f"fleet {one['files']} files, 1 worker: rows per CPU-second", rate, "rows/s", "-",
               note=f"{one['rows']:,} rows, {one['wall']:.2f} s in fleet(), {one['cpu']:.2f} CPU-s whole process"),
        Figure("fleet, 2 local workers: speed-up vs 1 worker (fleet() wall)", one["wall"] / two["wall"], "x",
               f">= {SPEEDUP_TARGET:g}", SPEEDUP_TARGET, True,
               note=f"{two['wall']:.2f} s vs {one['wall']:.2f} s; floor (1 worker / 2) {one['wall'] / 2:.2f} s: "
               f"{two['wall'] / (one['wall'] / 2):.2f}× the floor; {two['rows'] / two['cpu']:,.0f} rows per CPU-s"),
    ]
    if two.get("worker_cpu"):
        busiest = max(two["worker_cpu"])
        figures.append(Figure("fleet, 2 local workers: speed-up bound from CPU (1 worker / busiest worker)",
                              one["fleet_cpu"] / busiest, "x", f">= {SPEEDUP_TARGET:g}", SPEEDUP_TARGET, True,
                              note="what the wall clock shows on an idle machine: workers "
                              + ", ".join(f"{c:.2f}" for c in two["worker_cpu"])
                              + f" CPU-s vs {one['fleet_cpu']:.2f} in one worker's fleet()"))
    if runs["before"]:
        old = max(runs["before"], key=lambda r: r["rows"] / r["cpu"])  # its best round, as the single worker's
        old_rate = old["rows"] / old["cpu"]
        figures.insert(0, Figure("before: 1 worker, rows per CPU-second", old_rate, "rows/s", "-",
                                 note=f"{old['rows']:,} rows, {old['wall']:.2f} s in fleet(), {old['cpu']:.2f} CPU-s"))
        figures.insert(2, Figure("rows per CPU-second: after vs before", rate / old_rate, "x",
                                 f">= {ROWS_TARGET_RATIO:g}", ROWS_TARGET_RATIO, True))
    if runs["dask"]:
        d = _best(runs["dask"])
        figures.append(Figure("fleet, Dask LocalCluster 2 processes vs 2 local workers (wall)", d["wall"] / two["wall"],
                              "x", f"<= {DASK_TARGET:g}", DASK_TARGET,
                              note=f"{d['wall']:.2f} s vs {two['wall']:.2f} s (cluster start {d['startup']:.2f} s "
                              f"apart); {d['rows'] / d['cpu']:,.0f} rows per CPU-s (its cluster's start and imports "
                              f"included); during fleet(): {_fleet_cpu(d)} vs the pool's {_fleet_cpu(two)}"))
    elif dask:
        figures.append(Figure("dask: not installed (pip install 'compaction-lab[fleet]')", 0, "", "-"))
    rounds = "; ".join(f"{k}: " + ", ".join(f"{r['wall']:.1f}" for r in v) for k, v in runs.items() if v)
    figures.append(Figure(f"rounds (fleet() wall s) — {rounds}", len(runs["one"]), "rounds", "-"))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=10)
    parser.add_argument("--corpus", help="a folder of logs to use instead of the replicated real logs")
    parser.add_argument("--before-src", help="a checkout of the earlier code to measure the 'before' figure from")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--repeats", type=int, default=2, help="rounds of every configuration (best one kept)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--old", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    corpus = Path(args.corpus) if args.corpus else build_corpus(
        args.replicas, Path(tempfile.gettempdir()) / f"compaction-fleet-corpus-{args.replicas}")
    print_figures(run(corpus, Path(args.before_src) if args.before_src else None, not args.no_dask, args.repeats),
                  "fleet scaling (real logs replicated)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
