"""A replay's stored history over time: snapshots that share their unchanged prefix, and what each one changed.

The engine takes a snapshot of the runner's stored history whenever a call changed it. Compactions usually touch
a small part of a long history (the oldest unpruned results, the newest groups), so a snapshot keeps only what
follows the prefix it shares with the snapshot before it; every :data:`KEYFRAME_DEPTH` links it keeps everything, so
rebuilding one stays cheap. Memory is the sum of what changed, not calls × history length.

Each snapshot also records its :class:`Change`: the sent entries it removed and added against the history just
before it (the previous snapshot plus the originals appended since), the originals whose fate changed, and how many
leading sent messages it shares with that history. Analyses that walk a whole replay (information loss, costs,
composition, lifecycle, warnings) follow these changes instead of rebuilding every call's context. The comparisons
that find the shared prefix run in C (``map`` over ``operator.is_not``), so even a snapshot at every call costs a
few microseconds per thousand entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from itertools import chain
from itertools import compress
from itertools import count
from operator import attrgetter
from operator import is_not
from types import MappingProxyType
from typing import NamedTuple
from typing import TypeVar

from .history import Entry
from .history import Fate

#: a snapshot stores every entry (instead of a suffix) once its chain of shared prefixes is this long
KEYFRAME_DEPTH = 32
#: entries compared in the first stretch when looking for the first difference (the stretches double)
_FIRST_STRETCH = 64
_excluded = attrgetter("excluded")
_Same = TypeVar("_Same")


class Snapshot(NamedTuple):
    """The stored history at one compaction: the first ``shared`` entries of snapshot ``base``, then ``own``.

    ``base`` is -1 for a snapshot that holds every entry itself. Originals from ``next_original`` on were appended
    after the snapshot and are not in it. (A named tuple: a replay makes one per change, and a frozen dataclass took
    several times as long to build.)"""

    base: int
    shared: int
    own: tuple[Entry, ...]
    next_original: int
    depth: int = 0

    @property
    def size(self) -> int:
        """Entries of the stored history this snapshot stands for."""
        return self.shared + len(self.own)


class Change(NamedTuple):
    """What one snapshot changed in what is sent, against the stored history just before it (a named tuple, as
    :class:`Snapshot`).

    ``removed``/``added``: sent entries no longer sent / newly sent (excluded entries are never sent).
    ``fates``: originals whose fate changed, with the new fate (``"kept"`` for one that came back).
    ``common_sent``: leading sent messages that are the very same objects as before; ``resume``: the position in the
    snapshot's entries of the first sent entry after them (its sent suffix starts there)."""

    removed: tuple[Entry, ...] = ()
    added: tuple[Entry, ...] = ()
    fates: Mapping[int, Fate] = MappingProxyType({})
    common_sent: int = 0
    resume: int = 0

    def apply_to(self, fates: dict[int, Fate]) -> None:
        """Bring a running map of non-kept fates (original -> fate) up to date with this change."""
        for origin, fate in self.fates.items():
            if fate == "kept":
                fates.pop(origin, None)
            else:
                fates[origin] = fate


def first_difference(a: list[Entry], b: list[Entry], limit: int, start: int = 0) -> int:
    """The first position below ``limit`` where ``a`` and ``b`` hold different objects (``limit`` when none), given
    that they hold the same ones before ``start``.

    Entries compare by identity, so list equality of two slices says whether a stretch is shared; growing stretches
    are compared that way (in C, a few nanoseconds an entry) and only the first differing one is scanned."""
    start, size = min(start, limit), _FIRST_STRETCH
    while start < limit:
        end = min(start + size, limit)
        stretch_a, stretch_b = a[start:end], b[start:end]
        if stretch_a != stretch_b:
            return start + next(compress(count(), map(is_not, stretch_a, stretch_b)))
        start, size = end, size * 2
    return limit


def last_difference(a: list[_Same], b: list[_Same], limit: int) -> int:
    """How many trailing objects ``a`` and ``b`` share, up to ``limit`` (entries, or anything else that compares by
    identity, as messages do)."""
    n_a, n_b = len(a), len(b)
    shared, size = 0, _FIRST_STRETCH
    while shared < limit:
        end = min(shared + size, limit)
        tail_a, tail_b = a[n_a - end:n_a - shared], b[n_b - end:n_b - shared]
        if tail_a != tail_b:
            return shared + next(compress(count(), map(is_not, reversed(tail_a), reversed(tail_b))))
        shared, size = end, size * 2
    return limit


