"""Microsoft Agent Framework (.NET, ``Microsoft.Agents.AI.Compaction``), re-created from the behaviour spec.

Messages are grouped into a ``CompactionMessageIndex`` (System, User, AssistantText, ToolCall, Summary groups, with
user turns). Strategies never delete: they set a sticky *excluded* flag on whole groups and may insert Summary
groups; what is sent is the included part. Every strategy has a trigger and a target (by default the inverse of the
trigger) and is skipped while at most one non-system group is included.
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeVar

from ..conversation import Message
from ..history import Entry
from ..history import inserted
from ..policy import Trigger
from ..policy import inverse
from ..policy import parse_trigger
from ..policy import tokens_below
from ..policy import tokens_exceed
from ..tokens import Counter
from ..tokens import Tally
from ._nesting import NestedResult
from ._nesting import NestedStrategy
from ._nesting import check_child_name
from ._nesting import check_children
from ._nesting import describe
from ._nesting import inserted_entry
from ._nesting import make_nested
from ._nesting import native_child_values
from ._nesting import native_name
from .base import SUMMARIZER_PARAMS
from .base import CallOutcome
from .base import ChangeMark
from .base import Param
from .base import Policy
from .base import RunContext
from .base import Runner
from .base import StrategyInfo
from .base import register
from .base import registrar

if TYPE_CHECKING:
    from ..summarizers import Summarizer

DOCS = "https://learn.microsoft.com/dotnet/api/microsoft.agents.ai.compaction"
SUMMARY_FLAG = "_is_summary"
GROUP_KINDS = ("System", "User", "AssistantText", "ToolCall", "Summary")


def _reasoning_only(message: Message) -> bool:
    """.NET: every content is reasoning; an empty content list counts as reasoning-only."""
    return (
        message.role == "assistant"
        and not message.texts
        and not message.tool_calls
        and message.tool_result is None
        and not message.images
        and not message.files
    )


def _from(items: list[Any], start: int) -> Iterator[Any]:
    """``items[start:]`` (as long as it was when asked), one by one, without copying or stepping over the first
    ``start``."""
    return map(items.__getitem__, range(start, len(items)))


#: entries flagged excluded, by reason and by the identity of the entry flagged (which the value keeps alive)
ExcludedMemo = dict[str, dict[int, tuple[Entry, Entry]]]
#: flagged entries an :data:`ExcludedMemo` holds at most, and digests (or digest entries) a conversation's shared
#: memo holds at most: each starts over when full (sharing saves work; a long session must not grow without bound)
EXCLUDED_KEPT = 1 << 16


def _room(memo: dict[Any, Any]) -> dict[Any, Any]:
    """``memo``, emptied first when it holds :data:`EXCLUDED_KEPT` items."""
    if len(memo) >= EXCLUDED_KEPT:
        memo.clear()
    return memo


def excluded_entries(entries: Sequence[Entry], reason: str, memo: ExcludedMemo | None = None) -> list[Entry]:
    """``entries`` flagged excluded for ``reason`` (those flagged already as they are). With ``memo``, an entry
    flagged for the same reason before is that same object: the replays of one conversation under other thresholds
    exclude the same originals again and again (an entry is immutable, so sharing it is safe)."""
    if memo is None:
        return [e if e.excluded else e.excluded_as(reason) for e in entries]
    flagged = memo.get(reason)
    if flagged is None:
        flagged = memo[reason] = {}
    _room(flagged)
    out: list[Entry] = []
    for e in entries:
        if e.excluded:
            out.append(e)
            continue
        hit = flagged.get(id(e))
        if hit is None or hit[0] is not e:
            hit = flagged[id(e)] = (e, e.excluded_as(reason))
        out.append(hit[1])
    return out


@dataclass(eq=False, slots=True)
class Group:
    """A ``CompactionMessageGroup``."""

    kind: str
    entries: list[Entry]
    turn: int | None
    tokens: int = 0
    excluded: bool = False
    reason: str | None = None
    #: the entries as stored while excluded (built once per exclusion, reused by every snapshot)
    excluded_entries: list[Entry] | None = field(default=None, repr=False)
    #: a ToolCall group still taking tool / reasoning-only messages (only ever true for the last group)
    open: bool = field(default=False, repr=False)
    #: the ``AppendFromMessages`` batch that formed it (groups never grow across batches)
    batch: int = field(default=0, repr=False)
    #: lower bounds of where the group is in its index's ``groups`` and where its first stored entry is in the
    #: index's stored entries (a position only grows: groups are inserted anywhere but removed only at the end)
    at: int = field(default=0, repr=False)
    stored_at: int = field(default=0, repr=False)
    #: what its index measured: how many of its entries are sent while it is included, and the running count of
    #: their messages when it grows (see :meth:`MessageIndex._grown`); kept by the index, not read elsewhere
    live: int = field(default=0, repr=False)
    tally: Tally | None = field(default=None, repr=False)

    @property
    def live_entries(self) -> list[Entry]:
        """The entries that are sent while the group is included (a nested foreign child may exclude single
        messages of a group; the host's own strategies only ever exclude whole groups)."""
        return [e for e in self.entries if not e.excluded]

    @property
    def messages(self) -> list[Message]:
        return [e.message for e in self.live_entries]

    @property
    def stored(self) -> list[Entry]:
        """The group's entries as stored now: flagged excluded (with the group's reason) while it is excluded."""
        if not self.excluded:
            return self.entries
        if self.excluded_entries is None or len(self.excluded_entries) != len(self.entries):
            self.excluded_entries = excluded_entries(self.entries, self.reason or "excluded")
        return self.excluded_entries


class MessageIndex:
    """``CompactionMessageIndex`` with running totals of its included part (the metrics triggers read).

    Besides its groups, the index keeps what strategies look for without scanning the whole history: the stored
    entries as one list (kept in step with every change), every ToolCall group and every turn's User group in order
    (both only ever appended), and cursors before which nothing a strategy could still act on is included: the
    first included non-system group, the first included ToolCall group, the first turn with an included group.
    """

    def __init__(self, counter: Counter, excluded: ExcludedMemo | None = None) -> None:
        self.counter = counter
        #: entries already flagged excluded, shared by the indexes of one conversation's replays (see
        #: :func:`excluded_entries`)
        self._excluded = excluded
        self._count_one = counter.count_one
        #: a tally grown one message at a time reads what ``count`` of the whole list would (see
        #: :attr:`~compaction.tokens.Counter.tally_grows_as_count`): a growing group is not recounted from scratch
        self._grows = counter.tally_grows_as_count
        self.groups: list[Group] = []
        self._turn = 0
        self.included_tokens = 0
        self.included_messages = 0
        self.included_groups = 0
        self.included_non_system_groups = 0
        self._tool_groups = 0
        self._turn_counts: dict[int, int] = {}
        self._included_turns = 0
        self._batch = 0
        self._stored: list[Entry] = []
        self._changes = ChangeMark()  # stored positions changed since the last take_changes()
        self._tool_calls: list[Group] = []
        self._users: list[Group] = []  # the User group of turn t is _users[t - 1]
        self._front = 0  # every group before this position is excluded or System
        self._first_tool = 0  # every ToolCall group before this one (in _tool_calls) is excluded
        self._first_turn = 1  # no group of a user turn before this one is included

    # ---------------------------------------------------------------------------------------------- metrics
    @property
    def included_turns(self) -> int:
        return self._included_turns

    @property
    def has_tool_calls(self) -> bool:
        return self._tool_groups > 0

    def _account(self, group: Group, sign: int) -> None:
        self.included_tokens += sign * group.tokens
        self.included_messages += sign * group.live
        self.included_groups += sign
        if group.kind != "System":
            self.included_non_system_groups += sign
        if group.kind == "ToolCall":
            self._tool_groups += sign
        turn = group.turn
        if turn is not None and turn > 0:
            count = self._turn_counts.get(turn, 0) + sign
            self._turn_counts[turn] = count
            if count == (1 if sign > 0 else 0):
                self._included_turns += sign
            if sign > 0 and turn < self._first_turn:
                self._first_turn = turn

    def _measure(self, group: Group) -> None:
        """Count ``group``'s sent messages as one list (and how many there are) after its entries changed."""
        group.tally = None
        entries = group.entries
        if len(entries) == 1 and not entries[0].excluded:  # mostly: one message, whose count its counter keeps
            group.live = 1
            group.tokens = self._count_one(entries[0].message)
            return
        live = group.live_entries
        group.live = len(live)
        group.tokens = self._count_one(live[0].message) if len(live) == 1 else self.counter.count(
            [e.message for e in live])

    def _grown(self, group: Group, entry: Entry) -> None:
        """Count ``group`` after ``entry`` joined its end: its running count takes one more message where the
        counter's tally reads what a count of the whole list would, else the group is counted again."""
        if entry.excluded:  # nothing more is sent
            return
        if not self._grows:
            self._measure(group)
            return
        tally = group.tally
        if tally is None:
            tally = group.tally = self.counter.tally([e.message for e in group.entries[:-1] if not e.excluded])
        tally.append(entry.message)
        group.live += 1
        group.tokens = tally.value()

    # ---------------------------------------------------------------------------------------------- positions
    def _position(self, group: Group) -> int:
        """Where ``group`` is in ``groups`` (searched from its lower bound on)."""
        group.at = self.groups.index(group, group.at)
        return group.at

    def _stored_position(self, group: Group) -> int:
        """Where ``group``'s first stored entry is in the stored entries (searched from its lower bound on)."""
        group.stored_at = self._stored.index(group.stored[0], group.stored_at)
        return group.stored_at

    def _changed(self, position: int) -> None:
        """Stored entries from ``position`` on are about to change (anything but an append)."""
        self._changes.note(position)

    def take_changes(self) -> int:
        """The lowest stored position changed (other than by appends) since this was last asked; the length of the
        stored entries when none was."""
        return self._changes.take(len(self._stored))

    # ---------------------------------------------------------------------------------------------- building
    def _add_group(self, group: Group) -> Group:
        """Append ``group`` after every other group."""
        self._measure(group)
        group.batch = self._batch
        group.at, group.stored_at = len(self.groups), len(self._stored)
        self._stored.extend(group.stored)
        self._place_last(group)
        return group

    def _place_last(self, group: Group) -> None:
        """Put a measured group after every other group, in the lists of its kind and the totals (its stored entries
        are the caller's to place)."""
        self.groups.append(group)
        if group.kind == "ToolCall":
            self._tool_calls.append(group)
        elif group.kind == "User":
            self._users.append(group)
        if not group.excluded:
            self._account(group, +1)

    def _insert_group(self, group: Group, position: int, stored_at: int | None = None) -> None:
        """Put a Summary group at ``position`` of ``groups`` (its entries at ``stored_at`` of the stored entries, when
        the caller knows where that is): ToolCall and User groups only ever come at the end, and an inserted group has
        no turn or that of the group right before it (so a turn starts at its User group)."""
        self._measure(group)
        group.batch = self._batch
        if stored_at is None:
            stored_at = self._stored_position(self.groups[position]) if position < len(self.groups) else \
                len(self._stored)
        group.at, group.stored_at = position, stored_at
        self.groups.insert(position, group)
        self._changed(stored_at)
        self._stored[stored_at:stored_at] = group.stored
        self._front = min(self._front, position)
        if not group.excluded:
            self._account(group, +1)

    def _pop_last(self) -> Group:
        """Take the last group off (its messages are regrouped right away)."""
        group = self.groups.pop()
        self._changed(len(self._stored) - len(group.stored))
        del self._stored[len(self._stored) - len(group.stored):]
        self._front = min(self._front, len(self.groups))
        if not group.excluded:
            self._account(group, -1)
        return group

    def _extend(self, group: Group, entry: Entry) -> None:
        """Add ``entry`` to the last group."""
        if not group.excluded:  # (always, in a replay) the stored entries only grow by it
            tokens, live = group.tokens, group.live
            group.entries.append(entry)
            self._grown(group, entry)
            self.included_tokens += group.tokens - tokens
            self.included_messages += group.live - live
            self._stored.append(entry)
            return
        stored = len(group.stored)
        group.entries.append(entry)
        self._grown(group, entry)
        self._changed(len(self._stored) - stored)
        self._stored[len(self._stored) - stored:] = group.stored

    def end_batch(self) -> None:
        """Everything appended so far has been indexed by one ``Update`` (a model call is about to be made).

        .NET groups each batch of new messages on its own: a ToolCall group only takes the tool and reasoning-only
        messages that follow it in the same batch, and reasoning-only assistants join a following tool-call assistant
        only when both arrive together. In a replay each assistant message is its own call, so they never do.
        """
        self._batch += 1

    def append(self, entry: Entry) -> None:
        """Group one more message, as ``AppendFromMessages`` does within the current batch."""
        m = entry.message
        if m.role == "tool":  # (the commonest) joins the tool-call group of its batch
            last = self.groups[-1] if self.groups else None
            if last is not None and last.open and last.batch == self._batch:
                self._extend(last, entry)
            else:
                self._add_group(Group("AssistantText", [entry], self._turn))
            return
        last = self.groups[-1] if self.groups else None
        if m.role == "system":
            self._add_group(Group("System", [entry], None))
        elif m.role == "user":
            self._turn += 1
            self._add_group(Group("User", [entry], self._turn))
        elif m.role == "assistant" and m.tool_calls:
            pending: list[Entry] = []
            # reasoning-only assistants right before a tool-call assistant belong to its group
            while self.groups and self._joins_tool_call(self.groups[-1]):
                pending = self._pop_last().entries + pending
            self._add_group(Group("ToolCall", [*pending, entry], self._turn, open=True))
        elif m.role == "assistant" and m.meta.get(SUMMARY_FLAG) is True:  # .NET: bool true or JSON true only
            self._add_group(Group("Summary", [entry], self._turn))
        elif _reasoning_only(m) and last is not None and last.open and last.batch == self._batch:
            self._extend(last, entry)
        else:
            self._add_group(Group("AssistantText", [entry], self._turn))

    def _joins_tool_call(self, group: Group) -> bool:
        """A group of reasoning-only assistants formed in this batch, which a tool-call assistant absorbs."""
        return (
            group.kind == "AssistantText"
            and not group.excluded
            and group.batch == self._batch
            and all(_reasoning_only(e.message) for e in group.entries)
        )

    # ---------------------------------------------------------------------------------------------- marks
    def mark(self) -> tuple[int, int, int, int]:
        """Where the index is now, for :meth:`resume_from`: groups, stored entries, user turns and batch."""
        return len(self.groups), len(self._stored), self._turn, self._batch

    def resume_from(self, source: MessageIndex, mark: tuple[int, int, int, int]) -> None:
        """Become what ``source`` was at ``mark``, given that since then ``source`` only appended messages in later
        batches (so the groups it had then are still its first groups, as they were). The groups are copied (this
        index may exclude them), the entries shared (they are immutable); this index must be new."""
        assert not self.groups, "an index resumes only when it is new"
        count, stored, self._turn, self._batch = mark
        # (what _place_last does group by group, list by list)
        groups = self.groups = [
            Group(old.kind, list(old.entries), old.turn, old.tokens, old.excluded, old.reason, old.excluded_entries,
                  old.open, old.batch, old.at, old.stored_at, old.live) for old in islice(source.groups, count)]
        self._tool_calls = [g for g in groups if g.kind == "ToolCall"]
        self._users = [g for g in groups if g.kind == "User"]
        account = self._account
        for group in groups:
            if not group.excluded:
                account(group, +1)
        self._stored = source._stored[:stored]

    # ---------------------------------------------------------------------------------------------- changes
    def _restack(self, group: Group, start: int) -> None:
        """Put ``group``'s stored entries back at ``start`` of the stored entries, where its as many previous ones
        were (found before the change)."""
        stored = group.stored
        self._changed(start)
        self._stored[start:start + len(stored)] = stored

    def exclude(self, group: Group, reason: str) -> None:
        if group.excluded:
            return
        start = self._stored_position(group)
        self._flag(group, reason)
        self._restack(group, start)

    def _flag(self, group: Group, reason: str) -> None:
        """Mark an included group excluded (its stored entries are the caller's to put back)."""
        self._account(group, -1)
        group.excluded = True
        group.reason = reason
        group.excluded_entries = excluded_entries(group.entries, reason, self._excluded)

    def collapse(self, group: Group, reason: str, new: Group) -> None:
        """``exclude(group, reason)``, then ``insert_after(group, new)``, finding the group once."""
        position = self._position(group)
        start = self._stored_position(group)
        if not group.excluded:
            self._flag(group, reason)
            self._restack(group, start)
        self._insert_group(new, position + 1, start + len(group.stored))

    def replace_entry(self, group: Group, old: Entry, new: Entry) -> None:
        """Put ``new`` in place of ``old`` in ``group`` (content replaced in place), re-measuring the group."""
        self._regroup(group, [new if e is old else e for e in group.entries])

    def exclude_entries(self, group: Group, entries: Sequence[Entry], reason: str) -> None:
        """Exclude single messages of an included group (the rest of the group stays included)."""
        leaving = set(map(id, entries))
        self._regroup(group, [e.excluded_as(reason) if id(e) in leaving and not e.excluded else e
                              for e in group.entries])

    def _regroup(self, group: Group, entries: list[Entry]) -> None:
        """Give ``group`` new entries, one for one."""
        start = self._stored_position(group)
        if not group.excluded:
            self._account(group, -1)
        group.entries = entries
        self._measure(group)
        if not group.excluded:
            self._account(group, +1)
        self._restack(group, start)

    def insert_after(self, group: Group, new: Group) -> None:
        self._insert_group(new, self._position(group) + 1)

    def insert_before(self, group: Group, new: Group) -> None:
        self._insert_group(new, self._position(group))

    def restore(self, group: Group) -> None:
        """Undo an exclusion (what a failed summarization does to the groups it had excluded)."""
        if not group.excluded:
            return
        start = self._stored_position(group)
        group.excluded = False
        group.reason = None
        group.excluded_entries = None
        self._account(group, +1)
        self._restack(group, start)
        self._front = min(self._front, self._position(group))
        if group.kind == "ToolCall":
            self._first_tool = min(self._first_tool, self._tool_calls.index(group))

    # ---------------------------------------------------------------------------------------------- views
    def included(self) -> list[Group]:
        return [g for g in self.groups if not g.excluded]

    def entries(self) -> list[Entry]:
        """The stored entries, in order: the index's own list, kept in step with every change (read it, do not
        change it or keep it across changes)."""
        return self._stored

    def oldest_included(self) -> Iterator[Group]:
        """The included non-system groups, oldest first. The caller may exclude them as they come, but must not
        insert groups before it is done."""
        groups = self.groups
        front = self._front
        while front < len(groups) and (groups[front].excluded or groups[front].kind == "System"):
            front += 1
        self._front = front
        return (g for g in _from(groups, front) if not g.excluded and g.kind != "System")

    def newest_included(self, count: int) -> list[Group]:
        """The newest ``count`` included non-system groups (fewer when fewer are included), newest first."""
        wanted = min(count, self.included_non_system_groups)
        found: list[Group] = []
        groups = self.groups
        position = len(groups)
        while len(found) < wanted:
            position -= 1
            g = groups[position]
            if not g.excluded and g.kind != "System":
                found.append(g)
        return found

    def included_tool_calls(self) -> Iterator[Group]:
        """The included ToolCall groups, oldest first (they may be excluded, and groups inserted, as they come)."""
        tools = self._tool_calls
        first = self._first_tool
        while first < len(tools) and tools[first].excluded:
            first += 1
        self._first_tool = first
        return (g for g in _from(tools, first) if not g.excluded)

    def included_turns_oldest_first(self) -> Iterator[list[Group]]:
        """For each user turn with an included group, oldest first, its included non-system groups in order (turn 0,
        before the first user message, is left out). The caller may exclude them, but must not insert groups."""
        turn = self._first_turn
        while turn <= self._turn and not self._turn_counts.get(turn):
            turn += 1
        self._first_turn = turn
        for t in range(turn, self._turn + 1):
            if self._turn_counts.get(t):
                yield self._groups_of_turn(t)

    def _groups_of_turn(self, turn: int) -> list[Group]:
        """The included non-system groups of user turn ``turn``: from its User group on, up to the next turn."""
        out: list[Group] = []
        for g in _from(self.groups, self._position(self._users[turn - 1])):
            if g.turn is not None and g.turn > turn:
                break
            if g.turn == turn and not g.excluded and g.kind != "System":
                out.append(g)
        return out


# ------------------------------------------------------------------------------------------------- formatters
def default_tool_call_formatter(group: Group) -> str:
    """``DefaultToolCallFormatter``: ``[Tool Calls]``, then per tool name (first-seen order) ``name:`` and one
    ``  - result`` line per non-empty result; results matched by call id, else positionally."""
    calls: list[tuple[str | None, str]] = []
    by_id: dict[str, str] = {}
    positional: list[str] = []
    for m in group.messages:
        for c in m.tool_calls:
            calls.append((c.id, c.name))
        if m.tool_result is not None and m.tool_result.call_id is not None:
            by_id[m.tool_result.call_id] = m.tool_result.text
        elif m.role == "tool":
            positional.append(m.tool_result.text if m.tool_result is not None else m.text)
    order: dict[str, list[str]] = {}
    next_positional = iter(positional)
    for call_id, name in calls:
        if call_id is not None and call_id in by_id:
            result = by_id[call_id]
        else:
            result = next(next_positional, "")
        order.setdefault(name, []).append(result)
    lines = ["[Tool Calls]"]
    for name, results in order.items():
        lines.append(f"{name}:")
        lines.extend(f"  - {r}" for r in results if r)
    return "\n".join(lines)


def first_line_formatter(group: Group, limit: int = 200) -> str:
    """A custom formatter: like the default, but each result cut to its first line (at most ``limit`` chars)."""

    def cut(text: str) -> str:
        line = text.strip().splitlines()[0] if text.strip() else ""
        return line if len(line) <= limit else line[: limit - 1] + "…"

    full = default_tool_call_formatter(group).split("\n")
    return "\n".join(cut(x[4:]).join(("  - ", "")) if x.startswith("  - ") else x for x in full)


def names_only_formatter(group: Group) -> str:
    """A custom formatter: just which tools were called, with their arguments (results dropped)."""
    calls = [f"{c.name}({c.arguments_json()})" for m in group.messages for c in m.tool_calls]
    return "[Tool Calls] " + "; ".join(calls)


FORMATTERS: dict[str, Callable[[Group], str]] = {
    "default": default_tool_call_formatter,
    "first_line": first_line_formatter,
    "names_only": names_only_formatter,
}


# ------------------------------------------------------------------------------------------------- strategies
class DotnetStrategy(ABC):
    """``CompactionStrategy(trigger, target)``: the shared skip rule around ``compact_core``."""

    def __init__(self, trigger: Trigger, target: Callable[[MessageIndex], bool] | None = None) -> None:
        self.trigger = trigger
        self.target = target or inverse(trigger)
        #: summarizer calls made since the last ``drain_model_calls`` ({"input_tokens", "output_tokens"})
        self.model_calls: list[dict[str, int]] = []

    def drain_model_calls(self) -> list[dict[str, int]]:
        """The model calls made since the last drain (a runner reports them per LLM call)."""
        calls, self.model_calls = self.model_calls, []
        return calls

    def compact(self, index: MessageIndex) -> tuple[bool, bool, str]:
        """(triggered, changed, note)."""
        if not self.trigger(index):
            return False, False, ""
        if index.included_non_system_groups <= 1:
            return True, False, "skipped: at most one non-system group is included"
        return (True, *self.compact_core(index))

    @abstractmethod
    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        """Compact an index whose trigger fired: (changed, note)."""

    def quiet_through(self) -> int | None:
        """The highest included-token count at which :meth:`compact` surely does nothing: the threshold of a
        ``TokensExceed`` trigger, for a strategy whose ``compact`` is this class's (the trigger is asked first and,
        when it does not fire, nothing else is done). None otherwise."""
        if type(self).compact is not DotnetStrategy.compact or self.trigger.kind != "tokens_exceed":
            return None
        return self.trigger.value

    def exclude_oldest(self, index: MessageIndex, batches: Iterable[Sequence[Group]], limit: int, reason: str) -> int:
        """Exclude the groups of ``batches`` (oldest first) a batch at a time, at most ``limit`` batches, until the
        target holds: how many batches were excluded."""
        removed = 0
        for groups in islice(batches, limit):
            for group in groups:
                index.exclude(group, reason)
            removed += 1
            if self.target(index):
                break
        return removed


class ToolResultCompaction(DotnetStrategy):
    """``ToolResultCompactionStrategy(trigger, minimumPreservedGroups=16, target)``."""

    REASON = "Collapsed by ToolResultCompactionStrategy"

    def __init__(
        self,
        trigger: Trigger,
        minimum_preserved_groups: int = 16,
        target: Callable[[MessageIndex], bool] | None = None,
        formatter: Callable[[Group], str] = default_tool_call_formatter,
        digests: dict[tuple[Any, ...], tuple[tuple[Message, ...], Message]] | None = None,
        digest_entries: dict[tuple[Any, ...], tuple[tuple[Entry, ...], Entry]] | None = None,
    ) -> None:
        super().__init__(trigger, target)
        self.minimum_preserved_groups = max(0, minimum_preserved_groups)  # EnsureNonNegative
        self.formatter = formatter
        built_in = formatter in FORMATTERS.values()
        #: digests already written, by formatter and the identities of the messages they stand for (with those
        #: messages, so the identities stay theirs): only for the built-in formatters, which read nothing else
        self.digests = digests if built_in else None
        #: the entries of those digests, by formatter and the identities of the entries they cover (kept likewise)
        self.digest_entries = digest_entries if built_in and digests is not None else None

    def digest(self, group: Group, live: Sequence[Entry]) -> Message:
        """The ``[Tool Calls]`` message standing for ``group`` (whose sent entries are ``live``): the same object for
        the same messages written by the same built-in formatter (so another setup replaying the conversation reuses
        it, with everything counted for it), a new one otherwise."""
        digests = self.digests
        if digests is None:
            return self._write_digest(group)
        messages = tuple([e.message for e in live])
        key = (self.formatter, *map(id, messages))
        hit = digests.get(key)
        if hit is None:
            hit = _room(digests)[key] = (messages, self._write_digest(group))
        return hit[1]

    def digest_entry(self, group: Group, live: Sequence[Entry]) -> Entry:
        """The entry of :meth:`digest`, covering ``live``: the same object for the same entries when digests are
        shared (the replays of a conversation under other thresholds collapse the same groups of the same originals;
        an entry is immutable, and the same entries cover the same originals), a new one otherwise."""
        known = self.digest_entries
        if known is None:
            return self._cover(self.digest(group, live), live)
        key = (self.formatter, *map(id, live))
        hit = known.get(key)
        if hit is None:
            hit = _room(known)[key] = (tuple(live), self._cover(self.digest(group, live), live))
        return hit[1]

    @staticmethod
    def _cover(digest: Message, live: Sequence[Entry]) -> Entry:
        return inserted(digest, "digest", covers=live, strategy="ToolResultCompactionStrategy")

    def _write_digest(self, group: Group) -> Message:
        return Message(role="assistant", texts=(self.formatter(group),), meta={SUMMARY_FLAG: True})

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        protected = set(map(id, index.newest_included(self.minimum_preserved_groups)))
        collapsed = 0
        for group in index.included_tool_calls():  # the eligible ones come before every protected group
            if id(group) in protected:
                break
            index.collapse(group, self.REASON, Group("Summary", [self.digest_entry(group, group.live_entries)],
                                                     group.turn))
            collapsed += 1
            if self.target(index):
                break
        if not collapsed:
            return False, "declined: no tool-call group outside the preserved ones"
        return True, f"collapsed {collapsed} tool-call group{'s' if collapsed != 1 else ''} into [Tool Calls] digests"


class DotnetRunner(Runner):
    """A .NET strategy applied before every model call (``AIContextProviderChatClient`` + ``CompactionProvider``)."""

    persistence = "flag"

    def __init__(self, strategy: DotnetStrategy, ctx: RunContext, lines: Mapping[str, float] | None = None) -> None:
        self.strategy = strategy
        self.index = MessageIndex(ctx.counter, ctx.shared("agent_framework excluded entries"))
        self._lines = dict(lines or {})

    def append(self, entry: Entry) -> None:
        self.index.append(entry)

    def entries(self) -> Sequence[Entry]:
        return self.index.entries()

    def first_change(self) -> int:
        return self.index.take_changes()

    def measure(self) -> int:
        # measuring happens right before a model call, after the provider's Update indexed the new messages: close the
        # batch (the uncompacted baseline measures at the same points, so both group the log identically)
        self.index.end_batch()
        return self.index.included_tokens

    def lines(self) -> dict[str, float]:
        return self._lines

    def quiet_through(self) -> int | None:
        return self.strategy.quiet_through()

    def mark(self) -> tuple[int, int, int, int]:
        return self.index.mark()

    def resume(self, source: Runner, mark: Any) -> None:
        if not isinstance(source, DotnetRunner):
            raise TypeError(f"a DotnetRunner resumes from another, not from a {type(source).__name__}")
        self.index.resume_from(source.index, mark)

    def before_call(self) -> CallOutcome:
        index = self.index
        index.end_batch()  # as measure() does
        before = index.included_tokens
        triggered, changed, note = self.strategy.compact(index)
        model_calls = self.strategy.drain_model_calls()
        index.end_batch()
        return CallOutcome(before, index.included_tokens, triggered, changed, None, note or "", model_calls)


def trigger_and_target(params: Mapping[str, Any], ctx: RunContext) -> tuple[Trigger, Trigger | None, dict[str, Any]]:
    """The trigger/target a .NET setup uses: explicit params, else compact_at/compact_to of the window."""
    trigger = parse_trigger(params["trigger"]) if params.get("trigger") else tokens_exceed(
        int(ctx.context_window * ctx.compact_at)
    )
    if params.get("target"):
        target: Trigger | None = parse_trigger(params["target"])
    elif params.get("trigger"):
        target = None  # .NET default: the inverse of the trigger
    else:
        target = tokens_below(int(ctx.context_window * ctx.compact_to))
    lines = {}
    if trigger.token_threshold() is not None:
        lines["trigger"] = trigger.token_threshold()
    if target is not None and target.token_threshold() is not None:
        lines["target"] = target.token_threshold()
    return trigger, target, lines


TRIGGER_PARAMS = (
    Param("trigger", "trigger", "", "When to compact, as a .NET CompactionTrigger: TokensExceed(n), MessagesExceed(n), "
          "TurnsExceed(n), GroupsExceed(n), HasToolCalls(), Always(), Never(), All(…), Any(…). Empty = "
          "TokensExceed(context_window × compact_at)."),
    Param("target", "trigger", "", "When to stop, as a trigger that must become true (e.g. TokensBelow(40000)). "
          "Empty = TokensBelow(context_window × compact_to) when the trigger is empty too, else the inverse of the "
          "trigger (the .NET default)."),
)


def _make_tool_result_compaction(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    trigger, target, lines = trigger_and_target(params, ctx)
    strategy = ToolResultCompaction(
        trigger,
        params["minimum_preserved_groups"],
        target,
        formatter=params["formatter"] if callable(params["formatter"]) else FORMATTERS[params["formatter"]],
        digests=ctx.shared("agent_framework.tool_result_compaction digests"),
        digest_entries=ctx.shared("agent_framework.tool_result_compaction digest entries"),
    )
    return strategy, lines


StrategyMaker = Callable[[Mapping[str, Any], RunContext], tuple[DotnetStrategy, dict[str, Any]]]


def runner_builder(make: StrategyMaker) -> Callable[[Mapping[str, Any], RunContext], Runner]:
    """A registry ``build`` function: the strategy ``make`` returns, applied before every model call."""

    def build(params: Mapping[str, Any], ctx: RunContext) -> Runner:
        strategy, lines = make(params, ctx)
        return DotnetRunner(strategy, ctx, lines)

    return build


_build_tool_result_compaction = runner_builder(_make_tool_result_compaction)


register(
    StrategyInfo(
        name="agent_framework.tool_result_compaction",
        title="Agent Framework (.NET) · ToolResultCompactionStrategy",
        summary=(
            "When the trigger fires, collapses old tool-call groups (the call and its results) into one short "
            "[Tool Calls] summary message each, oldest first, until the target holds. The last "
            "minimum_preserved_groups groups of any kind are never collapsed."
        ),
        params=(
            *TRIGGER_PARAMS,
            Param("minimum_preserved_groups", "int", 16, "The newest non-system groups (user, assistant, tool-call…) "
                  "that are never collapsed, whatever the target.", minimum=0, maximum=200),
            Param("formatter", "choice", "default", "How a collapsed group is written: `default` is .NET's "
                  "DefaultToolCallFormatter ([Tool Calls] / name: / - result); `first_line` keeps each result's first "
                  "line; `names_only` keeps only the calls. From Python, any function group -> str.",
                  choices=tuple(FORMATTERS), callable_ok=True),
        ),
        build=_build_tool_result_compaction,
        docs_url=DOCS + ".toolresultcompactionstrategy",
    )
)


# ------------------------------------------------------------------------------------------------- truncation
class TruncationCompaction(DotnetStrategy):
    """``TruncationCompactionStrategy(trigger, minimumPreservedGroups=32, target)``: exclude the oldest included
    non-system groups one at a time until the target holds, never touching the newest ``minimum`` of them."""

    REASON = "Truncated by TruncationCompactionStrategy"

    def __init__(self, trigger: Trigger, minimum_preserved_groups: int = 32,
                 target: Callable[[MessageIndex], bool] | None = None) -> None:
        super().__init__(trigger, target)
        self.minimum_preserved_groups = max(0, minimum_preserved_groups)  # EnsureNonNegative

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        removable = index.included_non_system_groups - self.minimum_preserved_groups
        if removable <= 0:
            return False, f"declined: only the {self.minimum_preserved_groups} preserved groups are included"
        removed = self.exclude_oldest(index, ([group] for group in index.oldest_included()), removable, self.REASON)
        return True, f"truncated the {removed} oldest group{'s' if removed != 1 else ''}"


# ----------------------------------------------------------------------------------------------- sliding window
class SlidingWindowCompaction(DotnetStrategy):
    """``SlidingWindowCompactionStrategy(trigger, minimumPreservedTurns=1, target)``: exclude whole user turns,
    oldest first, until the target holds. Turn 0 (before the first user message), the newest ``minimum`` turns,
    system groups and groups without a turn (summaries) are never touched."""

    REASON = "Excluded by SlidingWindowCompactionStrategy"

    def __init__(self, trigger: Trigger, minimum_preserved_turns: int = 1,
                 target: Callable[[MessageIndex], bool] | None = None) -> None:
        super().__init__(trigger, target)
        self.minimum_preserved_turns = max(0, minimum_preserved_turns)  # EnsureNonNegative

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        keep = self.minimum_preserved_turns  # turn 0 (before the first user message) is never removed
        removable = index.included_turns - keep
        if removable <= 0:
            return False, "declined: every included turn is protected"
        removed = self.exclude_oldest(index, index.included_turns_oldest_first(), removable, self.REASON)
        return True, f"excluded the {removed} oldest user turn{'s' if removed != 1 else ''}"


# ------------------------------------------------------------------------------------------------ summarization
DEFAULT_DOTNET_SUMMARY_PROMPT = (
    "Write a concise summary of the conversation so far. Keep the facts, decisions and user preferences that were "
    "established, the context needed to continue in later turns, and the outcomes of tool calls. Leave out "
    "greetings and pleasantries."
)


class SummarizationCompaction(DotnetStrategy):
    """``SummarizationCompactionStrategy(chatClient, trigger, minimumPreservedGroups=8, prompt, target)``: the
    oldest included non-system groups (earlier summaries too) are excluded one at a time until the target holds,
    their raw messages go to the summarizer, and one ``[Summary]`` message takes their place (turn: none)."""

    REASON = "Summarized by SummarizationCompactionStrategy"

    def __init__(self, summarizer: Summarizer, counter: Counter, trigger: Trigger, minimum_preserved_groups: int = 8,
                 prompt: str | None = None, target: Callable[[MessageIndex], bool] | None = None,
                 summary_tokens: int = 512) -> None:
        super().__init__(trigger, target)
        self.summarizer = summarizer
        self.counter = counter
        self.minimum_preserved_groups = max(0, minimum_preserved_groups)  # EnsureNonNegative
        self.prompt = prompt or DEFAULT_DOTNET_SUMMARY_PROMPT
        self.summary_tokens = summary_tokens

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        from ..summarizers import SummaryRequest
        from ..tokens import render_haystack

        summarizable = index.included_non_system_groups - self.minimum_preserved_groups
        if summarizable <= 0:
            return False, f"declined: only the {self.minimum_preserved_groups} preserved groups are included"
        chosen: list[Group] = []
        for group in islice(index.oldest_included(), summarizable):
            index.exclude(group, self.REASON)
            chosen.append(group)
            if self.target(index):
                break
        raw = [m for g in chosen for m in g.messages]
        request = SummaryRequest(self.prompt, "\n".join(render_haystack(m) for m in raw), tuple(raw),
                                 self.summary_tokens)
        try:
            call = self.summarizer.summarize(request, self.counter)
        except Exception as exc:  # noqa: BLE001 - .NET catches every non-cancellation exception
            for group in chosen:
                index.restore(group)
            return False, f"summarizer failed ({exc}); exclusions restored"
        self.model_calls.append(call.usage())
        text = f"[Summary]\n{call.text}" if call.text.strip() else "[Summary unavailable]"
        summary = Message(role="assistant", texts=(text,), meta={SUMMARY_FLAG: True})
        covered = [e for g in chosen for e in g.live_entries]
        entry = inserted(summary, "summary", covers=covered, strategy="SummarizationCompactionStrategy",
                         backend=call.backend, simulated=call.simulated)
        index.insert_before(chosen[0], Group("Summary", [entry], None))
        notice = f" ({call.notice})" if call.notice else ""
        return True, f"summarized {len(chosen)} group{'s' if len(chosen) != 1 else ''} into one [Summary]{notice}"


# ----------------------------------------------------------------------------------------------------- pipeline
class PipelineCompaction(DotnetStrategy):
    """``PipelineCompactionStrategy(strategies)``: trigger Always; each child runs ``CompactAsync`` in order (with
    its own trigger and skip rule)."""

    def __init__(self, children: Sequence[DotnetStrategy]) -> None:
        super().__init__(parse_trigger("Always()"))
        self.children = list(children)
        self._child_triggered = False

    def compact(self, index: MessageIndex) -> tuple[bool, bool, str]:
        """Reported as triggered only when a child's own trigger fired (the pipeline's Always is not news)."""
        self._child_triggered = False
        _, changed, note = super().compact(index)
        return self._child_triggered, changed, note if self._child_triggered else ""

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        changed_any = False
        notes: list[str] = []
        for i, child in enumerate(self.children, start=1):
            triggered, changed, note = child.compact(index)
            changed_any = changed_any or changed
            self._child_triggered = self._child_triggered or triggered
            if triggered:
                label = child.name if isinstance(child, NestedDotnetChild) else type(child).__name__
                notes.append(f"{i}. {label}: {note or ('changed' if changed else 'no change')}")
        return changed_any, "; ".join(notes)

    def drain_model_calls(self) -> list[dict[str, int]]:
        return [call for child in self.children for call in child.drain_model_calls()]


class NestedDotnetChild(DotnetStrategy):
    """Any registered strategy as a pipeline child (see :mod:`._nesting`): it acts on the included messages with its
    own trigger (the .NET skip rule and trigger/target do not apply to it); what it replaced becomes the new content
    of that message in its group, what it removed is excluded (the whole group when every message of it went, else
    those messages alone), and what it inserted becomes a Summary group (``_is_summary``, turn none) right after the
    group of the message it followed."""

    def __init__(self, nested: NestedStrategy) -> None:
        super().__init__(parse_trigger("Always()"))
        self.nested = nested

    @property
    def name(self) -> str:
        return self.nested.name

    def compact(self, index: MessageIndex) -> tuple[bool, bool, str]:
        slots = [(g, e) for g in index.included() for e in g.live_entries]
        result = self.nested.run([e for _, e in slots])
        self.model_calls.extend(result.model_calls)
        if not result.changed:
            return result.triggered, False, result.note
        for position, message in result.replaced.items():
            group, entry = slots[position]
            index.replace_entry(group, entry, entry.replaced(message, nested_in=self.name))
        self._exclude(index, [slots[k] for k in result.removed])
        self._insert(index, slots, result)
        return True, True, describe(result)

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        _, changed, note = self.compact(index)
        return changed, note

    def _exclude(self, index: MessageIndex, removed: Sequence[tuple[Group, Entry]]) -> None:
        by_group: dict[int, tuple[Group, list[Entry]]] = {}
        for group, entry in removed:
            by_group.setdefault(id(group), (group, []))[1].append(entry)
        for group, entries in by_group.values():
            if len(entries) == len(group.live_entries):
                index.exclude(group, self.name)
            else:
                index.exclude_entries(group, entries, self.name)

    def _insert(self, index: MessageIndex, slots: Sequence[tuple[Group, Entry]], result: NestedResult) -> None:
        last_after: dict[int | None, Group] = {}
        first_included = slots[0][0] if slots else None
        for previous, entry in result.inserted:
            message = replace(entry.message, meta={**entry.message.meta, SUMMARY_FLAG: True})
            group = Group("Summary", [inserted_entry(entry, self.name, message)], None)
            anchor = last_after.get(previous) or (slots[previous][0] if previous is not None else None)
            if anchor is not None:
                index.insert_after(anchor, group)
            elif first_included is not None and first_included in index.groups:
                index.insert_before(first_included, group)
            else:
                index._add_group(group)
            last_after[previous] = group


# ---------------------------------------------------------------------------------------------- context window
def _dotnet_number(value: float) -> str:
    """A number as .NET's ``ToString()`` prints it (``0.5``, ``1``, ``-3``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _out_of_range(param: str, value: float, message: str) -> ValueError:
    """The text of a .NET ``ArgumentOutOfRangeException(paramName, actualValue, message)`` (its two lines joined by
    a space, so a command line prints it as one line)."""
    return ValueError(f"{message} (Parameter '{param}') Actual value was {_dotnet_number(value)}.")


class ContextWindowCompaction(DotnetStrategy):
    """``ContextWindowCompactionStrategy(maxContextWindowTokens, maxOutputTokens, toolEvictionThreshold=0.5,
    truncationThreshold=0.8)``: a pipeline of ToolResult(TokensExceed(budget·eviction), 2 preserved) then
    Truncation(TokensExceed(budget·truncation), 2 preserved), budget = window − output."""

    def __init__(self, max_context_window_tokens: int, max_output_tokens: int, tool_eviction_threshold: float = 0.5,
                 truncation_threshold: float = 0.8) -> None:
        super().__init__(parse_trigger("Always()"))
        if max_context_window_tokens <= 0:
            raise _out_of_range("maxContextWindowTokens", max_context_window_tokens,
                                "Argument less or equal than minimum value 0")
        if max_output_tokens < 0:
            raise _out_of_range("maxOutputTokens", max_output_tokens, "Argument less than minimum value 0")
        if max_output_tokens >= max_context_window_tokens:
            raise _out_of_range("maxOutputTokens", max_output_tokens,
                                f"Argument greater or equal than maximum value {max_context_window_tokens}")
        for name, value in (("toolEvictionThreshold", tool_eviction_threshold),
                            ("truncationThreshold", truncation_threshold)):
            if not 0.0 < value <= 1.0:
                raise _out_of_range(name, value, "Threshold must be in the range (0.0, 1.0].")
        if truncation_threshold < tool_eviction_threshold:
            raise _out_of_range(
                "truncationThreshold", truncation_threshold,
                f"Truncation threshold ({_dotnet_number(truncation_threshold)}) must be greater than or equal to tool "
                f"eviction threshold ({_dotnet_number(tool_eviction_threshold)}).",
            )
        self.input_budget = max_context_window_tokens - max_output_tokens
        self.tool_eviction_tokens = int(self.input_budget * tool_eviction_threshold)
        self.truncation_tokens = int(self.input_budget * truncation_threshold)
        self.pipeline = PipelineCompaction([
            ToolResultCompaction(tokens_exceed(self.tool_eviction_tokens), 2),
            TruncationCompaction(tokens_exceed(self.truncation_tokens), 2),
        ])

    def compact(self, index: MessageIndex) -> tuple[bool, bool, str]:
        """Reported as triggered only when one of its two thresholds was crossed."""
        if index.included_non_system_groups <= 1:  # the shared skip rule, before the inner pipeline runs
            return False, False, ""
        return self.pipeline.compact(index)

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        _, changed, note = self.pipeline.compact(index)
        return changed, note

    def drain_model_calls(self) -> list[dict[str, int]]:
        return self.pipeline.drain_model_calls()

    def lines(self) -> dict[str, float]:
        return {"trigger": self.tool_eviction_tokens, "truncation": self.truncation_tokens,
                "input_budget": self.input_budget}


# ------------------------------------------------------------------------------------------------ registrations
def _make_truncation(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    trigger, target, lines = trigger_and_target(params, ctx)
    return TruncationCompaction(trigger, params["minimum_preserved_groups"], target), lines


def _make_sliding_window(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    trigger, target, lines = trigger_and_target(params, ctx)
    return SlidingWindowCompaction(trigger, params["minimum_preserved_turns"], target), lines


def _make_summarization(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    trigger, target, lines = trigger_and_target(params, ctx)
    strategy = SummarizationCompaction(ctx.summarizer(params), ctx.counter, trigger,
                                       params["minimum_preserved_groups"], params["prompt"] or None, target,
                                       summary_tokens=params["summary_tokens"])
    return strategy, lines


def _make_context_window(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    window = params["max_context_window_tokens"] or ctx.context_window
    strategy = ContextWindowCompaction(window, params["max_output_tokens"], params["tool_eviction_threshold"],
                                       params["truncation_threshold"])
    return strategy, strategy.lines()


#: pipeline child name -> (registered strategy name, maker)
PIPELINE_CHILDREN: dict[str, tuple[str, StrategyMaker]] = {
    "tool_result_compaction": ("agent_framework.tool_result_compaction", _make_tool_result_compaction),
    "truncation": ("agent_framework.truncation", _make_truncation),
    "sliding_window": ("agent_framework.sliding_window", _make_sliding_window),
    "summarization": ("agent_framework.summarization", _make_summarization),
    "context_window": ("agent_framework.context_window", _make_context_window),
}


def _split_top_level(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside parentheses (trigger expressions nest)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"pipeline {text!r}: unbalanced ')' at position {i}")
        elif ch == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"pipeline {text!r}: missing ')'")
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse_pipeline(text: str, allowed: Sequence[str] | Mapping[str, Any] = PIPELINE_CHILDREN,
                   ) -> list[tuple[str, dict[str, str]]]:
    """Parse ``tool_result_compaction(trigger=TokensExceed(60000), minimum_preserved_groups=4); truncation`` into
    ``[(child name, {param: raw value})]``. Child names are those in ``allowed`` (the host's own strategies) or any
    registered strategy's dotted name (nested through :mod:`._nesting`); parameters are the child strategy's own
    (checked when the composite strategy is built)."""
    children: list[tuple[str, dict[str, str]]] = []
    for spec in _split_top_level(text, ";"):
        name, paren, rest = spec.partition("(")
        name = name.strip()
        check_child_name(name, "pipeline", allowed)
        args: dict[str, str] = {}
        if paren:
            if not rest.rstrip().endswith(")"):
                raise ValueError(f"pipeline child {spec!r}: expected ')' at the end")
            for arg in _split_top_level(rest.rstrip()[:-1], ","):
                key, eq, value = arg.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"pipeline child {name!r}: expected PARAM=VALUE, got {arg!r}")
                args[key.strip()] = value.strip()
        children.append((name, args))
    if not children:
        raise ValueError("pipeline: expected at least one child strategy, e.g. 'tool_result_compaction; truncation'")
    check_children(len(children), "pipeline")
    return children


def _make_pipeline(params: Mapping[str, Any], ctx: RunContext) -> tuple[DotnetStrategy, dict[str, Any]]:
    from .base import get_strategy

    shared = {p.name: params[p.name] for p in SUMMARIZER_PARAMS}
    children: list[DotnetStrategy] = []
    lines: dict[str, Any] = {}
    for position, (name, args) in enumerate(parse_pipeline(params["children"]), start=1):
        short = native_name(name, "agent_framework", PIPELINE_CHILDREN)
        if short is None:
            nested = make_nested(name, args, shared, ctx, f"pipeline child {position} ({name})")
            children.append(NestedDotnetChild(nested))
            child_lines = nested.lines()
        else:
            registered, make = PIPELINE_CHILDREN[short]
            values = native_child_values(get_strategy(registered), args, shared, f"pipeline child {position} ({name})")
            child, child_lines = make(values, ctx)
            children.append(child)
        for key, value in child_lines.items():
            if key not in lines:
                lines[key] = value
            elif lines[key] != value:
                lines[f"{key} · {position}. {name}"] = value
    return PipelineCompaction(children), lines


TRUNCATION_PARAMS = (
    *TRIGGER_PARAMS,
    Param("minimum_preserved_groups", "int", 32, "minimumPreservedGroups: the newest non-system groups that are never "
          "removed, whatever the target.", minimum=0, maximum=500),
)
SLIDING_WINDOW_PARAMS = (
    *TRIGGER_PARAMS,
    Param("minimum_preserved_turns", "int", 1, "minimumPreservedTurns: the newest user turns that are never removed "
          "(messages before the first user message are always kept).", minimum=0, maximum=200),
)
SUMMARIZATION_PARAMS = (
    *TRIGGER_PARAMS,
    Param("minimum_preserved_groups", "int", 8, "minimumPreservedGroups: the newest non-system groups that are never "
          "summarized.", minimum=0, maximum=500),
    Param("prompt", "str", "", "summarizationPrompt: the system prompt of the summarizer call. Empty = a paraphrase of "
          ".NET's default (facts, decisions, preferences, tool outcomes; no pleasantries).", advanced=True),
    *SUMMARIZER_PARAMS,
)
PIPELINE_PARAMS = (
    Param("children", "str", "tool_result_compaction; summarization; truncation",
          "The PipelineCompactionStrategy's strategies, in order, separated by ';'. Each is "
          "tool_result_compaction, truncation, sliding_window, summarization or context_window, or any registered "
          "strategy by its full name (haystack.*, anthropic.*, langchain.*, agent_framework_python.*, …), optionally "
          "with its own parameters in parentheses, e.g. `haystack.tool_result_pruning(min_keep_steps=2); "
          "tool_result_compaction(trigger=TokensExceed(60000), minimum_preserved_groups=4); "
          "truncation(minimum_preserved_groups=8)`. Each child checks its own trigger (empty trigger = "
          "TokensExceed(context_window × compact_at)); a nested strategy of another family uses its own trigger or "
          "threshold (compact_at / compact_to of the replay's context window for threshold strategies), acts on the "
          "included messages, and its edits are written back: replaced content in place, removed messages "
          "excluded (reason: its name), summaries as Summary groups."),
    *SUMMARIZER_PARAMS,
)
CONTEXT_WINDOW_PARAMS = (
    Param("max_context_window_tokens", "int", 0, "maxContextWindowTokens: the model's context window. 0 = the replay's "
          "context window setting.", minimum=0, maximum=10_000_000),
    Param("max_output_tokens", "int", 16_384, "maxOutputTokens: the model's output limit; the input budget is the "
          "window minus this.", minimum=0, maximum=1_000_000),
    Param("tool_eviction_threshold", "float", 0.5, "toolEvictionThreshold: share of the input budget above which "
          "old tool-call groups are collapsed (keeping the newest 2 groups).", minimum=0.0, maximum=1.0),
    Param("truncation_threshold", "float", 0.8, "truncationThreshold: share of the input budget above which the "
          "oldest groups are removed (keeping the newest 2 groups); must be ≥ toolEvictionThreshold.",
          minimum=0.0, maximum=1.0),
)

_SPECS: tuple[tuple[str, str, str, tuple[Param, ...], StrategyMaker, Policy, str], ...] = (
    ("truncation", "TruncationCompactionStrategy",
     "When the trigger fires, removes the oldest non-system groups (a user message, an answer, a tool call with its "
     "results) one at a time until the target holds. The newest minimum_preserved_groups groups are never removed.",
     TRUNCATION_PARAMS, _make_truncation, "threshold", "truncationcompactionstrategy"),
    ("sliding_window", "SlidingWindowCompactionStrategy",
     "When the trigger fires, removes whole user turns (the user message and everything answering it), oldest "
     "first, until the target holds. The newest minimum_preserved_turns turns, anything before the first user "
     "message, and summaries are never removed.",
     SLIDING_WINDOW_PARAMS, _make_sliding_window, "threshold", "slidingwindowcompactionstrategy"),
    ("summarization", "SummarizationCompactionStrategy",
     "When the trigger fires, takes the oldest non-system groups (earlier summaries included) until the target "
     "holds, sends their raw messages to a summarizer, and puts one '[Summary]' message in their place. The newest "
     "minimum_preserved_groups groups are never summarized; if the summarizer fails, nothing changes.",
     SUMMARIZATION_PARAMS, _make_summarization, "threshold", "summarizationcompactionstrategy"),
    ("pipeline", "PipelineCompactionStrategy",
     "Runs several strategies in order before every model call; each child fires on its own trigger and stops "
     "at its own target. Children are .NET strategies, or any registered strategy nested by its full name: it "
     "works on the included messages and its edits become the pipeline's (content replaced, messages excluded, "
     "Summary groups inserted).",
     PIPELINE_PARAMS, _make_pipeline, "threshold", "pipelinecompactionstrategy"),
    ("context_window", "ContextWindowCompactionStrategy",
     "Derives two token thresholds from the model's window: above half the input budget it collapses old tool "
     "results, above 80% it removes the oldest groups, each keeping the newest 2 groups. Uses only the context "
     "window: compact_at and compact_to are ignored.",
     CONTEXT_WINDOW_PARAMS, _make_context_window, "window", "contextwindowcompactionstrategy"),
)

Maker = TypeVar("Maker")


def register_specs(specs: Iterable[tuple[str, str, str, tuple[Param, ...], Maker, Policy, str]], family: str,
                   framework: str, docs: str,
                   builder: Callable[[Maker], Callable[[Mapping[str, Any], RunContext], Runner]]) -> None:
    """Register each row ``(name, title, summary, params, maker, policy, docs page)`` of a port's strategy table as
    ``{family}.{name}``, titled ``{framework} · {title}`` and built by ``builder(maker)``."""
    add = registrar(family)
    for name, title, summary, params, make, policy, doc in specs:
        add(name, title=f"{framework} · {title}", summary=summary, params=params, build=builder(make), policy=policy,
            docs_url=f"{docs}.{doc}")


register_specs(_SPECS, "agent_framework", "Agent Framework (.NET)", DOCS, runner_builder)
