"""Inspect AI evaluation logs: ``.json`` EvalLog files, ``.eval`` zip archives, and single sample files.

Every sample is one conversation, with id ``<sample id>:<epoch>``. Its ``messages`` (the ChatMessage list:
system / user / assistant with ``tool_calls`` [{id, function, arguments}] / tool with ``tool_call_id``, ``function``
and ``error``; content as text or content parts) are the run; when a sample has none, the last ``model`` event's
input and output stand in. ``attachment://<hash>`` references are resolved from the sample's ``attachments``.

Usage comes from the ``model`` events, matched to assistant messages by message id (or in order when the log has
no ids): ``input_tokens``, ``output_tokens``, ``input_tokens_cache_read`` / ``_cache_write``; when
``total_tokens == input_tokens + output_tokens`` the provider counted cached tokens inside ``input_tokens``
(OpenAI), so they are taken out of the uncached figure. Tool schemas come from the last model event that has
any.

``compaction`` events become :class:`LogEvent` (``tokens_before`` / ``tokens_after``). Inspect keeps the full
history in ``messages`` and appends the summary of a summary compaction as a user message with
``metadata.summary``: those messages are the log's summaries (``log_summary_indices``) and the event's summary.

A tool message with an ``error`` carries the error text the model was shown (``Error: <message>``) when it has no
content of its own. ``.eval`` archives are read member by member, each only up to the size its header declares,
with caps on each member's and on the total uncompressed size (:data:`MAX_MEMBER_BYTES`, :data:`MAX_ARCHIVE_BYTES`):
a member over its cap is skipped with a warning, an archive over the total is refused.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterator
from collections.abc import Mapping
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
from ._fields import optional_count
from ._fields import type_name
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import parse_arguments

#: the most uncompressed bytes read from one ``.eval`` archive, and from one of its members (guards against zip
#: bombs: a member is read only up to the size its header declares, and only when that is within both)
MAX_ARCHIVE_BYTES = 256 << 20
MAX_MEMBER_BYTES = 64 << 20
ATTACHMENT_PREFIX = "attachment://"
REDACTED_REASONING = "[redacted reasoning]"
_ROLES = ("system", "user", "assistant", "tool")


# ------------------------------------------------------------------------------------------------- samples
@dataclass
class _SampleReader:
    """Reads one sample into a conversation; every malformed message costs only itself."""

    sample: Mapping[str, Any]
    path: str | None
    warnings: list[LoadWarning] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)

    @property
    def conversation_id(self) -> str:
        epoch = self.sample.get("epoch")
        return f"{self.sample.get('id')}:{epoch if epoch is not None else 1}"

    def resolve(self, value: Any, where: str) -> Any:
        """``attachment://`` references replaced by the attachment text."""
        if isinstance(value, str) and value.startswith(ATTACHMENT_PREFIX):
            key = value[len(ATTACHMENT_PREFIX):]
            attachments = as_mapping(self.sample.get("attachments"))
            if isinstance(attachments.get(key), str):
                return attachments[key]
            self.warnings.append(LoadWarning(f"{where}: attachment {key!r} is not in the sample; the reference is "
                                             "kept as text", field="attachments"))
        return value

    def conversation(self) -> Conversation:
        raw_events = self.sample.get("events")
        events = [e for e in raw_events if isinstance(e, Mapping)] if isinstance(raw_events, list) else []
        raw = self.sample.get("messages")
        if not isinstance(raw, list) or not raw:
            raw = _messages_from_events(events)
            if raw:
                self.warnings.append(LoadWarning("the sample has no messages; read from its last model event",
                                                 field="messages"))
        messages: list[Message] = []
        for i, m in enumerate(raw):
            messages += self.message(m, f"message {i}")
        model_events = [e for e in events if e.get("event") == "model"]
        usage = self.usage(messages, model_events)
        log_events, summaries = self.compactions(messages, events, model_events)
        with_tools = [e for e in model_events if isinstance(e.get("tools"), list) and e["tools"]]
        tools = _tools(with_tools[-1]["tools"] if with_tools else None)
        warnings = (*self.warnings, *structural_warnings(messages))
        return Conversation(tuple(messages), tuple(tools),
                            Source("inspect-ai", self.path, self.conversation_id, warnings), usage=usage,
                            events=tuple(log_events), log_summary_indices=frozenset(summaries))

    def message(self, raw: Any, where: str) -> list[Message]:
        role = raw.get("role") if isinstance(raw, Mapping) else None
        if role not in _ROLES:
            got = repr(role) if isinstance(raw, Mapping) else type_name(raw)
            self.warnings.append(LoadWarning(f"{where}: skipped, expected role system/user/assistant/tool, got {got}",
                                             field="role"))
            return []
        texts, reasoning, images, files = self.content(raw.get("content"), where)
        meta: dict[str, Any] = {}
        if isinstance(raw.get("id"), str):
            meta["message_id"] = raw["id"]
        for key in ("source", "model"):
            if isinstance(raw.get(key), str):
                meta[key] = raw[key]
        if as_mapping(raw.get("metadata")).get("summary") is True:
            meta["log_compaction_summary"] = True
        if role == "tool":
            return [self.tool_message(raw, texts, images, files, meta, where)]
        calls = self.tool_calls(raw.get("tool_calls"), where) if role == "assistant" else ()
        return [Message(role, tuple(texts), tuple(calls), None, tuple(reasoning), tuple(images), tuple(files), None,
                        meta)]

    def content(self, content: Any, where: str) -> tuple[list[str], list[str], list[Image], list[File]]:
        texts: list[str] = []
        reasoning: list[str] = []
        images: list[Image] = []
        files: list[File] = []
        content = self.resolve(content, where)
        if isinstance(content, str):
            return ([content] if content else []), reasoning, images, files
        if content is None:
            return texts, reasoning, images, files
        if not isinstance(content, list):
            self.warnings.append(LoadWarning(f"{where}: content is {type_name(content)}, expected text or parts; "
                                             "skipped", field="content"))
            return texts, reasoning, images, files
        for part in content:
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text" and isinstance(part.get("text"), str):
                texts.append(self.resolve(part["text"], where))
            elif kind == "reasoning":
                text = self.resolve(part.get("reasoning"), where)
                reasoning.append(REDACTED_REASONING if part.get("redacted") is True or not isinstance(text, str)
                                 else text)
            elif kind == "image":
                url = as_text(self.resolve(part.get("image"), where))
                images.append(Image(mime_type=url[5:].split(";", 1)[0] if url and url.startswith("data:") else None,
                                    detail=as_text(part.get("detail")),
                                    source="base64" if url and url.startswith("data:") else url))
            elif kind in ("audio", "video", "document"):
                files.append(File(filename=as_text(part.get("filename")),
                                  mime_type=as_text(part.get("mime_type")) or as_text(part.get("format"))))
            else:
                if kind not in ("data", "tool_use"):
                    self.warnings.append(LoadWarning(f"{where}: content part of type {kind!r} kept as JSON text",
                                                     field="content"))
                texts.append(json.dumps(part, ensure_ascii=False, default=str))
        return texts, reasoning, images, files

    def tool_calls(self, raw: Any, where: str) -> list[ToolCall]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.warnings.append(LoadWarning(f"{where}: tool_calls is {type_name(raw)}, expected a list; ignored",
                                             field="tool_calls"))
            return []
        out = []
        for j, tc in enumerate(raw):
            name = tc.get("function") if isinstance(tc, Mapping) else None
            if not isinstance(name, str):
                self.warnings.append(LoadWarning(f"{where}: tool call {j} skipped, expected a 'function' name",
                                                 field="tool_calls"))
                continue
            call = ToolCall(as_text(tc.get("id")), name, parse_arguments(tc.get("arguments"), where, self.warnings))
            if call.id:
                self.calls[call.id] = call
            out.append(call)
        return out

    def tool_message(self, raw: Mapping[str, Any], texts: list[str], images: list[Image], files: list[File],
                     meta: dict[str, Any], where: str) -> Message:
        call_id = as_text(raw.get("tool_call_id"))
        origin = self.calls.get(call_id or "") or ToolCall(call_id, as_text(raw.get("function")) or "unknown_tool")
        error = raw.get("error")
        failed = isinstance(error, Mapping)
        if failed and not texts and not images and not files:
            texts = [f"Error: {as_text(cast('Mapping[str, Any]', error).get('message')) or ''}"]
        parts: tuple[ResultPart, ...] = (*texts, *images, *files)
        result = parts[0] if len(parts) == 1 and isinstance(parts[0], str) else ("" if not parts else parts)
        return Message("tool", tool_result=ToolResult(origin, result, failed), meta=meta)

    # --------------------------------------------------------------------------------------------- events
    def usage(self, messages: list[Message], model_events: list[Mapping[str, Any]]) -> dict[int, Usage]:
        assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
        by_id = {messages[i].meta.get("message_id"): i for i in assistants if messages[i].meta.get("message_id")}
        usage: dict[int, Usage] = {}
        matched = [by_id.get(_output_id(e)) for e in model_events]
        if not any(m is not None for m in matched) and len(model_events) == len(assistants):
            matched = list(assistants)
        for event, index in zip(model_events, matched, strict=True):
            call_usage = _usage(as_mapping(event.get("output")).get("usage"))
            if index is not None and call_usage is not None:
                usage[index] = call_usage
        return usage

    def compactions(self, messages: list[Message], events: list[Mapping[str, Any]],
                    model_events: list[Mapping[str, Any]]) -> tuple[list[LogEvent], set[int]]:
        summaries = [i for i, m in enumerate(messages) if m.meta.get("log_compaction_summary")]
        assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
        by_id = {messages[i].meta.get("message_id"): i for i in assistants if messages[i].meta.get("message_id")}
        out: list[LogEvent] = []
        pending_summaries = list(summaries)
        calls_seen = 0
        for position, event in enumerate(events):
            kind = event.get("event")
            if kind == "model":
                calls_seen += 1
                continue
            if kind != "compaction":
                continue
            index = _next_call_index(events[position + 1:], by_id, assistants, calls_seen, len(messages))
            summary = None
            if event.get("type", "summary") == "summary" and pending_summaries:
                index = pending_summaries.pop(0)
                summary = messages[index].text
            out.append(LogEvent(index, "compaction", pre_tokens=optional_count(event.get("tokens_before")),
                                post_tokens=optional_count(event.get("tokens_after")), summary=summary))
        return out, set(summaries)


