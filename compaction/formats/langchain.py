"""LangChain message lists: ``messages_to_dict`` output, ``dumpd`` output, and ``{"messages": [...]}`` wrappers
(LangGraph state, ``ChatPromptValue`` dumps).

* ``messages_to_dict``: ``[{"type": "human" | "ai" | "system" | "tool" | "function" | "chat", "data": {...}}]``
  (``…Chunk`` types included).
* ``dumpd``: ``{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
  "kwargs": {...}}``. The ``id`` path only names the message kind: it is matched against the known message classes
  and never imported or instantiated.

Fields read: ``content`` (a string or content blocks: text, image, file, Anthropic ``tool_use`` / ``thinking``,
standard ``reasoning`` / ``tool_call`` blocks), AI ``tool_calls`` (``{name, args, id}``) plus ``invalid_tool_calls``
(the model emitted them; LangChain sends them back), the legacy ``additional_kwargs.tool_calls`` / ``function_call``
in OpenAI shape when ``tool_calls`` is absent, ``additional_kwargs.reasoning_content``, ``usage_metadata`` (its
``input_tokens`` include cache reads and writes, split out into :class:`Usage`), ``tool_call_id``, ``status``
(``"error"`` marks a failed tool call) and ``name``. A ``tool_use`` / ``tool_call`` block that repeats an entry of
``tool_calls`` is not counted twice. ``RemoveMessage`` entries are state updates, not messages: skipped with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import Role
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import detect_json_items
from ._fields import message_list
from ._fields import misfit_reason
from ._fields import type_name
from ._parts import Parts
from ._transcript import append_read
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import parse_arguments
from .openai_chat import read_messages
from .openai_chat import usage_from_openai

#: ``messages_to_dict`` type → role; ``…Chunk`` variants are folded onto these
_TYPES: dict[str, Role | None] = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool", "chat": None,
          "remove": None}
#: ``dumpd`` class name → ``messages_to_dict`` type
_CLASSES = {"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
            "FunctionMessage": "function", "ChatMessage": "chat", "RemoveMessage": "remove"}
_CHAT_ROLES: dict[str, Role] = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "system": "system",
               "developer": "system"}


def _kind_and_fields(item: Any) -> tuple[str, Mapping[str, Any]] | None:
    """(``messages_to_dict`` type, message fields) of one serialized message, or None if it is not one."""
    if not isinstance(item, Mapping):
        return None
    kind = item.get("type")
    if isinstance(kind, str) and isinstance(item.get("data"), Mapping):
        kind = kind.removesuffix("Chunk")
        kind = _CLASSES.get(kind, kind)
        return (kind, item["data"]) if kind in _TYPES else None
    path = item.get("id")
    if item.get("lc") == 1 and item.get("type") == "constructor" and isinstance(path, list) and path:
        name = path[-1].removesuffix("Chunk") if isinstance(path[-1], str) else None
        if name in _CLASSES:
            return _CLASSES[name], as_mapping(item.get("kwargs"))
    return None


def _message_list(value: Any) -> list[Any] | None:
    messages = message_list(value)
    if messages is not None:
        return messages
    if isinstance(value, Mapping):
        kwargs = as_mapping(value.get("kwargs"))
        if value.get("lc") == 1 and isinstance(kwargs.get("messages"), list):
            constructed: list[Any] = kwargs["messages"]
            return constructed
    return None


def detect(doc: Document) -> str | None:
    """None when ``doc`` is a LangChain message list, else why not."""
    return detect_json_items(doc, _message_list, "no list of LangChain messages", misfit_reason(
        lambda item: _kind_and_fields(item) is not None,
        "message {} is neither a messages_to_dict {{type, data}} entry nor a dumpd message"))


# --------------------------------------------------------------------------------------------------- content
def _image(block: Mapping[str, Any]) -> Image:
    url = block.get("image_url")
    url = as_mapping(url).get("url") if isinstance(url, Mapping) else url
    url = url if isinstance(url, str) else as_text(block.get("url"))
    source = as_mapping(block.get("source"))
    inline = (isinstance(url, str) and url.startswith("data:")) or block.get("source_type") == "base64" \
        or "base64" in block or source.get("type") == "base64"
    mime = as_text(block.get("mime_type")) or as_text(source.get("media_type"))
    if mime is None and isinstance(url, str) and url.startswith("data:"):
        mime = url[5:].split(";", 1)[0] or None
    return Image(mime_type=mime, source="base64" if inline else url)


def _block(raw: Any, where: str, parts: Parts, known_calls: set[str], warnings: list[LoadWarning]) -> None:
    block = parts.part_object(raw, where, "content block skipped, expected an object", warnings, empty_text=True)
    if block is None:
        return
    kind = block.get("type")
    if kind == "text" or (kind is None and isinstance(block.get("text"), str)):
        parts.texts.append(as_text(block.get("text")) or "")
    elif kind in ("thinking", "reasoning"):
        summary = cast("list[Any]", block.get("summary")) if isinstance(block.get("summary"), list) else []
        summary = [as_text(as_mapping(s).get("text")) for s in summary]
        text = as_text(block.get("thinking")) or as_text(block.get("reasoning")) or "\n".join(t for t in summary if t)
        if text:
            parts.reasoning.append(text)
    elif kind in ("tool_use", "tool_call"):
        call_id = as_text(block.get("id"))
        if call_id not in known_calls and as_text(block.get("name")):
            raw = block.get("input") if kind == "tool_use" else block.get("args")
            parts.tool_calls.append(ToolCall(call_id, block["name"], parse_arguments(raw, where, warnings)))
    elif kind in ("image", "image_url", "input_image"):
        parts.images.append(_image(block))
    elif kind in ("file", "document", "pdf"):
        parts.files.append(File(as_text(block.get("filename")) or as_text(block.get("name")),
                                as_text(block.get("mime_type"))))
    elif kind in ("redacted_thinking", "tool_call_chunk"):
        return
    else:
        warnings.append(LoadWarning(f"{where}: content block of type {kind!r} kept as text", field="content"))
        parts.texts.append(json.dumps(block, ensure_ascii=False, default=str))


def _parts(content: Any, where: str, known_calls: set[str], warnings: list[LoadWarning]) -> Parts:
    parts = Parts()
    if isinstance(content, str):
        if content:
            parts.texts.append(content)
    elif isinstance(content, list):
        for block in content:
            _block(block, where, parts, known_calls, warnings)
    elif content is not None:
        warnings.append(LoadWarning(f"{where}: 'content' is {type_name(content)}, expected text or blocks; ignored",
                                    field="content"))
    return parts


# --------------------------------------------------------------------------------------------------- messages
def usage_of(fields: Mapping[str, Any]) -> Usage | None:
    """``usage_metadata`` (or the OpenAI ``response_metadata.token_usage`` older versions kept) as :class:`Usage`."""
    raw = fields.get("usage_metadata")
    if not isinstance(raw, Mapping):
        return usage_from_openai(as_mapping(fields.get("response_metadata")).get("token_usage"))
    details = as_mapping(raw.get("input_token_details"))
    read, write = as_count(details.get("cache_read")), as_count(details.get("cache_creation"))
    return Usage(input_tokens=max(as_count(raw.get("input_tokens")) - read - write, 0),
                 output_tokens=as_count(raw.get("output_tokens")), cache_read_tokens=read, cache_write_tokens=write,
                 cache_write_5m_tokens=as_count(details.get("ephemeral_5m_input_tokens")),
                 cache_write_1h_tokens=as_count(details.get("ephemeral_1h_input_tokens")))


def _tool_calls(fields: Mapping[str, Any], where: str, path: str | None,
                warnings: list[LoadWarning]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for key in ("tool_calls", "invalid_tool_calls"):
        raw = fields.get(key)
        if raw is not None and not isinstance(raw, list):
            warnings.append(LoadWarning(f"{where}: '{key}' is {type_name(raw)}, expected a list; ignored", field=key))
            continue
        for j, tc in enumerate(raw or []):
            tc = as_mapping(tc)
            if as_text(tc.get("name")) is None:
                warnings.append(LoadWarning(f"{where}: {key} entry {j} skipped, expected a 'name'", field=key))
                continue
            calls.append(ToolCall(as_text(tc.get("id")), tc["name"], parse_arguments(tc.get("args"), where, warnings)))
    if calls or "tool_calls" in fields:
        return calls
    legacy = as_mapping(fields.get("additional_kwargs"))
    if legacy.get("tool_calls") or legacy.get("function_call"):
        message = {"role": "assistant", "tool_calls": legacy.get("tool_calls"),
                   "function_call": legacy.get("function_call")}
        out, _, legacy_warnings = read_messages([message], path)
        warnings += [LoadWarning(f"{where}: {w.message}", field="additional_kwargs.tool_calls")
                     for w in legacy_warnings]
        return list(out[0].tool_calls) if out else []
    return []


def _result_value(parts: Parts) -> str | tuple[ResultPart, ...]:
    if not parts.images and not parts.files:
        return "".join(parts.texts)
    return (*parts.texts, *parts.images, *parts.files)


class _Reader:
    """Reads one message list, keeping the calls seen so far to pair tool messages with them."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.warnings: list[LoadWarning] = []
        self.calls: dict[str, ToolCall] = {}
        self.last_function_call: ToolCall | None = None

    def message(self, kind: str, fields: Mapping[str, Any], where: str) -> tuple[Message, Usage | None] | None:
        role = _TYPES[kind]
        if kind == "chat":
            role = _CHAT_ROLES.get(cast(str, fields.get("role"))) if isinstance(fields.get("role"), str) else None
            if role is None:
                self.warnings.append(LoadWarning(f"{where}: chat message with role {fields.get('role')!r} read as a "
                                                 "user message", field="role"))
                role = "user"
        if role is None:
            self.warnings.append(LoadWarning(f"{where}: skipped, a {kind!r} entry is not a message", field="type"))
            return None
        meta = {k: fields[k] for k in ("id",) if isinstance(fields.get(k), str)}
        model = as_text(as_mapping(fields.get("response_metadata")).get("model_name"))
        if model:
            meta["model_name"] = model
        name = as_text(fields.get("name"))
        if role == "assistant":
            return self._assistant(fields, where, name, meta)
        parts = _parts(fields.get("content"), where, set(), self.warnings)
        if role == "tool":
            return Message("tool", tool_result=ToolResult(self._origin(kind, fields, name), _result_value(parts),
                                                          fields.get("status") == "error"), meta=meta), None
        return Message(role, tuple(parts.texts), (), None, tuple(parts.reasoning), tuple(parts.images),
                       tuple(parts.files), name, meta), None

    def _assistant(self, fields: Mapping[str, Any], where: str, name: str | None,
                   meta: dict[str, Any]) -> tuple[Message, Usage | None]:
        calls = _tool_calls(fields, where, self.path, self.warnings)
        parts = _parts(fields.get("content"), where, {c.id for c in calls if c.id}, self.warnings)
        calls += parts.tool_calls
        extra = as_text(as_mapping(fields.get("additional_kwargs")).get("reasoning_content"))
        reasoning = ([extra] if extra else []) + parts.reasoning
        for call in calls:
            if call.id:
                self.calls[call.id] = call
            elif call.id is None:
                self.last_function_call = call
        message = Message("assistant", tuple(parts.texts), tuple(calls), None, tuple(reasoning), tuple(parts.images),
                          tuple(parts.files), name, meta)
        return message, usage_of(fields)

    def _origin(self, kind: str, fields: Mapping[str, Any], name: str | None) -> ToolCall:
        if kind == "function":
            last = self.last_function_call
            if last is not None and (name is None or last.name == name):
                return last
            return ToolCall(None, name or "function")
        call_id = as_text(fields.get("tool_call_id"))
        return self.calls[call_id] if call_id in self.calls else ToolCall(call_id, name or "unknown_tool")


