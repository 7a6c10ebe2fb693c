"""OpenAI chat-completions message lists: bare lists, ``{"messages": [...]}``, and request/response logs
(LiteLLM / OpenHands completion dumps with ``messages`` + ``response``), including legacy ``function_call``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import Role
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import ToolSchema
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_count
from ._fields import as_mapping
from .base import Document
from .base import FormatInfo
from .base import register_format

_ROLES: dict[str, Role] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool",
          "function": "tool"}


def _role(m: Mapping[str, Any]) -> Role | None:
    """The normalized role of a raw message, or None when it has no OpenAI role."""
    role = m.get("role")
    return _ROLES.get(role) if isinstance(role, str) else None


def _messages_and_tools(value: Any) -> tuple[list[Any] | None, list[Any], dict[str, Any] | None]:
    """(messages, tools, response message) from the accepted top-level shapes."""
    if isinstance(value, list):
        return value, [], None
    if not isinstance(value, Mapping):
        return None, [], None
    messages = value.get("messages")
    tools = value.get("tools") or (value.get("kwargs") or {}).get("tools") or []
    response = value.get("response")
    reply = None
    if isinstance(response, Mapping):
        choices = response.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            reply = choices[0].get("message")
    return (messages if isinstance(messages, list) else None), (tools if isinstance(tools, list) else []), reply


def detect(doc: Document) -> str | None:
    if doc.kind != "json":
        return "not a single JSON document"
    messages, _, _ = _messages_and_tools(doc.value)
    if messages is None:
        return "no list of messages (expected a list, or an object with a 'messages' list)"
    if not messages:
        return "the message list is empty"
    for i, m in enumerate(messages[:50]):
        if not isinstance(m, Mapping) or _role(m) is None:
            return f"message {i} has no OpenAI role (system/user/assistant/tool)"
        content = m.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return f"message {i}: 'content' is neither text nor a list of parts"
        if isinstance(content, list) and any(isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content):
            return "content blocks are Anthropic-style (tool_result)"
    return None


def _content(content: Any, where: str, warnings: list[LoadWarning]) -> tuple[tuple[str, ...], tuple[Image, ...]]:
    if content is None:
        return (), ()
    if isinstance(content, str):
        return ((content,) if content != "" else ()), ()
    texts: list[str] = []
    images: list[Image] = []
    if not isinstance(content, list):
        warnings.append(LoadWarning(f"{where}: 'content' is {type(content).__name__}, expected text or parts",
                                    field="content"))
        return (), ()
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            kind = part.get("type")
            if kind in ("text", "input_text", "output_text") or (kind is None and "text" in part):
                texts.append(str(part.get("text", "")))
            elif kind in ("image_url", "input_image", "image"):
                url = part.get("image_url")
                url = url.get("url") if isinstance(url, Mapping) else url
                detail = (part.get("image_url") or {}).get("detail") if isinstance(part.get("image_url"), Mapping) else None
                source = "base64" if isinstance(url, str) and url.startswith("data:") else url
                images.append(Image(mime_type=_data_mime(url), detail=detail, source=source))
            else:
                warnings.append(LoadWarning(f"{where}: content part of type {kind!r} kept as text", field="content"))
                texts.append(json.dumps(part, ensure_ascii=False))
    return tuple(texts), tuple(images)


def _data_mime(url: Any) -> str | None:
    if isinstance(url, str) and url.startswith("data:"):
        return url[5:].split(";", 1)[0] or None
    return None


def parse_arguments(raw: Any, where: str, warnings: list[LoadWarning]) -> dict[str, Any]:
    """Tool-call arguments: a JSON object string (or object). Undecodable text is kept under ``_raw``."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            warnings.append(LoadWarning(f"{where}: tool-call arguments are not valid JSON; kept as raw text",
                                        field="arguments"))
            return {"_raw": raw}
        return value if isinstance(value, dict) else {"_value": value}
    return {"_value": raw}


