"""The compactions Cline and Roo Code performed, as :class:`LogEvent` s placed before the first LLM call they
changed (or, for a summary message, before that message).

Cline (the full history stays on disk; what was left out is task state):

* ``summarize_task`` (asked for automatically by ``<explicit_instructions type="summarize_task">``) and
  ``condense`` (the user's ``/smol``): the call's ``context`` is the summary; when its result reports it applied
  (the continuation prompt, or "The user has accepted the condensed conversation summary") it is a ``condense``
  event at that result, which carries the summary into the next call.
* Truncation: every ui message records the ``conversationHistoryDeletedRange`` in force; a range that changes
  between calls (not by a condense) is a ``truncation`` event before the first call sent with it, ``pre_tokens``
  the previous request's total (what Cline compared with its limit).
* ``context_history.json`` (``ContextManager``'s edits, each stamped with the request it was made for): the
  truncation notice marks a truncation (kept when the ui messages show none there), the duplicate-file-read notices
  are a ``masking`` event whose ``cleared`` lists the calls whose results were replaced.

Roo Code (tags in the history itself): each ``isSummary`` message is a ``condense`` event (the summary its text,
``prevContextTokens`` / ``newContextTokens`` from the matching ``condense_context`` ui message); each
``isTruncationMarker`` a ``truncation`` event (``sliding_window_truncation``). A summary appended as a user message
(Roo Code 3.43 on) sits where it happened; older summaries (assistant role) and truncation markers are inserted
among the kept messages, so the ui message's time places them, or, without one, the history itself (an older
summary kept the last 3 messages; a truncation hid ⌊(visible − 1)/2⌋ rounded down to even messages, which bounds
when it ran to within one call: the earliest is taken).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import ToolCall
from ..conversation import Usage
from ._cline_history import History
from ._cline_text import CONDENSE_TOOLS
from ._cline_usage import ApiRequest
from ._cline_usage import call_sources
from ._fields import as_mapping
from ._fields import as_text
from ._fields import optional_count

TRUNCATION_NOTICE = "[NOTE] Some previous conversation history with the user has been removed"
DUPLICATE_READ_NOTICE = "[[NOTE] This file read has been removed to save space in the context window."
#: how many messages Roo's older condense kept after its summary (``N_MESSAGES_TO_KEEP``)
ROO_KEPT_AFTER_SUMMARY = 3
_APPLIED = ("This session is being continued from a previous conversation",
            "The user has accepted the condensed conversation summary")


@dataclass
class _Places:
    """Where things happened in time, as loaded message indices."""

    history: History
    requests: list[ApiRequest]
    matched: dict[int, ApiRequest]  # response entry -> its request
    usage: Mapping[int, Usage]
    calls: list[int] = field(init=False)
    call_times: list[tuple[int | None, int]] = field(init=False)
    request_of: dict[int, int] = field(init=False)  # id of a matched request -> its response entry

    def __post_init__(self) -> None:
        self.calls = call_sources(self.history)
        self.call_times = [(self.history.sources[i].ts, i) for i in self.calls if self.history.sources[i].ts is not None]
        self.request_of = {id(r): i for i, r in self.matched.items()}

    def before_call_after(self, ts: int | None, ui_position: int | None = None) -> int | None:
        """Before the first response after time ``ts`` (by the history's timestamps), else before the response of
        the last request said before ui position ``ui_position``; None when neither places it."""
        if ts is not None and self.call_times and len(self.call_times) == len(self.calls):
            later = next((entry for t, entry in self.call_times if t is not None and t > ts), None)
            return self.call_index(later) if later is not None else len(self.history.messages)
        if ui_position is not None:
            before = [r for r in self.requests if r.position < ui_position and id(r) in self.request_of]
            if before:
                return self.call_index(self.request_of[id(before[-1])])
        return None

    def before_request_after(self, ts: int) -> int | None:
        """Before the response of the first request said after time ``ts`` (Cline's edit stamps)."""
        for request in self.requests:
            if request.ts is not None and request.ts > ts and id(request) in self.request_of:
                return self.call_index(self.request_of[id(request)])
        return self.before_call_after(ts) if self.call_times else None

    def previous_call(self, index: int) -> int:
        """The loaded index of the last response before ``index`` (-1 when there is none)."""
        return max((i for i in map(self.call_index, self.calls) if i < index), default=-1)

    def explained(self, index: int, events: list[LogEvent]) -> bool:
        """Whether a truncation or condense event already lies between the previous call and ``index``."""
        since = self.previous_call(index)
        return any(e.kind in ("truncation", "condense") and since < e.message_index <= index for e in events)

    def call_index(self, entry: int) -> int:
        index = self.history.assistant_index(entry)
        return index if index is not None else self.history.start_of(entry)

    def prompt_tokens(self, index: int | None) -> int | None:
        usage = self.usage.get(index) if index is not None else None
        return usage.prompt_tokens if usage is not None else None

    def next_call_prompt(self, index: int) -> int | None:
        later = next((i for i in map(self.call_index, self.calls) if i >= index), None)
        return self.prompt_tokens(later)


# ------------------------------------------------------------------------------------------------------ Cline
def cline_events(history: History, ui: Sequence[Any] | None, requests: list[ApiRequest],
                 matched: dict[int, ApiRequest], usage: Mapping[int, Usage], context_history: Any,
                 warnings: list[LoadWarning]) -> list[LogEvent]:
    places = _Places(history, requests, matched, usage)
    events = _condense_calls(history, places)
    events += _range_truncations(ui, places, events)
    events += _context_edits(context_history, places, events, warnings)
    return sorted(events, key=lambda e: e.message_index)


def _condense_calls(history: History, places: _Places) -> list[LogEvent]:
    events = []
    for index, message in enumerate(history.messages):
        result = message.tool_result
        if result is None or result.tool_name not in CONDENSE_TOOLS or not any(p in result.text for p in _APPLIED):
            continue
        call = result.origin
        asked = _call_message(history, call)
        summary = as_text(call.arguments.get("context"))
        events.append(LogEvent(index, "condense", "auto" if call.name == "summarize_task" else "manual",
                               pre_tokens=places.prompt_tokens(asked), post_tokens=places.next_call_prompt(index),
                               summary=summary))
    return events


def _call_message(history: History, call: ToolCall) -> int | None:
    for index, message in enumerate(history.messages):
        if any(c is call for c in message.tool_calls):
            return index
    return None


def _deleted_range(message: Any) -> tuple[int, int] | None:
    value = message.get("conversationHistoryDeletedRange") if isinstance(message, Mapping) else None
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                           for v in value):
        return value[0], value[1]
    return None


def _range_truncations(ui: Sequence[Any] | None, places: _Places, found: list[LogEvent]) -> list[LogEvent]:
    """Truncations seen as changes of the deleted range in force for each call: the range on the first ui message
    after the call's request (the request itself is said before Cline truncates for it)."""
    if not ui:
        return []
    events: list[LogEvent] = []
    in_force: tuple[int, int] | None = None
    previous: ApiRequest | None = None
    ordered = [r for r in places.requests if id(r) in places.request_of]
    for k, request in enumerate(ordered):
        following = ordered[k + 1].position if k + 1 < len(ordered) else len(ui)
        if request.position + 1 < following:
            probe = request.position + 1  # the first message of this call
        else:
            probe = following if following < len(ui) else request.position
        sent_with = _deleted_range(ui[probe])
        index = places.call_index(places.request_of[id(request)])
        if sent_with is not None and sent_with != in_force and not places.explained(index, found):
            events.append(LogEvent(index, "truncation", "auto",
                                   pre_tokens=previous.total_tokens() if previous is not None else None,
                                   post_tokens=places.prompt_tokens(index)))
        in_force, previous = sent_with, request
    return events


def _context_edits(raw: Any, places: _Places, found: list[LogEvent], warnings: list[LoadWarning]) -> list[LogEvent]:
    """Events from ``context_history.json``: ``[[message, [edit type, [[block, [[ts, kind, [text…], meta]…]]…]]]…]``."""
    if raw is None:
        return []
    edits = _edits(raw)
    if edits is None:
        warnings.append(LoadWarning("context_history.json: not the list of message edits Cline writes; ignored"))
        return []
    masked: dict[int, list[tuple[int, int]]] = {}
    notices: list[int] = []
    for ts, message, block, text in edits:
        if DUPLICATE_READ_NOTICE in text:
            masked.setdefault(ts, []).append((message, block))
        elif text.startswith(TRUNCATION_NOTICE):
            notices.append(ts)
    events: list[LogEvent] = []
    unplaced = 0
    for ts, blocks in masked.items():
        index = places.before_request_after(ts)
        if index is None:
            unplaced += 1
            continue
        cleared = dict.fromkeys(cid for b in blocks if (cid := places.history.result_blocks.get(b)))
        events.append(LogEvent(index, "masking", "auto", cleared=tuple(cleared)))
    for ts in notices:
        index = places.before_request_after(ts)
        if index is None:
            unplaced += 1
        elif not places.explained(index, found):
            events.append(LogEvent(index, "truncation", "auto", post_tokens=places.prompt_tokens(index)))
    if unplaced:
        warnings.append(LoadWarning(f"context_history.json: {unplaced} edits left out: no LLM call of the history is "
                                    "known to follow their timestamps (ui_messages.json records or history ts)"))
    return events


def _edits(raw: Any) -> list[tuple[int, int, int, str]] | None:
    """(timestamp, message index, block index, new text) of every text edit; None when ``raw`` is not edits."""
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], list)
                and len(item[1]) == 2 and isinstance(item[1][1], list)):
            return None
        for block in item[1][1]:
            if not (isinstance(block, list) and len(block) == 2 and isinstance(block[0], int)
                    and isinstance(block[1], list)):
                return None
            for update in block[1]:
                if (isinstance(update, list) and len(update) >= 3 and isinstance(update[0], (int, float))
                        and isinstance(update[2], list) and update[2] and isinstance(update[2][0], str)):
                    out.append((int(update[0]), item[0], block[0], update[2][0]))
    return out


