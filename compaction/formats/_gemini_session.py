"""Replaying a Gemini CLI session file record by record, as Gemini CLI's own loader does
(``loadConversationRecord`` in ``chatRecordingService.ts``), while keeping what the model was sent before the agent
rewrote its history.

Records (one per JSONL line; the older ``.json`` file is one metadata record holding every message):

* metadata (``sessionId`` + ``projectHash``): session fields; a legacy record carries ``messages`` too;
* a message record (a string ``id``): appended, or, when its id is known, replacing the earlier copy in place
  (Gemini CLI appends a message again when it fills in its tokens or tool calls);
* ``{"$rewindTo": id}``: that message and every later one are dropped (all of them when the id is unknown, as
  Gemini CLI does): the person rewound the conversation;
* ``{"$set": {...}}``: session fields updated; with ``messages``, the whole history is replaced by that list.

A ``$set.messages`` checkpoint is read by what it does to the history:

* the same messages: a resync, nothing to read, unless tool results changed in place (masked: a ``masking`` mark);
* a prefix of them: a rollback (an aborted request): the rest is dropped, like a rewind;
* all of them and more: turns the agent added (every chat opens with an environment-context turn written this
  way): read as messages;
* otherwise the agent rewrote its history (compression, tool-output masking, truncation; Gemini CLI re-records each
  kept turn under a new id first). The messages it replaces stay where they were (the model read them); kept turns
  are recognized by their content; turns with changed tool outputs are marked as masked; the new turns (the
  ``<state_snapshot>`` summary and the model's acknowledgement) follow a mark of the rewrite and are flagged as the
  agent's own summary.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..conversation import LoadWarning
from ._fields import type_name
from ._gemini_records import Key
from ._gemini_records import record_id


@dataclass
class Slot:
    """A message record of the transcript (its latest copy) and the line that first wrote it."""

    id: str
    record: Mapping[str, Any]
    line: int | None
    #: introduced by a history rewrite (the agent's own summary, its acknowledgement)
    summary: bool = False


@dataclass(frozen=True)
class Mark:
    """Where the agent rewrote its history: ``compaction`` (summary inserted), ``masking`` (tool outputs replaced)
    or ``truncation`` (messages dropped)."""

    kind: str
    cleared: tuple[str, ...] = ()
    summary: str | None = None
    line: int | None = None


class SessionLog:
    """The transcript of one session file: message slots in the order the model saw them, and marks."""

    def __init__(self, keys: Callable[[Mapping[str, Any]], list[Key]]) -> None:
        self._keys = keys
        self.items: list[Slot | Mark] = []
        self.metadata: dict[str, Any] = {}
        self.warnings: list[LoadWarning] = []
        #: Gemini CLI's own view: message id -> latest record, in its order
        self._current: dict[str, Mapping[str, Any]] = {}
        #: message id -> the transcript slot holding its content
        self._slot_of: dict[str, Slot] = {}
        #: new message slots appended since the last record that was neither a new message nor a field update
        self._run: list[Slot] = []
        self.dropped = 0

    # ------------------------------------------------------------------------------------------------ records
    def record(self, record: Any, line: int | None) -> None:
        """Apply one record of the file."""
        if not isinstance(record, Mapping):
            self.warnings.append(LoadWarning(f"skipped: expected a JSON object, got {type_name(record)}", line=line))
            return
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"], line)
        elif (ident := record_id(record)) is not None:
            self._message(record, ident, line)
        elif isinstance(record.get("$set"), Mapping):
            self._set(record["$set"], line)
        elif isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str):
            self._metadata(record, line)
        else:
            keys = ", ".join(sorted(str(k) for k in record))[:80]
            self.warnings.append(LoadWarning(f"skipped: not a Gemini CLI record (keys: {keys or 'none'})", line=line))

    def _message(self, record: Mapping[str, Any], mid: str, line: int | None) -> None:
        if mid in self._current:
            self._current[mid] = record
            slot = self._slot_of.get(mid)
            if slot is not None and slot.id == mid:
                slot.record = record
            self._run = []
            return
        slot = Slot(mid, record, line)
        self.items.append(slot)
        self._current[mid] = record
        self._slot_of[mid] = slot
        self._run.append(slot)

    def _metadata(self, record: Mapping[str, Any], line: int | None) -> None:
        self.metadata.update((k, v) for k, v in record.items() if k != "messages")
        messages = record.get("messages")
        if messages is None:
            return
        if not isinstance(messages, list):
            self.warnings.append(LoadWarning(f"'messages' is {type_name(messages)}, expected a list; skipped",
                                             line=line, field="messages"))
            return
        for i, message in enumerate(messages):
            mid = record_id(message)
            if mid is None:
                self.warnings.append(LoadWarning(f"messages[{i}]: skipped, expected a message object with a string "
                                                 f"'id', got {type_name(message)}", line=line, field="messages"))
            else:
                self._message(message, mid, line)

    def _set(self, fields: Mapping[str, Any], line: int | None) -> None:
        self.metadata.update((k, v) for k, v in fields.items() if k != "messages")
        if "messages" not in fields:
            return
        if not isinstance(fields["messages"], list):
            self.warnings.append(LoadWarning(f"$set.messages is {type_name(fields['messages'])}, expected a list; "
                                             "skipped", line=line, field="$set.messages"))
            return
        entries = []
        for i, message in enumerate(fields["messages"]):
            if record_id(message) is None:
                self.warnings.append(LoadWarning(f"$set.messages[{i}]: skipped, expected a message object with a "
                                                 "string 'id'", line=line, field="$set.messages"))
            else:
                entries.append(message)
        self._checkpoint(entries, line)

    def _rewind(self, target: str, line: int | None) -> None:
        ids = list(self._current)
        if target in self._current:
            removed = ids[ids.index(target):]
        else:
            removed = ids
            self.warnings.append(LoadWarning(f"$rewindTo names an unknown message {target!r}: the whole history is "
                                             "dropped, as Gemini CLI does", line=line, field="$rewindTo"))
        self._drop(removed)
        self._run = []

    def _drop(self, ids: list[str]) -> None:
        """Remove messages the agent discarded (rewound or rolled back): the model's later calls never saw them."""
        gone = set()
        for mid in ids:
            self._current.pop(mid, None)
            slot = self._slot_of.pop(mid, None)
            if slot is not None:
                gone.add(id(slot))
                if self._keys(slot.record):
                    self.dropped += 1
        if gone:
            self.items = [item for item in self.items if id(item) not in gone]

    # ------------------------------------------------------------------------------------------------ checkpoints
    def _checkpoint(self, entries: list[Mapping[str, Any]], line: int | None) -> None:
        ids = [record_id(e) for e in entries]
        wanted = set(ids)
        previous = list(self._current)
        dropped = [mid for mid in previous if mid not in wanted]
        new = [mid for mid in ids if mid not in self._current]
        if not new and not dropped:
            cleared = self._changed_results(entries)
            if cleared:
                self.items.append(Mark("masking", tuple(cleared), line=line))
        elif not new and [m for m in previous if m in wanted] == ids and previous[len(ids):] == dropped:
            self._drop(dropped)  # a rollback: the history up to a point is kept as it was
        elif not dropped:
            self._grow(entries, line)
        else:
            self._rewrite(entries, wanted, line)
        self._current = {record_id(e): e for e in entries}  # type: ignore[misc]
        self._run = []

    def _grow(self, entries: list[Mapping[str, Any]], line: int | None) -> None:
        """Turns the agent added to its history without dropping any (the environment context Gemini CLI opens
        every chat with): read as the messages they are."""
        cleared = self._changed_results([e for e in entries if record_id(e) in self._current])
        if cleared:
            self.items.append(Mark("masking", tuple(cleared), line=line))
        for entry in entries:
            mid = record_id(entry) or ""
            if mid not in self._current:
                slot = Slot(mid, entry, line)
                self.items.append(slot)
                self._slot_of[mid] = slot

    def _changed_results(self, entries: list[Mapping[str, Any]]) -> list[str]:
        """Tool calls whose result a same-id copy changed (masked in place)."""
        cleared: list[str] = []
        for entry in entries:
            slot = self._slot_of.get(record_id(entry) or "")
            if slot is not None:
                cleared += _changed(self._keys(slot.record), self._keys(entry))
        return cleared

    def _rewrite(self, entries: list[Mapping[str, Any]], wanted: set[str | None], line: int | None) -> None:
        copies = _trailing(self._run, wanted)
        copy_ids = {slot.id for slot in copies}
        if copies:
            self.items = [item for item in self.items if not (isinstance(item, Slot) and item.id in copy_ids)]
        originals = [(k, self._slot_of[mid]) for mid in self._current if mid not in copy_ids and mid in self._slot_of
                     for k in self._keys(self._slot_of[mid].record)]
        matcher = _Matcher(originals)
        cleared: list[str] = []
        fresh: list[Mapping[str, Any]] = []
        slot_of: dict[str, Slot] = {}
        for entry in entries:
            mid = record_id(entry) or ""
            kept = self._slot_of.get(mid) if mid not in copy_ids else None
            found, changed = matcher.match(self._keys(entry), kept)
            cleared += changed
            if found is not None:
                slot_of[mid] = found
            elif self._keys(entry):
                fresh.append(entry)
        kind = "compaction" if fresh else "masking" if cleared else "truncation"
        if fresh or cleared or matcher.skipped():
            summary = next((k[1] for e in fresh for k in self._keys(e) if k[0] == "user" and k[1]), None)
            self.items.append(Mark(kind, tuple(dict.fromkeys(cleared)), summary, line))
        for entry in fresh:
            slot = Slot(record_id(entry) or "", entry, line, summary=True)
            self.items.append(slot)
            slot_of[slot.id] = slot
        self._slot_of = slot_of


