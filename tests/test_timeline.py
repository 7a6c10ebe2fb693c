"""Snapshots that share prefixes, and the per-snapshot changes analyses follow, agree with brute force.

Every registered strategy on the bundled samples (two windows each, so that they compact); random edit sequences of
a stored history (hypothesis) covering replacements, exclusions, removals, summaries of summaries and reorders; and
the keyframe rule that bounds rebuilding."""

from __future__ import annotations

from functools import cache

import pytest
from conftest import sample_paths
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from timeline_checks import apply_fates
from timeline_checks import assert_change_matches
from timeline_checks import assert_timeline_consistent
from timeline_checks import contexts
from timeline_checks import replay_without_hints

import compaction
from compaction.conversation import Message
from compaction.history import Entry
from compaction.history import fates_of
from compaction.history import inserted
from compaction.history import original
from compaction.timeline import KEYFRAME_DEPTH
from compaction.timeline import Timeline
from compaction.timeline import materialize

WINDOWS = (20_000, 60_000)
#: strategies whose trigger is a parameter of their own (not the window): set low enough that the samples compact
OWN_TRIGGERS = {"anthropic.compact_20260112": {"trigger": 50_000}, "langchain.summarization": {"trigger": "tokens=15000"},
                "opencode.prune": {"prune_protect": 4000, "prune_minimum": 2000},
                # aider moves exchanges to its done messages only after acknowledged edits, which the samples lack
                "aider.chat_summary": {"moved_to_done": "every_exchange"},
                # the AI SDK's pruneMessages removes nothing with its defaults
                "vercel_ai.prune_messages": {"tool_calls": "before-last-2-messages"}}


@cache
def samples() -> tuple[compaction.Conversation, ...]:
    return tuple(compaction.load(p) for p in sample_paths())


@pytest.mark.parametrize("strategy", sorted(compaction.strategies()))
def test_runner_hints_change_nothing(strategy: str, monkeypatch) -> None:
    """A runner's first_change() only spares the engine a comparison: the snapshots are those of whole-history
    diffs."""
    for conv in samples():
        for window in WINDOWS:
            def run(conv=conv, window=window):
                return compaction.replay(conv, strategy, OWN_TRIGGERS.get(strategy), context_window=window)

            try:
                hinted = run()
            except ValueError:
                continue
            assert contexts(hinted) == contexts(replay_without_hints(monkeypatch, run)), f"{conv.id} {window}"


@pytest.mark.parametrize("strategy", sorted(compaction.strategies()))
def test_every_strategy_on_the_samples(strategy: str) -> None:
    compacted = 0
    for conv in samples():
        for window in WINDOWS:
            try:
                rep = compaction.replay(conv, strategy, OWN_TRIGGERS.get(strategy), context_window=window)
            except ValueError:
                continue
            assert_timeline_consistent(rep, f"{conv.id} {window}")
            compacted += len(rep.snapshots) - 1
    assert compacted, f"{strategy} never changed the context on the samples: the check saw nothing"


# ------------------------------------------------------------------------------------------------ random histories
def _message(k: int) -> Message:
    return Message(role="user", texts=(f"message {k}",))


EDITS = st.lists(st.tuples(st.sampled_from(["append", "prune", "exclude", "remove", "summarize", "swap", "same"]),
                           st.integers(0, 1_000), st.integers(1, 4)), min_size=1, max_size=60)


def _edit(history: list[Entry], kind: str, at: int, width: int, next_original: int) -> list[Entry]:
    out = list(history)
    if not out or kind == "same":
        return out
    i = at % len(out)
    stretch = out[i:i + width]
    if kind == "prune" and out[i].origin is not None:
        out[i] = out[i].replaced(Message(role="tool", texts=("[pruned]",)))
    elif kind == "exclude":
        out[i:i + width] = [e if e.excluded else e.excluded_as("test") for e in stretch]
    elif kind == "remove":
        del out[i:i + width]
    elif kind == "summarize":
        out[i:i + width] = [inserted(Message(role="user", texts=(f"summary {next_original}",)), "summary", stretch)]
    elif kind == "swap" and i + 1 < len(out):
        out[i], out[i + 1] = out[i + 1], out[i]
    return out