# ------------------------------------------------------------------------------------------------------ Roo Code
def roo_events(history: History, ui: Sequence[Any] | None, requests: list[ApiRequest],
               matched: dict[int, ApiRequest], usage: Mapping[int, Usage],
               warnings: list[LoadWarning]) -> list[LogEvent]:
    places = _Places(history, requests, matched, usage)
    condenses = _ui_records(ui, "condense_context", "contextCondense", "condenseId")
    truncations = _ui_records(ui, "sliding_window_truncation", "contextTruncation", "truncationId")
    events = []
    markers = [s for s in history.sources if s.raw.get("isTruncationMarker") is True and s.count]
    for entry in history.sources:
        if entry.raw.get("isSummary") is True and entry.count:
            record = condenses.take(as_text(entry.raw.get("condenseId")))
            events.append(_summary_event(entry.index, record, places))
        elif entry.raw.get("isTruncationMarker") is True and entry.count:
            record = truncations.take(as_text(entry.raw.get("truncationId")))
            events.append(_marker_event(entry.index, record, places, markers, warnings))
    for record, kind in [*((r, "condense") for r in condenses.left()), *((r, "truncation") for r in truncations.left())]:
        index = places.before_call_after(record.ts, record.position)
        if index is not None:
            events.append(LogEvent(index, kind, "auto" if kind == "truncation" else None,
                                   pre_tokens=record.prev_tokens, post_tokens=record.new_tokens,
                                   summary=record.summary))
    if any(e.raw.get("isSummary") is True for e in history.sources) and not any(
            "condenseParent" in e.raw or "condenseId" in e.raw for e in history.sources):
        warnings.append(LoadWarning("Roo Code before 3.36 deleted the messages it condensed: before each summary the "
                                    "log keeps only the first message", field="isSummary"))
    return sorted(events, key=lambda e: e.message_index)


