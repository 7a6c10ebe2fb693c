"""A shared runner base for the frameworks whose compaction is a rewrite of the stored history, a projection of it
recomputed before every call, or both (a summary that persists plus a mask applied on top).

Subclasses implement :meth:`HistoryRunner.rewrite` (persistent: what the framework writes back to its state) and/or
:meth:`HistoryRunner.project` (per call: what the framework sends, recomputed from the stored history each time, as
Anthropic context editing and SWE-agent / OpenHands masking do). Edited copies of originals are cached per original
and edit kind, so a message that stays masked is not rebuilt (or recounted) before every call.

Also here: the small message edits these frameworks share (a tool result's text replaced, call inputs cleared) and
the call-pairing map they all need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..conversation import Message, ToolResult
from ..history import Entry, messages_of
from ..summarizers import SummaryCall, SummaryRequest
from ..tokens import DEFAULT_COUNTER, Counter, make_counter, render_haystack
from .base import CallOutcome, RunContext, Runner


@dataclass(frozen=True)
class Decision:
    """What a rewrite or a projection did: ``entries`` is the new list, or ``None`` when nothing changed."""

    entries: list[Entry] | None = None
    triggered: bool = False
    note: str = ""
    target: int | None = None
    model_calls: list[dict[str, int]] = field(default_factory=list)


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
        self._view: list[Entry] | None = None
        self._view_tally = None
        self._edits: dict[tuple[int, str], tuple[Message, Entry]] = {}
        self.persistence = "project" if self.projects else "rewrite"

    # ------------------------------------------------------------------------------------------ Runner protocol
    def append(self, entry: Entry) -> None:
        self._stored.append(entry)
        self._stored_tally.append(entry.message)
        if self._view is not None:
            self._view.append(entry)
            self._view_tally.append(entry.message)

    def entries(self) -> Sequence[Entry]:
        return self._view if self._view is not None else self._stored

    def measure(self) -> int:
        tally = self._view_tally if self._view is not None else self._stored_tally
        return tally.value(with_tools=True)

    def before_call(self) -> CallOutcome:
        before = self._stored_tally.value(with_tools=True)
        persisted = self.rewrite(list(self._stored), before)
        if persisted.entries is not None:
            self._stored = list(persisted.entries)
            self._stored_tally = self.counter.tally(messages_of(self._stored), self.tools)
        view = NO_CHANGE
        if self.projects:
            view = self.project(list(self._stored), self._stored_tally.value(with_tools=True))
            self._view = list(view.entries) if view.entries is not None else None
            self._view_tally = self.counter.tally(messages_of(self._view), self.tools) if self._view is not None else None
        else:
            self._view = self._view_tally = None
        return CallOutcome(
            tokens_before=before,
            tokens_sent=self.measure(),
            triggered=persisted.triggered or view.triggered,
            compacted=persisted.entries is not None or view.entries is not None,
            target=persisted.target if persisted.target is not None else view.target,
            note="; ".join(n for n in (persisted.note, view.note) if n),
            model_calls=[*persisted.model_calls, *view.model_calls],
        )

    # ------------------------------------------------------------------------------------------ subclass hooks
    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        """Persistent compaction of the stored history (``tokens``: its count). Default: none."""
        return NO_CHANGE

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        """The view sent in this call, recomputed from the stored history. Default: the stored history itself."""
        return NO_CHANGE

    # ------------------------------------------------------------------------------------------ helpers
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
                  budget_tokens: int | None = None, rendered: str | None = None) -> SummaryCall:
        """One summarizer call over ``messages`` with the backend ``params`` select; ``rendered`` is the request's
        transcript when the framework renders the messages its own way."""
        budget = int(budget_tokens if budget_tokens is not None else params.get("summary_tokens", 512))
        text = rendered if rendered is not None else transcript(messages)
        request = SummaryRequest(instruction, text, tuple(messages), budget)
        return self.ctx.summarizer(params).summarize(request, self.counter)


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


def call_positions(entries: Sequence[Entry]) -> dict[str, int]:
    """Tool call id → position of the (latest) assistant entry that made the call."""
    out: dict[str, int] = {}
    for i, e in enumerate(entries):
        for c in e.message.tool_calls:
            if c.id:
                out[c.id] = i
    return out


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
        raise ValueError(f"{name} must be {noun} or 'all', got {value!r}") from None
    if n < 0:
        raise ValueError(f"{name} must be at least 0, got {n}")
    return n
