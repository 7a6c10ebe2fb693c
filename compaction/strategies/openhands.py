"""OpenHands condensers (V0 ``openhands/memory/condenser/impl`` and the V1 software-agent-sdk summarizer), from the
behaviour spec.

OpenHands condenses a list of *events* (actions and observations). Here one message of the conversation is one
event: the system prompt, each user message, each assistant message (an action) and each tool result (an
observation); only tool results are observations. Sizes and windows therefore count messages.

Masking and recent-events are views recomputed from the full history before every call (projections). The rolling
condensers (amortized forgetting, LLM summarizing) record a condensation in the event stream, so what they forget
stays forgotten (persisted).

OpenHands' classes and its TOML config disagree on several defaults; the class defaults are used here and each
parameter's help gives the config default.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ..conversation import Message
from ..conversation import ToolCall
from ..history import Entry
from ..history import inserted
from ..tokens import render_haystack
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import registrar
from .history_runner import Decision
from .history_runner import Follower
from .history_runner import HistoryRunner
from .history_runner import plural
from .history_runner import with_result_text

DOCS = "https://github.com/All-Hands-AI/OpenHands/tree/main/openhands/memory/condenser/impl"
DOCS_V1 = "https://github.com/OpenHands/software-agent-sdk/tree/main/openhands-sdk/openhands/sdk/context/condenser"
MASKED = "<MASKED>"
SUMMARY_INSTRUCTION = (
    "You maintain a state summary for an interactive coding agent. Track, in these sections: USER_CONTEXT, "
    "TASK_TRACKING, COMPLETED, PENDING, CURRENT_STATE, CODE_STATE, TESTS, CHANGES, DEPS, VERSION_CONTROL_STATUS. "
    "Update the previous summary with the events below, keeping what still matters; be concise."
)


def is_observation(entry: Entry) -> bool:
    return entry.message.tool_result is not None


def is_condensation_summary(entry: Entry) -> bool:
    return entry.inserted == "summary"


def _with_calls(message: Message, calls: tuple[ToolCall, ...]) -> Message:
    """``message`` with only ``calls`` (the ones whose results are kept)."""
    return replace(message, tool_calls=calls)


def pairing_note(note: str, removed: int) -> str:
    """``note`` followed by what ConversationMemory left out."""
    return "; ".join(n for n in (note, f"{plural(removed, 'unmatched tool message')} left out by ConversationMemory")
                     if n)


# ------------------------------------------------------------------------------------------------ sending
class OpenHandsRunner(HistoryRunner):
    """What every OpenHands condenser shares: the condensed view goes through ``ConversationMemory`` before it is
    sent, which drops tool results whose call is not in the view and tool calls whose result is not (an assistant
    message keeps its matched calls, or goes when none is left). Items without an id are kept."""

    projects = True

    def condense(self, stored: list[Entry], tokens: int) -> Decision:
        """The condenser's own per-call view (default: the stored history as it is)."""
        return Decision()

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        view = self.condense(stored, tokens)
        base = view.entries if view.entries is not None else stored
        sent, removed = self._matched_only(base)
        if not removed:
            return view
        return Decision(sent, view.triggered, pairing_note(view.note, removed), view.target, view.model_calls)

    def _matched_only(self, entries: list[Entry]) -> tuple[list[Entry], int]:
        calls = {c.id for e in entries if e.message.role == "assistant" for c in e.message.tool_calls if c.id}
        results = {e.message.tool_result.call_id for e in entries
                   if e.message.tool_result is not None and e.message.tool_result.call_id}
        out: list[Entry] = []
        removed = 0
        for e in entries:
            m = e.message
            if m.tool_result is not None and m.tool_result.call_id:
                if m.tool_result.call_id in calls:
                    out.append(e)
                else:
                    removed += 1
            elif m.role == "assistant" and m.tool_calls:
                matched = tuple(c for c in m.tool_calls if c.id in results)
                if len(matched) == len(m.tool_calls):
                    out.append(e)
                elif matched:
                    kind = "unmatched-calls:" + ",".join(str(c.id) for c in matched)
                    out.append(self.edited(e, kind, partial(_with_calls, calls=matched), mark="unmatched-calls-removed"))
                    removed += 1
                else:
                    removed += 1
            else:
                out.append(e)
        return out, removed


