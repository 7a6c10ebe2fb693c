"""Entries stay frozen dataclasses that compare by identity, however they are built (the hot paths build them without
the dataclass's ``__init__``)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from compaction.conversation import Message
from compaction.history import Entry
from compaction.history import inserted
from compaction.history import original

M = Message("user", ("hello",))
N = Message("assistant", ("digest",))


def built_every_way() -> list[tuple[Entry, Entry]]:
    """(entry from a fast path, the same fields through the dataclass constructor)."""
    first = original(M, 3)
    digest = inserted(N, "digest", covers=[first], strategy="s")
    return [
        (first, Entry(M, 3)),
        (first.excluded_as("why"), Entry(M, 3, excluded=True, exclude_reason="why")),
        (first.replaced(N, note="x"), Entry(N, 3, pruned=True, info={"note": "x"})),
        (digest, Entry(N, None, inserted="digest", covers=(3,), info={"strategy": "s"})),
    ]


@pytest.mark.parametrize("fast, slow", built_every_way())
def test_a_fast_built_entry_is_the_entry_the_constructor_makes(fast: Entry, slow: Entry) -> None:
    assert type(fast) is Entry
    assert [getattr(fast, f.name) for f in dataclasses.fields(Entry)] == \
        [getattr(slow, f.name) for f in dataclasses.fields(Entry)]
    assert repr(fast) == repr(slow)
    assert fast != slow and fast == fast and {fast, slow} == {fast} | {slow}  # compared by identity


@pytest.mark.parametrize("fast, _", built_every_way())
def test_a_fast_built_entry_is_frozen(fast: Entry, _: Entry) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.origin = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.excluded = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del fast.message  # type: ignore[misc]
    with pytest.raises((AttributeError, TypeError)):  # (TypeError: a frozen slots dataclass's own, in 3.11)
        fast.extra = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("fast, _", built_every_way())
def test_a_fast_built_entry_copies_pickles_and_replaces(fast: Entry, _: Entry) -> None:
    for twin in (copy.copy(fast), copy.deepcopy(fast), pickle.loads(pickle.dumps(fast)),
                 dataclasses.replace(fast)):
        assert type(twin) is Entry and twin is not fast and twin != fast
        assert repr(twin) == repr(fast)
    assert dataclasses.replace(fast, origin=7).origin == 7
