"""Pydantic AI message histories: ``ModelMessagesTypeAdapter.dump_json(result.all_messages())``.

The file is a JSON list of messages, each ``{"kind": "request" | "response", "parts": [...]}`` with a
``part_kind`` per part. How they become messages:

* a request's ``instructions`` (the rendered instructions it was sent with, always put first by the model) become
  the opening system message, and a system message again wherever they change (Pydantic AI sends only the newest
  request's instructions: a replay keeps the earlier ones, so a changed instruction counts twice from there on);
* request parts: ``system-prompt`` → system message; ``user-prompt`` → user message (text, ``TextContent``,
  images as placeholders, audio / video / documents / uploaded files as file placeholders); ``tool-return`` →
  tool result (``outcome`` ``failed`` or ``retried`` is an error, as the model is told); the legacy
  ``retry-prompt`` → an error result of its tool call, or, without a tool, a user message, with the text Pydantic
  AI sends (``Fix the errors and try again.``); ``retry-feedback`` → user message; ``instruction-delta`` → system
  message with the replacement text; ``speech`` → its transcript;
* response parts, one assistant message per response (one LLM call): ``text``, ``thinking`` (reasoning),
  ``tool-call`` (arguments as an object or JSON text), ``builtin-tool-call`` / ``builtin-tool-return`` (run by the
  provider inside the response: kept as JSON text of the message, like Anthropic's server tool blocks), ``file``
  (placeholder), ``speech`` (transcript);
* ``compaction`` parts (the provider's in a response, or the application's summary in a request) are the log's
  own compactions: a :class:`LogEvent` and, when the part is readable (Anthropic, an application summary), the
  summary as a user message in ``log_summary_indices``. OpenAI's compaction is opaque (``content`` null);
* a response's ``usage`` is its call's :class:`Usage` (``input_tokens`` includes cache reads and writes, which
  are split off; older ``request_tokens`` / ``response_tokens`` too); ``model_name`` the call's model.

Bookkeeping parts that never reach the model (``instruction-baseline``, ``tool-availability-delta``,
``capability-load-delta``, ``model-settings-delta``, ``cache-point`` items) are skipped silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import Role
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import Usage
from ..errors import LoadError
from ._fields import TOO_DEEP
from ._fields import UnknownTypes
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
from .openai_chat import parse_arguments

KINDS = ("request", "response")
#: parts that record the run's state and are never sent to the model
BOOKKEEPING_PARTS = frozenset({"instruction-baseline", "tool-availability-delta", "capability-load-delta",
                               "model-settings-delta"})
#: ``ToolReturnPart.outcome`` values the model is told are errors (``pydantic_ai.messages.ERROR_OUTCOMES``)
ERROR_OUTCOMES = frozenset({"failed", "retried"})
RETRY_SUFFIX = "\n\nFix the errors and try again."
_FILE_KINDS = frozenset({"audio-url", "video-url", "document-url", "uploaded-file"})


# ------------------------------------------------------------------------------------------------- content
def _media(item: Mapping[str, Any]) -> Image | File | None:
    """A multimodal content item (``image-url``, ``binary``, ``document-url``…) as a placeholder part."""
    kind = as_text(item.get("kind"))
    mime = as_text(item.get("media_type"))
    if kind == "image-url":
        return Image(mime_type=mime, source=as_text(item.get("url")))
    if kind == "binary":
        if mime and mime.startswith("image/"):
            return Image(mime_type=mime, source="base64")
        return File(filename=as_text(item.get("identifier")), mime_type=mime)
    if kind in _FILE_KINDS:
        return File(filename=as_text(item.get("url")) or as_text(item.get("file_id")), mime_type=mime)
    return None


def _content_text(item: Mapping[str, Any]) -> str | None:
    """The text of a ``text-content`` / ``structured-content`` item."""
    if item.get("kind") in ("text-content", "structured-content"):
        text = as_text(item.get("content"))
        if text is None and "value" in item:
            return json_text(item["value"])
        return text
    return None


def _user_parts(content: Any, where: str, warnings: list[LoadWarning]) -> Parts:
    """A ``user-prompt`` part's content: text, or a list of text and multimodal items."""
    parts = Parts()
    items = [content] if isinstance(content, str) else content if isinstance(content, list) else None
    if items is None:
        warnings.append(LoadWarning(f"{where}: user-prompt content is {type_name(content)}, expected text or a list; "
                                    "skipped", field="content"))
        return parts
    for item in items:
        if isinstance(item, str):
            if item:
                parts.texts.append(item)
            continue
        if not isinstance(item, Mapping):
            warnings.append(LoadWarning(f"{where}: user content item is {type_name(item)}; skipped", field="content"))
            continue
        if item.get("kind") == "cache-point":
            continue
        text = _content_text(item)
        media = _media(item) if text is None else None
        if text is not None:
            parts.texts.append(text)
        elif not parts.attach(media):
            warnings.append(LoadWarning(f"{where}: user content item of kind {item.get('kind')!r} kept as JSON text",
                                        field="content"))
            parts.texts.append(json_text(item))
    return parts


