"""The units of work of a fleet, and what a worker does with them.

Work is split by (conversation, setup batch): a :class:`Task` names a log file by path, one conversation in it by
position, and a batch of setups. A worker reads the file itself (nothing but paths and setups travel to it), keeps
the last files it read (so the batches of one conversation share its counts, its uncompacted baseline and its
information index), and sends back small rows. Planning first asks workers to index each file (:func:`index_file`:
its digest and its conversations' sizes), so the parent never reads a log.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict
from dataclasses import dataclass
from typing import Any

from ..conversation import Conversation
from ..errors import CompactionError
from ..formats import LoadError
from ..formats import load_all_conversations
from ..setups import Setup
from .corpus import file_digest
from .costs import PriceModel

#: bumped whenever a row's numbers could change for the same file and setup: a cached row of another version is
#: recomputed
ROWS_VERSION = 2
#: files a worker keeps read (each with its conversations' memos); the batches of a file are queued together
KEEP_FILES = 2


@dataclass(frozen=True)
class NamedSetup:
    """A setup as a fleet runs it: its row name, the label it was given, its swept values and its cache key."""

    name: str
    setup: Setup
    base: str = ""
    values: tuple[tuple[str, Any], ...] = ()
    key: str = ""


def setup_key(setup: Setup, prices: PriceModel, with_information: bool) -> str:
    """What a row's numbers depend on besides the file: the setup (strategy, parameters, policy, counter), the prices
    and whether information loss is scored, as a short hash."""
    data = {"setup": {**setup.to_json(), "label": None}, "params": sorted((k, repr(v)) for k, v in
                                                                          setup.params.items()),
            "prices": asdict(prices), "information": with_information, "version": ROWS_VERSION}
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=repr).encode(), digest_size=8).hexdigest()


def named_setups(setups: Sequence[tuple[str, Setup]] | Sequence[NamedSetup], prices: PriceModel,
                 with_information: bool) -> list[NamedSetup]:
    """``(name, setup)`` pairs (or named setups) with their cache keys filled; ``ValueError`` for a repeated name."""
    out: list[NamedSetup] = []
    seen: set[str] = set()
    for item in setups:
        named = item if isinstance(item, NamedSetup) else NamedSetup(item[0], item[1], base=item[0])
        if named.name in seen:
            raise ValueError(f"two setups are named {named.name!r}; give each setup its own label")
        seen.add(named.name)
        out.append(NamedSetup(named.name, named.setup, named.base or named.name, named.values,
                              setup_key(named.setup, prices, with_information)))
    return out


@dataclass(frozen=True)
class ConversationInfo:
    """One conversation of an indexed file: its id, format and size (its LLM calls weigh its work)."""

    id: str
    format: str
    llm_calls: int
    messages: int


@dataclass(frozen=True)
class FileIndex:
    """What planning needs of one file: its digest and its conversations, or why it cannot be read."""

    path: str
    digest: str
    size: int
    mtime_ns: int
    conversations: tuple[ConversationInfo, ...] = ()
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "digest": self.digest, "size": self.size, "mtime_ns": self.mtime_ns,
                "conversations": [asdict(c) for c in self.conversations], "error": self.error}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileIndex:
        return cls(data["path"], data["digest"], int(data["size"]), int(data["mtime_ns"]),
                   tuple(ConversationInfo(**c) for c in data.get("conversations", ())), data.get("error"))


#: the garbage collector's thresholds while a fleet runs (at least): a fleet allocates millions of short-lived
#: objects (entries, steps, rows) among a few long-lived ones (the logs it reads, counters' measures), and with the
#: default thresholds (700, 10, 10) the collector walked them all again and again: 4-5 % of a run's CPU time, 0.5 %
#: with these
GC_THRESHOLDS = (20_000, 20, 20)
_gc_lock = threading.Lock()
_gc_depth = 0
_gc_saved: tuple[int, int, int] = (700, 10, 10)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with the collector's thresholds raised to :data:`GC_THRESHOLDS` (never lowered; nested and
    concurrent blocks share one change; the thresholds before are restored when the last ends)."""
    global _gc_depth, _gc_saved
    with _gc_lock:
        if _gc_depth == 0:
            _gc_saved = gc.get_threshold()
            if _gc_saved[0]:  # (a threshold of 0 turns automatic collection off: left so)
                gc.set_threshold(*(max(now, raised) for now, raised in zip(_gc_saved, GC_THRESHOLDS)))
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0:
                gc.set_threshold(*_gc_saved)


_loaded: OrderedDict[tuple[str, str], list[Conversation] | LoadError] = OrderedDict()