def excluded_in(entries: list[Entry], start: int = 0) -> int:
    """How many of ``entries[start:]`` are excluded (flagged as not sent)."""
    return sum(map(_excluded, entries[start:]))


#: middles at most this long are compared by scanning them (entries compare by identity), longer ones through sets
_SCANNED_MIDDLE = 16


def _exchanged(old: list[Entry], new: list[Entry]) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    """(sent entries of ``old`` that ``new`` does not hold, sent entries of ``new`` that ``old`` does not hold)."""
    if len(old) <= _SCANNED_MIDDLE and len(new) <= _SCANNED_MIDDLE:
        return (tuple(e for e in old if not e.excluded and e not in new),
                tuple(e for e in new if not e.excluded and e not in old))
    old_ids, new_ids = set(map(id, old)), set(map(id, new))
    return (tuple(e for e in old if not e.excluded and id(e) not in new_ids),
            tuple(e for e in new if not e.excluded and id(e) not in old_ids))


class Timeline:
    """Builds a replay's snapshots and changes while the engine runs: :meth:`append` each original as the runner
    receives it, :meth:`snapshot` the runner's entries after a call changed them."""

    def __init__(self) -> None:
        self.snapshots: list[Snapshot] = [Snapshot(-1, 0, (), 0)]
        self.changes: list[Change] = [Change()]
        #: the runner's stored history as of the last snapshot, plus the originals appended since
        self._history: list[Entry] = []
        self._excluded = 0  # excluded entries in _history
        self._present: dict[int, list[Entry]] = {}  # original -> its sent entries
        self._represented: dict[int, int] = {}  # original -> sent inserted entries that represent it
        self._fates: dict[int, Fate] = {}  # originals whose fate is not kept, now

    def append(self, entry: Entry) -> None:
        """An original joins the stored history (sent, kept)."""
        self._history.append(entry)
        if entry.origin is not None:
            self._present.setdefault(entry.origin, []).append(entry)

    def extend(self, entries: Sequence[Entry]) -> None:
        """:meth:`append` each of ``entries``, in order."""
        self._history.extend(entries)
        present = self._present
        for entry in entries:
            if entry.origin is not None:
                present.setdefault(entry.origin, []).append(entry)

    def snapshot(self, entries: Sequence[Entry], next_original: int, changed_from: int | None = None) -> int:
        """Record the runner's stored history after a change; returns the new snapshot's index. ``changed_from``:
        the runner's word that nothing before that position changed since the last snapshot (see
        :meth:`~compaction.strategies.Runner.first_change`): only what follows it is read, compared and copied."""
        before = self._history
        kept = 0 if changed_from is None else max(0, min(changed_from, len(before), len(entries)))
        old = before[kept:]
        # a copy of the part that may have changed: the runner's list lives on (a list's slice is one)
        new = entries[kept:] if isinstance(entries, list) else list(entries[kept:]) if isinstance(
            entries, tuple) else list(entries)[kept:]
        limit = min(len(old), len(new))
        # (the runner's word is mostly exact: the entry it names is another)
        first = 0 if limit and old[0] is not new[0] else first_difference(old, new, limit)
        tail = last_difference(old, new, limit - first)
        old_middle = old[first:len(old) - tail]
        new_middle = new[first:len(new) - tail]
        removed, added = _exchanged(old_middle, new_middle)
        start = kept + first
        sent_before_start = start - (self._excluded - excluded_in(old, first)) if self._excluded else start
        common_sent, resume = _common_sent(old, new, first, sent_before_start)
        self._excluded += sum(map(_excluded, new_middle)) - sum(map(_excluded, old_middle))
        self.changes.append(Change(removed, added, self._apply(removed, added), common_sent, kept + resume))
        self.snapshots.append(self._store(before, kept, new, start, next_original))
        before[kept:] = new
        return len(self.snapshots) - 1

    # --------------------------------------------------------------------------------------------- internals
    def _store(self, before: list[Entry], kept: int, new: list[Entry], start: int, next_original: int) -> Snapshot:
        """The snapshot of the history ``before[:kept] + new``, whose first ``start`` entries are those of the
        history before it (the previous snapshot holds only part of them: the originals appended since are not in
        it)."""
        base = len(self.snapshots) - 1
        shared = min(start, self.snapshots[base].size)
        depth = self.snapshots[base].depth + 1
        if shared == 0 or depth >= KEYFRAME_DEPTH:
            return Snapshot(-1, 0, (*before[:kept], *new), next_original, 0)
        own = new[shared - kept:] if shared >= kept else [*before[shared:kept], *new]
        return Snapshot(base, shared, tuple(own), next_original, depth)

    def _apply(self, removed: tuple[Entry, ...], added: tuple[Entry, ...]) -> dict[int, Fate]:
        """Update who is sent and represented; the fates that changed.

        ``_represented[o]`` counts the paths from sent inserted entries down their covers to original ``o``. An
        inserted entry that takes over one removed in the same change (a summary of the previous summary) inherits
        its paths as they are: only what it covers besides is counted, so a chain of summaries costs what each adds,
        not what it stands for."""
        touched: set[int] = set()
        present = self._present
        leaving = {id(e): e for e in removed if e.inserted is not None}
        taken_over: set[int] = set()  # removed inserted entries whose paths an added one inherits
        if leaving:
            for e in added:
                for part in e.covers:
                    if not isinstance(part, int) and id(part) in leaving and id(part) not in taken_over:
                        taken_over.add(id(part))
        for e in removed:
            if e.origin is not None:
                own = present[e.origin]
                own.remove(e)
                if not own:
                    del present[e.origin]
                touched.add(e.origin)
            if e.inserted is not None and id(e) not in taken_over:
                self._count_paths(e.covers, -1, touched)
        inherited: set[int] = set()
        for e in added:
            if e.origin is not None:
                present.setdefault(e.origin, []).append(e)
                touched.add(e.origin)
            if e.inserted is not None:
                if taken_over:
                    parts = []
                    for part in e.covers:
                        if not isinstance(part, int) and id(part) in taken_over and id(part) not in inherited:
                            inherited.add(id(part))  # its paths stay counted, now through this entry
                        else:
                            parts.append(part)
                    self._count_paths(parts, +1, touched)
                else:
                    self._count_paths(e.covers, +1, touched)
        changed: dict[int, Fate] = {}
        for o in sorted(touched):
            fate = self._fate(o)
            if fate != self._fates.get(o, "kept"):
                changed[o] = fate
                if fate == "kept":
                    del self._fates[o]
                else:
                    self._fates[o] = fate
        return changed

    def _count_paths(self, covers: Sequence[int | Entry], sign: int, touched: set[int]) -> None:
        """Add ``sign`` to the path count of every original reached from ``covers``."""
        represented = self._represented
        pending = [covers]
        while pending:
            for part in pending.pop():
                if isinstance(part, int):
                    represented[part] = represented.get(part, 0) + sign
                    touched.add(part)
                else:
                    pending.append(part.covers)

    def _fate(self, origin: int) -> Fate:
        own = self._present.get(origin)
        if own:
            return "pruned" if own[-1].pruned else "kept"
        return "collapsed" if self._represented.get(origin, 0) > 0 else "dropped"


