"""Google ADK events compaction (``EventsCompactionConfig`` on the ``App``), as google-adk 2.13.0 runs it
(agents.md §1.10; the installed library's ``apps/compaction.py`` decides where the spec is uncertain).

ADK never edits a session: it appends compaction events and builds each request from the whole session, every
surviving summary sent in place of the events its range covers. Two mechanisms, either or both configured:

- **token threshold** (``token_threshold`` with ``event_retention_size``): before every model call, and again after
  each invocation, when the most recent prompt token count reaches the threshold, everything after the last
  summary but the newest ``event_retention_size`` events (moved earlier so no kept function response loses its
  call) is summarized together with the previous summary, which the new one supersedes;
- **sliding window** (``compaction_interval`` with ``overlap_size``): after an invocation, once
  ``compaction_interval`` invocations ended since the last summary, the events from ``overlap_size`` invocations
  before the first new one through the last new one are summarized (skipped when the token threshold compacted).

An *invocation* is a user turn and everything the agent does until it answers (an ADK log's own
``invocation_id``). Post-invocation work is replayed at the next model call, before the pre-request pass. The most
recent prompt token count is the newest model event's ``prompt_token_count`` — the log's reported prompt tokens,
less what the replay's own compaction took out of that call's request by the run's counter (the log reports the
uncompacted request) — and ADK's characters / 4 estimate of the request when no count follows the last summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ..conversation import Message
from ..errors import ConfigError
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from ._adk_session import AdkEvent
from ._adk_session import Compaction
from ._adk_session import Processed
from ._adk_session import content_chars
from ._adk_session import content_json
from ._adk_session import is_auth_event
from ._adk_session import latest_compaction
from ._adk_session import message_parts
from ._adk_session import new_invocations
from ._adk_session import process_compaction_events
from ._adk_session import prompt_lines
from ._adk_session import recover_compacted_calls
from ._adk_session import render_prompt
from ._adk_session import sliding_window_events
from ._adk_session import summary_parts
from ._adk_session import token_threshold_events
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import plural

DOCS = "https://github.com/google/adk-python/blob/main/src/google/adk/apps/compaction.py"
#: the author ADK gives a summary's seed event and a summary it materializes without an agent name
MODEL_AUTHOR = "model"
#: the agent's name when neither the parameter nor the log gives one
DEFAULT_AGENT = "agent"
_WEIGHTLESS_SIZE = len(content_json("model", []))


class EventsCompaction(Strategy):
    """The session as ADK keeps it (raw events plus appended compaction events) and the request it builds."""

    persistence = "project"

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.interval = int(params["compaction_interval"])
        self.overlap = int(params["overlap_size"])
        self.threshold = int(params["token_threshold"])
        self.retention = int(params["event_retention_size"])
        if self.interval <= 0 and self.threshold <= 0:
            raise ConfigError("google_adk.events_compaction: at least one compaction trigger must be configured: "
                              "compaction_interval (the sliding window) or token_threshold (the token threshold)")
        self.agent_name = str(params["agent_name"]).strip()
        if self.agent_name and (not self.agent_name.isidentifier() or self.agent_name == "user"):
            raise ConfigError(f"agent_name: ADK requires an agent name to be a Python identifier other than 'user' "
                              f"(letters, digits and underscores, not starting with a digit), got {self.agent_name!r}")
        #: an ADK log keeps function responses as JSON objects; other logs' results are what a tool returned
        self.structured = ctx.source is not None and ctx.source.format == "google-adk"
        self.events: list[AdkEvent] = []
        self._instruction: list[Entry] = []
        self._last_origin = -1
        self._invocations = 0
        self._ended: set[str] = set()
        self._pending: list[str] = []
        self._log_author: str | None = None
        #: call message index -> tokens the replay's request had less than the log's (by the run's counter)
        self._removed: dict[int, int] = {}
        self._parts: dict[int, tuple[int, list[dict[str, Any]]]] = {}

    # ------------------------------------------------------------------------------------------ the session
    def _follow(self, entries: Sequence[Entry]) -> None:
        """Take in the originals appended since the last call, as ADK events."""
        start = len(entries)
        while start > 0 and ((origin := entries[start - 1].origin) is None or origin > self._last_origin):
            start -= 1
        for entry in entries[start:]:
            if entry.origin is None:
                continue
            self._last_origin = entry.origin
            self._take(entry)

    def _take(self, entry: Entry) -> None:
        m = entry.message
        if m.role == "system" and not self.events:
            self._instruction.append(entry)
            return
        last = self.events[-1] if self.events else None
        event_id = m.meta.get("event_id")
        if last is not None and not last.is_compaction and last.entries and (
                (event_id is not None and last.entries[-1].message.meta.get("event_id") == event_id)
                or (event_id is None and m.tool_result is not None
                    and all(e.message.tool_result is not None for e in last.entries))):
            last.entries.append(entry)
            return
        if m.role in ("assistant", "tool"):  # ADK authors function responses by the agent too
            author = self.agent_name or _text(m.meta.get("author")) or self._log_author or DEFAULT_AGENT
            if m.role == "assistant" and self._log_author is None and _text(m.meta.get("author")):
                self._log_author = _text(m.meta.get("author"))
        else:
            author = "user"
        self.events.append(AdkEvent(float(len(self.events) + 1), author, self._invocation_of(m, last), [entry],
                                    message_index=entry.origin if m.role == "assistant" else None))

    def _invocation_of(self, m: Message, last: AdkEvent | None) -> str:
        own = _text(m.meta.get("invocation_id"))
        if own:
            return own
        starts_turn = m.role == "user" and (last is None or last.role == "model" or any(
            e.message.tool_result is not None for e in last.entries))
        if starts_turn or last is None:
            self._invocations += 1
        return f"invocation {self._invocations}"

    def _call_agent(self) -> str:
        """The agent that makes this call (whose prompt counts the pre-request pass reads)."""
        return self.agent_name or self._log_author or DEFAULT_AGENT

    def parts(self, event: AdkEvent) -> list[dict[str, Any]]:
        cached = self._parts.get(id(event))
        if cached is not None and cached[0] == len(event.entries):
            return cached[1]
        parts = [p for e in event.entries for p in message_parts(e.message, self.structured)]
        self._parts[id(event)] = (len(event.entries), parts)
        return parts

    # ------------------------------------------------------------------------------------------ measures
    def request_items(self, events: Sequence[AdkEvent]) -> list[Processed]:
        """The events a request is built from: the compactions applied, summarized-away calls recovered."""
        if not any(e.is_compaction for e in events):
            return [Processed(e.timestamp, e) for e in events]
        return recover_compacted_calls(process_compaction_events(events), [e for e in events if not e.is_compaction])

    def _size(self, items: Sequence[Processed]) -> int:
        """``_serialized_size``: the JSON length of the content each item puts in a request."""
        total = 0
        for item in items:
            if item.summary:
                c = item.event.compaction
                assert c is not None  # a summary item is a compaction event
                total += len(content_json("model", summary_parts(c.text))) if c.text or c.stored else _WEIGHTLESS_SIZE
            else:
                total += len(content_json(item.event.role, self.parts(item.event)))
        return total

    def _estimate(self, events: Sequence[AdkEvent]) -> int | None:
        """``_estimate_prompt_token_count``: characters of the request's contents // 4 (None when there are none)."""
        chars = 0
        for item in self.request_items(events):
            if item.summary:
                compaction = item.event.compaction
                assert compaction is not None  # a summary item is a compaction event
                chars += content_chars(summary_parts(compaction.text))
            else:
                chars += content_chars(self.parts(item.event))
        return chars // 4 if chars > 0 else None

    def prompt_tokens(self, events: Sequence[AdkEvent], agent: str) -> tuple[int | None, str]:
        """``_latest_prompt_token_count``: the newest prompt count of ``agent``'s model events (any agent's when
        empty) since the last compaction event, else the estimate; and where it came from."""
        for event in reversed(events):
            if event.is_compaction:
                break
            usage = self.ctx.usage.get(event.message_index) if event.message_index is not None else None
            if usage is not None and (not agent or event.author == agent):
                assert event.message_index is not None  # it has usage
                removed = self._removed.get(event.message_index, 0)
                return max(usage.prompt_tokens - removed, 0), "reported"
        return self._estimate(events), "estimated"

    def _worth_compacting(self, events: Sequence[AdkEvent], chosen: Sequence[AdkEvent],
                          seed: Compaction | None) -> tuple[bool, int, int]:
        """``_is_range_worth_compacting``: whether an empty summary of the range would remove more characters from
        the request than the last summary holds."""
        stamps = [e.timestamp for e in chosen] + ([seed.start] if seed is not None else [])
        weightless = AdkEvent(0.0, MODEL_AUTHOR, "", compaction=Compaction(min(stamps), max(stamps), "", None, None))
        removable = self._size(self.request_items(events)) - self._size(self.request_items([*events, weightless]))
        latest = latest_compaction(events)
        if latest is not None:
            assert latest.compaction is not None  # latest_compaction finds a compaction event
            previous = len(content_json("model", summary_parts(latest.compaction.text)))
        else:
            previous = 0
        return removable > previous, removable, previous

    # ------------------------------------------------------------------------------------------ the contract
    def lines(self) -> dict[str, float]:
        return {"trigger": self.threshold} if self.threshold > 0 else {}

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        self._follow(entries)
        current = next((e.invocation for e in reversed(self.events) if not e.is_compaction), None)
        seen: dict[str, None] = {}
        for event in self.events:
            if not event.is_compaction:
                seen.setdefault(event.invocation, None)
        self._pending = [inv for inv in seen if inv != current and inv not in self._ended]
        fires = False
        for inv in self._pending:
            prefix = self._through(inv)
            if self.threshold > 0:
                tokens, _ = self.prompt_tokens(prefix, "")
                fires = fires or (tokens is not None and tokens >= self.threshold)
            if self.interval > 0:
                fires = fires or new_invocations(prefix) >= self.interval
        if self.threshold > 0:
            tokens, _ = self.prompt_tokens(self.events, self._call_agent())
            fires = fires or (tokens is not None and tokens >= self.threshold)
        if not fires:
            self._ended.update(self._pending)
        return fires

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        changed = False
        for inv in self._pending:
            self._ended.add(inv)
            at = self._end_of(inv)
            compaction = self._post_invocation(self.events[:at], inv)
            if compaction is not None:
                self._insert(entries, at, compaction)
                changed = True
        if self.threshold > 0:
            compaction = self._token_threshold(self.events, self._call_agent(), "before this call")
            if compaction is not None:
                self._insert(entries, len(self.events), compaction)
                changed = True
        return entries if changed else None

    def project(self, entries: list[Entry], call: Call) -> Sequence[Entry] | None:
        if not any(e.is_compaction for e in self.events):
            return None
        view: list[Entry | None] = list(self._instruction)
        items = self.request_items(self.events)
        kept_responses = {rid for item in items if not item.summary for rid in item.event.response_ids}
        answered = {rid for e in self.events if not e.is_compaction for rid in e.response_ids}
        for item in items:
            if item.summary:
                assert item.event.compaction is not None  # a summary item is a compaction event
                view.append(item.event.compaction.summary)
                continue
            for entry in item.event.entries:
                view.append(_without_lost_responses(entry, answered - kept_responses))
        sent = [e for e in view if e is not None]
        self._removed[call.message_index] = max(call.tokens - self.count(sent), 0)
        return sent

    # ------------------------------------------------------------------------------------------ the passes
    def _through(self, invocation: str) -> list[AdkEvent]:
        return self.events[: self._end_of(invocation)]

    def _end_of(self, invocation: str) -> int:
        """The position right after the last event of ``invocation`` (where ADK appends its compaction event)."""
        return max(i for i, e in enumerate(self.events) if e.invocation == invocation and not e.is_compaction) + 1

    def _post_invocation(self, events: list[AdkEvent], invocation: str) -> Compaction | None:
        """``_run_compaction_for_sliding_window``: the token threshold first, then the window."""
        when = f"after {invocation}"
        if self.threshold > 0:
            compaction = self._token_threshold(events, "", when)
            if compaction is not None:
                return compaction
        if self.interval <= 0:
            return None
        new = new_invocations(events)
        if new < self.interval:
            return None
        chosen = sliding_window_events(events, self.interval, self.overlap)
        if not chosen:
            self.decline(f"{when}: {plural(new, 'new invocation')}, but no self-contained events to summarize")
            return None
        worth, removable, previous = self._worth_compacting(events, chosen, None)
        if not worth:
            self.decline(f"{when}: sliding window not worth compacting ({removable:,} characters removable, the "
                         f"last summary has {previous:,})")
            return None
        return self._summarize(chosen, None, f"{when}: sliding window over {plural(new, 'new invocation')}")

    def _token_threshold(self, events: list[AdkEvent], agent: str, when: str) -> Compaction | None:
        """``_run_compaction_for_token_threshold_config``."""
        tokens, source = self.prompt_tokens(events, agent)
        if tokens is None or tokens < self.threshold:
            return None
        reason = f"{when}: {source} prompt tokens {tokens:,} ≥ token_threshold {self.threshold:,}"
        chosen, seed = token_threshold_events(events, self.retention)
        if not chosen:
            self.decline(f"{reason}; at most event_retention_size = {self.retention} events since the last summary")
            return None
        worth, removable, previous = self._worth_compacting(events, chosen, seed)
        if not worth:
            self.decline(f"{reason}; not worth compacting ({removable:,} characters removable, the last summary "
                         f"has {previous:,})")
            return None
        return self._summarize(chosen, seed, reason)

    def _summarize(self, chosen: list[AdkEvent], seed: Compaction | None, reason: str) -> Compaction:
        """``LlmEventSummarizer.maybe_summarize_events``: one user message, the template over the events' lines."""
        lines: list[str] = []
        messages: list[Message] = []
        covers: list[Entry] = []
        if seed is not None:
            assert seed.summary is not None  # a compaction of summarized events, not a weightless one
            lines += prompt_lines(MODEL_AUTHOR, summary_parts(seed.text))
            messages.append(seed.summary.message)
            covers.append(seed.summary)
        for event in chosen:
            if not is_auth_event(event):
                lines += prompt_lines(event.author, self.parts(event))
            messages += [e.message for e in event.entries]
            covers += event.entries
        call = self.summarize("", messages, rendered=render_prompt(lines))
        text = call.text
        start = seed.start if seed is not None else chosen[0].timestamp
        end = chosen[-1].timestamp
        facts = {"summarizer": call.backend, "simulated": call.simulated, "start_timestamp": start,
                 "end_timestamp": end}
        stored = inserted(Message("user", (text,), meta={"google_adk": "compaction_event"}), "summary", covers,
                          **facts).excluded_as("an ADK compaction event: stored, sent as its summary")
        summary = inserted(Message("assistant", (text,), meta={"google_adk": "compaction_summary",
                                                              "author": self._call_agent()}),
                           "summary", covers, **facts)
        self.note(f"{reason}: summarized {plural(len(chosen), 'event')}"
                  + (" and the previous summary" if seed is not None else ""))
        return Compaction(start, end, text, stored, summary)

    def _insert(self, entries: list[Entry], at: int, compaction: Compaction) -> None:
        """Append the compaction event where ADK appends it: after the events it was computed over."""
        event = AdkEvent(float(len(self.events) + 1), "user", "", compaction=compaction)
        following = self.events[at] if at < len(self.events) else None
        self.events.insert(at, event)
        assert compaction.stored is not None  # _summarize's compactions are stored
        if following is None or not following.entries:
            entries.append(compaction.stored)
            return
        first = following.entries[0]
        position = next(i for i, e in enumerate(entries) if e is first)
        entries.insert(position, compaction.stored)


