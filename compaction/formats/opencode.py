"""OpenCode sessions (sst/opencode): ``opencode export <sessionID>`` JSON, and OpenCode's own store read as a folder.

A session is messages, each ``{info, parts}``. How they become the messages OpenCode sent (its ``toModelMessages``
and the AI SDK's ``convertToModelMessages``):

* user messages: ``text`` parts that are not ``ignored`` (``synthetic`` ones too: file contents OpenCode inlined),
  ``file`` parts other than ``text/plain`` and directories (those were inlined as text) as images or files, a
  ``compaction`` part as the text ``What did we do so far?``, a ``subtask`` part as ``The following tool was
  executed by the user``; other parts (``agent`` mentions…) are not sent.
* assistant messages: each step (``step-start`` … ``step-finish``) is one LLM call: its ``text`` and ``reasoning``
  parts and ``tool`` parts as calls, then one tool message per ``tool`` part: the output of a ``completed`` call,
  ``state.error`` for an ``error`` (or ``metadata.output`` when it was interrupted), ``[Tool execution was
  interrupted]`` for one still ``pending``/``running``. Usage per call from the step's ``step-finish.tokens``
  (the message's ``tokens`` when it has one step): ``input`` (uncached), ``cache.read``, ``cache.write``, and
  ``output`` plus ``reasoning`` where ``tokens.total`` shows ``output`` leaves reasoning out. A message that ended
  in an error is not sent again (unless aborted after producing content): skipped with a warning.
* OpenCode's pruning: a tool output with ``state.time.compacted`` was sent as ``[Old tool result content cleared]``
  from then on. The tool message keeps the output (the uncompacted baseline); a ``microcompact``
  :class:`LogEvent` before the first message created after the pruning lists the cleared call ids.
* compaction: the user message with a ``compaction`` part (``auto`` → trigger) and the ``summary: true`` assistant
  message answering it are the log's own compaction: a ``compaction`` :class:`LogEvent` (its summary, and as
  ``pre_tokens`` the context of the call before it), both messages in ``log_summary_indices`` (replays leave them
  out by default). With ``tail_start_id`` OpenCode kept the messages from that one on verbatim after the summary.

The system prompt and tool schemas are built by OpenCode at each call and not stored: not in the conversation.
``Source.model`` is the model most calls used, ``agent_version`` the session's ``version``, and a subagent session
(``parentID``) is linked to its parent and, when both are read together, to the ``task`` call that started it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

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
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_count
from ._fields import as_mapping
from ._fields import as_text
from ._fields import optional_count
from ._fields import type_name
from ._opencode_storage import SessionRecord
from ._opencode_storage import read_store
from ._transcript import Transcript
from .base import Document
from .base import FormatInfo
from .base import register_format

#: what OpenCode sends in place of a pruned tool output, a compaction request, a subtask and an unfinished call
CLEARED = "[Old tool result content cleared]"
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_TEXT = "The following tool was executed by the user"
INTERRUPTED = "[Tool execution was interrupted]"
#: file parts OpenCode inlines as synthetic text parts instead of sending
INLINED_MIMES = frozenset({"text/plain", "application/x-directory"})
ABORTED = "MessageAbortedError"


@dataclass
class _Builder(Transcript):
    """The messages of one session as they are read."""

    #: (compacted timestamp, call id) of every pruned tool output
    cleared: list[tuple[float, str]] = field(default_factory=list)
    #: message id -> index of the compaction request (user message with a compaction part)
    compaction_requests: dict[str, int] = field(default_factory=dict)
    created: list[float | None] = field(default_factory=list)  # per message, for placing pruning events
    errors: int = 0

    def add(self, message: Message, created: float | None = None) -> int:
        self.created.append(created)
        return super().add(message)


def convert(record: SessionRecord, path: str | None) -> Conversation:
    """One OpenCode session as a :class:`Conversation`."""
    builder = _Builder(warnings=list(record.warnings))
    for position, entry in enumerate(record.messages):
        where = f"messages[{position}]"
        if not isinstance(entry, Mapping):
            builder.warnings.append(LoadWarning(f"{where} skipped: expected an object, got {type_name(entry)}",
                                                field=where))
            continue
        info, parts = entry.get("info"), entry.get("parts")
        if not isinstance(info, Mapping) or not isinstance(parts, list):
            builder.warnings.append(LoadWarning(f"{where} skipped: expected 'info' (object) and 'parts' (array)",
                                                field=where))
            continue
        role = info.get("role")
        if role == "user":
            _user(builder, info, parts, where)
        elif role == "assistant":
            _assistant(builder, info, parts, where)
        else:
            builder.warnings.append(LoadWarning(f"{where} skipped: info.role is {role!r}, expected 'user' or "
                                                "'assistant'", field=f"{where}.info.role"))
    if builder.errors:
        plural = "s" if builder.errors > 1 else ""
        builder.warnings.append(LoadWarning(f"{builder.errors} assistant message{plural} that ended in an error "
                                            "skipped: OpenCode does not send them again", field="info.error"))
    events = sorted([*builder.events, *_pruning_events(builder)], key=lambda e: e.message_index)
    info = record.info
    meta = {key: info[key] for key in ("title", "directory", "agent") if isinstance(info.get(key), str)}
    source = Source("opencode", path, record.id, (*builder.warnings, *structural_warnings(builder.messages)),
                    model=builder.model, agent_version=as_text(info.get("version")),
                    parent=as_text(info.get("parentID")), parent_call_id=record.parent_call_id, meta=meta)
    return Conversation(tuple(builder.messages), (), source, usage=builder.usage, events=tuple(events),
                        log_summary_indices=frozenset(builder.summaries))


def _created(info: Mapping[str, Any]) -> float | None:
    value = as_mapping(info.get("time")).get("created")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _meta(info: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if isinstance(info.get("id"), str):
        meta["message_id"] = info["id"]
    created = _created(info)
    if created is not None:
        meta["timestamp"] = created
    return meta


def _parts(parts: list[Any], where: str, builder: _Builder) -> list[Mapping[str, Any]]:
    good = []
    for index, part in enumerate(parts):
        if isinstance(part, Mapping) and isinstance(part.get("type"), str):
            good.append(part)
        else:
            builder.warnings.append(LoadWarning(f"{where}.parts[{index}] skipped: expected a part object with a "
                                                "'type'", field=f"{where}.parts[{index}]"))
    return good


# ------------------------------------------------------------------------------------------------------ user
def _user(builder: _Builder, info: Mapping[str, Any], parts: list[Any], where: str) -> None:
    texts: list[str] = []
    images: list[Image] = []
    files: list[File] = []
    compaction: Mapping[str, Any] | None = None
    synthetic = True
    for part in _parts(parts, where, builder):
        kind = part["type"]
        if kind == "text" and part.get("ignored") is not True:
            texts.append(as_text(part.get("text")) or "")
            synthetic = synthetic and part.get("synthetic") is True
        elif kind == "file":
            _file(part, images, files)
        elif kind == "compaction":
            texts.append(COMPACTION_PROMPT)
            compaction = part
        elif kind == "subtask":
            texts.append(SUBTASK_TEXT)
    if not (texts or images or files):
        return
    meta = _meta(info)
    if synthetic and texts and compaction is None:
        meta["synthetic"] = True  # e.g. OpenCode's "Continue if you have next steps" after an automatic compaction
    index = builder.add(Message("user", tuple(texts), images=tuple(images), files=tuple(files), meta=meta),
                        _created(info))
    if compaction is not None:
        builder.summaries.add(index)
        if isinstance(info.get("id"), str):
            builder.compaction_requests[info["id"]] = index
        builder.events.append(LogEvent(index, "compaction", "auto" if compaction.get("auto") is True else "manual",
                                       pre_tokens=_last_context(builder)))


def _file(part: Mapping[str, Any], images: list[Image], files: list[File]) -> None:
    mime = as_text(part.get("mime")) or ""
    if mime in INLINED_MIMES:
        return
    url = as_text(part.get("url")) or ""
    source = "base64" if url.startswith("data:") else (url or None)
    if mime.startswith("image/"):
        images.append(Image(mime, source=source))
    else:
        files.append(File(as_text(part.get("filename")), mime or None))


def _last_context(builder: _Builder) -> int | None:
    """The context of the latest call (what OpenCode measures against the model's limit), if reported."""
    for index in range(len(builder.messages) - 1, -1, -1):
        usage = builder.usage.get(index)
        if usage is not None:
            return usage.prompt_tokens + usage.output_tokens
    return None


# ------------------------------------------------------------------------------------------------- assistant
def _assistant(builder: _Builder, info: Mapping[str, Any], parts: list[Any], where: str) -> None:
    good = _parts(parts, where, builder)
    error = info.get("error")
    if error is not None:
        aborted = isinstance(error, Mapping) and error.get("name") == ABORTED
        if not (aborted and any(p["type"] not in ("step-start", "reasoning") for p in good)):
            builder.errors += 1
            return
    steps = _steps(good)
    summary = info.get("summary") is True
    model = as_text(info.get("modelID"))
    if model and not summary:
        builder.models[model] += 1
    first = len(builder.messages)
    for number, step in enumerate(steps):
        tokens = step.finish.get("tokens") if step.finish is not None else None
        if tokens is None and len(steps) == 1:
            tokens = info.get("tokens")
        _step(builder, info, step, tokens, f"{where}.parts", number if len(steps) > 1 else None, model)
    if summary and len(builder.messages) > first:
        _summary(builder, info, first)


@dataclass
class _Step:
    parts: list[Mapping[str, Any]] = field(default_factory=list)
    finish: Mapping[str, Any] | None = None


def _steps(parts: Sequence[Mapping[str, Any]]) -> list[_Step]:
    """The parts of one assistant message cut at each ``step-start`` (one model call each, as the AI SDK splits an
    assistant message into model messages)."""
    steps = [_Step()]
    for part in parts:
        if part["type"] == "step-start":
            if steps[-1].parts or steps[-1].finish is not None:
                steps.append(_Step())
        elif part["type"] == "step-finish":
            steps[-1].finish = part
        else:
            steps[-1].parts.append(part)
    return steps


def _step(builder: _Builder, info: Mapping[str, Any], step: _Step, tokens: Any, where: str, number: int | None,
          model: str | None) -> None:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[ToolCall, Mapping[str, Any]]] = []
    for part in step.parts:
        kind = part["type"]
        if kind == "text" and part.get("ignored") is not True:
            text = as_text(part.get("text"))
            if text:
                texts.append(text)
        elif kind == "reasoning":
            text = as_text(part.get("text"))
            if text:
                reasoning.append(text)
        elif kind == "tool":
            call = _tool_call(part)
            if call is None:
                builder.warnings.append(LoadWarning(f"{where}: tool part without a 'tool' name skipped",
                                                    field=f"{where}.tool"))
            else:
                calls.append((call, part))
    if not (texts or reasoning or calls):
        return
    meta = _meta(info)
    if model:
        meta["model"] = model
    if number is not None:
        meta["step"] = number
    if isinstance(info.get("finish"), str):
        meta["finish"] = info["finish"]
    if info.get("summary") is True:
        meta["log_compaction_summary"] = True
    created = _created(info)
    index = builder.add(Message("assistant", tuple(texts), tuple(c for c, _ in calls), reasoning=tuple(reasoning),
                                meta=meta), created)
    usage = _usage(tokens)
    if usage is not None:
        builder.usage[index] = usage
    for call, part in calls:
        builder.add(_tool_message(call, part, builder), created)


