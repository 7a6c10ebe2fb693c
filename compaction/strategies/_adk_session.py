"""A Google ADK session as events compaction sees it, and ADK's own rules over it (google-adk 2.13.0,
``apps/compaction.py``, ``apps/llm_event_summarizer.py``, ``flows/llm_flows/context/_compaction.py``; agents.md
§1.10).

ADK keeps a session as an append-only list of events. An event is one model response (text, thoughts, function
calls), one user turn, or one batch of function responses (ADK answers the parallel calls of a response in one
event). Compaction never edits an event: it appends a *compaction event* whose ``compacted_content`` summarizes the
events between its ``start_timestamp`` and ``end_timestamp``, and the request builder sends each surviving summary
in place of the raw events inside its range.

Here the stored history of a replay becomes such a session: :class:`AdkEvent` groups the stored entries of one
event (a message, or the consecutive tool results that answer one response; in an ADK log, the messages of one
``event_id``) with its invocation, author and timestamp. Timestamps are the events' ordinals from 1: ADK stamps
events with the wall clock, so they grow in stream order, and only their order matters to the rules below (0 is
avoided because ADK reads an end timestamp of 0 as none).
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import File
from ..conversation import Image
from ..conversation import Message
from ..history import Entry

#: the function call ADK uses to ask the end user for credentials (``REQUEST_EUC_FUNCTION_CALL_NAME``): the
#: summarizer leaves such events out, their payload being a credential
AUTH_CALL = "adk_request_credential"
#: ``LlmEventSummarizer._MAX_TOOL_CONTENT_CHARS``: how much of each tool call's args and response the prompt shows
MAX_TOOL_CONTENT_CHARS = 2000
#: ``LlmEventSummarizer._DEFAULT_PROMPT_TEMPLATE``, byte for byte (the summary request is this text with the
#: formatted events in place of ``{conversation_history}``, sent as one user message)
PROMPT_TEMPLATE = (
    "The following is a conversation history between a user and an AI agent. It may or may not start from a "
    "compacted history. Please identify and reiterate the user request, summarize the context so far, focusing on "
    "key decisions made and information obtained, as well as any unresolved questions or tasks. CRITICAL "
    "INSTRUCTIONS: 1. Explicitly identify and state the primary language used by the user at the top of your "
    "summary (e.g., \"Conversation Language: English\"). 2. If the agent called any tools, accurately list the "
    "exact tool names used to maintain tool grounding. The rest of the summary should be concise and capture the "
    "essence of the interaction.\n\n{conversation_history}"
)


# ------------------------------------------------------------------------------------------------ events
@dataclass(frozen=True, eq=False)
class Compaction:
    """An ``EventCompaction``: the summary of the events between two timestamps."""

    start: float
    end: float
    text: str
    #: the compaction event as stored (never sent as such); None for the weightless summary ADK prices a range with
    stored: Entry | None
    #: the summary as the request builder materializes it (a ``model`` message)
    summary: Entry | None


@dataclass(eq=False)
class AdkEvent:
    """One session event: raw (``entries``) or a compaction event (``compaction``)."""

    timestamp: float
    author: str
    invocation: str
    entries: list[Entry] = field(default_factory=list)
    compaction: Compaction | None = None
    #: for a model response: the index of its message in the log (its reported usage is keyed by it)
    message_index: int | None = None

    @property
    def is_compaction(self) -> bool:
        return self.compaction is not None

    _ids: tuple[int, set[str], set[str]] | None = field(default=None, repr=False)

    def _pairing(self) -> tuple[set[str], set[str]]:
        """(call ids, response ids) of the event, kept until an entry joins it."""
        if self._ids is None or self._ids[0] != len(self.entries):
            calls = {c.id for e in self.entries for c in e.message.tool_calls if c.id}
            responses = {e.message.tool_result.call_id for e in self.entries
                         if e.message.tool_result is not None and e.message.tool_result.call_id}
            self._ids = (len(self.entries), calls, responses)
        return self._ids[1], self._ids[2]

    @property
    def call_ids(self) -> set[str]:
        return self._pairing()[0]

    @property
    def response_ids(self) -> set[str]:
        return self._pairing()[1]

    @property
    def role(self) -> str:
        """The content's role: ``model`` for a response, ``user`` for everything else."""
        return "model" if any(e.message.role == "assistant" for e in self.entries) else "user"


def is_auth_event(event: AdkEvent) -> bool:
    """A credential request or its answer (``_is_auth_event``)."""
    for entry in event.entries:
        m = entry.message
        if any(c.name == AUTH_CALL for c in m.tool_calls):
            return True
        if m.tool_result is not None and m.tool_result.tool_name == AUTH_CALL:
            return True
    return False