def _next_call_index(later: list[Mapping[str, Any]], by_id: dict[Any, int], assistants: list[int], calls_seen: int,
                     end: int) -> int:
    """The index of the assistant message of the first model call in ``later`` (the end if there is none)."""
    for e in later:
        if e.get("event") == "model":
            index = by_id.get(_output_id(e))
            if index is not None:
                return index
            break
    return assistants[calls_seen] if calls_seen < len(assistants) else end


def _output_id(event: Mapping[str, Any]) -> str | None:
    choices = as_mapping(event.get("output")).get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return as_text(as_mapping(choices[0].get("message")).get("id"))
    return None


def _usage(raw: Any) -> Usage | None:
    """Inspect ``ModelUsage`` as :class:`Usage` (cached tokens taken out of ``input_tokens`` when included)."""
    if not isinstance(raw, Mapping):
        return None
    prompt = as_count(raw.get("input_tokens"))
    output = as_count(raw.get("output_tokens"))
    read = as_count(raw.get("input_tokens_cache_read"))
    write = as_count(raw.get("input_tokens_cache_write"))
    total = optional_count(raw.get("total_tokens"))
    if (read or write) and total == prompt + output:
        prompt = max(prompt - read - write, 0)
    return Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=read, cache_write_tokens=write,
                 cache_write_5m_tokens=write)


