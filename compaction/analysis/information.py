"""Information-loss signals: was something a setup removed needed later in the real run?

A heuristic, and presented as one. The log records what the real agent did next; if a later assistant message or
tool call quotes a distinctive identifier (a path, a dotted or snake_case name, a long number, a hash) that at that
moment appeared only in a message the setup had pruned, collapsed or dropped, that content was probably needed. And
when the agent calls the same tool with the same arguments after the setup removed that call's result, the setup
would have forced a re-fetch.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from ..conversation import Conversation
from ..conversation import Message
from ..history import Fate
from ..identifiers import identifier_set
from ..identifiers import identifier_sets
from ..replay import Replay


def distinctive_terms(text: str) -> set[str]:
    """Identifiers, paths, long numbers and hashes in ``text``."""
    return identifier_set(text)


def _message_text(m: Message) -> str:
    if m.tool_result is not None:
        return m.tool_result.text
    calls = " ".join(json.dumps(c.arguments, ensure_ascii=False) for c in m.tool_calls)
    return f"{m.text} {calls}"


@dataclass
class LossEvidence:
    """Why one removed message looks needed later."""

    index: int
    fate: str
    removed_at_step: int
    quoted: dict[int, list[str]] = field(default_factory=dict)  # later message index -> terms quoted
    refetched_at: list[int] = field(default_factory=list)  # later assistant message indices

    @property
    def needed(self) -> bool:
        return bool(self.quoted or self.refetched_at)

    def describe(self) -> str:
        parts = []
        if self.quoted:
            first = min(self.quoted)
            terms = ", ".join(self.quoted[first][:4])
            parts.append(f"message {first} quotes {terms}" + (f" (+{len(self.quoted) - 1} more)" if len(self.quoted) > 1
                                                                else ""))
        if self.refetched_at:
            parts.append(f"the same call is made again at message {self.refetched_at[0]}")
        return "; ".join(parts)


@dataclass
class InformationLoss:
    """Per-message evidence and the setup's score (removed messages that look needed later, re-fetches count 1)."""

    evidence: list[LossEvidence]
    first_user_survives: bool
    latest_user_survives: bool

    @property
    def score(self) -> int:
        return sum(1 for e in self.evidence if e.needed)

    @property
    def refetches(self) -> int:
        return sum(len(e.refetched_at) for e in self.evidence)

    def summary(self) -> dict[str, int | bool]:
        return {
            "information_loss_score": self.score,
            "removed_messages": len(self.evidence),
            "refetches": self.refetches,
            "first_user_request_survives": self.first_user_survives,
            "latest_user_request_survives": self.latest_user_survives,
        }


def _first_removal(rep: Replay) -> dict[int, tuple[int, str]]:
    """original index -> (step at which it was first not kept, that fate)."""
    first: dict[int, tuple[int, str]] = {}
    changes, previous = rep.changes, 0
    for step in rep.steps:  # (the changes of rep.deltas(), without the appended originals it also lists)
        if step.snapshot != previous:
            previous = step.snapshot
            for index, fate in changes[step.snapshot].fates.items():
                if fate != "kept":
                    first.setdefault(index, (step.step, fate))
    return first


def _user_survival(rep: Replay) -> tuple[bool, bool]:
    messages = rep.conversation.messages
    users = [i for i, m in enumerate(messages) if m.role == "user" and i not in rep.skipped]
    if not users:
        return True, True
    first_ok = latest_ok = True
    fates: dict[int, Fate] = {}
    for delta in rep.deltas():
        if delta.change is not None:
            delta.change.apply_to(fates)
        seen = bisect.bisect_left(users, delta.step.message_index)
        if not seen:
            continue
        if fates.get(users[0], "kept") in ("collapsed", "dropped"):
            first_ok = False
        if fates.get(users[seen - 1], "kept") in ("collapsed", "dropped"):
            latest_ok = False
    return first_ok, latest_ok