# ------------------------------------------------------------------------------------------------ projections
class ObservationMasking(OpenHandsRunner):
    """``ObservationMaskingCondenser``: observations outside the last ``attention_window`` events become
    ``<MASKED>``; the window counts every event, actions included."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.window = int(params["attention_window"])
        if self.window < 1:
            raise ValueError(f"attention_window must be at least 1, got {self.window}")
        self._masking = _PairedMasking(self)

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        masking = self._masking
        masking.follow(stored)
        masked = masking.advance(len(stored) - self.window)
        removed = masking.removed
        if not masked and not removed:
            return Decision()
        note = f"{plural(masked, 'observation')} masked" if masked else ""
        return Decision.sending(masking.view, bool(masked), pairing_note(note, removed) if removed else note)


class _PairedMasking(Follower):
    """ObservationMasking's view, kept up to date as the history grows: the observations before the attention
    window masked (the window only moves forward), and ConversationMemory's filter applied.

    The filter's sets of called and answered ids only grow, so an entry it leaves out comes back at most once: a
    tool result when a call with its id appears, an AI message when its first call is answered (keeping its
    answered calls only, until all are).
    """

    def __init__(self, runner: ObservationMasking) -> None:
        super().__init__()
        self.runner = runner

    def restart(self) -> None:
        self.view = self.runner.masked_view(self.stored)
        self._observations: list[int] = []
        self._masked = 0
        self._called: set[str] = set()
        self._answered: set[str] = set()
        self._uncalled: dict[str, list[int]] = {}  # call id -> results left out until a call with that id
        self._unanswered: dict[str, list[int]] = {}  # call id -> AI messages waiting for that result
        self._partial: set[int] = set()  # AI messages sent with some of their calls only

    @property
    def removed(self) -> int:
        """Tool messages the filter leaves out or cuts down (what ConversationMemory reports)."""
        return self.view.omitted + len(self._partial)

    def advance(self, limit: int) -> int:
        """Mask the observations before position ``limit``; how many are masked."""
        while self._masked < len(self._observations) and self._observations[self._masked] < limit:
            position = self._observations[self._masked]
            self.view.replace(position, self.runner.edited(self.stored[position], "masked",
                                                           lambda m: with_result_text(m, MASKED), mark="masked"))
            self._masked += 1
        return self._masked

    def feed(self, position: int, entry: Entry) -> None:
        message = entry.message
        result = message.tool_result
        if is_observation(entry):
            self._observations.append(position)
        if message.role == "assistant":
            for c in message.tool_calls:
                if c.id and c.id not in self._called:
                    self._called.add(c.id)
                    for waiting in self._uncalled.pop(c.id, ()):
                        self.view.include(waiting)
        if result is not None and result.call_id:
            self._answer(result.call_id)
            if result.call_id not in self._called:
                self._uncalled.setdefault(result.call_id, []).append(position)
                self.view.omit(position)
        elif message.role == "assistant" and message.tool_calls:
            for c in message.tool_calls:
                if c.id and c.id not in self._answered:
                    self._unanswered.setdefault(c.id, []).append(position)
            self._pair(position)

    def _answer(self, call_id: str) -> None:
        if call_id in self._answered:
            return
        self._answered.add(call_id)
        for waiting in self._unanswered.pop(call_id, ()):
            self._pair(waiting)

    def _pair(self, position: int) -> None:
        """Send AI message ``position`` with its answered calls, or leave it out when none is answered."""
        entry = self.stored[position]
        calls = entry.message.tool_calls
        matched = tuple(c for c in calls if c.id in self._answered)
        if not matched:
            self._partial.discard(position)
            self.view.omit(position)
            return
        self.view.include(position)
        if len(matched) == len(calls):
            self._partial.discard(position)
        else:
            self._partial.add(position)
            kind = "unmatched-calls:" + ",".join(str(c.id) for c in matched)
            entry = self.runner.edited(entry, kind, lambda msg: replace(msg, tool_calls=matched),  # called at once
                                       mark="unmatched-calls-removed")
        self.view.replace(position, entry)


class RecentEvents(OpenHandsRunner):
    """``RecentEventsCondenser``: the first ``keep_first`` events and the last ``max_events - keep_first``.

    Reproduced as written: when the history is shorter than ``max_events`` the two slices overlap and the first
    events are sent twice (the second copy is shown as a re-inserted duplicate); when ``max_events == keep_first``
    the tail slice ``[-0:]`` is the whole history.
    """

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.keep_first, self.max_events = int(params["keep_first"]), int(params["max_events"])
        if self.keep_first < 0:
            raise ValueError(f"keep_first must be at least 0, got {self.keep_first}")
        if self.max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {self.max_events}")

    def condense(self, stored: list[Entry], tokens: int) -> Decision:
        positions = range(len(stored))  # ranges slice like the lists OpenHands slices, without building them
        head = positions[: self.keep_first]
        tail_length = max(0, self.max_events - len(head))
        tail = positions[-tail_length:]
        if tail.start == len(head):  # head and tail meet: every event, once
            return Decision()
        return send_events(stored, (*head, *tail))


def send_events(stored: Sequence[Entry], chosen: Iterable[int]) -> Decision:
    """The events at ``chosen`` sent in that order; an event chosen again (head and tail overlap) is sent again as
    a reinserted duplicate."""
    out: list[Entry] = []
    seen: set[int] = set()
    duplicates = 0
    for i in chosen:
        if i in seen:
            out.append(inserted(stored[i].message, "reinserted", [stored[i]], duplicate=True))
            duplicates += 1
        else:
            out.append(stored[i])
            seen.add(i)
    note = f"kept {len(seen)} of {plural(len(stored), 'event')}"
    if duplicates:
        note += f"; {plural(duplicates, 'event')} sent twice (head and tail overlap)"
    return Decision(out, True, note)


# ------------------------------------------------------------------------------------------------ rolling
def validate_rolling(max_size: int, keep_first: int, minimum_size: int) -> None:
    if max_size < minimum_size:
        raise ValueError(f"max_size must be at least {minimum_size}, got {max_size}")
    if keep_first < 0:
        raise ValueError(f"keep_first must be at least 0, got {keep_first}")
    if keep_first >= max_size // 2:
        raise ValueError(f"keep_first ({keep_first}) must be less than half of max_size ({max_size // 2}); otherwise "
                         f"nothing could ever be forgotten")


class AmortizedForgetting(OpenHandsRunner):
    """``AmortizedForgettingCondenser``: past ``max_size`` events, keep the first ``keep_first`` and the last
    ``max_size // 2 - keep_first``; forget the contiguous range between them."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.max_size, self.keep_first = int(params["max_size"]), int(params["keep_first"])
        validate_rolling(self.max_size, self.keep_first, 2)

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        if len(stored) <= self.max_size:
            return Decision()
        from_tail = self.max_size // 2 - self.keep_first
        forgotten = stored[self.keep_first: len(stored) - from_tail]
        if not forgotten:
            return Decision(triggered=True, note="triggered; nothing to forget")
        kept = [*stored[: self.keep_first], *stored[len(stored) - from_tail:]]
        return Decision(kept, True, f"forgot {plural(len(forgotten), 'event')}, kept {len(kept)}")


