"""Where a fleet's tasks run: inline, on local processes, or on a Dask cluster — the same task functions on each.

An engine takes items, a function and a callback that may queue more items as results arrive (indexing a large
file queues its conversations' batches). At most a few tasks per worker are in flight, so the parent's memory
stays bounded however large the corpus.

Dask: ``engine="dask"`` with ``scheduler=None`` starts a ``LocalCluster`` of ``workers`` processes (one thread
each); ``scheduler="tcp://host:8786"`` uses a running cluster (``dask scheduler`` on one machine, ``dask worker
tcp://host:8786`` on each of the others). Only paths and setups travel to the workers — every worker must see the
logs at the same paths (a shared or replicated file system) — and rows come back. A worker started with ``--preload
compaction.analysis.fleet_engines`` imports what the tasks run before its first task (:func:`dask_setup`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import wait
from importlib import import_module
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from dask.distributed import Client
    from dask.distributed import Future
    from dask.distributed import LocalCluster
    from dask.typing import Key

ENGINES = ("local", "dask")
#: tasks in flight per worker: a local pool hands them out at once; a Dask scheduler needs a deeper queue to keep
#: its workers busy across its round trips (a task is a few paths and setups, so memory stays small either way)
IN_FLIGHT = 4
DASK_IN_FLIGHT = 64
#: what a fleet's tasks import as they run: a worker imports them as it starts (a local pool's forks inherit them
#: from the parent, which imports them first; a Dask worker preloads them, see :func:`dask_setup`)
WORKER_MODULES = ["compaction.analysis.fleet", "compaction.analysis.sweep", "compaction.analysis.fastpath"]


def warm() -> None:
    """Import what a fleet's tasks run: :data:`WORKER_MODULES`, every strategy family and every log reader (their
    registries import them on first use — otherwise inside a worker's first task; idempotent)."""
    from ..formats import load_all as load_formats
    from ..strategies import load_all as load_strategies

    for module in WORKER_MODULES:
        import_module(module)
    load_strategies()
    load_formats()


def dask_setup(worker: object) -> None:
    """Dask's preload hook (``dask worker --preload compaction.analysis.fleet_engines``): :func:`warm` as the
    worker starts."""
    warm()

#: the Dask settings of a local cluster the engine starts: no statistical profiler sampling every thread every
#: 10 ms, no GIL-contention sampling every 1 ms, and the event loops' housekeeping (tick every 20 ms, system monitor
#: every 0.5 s) slowed down — a fleet of long pure-Python tasks needs none of it (on a real cluster, set them in its
#: workers' Dask configuration)
WORKER_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.gil.enabled": False,
                 "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "5s",
                 # Dask's own environment for the worker processes but MALLOC_TRIM_THRESHOLD_=65536: glibc handing
                 # freed memory back to the system at once made a fleet's workers (which allocate and free all the
                 # time) pay page faults and system calls for it — 15-20 % more CPU than a local pool's forks
                 "distributed.nanny.pre-spawn-environ": {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1,
                                                         "OPENBLAS_NUM_THREADS": 1},
                 # a worker imports what the tasks run as it starts, not on its first task
                 "distributed.worker.preload": [__name__]}


class Engine:
    """One engine for the whole run (``with Engine(...) as engine:``): its pool or cluster starts once."""

    def __init__(self, engine: str = "local", workers: int = 2, scheduler: str | None = None) -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r}; expected 'local' or 'dask'")
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.kind, self.workers, self.scheduler = engine, workers, scheduler
        self._pool: ProcessPoolExecutor | None = None
        self._client: Client | None = None
        self._cluster: LocalCluster | None = None

    def __enter__(self) -> Engine:
        if self.kind == "dask":
            try:
                from dask.distributed import Client
                from dask.distributed import LocalCluster
            except ImportError as exc:
                raise ValueError("the dask engine needs dask.distributed: pip install 'compaction-lab[fleet]' "
                                 "(or 'dask[distributed]')") from exc
            if self.scheduler is None:
                import dask

                # the workers' statistical profiler samples every thread every 10 ms: a fleet does not need it
                with dask.config.set(WORKER_CONFIG):
                    self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                                 dashboard_address=None)
                self._client = Client(self._cluster)
            else:
                try:
                    self._client = Client(self.scheduler, timeout="10s")
                except (OSError, TimeoutError) as exc:
                    raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler}: {exc}") from exc
        elif self.workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            if multiprocessing.get_start_method() == "fork":  # imported once here, not again in each worker
                warm()
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    @property
    def slots(self) -> int:
        """Tasks that can run at once."""
        if self._client is not None and self.scheduler is not None:
            threads: int = sum(w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values())
            return max(threads, 1)
        return self.workers

    def run(self, items: Iterable[Any], fn: Callable[[Any], Any],
            more: Callable[[Any, Any], Iterable[Any]] | None = None) -> Iterator[tuple[Any, Any]]:
        """``(item, fn(item))`` as each finishes, in any order; ``more(item, result)`` may queue further items."""
        queue = deque(items)
        if self._pool is None and self._client is None:
            while queue:
                item = queue.popleft()
                result = fn(item)
                if more is not None:
                    queue.extend(more(item, result))
                yield item, result
            return
        if self._client is not None:
            yield from self._run_dask(queue, fn, more)
            return
        assert self._pool is not None
        limit = self.slots * IN_FLIGHT
        running: dict[Any, Any] = {}
        while queue or running:
            while queue and len(running) < limit:
                item = queue.popleft()
                running[self._pool.submit(fn, item)] = item
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                item = running.pop(future)
                result = future.result()
                if more is not None:
                    queue.extend(more(item, result))
                yield item, result

    def _run_dask(self, queue: deque[Any], fn: Callable[[Any], Any],
                  more: Callable[[Any, Any], Iterable[Any]] | None) -> Iterator[tuple[Any, Any]]:
        from dask.distributed import as_completed

        client = self._client
        assert client is not None
        limit = self.slots * DASK_IN_FLIGHT
        submitted = 0

        def submit(item: Any) -> Future[Any]:
            nonlocal submitted
            submitted += 1
            future = client.submit(fn, item, pure=False, priority=-submitted)
            items[future.key] = item
            return future

        items: dict[Key, Any] = {}
        pending = as_completed([submit(queue.popleft()) for _ in range(min(limit, len(queue)))])
        in_flight = pending.count()
        while in_flight:
            future = next(pending)
            in_flight -= 1
            item = items.pop(future.key)
            result = future.result()
            future.release()
            if more is not None:
                queue.extend(more(item, result))
            while queue and in_flight < limit:
                pending.add(submit(queue.popleft()))
                in_flight += 1
            yield item, result