@dataclass(frozen=True)
class _ConversationIndex:
    """What the signals need from a conversation, whatever the setup: computed once per conversation."""

    messages: tuple[Message, ...]
    #: message -> (later assistant message, term) pairs: the term's first holder is the message, its second holder
    #: that later assistant message
    quotes: dict[int, list[tuple[int, str]]]
    calls_by_key: dict[tuple[str, str], list[int]]  # (tool, sorted JSON arguments) -> assistant message indices
    _keys: dict[int, tuple[str, str] | None] = field(default_factory=dict)
    _latest: dict[int, int] = field(default_factory=dict)

    def quote_candidates(self, index: int) -> list[tuple[int, str]]:
        """(later assistant message, term) pairs that would quote message ``index``'s terms if it were removed
        before them: a term counts only for the first message other than ``index`` that holds it (so only a term
        ``index`` holds first, whose next holder is an assistant message)."""
        return self.quotes.get(index, [])

    def latest_need(self, index: int) -> int:
        """The last message that would count as needing message ``index`` (a quote or a re-fetch), or -1: the message
        is needed exactly when it was removed at or before that point."""
        hit = self._latest.get(index)
        if hit is None:
            quotes = [later for later, _ in self.quote_candidates(index)]
            key = self.refetch_key(index)
            refetches = self.calls_by_key.get(key, []) if key is not None else []
            hit = self._latest[index] = max([*quotes, *refetches], default=-1)
        return hit

    def refetch_key(self, index: int) -> tuple[str, str] | None:
        """The (tool, arguments) key of the call whose result message ``index`` is (None for other messages)."""
        if index not in self._keys:
            result = self.messages[index].tool_result
            self._keys[index] = None if result is None else (
                result.origin.name, json.dumps(result.origin.arguments, sort_keys=True))
        return self._keys[index]


def _conversation_index(conv: Conversation) -> _ConversationIndex:
    """The index of ``conv``, kept in its memo (conversations are immutable; a sweep replays one many times)."""
    return conv.memoized(("information index",), lambda: _build_index(conv))


def _quote_pairs(messages: Sequence[Message]) -> dict[int, list[tuple[int, str]]]:
    """For each message, the terms it holds first whose second holder is an assistant message, with that message.

    One pass in order with set operations: a term's first holder is where it is new, its second where it leaves the
    terms seen once."""
    first: dict[str, int] = {}
    once: set[str] = set()  # terms one message so far holds
    quotes: dict[int, list[tuple[int, str]]] = {}
    texts = (_message_text(m) for m in messages)
    for i, (m, terms) in enumerate(zip(messages, identifier_sets(texts))):
        second = terms & once
        new = terms.difference(first)
        if second:
            once -= second
            if m.role == "assistant":
                for term in second:
                    quotes.setdefault(first[term], []).append((i, term))
        if new:
            once |= new
            first.update(dict.fromkeys(new, i))
    return quotes


def _build_index(conv: Conversation) -> _ConversationIndex:
    messages = conv.messages
    calls_by_key: dict[tuple[str, str], list[int]] = {}
    for i, m in enumerate(messages):
        if m.role == "assistant":
            for c in m.tool_calls:
                calls_by_key.setdefault((c.name, json.dumps(c.arguments, sort_keys=True)), []).append(i)
    return _ConversationIndex(tuple(messages), _quote_pairs(messages), calls_by_key)


def removal_evidence(conv: Conversation, removals: Mapping[int, tuple[int, str]], step_message: Mapping[int, int]
                     ) -> list[LossEvidence]:
    """Evidence for each removed original (``index -> (step first not kept, fate)``); ``step_message`` maps a step
    to the index of the assistant message that call produced."""
    index_ = _conversation_index(conv)
    evidence: list[LossEvidence] = []
    for index, (step, fate) in sorted(removals.items()):
        removed_from = step_message[step]
        ev = LossEvidence(index, fate, step)
        for later, term in index_.quote_candidates(index):
            if later >= removed_from:
                ev.quoted.setdefault(later, []).append(term)
        key = index_.refetch_key(index)
        if key is not None:
            ev.refetched_at = [i for i in index_.calls_by_key.get(key, []) if i >= removed_from]
        for terms in ev.quoted.values():
            terms.sort()
        evidence.append(ev)
    return evidence


def removal_score(conv: Conversation, removed_from: Mapping[int, int]) -> int:
    """The information-loss score alone (``original index -> index of the call message it was first missing
    from``): how many removed messages a later message needed. Same count as :func:`removal_evidence`."""
    if not removed_from:  # (the index is not built for a setup that removed nothing)
        return 0
    index_ = _conversation_index(conv)
    return sum(1 for index, start in removed_from.items() if index_.latest_need(index) >= start)


def information_score(rep: Replay) -> int:
    """:func:`information_loss` ``.score`` alone: each removed message is looked up once (its last need, memoized
    per conversation), without building the evidence or following the user requests."""
    step_message = {s.step: s.message_index for s in rep.steps}
    return removal_score(rep.conversation, {index: step_message[step]
                                            for index, (step, _) in _first_removal(rep).items()})


def information_loss(rep: Replay) -> InformationLoss:
    """Evidence for every message the replay pruned, collapsed or dropped."""
    step_message = {s.step: s.message_index for s in rep.steps}
    evidence = removal_evidence(rep.conversation, _first_removal(rep), step_message)
    first_ok, latest_ok = _user_survival(rep)
    return InformationLoss(evidence, first_ok, latest_ok)