def read_messages(raw_messages: list[Any], path: str | None, tools_raw: Sequence[Any] = ()) -> tuple[list[Message], list[ToolSchema],
                                                                                       list[LoadWarning]]:
    """Convert OpenAI chat messages; each malformed message costs itself only (with a warning)."""
    warnings: list[LoadWarning] = []
    calls: dict[str, ToolCall] = {}
    last_function_call: ToolCall | None = None
    out: list[Message] = []
    for i, m in enumerate(raw_messages):
        where = f"message {i}"
        if not isinstance(m, Mapping):
            warnings.append(LoadWarning(f"{where}: skipped, expected an object, got {type(m).__name__}"))
            continue
        role = _role(m)
        if role is None:
            warnings.append(LoadWarning(f"{where}: skipped, unknown role {m.get('role')!r}", field="role"))
            continue
        texts, images = _content(m.get("content"), where, warnings)
        reasoning = tuple(r for r in (m.get("reasoning_content"), m.get("reasoning")) if isinstance(r, str) and r)
        meta = {k: m[k] for k in ("id", "timestamp", "created") if k in m}
        if role == "assistant":
            tool_calls: list[ToolCall] = []
            raw_calls = m.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                warnings.append(LoadWarning(f"{where}: 'tool_calls' is not a list; ignored", field="tool_calls"))
                raw_calls = []
            for j, tc in enumerate(raw_calls):
                fn = tc.get("function") if isinstance(tc, Mapping) else None
                if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
                    warnings.append(LoadWarning(f"{where}: tool call {j} skipped, expected function.name",
                                                field="tool_calls"))
                    continue
                arguments = parse_arguments(fn.get("arguments"), where, warnings)
                call = ToolCall(_call_id(tc.get("id")), fn["name"], arguments)
                tool_calls.append(call)
                if call.id:
                    calls[call.id] = call
            fc = m.get("function_call")
            if isinstance(fc, Mapping) and isinstance(fc.get("name"), str):
                call = ToolCall(None, fc["name"], parse_arguments(fc.get("arguments"), where, warnings))
                tool_calls.append(call)
                last_function_call = call
            out.append(Message("assistant", texts, tuple(tool_calls), None, reasoning, images, (), _name(m), meta))
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if m.get("role") == "function":
                origin = last_function_call or ToolCall(None, str(m.get("name") or "function"))
            elif isinstance(call_id, str) and call_id in calls:
                origin = calls[call_id]
            else:
                origin = ToolCall(call_id if isinstance(call_id, str) else None, str(m.get("name") or "unknown_tool"))
            text = "".join(texts)
            result: str | tuple[ResultPart, ...] = text if not images else (*texts, *images)
            out.append(Message("tool", tool_result=ToolResult(origin, result, bool(m.get("is_error", False))),
                               meta=meta))
        else:
            out.append(Message(role, texts, (), None, reasoning, images, (), _name(m), meta))
    tools = [t for t in (_tool_schema(t) for t in tools_raw) if t is not None]
    return out, tools, warnings


def _call_id(raw: Any) -> str | None:
    """A tool-call id as text (numbers are accepted; anything else means no id)."""
    if isinstance(raw, str):
        return raw
    return str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else None


def _name(m: Mapping[str, Any]) -> str | None:
    name = m.get("name")
    return name if isinstance(name, str) else None


def read_messages_with_meta(raw_messages: list[Any], metas: Sequence[Mapping[str, Any]], path: str | None,
                            tools_raw: Sequence[Any] = ()) -> tuple[list[Message], list[ToolSchema], list[LoadWarning]]:
    """:func:`read_messages`, with ``metas[i]`` merged into the meta of the message read from ``raw_messages[i]``."""
    out, tools, warnings = read_messages(raw_messages, path, tools_raw)
    kept = [meta for m, meta in zip(raw_messages, metas, strict=True)
            if isinstance(m, Mapping) and _role(m) is not None]
    return [msg.with_meta(**meta) if meta else msg for msg, meta in zip(out, kept, strict=True)], tools, warnings