def _result_value(content: Any) -> str | tuple[ResultPart, ...]:
    """A tool return's content as the model gets it: text as it is, files as placeholders, other values as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and (single := _media(content)) is not None:
        return (single,)
    if isinstance(content, list) and any(isinstance(i, Mapping) and _media(i) is not None for i in content):
        out: list[ResultPart] = []
        for item in content:
            media = _media(item) if isinstance(item, Mapping) else None
            out.append(media if media is not None else item if isinstance(item, str) else json_text(item))
        return tuple(out)
    return json_text(content)


def _retry_text(content: Any, tool_name: str | None) -> str:
    """What Pydantic AI sends for a legacy ``retry-prompt``: the message, or the validation errors as JSON."""
    if isinstance(content, str):
        body = content if tool_name else f"Validation feedback:\n{content}"
    elif isinstance(content, list):
        plural = "s" if len(content) != 1 else ""
        errors = json.dumps([{k: v for k, v in e.items() if k != "ctx"} if isinstance(e, Mapping) else e
                             for e in content], ensure_ascii=False, indent=2, default=str)
        body = f"{len(content)} validation error{plural}:\n```json\n{errors}\n```"
    else:
        body = json_text(content)
    return body + RETRY_SUFFIX


# ------------------------------------------------------------------------------------------------- usage
def usage_of(raw: Any) -> Usage | None:
    """A response's ``usage`` (``RequestUsage``): input tokens include cache reads and writes in Pydantic AI."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    total_in = as_count(raw.get("input_tokens", raw.get("request_tokens")))
    read = as_count(raw.get("cache_read_tokens"))
    write = as_count(raw.get("cache_write_tokens"))
    write_1h = min(as_count(raw.get("cache_write_1h_tokens")), write)
    return Usage(input_tokens=max(total_in - read - write, 0),
                 output_tokens=as_count(raw.get("output_tokens", raw.get("response_tokens"))),
                 cache_read_tokens=read, cache_write_tokens=write, cache_write_5m_tokens=write - write_1h,
                 cache_write_1h_tokens=write_1h)


