"""Microsoft Agent Framework (Python) ``Message.to_dict()`` lists, and the JSON its token estimator measures.

Reading honours the compaction annotations: a message whose ``additional_properties["_excluded"]`` is true was not
sent by the framework; it is loaded (so the run's history stays whole) and reported in a warning, and its exclusion
reason kept in ``meta``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_id
from ._fields import detect_json_items
from ._fields import message_list
from ._fields import type_name
from .base import Document
from .base import FormatInfo
from .base import register_format

#: what agent-framework-core writes for a function result's exception in ``Content.to_dict()``
SERIALIZED_EXCEPTION_MARKER = "FunctionInvocationError"


def contents_of(m: Message) -> list[dict[str, Any]]:
    """The message's contents as agent-framework ``Content.to_dict()`` objects."""
    out: list[dict[str, Any]] = []
    out += [{"type": "text_reasoning", "text": r, "additional_properties": {}} for r in m.reasoning]
    out += [{"type": "text", "text": t, "additional_properties": {}} for t in m.texts]
    out += [
        {"type": "function_call", "call_id": c.id or "", "name": c.name, "arguments": dict(c.arguments),
         "hosted": False, "additional_properties": {}}
        for c in m.tool_calls
    ]
    if m.tool_result is not None:
        r = m.tool_result
        item = {"type": "function_result", "call_id": r.call_id or "", "result": r.text,
                "items": [{"type": "text", "text": r.text, "additional_properties": {}}], "additional_properties": {}}
        if r.error:
            # Content.to_dict() never serializes the exception itself, only this marker (so the estimator counts it)
            item["exception"] = SERIALIZED_EXCEPTION_MARKER
        out.append(item)
    return out


def message_id(m: Message, default: str) -> str:
    return str(m.meta.get("message_id") or default)


def token_json(m: Message, default_id: str = "") -> str:
    """The text ``CharacterEstimatorTokenizer`` measures for one message (role, id, contents; sorted keys)."""
    contents = []
    for c in contents_of(m):
        c = {k: v for k, v in c.items() if k != "items"}
        contents.append(c)
    own_id = m.meta.get("message_id")
    payload = {"role": m.role, "message_id": str(own_id) if own_id else default_id or None, "contents": contents}
    if payload["message_id"] is None:
        payload.pop("message_id")
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)


def message_to_maf(m: Message, index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "message", "role": m.role, "contents": contents_of(m)}
    if m.name:
        out["author_name"] = m.name
    out["message_id"] = message_id(m, f"msg_{index}")
    props = {k: v for k, v in m.meta.items() if k.startswith("_")}
    out["additional_properties"] = json.loads(json.dumps(props, default=str))
    return out


def write(conv: Conversation) -> list[dict[str, Any]]:
    return [message_to_maf(m, i) for i, m in enumerate(conv.messages)]


def _first_without_contents(messages: list[Any]) -> str | None:
    for i, m in enumerate(messages[:50]):
        if not isinstance(m, Mapping) or not isinstance(m.get("contents"), list):
            return f"message {i} has no 'contents' list (Agent Framework Message.to_dict)"
    return None


def detect(doc: Document) -> str | None:
    return detect_json_items(doc, message_list, "no list of messages", _first_without_contents)


def _read_one(raw: Mapping[str, Any], i: int, calls: dict[str, ToolCall], warnings: list[LoadWarning]) -> list[Message]:
    role = raw.get("role")
    if isinstance(role, Mapping):
        role = role.get("value")
    if role not in ("system", "user", "assistant", "tool"):
        warnings.append(LoadWarning(f"message {i}: skipped, unknown role {role!r}", field="role"))
        return []
    props = raw.get("additional_properties") or {}
    meta: dict[str, Any] = {"message_id": raw.get("message_id")} if raw.get("message_id") else {}
    if isinstance(props, Mapping):
        meta.update({k: v for k, v in props.items() if k.startswith("_")})
        if props.get("_excluded"):
            warnings.append(LoadWarning(
                f"message {i}: excluded by the framework ({props.get('_exclude_reason', 'no reason given')})",
                field="additional_properties._excluded"))
    texts, reasoning, tool_calls, results = [], [], [], []
    contents = raw.get("contents")
    if contents is not None and not isinstance(contents, list):
        warnings.append(LoadWarning(f"message {i}: contents skipped, expected a list, got {type_name(contents)}",
                                    field="contents"))
        contents = []
    for k, c in enumerate(contents or []):
        if not isinstance(c, Mapping):
            warnings.append(LoadWarning(f"message {i}: content skipped, expected an object, got {type_name(c)}",
                                        field=f"contents[{k}]"))
            continue
        kind = c.get("type")
        if kind == "text":
            texts.append(str(c.get("text") or ""))
        elif kind == "text_reasoning":
            reasoning.append(str(c.get("text") or ""))
        elif kind == "function_call":
            args = c.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args) if args else {}
                except (json.JSONDecodeError, RecursionError):
                    args = {"_raw": args}
            call = ToolCall(as_id(c.get("call_id")), str(c.get("name") or ""), args if isinstance(args, Mapping) else {})
            tool_calls.append(call)
            if call.id:
                calls[call.id] = call
        elif kind == "function_result":
            cid = as_id(c.get("call_id"))
            origin = calls.get(cid) if cid is not None else None
            origin = origin or ToolCall(cid, "unknown_tool")
            result = c.get("result")
            text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
            results.append(ToolResult(origin, text if result is not None else "", bool(c.get("exception"))))
        else:
            texts.append(json.dumps(c, ensure_ascii=False, default=str))
    name = raw.get("author_name") if isinstance(raw.get("author_name"), str) else None
    if results:
        return [Message("tool", tool_result=r, name=name, meta=meta) for r in results]
    return [Message(role, tuple(texts), tuple(tool_calls), None, tuple(reasoning), (), (), name, meta)]


def read(doc: Document) -> list[Conversation]:
    raw = message_list(doc.value)
    if raw is None:
        raise LoadError(doc.path, "expected a list of Agent Framework messages", field="messages")
    warnings: list[LoadWarning] = []
    calls: dict[str, ToolCall] = {}
    out: list[Message] = []
    for i, m in enumerate(raw):
        if isinstance(m, Mapping):
            out.extend(_read_one(m, i, calls, warnings))
        else:
            warnings.append(LoadWarning(f"message {i}: skipped, expected an object"))
    warnings += structural_warnings(out)
    return [Conversation(tuple(out), (), Source("agent-framework", doc.path, "0", tuple(warnings)))]


register_format(
    FormatInfo(
        name="agent-framework",
        title="Microsoft Agent Framework messages",
        detect=detect,
        read=read,
        write=write,
        description="A JSON list of agent_framework Message.to_dict() objects (contents, additional_properties).",
        reads="A list of Message.to_dict() objects (or {messages: [...]}): roles, text and text_reasoning contents, "
        "function_call (arguments as JSON text or an object) and function_result contents (exception = error), "
        "author_name, message_id, and the framework's '_'-prefixed compaction annotations, kept in each message's "
        "meta; a message marked _excluded is loaded, so the history stays whole, with a warning.",
        leaves_out="Usage and tool schemas (a message list carries neither); other content types (data, uri, "
        "hosted files, usage…) are kept as their JSON text, and messages of an unknown role are skipped with a "
        "warning.",
    )
)
