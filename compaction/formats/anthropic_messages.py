"""Anthropic Messages API conversations: request bodies, bare message lists and request/response captures.

Shapes read:

* a request body ``{"system": str | [text blocks], "messages": [...], "tools": [{name, description, input_schema}]}``;
* a bare list of messages whose content uses Anthropic blocks (``tool_use``, ``tool_result``, ``thinking``…);
* captures of request/response pairs (claude-trace JSONL ``{"request": {"body": …}, "response": {"body": …}}``,
  with the response as JSON or as the raw server-sent-event stream, ``body_raw``). A capture holds every call of a
  run, each request resending the history: the longest request (the last of equal length, preferring one answered
  by a message over a token count) is the conversation, its response's assistant message is appended, and the
  usage of every earlier response whose request is a prefix of it is attached to the assistant message that
  response produced.

Content blocks: ``text``, ``thinking`` and ``redacted_thinking`` (reasoning), ``tool_use``, ``tool_result`` (its
content a string or text/image/document blocks; ``is_error``), ``image``, ``document``; server-side tool blocks
(``server_tool_use``, ``web_search_tool_result``…) stay in the assistant message as their JSON text. In a user
message, each ``tool_result`` block becomes its own ``tool`` message and the remaining blocks a following user
message. The block readers here are shared with the Claude Code reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Role
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import ToolSchema
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import TOO_DEEP
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from ._parts import Parts
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format
from .openai_chat import parse_arguments

#: what a ``redacted_thinking`` block stands for (its payload is encrypted; the model still receives it)
REDACTED_THINKING = "[redacted thinking]"
#: block types only the Anthropic API uses (a list holding one of them is not an OpenAI or Haystack message list)
ANTHROPIC_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                                   "web_search_tool_result", "document"})
#: server-side tool blocks: run by the API inside one response, kept as JSON text of the assistant message
SERVER_TOOL_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                                "code_execution_tool_result", "bash_code_execution_tool_result",
                                "text_editor_code_execution_tool_result", "mcp_tool_use", "mcp_tool_result",
                                "container_upload", "search_result"})
_ROLES = ("user", "assistant")


# ------------------------------------------------------------------------------------------------- blocks
def image_of(block: Mapping[str, Any]) -> Image:
    """An ``image`` block (base64 or url source) as an :class:`Image` placeholder."""
    source = as_mapping(block.get("source"))
    kind = source.get("type")
    where = "base64" if kind == "base64" else as_text(source.get("url")) or as_text(kind)
    return Image(mime_type=as_text(source.get("media_type")), source=where)


def file_of(block: Mapping[str, Any]) -> File:
    """A ``document`` block as a :class:`File` placeholder (size from base64 data when present)."""
    source = as_mapping(block.get("source"))
    data = source.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) and source.get("type") == "base64" else None
    return File(filename=as_text(block.get("title")), mime_type=as_text(source.get("media_type")), size_bytes=size)


def _json_text(block: Any) -> str:
    return json.dumps(block, ensure_ascii=False, default=str)


def result_value(content: Any, where: str, warnings: list[LoadWarning]) -> str | tuple[str | Image | File, ...]:
    """A ``tool_result`` content: a string, or its text/image/document blocks as parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        warnings.append(LoadWarning(f"{where}: tool_result content is {type_name(content)}, expected text or "
                                    "blocks; kept as JSON text", field="content"))
        return _json_text(content)
    parts: list[str | Image | File] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "image":
            parts.append(image_of(block))
        elif kind == "document":
            parts.append(file_of(block))
        else:
            parts.append(_json_text(block))
    if len(parts) == 1 and isinstance(parts[0], str):
        return parts[0]
    return tuple(parts)


def read_blocks(content: Any, where: str, calls: dict[str, ToolCall], warnings: list[LoadWarning]) -> Parts:
    """Read a message's ``content`` (text or blocks); every malformed block costs only itself, with a warning.

    ``calls`` maps tool-use ids to the calls seen so far: new ``tool_use`` blocks are added, ``tool_result``
    blocks are linked to their call by id.
    """
    parts = Parts()
    if content is None:
        return parts
    if isinstance(content, str):
        if content:
            parts.texts.append(content)
        return parts
    if not isinstance(content, list):
        warnings.append(LoadWarning(f"{where}: content is {type_name(content)}, expected text or a list of blocks; "
                                    "skipped", field="content"))
        return parts
    for j, block in enumerate(content):
        read_block(block, f"{where}, block {j}", parts, calls, warnings)
    return parts