def _without_lost_responses(entry: Entry, lost: set[str]) -> Entry | None:
    """An assistant entry without the calls whose responses the request lost to compaction (ADK drops a call with
    no response: ``drop_orphaned_function_calls``); None when nothing of it is left."""
    m = entry.message
    if not lost or not any(c.id in lost for c in m.tool_calls):
        return entry
    from dataclasses import replace

    calls = tuple(c for c in m.tool_calls if c.id not in lost)
    if not calls and not m.texts and not m.reasoning:
        return None
    return entry.replaced(replace(m, tool_calls=calls), google_adk="call whose response was summarized away")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


register(
    StrategyInfo(
        name="google_adk.events_compaction",
        title="Google ADK · EventsCompactionConfig",
        summary=(
            "ADK's events compaction on an App: after every compaction_interval invocations the events of the "
            "window (overlapping overlap_size invocations) are summarized; with token_threshold, when the latest "
            "prompt token count reaches it (before each model call and after each invocation), everything but "
            "the newest event_retention_size events is summarized with the previous summary. Summaries are "
            "appended events: each request sends the surviving summaries in place of the events they cover. Uses "
            "its own thresholds; ignores context_window/compact_at/compact_to."
        ),
        params=(
            Param("compaction_interval", "int", 3, "`EventsCompactionConfig(compaction_interval=…)`: how many new "
                  "invocations (user turns with the agent's work) trigger a sliding-window summary once they have "
                  "ended (0: no sliding window; ADK's docs use 3).", minimum=0, maximum=10_000),
            Param("overlap_size", "int", 1, "`overlap_size`: how many invocations before the first new one the "
                  "window takes in again, so consecutive summaries overlap (ADK's docs use 1).",
                  minimum=0, maximum=10_000),
            Param("token_threshold", "int", 0, "`token_threshold`: summarize when the most recent prompt token count "
                  "reaches this many tokens, before each model call and after each invocation (0: not set).",
                  minimum=0, maximum=100_000_000),
            Param("event_retention_size", "int", 0, "`event_retention_size`: how many of the newest raw events a "
                  "token-threshold compaction keeps as they are (0 summarizes them all; used with token_threshold).",
                  minimum=0, maximum=1_000_000),
            Param("agent_name", "str", "", "The `name` of the `LlmAgent` (a Python identifier): the author of the "
                  "agent's events in the summary prompt, and whose prompt counts the pre-request pass reads (empty: "
                  "the authors the log records, the first of them making the calls; else `agent`)."),
            *SUMMARIZER_PARAMS,
        ),
        reference=EventsCompaction,
        policy="none",
        docs_url=DOCS,
    )
)