def _read(path: str, digest: str) -> list[Conversation] | LoadError:
    """The file's conversations (or its load error), from this worker's last files when it read it already."""
    key = (path, digest)
    hit = _loaded.get(key)
    if hit is not None:
        _loaded.move_to_end(key)
        return hit
    try:
        value: list[Conversation] | LoadError = load_all_conversations(path)
    except LoadError as exc:
        value = exc
    _loaded[key] = value
    while len(_loaded) > KEEP_FILES:
        _loaded.popitem(last=False)
    return value


def forget() -> None:
    """Drop the files this process keeps read (a fleet run inline frees them when it ends)."""
    _loaded.clear()


def index_file(path: str) -> FileIndex:
    """Read one file (on the worker) and say what it holds; a file that cannot be read gives its error."""
    try:
        stat = os.stat(path)
        digest = file_digest(path)
    except OSError as exc:
        return FileIndex(path, "", 0, 0, error=f"cannot read the file: {exc.strerror or exc}")
    loaded = _read(path, digest)
    if isinstance(loaded, LoadError):
        return FileIndex(path, digest, stat.st_size, stat.st_mtime_ns, error=loaded.reason)
    return FileIndex(path, digest, stat.st_size, stat.st_mtime_ns,
                     tuple(ConversationInfo(c.id, c.format, len(c.llm_call_indices), len(c.messages))
                           for c in loaded))


@dataclass(frozen=True)
class Task:
    """One unit of work: the setups of a batch on one conversation of one file."""

    path: str
    digest: str
    conversation: int  # its position among the file's conversations
    setups: tuple[NamedSetup, ...]
    prices: PriceModel
    with_information: bool
    weight: int = 1  # LLM calls × setups: the larger tasks are queued first


def error_row(path: str, digest: str, error: str) -> dict[str, Any]:
    """The row of a file that cannot be read."""
    return {"log": path, "digest": digest, "conversation": None, "conversation_index": None, "setup": None,
            "error": error}


def run_task(task: Task) -> list[dict[str, Any]]:
    """Rows of one task (on the worker): one per setup of the batch; a setup that cannot run gets its error."""
    loaded = _read(task.path, task.digest)
    if isinstance(loaded, LoadError):
        return [error_row(task.path, task.digest, loaded.reason)]
    if task.conversation >= len(loaded):
        return [error_row(task.path, task.digest, f"the file changed while the fleet ran (no conversation "
                                                  f"{task.conversation + 1})")]
    return _evaluate(task.path, task.digest, task.conversation, loaded[task.conversation], task.setups,
                     task.prices, task.with_information)


def _evaluate(path: str, digest: str, position: int, conv: Conversation, setups: Sequence[NamedSetup],
              prices: PriceModel, with_information: bool) -> list[dict[str, Any]]:
    from .sweep import evaluate_many

    head = {"log": path, "digest": digest, "conversation": conv.id, "conversation_index": position,
            "format": conv.format, "llm_calls": len(conv.llm_call_indices)}
    try:
        results = evaluate_many(conv, [n.setup for n in setups], prices, with_information)
    except CompactionError:  # one setup's error: each on its own, to say which
        results = []
        for named in setups:
            try:
                results.extend(evaluate_many(conv, [named.setup], prices, with_information))
            except CompactionError as exc:
                results.append({"error": str(exc)})
    return [{**head, "setup": named.name, "base": named.base, "values": dict(named.values), "setup_key": named.key,
             "context_window": named.setup.context_window, **metrics} for named, metrics in zip(setups, results)]


@dataclass(frozen=True)
class FileTask:
    """A file not indexed yet: index it and, when its whole work is at most ``max_weight``, run it all at once (a
    small file is read once); else only index it, and its conversations are queued as tasks."""

    path: str
    setups: tuple[NamedSetup, ...]
    prices: PriceModel
    with_information: bool
    max_weight: int


@dataclass(frozen=True)
class FileOutcome:
    """What a :class:`FileTask` found: the index, and the rows when it ran the whole file."""

    index: FileIndex
    rows: list[dict[str, Any]]
    complete: bool


def weight(calls: int, setups: int) -> int:
    """The work of ``setups`` setups on a conversation of ``calls`` LLM calls, in call-replays."""
    return max(calls, 1) * setups


def run_file(task: FileTask) -> FileOutcome:
    """Index one file (on the worker) and run it all when it is small."""
    index = index_file(task.path)
    if index.error is not None:
        return FileOutcome(index, [error_row(task.path, index.digest, index.error)], True)
    total = sum(weight(c.llm_calls, len(task.setups)) for c in index.conversations)
    if total > task.max_weight:
        return FileOutcome(index, [], False)
    loaded = _read(task.path, index.digest)
    assert not isinstance(loaded, LoadError)
    rows = [row for position, conv in enumerate(loaded)
            for row in _evaluate(task.path, index.digest, position, conv, task.setups, task.prices,
                                 task.with_information)]
    return FileOutcome(index, rows, True)