def read_block(block: Any, where: str, parts: Parts, calls: dict[str, ToolCall], warnings: list[LoadWarning]) -> None:
    """Add one content block to ``parts`` (see :func:`read_blocks`); a malformed block costs only itself."""
    if not isinstance(block, Mapping):
        warnings.append(LoadWarning(f"{where}: skipped, expected a content block object, got {type_name(block)}",
                                    field="content"))
        return
    kind = as_text(block.get("type"))
    if kind == "text":
        text = block.get("text")
        if isinstance(text, str):
            parts.texts.append(text)
        else:
            warnings.append(LoadWarning(f"{where}: text block without a 'text' string skipped", field="text"))
    elif kind == "thinking":
        thinking = block.get("thinking")
        if isinstance(thinking, str):
            parts.reasoning.append(thinking)
        else:
            warnings.append(LoadWarning(f"{where}: thinking block without a 'thinking' string skipped",
                                        field="thinking"))
    elif kind == "redacted_thinking":
        parts.reasoning.append(REDACTED_THINKING)
    elif kind == "tool_use":
        call = _tool_use(block, where, warnings)
        if call is not None:
            parts.tool_calls.append(call)
            if call.id:
                calls[call.id] = call
    elif kind == "tool_result":
        call_id = as_text(block.get("tool_use_id"))
        if call_id is None:
            warnings.append(LoadWarning(f"{where}: tool_result without a 'tool_use_id' string", field="tool_use_id"))
        origin = calls.get(call_id or "") or ToolCall(call_id, "unknown_tool")
        value = result_value(block.get("content"), where, warnings)
        parts.results.append(ToolResult(origin, value, block.get("is_error") is True))
    elif kind == "image":
        parts.images.append(image_of(block))
    elif kind == "document":
        parts.files.append(file_of(block))
    elif kind in SERVER_TOOL_BLOCKS:
        parts.texts.append(_json_text(block))
    else:
        warnings.append(LoadWarning(f"{where}: content block of type {block.get('type')!r} kept as JSON text",
                                    field="type"))
        parts.texts.append(_json_text(block))


def _tool_use(block: Mapping[str, Any], where: str, warnings: list[LoadWarning]) -> ToolCall | None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        warnings.append(LoadWarning(f"{where}: tool_use block without a 'name' skipped", field="name"))
        return None
    call_id = as_text(block.get("id"))
    if call_id is None:
        warnings.append(LoadWarning(f"{where}: tool_use block without an 'id'; its result cannot be linked",
                                    field="id"))
    return ToolCall(call_id, name, parse_arguments(block.get("input"), where, warnings))


def messages_of(role: Role, parts: Parts, meta: Mapping[str, Any], where: str,
                warnings: list[LoadWarning]) -> list[Message]:
    """The messages one source message becomes: tool messages for its results, then the rest as one message."""
    out: list[Message] = []
    if role == "assistant":
        if parts.results:
            warnings.append(LoadWarning(f"{where}: tool_result blocks in an assistant message skipped",
                                        field="content"))
        out.append(Message("assistant", tuple(parts.texts), tuple(parts.tool_calls), None, tuple(parts.reasoning),
                           tuple(parts.images), tuple(parts.files), None, dict(meta)))
        return out
    out += [Message("tool", tool_result=r, meta=dict(meta)) for r in parts.results]
    if parts.tool_calls:
        warnings.append(LoadWarning(f"{where}: tool_use blocks in a {role} message skipped", field="content"))
    if parts.texts or parts.images or parts.files or parts.reasoning:
        out.append(Message(role, tuple(parts.texts), (), None, tuple(parts.reasoning), tuple(parts.images),
                           tuple(parts.files), None, dict(meta)))
    return out