def _trailing(run: list[Slot], wanted: set[str | None]) -> list[Slot]:
    """The longest tail of ``run`` whose messages the checkpoint lists: Gemini CLI's re-recorded copies of the
    history it is about to set."""
    tail: list[Slot] = []
    for slot in reversed(run):
        if slot.id not in wanted:
            break
        tail.append(slot)
    return tail


def _changed(before: list[Key], after: list[Key]) -> list[str]:
    """Call ids whose tool result text differs between two readings of the same messages."""
    results = {k[3][0]: k[3][1] for k in before if k[3] is not None and k[3][0]}
    return [k[3][0] for k in after if k[3] is not None and k[3][0] in results and results[k[3][0]] != k[3][1]]


class _Matcher:
    """Matches the messages of a rewritten history, in order, against the messages it replaces."""

    def __init__(self, originals: list[tuple[Key, Slot]]) -> None:
        self._originals = originals
        self._next = 0
        self._used: set[int] = set()

    def match(self, keys: list[Key], kept: Slot | None) -> tuple[Slot | None, list[str]]:
        """The original slot an entry repeats (None when it is new content) and the calls whose results it
        changed. ``kept`` is the entry's own earlier slot when it kept its id."""
        if not keys:
            return kept, []
        found: Slot | None = None
        cleared: list[str] = []
        for key in keys:
            position, changed = self._find(key)
            if position is None:
                return None, []
            found = found or self._originals[position][1]
            cleared += changed
        return kept or found, cleared

    def _find(self, key: Key) -> tuple[int | None, list[str]]:
        for position in range(self._next, len(self._originals)):
            original = self._originals[position][0]
            if original == key:
                return self._take(position), []
            if (key[3] is not None and original[3] is not None and key[3][0] and original[3][0] == key[3][0]
                    and key[:3] == original[:3]):
                return self._take(position), [key[3][0]]
        return None, []

    def _take(self, position: int) -> int:
        self._used.add(position)
        self._next = position + 1
        return position

    def skipped(self) -> bool:
        """Whether some replaced messages are not repeated in the rewritten history (they were dropped)."""
        return len(self._used) < len(self._originals)