def _tools(raw: Any) -> list[ToolSchema]:
    out = []
    for tool in raw if isinstance(raw, list) else []:
        if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
            params = tool.get("parameters")
            out.append(ToolSchema(tool["name"], as_text(tool.get("description")) or "",
                                  dict(params) if isinstance(params, Mapping) else {}))
    return out


def _messages_from_events(events: list[Mapping[str, Any]]) -> list[Any]:
    """The last model call's input plus its output message (for samples logged without ``messages``)."""
    for event in reversed(events):
        if event.get("event") == "model" and isinstance(event.get("input"), list):
            choices = as_mapping(event.get("output")).get("choices")
            reply = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(
                choices[0], Mapping) else None
            return [*event["input"], *([reply] if isinstance(reply, Mapping) else [])]
    return []


# ------------------------------------------------------------------------------------------------- documents
def _is_sample(value: Any) -> bool:
    return isinstance(value, Mapping) and "epoch" in value and "id" in value and (
        "messages" in value or "events" in value)


def _archive(doc: Document) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(doc.raw or b""))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise LoadError(doc.path, f"not a valid .eval (zip) archive: {exc}") from None


def _sample_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [i for i in archive.infolist()
            if i.filename.startswith("samples/") and i.filename.endswith(".json") and not i.is_dir()]