def usage_of(raw: Any) -> Usage | None:
    """Anthropic ``usage`` as :class:`Usage`; cache writes split by TTL (all 5-minute, the API default, if the log
    has no ``cache_creation`` split). ``None`` when there is no usage object."""
    if not isinstance(raw, Mapping):
        return None
    write = as_count(raw.get("cache_creation_input_tokens"))
    split = raw.get("cache_creation")
    if isinstance(split, Mapping) and ("ephemeral_5m_input_tokens" in split or "ephemeral_1h_input_tokens" in split):
        write_5m = as_count(split.get("ephemeral_5m_input_tokens"))
        write_1h = as_count(split.get("ephemeral_1h_input_tokens"))
    else:
        write_5m, write_1h = write, 0
    return Usage(
        input_tokens=as_count(raw.get("input_tokens")),
        output_tokens=as_count(raw.get("output_tokens")),
        cache_read_tokens=as_count(raw.get("cache_read_input_tokens")),
        cache_write_tokens=write,
        cache_write_5m_tokens=write_5m,
        cache_write_1h_tokens=write_1h,
    )


def tool_schemas(raw: Any, warnings: list[LoadWarning]) -> list[ToolSchema]:
    """``tools`` of a request: ``{name, description, input_schema}`` (server tools keep their name only)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(LoadWarning(f"'tools' is {type_name(raw)}, expected a list; ignored", field="tools"))
        return []
    out = []
    for i, tool in enumerate(raw):
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if not isinstance(name, str):
            warnings.append(LoadWarning(f"tool {i}: skipped, no 'name'", field="tools"))
            continue
        schema = tool.get("input_schema")
        out.append(ToolSchema(name, as_text(tool.get("description")) or "",
                              dict(schema) if isinstance(schema, Mapping) else {}))
    return out


# ------------------------------------------------------------------------------------------------- requests
@dataclass
class _Built:
    messages: list[Message]
    #: index of the first loaded message of each source message (``None`` if it was skipped)
    starts: list[int | None]


def _system_message(system: Any, warnings: list[LoadWarning]) -> Message | None:
    if system is None or system == "" or system == []:
        return None
    if isinstance(system, str):
        return Message("system", (system,))
    if isinstance(system, list):
        texts = [b["text"] for b in system if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        if len(texts) != len(system):
            warnings.append(LoadWarning("system: blocks without text skipped", field="system"))
        return Message("system", tuple(texts)) if texts else None
    warnings.append(LoadWarning(f"'system' is {type_name(system)}, expected text or text blocks; ignored",
                                field="system"))
    return None


def build_messages(raw_messages: list[Any], system: Any, warnings: list[LoadWarning]) -> _Built:
    """Loaded messages for a request's ``system`` and ``messages``; each malformed message costs only itself."""
    out: list[Message] = []
    system_message = _system_message(system, warnings)
    if system_message is not None:
        out.append(system_message)
    calls: dict[str, ToolCall] = {}
    starts: list[int | None] = []
    for i, m in enumerate(raw_messages):
        where = f"message {i}"
        role = m.get("role") if isinstance(m, Mapping) else None
        if role not in _ROLES:
            got = repr(role) if isinstance(m, Mapping) else type_name(m)
            warnings.append(LoadWarning(f"{where}: skipped, expected role user or assistant, got {got}",
                                        field="role"))
            starts.append(None)
            continue
        try:
            parts = read_blocks(m.get("content"), where, calls, warnings)
        except RecursionError:
            warnings.append(LoadWarning(f"{where}: {TOO_DEEP}", field="content"))
            starts.append(None)
            continue
        made = messages_of(role, parts, {}, where, warnings)
        starts.append(len(out) if made else None)
        out += made
    return _Built(out, starts)


def request_conversation(body: Mapping[str, Any], path: str | None, warnings: list[LoadWarning]) -> Conversation:
    """A request body as a conversation (no usage: a request has none)."""
    raw = body.get("messages")
    built = build_messages(raw if isinstance(raw, list) else [], body.get("system"), warnings)
    tools = tool_schemas(body.get("tools"), warnings)
    warnings += structural_warnings(built.messages)
    return Conversation(tuple(built.messages), tuple(tools), Source("anthropic", path, "0", tuple(warnings)))


# ------------------------------------------------------------------------------------------------- captures
def _request_body(record: Any) -> Mapping[str, Any] | None:
    request = record.get("request") if isinstance(record, Mapping) else None
    body = request.get("body") if isinstance(request, Mapping) else None
    if isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        return body
    return None


def _has_reply(record: Mapping[str, Any]) -> bool:
    """Whether a pair's response holds a message (a token-count or error response does not)."""
    response = as_mapping(record.get("response"))
    body = response.get("body")
    return (isinstance(body, Mapping) and body.get("role") == "assistant") or bool(response.get("body_raw"))


