"""OpenAI Responses API item lists: ``{"instructions", "input": [...], "output": [...], "tools", "usage"}``, a
stored ``response`` object, a bare JSON list of items, or JSONL with one item per line.

Items read: ``message`` (roles user / assistant / system / developer; ``input_text`` / ``output_text`` /
``refusal`` / ``input_image`` / ``input_file`` parts, or plain text; the typeless "easy" input message too),
``function_call`` (``call_id``, ``name``, JSON ``arguments``), ``function_call_output`` (``call_id``, ``output`` as
text or parts), ``custom_tool_call`` / ``custom_tool_call_output`` (free-form ``input``, kept as raw arguments),
``local_shell_call`` (its ``action`` as arguments) / ``local_shell_call_output``, ``computer_call`` /
``computer_call_output``, ``reasoning`` (summary texts, else reasoning texts, become reasoning parts), hosted tool
calls, and ``compaction`` items (the server's own compaction: a log event).

Hosted tools run inside one response. A ``web_search_call`` becomes a ``web_search`` tool call of that response's
assistant message (arguments: its ``action`` — ``search`` with ``query``, ``open_page`` with ``url``, ``find`` with
``url`` and ``pattern`` — without the ``sources`` list) and a tool result right after the message: the sources the
action lists, or a stand-in text when the log has none (the API never returns the search results themselves).
Other hosted calls (``file_search_call``, ``mcp_call``, ``code_interpreter_call``…) are kept as JSON text of the
assistant message.

The output items of one model response between two inputs (reasoning, message, tool calls) form one assistant
message: one LLM call. The item reader here is shared with the Codex rollout reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import LogEvent
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
from ._fields import TOO_DEEP
from ._fields import UnknownTypes
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format
from .openai_chat import parse_arguments

#: output items of a response that start or extend the assistant message of an LLM call
CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call", "computer_call"})
#: a hosted tool call read as a tool call with a result (the others are kept as JSON text of the assistant message)
WEB_SEARCH_TYPE = "web_search_call"
#: the result text of a web search whose results the log does not hold (the API keeps them inside the response)
WEB_SEARCH_STAND_IN = "(web search results: not recorded in the log — Compaction Lab stand-in text)"
HOSTED_CALL_TYPES = frozenset({"web_search_call", "file_search_call", "image_generation_call",
                               "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request"})
RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output",
                          "computer_call_output"})
COMPACTION_TYPES = frozenset({"compaction", "compaction_summary"})
#: item types only the Responses API uses (evidence for detection)
RESPONSES_TYPES = CALL_TYPES | HOSTED_CALL_TYPES | RESULT_TYPES | COMPACTION_TYPES | {"reasoning", "item_reference"}
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "refusal", "summary_text", "reasoning_text"})
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
_SHELL_TOOL = "local_shell"


@dataclass
class _Draft:
    texts: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def message(self) -> Message:
        return Message("assistant", tuple(self.texts), tuple(self.tool_calls), None, tuple(self.reasoning),
                       meta=self.meta)


@dataclass
class ItemReader:
    """Turns Responses API items, in order, into messages; one open assistant message collects a call's outputs."""

    skip_types: frozenset[str] = frozenset()
    slots: list[Message | _Draft] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)
    usage: dict[int, Usage] = field(default_factory=dict)
    events: list[LogEvent] = field(default_factory=list)
    summaries: set[int] = field(default_factory=set)
    warnings: list[LoadWarning] = field(default_factory=list)
    unknown: UnknownTypes = field(default_factory=lambda: UnknownTypes("item"))
    open_index: int | None = None
    pending_usage: Usage | None = None
    #: results of hosted calls (web searches) of the open response: they follow its assistant message
    pending_results: list[Message] = field(default_factory=list)

    # ----------------------------------------------------------------------------------------------- items
    def add(self, item: Any, where: str, line: int | None = None, meta: Mapping[str, Any] | None = None) -> None:
        """Read one item; a malformed item costs only itself (a warning naming ``where`` and ``line``)."""
        try:
            self._add(item, where, line, meta)
        except RecursionError:
            self._warn(f"{where}: {TOO_DEEP}", line)

    def _add(self, item: Any, where: str, line: int | None, meta: Mapping[str, Any] | None) -> None:
        if not isinstance(item, Mapping):
            self._warn(f"{where}: skipped, expected an item object, got {type_name(item)}", line)
            return
        meta = dict(meta or {})
        if isinstance(item.get("id"), str):
            meta.setdefault("item_id", item["id"])
        kind = as_text(item.get("type"))
        if item.get("type") is None and "role" in item:
            kind = "message"
        if kind in self.skip_types:
            return
        if kind == "message":
            self._message(item, where, line, meta)
        elif kind == "reasoning":
            self._draft(meta).reasoning += _reasoning_texts(item)
        elif kind in CALL_TYPES:
            self._call(item, kind, where, line, meta)
        elif kind == WEB_SEARCH_TYPE:
            self._web_search(item, line, meta)
        elif kind in HOSTED_CALL_TYPES:
            self._draft(meta).texts.append(json.dumps(item, ensure_ascii=False, default=str))
        elif kind in RESULT_TYPES:
            self._result(item, where, line, meta)
        elif kind in COMPACTION_TYPES:
            self.compaction(None, line)
        elif kind == "item_reference":
            self._warn(f"{where}: item_reference {item.get('id')!r} points to a stored item this log does not hold; "
                       "skipped", line, "type")
        else:
            self.unknown.add(item.get("type"), line)

    def _message(self, item: Mapping[str, Any], where: str, line: int | None, meta: dict[str, Any]) -> None:
        role = _ROLES.get(as_text(item.get("role")) or "")
        if role is None:
            self._warn(f"{where}: message skipped, unknown role {item.get('role')!r}", line, "role")
            return
        texts, images, files = self._content(item.get("content"), where, line)
        if role == "assistant":
            draft = self._draft(meta)
            draft.texts += texts
            return
        self.close()
        self.slots.append(Message(role, tuple(texts), images=tuple(images), files=tuple(files), meta=meta))

    def _call(self, item: Mapping[str, Any], kind: str, where: str, line: int | None, meta: dict[str, Any]) -> None:
        call_id = as_text(item.get("call_id")) or as_text(item.get("id"))
        local: list[LoadWarning] = []
        if kind == "function_call":
            name = item.get("name")
            arguments = parse_arguments(item.get("arguments"), where, local)
            extra = None
        elif kind == "custom_tool_call":
            name = item.get("name")
            raw = item.get("input")
            arguments = {"_raw": raw} if isinstance(raw, str) else parse_arguments(raw, where, local)
            extra = {"type": "custom"}
        else:
            name = _SHELL_TOOL if kind == "local_shell_call" else "computer"
            action = item.get("action")
            arguments = dict(action) if isinstance(action, Mapping) else {}
            extra = {"type": kind}
        self.warnings += [replace(w, line=line) for w in local]
        if not isinstance(name, str) or not name:
            self._warn(f"{where}: {kind} without a 'name' skipped", line, "name")
            return
        if call_id is None:
            self._warn(f"{where}: {kind} without a 'call_id'; its output cannot be linked", line, "call_id")
        call = ToolCall(call_id, name, arguments, extra)
        if call_id:
            self.calls[call_id] = call
        self._draft(meta).tool_calls.append(call)

    def _web_search(self, item: Mapping[str, Any], line: int | None, meta: dict[str, Any]) -> None:
        """A web search the API ran inside the response: a ``web_search`` call whose arguments are its action
        (``search`` with ``query``, ``open_page`` with ``url``, ``find`` with ``url`` and ``pattern``) and whose
        result lists the sources the log names, else a stand-in (the log never holds the results themselves)."""
        action = as_mapping(item.get("action"))
        arguments = {k: v for k, v in action.items() if k != "sources"}
        if not arguments and isinstance(item.get("query"), str):
            arguments = {"type": "search", "query": item["query"]}
        draft = self._draft(meta)
        call_id = (as_text(item.get("id")) or as_text(item.get("call_id"))
                   or f"web_search-{line if line is not None else len(self.slots)}-{len(draft.tool_calls)}")
        status = as_text(item.get("status"))
        call = ToolCall(call_id, "web_search", arguments, {"type": WEB_SEARCH_TYPE, "hosted": True,
                                                           **({"status": status} if status else {})})
        draft.tool_calls.append(call)
        listed = action.get("sources")
        sources = [u for u in (as_text(as_mapping(s).get("url")) for s in (listed if isinstance(listed, list) else ()))
                   if u]
        text = "Sources:\n" + "\n".join(sources) if sources else WEB_SEARCH_STAND_IN
        result_meta = {**meta, "hosted": True, **({} if sources else {"stand_in": True})}
        self.pending_results.append(Message("tool", tool_result=ToolResult(call, text, error=status == "failed"),
                                            meta=result_meta))

    def fill_web_searches(self, found: Sequence[tuple[str | None, Mapping[str, Any]]]) -> None:
        """Arguments for the web searches whose item had no action, from the agent's own record of them (Codex's
        ``web_search_end`` events: ``(call id, arguments)``, matched to the searches by call id, else the n-th record to
        the n-th search)."""
        self.close()
        searches = [(slot, k) for slot in self.slots if isinstance(slot, _Draft)
                    for k, call in enumerate(slot.tool_calls)
                    if call.name == "web_search" and as_mapping(call.extra).get("hosted")]
        ids = {slot.tool_calls[k].id for slot, k in searches}
        by_id = {cid: args for cid, args in found if cid in ids}
        in_order = iter([args for cid, args in found if cid not in by_id])  # the n-th search's record
        replaced: dict[str | None, ToolCall] = {}
        for slot, k in searches:
            call = slot.tool_calls[k]
            arguments = by_id.get(call.id) if call.id in by_id else next(in_order, None)
            if arguments and not call.arguments:
                slot.tool_calls[k] = replaced[call.id] = replace(call, arguments=dict(arguments))
        for i, held in enumerate(self.slots):
            result = held.tool_result if isinstance(held, Message) else None
            if result is not None and result.call_id in replaced:
                assert isinstance(held, Message)  # it holds a result
                self.slots[i] = replace(held, tool_result=replace(result, origin=replaced[result.call_id]))

    def _result(self, item: Mapping[str, Any], where: str, line: int | None, meta: dict[str, Any]) -> None:
        self.close()
        call_id = as_text(item.get("call_id")) or as_text(item.get("id"))
        if call_id is None:
            self._warn(f"{where}: {item.get('type')} without a 'call_id'", line, "call_id")
        origin = self.calls.get(call_id or "") or ToolCall(call_id, "unknown_tool")
        value, error, extra_meta = self._output(item.get("output"), where, line)
        if item.get("status") == "incomplete" or item.get("success") is False:
            error = True
        self.slots.append(Message("tool", tool_result=ToolResult(origin, value, error), meta={**meta, **extra_meta}))

    def _output(self, output: Any, where: str, line: int | None) -> tuple[str | tuple[ResultPart, ...], bool, dict[str, Any]]:
        """(result, error flag, meta) of a tool output: text exactly as the model received it, or parts."""
        if output is None:
            return "", False, {}
        if isinstance(output, str):
            return output, False, _shell_metadata(output)
        if isinstance(output, list):
            texts, images, files = self._content(output, where, line)
            parts: tuple[ResultPart, ...] = (*texts, *images, *files)
            return (parts[0] if len(parts) == 1 and isinstance(parts[0], str) else parts), False, {}
        if isinstance(output, Mapping) and isinstance(output.get("content"), (str, list)):
            value, _, meta = self._output(output["content"], where, line)
            return value, output.get("success") is False, meta
        self._warn(f"{where}: output is {type_name(output)}, expected text or parts; kept as JSON text", line,
                   "output")
        return json.dumps(output, ensure_ascii=False, default=str), False, {}

    def _content(self, content: Any, where: str, line: int | None) -> tuple[list[str], list[Image], list[File]]:
        texts: list[str] = []
        images: list[Image] = []
        files: list[File] = []
        if content is None:
            return texts, images, files
        if isinstance(content, str):
            return ([content] if content else []), images, files
        if not isinstance(content, list):
            self._warn(f"{where}: content is {type_name(content)}, expected text or parts; skipped", line, "content")
            return texts, images, files
        for part in content:
            kind = as_text(part.get("type")) if isinstance(part, Mapping) else None
            if isinstance(part, Mapping) and kind in TEXT_PARTS:
                text = part.get("text") if kind != "refusal" else part.get("refusal", part.get("text"))
                if isinstance(text, str):
                    texts.append(text)
            elif kind == "input_image":
                url = as_text(part.get("image_url"))
                source = "base64" if url and url.startswith("data:") else url or as_text(part.get("file_id"))
                images.append(Image(mime_type=_data_mime(url), detail=as_text(part.get("detail")), source=source))
            elif kind == "input_file":
                files.append(File(filename=as_text(part.get("filename")) or as_text(part.get("file_id"))))
            else:
                self._warn(f"{where}: content part of type {kind!r} kept as JSON text", line, "content")
                texts.append(json.dumps(part, ensure_ascii=False, default=str))
        return texts, images, files

    # ----------------------------------------------------------------------------------------------- calls
    def _draft(self, meta: Mapping[str, Any]) -> _Draft:
        """The open assistant message, opened on the first output item of a call."""
        if self.open_index is not None:
            draft = self.slots[self.open_index]
            if isinstance(draft, _Draft):
                return draft
        draft = _Draft(meta=dict(meta))
        self.open_index = len(self.slots)
        self.slots.append(draft)
        if self.pending_usage is not None:
            self.usage[self.open_index] = self.pending_usage
            self.pending_usage = None
        return draft

    def close(self) -> None:
        """End the current LLM call (an input item follows); the results of its hosted calls follow it."""
        self.open_index = None
        if self.pending_results:
            self.slots += self.pending_results
            self.pending_results = []

    def call_usage(self, usage: Usage) -> None:
        """Usage of one LLM call: it belongs to the open assistant message unless that one already has usage, else
        to the next one (logs write the usage record before or after the call's output items)."""
        if self.open_index is not None and self.open_index not in self.usage:
            self.usage[self.open_index] = usage
            return
        self.close()
        self.pending_usage = usage

    def compaction(self, summary: str | None, line: int | None, summary_meta: Mapping[str, Any] | None = None,
                   trigger: str | None = None) -> None:
        """A compaction the run performed; with ``summary``, the summary is loaded as a (log summary) user message."""
        self.close()
        index = len(self.slots)
        self.events.append(LogEvent(index, "compaction", trigger=trigger, summary=summary))
        if summary:
            self.slots.append(Message("user", (summary,), meta={**(summary_meta or {}), "log_compaction_summary": True}))
            self.summaries.add(index)

    def _warn(self, message: str, line: int | None, field_name: str | None = None) -> None:
        self.warnings.append(LoadWarning(message, line=line, field=field_name))

    # ----------------------------------------------------------------------------------------------- result
    def messages(self) -> list[Message]:
        self.close()
        return [s.message() if isinstance(s, _Draft) else s for s in self.slots]

    def conversation(self, format_name: str, path: str | None, conversation_id: str = "0",
                     tools: Iterable[ToolSchema] = (), warnings: Iterable[LoadWarning] = (),
                     context_window: int | None = None, model: str | None = None,
                     agent_version: str | None = None) -> Conversation:
        messages = self.messages()
        if self.pending_usage is not None:
            self._warn("usage reported after the last model output; not attached to any call", None)
        all_warnings = (*warnings, *self.warnings, *self.unknown.warnings(), *structural_warnings(messages))
        return Conversation(tuple(messages), tuple(tools),
                            Source(format_name, path, conversation_id, all_warnings, context_window, model=model,
                                   agent_version=agent_version),
                            usage=dict(self.usage), events=tuple(self.events),
                            log_summary_indices=frozenset(self.summaries))