def _common_sent(before: list[Entry], after: list[Entry], start: int, sent_before_start: int) -> tuple[int, int]:
    """(leading sent messages that are the same objects in both histories, position in ``after`` where its sent
    suffix starts): the first ``start`` entries are shared (``sent_before_start`` of them sent, counting those before
    the two lists), then sent entries are compared one by one."""
    old = (e for e in before[start:] if not e.excluded)  # a slice: islice would walk the prefix
    position, common = start, sent_before_start
    for e in after[start:]:
        if e.excluded:
            position += 1
            continue
        previous = next(old, None)
        if previous is None or previous.message is not e.message:
            break
        common += 1
        position += 1
    return common, position


def materialize(snapshots: Sequence[Snapshot], index: int, cache: Mapping[int, tuple[Entry, ...]] | None = None
                ) -> tuple[Entry, ...]:
    """Every entry of snapshot ``index``, rebuilt from the chain of shared prefixes (``cache``: snapshots already
    rebuilt, by index). Costs the snapshot's size plus the chain's length."""
    snap = snapshots[index]
    pieces = [snap.own]
    need, current = snap.shared, snap.base
    while need > 0:
        done = cache.get(current) if cache else None
        if done is not None:
            pieces.append(done[:need])
            break
        link = snapshots[current]
        if need > link.shared:
            pieces.append(link.own[: need - link.shared])
            need = link.shared
        current = link.base
    return tuple(chain.from_iterable(reversed(pieces)))