# ------------------------------------------------------------------------------------------------- reading
class _History:
    """Reading state of one message history."""

    def __init__(self) -> None:
        self.out = Transcript()
        self.unknown = UnknownTypes("part")
        self.instructions: str | None = None

    def message(self, raw: Any, index: int) -> None:
        where = f"message {index}"
        if not isinstance(raw, Mapping):
            self.out.warn(f"{where}: skipped, expected an object, got {type_name(raw)}")
            return
        parts = raw.get("parts")
        if not isinstance(parts, list):
            self.out.warn(f"{where}: skipped, 'parts' is {type_name(parts)}, expected a list", field_name="parts")
            return
        meta = {k: raw[k] for k in ("timestamp", "run_id") if isinstance(raw.get(k), str)}
        if raw.get("kind") == "request":
            self.request(raw, parts, where, meta)
        elif raw.get("kind") == "response":
            self.response(raw, parts, where, meta)
        else:
            self.out.warn(f"{where}: skipped, unknown kind {raw.get('kind')!r} (expected request or response)",
                          field_name="kind")

    def open(self, messages: list[Any]) -> None:
        """The instructions of the first request that has them, as the opening system message: a model request
        puts them first, before any history (a summary the application put ahead of them included)."""
        for raw in messages:
            if isinstance(raw, Mapping) and raw.get("kind") == "request" and as_text(raw.get("instructions")):
                self.instructions = raw["instructions"]
                self.out.add(Message("system", (self.instructions,), meta={"instructions": True}))
                return

    # ------------------------------------------------------------------------------------------- requests
    def request(self, raw: Mapping[str, Any], parts: list[Any], where: str, meta: dict[str, Any]) -> None:
        instructions = as_text(raw.get("instructions"))
        if instructions and instructions != self.instructions:
            self.out.add(Message("system", (instructions,), meta={**meta, "instructions": True}))
            self.instructions = instructions
        for i, part in enumerate(parts):
            if not isinstance(part, Mapping):
                self.out.warn(f"{where} part {i}: skipped, expected an object, got {type_name(part)}")
                continue
            self.request_part(part, f"{where} part {i}", meta)

    def request_part(self, part: Mapping[str, Any], where: str, meta: dict[str, Any]) -> None:
        kind = as_text(part.get("part_kind"))
        part_meta = {**meta, **({"timestamp": part["timestamp"]} if isinstance(part.get("timestamp"), str) else {})}
        if kind == "system-prompt":
            text = as_text(part.get("content"))
            if text:
                self.out.add(Message("system", (text,), meta=part_meta))
        elif kind == "user-prompt":
            local: list[LoadWarning] = []
            p = _user_parts(part.get("content"), where, local)
            self.out.warnings += local
            if p.has_content:
                self.out.add(Message("user", tuple(p.texts), images=tuple(p.images), files=tuple(p.files),
                                     meta=part_meta))
        elif kind == "tool-return":
            self.tool_return(part, where, part_meta)
        elif kind == "retry-prompt":
            self.retry_prompt(part, part_meta)
        elif kind == "retry-feedback":
            content = part.get("content")
            text = content if isinstance(content, str) else json_text(content)
            self.out.add(Message("user", (text,), meta={**part_meta, "retry": True}))
        elif kind == "compaction":
            self.out.log_compaction(as_text(part.get("content")), part_meta)
        elif kind == "instruction-delta":
            text = as_text(part.get("content"))
            if text:
                self.out.add(Message("system", (text,), meta={**part_meta, "instruction_delta": True}))
        elif kind == "speech":
            self.speech(part, part_meta)
        elif kind not in BOOKKEEPING_PARTS:
            self.unknown.add(part.get("part_kind"), None)

    def tool_return(self, part: Mapping[str, Any], where: str, meta: dict[str, Any]) -> None:
        call_id = as_id(part.get("tool_call_id"))
        if call_id is None:
            self.out.warn(f"{where}: tool-return without a 'tool_call_id'", field_name="tool_call_id")
        outcome = as_text(part.get("outcome")) or "success"
        result = ToolResult(self.out.origin(call_id, as_text(part.get("tool_name"))),
                            _result_value(part.get("content")), outcome in ERROR_OUTCOMES)
        self.out.add(Message("tool", tool_result=result, meta={**meta, "outcome": outcome}))

    def retry_prompt(self, part: Mapping[str, Any], meta: dict[str, Any]) -> None:
        tool_name = as_text(part.get("tool_name"))
        text = _retry_text(part.get("content"), tool_name)
        if tool_name is None:
            self.out.add(Message("user", (text,), meta={**meta, "retry": True}))
            return
        origin = self.out.origin(as_id(part.get("tool_call_id")), tool_name)
        self.out.add(Message("tool", tool_result=ToolResult(origin, text, True), meta={**meta, "outcome": "retried"}))

    def speech(self, part: Mapping[str, Any], meta: dict[str, Any]) -> None:
        text = as_text(part.get("transcript"))
        if text:
            role: Role = "assistant" if part.get("speaker") == "assistant" else "user"
            self.out.add(Message(role, (text,), meta={**meta, "speech": True}))

    # ------------------------------------------------------------------------------------------- responses
    def response(self, raw: Mapping[str, Any], parts: list[Any], where: str, meta: dict[str, Any]) -> None:
        p = Parts()
        for i, part in enumerate(parts):
            if not isinstance(part, Mapping):
                self.out.warn(f"{where} part {i}: skipped, expected an object, got {type_name(part)}")
                continue
            self.response_part(part, f"{where} part {i}", p)
        model = as_text(raw.get("model_name"))
        for key in ("model_name", "provider_name", "provider_response_id", "finish_reason"):
            if isinstance(raw.get(key), str):
                meta[{"model_name": "model", "provider_name": "provider"}.get(key, key)] = raw[key]
        if raw.get("state") not in (None, "complete"):
            meta["state"] = raw.get("state")
        usage = usage_of(raw.get("usage"))
        if not p.has_content:
            if usage is not None:
                self.out.warn(f"{where}: a response with no content (only a compaction, say); its usage is not "
                              "attached to any call", field_name="usage")
            return
        message = Message("assistant", tuple(p.texts), tuple(p.tool_calls), None, tuple(p.reasoning),
                          tuple(p.images), tuple(p.files), meta=meta)
        self.out.add_call(message, usage, model)

    def response_part(self, part: Mapping[str, Any], where: str, p: Parts) -> None:
        kind = as_text(part.get("part_kind"))
        if kind == "text":
            text = as_text(part.get("content"))
            if text:
                p.texts.append(text)
        elif kind == "thinking":
            text = as_text(part.get("content"))
            if text:
                p.reasoning.append(text)
        elif kind == "tool-call":
            self.tool_call(part, where, p)
        elif kind in ("builtin-tool-call", "builtin-tool-return"):
            p.texts.append(json_text({k: v for k, v in part.items() if k not in ("timestamp", "provider_details")}))
        elif kind == "file":
            media = _media(as_mapping(part.get("content")))
            if isinstance(media, Image):
                p.images.append(media)
            else:
                p.files.append(media if isinstance(media, File) else File())
        elif kind == "compaction":
            self.out.log_compaction(as_text(part.get("content")),
                                    {"provider": part["provider_name"]} if isinstance(part.get("provider_name"), str)
                                    else None)
        elif kind == "speech":
            text = as_text(part.get("transcript"))
            if text:
                p.texts.append(text)
        else:
            self.unknown.add(part.get("part_kind"), None)

    def tool_call(self, part: Mapping[str, Any], where: str, p: Parts) -> None:
        name = as_text(part.get("tool_name"))
        if not name:
            self.out.warn(f"{where}: tool-call without a 'tool_name' skipped", field_name="tool_name")
            return
        local: list[LoadWarning] = []
        arguments = parse_arguments(part.get("args"), where, local)
        self.out.warnings += local
        call = ToolCall(as_id(part.get("tool_call_id")), name, arguments)
        p.tool_calls.append(call)
        if call.id:
            self.out.calls[call.id] = call


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("kind") in KINDS and isinstance(value.get("parts"), list)