# ------------------------------------------------------------------------------------------------ parts
def response_value(message: Message, structured: bool) -> Any:
    """The ``function_response.response`` a tool result stands for: ADK wraps a value that is not a dict as
    ``{"result": value}``; ``structured`` (an ADK log, whose reader keeps the response as JSON text) reads the dict
    back."""
    result = message.tool_result
    assert result is not None
    text = result.text
    if structured:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"result": text}


def _blob_part(part: Image | File) -> dict[str, Any]:
    """An attachment as a ``file_data`` part (the log keeps no bytes: the URI or name stands for them)."""
    uri = part.source if isinstance(part, Image) else part.filename
    data = {key: value for key, value in (("file_uri", uri), ("mime_type", part.mime_type)) if value is not None}
    return {"file_data": data}


def message_parts(message: Message, structured: bool) -> list[dict[str, Any]]:
    """The ``Part`` objects of a message as ADK stores them (thoughts, texts, calls, attachments; a tool result is a
    ``function_response``), as their JSON with ``None`` fields left out."""
    if message.tool_result is not None:
        response: dict[str, Any] = {"name": message.tool_result.tool_name,
                                    "response": response_value(message, structured)}
        if message.tool_result.call_id:
            response = {"id": message.tool_result.call_id, **response}
        return [{"function_response": response}]
    parts: list[dict[str, Any]] = [{"text": t, "thought": True} for t in message.reasoning]
    parts += [{"text": t} for t in message.texts]
    for call in message.tool_calls:
        body: dict[str, Any] = {"args": dict(call.arguments), "name": call.name}
        parts.append({"function_call": {"id": call.id, **body} if call.id else body})
    non_text: tuple[Image | File, ...] = (*message.images, *message.files)
    parts += [_blob_part(p) for p in non_text]
    return parts


def content_json(role: str, parts: Sequence[Mapping[str, Any]]) -> str:
    """``Content.model_dump_json(exclude_none=True)``: compact JSON, non-ASCII kept as it is."""
    return json.dumps({"parts": list(parts), "role": role}, ensure_ascii=False, separators=(",", ":"), default=str)


def content_chars(parts: Iterable[Mapping[str, Any]]) -> int:
    """``_count_chars_in_content``: text characters, plus each call's and response's name and its JSON."""
    total = 0
    for part in parts:
        if part.get("text"):
            total += len(part["text"])
        call = part.get("function_call")
        if call is not None:
            total += len(call.get("name") or "")
            if call.get("args"):
                total += len(json.dumps(call["args"], default=str))
        response = part.get("function_response")
        if response is not None:
            total += len(response.get("name") or "")
            if response.get("response"):
                total += len(json.dumps(response["response"], default=str))
    return total


def summary_parts(text: str) -> list[dict[str, Any]]:
    return [{"text": text}]


# ------------------------------------------------------------------------------------------------ summarizer prompt
def _truncate(text: str) -> str:
    if len(text) <= MAX_TOOL_CONTENT_CHARS:
        return text
    return f"{text[:MAX_TOOL_CONTENT_CHARS]}... [truncated {len(text) - MAX_TOOL_CONTENT_CHARS} chars]"


def prompt_lines(author: str, parts: Iterable[Mapping[str, Any]], is_compaction: bool = False) -> list[str]:
    """The lines ``LlmEventSummarizer`` writes for one event: ``author: text``, ``author (thought): text`` (not for
    a compaction event's own thoughts), ``author called tool: name(args)`` and ``Tool response from name:
    response``, the args and responses as Python renders them (``str`` of a dict), cut at 2,000 characters."""
    lines: list[str] = []
    for part in parts:
        text = part.get("text")
        if part.get("thought") and text:
            if not is_compaction:
                lines.append(f"{author} (thought): {text}")
        elif text:
            lines.append(f"{author}: {text}")
        call = part.get("function_call")
        if call is not None:
            lines.append(f"{author} called tool: {call['name']}({_truncate(str(call.get('args')))})")
        response = part.get("function_response")
        if response is not None:
            lines.append(f"Tool response from {response['name']}: {_truncate(str(response.get('response')))}")
    return lines


def render_prompt(history_lines: Sequence[str]) -> str:
    """The summary request's text: the template with the events' lines joined by newlines."""
    return PROMPT_TEMPLATE.format(conversation_history="\n".join(history_lines))


