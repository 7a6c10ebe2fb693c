"""Google Agent Development Kit (ADK) sessions: a ``Session`` dump (``Session.model_dump_json()``, or what ``adk run
--save_session`` writes and ``adk web`` / the API server return, with camelCase keys), a JSON list of events, or
the JSONL event stream of ``adk run --jsonl`` (one event per line; lines of several sessions are told apart by
``session_id``, each session its own conversation).

Each event is ``{author, invocation_id, content: {role, parts}, actions, usage_metadata, model_version, …}``
(snake_case or camelCase keys alike). How events become messages:

* ``content.role == "model"``: one assistant message per event, one LLM call (ADK stores only the final,
  non-partial response of a call): ``text`` parts, ``thought`` parts as reasoning, ``function_call`` parts as tool
  calls, Gemini code execution (``executable_code`` / ``code_execution_result``, run inside the response) as JSON
  text of the message; ``usage_metadata`` is the call's usage (``prompt_token_count`` includes
  ``cached_content_token_count``, which becomes cache reads; ``tool_use_prompt_token_count`` is input too;
  ``thoughts_token_count`` is output); ``model_version`` its model;
* ``content.role == "user"``: ``function_response`` parts become tool results (a response ``{"error": …}`` is an
  error), the other parts one user message (``inline_data`` / ``file_data`` as image or file placeholders);
* ``actions.compaction`` (events compaction, ``EventsCompactionConfig``): ADK appends a compaction event whose
  ``compacted_content`` summarizes the events between ``start_timestamp`` and ``end_timestamp``; it becomes a
  :class:`LogEvent` and the summary a user message in ``log_summary_indices`` (ADK sends it in place of the
  events it covers, which stay stored);
* partial (streaming) events are skipped, and so are events with no content (state changes, transfers, errors:
  an ``error_message`` is reported as a warning).

The ``--jsonl`` stream holds what the runner yields: the agent's events, not the user's turns nor the compaction
events (the saved session has them all).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import Usage
from ..errors import LoadError
from ._fields import TOO_DEEP
from ._fields import as_count
from ._fields import as_id
from ._fields import as_mapping
from ._fields import as_text
from ._fields import first_misfit
from ._fields import type_name
from ._parts import Parts
from ._transcript import Transcript
from ._transcript import json_text
from .base import Document
from .base import FormatInfo
from .base import register_format

#: the part fields an event's content may carry, besides text
_CODE_PARTS = ("executable_code", "code_execution_result")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def field_of(obj: Mapping[str, Any], name: str) -> Any:
    """``obj[name]`` under its snake_case name or the camelCase alias ADK serializes by (``by_alias=True``)."""
    value = obj.get(name)
    return value if value is not None else obj.get(_camel(name))


def usage_of(raw: Any) -> Usage | None:
    """Gemini ``usage_metadata`` as :class:`Usage`: the prompt count includes cached tokens."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    prompt = as_count(field_of(raw, "prompt_token_count")) + as_count(field_of(raw, "tool_use_prompt_token_count"))
    cached = min(as_count(field_of(raw, "cached_content_token_count")), prompt)
    output = as_count(field_of(raw, "candidates_token_count")) + as_count(field_of(raw, "thoughts_token_count"))
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


def _blob(part: Mapping[str, Any]) -> Image | File | None:
    """``inline_data`` / ``file_data`` as a placeholder."""
    inline = field_of(part, "inline_data")
    if isinstance(inline, Mapping):
        mime = as_text(field_of(inline, "mime_type"))
        if mime and mime.startswith("image/"):
            return Image(mime_type=mime, source="base64")
        return File(filename=as_text(field_of(inline, "display_name")), mime_type=mime)
    data = field_of(part, "file_data")
    if isinstance(data, Mapping):
        mime = as_text(field_of(data, "mime_type"))
        uri = as_text(field_of(data, "file_uri"))
        if mime and mime.startswith("image/"):
            return Image(mime_type=mime, source=uri)
        return File(filename=as_text(field_of(data, "display_name")) or uri, mime_type=mime)
    return None


def _response_value(response: Any) -> tuple[str, bool]:
    """A ``function_response.response`` as the JSON the model gets (ADK wraps a plain return value as
    ``{"result": …}``), and whether it reports an error (ADK's ``{"error": …}`` convention)."""
    if isinstance(response, Mapping):
        return json_text(response), set(response) == {"error"}
    return (response if isinstance(response, str) else json_text(response)), False