def _archive_samples(doc: Document, warnings: list[LoadWarning]) -> Iterator[Mapping[str, Any]]:
    """The samples of a ``.eval`` archive; an unreadable member costs only itself."""
    with _archive(doc) as archive:
        members = _sample_members(archive)
        budget = MAX_ARCHIVE_BYTES
        for info in members:
            if info.file_size > MAX_MEMBER_BYTES:
                warnings.append(LoadWarning(f"archive member skipped: it declares {info.file_size:,} uncompressed "
                                            f"bytes; at most {MAX_MEMBER_BYTES:,} are read per member (a limit "
                                            "against zip bombs)", field=info.filename))
                continue
            if info.file_size > budget:
                raise LoadError(doc.path, f"archive too large: its samples hold more than {MAX_ARCHIVE_BYTES:,} "
                                "uncompressed bytes (a limit against zip bombs)", field=info.filename)
            budget -= info.file_size
            try:
                with archive.open(info) as member:  # never yields more than the size its header declares
                    data = member.read(info.file_size + 1)
                if len(data) > info.file_size:
                    raise LoadError(doc.path, "archive member larger than its header states", field=info.filename)
                text = data.decode("utf-8")
                del data  # one copy of the member at a time
                value = json.loads(text)
                del text
            # RuntimeError: also unsupported compression; zlib.error: a damaged deflate stream; ValueError: a damaged
            # header (a negative seek) and undecodable text or JSON
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error, RecursionError, RuntimeError) as exc:
                warnings.append(LoadWarning(f"archive member skipped: {exc.__class__.__name__}: {exc}",
                                            field=info.filename))
                continue
            if _is_sample(value):
                yield value
            else:
                warnings.append(LoadWarning("archive member skipped: not an Inspect sample", field=info.filename))


def detect(doc: Document) -> str | None:
    if doc.kind == "zip":
        try:
            archive = _archive(doc)
        except LoadError as exc:
            return exc.reason
        with archive:
            names = archive.namelist()
        if "header.json" in names or any(n.startswith("samples/") for n in names):
            return None
        return "a zip archive without Inspect members (header.json, samples/)"
    if doc.kind != "json":
        return "not a single JSON document"
    value = doc.value
    if _is_sample(value):
        return None
    if isinstance(value, Mapping) and isinstance(value.get("eval"), Mapping) and ("samples" in value or
                                                                                  "status" in value):
        return None
    return "no Inspect EvalLog ('eval' with 'samples') or sample ('id', 'epoch', 'messages')"


def read(doc: Document) -> list[Conversation]:
    warnings: list[LoadWarning] = []
    if doc.kind == "zip":
        samples: list[Any] = list(_archive_samples(doc, warnings))
    elif _is_sample(doc.value):
        samples = [doc.value]
    else:
        raw = doc.value.get("samples")
        if raw is None:
            raise LoadError(doc.path, "this Inspect log holds no samples (it was written with log_samples off)",
                            field="samples")
        if not isinstance(raw, list):
            raise LoadError(doc.path, f"'samples' is {type_name(raw)}, expected a list", field="samples")
        samples = raw
    conversations = []
    for i, sample in enumerate(samples):
        if not isinstance(sample, Mapping):
            warnings.append(LoadWarning(f"sample {i} skipped: expected an object, got {type_name(sample)}",
                                        field="samples"))
            continue
        try:
            conversations.append(_SampleReader(sample, doc.path).conversation())
        except RecursionError:
            warnings.append(LoadWarning(f"sample {i}: {TOO_DEEP}", field="samples"))
    if not conversations:
        reasons = "; ".join(w.message for w in warnings[:3]) or "the log has no samples"
        raise LoadError(doc.path, f"no readable sample in this Inspect log ({reasons})", field="samples")
    # file-level warnings (skipped samples or archive members) go with the first conversation, once
    first = conversations[0]
    conversations[0] = replace(first, source=replace(first.source, warnings=(*warnings, *first.source.warnings)))
    return conversations


register_format(
    FormatInfo(
        name="inspect-ai",
        title="Inspect AI log",
        detect=detect,
        read=read,
        extensions=(".json", ".eval"),
        description="Inspect AI eval logs (.eval archives and .json EvalLogs): one conversation per sample and "
        "epoch, usage from model events, compaction events and summaries.",
        reads="Every sample and epoch as one conversation: its messages (or the last model event's input and output "
        "when it has none), tool calls and results with their errors, attachment:// references resolved, usage per "
        "LLM call and the tool schemas from the model events, and compaction events with their summaries.",
        leaves_out="Scores, sample metadata and the other events (tool, sandbox, state, score…), which do not change "
        "what the model was sent; in .eval archives, a member over 64 MB is skipped and an archive over 256 MB "
        "uncompressed refused (limits against zip bombs).",
    )
)