# ------------------------------------------------------------------------------------------------ ranges
def compaction_ranges(events: Sequence[AdkEvent]) -> list[tuple[int, float, float]]:
    """``_get_compaction_ranges``: (event index, start, end) of the compactions no other range contains, in stream
    order; of identical ranges the latest survives."""
    ranges: list[tuple[int, float, float]] = []
    comparable: list[tuple[int, float, float]] = []
    retained: set[int] = set()
    for index, event in enumerate(events):
        c = event.compaction
        if c is None:
            continue
        item = (index, c.start, c.end)
        ranges.append(item)
        if math.isnan(c.start) or math.isnan(c.end):
            retained.add(index)
        else:
            comparable.append(item)
    comparable.sort(key=lambda item: (item[1], -item[2], -item[0]))
    max_end: float | None = None
    for index, _, end in comparable:
        if max_end is None or end > max_end:
            retained.add(index)
            max_end = end
    return [item for item in ranges if item[0] in retained]


def latest_compaction(events: Sequence[AdkEvent]) -> AdkEvent | None:
    """``_latest_compaction_event``: the surviving compaction latest in stream order."""
    ranges = compaction_ranges(events)
    return events[ranges[-1][0]] if ranges else None


@dataclass(frozen=True, eq=False)
class Processed:
    """One item of the assembled request: a raw event, or a surviving summary (``summary``)."""

    timestamp: float
    event: AdkEvent
    summary: bool = False


def process_compaction_events(events: Sequence[AdkEvent]) -> list[Processed]:
    """``_process_compaction_events``: each surviving summary at its end timestamp, the raw events inside any
    surviving range left out, everything in (timestamp, stream position) order."""
    infos = compaction_ranges(events)
    coverage: list[tuple[float, float]] = []
    for start, end in sorted((start, end) for _, start, end in infos if start <= end):
        if coverage and start <= coverage[-1][1]:
            coverage[-1] = (coverage[-1][0], max(coverage[-1][1], end))
        else:
            coverage.append((start, end))
    starts = [start for start, _ in coverage]

    def covered(ts: float) -> bool:
        i = bisect_right(starts, ts) - 1
        return i >= 0 and ts <= coverage[i][1]

    items: list[tuple[float, int, Processed]] = []
    for index, _, end in infos:
        items.append((end, index, Processed(end, events[index], True)))
    for index, event in enumerate(events):
        if event.is_compaction or covered(event.timestamp):
            continue
        items.append((event.timestamp, index, Processed(event.timestamp, event)))
    items.sort(key=lambda item: (item[0], item[1]))
    return [item for _, _, item in items]


def recover_compacted_calls(items: list[Processed], raw: Sequence[AdkEvent]) -> list[Processed]:
    """``_recover_compacted_function_calls``: a response that survived while its call was summarized away gets the
    call's event back right before it (with the call's other responses that were summarized away)."""
    answered: set[str] = set()
    opened: set[str] = set()
    for item in items:
        if not item.summary:
            answered |= item.event.response_ids
            opened |= item.event.call_ids
    if answered <= opened:  # every surviving response still has its call: nothing to recover
        return items
    present = {id(item.event) for item in items if not item.summary}
    latest_call: dict[str, AdkEvent] = {}
    call_of: dict[tuple[int, str], AdkEvent] = {}
    response_of: dict[tuple[int, str], AdkEvent] = {}
    surviving: set[tuple[int, str]] = set()
    for event in raw:
        for cid in _ordered_call_ids(event):
            latest_call[cid] = event
        for rid in _ordered_response_ids(event):
            owner = latest_call.get(rid)
            if owner is None:
                continue
            call_of[id(event), rid] = owner
            key = (id(owner), rid)
            if id(event) in present:
                surviving.add(key)
            existing = response_of.get(key)
            if existing is None or event.timestamp >= existing.timestamp:
                response_of[key] = event
    out: list[Processed] = []
    calls_back: set[int] = set()
    responses_back: set[int] = set()
    for item in items:
        if not item.summary:
            for rid in _ordered_response_ids(item.event):
                owner = call_of.get((id(item.event), rid))
                if owner is None or id(owner) in present or id(owner) in calls_back:
                    continue
                out.append(Processed(owner.timestamp, owner))
                calls_back.add(id(owner))
                for sibling in _ordered_call_ids(owner):
                    key = (id(owner), sibling)
                    if key in surviving:
                        continue
                    response = response_of.get(key)
                    if response is not None and id(response) not in responses_back:
                        out.append(Processed(response.timestamp, response))
                        responses_back.add(id(response))
        out.append(item)
    return out if calls_back else items


def _ordered_call_ids(event: AdkEvent) -> list[str]:
    return [c.id for e in event.entries for c in e.message.tool_calls if c.id]


def _ordered_response_ids(event: AdkEvent) -> list[str]:
    return [e.message.tool_result.call_id for e in event.entries
            if e.message.tool_result is not None and e.message.tool_result.call_id]