def detect(doc: Document) -> str | None:
    if doc.kind != "json" or not isinstance(doc.value, list):
        return "not a JSON list of Pydantic AI messages"
    if not doc.value:
        return "the message list is empty"
    misfit = first_misfit(doc.value, _is_message)
    if misfit is not None:
        return f"item {misfit} is not a Pydantic AI message ({{'kind': 'request'|'response', 'parts': [...]}})"
    parts = [p for m in doc.value[:50] if _is_message(m) for p in m["parts"]]
    if not any(isinstance(p, Mapping) and "part_kind" in p for p in parts):
        return "no part has a 'part_kind'"
    return None


def read(doc: Document) -> list[Conversation]:
    if doc.kind != "json" or not isinstance(doc.value, list):
        raise LoadError(doc.path, "expected a JSON list of Pydantic AI messages (ModelMessagesTypeAdapter JSON)")
    history = _History()
    history.open(doc.value)
    for index, raw in enumerate(doc.value):
        try:
            history.message(raw, index)
        except RecursionError:
            history.out.warn(f"message {index}: {TOO_DEEP}")
    runs = {m["run_id"] for m in doc.value if isinstance(m, Mapping) and isinstance(m.get("run_id"), str)}
    meta = {"runs": len(runs)} if runs else {}
    conversation_id = next((m["conversation_id"] for m in doc.value if isinstance(m, Mapping)
                            and isinstance(m.get("conversation_id"), str) and m["conversation_id"]), "0")
    return [history.out.conversation("pydantic-ai", doc.path, conversation_id, warnings=history.unknown.warnings(),
                                     meta=meta)]


register_format(
    FormatInfo(
        name="pydantic-ai",
        title="Pydantic AI message history",
        detect=detect,
        read=read,
        description="Pydantic AI ModelMessagesTypeAdapter JSON (result.all_messages()): requests and responses, "
        "tool calls and returns, retries, thinking, usage per response, compaction parts.",
        reads="Every request and response part that reaches the model: instructions and system prompts, user "
        "prompts (images and files as placeholders), tool calls and returns (failed or retried ones as errors), "
        "retry prompts and feedback, thinking, provider-side (builtin) tool calls and returns as text, files, "
        "speech transcripts; usage and model per response; compaction parts as the log's compactions, with the "
        "summary when it is readable.",
        leaves_out="Bookkeeping parts the model never sees (instruction baselines, tool-availability, capability "
        "and model-settings deltas, cache points); the tool definitions (the history does not store them); the "
        "framing Pydantic AI adds around retry feedback and summaries; OpenAI's compaction content, which is "
        "encrypted.",
    )
)