class LLMSummarizing(OpenHandsRunner):
    """``LLMSummarizingCondenser`` (V0 and V1): past ``max_size`` events (or, V1, ``max_tokens`` tokens), the events
    between the first ``keep_first`` and the tail are summarized together with the previous summary; the next view
    is head + summary + tail."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext, v1: bool) -> None:
        super().__init__(ctx)
        self.params, self.v1 = params, v1
        self.max_size, self.keep_first = int(params["max_size"]), int(params["keep_first"])
        if v1:
            if self.max_size < 1:
                raise ValueError(f"max_size must be greater than 0, got {self.max_size}")
            if self.keep_first < 0:
                raise ValueError(f"keep_first must be at least 0, got {self.keep_first}")
            if self.max_size // 2 - self.keep_first - 1 <= 0:
                raise ValueError(f"max_size // 2 - keep_first - 1 must be positive, got {self.max_size // 2} - "
                                 f"{self.keep_first} - 1; raise max_size or lower keep_first")
            self.max_tokens = int(params["max_tokens"]) or None
            self.max_event_length = None
        else:
            validate_rolling(self.max_size, self.keep_first, 1)
            self.max_tokens = None
            self.max_event_length = int(params["max_event_length"])

    def lines(self) -> dict[str, float]:
        return {"trigger": self.max_tokens} if self.max_tokens else {}

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        by_tokens = self.max_tokens is not None and tokens > self.max_tokens
        if not by_tokens and len(stored) <= self.max_size:
            return Decision()
        from_tail = self.max_size // 2 - self.keep_first - 1
        middle = stored[self.keep_first: len(stored) - from_tail if from_tail else 0]
        previous = stored[self.keep_first] if len(stored) > self.keep_first and \
            is_condensation_summary(stored[self.keep_first]) else None
        forgotten = [e for e in middle if not is_condensation_summary(e)]
        if not forgotten:
            return Decision(triggered=True, note="triggered; no event to forget")
        call = self.summarize(self.params, SUMMARY_INSTRUCTION, [e.message for e in forgotten],
                              rendered=self._prompt(previous, forgotten))
        covers = [previous, *forgotten] if previous is not None else forgotten
        summary = inserted(Message("user", (call.text,), meta={"openhands": "AgentCondensationObservation"}),
                           "summary", covers, summarizer=call.backend, simulated=call.simulated)
        tail = stored[len(stored) - from_tail:] if from_tail else []
        kept_head = stored[: self.keep_first]
        why = "tokens over max_tokens" if by_tokens and len(stored) <= self.max_size else "events over max_size"
        return Decision([*kept_head, summary, *tail], True,
                        f"{why}: summarized {plural(len(forgotten), 'event')}, kept {len(kept_head) + len(tail)}",
                        model_calls=[call.usage()])

    def _prompt(self, previous: Entry | None, forgotten: Sequence[Entry]) -> str:
        """``<PREVIOUS SUMMARY>`` plus one ``<EVENT id=N>`` block per forgotten event (V0 cuts each to
        ``max_event_length`` characters)."""
        parts = [f"<PREVIOUS SUMMARY>\n{previous.message.text if previous is not None else ''}\n</PREVIOUS SUMMARY>"]
        for e in forgotten:
            text = render_haystack(e.message, include_ids=True)
            if self.max_event_length is not None:
                text = text[: self.max_event_length]
            ident = e.origin if e.origin is not None else "summary"
            parts.append(f"<EVENT id={ident}>\n{text}\n</EVENT>")
        return "\n\n".join(parts)


# ------------------------------------------------------------------------------------------------ registration
MAX_SIZE_V0 = Param("max_size", "int", 100, "`max_size`: condense once the history has more events (messages) than "
                    "this (class and config default 100).", minimum=2, maximum=100_000)

_register = registrar("openhands", policy="none", docs_url=DOCS)

_register(
    "observation_masking",
    title="OpenHands · ObservationMaskingCondenser",
    summary=(
        "Before every call, tool results outside the last attention_window events are replaced by `<MASKED>`. "
        "The window counts all messages, not only observations. Always on; ignores context_window/compact_at/"
        "compact_to."
    ),
    params=(
        Param("attention_window", "int", 5, "`attention_window`: the most recent events (messages) whose "
              "observations stay visible (class default 5; OpenHands config default 100).",
              minimum=1, maximum=100_000),
    ),
    build=ObservationMasking,
)

_register(
    "recent_events",
    title="OpenHands · RecentEventsCondenser",
    summary=(
        "Before every call, only the first keep_first and the most recent events are sent (max_events in all). "
        "Reproduced as written: while the history is shorter than max_events the first events are sent twice. "
        "Ignores context_window/compact_at/compact_to."
    ),
    params=(
        Param("keep_first", "int", 1, "`keep_first`: events at the start always kept (class and config "
              "default 1).", minimum=0, maximum=100_000),
        Param("max_events", "int", 10, "`max_events`: events sent at most (class default 10; OpenHands config "
              "default 100).", minimum=1, maximum=100_000),
    ),
    build=RecentEvents,
)

_register(
    "amortized_forgetting",
    title="OpenHands · AmortizedForgettingCondenser",
    summary=(
        "When the history has more than max_size events, everything but the first keep_first and the last "
        "max_size // 2 - keep_first events is forgotten (persisted, no summary). Ignores context_window/"
        "compact_at/compact_to."
    ),
    params=(
        MAX_SIZE_V0,
        Param("keep_first", "int", 0, "`keep_first`: events at the start never forgotten (class default 0; "
              "OpenHands config default 1).", minimum=0, maximum=100_000),
    ),
    build=AmortizedForgetting,
)

_register(
    "llm_summarizing",
    title="OpenHands · LLMSummarizingCondenser (V0)",
    summary=(
        "When the history has more than max_size events, the events after the first keep_first and before the "
        "last max_size // 2 - keep_first - 1 are summarized with the previous summary into one summary event "
        "placed at keep_first (persisted). Ignores context_window/compact_at/compact_to."
    ),
    params=(
        MAX_SIZE_V0,
        Param("keep_first", "int", 1, "`keep_first`: events at the start never summarized (class and config "
              "default 1).", minimum=0, maximum=100_000),
        Param("max_event_length", "int", 10_000, "`max_event_length`: characters of each event shown to the "
              "summarizer.", minimum=1, maximum=10_000_000),
        *SUMMARIZER_PARAMS,
    ),
    build=partial(LLMSummarizing, v1=False),
)

_register(
    "llm_summarizing_v1",
    title="OpenHands SDK (V1) · LLMSummarizingCondenser",
    summary=(
        "V1 software-agent-sdk: when the history has more than max_size events (or more than max_tokens "
        "tokens), the events between the first keep_first and the last max_size // 2 - keep_first - 1 are "
        "summarized into one summary at keep_first (persisted). Ignores context_window/compact_at/compact_to."
    ),
    params=(
        Param("max_size", "int", 120, "`max_size`: condense once the history has more events (messages) than "
              "this.", minimum=1, maximum=100_000),
        Param("keep_first", "int", 4, "`keep_first`: events at the start never summarized.", minimum=0,
              maximum=100_000),
        Param("max_tokens", "int", 0, "`max_tokens`: also condense when the history exceeds this many tokens "
              "(0: None).", minimum=0, maximum=10_000_000),
        *SUMMARIZER_PARAMS,
    ),
    build=partial(LLMSummarizing, v1=True),
    docs_url=DOCS_V1,
)