@settings(max_examples=300, deadline=None)
@given(EDITS, st.floats(0, 1))
def test_random_edit_sequences_match_brute_force(edits: list[tuple[str, int, int]], hint_share: float) -> None:
    """Two timelines follow the same edits: one compares whole histories, the other is told a lower bound of the
    first changed position (as a runner's first_change() does)."""
    timelines = (Timeline(), Timeline())
    history: list[Entry] = []
    fates: dict = {}
    originals = 0
    for kind, at, width in edits:
        if kind == "append":
            for _ in range(width):
                entry = original(_message(originals), originals)
                originals += 1
                history.append(entry)
                for timeline in timelines:
                    timeline.append(entry)
            continue
        before = list(history)
        history = _edit(history, kind, at, width, originals)
        first = next((k for k, (a, b) in enumerate(zip(before, history)) if a is not b), min(len(before), len(history)))
        plain, hinted = timelines
        index = plain.snapshot(history, originals)
        assert hinted.snapshot(history, originals, int(first * hint_share)) == index
        assert_change_matches(plain.changes[index], before, history, kind)
        assert hinted.changes[index] == plain.changes[index]
        apply_fates(fates, plain.changes[index])
        assert fates == fates_of(history, originals)
        for timeline in timelines:
            assert materialize(timeline.snapshots, index) == tuple(history)


def test_long_chains_get_keyframes_and_rebuild_from_any_cache() -> None:
    timeline = Timeline()
    history: list[Entry] = []
    expected = []
    for k in range(3 * KEYFRAME_DEPTH):
        entry = original(_message(k), k)
        history.append(entry)
        timeline.append(entry)
        if k:
            history[k - 1] = history[k - 1].replaced(Message(role="tool", texts=(f"pruned {k}",)))
        timeline.snapshot(history, k + 1)
        expected.append(tuple(history))
    snaps = timeline.snapshots
    assert max(s.depth for s in snaps) < KEYFRAME_DEPTH
    assert sum(s.base == -1 for s in snaps[1:]) >= 3  # the first snapshot shares nothing, then one per chain
    # a pruning that touches the newest entries shares everything before them
    assert sum(len(s.own) for s in snaps) < sum(s.size for s in snaps) / 4
    cache = {}
    for index, entries in enumerate(expected, start=1):
        assert materialize(snaps, index) == entries
        assert materialize(snaps, index, cache) == entries
        cache[index] = entries


def test_an_unchanged_snapshot_records_nothing() -> None:
    timeline = Timeline()
    history = [original(_message(k), k) for k in range(5)]
    for e in history:
        timeline.append(e)
    timeline.snapshot(history, 5)
    index = timeline.snapshot(history, 5)
    change = timeline.changes[index]
    assert (change.removed, change.added, dict(change.fates)) == ((), (), {})
    assert (change.common_sent, change.resume) == (5, 5)
    assert timeline.snapshots[index].own == () and timeline.snapshots[index].shared == 5
    assert materialize(timeline.snapshots, index) == tuple(history)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 600), st.integers(0, 600), st.lists(st.integers(0, 599), max_size=4), st.integers(0, 30))
def test_shared_stretches_match_a_scan(n_a, n_b, changed, extra):
    from compaction.timeline import first_difference
    from compaction.timeline import last_difference

    pool = [original(_message(k), k) for k in range(max(n_a, n_b) + extra)]
    a = pool[:n_a]
    b = pool[:n_b]
    for k in changed:
        if k < len(b):
            b[k] = b[k].replaced(_message(-k))
    limit = min(len(a), len(b))
    first = next((k for k in range(limit) if a[k] is not b[k]), limit)
    assert first_difference(a, b, limit) == first
    rest = limit - first
    last = next((k for k in range(rest) if a[-1 - k] is not b[-1 - k]), rest)
    assert last_difference(a, b, rest) == last


def test_extending_a_timeline_is_appending_each_entry() -> None:
    history = [original(_message(k), k) for k in range(6)]
    history.insert(3, inserted(_message(-1), "note"))
    one, many = Timeline(), Timeline()
    for e in history:
        one.append(e)
    many.extend(history[:2])
    many.extend(history[2:])
    assert (one._history, one._present) == (many._history, many._present)
    assert one.snapshot(history[1:], 6) == many.snapshot(history[1:], 6)
    assert one.changes == many.changes