@dataclass
class _UiRecord:
    position: int
    ts: int | None
    key: str | None
    prev_tokens: int | None
    new_tokens: int | None
    summary: str | None


class _UiRecords:
    """The ui messages of one kind, taken by id (else in order) as history entries claim them."""

    def __init__(self, records: list[_UiRecord]) -> None:
        self._records = records
        self._taken: set[int] = set()

    def take(self, key: str | None) -> _UiRecord | None:
        """The record with id ``key``, else the first free record without an id."""
        free = [r for r in self._records if id(r) not in self._taken]
        chosen = next((r for r in free if key and r.key == key), None) or next((r for r in free if r.key is None), None)
        if chosen is not None:
            self._taken.add(id(chosen))
        return chosen

    def left(self) -> list[_UiRecord]:
        return [r for r in self._records if id(r) not in self._taken]


def _ui_records(ui: Sequence[Any] | None, say: str, field: str, key: str) -> _UiRecords:
    records = []
    for position, message in enumerate(ui or ()):
        if not isinstance(message, Mapping) or message.get("say") != say or message.get("partial") is True:
            continue
        data = as_mapping(message.get(field)) or _text_object(message.get("text"))
        ts = message.get("ts")
        records.append(_UiRecord(position, int(ts) if isinstance(ts, (int, float)) and not isinstance(ts, bool)
                                 else None, as_text(data.get(key)), optional_count(data.get("prevContextTokens")),
                                 optional_count(data.get("newContextTokens")), as_text(data.get("summary"))))
    return _UiRecords(records)