def _without_nulls(value: Any) -> Any:
    """A JSON value with null members left out (a snake_case dump keeps them, the camelCase export does not)."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _code_text(part: Mapping[str, Any]) -> str:
    """Gemini code execution parts (run inside the response) as JSON text."""
    return json_text({key: _without_nulls(field_of(part, key)) for key in _CODE_PARTS if field_of(part, key)})


class _Session:
    """Reading state of one session's events."""

    def __init__(self) -> None:
        self.out = Transcript()
        self.partial = 0
        self.authors: dict[str, None] = {}

    def event(self, event: Any, where: str, line: int | None) -> None:
        if not isinstance(event, Mapping):
            self.out.warn(f"{where}: skipped, expected an event object, got {type_name(event)}", line)
            return
        if event.get("partial") is True:
            self.partial += 1
            return
        meta: dict[str, Any] = {}
        for key in ("author", "invocation_id", "id", "timestamp", "branch"):
            value = field_of(event, key)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                meta["event_id" if key == "id" else key] = value
        compaction = field_of(as_mapping(event.get("actions")), "compaction")
        if isinstance(compaction, Mapping):
            self.compaction(compaction, meta)
            return
        content = event.get("content")
        error = as_text(field_of(event, "error_message"))
        if error and not content:
            code = as_text(field_of(event, "error_code"))
            self.out.warn(f"{where}: the model call failed ({code + ': ' if code else ''}{error}); no message",
                          line, "error_message")
            return
        if content is None:
            return  # state changes, agent transfers, end-of-agent markers: nothing is sent to the model
        if not isinstance(content, Mapping) or not isinstance(content.get("parts"), list):
            self.out.warn(f"{where}: skipped, 'content' has no 'parts' list", line, "content")
            return
        author = as_text(meta.get("author"))
        if author:
            self.authors.setdefault(author, None)
        if content.get("role") == "model":
            self.model_event(event, content["parts"], where, line, meta)
        else:
            self.user_event(content["parts"], where, line, meta)

    def compaction(self, compaction: Mapping[str, Any], meta: dict[str, Any]) -> None:
        parts = field_of(compaction, "compacted_content")
        texts = [p["text"] for p in as_mapping(parts).get("parts") or []
                 if isinstance(p, Mapping) and isinstance(p.get("text"), str) and p.get("thought") is not True]
        span = {k: field_of(compaction, k) for k in ("start_timestamp", "end_timestamp")
                if isinstance(field_of(compaction, k), (int, float))}
        self.out.log_compaction("\n".join(texts) or None, {**meta, **span})

    def part_objects(self, parts: list[Any], where: str, line: int | None) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """The parts of one event's content that are objects, each with where it is; a warning for each other."""
        for i, part in enumerate(parts):
            if isinstance(part, Mapping):
                yield f"{where} part {i}", part
            else:
                self.out.warn(f"{where} part {i}: skipped, expected an object, got {type_name(part)}", line)

    def model_event(self, event: Mapping[str, Any], parts: list[Any], where: str, line: int | None,
                    meta: dict[str, Any]) -> None:
        p = Parts()
        for part_where, part in self.part_objects(parts, where, line):
            self.model_part(part, part_where, line, p)
        if not p.has_content:
            return
        model = as_text(field_of(event, "model_version"))
        if model:
            meta["model"] = model
        finish = as_text(field_of(event, "finish_reason"))
        if finish:
            meta["finish_reason"] = finish
        message = Message("assistant", tuple(p.texts), tuple(p.tool_calls), None, tuple(p.reasoning),
                          tuple(p.images), tuple(p.files), meta=meta)
        self.out.add_call(message, usage_of(field_of(event, "usage_metadata")), model)

    def model_part(self, part: Mapping[str, Any], where: str, line: int | None, p: Parts) -> None:
        call = field_of(part, "function_call")
        text = as_text(part.get("text"))
        if isinstance(call, Mapping):
            name = as_text(call.get("name"))
            if not name:
                self.out.warn(f"{where}: function_call without a 'name' skipped", line, "function_call.name")
                return
            args = call.get("args")
            p.tool_calls.append(ToolCall(as_id(call.get("id")), name, dict(args) if isinstance(args, Mapping) else {}))
        elif text is not None:
            (p.reasoning if part.get("thought") is True else p.texts).append(text)
        elif any(isinstance(field_of(part, key), Mapping) for key in _CODE_PARTS):
            p.texts.append(_code_text(part))
        else:
            p.attach(_blob(part))

    def user_event(self, parts: list[Any], where: str, line: int | None, meta: dict[str, Any]) -> None:
        p = Parts()
        for _, part in self.part_objects(parts, where, line):
            response = field_of(part, "function_response")
            text = as_text(part.get("text"))
            if isinstance(response, Mapping):
                value, error = _response_value(response.get("response"))
                origin = self.out.origin(as_id(response.get("id")), as_text(response.get("name")))
                self.out.add(Message("tool", tool_result=ToolResult(origin, value, error), meta=dict(meta)))
            elif text is not None:
                if text:
                    p.texts.append(text)
            elif not p.attach(_blob(part)) and any(isinstance(field_of(part, key), Mapping) for key in _CODE_PARTS):
                p.texts.append(_code_text(part))
        if p.has_content:
            self.out.add(Message("user", tuple(p.texts), images=tuple(p.images), files=tuple(p.files), meta=meta))

    def conversation(self, path: str | None, session_id: str, meta: dict[str, Any],
                     shared: list[LoadWarning]) -> Conversation:
        if self.partial:
            self.out.warn(f"{self.partial} partial (streaming) event(s) skipped: the final event of each call is read")
        if self.authors:
            meta = {**meta, "authors": list(self.authors)}
        return self.out.conversation("google-adk", path, session_id, warnings=shared, meta=meta)


