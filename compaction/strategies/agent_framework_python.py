"""Microsoft Agent Framework (Python, ``agent-framework-core`` 1.23.0) compaction, re-created from the behaviour
spec (docs/spec/frameworks.md §2) and checked against the installed package.

The framework never deletes a message. It annotates every message with its group (id ``group_<message id>``, kind
``system`` / ``user`` / ``assistant_text`` / ``tool_call``; a tool result is linked to its unique earlier call even
when they are not adjacent), a cached token count, and a sticky ``_excluded`` flag with a reason. Strategies flip
flags and insert summary messages into the same list; the model gets the included projection. In an agent run
``_prepare_messages_for_model_call`` applies the strategy before every model call to the caller's list, so
exclusions and inserted summaries persist across calls — which is how :class:`PythonRunner` replays it.

Most Python strategies have no trigger: they act on every call (sliding window, selective tool call, tool-result
compaction). Truncation, summarization, token-budget and context-window strategies have their own conditions.
"""

from __future__ import annotations

from bisect import bisect_left
from bisect import bisect_right
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from itertools import chain
from itertools import count
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING
from typing import Any

from ..conversation import Message
from ..formats.agent_framework import contents_of
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from ..tokens import MafPythonCounter
from ..tokens import free_message_id
from ..tokens import make_counter
from ..tokens import own_message_id
from ._nesting import NestedStrategy
from ._nesting import describe
from ._nesting import inserted_entry
from ._nesting import make_nested
from ._nesting import native_child_values
from ._nesting import native_name
from .agent_framework import parse_pipeline
from .agent_framework import register_specs
from .base import SUMMARIZER_PARAMS
from .base import CallOutcome
from .base import ChangeMark
from .base import Param
from .base import Policy
from .base import RunContext
from .base import Runner

if TYPE_CHECKING:
    from ..summarizers import Summarizer

DOCS = "https://learn.microsoft.com/python/api/agent-framework-core/agent_framework"
TOOL_CALL_TYPES = frozenset({"function_call", "computer_tool_call", "mcp_server_tool_call", "code_interpreter_tool_call",
                             "shell_tool_call", "image_generation_tool_call"})
LINKED_RESULT_TYPES = {"function_result": "function_call", "computer_tool_result": "computer_tool_call"}


# ------------------------------------------------------------------------------------------------- the history
OrderKey = tuple[int, ...]


@dataclass(eq=False, slots=True)
class Record:
    """One message of the framework's list with its ``additional_properties`` annotations, and what
    :class:`History` needs to keep them up to date without going over the whole list."""

    entry: Entry
    message_id: str | None = None
    group_id: str | None = None
    kind: str | None = None
    has_reasoning: bool = False
    excluded: bool = False
    reason: str | None = None
    tokens: int | None = field(default=None, repr=False)
    #: content types as ``Message.contents`` holds them (what grouping looks at)
    types: tuple[str, ...] = field(default=(), repr=False)
    #: linkable call declarations and results: (role, call content type, call id)
    calls: tuple[tuple[str, str, str], ...] = field(default=(), repr=False)
    #: the record's place in the list: keys grow along the list, an inserted record gets one between its neighbours
    key: OrderKey = field(default=(), repr=False)
    #: the (annotation pass, group id) that gave the record its group index (see ``History.group_indices``)
    tag: int | None = field(default=None, repr=False)
    #: the record starts a span (a run of messages grouped together before tool results are linked)
    span_head: bool = field(default=False, repr=False)
    #: the earlier unmatched declarations its results found when the whole list is scanned in order
    candidates: tuple[Record, ...] = field(default=(), repr=False)
    #: the later records whose results found this record's declarations among their candidates
    candidate_of: list[Record] = field(default_factory=list, repr=False)
    #: the stored entry while excluded, built once per exclusion reason and reused by every snapshot
    _excluded_entry: Entry | None = field(default=None, repr=False)

    @property
    def message(self) -> Message:
        return self.entry.message

    def stored(self) -> Entry:
        """The entry as a snapshot stores it (with the exclusion flag and reason when excluded)."""
        if not self.excluded:
            return self.entry
        reason = self.reason or "excluded"
        cached = self._excluded_entry
        if cached is None or cached.exclude_reason != reason:
            cached = self._excluded_entry = self.entry.excluded_as(reason)
        return cached


_ORDER = attrgetter("key")


def _record(entry: Entry) -> Record:
    own = entry.message.meta.get("message_id")
    contents = contents_of(entry.message)
    return Record(entry, str(own) if own else None, types=tuple(c["type"] for c in contents),
                  calls=_call_ids(entry.message.role, contents))


def _key_between(before: OrderKey | None, after: OrderKey) -> OrderKey:
    """An order key strictly between two neighbours' keys (``before`` None: the first record's)."""
    if before is None:
        return (after[0] - 1,)
    if after[:len(before)] == before:
        return (*before, after[len(before)] - 1)
    return (*before, 0)


def _is_tool_call_assistant(r: Record) -> bool:
    return r.message.role == "assistant" and any(t in TOOL_CALL_TYPES for t in r.types)


def _is_reasoning_only(r: Record) -> bool:
    """Python: a non-empty content list of reasoning only (an empty assistant is ``assistant_text``)."""
    return r.message.role == "assistant" and bool(r.types) and all(t == "text_reasoning" for t in r.types)


def _stands_alone(r: Record) -> bool:
    """The record is a span of its own wherever it sits: no tool call, not reasoning only, not a tool message."""
    return r.message.role != "tool" and not _is_reasoning_only(r) and not _is_tool_call_assistant(r)