def read(doc: Document) -> list[Conversation]:
    """The message list as one conversation (id ``"0"``)."""
    items = _message_list(doc.value)
    if items is None:
        raise LoadError(doc.path, "expected a list of LangChain messages", field="messages")
    reader = _Reader(doc.path)
    messages: list[Message] = []
    usage: dict[int, Usage] = {}
    for i, item in enumerate(items):
        where = f"message {i}"
        found = _kind_and_fields(item)
        if found is None:
            why = (f"expected an object, got {type_name(item)}" if not isinstance(item, Mapping)
                   else "neither {type, data} nor a dumpd message constructor")
            reader.warnings.append(LoadWarning(f"{where}: skipped, {why}", field="type"))
            continue
        append_read(messages, usage, reader.message(*found, where))
    warnings = reader.warnings + structural_warnings(messages)
    return [Conversation(tuple(messages), (), Source("langchain", doc.path, "0", tuple(warnings)), usage=usage)]


register_format(
    FormatInfo(
        name="langchain",
        title="LangChain messages",
        detect=detect,
        read=read,
        description="LangChain messages_to_dict or dumpd message lists (also {messages: [...]}); tool calls, "
        "content blocks and usage_metadata.",
        reads="messages_to_dict and dumpd lists and {messages: [...]} wrappers (LangGraph state): content text and "
        "blocks (text, image, file, tool_use, thinking, reasoning, tool_call), tool_calls and invalid_tool_calls, "
        "the legacy additional_kwargs tool_calls / function_call, reasoning_content, usage_metadata (cache reads "
        "and writes split out) or the older response_metadata.token_usage, tool_call_id, error status and name; "
        "response_metadata.model_name goes into the message's meta.",
        leaves_out="RemoveMessage entries (state updates, not messages) are skipped with a warning; other "
        "response_metadata and additional_kwargs fields and tool schemas are not read. A dumpd id path only names "
        "the message kind: it is matched, never imported.",
    )
)
