"""Fleet runs: setups (or sweeps of them) over a corpus of logs, in parallel, streamed to disk, resumable.

The corpus is files (:mod:`.corpus`: folders, lists, every session ``discover`` finds). Work is split by
(conversation, setup batch) (:mod:`.fleet_work`): a small file is indexed and run in one task, a large one is
indexed first and its conversations' batches are queued, the heaviest first. Tasks run inline, on local processes
or on Dask (:mod:`.fleet_engines`); rows stream to an output (:mod:`.fleet_store`) that is also the cache keyed by
(file digest, setup), so a re-run computes only what changed and an interrupted run resumes where it stopped. A log
that cannot be read costs that log only: its row carries the error. :mod:`.fleet_answer` turns the rows into the
best setting under constraints.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from ..setups import Setup
from .corpus import LOG_SUFFIXES
from .corpus import corpus
from .corpus import find_logs
from .costs import PriceModel
from .costs import price_model
from .fleet_answer import Constraints
from .fleet_answer import FleetAnswer
from .fleet_answer import answer
from .fleet_engines import Engine
from .fleet_store import RowStore
from .fleet_store import canonical
from .fleet_store import row_key
from .fleet_work import FileIndex
from .fleet_work import FileOutcome
from .fleet_work import FileTask
from .fleet_work import NamedSetup
from .fleet_work import Task
from .fleet_work import fewer_collections
from .fleet_work import forget
from .fleet_work import named_setups
from .fleet_work import run_file
from .fleet_work import run_task
from .fleet_work import weight

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LOG_SUFFIXES", "FleetResult", "corpus", "find_logs", "fleet", "run_log", "TASK_WEIGHT"]

#: the work (LLM calls × setups) of one task: small enough to balance 2–16 workers, large enough that a task's
#: shared per-conversation work (counts, the uncompacted baseline replays start from, information index) is done
#: once. Since rows got ~2.5× cheaper, 20,000 split the fleet benchmark's conversations into batches whose workers
#: each redid that shared work (2 workers: 10.1 CPU-s where 1 spent 8.6); at 250,000 a conversation of up to
#: 5,000 calls keeps its 50 setups in one task (7.5–8.6 CPU-s for 2 workers)
TASK_WEIGHT = 250_000


def run_log(path: str, setups: Sequence[tuple[str, Setup]], prices: PriceModel,
            with_information: bool = True) -> list[dict[str, Any]]:
    """Rows for one log, computed here: one per (conversation, setup); a load failure gives one error row."""
    named = tuple(named_setups(setups, prices, with_information))
    try:
        outcome = run_file(FileTask(str(path), named, prices, with_information, max_weight=2**62))
    finally:
        forget()
    return [canonical(r) for r in outcome.rows]


@dataclass
class FleetResult:
    """All rows of a fleet run (in the order of the logs, their conversations and the setups), and what they say."""

    rows: list[dict[str, Any]]
    setups: list[str] = field(default_factory=list)
    computed: int = 0  # rows computed by this run (the others came from the output's cache)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows)

    def _ok(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("setup") is not None and r.get("error") is None]

    def aggregate(self) -> list[dict[str, Any]]:
        """Per setup: conversations, median and p90 of $, peak tokens and compactions, total $ vs baseline."""
        by_setup: dict[str, list[dict[str, Any]]] = {}
        for row in self._ok():
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
        ok = [r for r in self._ok() if r.get(metric) is not None]
        return sorted(ok, key=lambda r: r[metric], reverse=True)[:n]

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("error") is not None]

    def answer(self, constraints: Constraints | None = None, open_count: int = 5) -> FleetAnswer:
        """The best setting under ``constraints``, the distribution across sessions, the sessions to open."""
        return answer(self.rows, constraints, order=self.setups, open_count=open_count)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    position = (len(sorted_values) - 1) * q
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def _batches(setups: Sequence[NamedSetup], calls: int, task_weight: int) -> list[tuple[NamedSetup, ...]]:
    """The setups of one conversation in batches of at most ``task_weight`` work (at least one setup each)."""
    if not setups:
        return []
    count = min(len(setups), max(1, -(-weight(calls, len(setups)) // task_weight)))
    size = -(-len(setups) // count)
    return [tuple(setups[i:i + size]) for i in range(0, len(setups), size)]


def fleet(logs: Iterable[str | Path], setups: Sequence[tuple[str, Setup]] | Sequence[NamedSetup], *,
          prices: PriceModel | None = None, engine: str = "local", workers: int = 2, scheduler: str | None = None,
          with_information: bool = True, progress: Callable[[int, int], None] | None = None,
          output: str | Path | None = None, task_weight: int = TASK_WEIGHT) -> FleetResult:
    """Evaluate named ``setups`` on every conversation of every log.

    ``engine`` is ``"local"`` (processes; ``workers=1`` runs inline) or ``"dask"`` (a ``dask.distributed`` cluster
    at ``scheduler``, or a local one of ``workers`` processes when it is None). ``output`` (``.csv`` or
    ``.parquet``) receives the rows as they come and is the cache: rows it holds for the same file bytes and setup
    are not computed again. ``progress(done, total)`` is called as rows arrive (``total`` grows as large files are
    indexed)."""
    paths = list(dict.fromkeys(str(p) for p in logs))
    prices = prices or price_model()
    named = tuple(named_setups(setups, prices, with_information))
    store = RowStore(output) if output is not None else None
    known = store.read_index() if store is not None else {}
    cached: dict[tuple[str, int | None, str | None], dict[str, Any]] = {}  # by row_key
    if store is not None:
        for row in store.rows():
            cached[row_key(row)] = row
    order = {p: i for i, p in enumerate(paths)}
    setup_order: dict[str | None, int] = {n.name: i for i, n in enumerate(named)}  # (a row without a setup: -1)
    rows: list[dict[str, Any]] = []
    computed = 0
    total = 0
    done = 0

    def report(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, total)

    def keep(new: Sequence[dict[str, Any]]) -> None:
        nonlocal computed
        fresh = [canonical(r) for r in new]
        unseen = []
        for r in fresh:  # rows of the same bytes (a copy of a log) are kept once
            key = row_key(r)
            if key not in cached:
                cached[key] = r
                unseen.append(r)
        if store is not None and unseen:
            store.append(unseen)
        computed += len(unseen)
        rows.extend(fresh)

    def plan(index: FileIndex) -> list[Task]:
        """Tasks for the rows of an indexed file that are not cached; cached rows are kept at once."""
        nonlocal total
        if index.error is not None:
            hit = cached.get((index.digest, None, None))
            keep([{**hit, "log": index.path} if hit else
                  {"log": index.path, "digest": index.digest, "error": index.error}])
            total += 1
            report(1)
            return []
        tasks = []
        for position, conv in enumerate(index.conversations):
            missing = []
            for n in named:
                hit = cached.get((index.digest, position, n.key))
                if hit is None:
                    missing.append(n)
                else:
                    rows.append({**hit, "log": index.path, "setup": n.name, "base": n.base,
                                 **({"values": dict(n.values)} if n.values else {})})
            total += len(named)
            report(len(named) - len(missing))
            for batch in _batches(missing, conv.llm_calls, task_weight):
                tasks.append(Task(index.path, index.digest, position, batch, prices, with_information,
                                  weight(conv.llm_calls, len(batch))))
        return sorted(tasks, key=lambda t: -t.weight)

    items: list[Any] = []
    unknown: list[tuple[int, str]] = []
    for path in paths:
        entry = known.get(path)
        try:
            stat = os.stat(path)
        except OSError:
            entry = None
            stat = None
        # a folder's own size and time do not follow its files' bytes: a folder is indexed (digested) every run
        if (entry is not None and stat is not None and not os.path.isdir(path)
                and (entry.size, entry.mtime_ns) == (stat.st_size, stat.st_mtime_ns)):
            items.extend(plan(entry))
        else:
            unknown.append((stat.st_size if stat is not None else 0, path))
            total += len(named)  # a guess of one conversation until it is indexed
    items.sort(key=lambda t: -t.weight)
    # the largest unknown files first (they may fan out into many tasks); small ones travel together
    files = [(size, FileTask(path, named, prices, with_information, task_weight))
             for size, path in sorted(unknown, key=lambda u: -u[0])]

    def more(item: Any, result: Any) -> list[Task]:
        nonlocal total
        if not isinstance(item, tuple):
            return []
        queued: list[Task] = []
        for outcome in result:
            if store is not None:
                store.add_index(outcome.index)
            total -= len(named)
            if outcome.complete:
                total += len(outcome.rows)
            else:
                queued.extend(plan(outcome.index))
        return queued

    try:
        with fewer_collections(), Engine(engine, workers, scheduler) as runner:
            items[:0] = _grouped(files, runner.slots)
            for _item, result in runner.run(items, _work, more):
                new = [r for o in result for r in o.rows] if isinstance(_item, tuple) else result
                keep(new)
                report(len(new))
    finally:
        forget()  # an inline run read the files here: free them
        if store is not None:
            store.close()
    rows.sort(key=lambda r: (order.get(r["log"], len(order)), r.get("conversation_index", -1),
                             setup_order.get(r.get("setup"), -1)))
    return FleetResult(rows, [n.name for n in named], computed)


#: files smaller than this are indexed (and run) several to a task, up to this many bytes a task
GROUP_BYTES = 1 << 20
#: with several workers, the groups first in the queue are larger — each about 1/(this × workers) of the bytes not
#: yet grouped, up to :data:`GUIDED_MAX_BYTES` — and shrink to :data:`GROUP_BYTES` towards the end (guided
#: scheduling: a few hundred fewer round trips, which cost a Dask scheduler milliseconds each, and still small tasks
#: last, so the workers finish together)
GUIDED_SHARE = 4
#: the largest group (what an interrupted run can lose, what a progress bar waits for)
GUIDED_MAX_BYTES = 8 << 20


def _grouped(files: Sequence[tuple[int, FileTask]], slots: int = 1) -> list[tuple[FileTask, ...]]:
    """File tasks (largest first) in groups: a file at least as large as its group's target alone, smaller ones
    together up to it. The target is :data:`GROUP_BYTES`; with ``slots`` > 1 workers it starts larger and shrinks as
    the bytes left to group do (see :data:`GUIDED_SHARE`), so a cluster's scheduler sees tens of tasks, not one per
    session."""
    remaining = sum(bytes_ for bytes_, _ in files)

    def target() -> int:
        if slots <= 1:
            return GROUP_BYTES
        return min(GUIDED_MAX_BYTES, max(GROUP_BYTES, remaining // (GUIDED_SHARE * slots)))

    groups: list[tuple[FileTask, ...]] = []
    current: list[FileTask] = []
    size, limit = 0, target()
    for bytes_, task in files:
        if current and size + bytes_ > limit:
            groups.append(tuple(current))
            remaining -= size
            current, size, limit = [], 0, target()
        current.append(task)
        size += bytes_
    if current:
        groups.append(tuple(current))
    return groups


def _work(item: tuple[FileTask, ...] | Task) -> list[FileOutcome] | list[dict[str, Any]]:
    """What a worker does with one queued item: a group of files to index (and run), or a task."""
    with fewer_collections():
        return [run_file(task) for task in item] if isinstance(item, tuple) else run_task(item)