def _tool_call(part: Mapping[str, Any]) -> ToolCall | None:
    name = as_text(part.get("tool"))
    if not name:
        return None
    state = as_mapping(part.get("state"))
    arguments = state.get("input")
    return ToolCall(as_text(part.get("callID")), name, dict(arguments) if isinstance(arguments, Mapping) else {})


def _tool_message(call: ToolCall, part: Mapping[str, Any], builder: _Builder) -> Message:
    state = as_mapping(part.get("state"))
    status = state.get("status")
    metadata = as_mapping(state.get("metadata"))
    times = as_mapping(state.get("time"))
    meta: dict[str, Any] = {"status": status} if isinstance(status, str) else {}
    if isinstance(state.get("title"), str):
        meta["title"] = state["title"]
    error = False
    result: str | tuple[ResultPart, ...]
    if status == "completed":
        result = as_text(state.get("output")) or ""
        compacted = times.get("compacted")
        if isinstance(compacted, (int, float)) and not isinstance(compacted, bool):
            meta["cleared_at"] = compacted
            meta["sent_as"] = CLEARED
            if call.id:
                builder.cleared.append((float(compacted), call.id))
        else:
            result = _with_attachments(result, state.get("attachments"))
    elif status == "error":
        interrupted = metadata.get("interrupted") is True and isinstance(metadata.get("output"), str)
        result = metadata["output"] if interrupted else (as_text(state.get("error")) or "")
        error = not interrupted
    else:
        result, error = INTERRUPTED, True
    return Message("tool", tool_result=ToolResult(call, result, error), meta=meta)