def _call_ids(role: str, contents: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    """("declare" | "result", call content type, call id) of the linkable calls and results, in content order."""
    out: list[tuple[str, str, str]] = []
    for c in contents:
        call_id = c.get("call_id")
        if not call_id:
            continue
        if role == "assistant" and c["type"] in ("function_call", "computer_tool_call"):
            out.append(("declare", c["type"], call_id))
        elif c["type"] in LINKED_RESULT_TYPES and role in ("assistant", "tool"):
            out.append(("result", LINKED_RESULT_TYPES[c["type"]], call_id))
    return tuple(out)


@dataclass(eq=False, slots=True)
class _Span:
    group_id: str
    kind: str
    start: int
    end: int
    has_reasoning: bool


class _GroupSet:
    """Group ids in list order (by their first member's order key). A walk tolerates changes made while walking."""

    __slots__ = ("_keys", "_gids")

    def __init__(self) -> None:
        self._keys: list[OrderKey] = []
        self._gids: list[str] = []

    def add(self, key: OrderKey, gid: str) -> None:
        i = bisect_left(self._keys, key)
        self._keys.insert(i, key)
        self._gids.insert(i, gid)

    def discard(self, key: OrderKey, gid: str) -> None:
        i = bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            del self._keys[i], self._gids[i]

    def gids(self) -> list[str]:
        return list(self._gids)

    def last(self) -> str | None:
        return self._gids[-1] if self._gids else None

    def first(self) -> str | None:
        return self._gids[0] if self._gids else None

    def walk(self, newest_first: bool = False) -> Iterator[str]:
        """The ids in order, each looked up after the previous one (groups filed or dropped meanwhile count)."""
        keys = self._keys
        if newest_first:
            i = len(keys) - 1
            while i >= 0:
                key = keys[i]
                yield self._gids[i]
                i = i - 1 if i < len(keys) and keys[i] is key else bisect_left(keys, key) - 1
            return
        i = 0
        while i < len(keys):
            key = keys[i]
            yield self._gids[i]
            i = i + 1 if i < len(keys) and keys[i] is key else bisect_right(keys, key)


@dataclass(eq=False, slots=True)
class _Group:
    """The records with one group id, in list order, and the counts the group indexes are kept from."""

    gid: str
    members: list[Record] = field(default_factory=list)
    excluded: int = 0
    #: exclusion reason -> excluded members with it
    reasons: dict[str | None, int] = field(default_factory=dict)
    #: (order key, group sets) the group is filed under
    filed: tuple[OrderKey, tuple[_GroupSet, ...]] | None = None

    def count_in(self, r: Record) -> None:
        if r.excluded:
            self.excluded += 1
            self.reasons[r.reason] = self.reasons.get(r.reason, 0) + 1

    def count_out(self, r: Record) -> None:
        if r.excluded:
            self.excluded -= 1
            self.reasons[r.reason] -= 1


class History:
    """The framework's message list with its annotations, and the helpers its strategies share.

    ``annotate_message_groups`` re-annotates a slice of the list (from the first new message, widened back to the
    group before it and to any call a new result may link to) and the strategies look groups up by walking the
    list. Here the slice passes are the same, but what they need is kept up to date instead of rescanned: the
    message ids in use, the in-order scan of calls and results, the groups with their members and exclusion counts,
    and the groups in list order by kind and inclusion. A group index is not stored: every index is the rank of its
    (pass, group id) in order of first appearance, which is what the passes' offsets add up to.

    One pass is skipped when its result is known: inserting a summary or digest in front of the list would
    re-annotate everything after it, but when the annotation is the framework's full one (``_canonical``), the new
    message is a group of its own at a span boundary and nothing before the pass's start is tied to what follows,
    the pass only adds that group (see ``_annotate_alone``).
    """

    def __init__(self, count_tokens: Callable[[Record], int]) -> None:
        self.records: list[Record] = []
        self._count_tokens = count_tokens
        self._stored: list[Entry] = []
        self._stale: set[Record] = set()  # records whose stored entry changed since the last ``entries()``
        self._changes = ChangeMark()  # positions inserted at or restaged since take_first_change()
        self._next_key = 0
        self._first_unannotated: Record | None = None
        self._ids: set[str] = set()
        self._groups: dict[str, _Group] = {}
        self._tags = count()
        self._included_tokens = 0
        self._included_messages = 0
        #: the annotation is what one pass over the whole list would give (True after a pass from the start)
        self._canonical = True
        self._partial: set[str] = set()  # groups with excluded and included members
        self._unmatched: dict[tuple[str, str], list[Record]] = {}
        self._unscanned: list[Record] = []
        self._scan_valid = True
        self._kinds = {"system": _GroupSet(), "user": _GroupSet()}
        self._included = _GroupSet()
        self._included_non_system = _GroupSet()
        self._included_tools = _GroupSet()
        self._walks: dict[str, _GroupSet] = {}  # reason -> groups not wholly excluded with that reason

    # ---------------------------------------------------------------------------------------------- the list
    def append(self, entry: Entry) -> None:
        """A new message at the end of the list (annotated by the next ``annotate``)."""
        r = _record(entry)
        r.key = self._last_key()
        self._add(len(self.records), r)
        self._unscanned.append(r)
        if self._first_unannotated is None:
            self._first_unannotated = r

    def insert(self, position: int, entry: Entry) -> None:
        """Insert a summary message (its ``message_id`` in meta) and re-annotate from there."""
        recs = self.records
        r = _record(entry)
        if position < len(recs):
            r.key = _key_between(recs[position - 1].key if position else None, recs[position].key)
        else:
            r.key = self._last_key()
        self._add(position, r)
        if r.calls:
            self._scan_valid = False
        if not self._annotate_alone(position, r):
            self._annotate_from(position)

    def _last_key(self) -> OrderKey:
        """An order key after every key so far."""
        self._next_key += 1
        return (self._next_key - 1,)

    def _add(self, position: int, r: Record) -> None:
        self._changes.note(position)
        self.records.insert(position, r)
        self._stored.insert(position, r.entry)
        if r.message_id:
            self._ids.add(r.message_id)
        self._included_messages += 1

    def position(self, r: Record) -> int:
        """Where ``r`` is in the list now."""
        return bisect_left(self.records, r.key, key=_ORDER)

    def entries(self) -> list[Entry]:
        """The list as stored entries (see ``Record.stored``): the history's own list, so read it, do not keep it."""
        stored = self._stored
        for r in self._stale:
            position = self.position(r)
            stored[position] = r.stored()
            self._changes.note(position)
        self._stale.clear()
        return stored

    def take_first_change(self) -> int:
        """Since this was last asked: the lowest position of :meth:`entries` that may hold another entry (records
        are only ever inserted or restaged, never removed); read after :meth:`entries`."""
        return self._changes.take(len(self._stored))

    def replace_content(self, r: Record, entry: Entry) -> None:
        """Give record ``r`` a new entry (content replaced in place): its count and content types are redone."""
        fresh = _record(entry)
        if fresh.calls != r.calls:
            self._scan_valid = False
        counted = r.group_id is not None and not r.excluded
        if counted:
            self._included_tokens -= self.tokens(r)
        r.entry, r.types, r.calls, r.tokens, r._excluded_entry = entry, fresh.types, fresh.calls, None, None
        if counted:
            self._included_tokens += self.tokens(r)
        self._stale.add(r)

    def has_message_id(self, message_id: str) -> bool:
        """Some message of the list has this id (its own or the one the framework gave it)."""
        return message_id in self._ids

    # ---------------------------------------------------------------------------------------------- tokens
    def tokens(self, r: Record) -> int:
        if r.tokens is None:
            r.tokens = self._count_tokens(r)
        return r.tokens

    def included(self) -> list[Record]:
        return [r for r in self.records if not r.excluded]

    def included_tokens(self) -> int:
        """Token count of the included annotated messages (``included_token_count`` after annotating)."""
        return self._included_tokens

    def included_messages(self) -> int:
        return self._included_messages

    def included_non_system_messages(self) -> int:
        """Included messages outside system groups."""
        system = (self._groups[gid] for gid in self._kinds["system"].gids())
        return self._included_messages - sum(len(g.members) - g.excluded for g in system)

    # ---------------------------------------------------------------------------------------------- exclusion
    def exclude(self, r: Record, reason: str) -> bool:
        """Exclude ``r`` with ``reason`` (written even when it already was excluded); True if it was included."""
        g = self._groups.get(r.group_id) if r.group_id is not None else None
        if g is not None:
            g.count_out(r)
        newly = not r.excluded
        if newly:
            r.excluded = True
            self._included_messages -= 1
            if r.group_id is not None:
                self._included_tokens -= self.tokens(r)
        r.reason = reason
        self._stale.add(r)
        if g is not None:
            g.count_in(r)
            self._refresh(g)
        return newly

    def exclude_groups(self, group_ids: Iterable[str], reason: str) -> bool:
        """Exclude every message of the groups (the reason is written even on already excluded ones)."""
        changed = False
        for gid in group_ids:
            for r in self.members(gid):
                changed = self.exclude(r, reason) or changed
        return changed

    def _include(self, r: Record) -> None:
        """Clear ``r``'s exclusion (its reason stays); the caller refreshes its group."""
        assert r.group_id is not None  # an excluded record is grouped
        g = self._groups[r.group_id]
        g.count_out(r)
        r.excluded = False
        g.count_in(r)
        self._included_messages += 1
        self._included_tokens += self.tokens(r)
        self._stale.add(r)

    # ---------------------------------------------------------------------------------------------- group views
    def members(self, gid: str) -> list[Record]:
        """The group's messages in order (a copy)."""
        g = self._groups.get(gid)
        return list(g.members) if g is not None else []

    def kind(self, gid: str) -> str | None:
        """The kind of the group's first message (what the framework's kind map says)."""
        g = self._groups.get(gid)
        return g.members[0].kind if g is not None else None

    def start(self, gid: str) -> int | None:
        """Position of the group's first message."""
        g = self._groups.get(gid)
        return self.position(g.members[0]) if g is not None else None

    def system_groups(self) -> list[str]:
        """System groups in order, included or not."""
        return self._kinds["system"].gids()

    def first_user_group(self) -> str | None:
        """The first user group, included or not."""
        return self._kinds["user"].first()

    def included_groups(self) -> list[str]:
        """Groups with an included message, in order."""
        return self._included.gids()

    def included_non_system_groups(self, newest_first: bool = False) -> Iterator[str]:
        """Non-system groups with an included message, walked lazily in order (or from the newest)."""
        return self._included_non_system.walk(newest_first)

    def included_tool_groups(self) -> list[str]:
        """Tool-call groups with an included message, in order."""
        return self._included_tools.gids()

    def minimum_retained(self) -> set[str]:
        """The group kept so the projection is never empty: the last included non-system group (or last group)."""
        last = self._included_non_system.last() or self._included.last()
        return {last} if last is not None else set()

    def groups_in_order(self, unless_excluded_as: str) -> Iterator[str]:
        """Every group in order, except those whose messages are all excluded with this reason (excluding them
        again with it changes nothing). Groups it excludes meanwhile do not upset the walk."""
        walk = self._walks.get(unless_excluded_as)
        if walk is None:
            walk = self._walks[unless_excluded_as] = _GroupSet()
            for g in list(self._groups.values()):
                self._refresh(g)
        return walk.walk()

    def group_indices(self) -> list[int | None]:
        """The group index of each record, as the framework's passes numbered them."""
        ranks: dict[int, int] = {}
        return [None if r.tag is None else ranks.setdefault(r.tag, len(ranks)) for r in self.records]

    def _refresh(self, g: _Group) -> None:
        """File the group under the group sets its state puts it in (or forget it once it has no member)."""
        if g.members and 0 < g.excluded < len(g.members):
            self._partial.add(g.gid)
        else:
            self._partial.discard(g.gid)
        filed = (g.members[0].key, self._sets_for(g)) if g.members else None
        if filed is None:
            self._groups.pop(g.gid, None)
        if filed == g.filed:
            return
        if g.filed is not None:
            key, sets = g.filed
            for s in sets:
                s.discard(key, g.gid)
        if filed is not None:
            key, sets = filed
            for s in sets:
                s.add(key, g.gid)
        g.filed = filed

    def _sets_for(self, g: _Group) -> tuple[_GroupSet, ...]:
        kind, size = g.members[0].kind, len(g.members)
        sets = [self._kinds[kind]] if kind in self._kinds else []
        if g.excluded < size:
            sets.append(self._included)
            if kind != "system":
                sets.append(self._included_non_system)
            if kind == "tool_call":
                sets.append(self._included_tools)
        sets.extend(walk for reason, walk in self._walks.items() if g.reasons.get(reason, 0) < size)
        return tuple(sets)

    # ---------------------------------------------------------------------------------------------- annotation
    def annotate(self, from_index: int | None = None) -> None:
        """``annotate_message_groups``: re-group from the first un-annotated message (or ``from_index``), widened
        back to the start of the group before it and to any call a new result links to."""
        if not self.records:
            return
        if from_index is None:
            if self._first_unannotated is None:
                return
            from_index = self.position(self._first_unannotated)
        self._annotate_from(from_index)

    def _annotate_from(self, index: int) -> None:
        """One pass of ``annotate_message_groups`` from ``index``."""
        self._scan()
        recs = self.records
        start = self._widen_to_declarations(self._start_of_group_before(max(0, min(index, len(recs) - 1))))
        first_key = recs[start].key
        if self._first_unannotated is not None and self._first_unannotated.key >= first_key:
            self._first_unannotated = None
        # the pass leaves the full annotation as it is when nothing before its start is tied to what it regroups
        untied = start == 0 or (self._canonical and not _is_reasoning_only(recs[start - 1])
                                and not self._linked_across(start))
        self._assign_ids(start)
        uncut = self._regroup(start, self._spans(start))
        self._canonical = self._first_unannotated is None and (start == 0 or (untied and uncut))

    def _annotate_alone(self, position: int, r: Record) -> bool:
        """Annotate the just inserted ``r`` alone when that gives what the pass ``annotate(from_index=position)``
        would; False (nothing done) otherwise.

        It does when the annotation is the full one, no group is partly excluded (the pass would include it whole),
        ``r`` has no calls and is a span of its own at a span boundary with a group id of its own, and nothing
        before the pass's start shares a group or a call-result pair with what follows it: then the pass would
        rebuild the same groups from the start on, plus ``r``'s. Checking the records before the start costs about
        what the pass costs on the records after it, so it is only done when they are fewer.
        """
        recs = self.records
        if (not self._canonical or self._partial or self._first_unannotated is not None or r.calls
                or not _stands_alone(r)):
            return False
        if position + 1 < len(recs) and not recs[position + 1].span_head:
            return False
        start = self._start_of_group_before(position)
        if start > len(recs) - start:
            return False
        self._scan()
        if self._tied_across(start):
            return False
        if not r.message_id:
            r.message_id = free_message_id(position, len(recs), self._ids)
        gid = f"group_{r.message_id}"
        if gid in self._groups:
            return False
        role = r.message.role
        r.group_id, r.tag, r.span_head = gid, next(self._tags), True
        r.kind = role if role in ("system", "user") else "assistant_text"
        r.has_reasoning = "text_reasoning" in r.types
        self._included_tokens += self.tokens(r)
        g = self._groups[gid] = _Group(gid, [r])
        self._refresh(g)
        return True

    def _tied_across(self, start: int) -> bool:
        """A group or a call-result pair of the full scan has members both before ``start`` and from it on."""
        recs = self.records
        if start == 0:
            return False
        first_key = recs[start].key
        for q in islice(recs, start):
            assert q.group_id is not None  # the full scan groups every record
            if self._groups[q.group_id].members[-1].key >= first_key:
                return True
            if any(c.key >= first_key for c in q.candidate_of):
                return True
        return False

    def _linked_across(self, start: int) -> bool:
        """A result from ``start`` on has an unmatched declaration before it in the full scan."""
        first_key = self.records[start].key
        return any(c.key < first_key for r in self.records[start:] for c in r.candidates)

    def _start_of_group_before(self, index: int) -> int:
        return 0 if index <= 0 else self._start_of_group(index - 1)

    def _start_of_group(self, index: int) -> int:
        """Where the group of ``records[index]`` starts (``index`` itself when it has none)."""
        recs = self.records
        gid = recs[index].group_id
        if gid is None:
            return index
        while index > 0 and recs[index - 1].group_id == gid:
            index -= 1
        return index

    def _widen_to_declarations(self, start: int) -> int:
        """Back to the earliest call (and its group's start) that a result in the slice may link to."""
        recs = self.records
        first_key = recs[start].key
        matching = [c for r in recs[start:] for c in r.candidates if c.key < first_key]
        if not matching:
            return start
        return self._start_of_group(self.position(min(matching, key=_ORDER)))

    def _assign_ids(self, start: int) -> None:
        """Missing ids become ``msg_<absolute index>``; on collision the next free number from the slice's end."""
        recs = self.records
        end = len(recs)
        for i in range(start, end):
            r = recs[i]
            if not r.message_id:
                r.message_id = free_message_id(i, end, self._ids)

    def _spans(self, start: int) -> list[_Span]:
        """Group spans of ``records[start:]`` (absolute indices), tool results linked to their unique calls."""
        recs = self.records
        n = len(recs)
        spans: list[_Span] = []
        i = start
        while i < n:
            r = recs[i]
            role = r.message.role
            kind, end, reasoning = "assistant_text", i, "text_reasoning" in r.types
            if role in ("system", "user"):
                kind = role
            elif _is_reasoning_only(r) or _is_tool_call_assistant(r):
                j = i
                while j < n and _is_reasoning_only(recs[j]):
                    j += 1
                if j < n and _is_tool_call_assistant(recs[j]):
                    reasoning = reasoning or "text_reasoning" in recs[j].types or j > i
                    k = j + 1
                    while k < n and _is_reasoning_only(recs[k]):
                        reasoning, k = True, k + 1
                    while k < n and recs[k].message.role == "tool":
                        k += 1
                    kind, end = "tool_call", k - 1
            elif role == "tool":
                k = i + 1
                while k < n and recs[k].message.role == "tool":
                    k += 1
                kind, end, reasoning = "tool_call", k - 1, False
            spans.append(_Span(f"group_{r.message_id}", kind, i, end, reasoning))
            i = end + 1
        self._link(spans, start)
        return spans

    def _link(self, spans: list[_Span], start: int) -> None:
        """Union-find: a result whose call id matches exactly one earlier unmatched call joins the call's group."""
        if len(spans) < 2:
            return
        span_of = {m: s for s, span in enumerate(spans) for m in range(span.start, span.end + 1)}
        parent = list(range(len(spans)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        unmatched: dict[tuple[str, str], list[int]] = {}
        linked = False
        for m in range(start, len(self.records)):
            for role, call_type, call_id in self.records[m].calls:
                if role == "declare":
                    unmatched.setdefault((call_type, call_id), []).append(m)
                    continue
                candidates = unmatched.get((call_type, call_id))
                if candidates is None or len(candidates) != 1:
                    continue
                declaration, result = span_of[candidates.pop()], span_of[m]
                if declaration < result:
                    a, b = find(result), find(declaration)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
                        linked = True
        if not linked:
            return
        reasoning: dict[int, bool] = {}
        for s, span in enumerate(spans):
            reasoning[find(s)] = reasoning.get(find(s), False) or span.has_reasoning
        for s, span in enumerate(spans):
            span.group_id = spans[find(s)].group_id
            span.has_reasoning = reasoning[find(s)]

    def _regroup(self, start: int, spans: Sequence[_Span]) -> bool:
        """Give ``records[start:]`` the groups of ``spans`` (a linked group is included as a whole when any member
        is). False when a group had or has members before ``start`` too (the pass cut it)."""
        recs = self.records
        first_key = recs[start].key
        touched: dict[str, _Group] = {}
        cut = False
        for r in recs[start:]:  # the slice's members leave their groups (the tail of each)
            if r.group_id is None or r.group_id in touched:
                continue
            g = touched[r.group_id] = self._groups[r.group_id]
            kept = bisect_left(g.members, first_key, key=_ORDER)
            cut = cut or kept > 0
            for member in g.members[kept:]:
                g.count_out(member)
            del g.members[kept:]
        span_counts: dict[str, int] = {}
        for span in spans:
            span_counts[span.group_id] = span_counts.get(span.group_id, 0) + 1
        tags: dict[str, int] = {}
        linked: dict[str, list[Record]] = {}
        for span in spans:
            gid = span.group_id
            if gid not in tags:
                tags[gid] = next(self._tags)
                found = touched.get(gid) or self._groups.get(gid)
                if found is None:
                    found = self._groups[gid] = _Group(gid)
                cut = cut or bool(found.members)
                touched[gid] = found
            g = touched[gid]
            for m in range(span.start, span.end + 1):
                r = recs[m]
                if r.group_id is None and not r.excluded:
                    self._included_tokens += self.tokens(r)
                r.group_id, r.tag, r.kind, r.has_reasoning = gid, tags[gid], span.kind, span.has_reasoning
                r.span_head = m == span.start
                g.members.append(r)
                g.count_in(r)
                if span_counts[gid] > 1:
                    linked.setdefault(gid, []).append(r)
        for members in linked.values():
            if any(not r.excluded for r in members):
                for r in members:
                    if r.excluded:
                        self._include(r)
        for g in touched.values():
            self._refresh(g)
        return not cut

    # ---------------------------------------------------------------------------------------------- call scan
    def _scan(self) -> None:
        """Bring the in-order scan of calls and results up to date (from scratch after a change before its end)."""
        if not self._scan_valid:
            self._unmatched = {}
            for r in self.records:
                r.candidates, r.candidate_of = (), []
            self._unscanned, self._scan_valid = list(self.records), True
        for r in self._unscanned:
            self._scan_one(r)
        self._unscanned = []

    def _scan_one(self, r: Record) -> None:
        """A result's candidates are the unmatched declarations of its call; exactly one is then matched."""
        found: list[Record] = []
        for role, call_type, call_id in r.calls:
            if role == "declare":
                self._unmatched.setdefault((call_type, call_id), []).append(r)
                continue
            candidates = self._unmatched.get((call_type, call_id))
            if not candidates:
                continue
            found.extend(candidates)
            for c in candidates:
                c.candidate_of.append(r)
            if len(candidates) == 1:
                candidates.pop()
        r.candidates = tuple(found)


# ------------------------------------------------------------------------------------------------- strategies
@dataclass
class Outcome:
    """What one strategy call did: its own condition fired, the inclusion changed, a short account."""

    triggered: bool
    changed: bool
    note: str = ""
    model_calls: list[dict[str, int]] = field(default_factory=list)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class TruncationStrategy:
    """``TruncationStrategy(max_n, compact_to, tokenizer, preserve_system, preserve_first_user_group)``."""

    REASON = "truncation"

    def __init__(self, max_n: int, compact_to: int, use_tokens: bool = True, preserve_system: bool = True,
                 preserve_first_user_group: bool = False) -> None:
        if max_n <= 0:
            raise ValueError("max_n must be greater than 0.")
        if compact_to <= 0:
            raise ValueError("compact_to must be greater than 0.")
        if compact_to > max_n:
            raise ValueError("compact_to must be less than or equal to max_n.")
        self.max_n, self.compact_to, self.use_tokens = max_n, compact_to, use_tokens
        self.preserve_system, self.preserve_first_user_group = preserve_system, preserve_first_user_group

    def metric(self, h: History) -> int:
        return h.included_tokens() if self.use_tokens else h.included_messages()

    def weight(self, h: History, r: Record) -> int:
        return h.tokens(r) if self.use_tokens else 1

    def __call__(self, h: History) -> Outcome:
        metric = self.metric(h)  # kept up to date below instead of recounted before every group
        if metric <= self.max_n:
            return Outcome(False, False)
        protected = set(h.system_groups()) if self.preserve_system else set()
        if self.preserve_first_user_group:
            first_user = h.first_user_group()
            if first_user is not None:
                protected.add(first_user)
        protected |= h.minimum_retained()
        changed, removed = False, 0
        # oldest first; a group already wholly excluded as truncation would only be excluded again
        for gid in h.groups_in_order(unless_excluded_as=self.REASON):
            if metric <= self.compact_to:
                break
            if gid in protected:
                continue
            group_changed = False
            for r in h.members(gid):
                if not r.excluded:
                    group_changed, metric = True, metric - self.weight(h, r)
                h.exclude(r, self.REASON)
            changed = changed or group_changed
            removed += group_changed
        unit = "tokens" if self.use_tokens else "messages"
        note = (f"over max_n={self.max_n} {unit}: excluded the {_plural(removed, 'oldest group')} toward "
                f"compact_to={self.compact_to}" if changed else "over max_n, but only protected groups are left")
        return Outcome(True, changed, note)


class SlidingWindowStrategy:
    """``SlidingWindowStrategy(keep_last_groups, preserve_system)``: on every call, keep the newest N included
    non-system groups (and system groups)."""

    REASON = "sliding_window"

    def __init__(self, keep_last_groups: int, preserve_system: bool = True) -> None:
        if keep_last_groups <= 0:
            raise ValueError(f"keep_last_groups must be more than 0, got {keep_last_groups}")
        self.keep_last_groups, self.preserve_system = keep_last_groups, preserve_system

    def __call__(self, h: History) -> Outcome:
        included = h.included_groups()
        keep = set(islice(h.included_non_system_groups(newest_first=True), self.keep_last_groups))
        if self.preserve_system:
            keep.update(h.system_groups())
        dropped = [g for g in included if g not in keep]
        changed = h.exclude_groups(dropped, self.REASON)
        return Outcome(changed, changed, f"excluded {_plural(len(dropped), 'group')} outside the last "
                                         f"{self.keep_last_groups}" if changed else "")


class _ToolGroupStrategy:
    """Shared part of the two strategies that keep only the newest N included tool-call groups."""

    def __init__(self, keep_last_tool_call_groups: int = 1) -> None:
        if keep_last_tool_call_groups < 0:
            raise ValueError("keep_last_tool_call_groups must be greater than or equal to 0.")
        self.keep = keep_last_tool_call_groups

    def older_tool_groups(self, h: History) -> list[str]:
        tool_groups = h.included_tool_groups()
        if len(tool_groups) <= self.keep:
            return []
        return tool_groups[: len(tool_groups) - self.keep] if self.keep else tool_groups


class SelectiveToolCallCompactionStrategy(_ToolGroupStrategy):
    """``SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)``: exclude older tool-call groups."""

    REASON = "tool_call_compaction"

    def __call__(self, h: History) -> Outcome:
        older = self.older_tool_groups(h)
        changed = h.exclude_groups(older, self.REASON) if older else False
        return Outcome(changed, changed, f"excluded {_plural(len(older), 'older tool-call group')}" if changed else "")


SUMMARY_PREFIX, SUMMARY_SUFFIX, TRUNCATION_MARKER, SUMMARY_MAX_CHARS = "[Tool results: ", "]", "... [truncated]", 4096


def tool_results_text(labels: Sequence[str]) -> str:
    """``[Tool results: name: result; …]`` capped at 4096 characters."""
    label = "; ".join(labels) if labels else "no results"
    text = f"{SUMMARY_PREFIX}{label}{SUMMARY_SUFFIX}"
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    allowed = SUMMARY_MAX_CHARS - len(SUMMARY_PREFIX) - len(TRUNCATION_MARKER) - len(SUMMARY_SUFFIX)
    if allowed <= 0:
        return f"{SUMMARY_PREFIX}{TRUNCATION_MARKER}{SUMMARY_SUFFIX}"
    return f"{SUMMARY_PREFIX}{label[:allowed].rstrip()}{TRUNCATION_MARKER}{SUMMARY_SUFFIX}"


def _result_labels(members: Sequence[Record]) -> list[str]:
    names: dict[str, str] = {}
    live = [r for r in members if not r.excluded]
    for r in live:
        for c in contents_of(r.message):
            if c["type"] == "function_call" and c.get("call_id") and c.get("name"):
                names[c["call_id"]] = c["name"]
    labels: list[str] = []
    for r in live:
        for c in contents_of(r.message):
            if c["type"] == "function_result":
                result = c.get("result")
                text = result if isinstance(result, str) else str(result)
                name = names.get(c.get("call_id") or "", "")
                labels.append((f"{name}: {text}" if name else text).strip())
    return labels


class ToolResultCompactionStrategy(_ToolGroupStrategy):
    """``ToolResultCompactionStrategy(keep_last_tool_call_groups=1)``: every older tool-call group is excluded and
    an assistant ``[Tool results: …]`` message is inserted before it."""

    REASON = "tool_result_compaction"

    def __call__(self, h: History) -> Outcome:
        older = self.older_tool_groups(h)
        changed = False
        for gid in older:
            members = h.members(gid)
            text = tool_results_text(_result_labels(members))
            summary_id = f"tool_summary_{gid}"
            for r in members:
                changed = h.exclude(r, self.REASON) or changed
            digest = Message(role="assistant", texts=(text,), meta={"message_id": summary_id})
            entry = inserted(digest, "digest", covers=[r.entry for r in members],
                             strategy="ToolResultCompactionStrategy", summary_of_group_ids=[gid])
            start = h.start(gid)
            h.insert(0 if start is None else start, entry)
        return Outcome(changed, changed, f"collapsed {_plural(len(older), 'older tool-call group')} into "
                                         "[Tool results: …] messages" if changed else "")


# ---------------------------------------------------------------------------------------------- summarization
DEFAULT_PYTHON_SUMMARY_PROMPT = (
    "Summarize the whole conversation so far in at most five sentences. Cover what both the user and the assistant "
    "contributed, keep the context needed to carry on, fold in any earlier summary without dropping its details, "
    "and stress the points that matter most. Do not critique, correct, interpret or speculate, do not point out "
    "mistakes, and do not mention anything that is not in the conversation."
)


def _value_text(value: Any) -> str:
    """How the framework renders arguments and results as text: strings as-is, mappings as JSON."""
    import json

    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _render_item(item: Mapping[str, Any]) -> str:
    """A function result item in the transcript: its text, an error label, else ``<type> content (details)`` (an
    empty text item too)."""
    if item.get("type") == "text" and item.get("text"):
        text: str = item["text"]
        return text
    if item.get("type") == "error":
        label = item.get("message") or ""
        if item.get("error_details"):
            label = f"{label}: {item['error_details']}" if label else item["error_details"]
        if item.get("error_code"):
            label = f"error({item['error_code']}): {label}"
        return label
    details = [f"media_type={item['media_type']}"] if item.get("media_type") else []
    if item.get("type") == "uri" and item.get("uri"):
        details.append(f"uri={item['uri']}")
    path = (item.get("additional_properties") or {}).get("path")
    if item.get("type") == "data" and isinstance(path, str) and path:
        details.append(f"path={path}")
    details += [f"{key}={item[key]}" for key in ("file_id", "name") if item.get(key)]
    return f"{item.get('type')} content" + (f" ({', '.join(details)})" if details else "")


def _render_content(c: Mapping[str, Any]) -> str:
    call_id = f" [call_id={c['call_id']}]" if c.get("call_id") else ""
    if c["type"] == "function_call":
        args = _value_text(c["arguments"]) if c.get("arguments") is not None else ""
        return f"function_call {c.get('name') or ''}({args}){call_id}"
    if c["type"] == "function_result":
        text = "\n".join(label for i in c.get("items") or () if (label := _render_item(i)))
        if not text:
            text = _value_text(c["result"]) if c.get("result") is not None else "no result"
        if c.get("exception") is not None:
            text = f"error: {text}"
        return f"function_result: {text}{call_id}"
    return ""


def transcript_line(number: int, message: Message) -> str:
    """``<n>. [<role>] <content>``: rendered parts joined by ``; ``, consecutive texts merged with a space."""
    parts: list[str] = []
    pending: list[str] = []
    contents = contents_of(message)
    for c in contents:
        rendered = _render_content(c)
        if rendered:
            if pending:
                parts.append(" ".join(pending))
                pending = []
            parts.append(rendered)
        elif c["type"] == "text" and c.get("text"):
            pending.append(c["text"])
    if pending:
        parts.append(" ".join(pending))
    body = "; ".join(parts) or ", ".join(c["type"] for c in contents)
    return f"{number}. [{message.role}] {body}"


def transcript(messages: Sequence[Message], start: int = 1) -> str:
    return "\n".join(transcript_line(i, m) for i, m in enumerate(messages, start=start))


class SummarizationStrategy:
    """``SummarizationStrategy(client, target_count=4, threshold=2, prompt, max_summary_input_tokens=8000,
    tokenizer)``."""

    REASON = "summarized"

    def __init__(self, summarizer: Summarizer, count_text: Callable[[str], int], counter: Counter, target_count: int = 4,
                 threshold: int | None = 2, prompt: str | None = None, max_summary_input_tokens: int | None = 8000,
                 summary_tokens: int = 512) -> None:
        if target_count <= 0:
            raise ValueError("target_count must be greater than 0.")
        if threshold is not None and threshold < 0:
            raise ValueError("threshold must be greater than or equal to 0.")
        if max_summary_input_tokens is not None and max_summary_input_tokens <= 0:
            raise ValueError("max_summary_input_tokens must be greater than 0.")
        self.summarizer, self.count_text, self.counter = summarizer, count_text, counter
        self.target_count, self.threshold = target_count, threshold or 0
        self.prompt = prompt or DEFAULT_PYTHON_SUMMARY_PROMPT
        self.max_summary_input_tokens = max_summary_input_tokens
        self.summary_tokens = summary_tokens
        self.consecutive_failures = 0

    def _kept(self, h: History) -> set[str]:
        """The newest included non-system groups holding at least target_count included messages."""
        keep: set[str] = set()
        retained = 0
        for gid in h.included_non_system_groups(newest_first=True):
            if retained >= self.target_count and keep:
                break
            keep.add(gid)
            retained += sum(not r.excluded for r in h.members(gid))
        return keep

    @staticmethod
    def _candidates(h: History, keep: set[str]) -> Iterator[tuple[str, list[Record]]]:
        """The included non-system groups older than the kept ones, oldest first, with their included messages."""
        for gid in h.included_non_system_groups():
            if gid in keep:
                return
            yield gid, [r for r in h.members(gid) if not r.excluded]

    def _select(self, candidates: Iterable[tuple[str, list[Record]]]) -> tuple[list[str], list[Record]]:
        """Whole groups, oldest first, while prompt + transcript fit the input budget (a leading misfit is
        skipped; after the first accepted group the first misfit stops)."""
        if self.max_summary_input_tokens is None:
            groups = list(candidates)
            return [g for g, _ in groups], [r for _, rs in groups for r in rs]
        ids: list[str] = []
        chosen: list[Record] = []
        prompt_tokens = self.count_text(self.prompt)
        separator = self.count_text("\n")
        text_tokens = 0
        for gid, records in candidates:
            candidate = text_tokens + self.count_text(transcript([r.message for r in records], len(chosen) + 1))
            if chosen:
                candidate += separator
            if prompt_tokens + candidate > self.max_summary_input_tokens:
                if not chosen:
                    continue
                break
            ids.append(gid)
            chosen.extend(records)
            text_tokens = candidate
        return ids, chosen

    def _fail(self, reason: str) -> Outcome:
        self.consecutive_failures += 1
        repeated = f" ({self.consecutive_failures} failures in a row)" if self.consecutive_failures >= 3 else ""
        return Outcome(True, False, f"skipped: {reason}{repeated}")

    def __call__(self, h: History) -> Outcome:
        from ..summarizers import SummaryRequest

        count = h.included_non_system_messages()
        if count <= self.target_count + self.threshold:
            return Outcome(False, False)
        candidates = self._candidates(h, self._kept(h))
        first = next(candidates, None)
        if first is None:
            return Outcome(True, False, "nothing older than the retained groups")
        ids, chosen = self._select(chain([first], candidates))
        if not chosen:
            return self._fail("no complete message group fits within max_summary_input_tokens")
        messages = [r.message for r in chosen]
        request = SummaryRequest(self.prompt, transcript(messages), tuple(messages), self.summary_tokens)
        try:
            call = self.summarizer.summarize(request, self.counter)
        except Exception as exc:  # noqa: BLE001 - the framework catches any summarizer failure
            return self._fail(f"summary generation failed ({exc})")
        text = call.text.strip()
        if not text:
            return self._fail("the summarizer returned no text")
        self.consecutive_failures = 0
        summary_id = f"summary_{len(h.records)}"
        position = min(start for g in ids if (start := h.start(g)) is not None)
        for r in chosen:
            h.exclude(r, self.REASON)
        summary = Message(role="assistant", texts=(text,), meta={"message_id": summary_id})
        entry = inserted(summary, "summary", covers=[r.entry for r in chosen], strategy="SummarizationStrategy",
                         backend=call.backend, simulated=call.simulated, summary_of_group_ids=ids)
        h.insert(position, entry)
        notice = f" ({call.notice})" if call.notice else ""
        return Outcome(True, True, f"{count} messages > target_count + threshold: summarized "
                                   f"{_plural(len(chosen), 'message')} in {_plural(len(ids), 'group')}{notice}",
                       [call.usage()])


# ------------------------------------------------------------------------------------------ composed strategies
class TokenBudgetComposedStrategy:
    """``TokenBudgetComposedStrategy(token_budget, tokenizer, strategies, early_stop=True)`` with its fallback."""

    def __init__(self, token_budget: int, strategies: Sequence[Callable[[History], Outcome]],
                 early_stop: bool = True) -> None:
        self.token_budget, self.strategies, self.early_stop = token_budget, list(strategies), early_stop

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        if h.included_tokens() <= self.token_budget:
            return Outcome(False, False)
        changed, notes, calls = False, [], []
        for i, strategy in enumerate(self.strategies, start=1):
            outcome = strategy(h)
            changed = changed or outcome.changed
            calls += outcome.model_calls
            if outcome.note:
                label = strategy.name if isinstance(strategy, NestedPythonChild) else type(strategy).__name__
                notes.append(f"{i}. {label}: {outcome.note}")
            h.annotate()
            if self.early_stop and h.included_tokens() <= self.token_budget:
                return Outcome(True, changed, "; ".join(notes), calls)
        if h.included_tokens() <= self.token_budget:
            return Outcome(True, changed, "; ".join(notes), calls)
        h.annotate()
        retained = h.minimum_retained()
        tokens = h.included_tokens()  # kept up to date below instead of recounted after every group
        # oldest first: non-system groups (but those already wholly excluded as the fallback), then system groups
        passes: tuple[tuple[str, Callable[[], Iterable[str]], Callable[[str | None], bool]], ...] = (
            ("token_budget_fallback", lambda: h.groups_in_order(unless_excluded_as="token_budget_fallback"),
             lambda k: k != "system"),
            ("token_budget_fallback_strict", h.system_groups, lambda k: k == "system"))
        for reason, groups, wanted in passes:
            removed = 0
            for gid in groups():
                if not wanted(h.kind(gid)) or gid in retained:
                    continue
                for r in h.members(gid):
                    if not r.excluded:
                        changed, removed, tokens = True, removed + 1, tokens - h.tokens(r)
                    h.exclude(r, reason)
                if tokens <= self.token_budget:
                    break
            if removed:
                notes.append(f"{reason}: excluded {_plural(removed, 'message')}")
            if tokens <= self.token_budget:
                break
        return Outcome(True, changed, "; ".join(notes), calls)


class NestedPythonChild:
    """Any registered strategy as a ``TokenBudgetComposedStrategy`` child (see :mod:`._nesting`): it acts on the
    included messages with its own trigger; what it replaced becomes the record's new content, what it removed is
    excluded (reason: the child's strategy name), and what it inserted becomes a new message of the list (the child's
    role and text, an id of its own, ``_summary_of_message_ids`` / ``_summary_of_group_ids`` links to the messages it
    covers) right after the message it followed."""

    def __init__(self, nested: NestedStrategy) -> None:
        self.nested = nested

    @property
    def name(self) -> str:
        return self.nested.name

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        records = h.included()
        result = self.nested.run([r.entry for r in records])
        if not result.changed:
            return Outcome(result.triggered, False, result.note, result.model_calls)
        for position, message in result.replaced.items():
            r = records[position]
            h.replace_content(r, r.entry.replaced(message, nested_in=self.name))
        removed = [records[k] for k in result.removed]
        for r in removed:
            h.exclude(r, self.name)
        after: dict[int | None, Record] = {}
        for previous, entry in result.inserted:
            anchor = after.get(previous) or (records[previous] if previous is not None else None)
            if anchor is not None:
                position = h.position(anchor) + 1
            else:
                position = h.position(records[0]) if records else len(h.records)
            h.insert(position, self._entry(h, entry, removed))
            after[previous] = h.records[position]
        if result.replaced:  # new content may change a message's kind (e.g. a tool call's inputs cleared)
            h.annotate(from_index=min(h.position(records[k]) for k in result.replaced))
        return Outcome(True, True, describe(result), result.model_calls)

    def _entry(self, h: History, entry: Entry, removed: Sequence[Record]) -> Entry:
        """The child's inserted entry with an id of its own and the framework's ``_summary_of_*`` links."""
        covered = set(entry.represents)
        links = [r for r in removed if (r.entry.origin in covered if r.entry.inserted is None
                                        else bool(covered.intersection(r.entry.represents)))]
        number = len(h.records)
        while h.has_message_id(f"nested_summary_{number}"):
            number += 1
        message_ids = [r.message_id for r in links if r.message_id]
        group_ids = list(dict.fromkeys(r.group_id for r in links if r.group_id))
        group = {"_summary_of_message_ids": message_ids, "_summary_of_group_ids": group_ids}
        message = replace(entry.message, meta={**entry.message.meta, "message_id": f"nested_summary_{number}",
                                               "_group": group})
        nested = inserted_entry(entry, self.name, message)
        return replace(nested, info={**nested.info, "summary_of_message_ids": message_ids,
                                     "summary_of_group_ids": group_ids})


class ContextWindowCompactionStrategy:
    """``ContextWindowCompactionStrategy(max_context_window_tokens, max_output_tokens, tokenizer,
    tool_eviction_threshold=0.5, truncation_threshold=0.8, keep_last_tool_call_groups=4,
    preserve_first_user_group=False)``."""

    def __init__(self, max_context_window_tokens: int, max_output_tokens: int, tool_eviction_threshold: float = 0.5,
                 truncation_threshold: float = 0.8, keep_last_tool_call_groups: int = 4,
                 preserve_first_user_group: bool = False) -> None:
        if max_context_window_tokens <= 0:
            raise ValueError("max_context_window_tokens must be positive.")
        if max_output_tokens < 0 or max_output_tokens >= max_context_window_tokens:
            raise ValueError("max_output_tokens must be >= 0 and < max_context_window_tokens.")
        if not 0.0 < tool_eviction_threshold <= 1.0:
            raise ValueError("tool_eviction_threshold must be in (0.0, 1.0].")
        if not 0.0 < truncation_threshold <= 1.0:
            raise ValueError("truncation_threshold must be in (0.0, 1.0].")
        if truncation_threshold < tool_eviction_threshold:
            raise ValueError("truncation_threshold must be >= tool_eviction_threshold.")
        self.input_budget = max_context_window_tokens - max_output_tokens
        self.tool_eviction_tokens = int(self.input_budget * tool_eviction_threshold)
        self.truncation_tokens = int(self.input_budget * truncation_threshold)
        self.tool_eviction = ToolResultCompactionStrategy(keep_last_tool_call_groups)
        self.truncation = TruncationStrategy(self.truncation_tokens, self.tool_eviction_tokens,
                                             preserve_first_user_group=preserve_first_user_group)

    def lines(self) -> dict[str, float]:
        return {"trigger": self.tool_eviction_tokens, "truncation": self.truncation_tokens,
                "input_budget": self.input_budget}

    def __call__(self, h: History) -> Outcome:
        h.annotate()
        changed, notes, triggered = False, [], False
        if h.included_tokens() > self.tool_eviction_tokens:
            triggered = True
            outcome = self.tool_eviction(h)
            changed = outcome.changed
            notes.append(f"tool eviction: {outcome.note or 'no older tool-call group'}")
            h.annotate()
        if h.included_tokens() > self.truncation_tokens:
            triggered = True
            outcome = self.truncation(h)
            changed = outcome.changed or changed
            notes.append(f"truncation: {outcome.note}")
        if h.included_tokens() > self.input_budget:
            notes.append(f"warning: still over the input budget of {self.input_budget} tokens")
        return Outcome(triggered, changed, "; ".join(notes))


# ------------------------------------------------------------------------------------------------------ runner
def token_counter(counter: Counter) -> Callable[[Record], int]:
    """Per-message token counts: ``CharacterEstimatorTokenizer`` over the message JSON (with the id the framework
    assigned) for ``maf-python``, else the given counter applied to the single message."""
    if isinstance(counter, MafPythonCounter):
        return lambda r: counter.tokens(r.message, None if own_message_id(r.message) else r.message_id or None)
    return lambda r: counter.count((r.message,))


def text_counter(counter: Counter) -> Callable[[str], int]:
    """Token count of a plain text (the summarization input budget): ``max(1, len // 4)`` for ``maf-python``."""
    if counter.spec == "maf-python":
        return lambda text: max(1, len(text) // 4)
    return lambda text: counter.count((Message("user", (text,)),))


class PythonRunner(Runner):
    """A Python strategy applied before every model call, as ``apply_compaction`` does in the function loop."""

    persistence = "flag"

    def __init__(self, strategy: Callable[[History], Outcome], counter: Counter,
                 lines: Mapping[str, float] | None = None) -> None:
        self.strategy = strategy
        self.history = History(token_counter(counter))
        self._lines = dict(lines or {})

    def append(self, entry: Entry) -> None:
        self.history.append(entry)

    def entries(self) -> Sequence[Entry]:
        return self.history.entries()

    def first_change(self) -> int:
        return self.history.take_first_change()

    def measure(self) -> int:
        self.history.annotate()
        return self.history.included_tokens()

    def lines(self) -> dict[str, float]:
        return self._lines

    def before_call(self) -> CallOutcome:
        before = self.measure()
        outcome = self.strategy(self.history)
        self.history.annotate()
        return self.outcome(before, triggered=outcome.triggered, compacted=outcome.changed, notes=(outcome.note,),
                            model_calls=outcome.model_calls)


# ------------------------------------------------------------------------------------------------ registrations
TOKENIZERS = ("character_estimator", "replay_counter")
TOKENIZER_PARAM = Param(
    "tokenizer", "choice", "character_estimator", "tokenizer (the strategy's, or apply_compaction's for the counts "
    "shown): `character_estimator` is the framework's CharacterEstimatorTokenizer (len(message JSON) // 4 per message, "
    "the maf-python counter); `replay_counter` counts each message with the replay's --counter instead.",
    choices=TOKENIZERS)


def _counter(params: Mapping[str, Any], ctx: RunContext) -> Counter:
    return make_counter("maf-python") if params.get("tokenizer", TOKENIZERS[0]) == TOKENIZERS[0] else ctx.counter


StrategyMaker = Callable[[Mapping[str, Any], RunContext], tuple[Callable[[History], Outcome], dict[str, Any]]]


def _make_truncation(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    tokens = p["metric"] == "tokens"
    max_n = p["max_n"] or (int(ctx.context_window * ctx.compact_at) if tokens else 0)
    compact_to = p["compact_to_n"] or (int(ctx.context_window * ctx.compact_to) if tokens else 0)
    strategy = TruncationStrategy(max_n, compact_to, tokens, p["preserve_system"], p["preserve_first_user_group"])
    return strategy, ({"trigger": max_n, "target": compact_to} if tokens else {})


def _make_sliding_window(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    return SlidingWindowStrategy(p["keep_last_groups"], p["preserve_system"]), {}


def _make_selective(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    return SelectiveToolCallCompactionStrategy(p["keep_last_tool_call_groups"]), {}


def _make_tool_result(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    return ToolResultCompactionStrategy(p["keep_last_tool_call_groups"]), {}


def _make_summarization(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    counter = _counter(p, ctx)
    strategy = SummarizationStrategy(ctx.summarizer(p), text_counter(counter), counter, p["target_count"],
                                     p["threshold"], p["prompt"] or None, p["max_summary_input_tokens"] or None,
                                     p["summary_tokens"])
    return strategy, {}


def _make_context_window(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    strategy = ContextWindowCompactionStrategy(p["max_context_window_tokens"] or ctx.context_window,
                                               p["max_output_tokens"], p["tool_eviction_threshold"],
                                               p["truncation_threshold"], p["keep_last_tool_call_groups"],
                                               p["preserve_first_user_group"])
    return strategy, strategy.lines()


CHILDREN: dict[str, StrategyMaker] = {
    "truncation": _make_truncation,
    "sliding_window": _make_sliding_window,
    "selective_tool_call": _make_selective,
    "tool_result_compaction": _make_tool_result,
    "summarization": _make_summarization,
    "context_window": _make_context_window,
}


def _make_token_budget(p: Mapping[str, Any], ctx: RunContext) -> tuple[Callable[[History], Outcome], dict[str, Any]]:
    from .base import get_strategy

    budget = p["token_budget"] or int(ctx.context_window * ctx.compact_at)
    children: list[Callable[[History], Outcome]] = []
    shared = {k: p[k] for k in ("tokenizer", *(s.name for s in SUMMARIZER_PARAMS))}
    for position, (name, args) in enumerate(parse_pipeline(p["children"], CHILDREN), start=1):
        short = native_name(name, "agent_framework_python", CHILDREN)
        if short is None:
            children.append(NestedPythonChild(make_nested(name, args, shared, ctx,
                                                          f"strategies child {position} ({name})")))
            continue
        values = native_child_values(get_strategy(f"agent_framework_python.{short}"), args, shared,
                                     f"strategies child {position} ({short})")
        children.append(CHILDREN[short](values, ctx)[0])
    return TokenBudgetComposedStrategy(budget, children, p["early_stop"]), {"trigger": budget}


def _builder(make: StrategyMaker) -> Callable[[Mapping[str, Any], RunContext], Runner]:
    def build(params: Mapping[str, Any], ctx: RunContext) -> Runner:
        strategy, lines = make(params, ctx)
        return PythonRunner(strategy, _counter(params, ctx), lines)

    return build


KEEP_TOOL_GROUPS = Param("keep_last_tool_call_groups", "int", 1, "keep_last_tool_call_groups: the newest included "
                         "tool-call groups left as they are (0 = none).", minimum=0, maximum=500)
NO_TRIGGER = " It has no trigger and acts before every model call: compact_at and compact_to are not used."

SPECS: tuple[tuple[str, str, str, tuple[Param, ...], StrategyMaker, Policy, str], ...] = (
    ("truncation", "TruncationStrategy",
     "When the included tokens (or messages) exceed max_n, excludes whole groups oldest first until the count is at "
     "most compact_to. System groups, optionally the first user group, and the newest non-system group are kept. "
     "max_n / compact_to default to context_window × compact_at / compact_to.",
     (Param("max_n", "int", 0, "max_n: trigger when the metric is above this. 0 = context_window × compact_at (token "
            "metric only).", minimum=0, maximum=10_000_000),
      Param("compact_to_n", "int", 0, "compact_to: exclude groups until the metric is at most this. 0 = "
            "context_window × compact_to (token metric only).", minimum=0, maximum=10_000_000),
      Param("metric", "choice", "tokens", "What max_n and compact_to count: `tokens` (a tokenizer is given) or "
            "`messages` (no tokenizer: included message count).", choices=("tokens", "messages")),
      Param("preserve_system", "bool", True, "preserve_system: never exclude system groups."),
      Param("preserve_first_user_group", "bool", False, "preserve_first_user_group: never exclude the first user "
            "group (the original request)."),
      TOKENIZER_PARAM),
     _make_truncation, "threshold", "truncationstrategy"),
    ("sliding_window", "SlidingWindowStrategy",
     "Keeps only the newest keep_last_groups non-system groups (and system groups); everything older is excluded, "
     "the user's request included." + NO_TRIGGER,
     (Param("keep_last_groups", "int", 8, "keep_last_groups: how many of the newest non-system groups stay "
            "included (the framework requires it; 8 is this tool's default).", minimum=1, maximum=500),
      Param("preserve_system", "bool", True, "preserve_system: system groups always stay included."),
      TOKENIZER_PARAM),
     _make_sliding_window, "none", "slidingwindowstrategy"),
    ("selective_tool_call", "SelectiveToolCallCompactionStrategy",
     "Excludes every tool-call group (the call with its results) except the newest keep_last_tool_call_groups."
     + NO_TRIGGER,
     (KEEP_TOOL_GROUPS, TOKENIZER_PARAM),
     _make_selective, "none", "selectivetoolcallcompactionstrategy"),
    ("tool_result_compaction", "ToolResultCompactionStrategy",
     "Replaces every tool-call group except the newest keep_last_tool_call_groups with one assistant message "
     "'[Tool results: name: result; …]' (at most 4096 characters) placed before it." + NO_TRIGGER,
     (KEEP_TOOL_GROUPS, TOKENIZER_PARAM),
     _make_tool_result, "none", "toolresultcompactionstrategy"),
    ("summarization", "SummarizationStrategy",
     "When more than target_count + threshold non-system messages are included, summarizes the older groups "
     "(a numbered transcript, within max_summary_input_tokens) into one plain assistant message and keeps about "
     "target_count messages. Counts messages, not tokens: compact_at and compact_to are not used.",
     (Param("target_count", "int", 4, "target_count: non-system messages to keep after summarizing.", minimum=1,
            maximum=1000),
      Param("threshold", "int", 2, "threshold: extra messages allowed above target_count before summarizing.",
            minimum=0, maximum=1000),
      Param("max_summary_input_tokens", "int", 8000, "max_summary_input_tokens: token budget of the summarizer "
            "request (prompt + transcript); whole groups are taken oldest first. 0 = no budget (None).",
            minimum=0, maximum=1_000_000),
      Param("prompt", "str", "", "prompt: the summarizer instruction. Empty = a paraphrase of the framework's "
            "default (at most five sentences, both sides, keep earlier summaries).", advanced=True),
      TOKENIZER_PARAM, *SUMMARIZER_PARAMS),
     _make_summarization, "none", "summarizationstrategy"),
    ("token_budget_composed", "TokenBudgetComposedStrategy",
     "When the included tokens exceed token_budget, runs its child strategies in order until under budget, then "
     "falls back to excluding the oldest groups (system groups last, the newest group never). Any registered "
     "strategy may be a child, by its full name.",
     (Param("token_budget", "int", 0, "token_budget: the included-token limit. 0 = context_window × compact_at.",
            minimum=0, maximum=10_000_000),
      Param("children", "str", "tool_result_compaction(keep_last_tool_call_groups=4); sliding_window("
            "keep_last_groups=24)", "strategies: the child strategies in order, separated by ';', each with its own "
            "parameters in parentheses: truncation, sliding_window, selective_tool_call, tool_result_compaction, "
            "summarization, context_window, or any registered strategy by its full name, e.g. "
            "`anthropic.clear_tool_uses_20250919(keep=2); sliding_window(keep_last_groups=12)` (the framework has "
            "no default list; this is this tool's). A nested strategy of another family uses its own trigger or "
            "threshold (compact_at / compact_to of the replay's context window for threshold strategies), acts on "
            "the included messages, and its edits are written back: replaced content in place, removed messages "
            "excluded (reason: its name), summaries as new messages linked to what they cover."),
      Param("early_stop", "bool", True, "early_stop: stop after the first child that brings the tokens within "
            "the budget."),
      TOKENIZER_PARAM, *SUMMARIZER_PARAMS),
     _make_token_budget, "threshold", "tokenbudgetcomposedstrategy"),
    ("context_window", "ContextWindowCompactionStrategy",
     "Input budget = window − max_output_tokens. Above half of it, collapses all but the newest 4 tool-call groups "
     "into [Tool results: …]; above 80%, excludes the oldest groups down to half the budget. Uses only the context "
     "window: compact_at and compact_to are not used.",
     (Param("max_context_window_tokens", "int", 0, "max_context_window_tokens: the model's window. 0 = the replay's "
            "context window setting.", minimum=0, maximum=10_000_000),
      Param("max_output_tokens", "int", 16_384, "max_output_tokens: the model's output limit, subtracted from the "
            "window.", minimum=0, maximum=1_000_000),
      Param("tool_eviction_threshold", "float", 0.5, "tool_eviction_threshold: share of the input budget above "
            "which older tool-call groups are collapsed.", minimum=0.0, maximum=1.0),
      Param("truncation_threshold", "float", 0.8, "truncation_threshold: share of the input budget above which the "
            "oldest groups are excluded (down to tool_eviction_threshold).", minimum=0.0, maximum=1.0),
      Param("keep_last_tool_call_groups", "int", 4, "keep_last_tool_call_groups: tool-call groups never collapsed.",
            minimum=0, maximum=500),
      Param("preserve_first_user_group", "bool", False, "preserve_first_user_group: truncation keeps the first "
            "user group."),
      TOKENIZER_PARAM),
     _make_context_window, "window", "contextwindowcompactionstrategy"),
)

register_specs(SPECS, "agent_framework_python", "Agent Framework (Python)", DOCS, _builder)