def response_message(record: Mapping[str, Any], where: str, warnings: list[LoadWarning]) -> Mapping[str, Any] | None:
    """The assistant message a capture's response holds: a JSON body, or one rebuilt from its event stream."""
    response = record.get("response")
    if not isinstance(response, Mapping):
        return None
    body = response.get("body")
    if isinstance(body, Mapping) and body.get("role") == "assistant":
        return body
    raw = response.get("body_raw")
    if isinstance(raw, str) and raw:
        if raw.startswith("\x00\x00"):
            warnings.append(LoadWarning(f"{where}: AWS Bedrock binary event stream not read; response skipped",
                                        field="response.body_raw"))
            return None
        return message_from_stream(raw, where, warnings)
    return None


def message_from_stream(raw: str, where: str, warnings: list[LoadWarning]) -> Mapping[str, Any] | None:
    """Rebuild the final message from a Messages API server-sent-event stream."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    bad = 0
    for line in raw.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:].strip())
        except (json.JSONDecodeError, RecursionError):
            bad += 1
            continue
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), Mapping):
            message = dict(event["message"])
            message["usage"] = dict(as_mapping(message.get("usage")))
        elif kind == "content_block_start" and isinstance(event.get("content_block"), Mapping):
            blocks[_index(event)] = dict(event["content_block"])
        elif kind == "content_block_delta":
            _apply_delta(blocks.get(_index(event)), as_mapping(event.get("delta")), partial_json, _index(event))
        elif kind == "message_delta":
            usage = message.setdefault("usage", {})
            usage.update({k: v for k, v in as_mapping(event.get("usage")).items() if v is not None})
    if bad:
        warnings.append(LoadWarning(f"{where}: {bad} stream events are not valid JSON; skipped",
                                    field="response.body_raw"))
    if not message and not blocks:
        return None
    for index, text in partial_json.items():
        if index in blocks:
            blocks[index]["input"] = text
    message["role"] = "assistant"
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _index(event: Mapping[str, Any]) -> int:
    index = event.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else -1


def _apply_delta(block: dict[str, Any] | None, delta: Mapping[str, Any], partial: dict[int, str], index: int) -> None:
    if block is None:
        return
    kind = delta.get("type")
    if kind == "text_delta" and isinstance(delta.get("text"), str):
        block["text"] = str(block.get("text") or "") + delta["text"]
    elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
        block["thinking"] = str(block.get("thinking") or "") + delta["thinking"]
    elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
        partial[index] = partial.get(index, "") + delta["partial_json"]


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def _is_prefix(shorter: list[Any], longer: list[Any]) -> bool:
    """Whether a request's messages start the chosen request's (first and last compared; cache markers ignored)."""
    n = len(shorter)
    if n == 0 or n > len(longer):
        return False
    try:
        return all(_without_cache_control(shorter[i]) == _without_cache_control(longer[i]) for i in {0, n - 1})
    except RecursionError:
        return False


def capture_conversation(doc: Document) -> Conversation:
    """Read a capture of request/response pairs (JSONL, a JSON list of pairs, or one pair)."""
    warnings: list[LoadWarning] = []
    pairs: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]] = []
    for line, record in iter_records(doc):
        where = f"line {line}" if line is not None else f"pair {len(pairs)}"
        body = _request_body(record)
        if body is None:
            if not (isinstance(record, Mapping) and "request" in record):
                warnings.append(LoadWarning("skipped: not a request/response pair", line=line))
            continue
        pairs.append((where, record, body))
    if not pairs:
        raise LoadError(doc.path, "no request with a 'messages' list in this capture", field="request.body.messages")
    chosen_index = max(range(len(pairs)), key=lambda i: (len(pairs[i][2]["messages"]), _has_reply(pairs[i][1]), i))
    where, record, body = pairs[chosen_index]
    chosen = body["messages"]
    reply = response_message(record, where, warnings)
    source = list(chosen) + ([reply] if reply is not None else [])
    built = build_messages(source, body.get("system"), warnings)
    usage: dict[int, Usage] = {}
    for i, (pair_where, pair, pair_body) in enumerate(pairs):
        n = len(pair_body["messages"])
        is_chosen = i == chosen_index
        if not is_chosen and not (n < len(chosen) and _is_prefix(pair_body["messages"], chosen)):
            continue
        start = built.starts[n] if n < len(built.starts) else None
        if start is None or built.messages[start].role != "assistant":
            continue
        message = reply if is_chosen else response_message(pair, pair_where, [])
        call_usage = usage_of(message.get("usage")) if isinstance(message, Mapping) else None
        if call_usage is not None:
            usage[start] = call_usage
    tools = tool_schemas(body.get("tools"), warnings)
    warnings += structural_warnings(built.messages)
    return Conversation(tuple(built.messages), tuple(tools), Source("anthropic", doc.path, "0", tuple(warnings)),
                        usage=usage)


# ------------------------------------------------------------------------------------------------- detection
def _looks_anthropic(messages: list[Any]) -> str | None:
    """None when a message list is Anthropic-shaped: user/assistant roles, with at least one Anthropic-only block."""
    if not messages:
        return "the message list is empty"
    marker = False
    for i, m in enumerate(messages[:200]):
        if not isinstance(m, Mapping) or m.get("role") not in _ROLES:
            return f"message {i} has no Anthropic role (user/assistant)"
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and (as_text(block.get("type")) in ANTHROPIC_BLOCK_TYPES or
                                                   (block.get("type") == "image" and "source" in block)):
                    marker = True
        elif content is not None and not isinstance(content, str):
            return f"message {i}: content is neither text nor a list of blocks"
    return None if marker else "no Anthropic content blocks (tool_use, tool_result, thinking, image source…)"


def _is_request(value: Any) -> str | None:
    """None when a JSON object is an Anthropic request body (Anthropic blocks, or text with request markers)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        return "no 'messages' list"
    messages = value["messages"]
    why = _looks_anthropic(messages)
    if why is None:
        return None
    tools = cast("list[Any]", value.get("tools")) if isinstance(value.get("tools"), list) else []
    marked = "system" in value or any(isinstance(t, Mapping) and "input_schema" in t for t in tools)
    roles_ok = all(isinstance(m, Mapping) and m.get("role") in _ROLES for m in messages[:200])
    contents_ok = all(isinstance(m.get("content"), (str, list)) for m in messages[:200] if isinstance(m, Mapping))
    if marked and messages and roles_ok and contents_ok:
        return None
    return why