def _with_attachments(output: str, attachments: Any) -> str | tuple[ResultPart, ...]:
    if not isinstance(attachments, list) or not attachments:
        return output
    images: list[Image] = []
    files: list[File] = []
    for attachment in attachments:
        if isinstance(attachment, Mapping):
            _file(attachment, images, files)
    extra: list[ResultPart] = [*images, *files]
    return (output, *extra) if extra else output


def _usage(tokens: Any) -> Usage | None:
    if not isinstance(tokens, Mapping):
        return None
    cache = as_mapping(tokens.get("cache"))
    values = [optional_count(tokens.get(k)) for k in ("input", "output")]
    if all(v is None for v in values):
        return None
    uncached, output = (as_count(v) for v in values)
    read, write = as_count(cache.get("read")), as_count(cache.get("write"))
    reasoning = as_count(tokens.get("reasoning"))
    total = optional_count(tokens.get("total"))
    if reasoning and total == uncached + read + write + output + reasoning:
        output += reasoning  # this version reports output without the reasoning it also bills as output
    return Usage(input_tokens=uncached, output_tokens=output, cache_read_tokens=read, cache_write_tokens=write)


def _summary(builder: _Builder, info: Mapping[str, Any], first: int) -> None:
    """The ``summary: true`` assistant message at ``first``…: the log's own compaction summary."""
    indices = range(first, len(builder.messages))
    builder.summaries.update(indices)
    text = "\n".join(builder.messages[i].text for i in indices if builder.messages[i].role == "assistant")
    request = builder.compaction_requests.get(as_text(info.get("parentID")) or "")
    for position, event in enumerate(builder.events):
        if event.kind == "compaction" and event.message_index == request:
            builder.events[position] = LogEvent(event.message_index, "compaction", event.trigger, event.pre_tokens,
                                                summary=text)
            return
    builder.events.append(LogEvent(first, "compaction", summary=text))
    builder.warnings.append(LoadWarning(f"message {first}: compaction summary without its compaction request",
                                        field="info.parentID"))