# ------------------------------------------------------------------------------------------------- shapes
def _is_event(value: Any) -> bool:
    return (isinstance(value, Mapping) and isinstance(value.get("author"), str)
            and ("invocation_id" in value or "invocationId" in value))


def _is_session(value: Any) -> bool:
    return (isinstance(value, Mapping) and isinstance(value.get("events"), list)
            and any(k in value for k in ("app_name", "appName", "user_id", "userId")))


def _sessions(doc: Document) -> Iterator[tuple[str, dict[str, Any], list[tuple[int | None, Any]]]]:
    """(session id, session facts, (line, event) pairs) of every session in the document."""
    if doc.kind == "jsonl":
        grouped: dict[str, list[tuple[int | None, Any]]] = {}
        for line, record in doc.records:
            key = as_text(record.get("session_id")) if isinstance(record, Mapping) else None
            grouped.setdefault(key or "0", []).append((line, record))
        for key, events in grouped.items():
            yield key, {}, events
        return
    value = doc.value
    if isinstance(value, list):
        yield "0", {}, [(None, e) for e in value]
        return
    facts = {k: field_of(value, k) for k in ("app_name", "user_id", "last_update_time")
             if isinstance(field_of(value, k), (str, int, float))}
    state = value.get("state")
    if isinstance(state, Mapping) and state:
        facts["state_keys"] = sorted(str(k) for k in state)[:50]
    yield as_text(value.get("id")) or "0", facts, [(None, e) for e in value["events"]]


_SAFE_ID = re.compile(r"[^\w.:-]+")


def read(doc: Document) -> list[Conversation]:
    if detect(doc) is not None:
        raise LoadError(doc.path, "expected an ADK session ({id, app_name, events}), a list of ADK events or ADK "
                        "event JSONL", field="events")
    out = []
    for number, (session_id, facts, events) in enumerate(_sessions(doc)):
        session = _Session()
        for i, (line, event) in enumerate(events):
            try:
                session.event(event, f"line {line}" if line is not None else f"event {i}", line)
            except RecursionError:
                session.out.warn(f"event {i}: {TOO_DEEP}", line)
        out.append(session.conversation(doc.path, _SAFE_ID.sub("_", session_id)[:200] or str(number), facts, []))
    return out


def detect(doc: Document) -> str | None:
    if doc.kind == "jsonl":
        records = [r for _, r in doc.records[:200]]
        return None if first_misfit(records, _is_event) is None else "no ADK events (author with invocation_id)"
    if doc.kind != "json":
        return "not JSON"
    value = doc.value
    if isinstance(value, list):
        if not value:
            return "the event list is empty"
        misfit = first_misfit(value, _is_event)
        return None if misfit is None else f"item {misfit} is not an ADK event (author with invocation_id)"
    if not _is_session(value):
        return "not an ADK session (an object with 'events' and 'app_name'/'user_id')"
    events = value["events"]
    if events and first_misfit(events, _is_event) is not None:
        return "the session's events are not ADK events (author with invocation_id)"
    return None


register_format(
    FormatInfo(
        name="google-adk",
        title="Google ADK session",
        detect=detect,
        read=read,
        extensions=(".json", ".jsonl"),
        description="Google ADK sessions (Session.model_dump_json(), adk run --save_session / adk web exports, "
        "adk run --jsonl events): model and user content parts, function calls and responses, usage_metadata, "
        "events compaction summaries.",
        reads="Every event's content: user text and attachments (as placeholders), model text, thoughts (as "
        "reasoning), function calls and responses (an {\"error\": …} response as an error), Gemini code execution "
        "as text; usage_metadata and model_version per model event; actions.compaction events as the log's "
        "compactions with their summaries; several sessions of one JSONL stream as separate conversations.",
        leaves_out="The agent's instruction and tool definitions (a session does not store them); how ADK "
        "rewrites other agents' events as 'For context:' text and filters branches when it builds a request "
        "(every event is kept as it was stored); partial streaming events; state deltas, artifacts and agent "
        "transfers, which are not sent to the model. The adk run --jsonl stream itself holds only the agent's "
        "events: the user's turns and the compaction events are in the saved session, not in that stream.",
    )
)
