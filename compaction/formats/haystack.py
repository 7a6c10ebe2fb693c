"""Haystack ``ChatMessage.to_dict()`` lists, in every shape ``ChatMessage.from_dict`` accepts.

Shapes: the current ``{"role", "meta", "name", "content": [parts]}``; ``content`` as a plain string (before 2.9);
the 2.9–2.11 ``_role/_content/_name/_meta`` form; and unwrapped pydantic-style parts. A message holding several
tool results becomes several tool messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conversation import (
    Conversation,
    File,
    Image,
    LoadWarning,
    Message,
    Source,
    ToolCall,
    ToolResult,
    structural_warnings,
)
from .base import Document, FormatInfo, LoadError, register_format

_PART_KEYS = ("text", "tool_call", "tool_call_result", "image", "file", "reasoning")


def _fields(m: Mapping) -> tuple[Any, Any, Any, Any]:
    """(role, content, name, meta) from the current or the legacy underscore form."""
    if "_role" in m or "_content" in m:
        return m.get("_role"), m.get("_content"), m.get("_name"), m.get("_meta") or {}
    return m.get("role"), m.get("content"), m.get("name"), m.get("meta") or {}


def _messages(value: Any) -> list | None:
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        return value["messages"]
    return None


def _is_haystack_part(part: Any) -> bool:
    return isinstance(part, Mapping) and "type" not in part and any(k in part for k in _PART_KEYS + ("tool_name",))


def detect(doc: Document) -> str | None:
    if doc.kind != "json":
        return "not a single JSON document"
    messages = _messages(doc.value)
    if not messages:
        return "no list of messages"
    marker = False
    for i, m in enumerate(messages[:50]):
        if not isinstance(m, Mapping):
            return f"message {i} is not an object"
        role, content, _, _ = _fields(m)
        if role not in ("system", "user", "assistant", "tool"):
            return f"message {i} has no Haystack role"
        if "_role" in m or "meta" in m:
            marker = True
        if isinstance(content, list):
            if content and not all(_is_haystack_part(p) for p in content):
                return f"message {i}: content parts are not Haystack parts (text/tool_call/tool_call_result/…)"
            marker = marker or bool(content)
        elif content is not None and not isinstance(content, str):
            return f"message {i}: content is neither a list of parts nor text"
    return None if marker else "no Haystack markers (content part lists, 'meta' or '_role')"


def _tool_call(raw: Mapping) -> ToolCall:
    args = raw.get("arguments")
    return ToolCall(raw.get("id"), str(raw.get("tool_name", "")), dict(args) if isinstance(args, Mapping) else {},
                    raw.get("extra"))


def _image(raw: Mapping) -> Image:
    return Image(raw.get("mime_type"), raw.get("detail"), "base64" if raw.get("base64_image") else None,
                 dict(raw.get("meta") or {}))


def _file(raw: Mapping) -> File:
    data = raw.get("base64_data")
    return File(raw.get("filename"), raw.get("mime_type"), (len(data) * 3 // 4) if isinstance(data, str) else None,
                dict(raw.get("extra") or {}))


def _result_value(raw: Any) -> str | tuple:
    if isinstance(raw, str):
        return raw
    parts: list = []
    for p in raw or []:
        if isinstance(p, Mapping) and "image" in p:
            parts.append(_image(p["image"]))
        elif isinstance(p, Mapping) and "file" in p:
            parts.append(_file(p["file"]))
        elif isinstance(p, Mapping):
            parts.append(str(p.get("text", "")))
    return tuple(parts)


def read_message(raw: Mapping, where: str, warnings: list[LoadWarning]) -> list[Message]:
    """One serialized ChatMessage → one message (or several tool messages)."""
    role, content, name, meta = _fields(raw)
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"{where}: 'role' must be system/user/assistant/tool, got {role!r}")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    if isinstance(content, str):
        content = [{"text": content}]
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    reasoning: list[str] = []
    images: list[Image] = []
    files: list[File] = []
    for part in content or []:
        if not isinstance(part, Mapping):
            warnings.append(LoadWarning(f"{where}: content part skipped, expected an object", field="content"))
            continue
        if "text" in part and len(part) == 1:
            texts.append(str(part["text"]))
        elif "tool_call" in part or "tool_name" in part:
            calls.append(_tool_call(part.get("tool_call", part)))
        elif "tool_call_result" in part or "origin" in part:
            r = part.get("tool_call_result", part)
            origin = r.get("origin") if isinstance(r.get("origin"), Mapping) else {}
            results.append(ToolResult(_tool_call(origin), _result_value(r.get("result")), bool(r.get("error"))))
        elif "reasoning" in part or "reasoning_text" in part:
            rr = part.get("reasoning", part)
            reasoning.append(str(rr.get("reasoning_text", "")))
        elif "image" in part or "base64_image" in part:
            images.append(_image(part.get("image", part)))
        elif "file" in part or "base64_data" in part:
            files.append(_file(part.get("file", part)))
        elif "text" in part:
            texts.append(str(part["text"]))
        else:
            warnings.append(LoadWarning(f"{where}: unknown content part {sorted(part)} skipped", field="content"))
    if results:
        return [Message("tool", tool_result=r, name=name, meta=meta) for r in results]
    return [Message(role, tuple(texts), tuple(calls), None, tuple(reasoning), tuple(images), tuple(files), name, meta)]


def read(doc: Document) -> list[Conversation]:
    raw = _messages(doc.value)
    if raw is None:
        raise LoadError(doc.path, "expected a list of ChatMessage dicts", field="messages")
    warnings: list[LoadWarning] = []
    out: list[Message] = []
    for i, m in enumerate(raw):
        if not isinstance(m, Mapping):
            warnings.append(LoadWarning(f"message {i}: skipped, expected an object"))
            continue
        try:
            out.extend(read_message(m, f"message {i}", warnings))
        except ValueError as exc:
            warnings.append(LoadWarning(f"{exc}; message skipped", field="role"))
    warnings += structural_warnings(out)
    return [Conversation(tuple(out), (), Source("haystack", doc.path, "0", tuple(warnings)))]


# --------------------------------------------------------------------------------------------------- writer
def _call_dict(c: ToolCall) -> dict[str, Any]:
    return {"tool_name": c.name, "arguments": dict(c.arguments), "id": c.id, "extra": dict(c.extra) if c.extra else None}


def _image_dict(img: Image) -> dict[str, Any]:
    # the bytes are not kept; a 1x1 transparent PNG stands in so Haystack accepts the part
    return {"image": {"base64_image": _PIXEL, "mime_type": img.mime_type or "image/png", "detail": img.detail,
                      "meta": dict(img.meta), "validation": False}}


def _file_dict(f: File) -> dict[str, Any]:
    return {"file": {"base64_data": "", "mime_type": f.mime_type, "filename": f.filename, "extra": dict(f.extra),
                     "validation": False}}


_PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def message_to_haystack(m: Message) -> dict[str, Any]:
    """One message as ``ChatMessage.to_dict()`` (assistant part order: reasoning, text, tool calls)."""
    content: list[dict[str, Any]] = []
    if m.tool_result is not None:
        r = m.tool_result
        result: Any = r.result if isinstance(r.result, str) else [
            {"text": p} if isinstance(p, str) else _image_dict(p) if isinstance(p, Image) else _file_dict(p)
            for p in r.result
        ]
        content.append({"tool_call_result": {"result": result, "origin": _call_dict(r.origin), "error": r.error}})
    else:
        content += [{"reasoning": {"reasoning_text": t, "extra": {}}} for t in m.reasoning]
        content += [{"text": t} for t in m.texts]
        content += [{"tool_call": _call_dict(c)} for c in m.tool_calls]
        content += [_image_dict(i) for i in m.images]
        content += [_file_dict(f) for f in m.files]
    return {"role": m.role, "meta": _json_meta(m.meta), "name": m.name, "content": content}


def _json_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    import json

    return json.loads(json.dumps(dict(meta), default=str))


def write(conv: Conversation) -> list[dict[str, Any]]:
    return [message_to_haystack(m) for m in conv.messages]


register_format(
    FormatInfo(
        name="haystack",
        title="Haystack ChatMessage list",
        detect=detect,
        read=read,
        write=write,
        priority=60,
        description="A JSON list of haystack ChatMessage.to_dict() objects (all shapes from_dict accepts).",
    )
)