def _text_object(text: Any) -> Mapping[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, Mapping) else {}


def _summary_event(entry: int, record: _UiRecord | None, places: _Places) -> LogEvent:
    history = places.history
    source = history.sources[entry]
    text = "\n".join(m.text for m in history.messages[source.start:source.start + source.count])
    index: int | None
    if source.role == "user":
        index = source.start
    else:
        index = places.before_call_after(record.ts, record.position) if record is not None else None
        if index is None:
            index = history.start_of(min(entry + 1 + ROO_KEPT_AFTER_SUMMARY, len(history.sources)))
    return LogEvent(index, "condense", pre_tokens=record.prev_tokens if record else None,
                    post_tokens=record.new_tokens if record else places.next_call_prompt(index), summary=text)


def _marker_event(entry: int, record: _UiRecord | None, places: _Places, markers: list[Any], warnings: list[LoadWarning]
                  ) -> LogEvent:
    index = places.before_call_after(record.ts, record.position) if record is not None else None
    if index is None:
        index = _inferred_truncation(entry, places, markers)
        warnings.append(LoadWarning(f"message {entry}: no sliding_window_truncation ui message for this truncation "
                                    "marker; when it ran is inferred from how many messages it hid",
                                    field="isTruncationMarker"))
    return LogEvent(index, "truncation", "auto", pre_tokens=record.prev_tokens if record else None,
                    post_tokens=record.new_tokens if record else places.next_call_prompt(index))


def _inferred_truncation(entry: int, places: _Places, markers: list[Any]) -> int:
    """Before the first call that can have followed this truncation: it hid R messages of the V visible then (the
    first kept), R = ⌊(V − 1)/2⌋ rounded down to even, so V is 2R+1 … 2R+4 and the request was the V-th visible."""
    history = places.history
    marker = history.sources[entry]
    truncation_id = as_text(marker.raw.get("truncationId"))
    earlier = {as_text(m.raw.get("truncationId")) for m in markers if m.index < entry} - {None}
    hidden = sum(1 for s in history.sources if truncation_id and as_text(s.raw.get("truncationParent")) == truncation_id)
    visible = [s for s in history.sources if s.role and s.raw.get("isTruncationMarker") is not True
               and as_text(s.raw.get("truncationParent")) not in earlier]
    calls = set(places.calls)
    for v in range(2 * hidden + 1, 2 * hidden + 5):
        if v > len(visible):
            break
        last = visible[v - 1]
        following = next((s for s in history.sources[last.index + 1:] if s.count), None)
        if last.role == "user" and following is not None and following.index in calls:
            return places.call_index(following.index)
    return marker.start