# ------------------------------------------------------------------------------------------------ what to compact
def longest_self_contained_prefix(window: Sequence[AdkEvent], all_events: Sequence[AdkEvent]) -> list[AdkEvent]:
    """``_longest_self_contained_prefix``: the longest prefix of ``window`` that leaves no function call open; when
    that stops short, calls that can never be answered (no response anywhere in the session, not opened by the
    newest invocation) no longer hold it back, unless the stop falls between two invocations."""

    def safe_length(dead: set[str]) -> int:
        open_ids: set[str] = set()
        safe = 0
        for i, event in enumerate(window):
            open_ids -= event.response_ids
            open_ids |= event.call_ids - dead
            if not open_ids:
                safe = i + 1
        return safe

    safe = safe_length(set())
    if safe == len(window):
        return list(window)
    if safe > 0 and window[safe - 1].invocation != window[safe].invocation:
        return list(window[:safe])
    newest = next((e.invocation for e in reversed(all_events) if e.invocation and not e.is_compaction), None)
    answered: set[str] = set()
    for event in all_events:
        answered |= event.response_ids
    dead = {cid for event in window if not (newest and event.invocation == newest)
            for cid in event.call_ids if cid not in answered}
    if not dead:
        return list(window[:safe])
    return list(window[: max(safe, safe_length(dead))])


def safe_token_split(candidates: Sequence[AdkEvent], retention: int) -> int:
    """``_safe_token_compaction_split_index``: ``len - retention``, moved earlier until no retained response lacks
    its call."""
    initial = len(candidates) - retention
    if initial <= 0:
        return 0
    unmatched: set[str] = set()
    for i in range(len(candidates) - 1, -1, -1):
        event = candidates[i]
        unmatched |= event.response_ids
        unmatched -= event.call_ids
        if not unmatched and i <= initial:
            return i
    return 0


def _invocation_ends(events: Sequence[AdkEvent]) -> tuple[float, dict[str, float]]:
    """Where the most recent compaction ends (0 without one), and when each invocation's last event came (by
    invocation, in the order they began; compaction events left out)."""
    last_end = 0.0
    for event in reversed(events):
        if event.compaction is not None and event.compaction.end:
            last_end = event.compaction.end
            break
    latest: dict[str, float] = {}
    for event in events:
        if event.invocation and not event.is_compaction:
            latest[event.invocation] = max(latest.get(event.invocation, 0.0), event.timestamp)
    return last_end, latest


def sliding_window_events(events: Sequence[AdkEvent], interval: int, overlap: int) -> list[AdkEvent]:
    """The events ``_run_compaction_for_sliding_window`` summarizes once ``interval`` invocations are new since the
    last compaction: from the first event of the invocation ``overlap`` before the first new one to the last event
    of the last new one, compaction events left out, cut to its longest self-contained prefix (empty: none)."""
    last_end, latest = _invocation_ends(events)
    invocations = list(latest)
    new = [inv for inv in invocations if latest[inv] > last_end]
    if len(new) < interval:
        return []
    start_inv = invocations[max(0, invocations.index(new[0]) - overlap)]
    end_inv = new[-1]
    last = max(i for i, e in enumerate(events) if e.invocation == end_inv)
    first = min(i for i, e in enumerate(events) if e.invocation == start_inv)
    window = [e for e in events[first: last + 1] if not e.is_compaction]
    return longest_self_contained_prefix(window, events)


def new_invocations(events: Sequence[AdkEvent]) -> int:
    """How many invocations ended after the most recent compaction (what the sliding window counts)."""
    last_end, latest = _invocation_ends(events)
    return sum(1 for ts in latest.values() if ts > last_end)


def token_threshold_events(events: Sequence[AdkEvent], retention: int) -> tuple[list[AdkEvent], Compaction | None]:
    """``_events_to_compact_for_token_threshold``: the raw events after the last surviving compaction but the last
    ``retention`` (the split moved so retained responses keep their calls; 0 keeps none), cut to the longest
    self-contained prefix; and the previous summary, which ADK puts first (at its start timestamp) so the new
    summary supersedes it."""
    previous = latest_compaction(events)
    last_end = previous.compaction.end if previous is not None and previous.compaction is not None else 0.0
    candidates = [e for e in events if not e.is_compaction and e.timestamp > last_end]
    if len(candidates) <= retention:
        return [], None
    chosen = candidates if retention == 0 else candidates[: safe_token_split(candidates, retention)]
    chosen = longest_self_contained_prefix(chosen, events)
    if not chosen:
        return [], None
    return chosen, previous.compaction if previous is not None else None
