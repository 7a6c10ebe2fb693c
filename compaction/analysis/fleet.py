"""Fleet runs: setups (or a sweep) over every log in a folder, in parallel, with per-log and aggregate tables.

Each log is one task: load it (any format, detected), then evaluate every setup on every conversation it holds.
Tasks run on local processes (``concurrent.futures``) by default, or on a Dask cluster for fleets beyond one
machine (``engine="dask"``, ``scheduler="tcp://host:8786"``; needs ``dask[distributed]``). A log that cannot be
read costs that log only: its row carries the error.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats import LoadError, load_all_conversations
from ..formats.base import compressed_suffixes
from ..setups import Setup
from .costs import PriceModel, price_model
from .sweep import evaluate

LOG_SUFFIXES = (".json", ".jsonl", ".traj", ".eval", *compressed_suffixes())


def find_logs(folder: str | Path) -> list[Path]:
    """Every log file under ``folder`` (recursively), sorted."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{folder}: not a folder of logs")
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in LOG_SUFFIXES)


def run_log(path: str, setups: Sequence[tuple[str, Setup]], prices: PriceModel,
            with_information: bool = True) -> list[dict[str, Any]]:
    """Rows for one log: one per (conversation, setup); a load failure gives one error row."""
    try:
        conversations = load_all_conversations(path)
    except LoadError as exc:
        return [{"log": path, "conversation": None, "setup": None, "error": exc.reason}]
    rows = []
    for conv in conversations:
        for name, setup in setups:
            metrics = evaluate(conv, setup, prices, with_information)
            rows.append({"log": path, "conversation": conv.id, "format": conv.format, "setup": name,
                         "llm_calls": len(conv.llm_call_indices), **metrics})
    return rows


@dataclass
class FleetResult:
    """All rows of a fleet run, and aggregates per setup."""

    rows: list[dict[str, Any]]

    def frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows)

    def aggregate(self) -> list[dict[str, Any]]:
        """Per setup: logs, median and p90 of $, peak tokens and compactions, total $ vs baseline."""
        by_setup: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows:
            if row.get("setup") is not None and "error" not in row:
                by_setup.setdefault(row["setup"], []).append(row)
        out = []
        for name, rows in by_setup.items():
            entry: dict[str, Any] = {"setup": name, "conversations": len(rows)}
            for metric in ("dollars", "peak_tokens", "compactions"):
                values = sorted(r[metric] for r in rows)
                entry[f"median_{metric}"] = statistics.median(values)
                entry[f"p90_{metric}"] = _percentile(values, 0.9)
            entry["total_dollars"] = sum(r["dollars"] for r in rows)
            entry["total_baseline_dollars"] = sum(r["baseline_dollars"] for r in rows)
            out.append(entry)
        return out

    def worst(self, metric: str = "dollars", n: int = 5) -> list[dict[str, Any]]:
        """The ``n`` rows with the highest ``metric`` (e.g. the most expensive or most-compacted logs)."""
        ok = [r for r in self.rows if "error" not in r and metric in r]
        return sorted(ok, key=lambda r: r[metric], reverse=True)[:n]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if "error" in r]


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def fleet(logs: Iterable[str | Path], setups: Sequence[tuple[str, Setup]], *, prices: PriceModel | None = None,
          engine: str = "local", workers: int = 2, scheduler: str | None = None, with_information: bool = True,
          progress: Callable[[int, int], None] | None = None) -> FleetResult:
    """Evaluate named ``setups`` on every log. ``engine`` is ``"local"`` (processes; ``workers=1`` runs inline)
    or ``"dask"`` (a ``dask.distributed`` cluster at ``scheduler``, or a local one when it is None)."""
    paths = [str(p) for p in logs]
    prices = prices or price_model()
    rows: list[dict[str, Any]] = []
    if engine == "dask":
        rows = _run_dask(paths, setups, prices, with_information, scheduler, progress)
    elif engine != "local":
        raise ValueError(f"unknown engine {engine!r}; expected 'local' or 'dask'")
    elif workers <= 1:
        for i, path in enumerate(paths):
            rows.extend(run_log(path, setups, prices, with_information))
            if progress:
                progress(i + 1, len(paths))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_log, path, setups, prices, with_information): path for path in paths}
            for done, future in enumerate(as_completed(futures), start=1):
                rows.extend(future.result())
                if progress:
                    progress(done, len(paths))
    order = {p: i for i, p in enumerate(paths)}
    rows.sort(key=lambda r: (order[r["log"]], str(r.get("conversation")), str(r.get("setup"))))
    return FleetResult(rows)


def _run_dask(paths: list[str], setups, prices, with_information, scheduler, progress) -> list[dict[str, Any]]:
    try:
        from dask.distributed import Client, LocalCluster
        from dask.distributed import as_completed as dask_completed
    except ImportError as exc:
        raise ValueError("the dask engine needs dask.distributed: pip install 'dask[distributed]'") from exc
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = [client.submit(run_log, path, setups, prices, with_information, pure=False) for path in paths]
        rows: list[dict[str, Any]] = []
        for done, future in enumerate(dask_completed(futures), start=1):
            rows.extend(future.result())
            if progress:
                progress(done, len(paths))
        return rows
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