def usage_from_openai(raw: Any) -> Usage | None:
    """Chat-completions ``usage`` as :class:`Usage`; None when ``raw`` is not a usage object.

    ``prompt_tokens`` counts every input token, cached ones included: cache reads come from
    ``prompt_tokens_details.cached_tokens`` (or LiteLLM's ``cache_read_input_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``, OpenHands' ``cache_read_tokens``), cache writes from ``cache_creation_input_tokens``
    (or ``cache_write_tokens``), and the uncached input is what remains.
    """
    if not isinstance(raw, Mapping) or not any(k in raw for k in ("prompt_tokens", "completion_tokens")):
        return None
    details = as_mapping(raw.get("prompt_tokens_details"))
    cache_read = max(as_count(details.get("cached_tokens")), as_count(raw.get("cache_read_input_tokens")),
                     as_count(raw.get("prompt_cache_hit_tokens")), as_count(raw.get("cache_read_tokens")))
    cache_write = max(as_count(raw.get("cache_creation_input_tokens")), as_count(raw.get("cache_write_tokens")))
    prompt = as_count(raw.get("prompt_tokens"))
    return Usage(input_tokens=max(prompt - cache_read - cache_write, 0),
                 output_tokens=as_count(raw.get("completion_tokens")),
                 cache_read_tokens=cache_read, cache_write_tokens=cache_write)


def _tool_schema(raw: Any) -> ToolSchema | None:
    if not isinstance(raw, Mapping):
        return None
    fn = cast("Mapping[str, Any]", raw.get("function")) if isinstance(raw.get("function"), Mapping) else raw
    name = fn.get("name")
    if not isinstance(name, str):
        return None
    parameters = fn.get("parameters") or fn.get("input_schema") or {}
    description = fn.get("description")
    return ToolSchema(name, description if isinstance(description, str) else "",
                      parameters if isinstance(parameters, Mapping) else {})


def read(doc: Document) -> list[Conversation]:
    messages, tools_raw, reply = _messages_and_tools(doc.value)
    if messages is None:
        raise LoadError(doc.path, "expected a list of chat messages", field="messages")
    raw = list(messages) + ([reply] if isinstance(reply, Mapping) else [])
    out, tools, warnings = read_messages(raw, doc.path, tools_raw)
    warnings += structural_warnings(out)
    return [Conversation(tuple(out), tuple(tools), Source("openai", doc.path, "0", tuple(warnings)))]


# --------------------------------------------------------------------------------------------------- writer
def message_to_openai(m: Message) -> dict[str, Any]:
    """One message as chat-completions JSON."""
    if m.tool_result is not None:
        return {"role": "tool", "tool_call_id": m.tool_result.call_id, "content": m.tool_result.text}
    out: dict[str, Any] = {"role": m.role}
    if m.images:
        out["content"] = [{"type": "text", "text": t} for t in m.texts] + [
            {"type": "image_url", "image_url": {"url": img.source or ""}} for img in m.images
        ]
    else:
        out["content"] = m.text if m.texts else (None if m.tool_calls else "")
    if m.name:
        out["name"] = m.name
    if m.tool_calls:
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.arguments["_raw"] if set(c.arguments) == {"_raw"} else c.arguments_json(),
                },
            }
            for c in m.tool_calls
        ]
    return out


def write(conv: Conversation) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}`` (tools omitted when the log had none)."""
    out: dict[str, Any] = {"messages": [message_to_openai(m) for m in conv.messages]}
    if conv.tools:
        out["tools"] = [{"type": "function", "function": t.spec()} for t in conv.tools]
    return out


register_format(
    FormatInfo(
        name="openai",
        title="OpenAI chat completions",
        detect=detect,
        read=read,
        write=write,
        description="Chat-completions messages (tool_calls, role tool): a bare list, {messages, tools}, or a "
        "request/response log with messages + response.",
        reads="A bare message list, {messages, tools}, or a request/response dump (LiteLLM, OpenHands completions) "
        "whose response's first choice is appended: roles system/developer/user/assistant/tool/function, text and "
        "image parts, tool_calls (arguments as JSON text; undecodable text kept raw with a warning), the legacy "
        "function_call, reasoning_content, and the tool schemas.",
        leaves_out="Usage (a message list has none, and a dump's response.usage is not read), the request's model "
        "and parameters, and choices after the first; content parts other than text and images (audio, files) are "
        "kept as their JSON text with a warning.",
    )
)