def _reasoning_texts(item: Mapping[str, Any]) -> list[str]:
    """Summary texts of a reasoning item, or its reasoning texts when it has no summary."""
    for key in ("summary", "content"):
        value = item.get(key)
        if isinstance(value, list):
            texts = [p["text"] for p in value if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
            if texts:
                return texts
    return []


def _data_mime(url: str | None) -> str | None:
    if url and url.startswith("data:"):
        return url[5:].split(";", 1)[0] or None
    return None


def _shell_metadata(output: str) -> dict[str, Any]:
    """``exit_code`` / ``duration_seconds`` when a tool output is the JSON ``{"output", "metadata"}`` envelope some
    shell tools return (the text itself stays as sent)."""
    if not output.startswith("{") or '"metadata"' not in output:
        return {}
    try:
        value = json.loads(output)
    except (json.JSONDecodeError, RecursionError):
        return {}
    metadata = value.get("metadata") if isinstance(value, Mapping) else None
    if not isinstance(metadata, Mapping):
        return {}
    return {k: metadata[k] for k in ("exit_code", "duration_seconds") if isinstance(metadata.get(k), (int, float))}


def usage_of(raw: Any) -> Usage | None:
    """Responses API ``usage`` (``input_tokens`` include cached ones) as :class:`Usage`."""
    if not isinstance(raw, Mapping):
        return None
    total_in = as_count(raw.get("input_tokens"))
    cached = min(as_count(as_mapping(raw.get("input_tokens_details")).get("cached_tokens")), total_in)
    return Usage(input_tokens=total_in - cached, output_tokens=as_count(raw.get("output_tokens")),
                 cache_read_tokens=cached)


def tool_schemas(raw: Any, warnings: list[LoadWarning]) -> list[ToolSchema]:
    """Responses ``tools``: function tools ``{type, name, description, parameters}`` and named custom tools."""
    if not isinstance(raw, list):
        return []
    out = []
    for tool in raw:
        if not isinstance(tool, Mapping):
            warnings.append(LoadWarning("a tool definition is not an object; skipped", field="tools"))
            continue
        fn = cast("Mapping[str, Any]", tool.get("function")) if isinstance(tool.get("function"), Mapping) else tool
        name = fn.get("name")
        if isinstance(name, str):
            params = fn.get("parameters")
            out.append(ToolSchema(name, as_text(fn.get("description")) or "",
                                  dict(params) if isinstance(params, Mapping) else {}))
    return out


# ------------------------------------------------------------------------------------------------- shapes
def _items_of(value: Any) -> tuple[list[Any], list[Any], Mapping[str, Any]] | None:
    """(input items, output items, envelope) of a request/response object, or None if it is not one."""
    if not isinstance(value, Mapping):
        return None
    request = value.get("request") if isinstance(value.get("request"), Mapping) else None
    response = value.get("response") if isinstance(value.get("response"), Mapping) else None
    envelope = request or value
    raw_input = envelope.get("input")
    inputs = [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else raw_input
    output = (response or value).get("output")
    if not isinstance(inputs, list) and not isinstance(output, list):
        return None
    return (inputs if isinstance(inputs, list) else []), (output if isinstance(output, list) else []), envelope


def _evidence(items: Iterable[Any], found: bool = False) -> str | None:
    """None when the items are Responses API items: no chat-style message among them, and at least one
    Responses-only type or part (or ``found`` evidence from the envelope)."""
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            return f"item {i} is not an object"
        if "contents" in item or "tool_calls" in item or item.get("role") == "tool":
            return f"item {i} is a chat message, not a Responses item"
        kind = item.get("type")
        if as_text(kind) in RESPONSES_TYPES:
            found = True
        elif kind == "message" or (kind is None and "role" in item):
            content = item.get("content")
            if isinstance(content, list) and any(isinstance(p, Mapping) and as_text(p.get("type")) in TEXT_PARTS - {"text"}
                                                 for p in content):
                found = True
        elif kind is not None:
            return f"item {i} has type {kind!r}, not a Responses item type"
        else:
            return f"item {i} has neither 'type' nor 'role'"
    return None if found else "no Responses items (function_call, reasoning, input_text/output_text parts…)"


def detect(doc: Document) -> str | None:
    if doc.kind == "zip":
        return "a zip archive, not JSON"
    if doc.kind == "jsonl":
        return _evidence(record for _, record in doc.records)
    value = doc.value
    if isinstance(value, list):
        return _evidence(value) if value else "the item list is empty"
    shaped = _items_of(value)
    if shaped is None:
        return "no 'input' or 'output' item list"
    inputs, output, envelope = shaped
    if not inputs and not output:
        return "the input and output lists are empty"
    marked = value.get("object") == "response" or isinstance(envelope.get("instructions"), str)
    return _evidence([*inputs, *output], found=marked)


def read(doc: Document) -> list[Conversation]:
    reader = ItemReader()
    warnings: list[LoadWarning] = []
    tools: list[ToolSchema] = []
    if doc.kind == "jsonl" or isinstance(doc.value, list):
        for line, item in iter_records(doc):
            reader.add(item, f"line {line}" if line is not None else "item", line)
        return [reader.conversation("openai-responses", doc.path)]
    shaped = _items_of(doc.value)
    if shaped is None:
        raise LoadError(doc.path, "expected Responses API items: a list, or an object with 'input'/'output' lists",
                        field="input")
    inputs, output, envelope = shaped
    instructions = envelope.get("instructions")
    if isinstance(instructions, str) and instructions:
        reader.slots.append(Message("system", (instructions,)))
    for i, item in enumerate(inputs):
        reader.add(item, f"input item {i}")
    reader.close()
    start = len(reader.slots)
    for i, item in enumerate(output):
        reader.add(item, f"output item {i}")
    response = doc.value.get("response") if isinstance(doc.value.get("response"), Mapping) else doc.value
    call_usage = usage_of(response.get("usage"))
    produced = [i for i in range(start, len(reader.slots)) if isinstance(reader.slots[i], _Draft)]
    if call_usage is not None and produced:
        reader.usage[produced[0]] = call_usage
    tools = tool_schemas(envelope.get("tools"), warnings)
    return [reader.conversation("openai-responses", doc.path, tools=tools, warnings=warnings)]


register_format(
    FormatInfo(
        name="openai-responses",
        title="OpenAI Responses API items",
        detect=detect,
        read=read,
        extensions=(".json", ".jsonl"),
        description="Responses API input/output items ({instructions, input, output, tools, usage}, a response "
        "object, a bare item list or JSONL): messages, function/custom/shell calls and outputs, reasoning.",
        reads="Input and output items: messages with text, image and file parts, reasoning summaries, function, "
        "custom, shell and computer calls with their outputs, web_search_call as a web_search tool call with its "
        "result after the response, compaction items, function tool schemas and the response's usage.",
        leaves_out="Encrypted reasoning, item references to stored items (warned). A web search's results are never "
        "in the items: its result lists the sources the action names, else a stated stand-in text. Other hosted "
        "calls (file search, MCP, code interpreter) are kept as JSON text of the assistant message.",
    )
)
