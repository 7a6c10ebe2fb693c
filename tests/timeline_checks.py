"""The straightforward recomputation a replay's :mod:`~compaction.timeline` must agree with (shared by the tests)."""

from __future__ import annotations

from compaction.history import Entry
from compaction.history import Fate
from compaction.history import fates_of
from compaction.replay import Replay
from compaction.timeline import Change


def naive_change(before: list[Entry], after: list[Entry]) -> tuple[set[int], set[int], int, int]:
    """(ids of sent entries removed, ids added, leading sent messages shared, position in ``after`` of the first sent
    entry after them) between two stored histories, by brute force."""
    sent_before = [e for e in before if not e.excluded]
    sent_after = [e for e in after if not e.excluded]
    removed = {id(e) for e in sent_before} - {id(e) for e in sent_after}
    added = {id(e) for e in sent_after} - {id(e) for e in sent_before}
    common = 0
    while common < min(len(sent_before), len(sent_after)) and sent_before[common].message is sent_after[common].message:
        common += 1
    positions = [i for i, e in enumerate(after) if not e.excluded]
    resume = positions[common] if common < len(positions) else len(after)
    return removed, added, common, resume


def assert_change_matches(change: Change, before: list[Entry], after: list[Entry], where: str) -> None:
    removed, added, common, resume = naive_change(before, after)
    assert {id(e) for e in change.removed} == removed, f"{where}: removed"
    assert {id(e) for e in change.added} == added, f"{where}: added"
    assert (change.common_sent, change.resume) == (common, resume), f"{where}: shared prefix"


def apply_fates(fates: dict[int, Fate], change: Change) -> None:
    for origin, fate in change.fates.items():
        if fate == "kept":
            fates.pop(origin, None)
        else:
            fates[origin] = fate


def assert_timeline_consistent(rep: Replay, where: str = "") -> None:
    """Every snapshot's change and the fates it accumulates agree with a recomputation from the full entries."""
    first_step = {}
    for s in rep.steps:
        first_step.setdefault(s.snapshot, s.step)
    fates: dict[int, Fate] = {}
    for index in range(1, len(rep.snapshots)):
        previous = rep.snapshots[index - 1]
        snap = rep.snapshots[index]
        before = [*rep.snapshot_entries(index - 1), *rep.appended_since(previous.next_original, snap.next_original)]
        after = list(rep.snapshot_entries(index))
        assert len(after) == snap.size
        assert_change_matches(rep.changes[index], before, after, f"{where} snapshot {index}")
        apply_fates(fates, rep.changes[index])
        assert fates == fates_of(after, snap.next_original, rep.skipped), f"{where} snapshot {index}: fates"
        assert fates == rep.fates_at(first_step[index]), f"{where} snapshot {index}: fates_at"


def contexts(rep: Replay) -> list:
    """Every call's context (removed originals included) and fates, as plain data."""
    return [([item.to_json() for item in rep.context_at(k, include_removed=True)], sorted(rep.fates_at(k).items()))
            for k in range(len(rep.steps))]


def replay_without_hints(monkeypatch, run):
    """``run()`` with every runner's :meth:`first_change` hint ignored: the engine compares whole histories."""
    from compaction.timeline import Timeline

    snapshot = Timeline.snapshot
    with monkeypatch.context() as patch:
        patch.setattr(Timeline, "snapshot", lambda self, entries, next_original, changed_from=None:
                      snapshot(self, entries, next_original))
        return run()
