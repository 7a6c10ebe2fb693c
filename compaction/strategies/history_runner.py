"""A shared runner base for the frameworks whose compaction is a rewrite of the stored history, a projection of it
recomputed before every call, or both (a summary that persists plus a mask applied on top).

Subclasses implement :meth:`HistoryRunner.rewrite` (persistent: what the framework writes back to its state) and/or
:meth:`HistoryRunner.project` (per call: what the framework sends, computed from the stored history, as Anthropic
context editing and SWE-agent / OpenHands masking do). Edited copies of originals are cached per original and edit
kind, so a message that stays masked is not rebuilt (or recounted) before every call.

A framework recomputes its projection from the whole history before every call; replaying that literally costs
O(N) per call. A projection can instead keep a :class:`MaskedView` (the stored history with entries replaced in
place or left out, and its running count) and a :class:`Follower` that reads each stored entry once: a call then
only pays for what changed since the previous one, and sends exactly what the recomputation would.

Also here: the small message edits these frameworks share (a tool result's text replaced, call inputs cleared).
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from bisect import bisect_left
from bisect import insort
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..conversation import ToolResult
from ..conversation import ToolSchema
from ..errors import ConfigError
from ..history import Entry
from ..history import messages_of
from ..summarizers import SummaryCall
from ..summarizers import SummaryRequest
from ..tokens import DEFAULT_COUNTER
from ..tokens import Counter
from ..tokens import make_counter
from ..tokens import render_haystack
from .base import CallOutcome
from .base import ChangeMark
from .base import RunContext
from .base import Runner


# ------------------------------------------------------------------------------------------------ views
class View:
    """Entries sent instead of the stored history, with their running count. Entries appended to the stored
    history after the view was made join it, as they are, when the view is read."""

    def __init__(self, stored: list[Entry], entries: Iterable[Entry], counter: Counter,
                 tools: Sequence[ToolSchema]) -> None:
        self.stored = stored
        self.counter, self.tools = counter, tools
        self._entries = list(entries)
        self._tally = counter.tally(messages_of(self._entries), tools)
        self._followed = len(stored)

    def sent(self) -> list[Entry]:
        """The entries sent now, in order (the view's own list: read it, do not keep it across calls)."""
        self.follow()
        return self._entries

    def value(self) -> int:
        """The counter's count of :meth:`sent`, tool schemas included when the runner counts them."""
        self.follow()
        return self._tally.value(with_tools=True)

    def follow(self) -> None:
        """Take in the stored entries appended since the view was last brought up to date."""
        for position in range(self._followed, len(self.stored)):
            self._take(position)
        self._followed = len(self.stored)

    def _take(self, position: int) -> None:
        entry = self.stored[position]
        self._entries.append(entry)
        self._tally.append(entry.message)


class MaskedView(View):
    """The stored history with some entries replaced in place and some left out, kept in step with it.

    An appended entry, a replacement or a restoration updates the list and its count in place (the count is only
    rebuilt, when next read, if the counter cannot replace in place); leaving out or bringing back an entry the view
    already holds rebuilds both. Positions are positions in the stored history.
    """

    def __init__(self, stored: list[Entry], counter: Counter, tools: Sequence[ToolSchema]) -> None:
        super().__init__(stored, (), counter, tools)
        self._followed = 0
        self._replaced: dict[int, Entry] = {}
        self._omitted: list[int] = []  # sorted
        self._omitted_set: set[int] = set()
        self._rebuild_list = False
        self._rebuild_tally = False
        self._changes = ChangeMark()  # stored positions replaced, left out or brought back

    def take_first_change(self) -> int:
        """Since this was last asked: the lowest position of :meth:`sent` that may hold another entry (the entries
        appended since aside; its length when nothing but appends). Nothing below the lowest stored position
        changed, so the entries sent for the positions below it are the same ones, in the same places."""
        position = self._changes.take()
        if position is None:
            return len(self._entries)
        return position - bisect_left(self._omitted, position)

    def entry_at(self, position: int) -> Entry:
        """What is sent for stored entry ``position`` when it is sent (its replacement, or itself)."""
        return self._replaced.get(position, self.stored[position])

    def replace(self, position: int, entry: Entry) -> None:
        """Send ``entry`` for stored entry ``position`` (the stored entry itself restores it)."""
        if entry is self.stored[position]:
            self._replaced.pop(position, None)
        else:
            self._replaced[position] = entry
        self._changes.note(position)
        if position >= self._followed or position in self._omitted_set or self._rebuild_list:
            return
        at = position - bisect_left(self._omitted, position)
        old = self._entries[at]
        if old is entry:
            return
        self._entries[at] = entry
        if self._rebuild_tally:
            return
        previous = self._entries[at - 1].message if at else None
        following = self._entries[at + 1].message if at + 1 < len(self._entries) else None
        self._rebuild_tally = not self._tally.replace(previous, old.message, entry.message, following)

    def omit(self, position: int) -> None:
        """Leave stored entry ``position`` out of what is sent."""
        if position in self._omitted_set:
            return
        self._changes.note(position)
        self._omitted_set.add(position)
        insort(self._omitted, position)
        self._rebuild_list = self._rebuild_list or position < self._followed

    def include(self, position: int) -> None:
        """Send stored entry ``position`` again (after :meth:`omit`)."""
        if position not in self._omitted_set:
            return
        self._changes.note(position)
        self._omitted_set.remove(position)
        del self._omitted[bisect_left(self._omitted, position)]
        self._rebuild_list = self._rebuild_list or position < self._followed

    @property
    def omitted(self) -> int:
        """How many stored entries are left out."""
        return len(self._omitted)

    def follow(self) -> None:
        if self._rebuild_list:
            self._entries = [self.entry_at(i) for i in range(len(self.stored)) if i not in self._omitted_set]
            self._followed = len(self.stored)
            self._rebuild_list, self._rebuild_tally = False, True
        super().follow()
        if self._rebuild_tally:
            self._tally = self.counter.tally(messages_of(self._entries), self.tools)
            self._rebuild_tally = False

    def _take(self, position: int) -> None:
        if position in self._omitted_set:
            return
        entry = self.entry_at(position)
        self._entries.append(entry)
        if not self._rebuild_tally:
            self._tally.append(entry.message)


class Follower(ABC):
    """Incremental state over a runner's stored history: :meth:`feed` reads each stored entry once, in order, and
    everything starts again (:meth:`restart`) when a rewrite gives the runner a new stored list."""

    def __init__(self) -> None:
        self.stored: list[Entry] = []
        self._fed: int | None = None  # entries read so far (None: not started)

    def follow(self, stored: list[Entry]) -> None:
        """Bring the state up to date with ``stored`` (the runner's stored list, which only grows in place)."""
        if stored is not self.stored or self._fed is None:
            self.stored, self._fed = stored, 0
            self.restart()
        while self._fed < len(stored):
            position = self._fed
            self._fed += 1
            self.feed(position, stored[position])

    def unread(self, stored: list[Entry]) -> list[Entry] | None:
        """The entries :meth:`follow` would read next, or ``None`` when it would start again from the first."""
        return stored[self._fed:] if stored is self.stored and self._fed is not None else None

    def start_over(self) -> None:
        """Read the whole stored history again at the next :meth:`follow`."""
        self._fed = None

    @abstractmethod
    def restart(self) -> None:
        """Forget everything: the stored history is read again from its first entry."""

    @abstractmethod
    def feed(self, position: int, entry: Entry) -> None:
        """Stored entry ``position`` was appended."""


# ------------------------------------------------------------------------------------------------ runner
@dataclass(frozen=True)
class Decision:
    """What a rewrite or a projection did: ``entries`` is the new list, or ``None`` when nothing changed.

    A projection that keeps its own :class:`View` up to date passes it as ``view`` (its :meth:`View.sent` is then
    ``entries``): it is sent as it is, neither copied nor recounted. A rewrite that only replaces entries in place
    passes them as ``replaced`` (stored position -> new entry) instead of ``entries``: the stored list and its count
    are updated where they changed, and followers of the stored history keep following the same list, so only
    followers that know about those replacements may be used with them.
    """

    entries: list[Entry] | None = None
    triggered: bool = False
    note: str = ""
    target: int | None = None
    model_calls: list[dict[str, int]] = field(default_factory=list)
    view: View | None = None
    replaced: dict[int, Entry] | None = None

    @property
    def changed(self) -> bool:
        """Whether the decision changes anything."""
        return self.entries is not None or bool(self.replaced)

    @classmethod
    def sending(cls, view: View, triggered: bool, note: str) -> Decision:
        """A projection that sends ``view``."""
        return cls(view.sent(), triggered, note, view=view)


NO_CHANGE = Decision()


class HistoryRunner(Runner):
    """Stored history (rewritten by :meth:`rewrite`) and an optional per-call view (:meth:`project`).

    ``measure()`` is the framework's count of what is sent now: the last view plus messages appended since.
    ``tokens_before`` of a call is the count of the stored history before any change at that call.
    """

    #: set by subclasses that override :meth:`project`
    projects: bool = False

    def __init__(self, ctx: RunContext, counter: Counter | None = None, count_tools: bool = True) -> None:
        self.ctx = ctx
        self.counter = counter or ctx.counter
        #: the counter actually used, when it is not the run's (the replay reports it)
        self.framework_counter = self.counter if self.counter is not ctx.counter else None
        self.tools = ctx.tools if count_tools else ()
        self._stored: list[Entry] = []
        self._stored_tally = self.counter.tally(tools=self.tools)
        self._view: View | None = None
        self._edits: dict[tuple[int, str], tuple[Message, Entry]] = {}
        self.persistence = "project" if self.projects else "rewrite"
        # what first_change() compares against: the list entries() read from when it was last asked, and the stored
        # positions a rewrite changed since
        self._reported: object = self._stored
        self._stored_changes = ChangeMark()

    # ------------------------------------------------------------------------------------------ Runner protocol
    def append(self, entry: Entry) -> None:
        self._stored.append(entry)
        self._stored_tally.append(entry.message)

    def entries(self) -> Sequence[Entry]:
        return self._view.sent() if self._view is not None else self._stored

    def measure(self) -> int:
        return self._view.value() if self._view is not None else self._stored_tally.value(with_tools=True)

    def first_change(self) -> int | None:
        """Tracked where it is cheap to be sure: the stored history changed only in place (or not at all), or the
        same :class:`MaskedView` is sent as last time with no rewrite beneath it; otherwise None."""
        source = self._view if self._view is not None else self._stored
        same_source, self._reported = source is self._reported, source
        stored_change = self._stored_changes.take()
        if isinstance(source, MaskedView):
            view_change = source.take_first_change()
            return view_change if same_source and stored_change is None else None
        if not same_source or source is self._view:  # another list, or a plain View (rebuilt by each projection)
            return None
        return len(self._stored) if stored_change is None else stored_change

    def before_call(self) -> CallOutcome:
        before = self._stored_tally.value(with_tools=True)
        persisted = self.rewrite(self._stored, before)
        if persisted.entries is not None:
            self._stored = persisted.entries
            self._stored_tally = self.counter.tally(messages_of(self._stored), self.tools)
            self._stored_changes.note(0)
        elif persisted.replaced:
            self._replace_stored(persisted.replaced)
            self._stored_changes.note(min(persisted.replaced))
        view = NO_CHANGE
        self._view = None
        if self.projects:
            view = self.project(self._stored, self._stored_tally.value(with_tools=True))
            if view.view is not None:
                self._view = view.view
            elif view.entries is not None:
                self._view = View(self._stored, view.entries, self.counter, self.tools)
        return self.outcome(
            before,
            triggered=persisted.triggered or view.triggered,
            compacted=persisted.changed or view.entries is not None,
            target=persisted.target if persisted.target is not None else view.target,
            notes=(persisted.note, view.note),
            model_calls=[*persisted.model_calls, *view.model_calls],
        )

    def _replace_stored(self, replaced: Mapping[int, Entry]) -> None:
        """Replace stored entries in place, updating the stored count where they changed (rebuilt when the counter
        cannot replace in place)."""
        stored, tally, last = self._stored, self._stored_tally, len(self._stored) - 1
        in_place = True
        for p in sorted(replaced):
            old, stored[p] = stored[p], replaced[p]
            if in_place:
                previous = stored[p - 1].message if p else None
                following = stored[p + 1].message if p < last else None
                in_place = tally.replace(previous, old.message, stored[p].message, following)
        if not in_place:
            self._stored_tally = self.counter.tally(messages_of(stored), self.tools)

    # ------------------------------------------------------------------------------------------ subclass hooks
    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        """Persistent compaction of the stored history (``tokens``: its count). Default: none. ``stored`` is the
        runner's own list: read it, do not change it; the runner takes over a new list returned as ``entries``."""
        return NO_CHANGE

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        """The view sent in this call, from the stored history (the runner's own list: read it, do not change
        it). Default: the stored history itself."""
        return NO_CHANGE

    # ------------------------------------------------------------------------------------------ helpers
    def masked_view(self, stored: list[Entry]) -> MaskedView:
        """An empty :class:`MaskedView` over ``stored``, counted as this runner counts."""
        return MaskedView(stored, self.counter, self.tools)

    def count(self, entries: Iterable[Entry]) -> int:
        """This runner's counter over ``entries`` (tool schemas included when the framework counts them)."""
        return self.counter.count(messages_of(entries), self.tools)

    def edited(self, entry: Entry, kind: str, build: Callable[[Message], Message], **info: Any) -> Entry:
        """``entry`` with its message replaced by ``build(message)`` (fate ``pruned``), cached per original and
        edit ``kind`` so an unchanged original keeps the very same edited entry (and its cached counts)."""
        if entry.origin is None:
            return replace(entry, message=build(entry.message))
        key = (entry.origin, kind)
        hit = self._edits.get(key)
        if hit is not None and hit[0] is entry.message:
            return hit[1]
        result = entry.replaced(build(entry.message), **info)
        self._edits[key] = (entry.message, result)
        return result

    def summarize(self, params: Mapping[str, Any], instruction: str, messages: Sequence[Message],
                  budget_tokens: int | None = None, rendered: str | None = None,
                  sent: Sequence[Message] = ()) -> SummaryCall:
        """One summarizer call (see :func:`summarize`)."""
        return summarize(self.ctx, self.counter, params, instruction, messages, budget_tokens, rendered, sent)


def summarize(ctx: RunContext, counter: Counter, params: Mapping[str, Any], instruction: str,
              messages: Sequence[Message], budget_tokens: int | None = None, rendered: str | None = None,
              sent: Sequence[Message] = ()) -> SummaryCall:
    """One summarizer call over ``messages`` with the backend ``params`` select (``summarizer``, ``summary_tokens``);
    ``rendered`` is the request's transcript when the framework renders the messages its own way, ``sent`` the exact
    messages when it does not send instruction (system) + transcript (user)."""
    budget = int(budget_tokens if budget_tokens is not None else params.get("summary_tokens", 512))
    text = rendered if rendered is not None else transcript(messages)
    request = SummaryRequest(instruction, text, tuple(messages), budget, tuple(sent))
    return ctx.summarizer(params).summarize(request, counter)


# ------------------------------------------------------------------------------------------------ shared edits
def with_result_text(message: Message, text: str, **meta: Any) -> Message:
    """A tool message whose result is replaced by ``text`` (same call, same error flag)."""
    result = message.tool_result
    assert result is not None, "with_result_text needs a tool message"
    return replace(message, tool_result=ToolResult(result.origin, text, result.error), meta={**message.meta, **meta})


def with_text(message: Message, text: str, **meta: Any) -> Message:
    """Any message with its content replaced by ``text`` (a tool result's result, or the text parts)."""
    if message.tool_result is not None:
        return with_result_text(message, text, **meta)
    return replace(message, texts=(text,), images=(), files=(), meta={**message.meta, **meta})


def with_cleared_inputs(message: Message, call_ids: Iterable[str | None], **meta: Any) -> Message:
    """An assistant message whose tool calls in ``call_ids`` have empty arguments."""
    ids = set(call_ids)
    calls = tuple(replace(c, arguments={}) if c.id in ids else c for c in message.tool_calls)
    return replace(message, tool_calls=calls, meta={**message.meta, **meta})


def text_of(message: Message) -> str:
    """A message's content as text (a tool result's text, else the text parts)."""
    return message.tool_result.text if message.tool_result is not None else message.text


def leading_system(entries: Sequence[Entry]) -> int:
    """How many entries at the start are system messages (the agent's system prompt)."""
    n = 0
    while n < len(entries) and entries[n].message.role == "system":
        n += 1
    return n


def transcript(messages: Sequence[Message]) -> str:
    """The messages rendered one per block, call ids included (what a summarizer request shows)."""
    return "\n\n".join(render_haystack(m, include_ids=True) for m in messages)


def counter_or(ctx: RunContext, default_spec: str) -> Counter:
    """The run's counter, or the framework's own counter ``default_spec`` when the run keeps the default."""
    if ctx.counter.spec == make_counter(DEFAULT_COUNTER).spec:
        return make_counter(default_spec)
    return ctx.counter


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def count_or_all(value: Any, name: str, noun: str = "a number") -> int | None:
    """A parameter that is a non-negative count or ``all`` (returned as ``None``); errors name ``name``."""
    text = str(value).strip().lower()
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise ConfigError(f"{name} must be {noun} or 'all', got {value!r}") from None
    if n < 0:
        raise ConfigError(f"{name} must be at least 0, got {n}")
    return n
