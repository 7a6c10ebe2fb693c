"""Usage per LLM call from ``ui_messages.json``: the ``say: "api_req_started"`` records and which assistant message
of the history each one produced.

A record's ``text`` is JSON ``{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost, cancelReason?,
apiProtocol? (Roo)}``. Both agents say it *before* they append the user message of that request and fill its usage
when the response has streamed; a retry after a failed first chunk reuses it, so one record stands for one
response. Alignment, in order of preference:

1. ``conversationHistoryIndex`` (Cline): the history's last index when the record was said, so the response is
   entry ``index + 2`` (after the request's user message);
2. timestamps (``ts`` on history entries: Roo, newer Cline): the response's record is the last one said after the
   previous response and before it;
3. order, when there are exactly as many records as responses.

Token conventions: Cline's ``tokensIn`` is uncached input (its truncation trigger adds the four counts). Roo's is
the *total* input for the OpenAI protocol, and for the Anthropic protocol since Roo Code 3.30 (Oct 2025, #8954)
too, before which it was uncached: a task whose Anthropic records ever report ``tokensIn`` below its cache tokens
uses the old convention (the new one can never do that), and records without ``apiProtocol`` (older still) are
uncached. Cache writes are taken as 5-minute writes (the records do not split them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..conversation import LoadWarning
from ..conversation import Usage
from ._cline_history import History
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text


@dataclass(frozen=True)
class ApiRequest:
    """One ``api_req_started`` record."""

    position: int  # index in ui_messages
    ts: int | None
    history_index: int | None
    info: Mapping[str, Any]
    model: str | None
    provider: str | None

    @property
    def reported(self) -> bool:
        """Whether the request reported any usage (a request that never answered reports none)."""
        return any(as_count(self.info.get(k)) for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads"))

    def total_tokens(self) -> int:
        """The four counts added, as Cline's truncation trigger adds them."""
        return sum(as_count(self.info.get(k)) for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads"))


def api_requests(ui: Sequence[Any], warnings: list[LoadWarning]) -> list[ApiRequest]:
    """The ``api_req_started`` records of ``ui_messages.json`` in order; unreadable ones are counted in a warning."""
    out: list[ApiRequest] = []
    bad: list[int] = []
    for position, message in enumerate(ui):
        if not isinstance(message, Mapping) or message.get("say") != "api_req_started":
            continue
        info = _json_object(message.get("text"))
        if info is None:
            bad.append(position)
            continue
        model_info = as_mapping(message.get("modelInfo"))
        out.append(ApiRequest(position, _integer(message.get("ts")), _integer(message.get("conversationHistoryIndex")),
                              info, as_text(model_info.get("modelId")), as_text(model_info.get("providerId"))))
    if bad:
        warnings.append(LoadWarning(f"ui_messages.json: {len(bad)} api_req_started records without a JSON object text "
                                    f"skipped (first: message {bad[0]})", field="text"))
    return out


def _json_object(text: Any) -> Mapping[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, Mapping) else None


def _integer(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value)


def call_sources(history: History) -> list[int]:
    """Entry indices of the history's LLM responses (assistant messages the run's model produced)."""
    return [s.index for s in history.sources
            if s.role == "assistant" and s.count and s.raw.get("isSummary") is not True]


def align(requests: list[ApiRequest], history: History, warnings: list[LoadWarning]) -> dict[int, ApiRequest]:
    """Entry index of each response -> the record of the request that produced it."""
    calls = call_sources(history)
    if not requests or not calls:
        return {}
    if any(r.history_index is not None for r in requests):
        matched = _by_history_index(requests, set(calls))
    elif all(history.sources[i].ts is not None for i in calls) and all(r.ts is not None for r in requests):
        matched = _by_time(requests, [(i, history.sources[i].ts or 0) for i in calls])
    elif len(requests) == len(calls):
        matched = dict(zip(calls, requests, strict=True))
    else:
        warnings.append(LoadWarning(f"ui_messages.json: {len(requests)} api_req_started records for {len(calls)} LLM "
                                    "responses and no index or timestamps to match them; usage not read",
                                    field="conversationHistoryIndex"))
        return {}
    used = {id(r) for r in matched.values()}
    unmatched = [r for r in requests if id(r) not in used and r.reported]
    if unmatched:
        warnings.append(LoadWarning(f"ui_messages.json: {len(unmatched)} api_req_started records with usage match no "
                                    "response in the history (failed or empty responses); their usage is not "
                                    f"attributed (first: message {unmatched[0].position})", field="text"))
    return matched


def _by_history_index(requests: list[ApiRequest], calls: set[int]) -> dict[int, ApiRequest]:
    matched: dict[int, ApiRequest] = {}
    for request in requests:
        if request.history_index is not None and request.history_index + 2 in calls:
            matched[request.history_index + 2] = request  # a later record for the same response is its retry
    return matched


def _by_time(requests: list[ApiRequest], calls: list[tuple[int, int]]) -> dict[int, ApiRequest]:
    matched: dict[int, ApiRequest] = {}
    k = 0
    previous = None
    for index, ts in calls:
        chosen = None
        while k < len(requests) and (requests[k].ts or 0) < ts:
            if previous is None or (requests[k].ts or 0) > previous:
                chosen = requests[k]
            k += 1
        if chosen is not None:
            matched[index] = chosen
        previous = ts
    return matched


def roo_counts_total_input(requests: list[ApiRequest]) -> bool:
    """Whether a Roo task's Anthropic-protocol records count ``tokensIn`` as total input (see the module notes)."""
    for r in requests:
        if r.info.get("apiProtocol") == "anthropic" and as_count(r.info.get("tokensIn")) < (
                as_count(r.info.get("cacheReads")) + as_count(r.info.get("cacheWrites"))):
            return False
    return True


def request_usage(request: ApiRequest, roo: bool, anthropic_total: bool) -> Usage | None:
    """A record's usage (None when it reported none)."""
    if not request.reported:
        return None
    info = request.info
    tokens_in = as_count(info.get("tokensIn"))
    reads, writes = as_count(info.get("cacheReads")), as_count(info.get("cacheWrites"))
    protocol = info.get("apiProtocol")
    total = roo and (protocol == "openai" or (protocol == "anthropic" and anthropic_total))
    uncached = max(tokens_in - reads - writes, 0) if total else tokens_in
    return Usage(input_tokens=uncached, output_tokens=as_count(info.get("tokensOut")), cache_read_tokens=reads,
                 cache_write_tokens=writes, cache_write_5m_tokens=writes)


def metrics_usage(raw: Mapping[str, Any]) -> Usage | None:
    """Cline's own ``metrics.tokens {prompt, completion, cached}`` on a history entry (reads and writes not split:
    ``cached`` is counted as cache reads)."""
    tokens = as_mapping(as_mapping(raw.get("metrics")).get("tokens"))
    if not tokens:
        return None
    usage = Usage(input_tokens=as_count(tokens.get("prompt")), output_tokens=as_count(tokens.get("completion")),
                  cache_read_tokens=as_count(tokens.get("cached")))
    return usage if usage.prompt_tokens or usage.output_tokens else None