def detect(doc: Document) -> str | None:
    if doc.kind == "zip":
        return "a zip archive, not JSON"
    if doc.kind == "json" and isinstance(doc.value, Mapping) and "request" not in doc.value:
        return _is_request(doc.value)
    if doc.kind == "json" and isinstance(doc.value, list) and not any(isinstance(v, Mapping) and "request" in v
                                                                      for v in doc.value[:5]):
        return _looks_anthropic(doc.value)
    for _, record in iter_records(doc):
        if _request_body(record) is not None:
            return None
    return "no request/response pairs with an Anthropic request body"


def read(doc: Document) -> list[Conversation]:
    value = doc.value
    if doc.kind == "json" and isinstance(value, Mapping) and "request" not in value:
        return [request_conversation(value, doc.path, [])]
    if doc.kind == "json" and isinstance(value, list) and _looks_anthropic(value) is None:
        return [request_conversation({"messages": value}, doc.path, [])]
    return [capture_conversation(doc)]


register_format(
    FormatInfo(
        name="anthropic",
        title="Anthropic Messages API",
        detect=detect,
        read=read,
        extensions=(".json", ".jsonl"),
        description="Anthropic Messages requests ({system, messages, tools} with content blocks), bare message lists "
        "with Anthropic blocks, and request/response captures (claude-trace JSONL, streamed or JSON responses).",
        reads="A request body (system, messages, tools), a bare list with Anthropic blocks, or a capture of "
        "request/response pairs (JSON or raw SSE responses): the longest request plus its response is the "
        "conversation, with the usage (cache split by TTL) of every response whose request it extends. Blocks: "
        "text, thinking, redacted_thinking, tool_use, tool_result (text, image or document content; is_error), "
        "image, document; each tool_result becomes its own tool message.",
        leaves_out="Requests of a capture that the longest one does not extend (side calls such as title or quota "
        "requests, and calls before a context reset) are not read; nor are the model and request parameters "
        "(max_tokens, thinking, context_management) or cache_control marks. Server-side tool blocks stay in the "
        "assistant message as JSON text; AWS Bedrock binary event streams are skipped with a warning.",
    )
)
