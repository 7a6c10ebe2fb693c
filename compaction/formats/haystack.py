"""Haystack ``ChatMessage.to_dict()`` lists, in every shape ``ChatMessage.from_dict`` accepts.

Shapes: the current ``{"role", "meta", "name", "content": [parts]}``; ``content`` as a plain string (before 2.9);
the 2.9–2.11 ``_role/_content/_name/_meta`` form; and unwrapped pydantic-style parts. A message holding several
tool results becomes several tool messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import FieldError
from ._fields import as_id
from ._fields import as_mapping
from ._fields import detect_json_items
from ._fields import expect_object
from ._fields import message_list
from ._fields import type_name
from ._parts import Parts
from .base import Document
from .base import FormatInfo
from .base import register_format

_PART_KEYS = ("text", "tool_call", "tool_call_result", "image", "file", "reasoning")


def _fields(m: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(role, content, name, meta) from the current or the legacy underscore form."""
    if "_role" in m or "_content" in m:
        return m.get("_role"), m.get("_content"), m.get("_name"), m.get("_meta") or {}
    return m.get("role"), m.get("content"), m.get("name"), m.get("meta") or {}


def _is_haystack_part(part: Any) -> bool:
    return isinstance(part, Mapping) and "type" not in part and any(k in part for k in _PART_KEYS + ("tool_name",))


def detect(doc: Document) -> str | None:
    return detect_json_items(doc, message_list, "no list of messages", _not_haystack)


def _not_haystack(messages: list[Any]) -> str | None:
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


def _tool_call(raw: Any, field: str) -> ToolCall:
    raw = expect_object(raw, field)
    args = raw.get("arguments")
    extra = raw.get("extra")
    return ToolCall(as_id(raw.get("id")), str(raw.get("tool_name", "")), dict(args) if isinstance(args, Mapping) else {},
                    dict(extra) if isinstance(extra, Mapping) else None)


def _optional_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _image(raw: Any, field: str) -> Image:
    raw = expect_object(raw, field)
    return Image(_optional_text(raw.get("mime_type")), _optional_text(raw.get("detail")),
                 "base64" if raw.get("base64_image") else None, dict(as_mapping(raw.get("meta"))))


def _file(raw: Any, field: str) -> File:
    raw = expect_object(raw, field)
    data = raw.get("base64_data")
    return File(_optional_text(raw.get("filename")), _optional_text(raw.get("mime_type")),
                (len(data) * 3 // 4) if isinstance(data, str) else None, dict(as_mapping(raw.get("extra"))))


def _result_value(raw: Any, field: str) -> str | tuple[ResultPart, ...]:
    if isinstance(raw, str):
        return raw
    if raw is None:
        return ""
    if not isinstance(raw, list):
        raise FieldError(field, "text or a list of parts", raw)
    parts: list[Any] = []
    for k, p in enumerate(raw):
        if isinstance(p, Mapping) and "image" in p:
            parts.append(_image(p["image"], f"{field}[{k}].image"))
        elif isinstance(p, Mapping) and "file" in p:
            parts.append(_file(p["file"], f"{field}[{k}].file"))
        elif isinstance(p, Mapping):
            parts.append(str(p.get("text", "")))
        else:
            raise FieldError(f"{field}[{k}]", "an object", p)
    return tuple(parts)


class _UnknownPart(Exception):
    """A content part of no kind Haystack serializes."""


def _add_part(parts: Parts, part: Mapping[str, Any], where: str) -> None:
    """Add one content part (``where``: its field) to ``parts``; :class:`FieldError` when a nested value has the
    wrong type, :class:`_UnknownPart` when it is of no kind Haystack serializes."""
    if "text" in part and len(part) == 1:
        parts.texts.append(str(part["text"]))
    elif "tool_call" in part or "tool_name" in part:
        parts.tool_calls.append(_tool_call(part.get("tool_call", part), f"{where}.tool_call"))
    elif "tool_call_result" in part or "origin" in part:
        r = expect_object(part.get("tool_call_result", part), f"{where}.tool_call_result")
        origin = r.get("origin") if isinstance(r.get("origin"), Mapping) else {}
        parts.results.append(ToolResult(_tool_call(origin, f"{where}.tool_call_result.origin"),
                                        _result_value(r.get("result"), f"{where}.tool_call_result.result"),
                                        bool(r.get("error"))))
    elif "reasoning" in part or "reasoning_text" in part:
        rr = expect_object(part.get("reasoning", part), f"{where}.reasoning")
        parts.reasoning.append(str(rr.get("reasoning_text", "")))
    elif "image" in part or "base64_image" in part:
        parts.images.append(_image(part.get("image", part), f"{where}.image"))
    elif "file" in part or "base64_data" in part:
        parts.files.append(_file(part.get("file", part), f"{where}.file"))
    elif "text" in part:
        parts.texts.append(str(part["text"]))
    else:
        raise _UnknownPart


def read_message(raw: Mapping[str, Any], where: str, warnings: list[LoadWarning]) -> list[Message]:
    """One serialized ChatMessage → one message (or several tool messages)."""
    role, content, name, meta = _fields(raw)
    if role not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"{where}: 'role' must be system/user/assistant/tool, got {role!r}")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    name = name if isinstance(name, str) else None
    if isinstance(content, str):
        content = [{"text": content}]
    parts = Parts()
    if content is not None and not isinstance(content, list):
        warnings.append(LoadWarning(f"{where}: content skipped, expected a list of parts or text, got "
                                    f"{type_name(content)}", field="content"))
        content = []
    for k, part in enumerate(content or []):
        at = f"content[{k}]"
        if not isinstance(part, Mapping):
            warnings.append(LoadWarning(f"{where}: content part skipped, expected an object", field=at))
            continue
        try:
            _add_part(parts, part, at)
        except FieldError as exc:
            warnings.append(LoadWarning(f"{where}: content part skipped: {exc}", field=exc.field))
        except _UnknownPart:
            warnings.append(LoadWarning(f"{where}: unknown content part {sorted(map(str, part))} skipped", field=at))
    if parts.results:
        return [Message("tool", tool_result=r, name=name, meta=meta) for r in parts.results]
    return [Message(role, tuple(parts.texts), tuple(parts.tool_calls), None, tuple(parts.reasoning), tuple(parts.images),
                    tuple(parts.files), name, meta)]


def read(doc: Document) -> list[Conversation]:
    raw = message_list(doc.value)
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

    plain: dict[str, Any] = json.loads(json.dumps(dict(meta), default=str))
    return plain


def write(conv: Conversation) -> list[dict[str, Any]]:
    return [message_to_haystack(m) for m in conv.messages]


register_format(
    FormatInfo(
        name="haystack",
        title="Haystack ChatMessage list",
        detect=detect,
        read=read,
        write=write,
        description="A JSON list of haystack ChatMessage.to_dict() objects (all shapes from_dict accepts).",
        reads="ChatMessage.to_dict() lists (or {messages: [...]}) in every shape from_dict accepts (content parts, "
        "plain-string content, the 2.9–2.11 underscore form): text, tool_call (id, tool_name, arguments, extra), "
        "tool_call_result (text or text/image/file parts, origin, error; several in one message become several "
        "tool messages), reasoning, image and file parts, name and meta.",
        leaves_out="Image and file bytes (their type, detail and size are kept: the counters price them at fixed "
        "rates); usage in meta stays in meta and is not reported as provider usage; tool schemas are not part of "
        "a message list; unknown part kinds are skipped with a warning.",
    )
)
