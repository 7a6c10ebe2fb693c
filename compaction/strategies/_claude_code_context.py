"""What Claude Code knew of its context before each call, followed through a replay.

Claude Code decides on its own measure (``tokenCountWithEstimation``): the usage the API reported for the last
response in the history (prompt + output tokens), plus its rough estimate of every message after that response
(:mod:`._claude_code_estimate`). With no reported response left (right after a compaction) the measure is the rough
estimate of the whole history. Before 2.1.2 the measure was the last response's usage alone (0 with none left).

A replay sends the log's own context until something compacts it, and the log reports usage for the context the real
agent sent. So the usage a call reports is corrected by how much the replay's context at that call differs from the
real agent's, both counted with the run's counter: zero until the replay or the log's agent first compacts. The real
agent's context is followed from the log's own records: a ``compact_boundary`` restarts it from its summary and what
Claude Code attached again (rebuilt as the replay rebuilds it when the transcript records no attachments, as up to
2.1.39; otherwise the logged ones follow), a ``microcompact_boundary`` clears the results it names.

The output tokens are the logged ones, except in the releases whose transcript keeps only the streaming snapshot
while Claude Code held the final figure in memory (2.1.30–2.1.58): there the content's own estimate stands in.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from ..conversation import LogEvent
from ..conversation import Message
from ..history import Entry
from ..tokens import Counter
from . import _claude_code_estimate as est
from ._claude_code_reattach import reattach
from ._claude_code_versions import Behaviour
from .base import RunContext


@dataclass(frozen=True)
class Measure:
    """Claude Code's measure before one call, and what it was made of."""

    #: the last reported response's prompt + output tokens, as Claude Code held them (0 when none is left)
    last_call: int
    #: its rough estimate of what follows that response (the whole history when none is left)
    estimated: int
    #: the tokens the replay adds for context the log does not show (``unlogged_context``)
    unlogged: int
    #: the message index of the response the measure is anchored on (None: none left)
    anchor: int | None

    @property
    def tokens(self) -> int:
        return self.last_call + self.estimated + self.unlogged


@dataclass
class _CallRecord:
    #: the run's counter over what the replay sent at this call, and over what the real agent sent
    sent: int
    real: int


