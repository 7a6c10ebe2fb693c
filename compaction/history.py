"""What a strategy works on: the stored history as a list of :class:`Entry` objects.

An entry wraps the message as it is currently stored, and remembers which original message of the loaded
conversation it stands for. Fates (kept / pruned / collapsed / dropped / inserted) are derived from entries, so
strategies never bookkeep fates themselves: they replace, exclude, remove or insert entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from typing import Any
from typing import Literal
from typing import cast

from .conversation import Message

Fate = Literal["kept", "pruned", "collapsed", "dropped", "inserted"]
FATES: tuple[str, ...] = ("kept", "pruned", "collapsed", "dropped", "inserted")
#: what an inserted entry is, for colouring and explanations
InsertKind = Literal["summary", "digest", "note", "reinserted"]


@dataclass(frozen=True, slots=True, eq=False)
class Entry:
    """One stored message.

    ``origin`` is the index of the original message in the loaded conversation (``None`` for an inserted message).
    ``pruned`` marks an original whose content was replaced in place (placeholder, offload pointer, mask…).
    ``excluded`` is Agent Framework's sticky flag: the entry stays stored but is not sent.
    ``covers`` is what an inserted summary or digest took the place of: original indices, and earlier inserted
    entries (standing for what they represent). :attr:`represents` flattens it: the originals whose fate is
    ``collapsed`` while the entry is sent. Keeping the earlier entries instead of copying what they represent keeps
    a summary of a summary of … cheap to make.
    """

    message: Message
    origin: int | None
    pruned: bool = False
    excluded: bool = False
    exclude_reason: str | None = None
    inserted: InsertKind | None = None
    covers: tuple[int | Entry, ...] = ()
    #: free-form facts the UI shows (e.g. {"tier": "historical_turns"})
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def fate(self) -> Fate:
        """The entry's own state while stored (``collapsed``/``dropped`` only apply to missing originals)."""
        if self.inserted is not None:
            return "inserted"
        return "pruned" if self.pruned else "kept"

    @property
    def represents(self) -> tuple[int, ...]:
        """The originals an inserted entry stands for, through the entries it covers, in order, each once."""
        found: dict[int, None] = {}
        pending = [iter(self.covers)]
        while pending:
            for part in pending[-1]:
                if isinstance(part, int):
                    found[part] = None
                else:
                    pending.append(iter(part.covers))
                    break
            else:
                pending.pop()
        return tuple(found)

    def replaced(self, message: Message, **info: Any) -> Entry:
        """This original with its content replaced in place (fate ``pruned``)."""
        return _entry(message, self.origin, True, self.excluded, self.exclude_reason, self.inserted, self.covers,
                      {**self.info, **info})

    def excluded_as(self, reason: str) -> Entry:
        """This entry flagged as not sent, for ``reason`` (built directly: ``dataclasses.replace`` costs several times
        more, and a thrashing replay excludes entries by the thousand)."""
        return _entry(self.message, self.origin, self.pruned, True, reason, self.inserted, self.covers, self.info)


class _Unfrozen:
    """An :class:`Entry` while it is built: the same slots, assignable. A frozen dataclass sets each field through
    ``object.__setattr__`` (about 1 µs an entry, and a replay makes thousands); :func:`_entry` assigns them here and
    then makes the object the Entry it is (same slots, so the same layout)."""

    __slots__ = tuple(f.name for f in fields(Entry))

    def __init__(self, message: Message, origin: int | None, pruned: bool, excluded: bool,
                 exclude_reason: str | None, inserted: InsertKind | None, covers: tuple[int | Entry, ...],
                 info: dict[str, Any]) -> None:
        self.message = message
        self.origin = origin
        self.pruned = pruned
        self.excluded = excluded
        self.exclude_reason = exclude_reason
        self.inserted = inserted
        self.covers = covers
        self.info = info


_set_class = object.__setattr__


def _entry(message: Message, origin: int | None, pruned: bool, excluded: bool, exclude_reason: str | None,
           inserted: InsertKind | None, covers: tuple[int | Entry, ...], info: dict[str, Any]) -> Entry:
    """``Entry(...)`` with every field given, several times faster (the entry is as frozen as any other)."""
    built = _Unfrozen(message, origin, pruned, excluded, exclude_reason, inserted, covers, info)
    _set_class(built, "__class__", Entry)
    return cast(Entry, built)


def original(message: Message, index: int) -> Entry:
    """The entry for original message ``index``, as first appended."""
    return _entry(message, index, False, False, None, None, (), {})


def inserted(message: Message, kind: InsertKind, covers: Iterable[Entry] = (), **info: Any) -> Entry:
    """A new message standing for ``covers`` (their originals and whatever they themselves represented)."""
    parts: list[int | Entry] = []
    for e in covers:
        if e.inserted is not None:
            parts.append(e)
        elif e.origin is not None:
            parts.append(e.origin)
    return _entry(message, None, False, False, None, kind, tuple(parts), info)


def sent(entries: Sequence[Entry]) -> list[Entry]:
    """The entries a model call would receive (excluded ones left out)."""
    return [e for e in entries if not e.excluded]


def messages_of(entries: Iterable[Entry]) -> list[Message]:
    return [e.message for e in entries]


def fates_of(entries: Sequence[Entry], upto: int, skip: frozenset[int] = frozenset()) -> dict[int, Fate]:
    """Fate of each original ``0..upto-1`` not in ``skip`` given the stored entries (non-kept fates only)."""
    present: dict[int, Entry] = {}
    represented: set[int] = set()
    for e in entries:
        if e.excluded:
            continue
        if e.origin is not None:
            present[e.origin] = e
        represented.update(e.represents)
    fates: dict[int, Fate] = {}
    for i in range(upto):
        if i in skip:
            continue
        found = present.get(i)
        if found is not None:
            if found.pruned:
                fates[i] = "pruned"
        elif i in represented:
            fates[i] = "collapsed"
        else:
            fates[i] = "dropped"
    return fates