def _pruning_events(builder: _Builder) -> list[LogEvent]:
    """One ``microcompact`` event per point where pruned outputs first went out cleared: before the first message
    created after the pruning (at the end when none was)."""
    grouped: dict[int, list[str]] = {}
    for when, call_id in builder.cleared:
        at = next((i for i, created in enumerate(builder.created) if created is not None and created > when),
                  len(builder.messages))
        grouped.setdefault(at, []).append(call_id)
    return [LogEvent(at, "microcompact", cleared=tuple(ids)) for at, ids in sorted(grouped.items())]


# ------------------------------------------------------------------------------------------------ the format
def read(doc: Document) -> list[Conversation]:
    value = doc.value
    info = value.get("info")
    messages = value.get("messages")
    if not isinstance(info, Mapping) or not isinstance(messages, list):
        raise LoadError(doc.path, "expected 'info' (object) and 'messages' (array) of an OpenCode export",
                        field="messages")
    ident = as_text(info.get("id")) or "0"
    return [convert(SessionRecord(ident, info, messages), doc.path)]


def read_folder(folder: Path) -> list[Conversation] | None:
    """The sessions of an OpenCode store: its data folder (``opencode.db`` and/or ``storage/``), the ``storage``
    folder, or one session's ``storage/message/<sessionID>`` folder; None when the folder is none of these."""
    records = read_store(folder)
    if records is None:
        return None
    return [convert(record, record.path) for record in records]


def detect(doc: Document) -> str | None:
    if doc.kind != "json" or not isinstance(doc.value, Mapping):
        return "not a JSON object"
    info, messages = doc.value.get("info"), doc.value.get("messages")
    if not isinstance(info, Mapping) or not isinstance(messages, list):
        return "no 'info' object with a 'messages' array"
    for entry in messages[:20]:
        if (isinstance(entry, Mapping) and isinstance(entry.get("parts"), list)
                and as_mapping(entry.get("info")).get("role") in ("user", "assistant")):
            return None
    if not messages and str(info.get("id", "")).startswith("ses"):
        return None
    return "no messages of the form {info: {role}, parts: [...]}"


register_format(
    FormatInfo(
        name="opencode",
        title="OpenCode session",
        detect=detect,
        read=read,
        read_folder=read_folder,
        description="OpenCode sessions: `opencode export` JSON, or its store as a folder (opencode.db, or the "
        "storage/ JSON files of older versions): one LLM call per step, pruned tool outputs and compactions as "
        "log events.",
        reads="`opencode export <sessionID>` JSON, and OpenCode's store given as a folder: the data folder "
        "(`~/.local/share/opencode`, with `opencode.db` of current versions or the `storage/` JSON files of older "
        "ones), the `storage` folder, or one session's `storage/message/<sessionID>` folder. Each step of an "
        "assistant message is one LLM call with its text, reasoning and tool calls, followed by the tool results; "
        "user text (synthetic inlined files too), images and files; usage per step (uncached input, cache reads "
        "and writes, output with reasoning); model, version, subagent sessions linked to their `task` call; "
        "pruned outputs (`time.compacted`, sent as `[Old tool result content cleared]`) as microcompact events "
        "listing the cleared calls; compactions (`compaction` part + `summary` message) as log compactions with "
        "their summary.",
        leaves_out="The system prompt and tool schemas (OpenCode rebuilds them for every call and stores neither); "
        "messages that ended in an error (OpenCode does not send them again); UI-only parts (`step-start` markers, "
        "`patch`, `snapshot`, `agent` mentions, `retry`); the titles OpenCode's small model generates (not part "
        "of the session). Pruned outputs keep their original text, so replays start from the uncompacted run.",
    )
)