class AgentView:
    """Follows a replay call by call: the originals appended, the real agent's context, and what each call sent
    (``cleared_text`` turns a result into what the log's own microcompaction left of it)."""

    def __init__(self, ctx: RunContext, counter: Counter, b: Behaviour,
                 cleared_text: Callable[[Message], Message]) -> None:
        self.ctx, self.counter, self.b = ctx, counter, b
        self._cleared_text = cleared_text
        self._seen: set[int] = set()
        self._real: list[Message] = []
        self._real_tally = counter.tally()
        self._events: list[LogEvent] = sorted(ctx.events, key=lambda e: e.message_index)
        self._next_event = 0
        self._summary_at: int | None = None
        self._calls: dict[int, _CallRecord] = {}
        self._current: int | None = None
        #: whether the transcript records attachments (then it records what a compaction attached again)
        self.logs_attachments = False
        #: the last stored response the log reports usage for (Claude Code's anchor), while it is stored
        self._anchor: Entry | None = None
        #: the rough estimate of a stored history with no anchor: (its first entry, its length, the estimate)
        self._whole: tuple[Entry, int, int] | None = None

    # ------------------------------------------------------------------------------------------ following
    def begin(self, entries: Sequence[Entry], message_index: int, sent_now: int) -> list[Entry]:
        """A new call producing message ``message_index``; ``sent_now`` is the run's counter over the stored history
        (without tool schemas) before the strategy acts. Returns the originals appended since the last call."""
        fresh = self._fresh(entries)
        for entry in fresh:
            self._apply_events(upto=entry.origin)  # type: ignore[arg-type]
            self._take(entry)
            if (entry.message.role == "assistant" and entry.origin in self.ctx.usage
                    and entry.origin in self._calls):
                self._anchor = entry
        self._apply_events(upto=message_index)
        self._current = message_index
        self._calls[message_index] = _CallRecord(sent_now, self._real_tally.value(with_tools=False))
        return fresh

    def rewritten(self, entries: Sequence[Entry]) -> None:
        """The strategy replaced the stored history by ``entries``: the anchor stays only if it is still there."""
        if self._anchor is not None and not any(e is self._anchor for e in entries):
            self._anchor = None
        self._whole = None

    def sent(self, tokens: int) -> None:
        """What this call sends after the strategy changed it (the run's counter, without tool schemas)."""
        if self._current is not None:
            self._calls[self._current].sent = tokens

    def _fresh(self, entries: Sequence[Entry]) -> list[Entry]:
        """The originals appended since the last call: the unseen tail of the stored history."""
        fresh: list[Entry] = []
        for entry in reversed(entries):
            if entry.origin is None or entry.pruned or entry.origin in self._seen:
                break
            fresh.append(entry)
        return fresh[::-1]

    def _take(self, entry: Entry) -> None:
        self._seen.add(entry.origin)  # type: ignore[arg-type]
        if entry.origin == self._summary_at and entry.message.meta.get("log_compaction_summary"):
            return  # the log's summary, already standing for the boundary in the real context
        self.logs_attachments = self.logs_attachments or "attachment" in entry.message.meta
        self._real.append(entry.message)
        self._real_tally.append(entry.message)

    def _apply_events(self, upto: int) -> None:
        """The log's own compactions that happened before message ``upto``, applied to the real context."""
        while self._next_event < len(self._events) and self._events[self._next_event].message_index <= upto:
            event = self._events[self._next_event]
            self._next_event += 1
            if event.kind == "compaction":
                self._summary_at = event.message_index
                again = [] if self.logs_attachments else reattach(self._real, self.b.version, self.counter).messages
                summary = [Message("user", (event.summary,), meta={"log_compaction_summary": True})] \
                    if event.summary else []
                self._real = [*summary, *again]
            elif event.kind == "microcompact" and event.cleared:
                cleared = set(event.cleared)
                self._real = [self._cleared_text(m) if m.tool_result is not None and m.tool_result.call_id in cleared
                              else m for m in self._real]
            else:
                continue
            self._real_tally = self.counter.tally(self._real)

    # ------------------------------------------------------------------------------------------ the measure
    def anchor(self, entries: Sequence[Entry]) -> int | None:
        """Position in ``entries`` of the last response the log reports usage for (Claude Code's anchor)."""
        if self._anchor is None:
            return None
        for position in range(len(entries) - 1, -1, -1):
            if entries[position] is self._anchor:
                return position
        return None

    def _estimate_whole(self, entries: Sequence[Entry]) -> int:
        """The rough estimate of all of ``entries``, extended from the last one when only appends happened since."""
        whole = self._whole
        if whole is not None and entries and entries[0] is whole[0] and len(entries) >= whole[1]:
            first, length, total = whole
        else:
            first, length, total = (entries[0] if entries else None), 0, 0  # type: ignore[assignment]
        total += est.estimate_all((e.message for e in entries[length:]), self.b)
        self._whole = (first, len(entries), total) if entries else None
        return total

    def last_call(self, entries: Sequence[Entry], position: int | None = None) -> int:
        """The last reported response's prompt + output tokens as Claude Code held them, corrected for what the
        replay changed (0 when none is left)."""
        position = self.anchor(entries) if position is None else position
        if position is None:
            return 0
        entry = entries[position]
        usage = self.ctx.usage[entry.origin]  # type: ignore[index]
        record = self._calls[entry.origin]  # type: ignore[index]
        output = usage.output_tokens
        if self.b.output_unlogged:
            output = max(output, est.output_estimate(entry.message))
        return max(usage.prompt_tokens + record.sent - record.real, 0) + output

    def measure(self, entries: Sequence[Entry], unlogged: int) -> Measure:
        """Claude Code's measure of ``entries`` before this call (``unlogged``: tokens added for context the log
        does not show, counted only where Claude Code estimates messages)."""
        position = self.anchor(entries)
        if not self.b.estimates_new_messages:  # before 2.1.2: the last reported response alone, 0 when none is left
            return Measure(self.last_call(entries, position) if position is not None else 0, 0, 0,
                           None if position is None else entries[position].origin)
        if position is None:
            return Measure(0, self._estimate_whole(entries), unlogged, None)
        last = self.last_call(entries, position)
        after = est.estimate_all((e.message for e in entries[position + 1:]), self.b)
        if self.b.anchors_first_record:
            after += est.estimate_after_first_block(entries[position].message, self.b)
        return Measure(last, after, unlogged, entries[position].origin)
