"""``api_conversation_history.json`` of Cline and Roo Code as messages: Anthropic ``MessageParam`` blocks (read by
the Anthropic reader's block reader), with the tool results these agents send as user *text* turned into tool
results of the call they answer.

* Assistant messages: blocks as in the Messages API, plus Roo's ``reasoning`` blocks (plain or encrypted reasoning,
  kept as reasoning) and ``thoughtSignature`` blocks (a provider signature, not content: dropped). Without native
  ``tool_use`` blocks, the XML calls of the text become tool calls (ids ``xml-<message>-<n>``) and the text keeps
  what surrounds them. Roo's older standalone ``{"type": "reasoning"}`` entries join the next assistant message.
* User messages, block by block in order: ``tool_result`` blocks are results by id; a result header opens the
  result of the open call it names (else the first open call) of the assistant message just before, its content
  inline or in the blocks that follow (one text block, then images, documents and further text until user text:
  environment details, feedback, another header); a not-run notice is that call's (error) result. A message with
  no header whose only open call has a screenshot before the environment details is that call's result (Cline
  pushes image results of id-less calls without a header). Everything else stays a user message after the tool
  messages, as the Anthropic reader orders them.
* Roo's tags are kept in ``meta`` (``condense_parent``, ``truncation_parent``); its summaries (``isSummary``) and
  truncation markers (``isTruncationMarker``) are the log's own compaction messages (``summaries``; an
  assistant-role summary of older versions is marked ``generated: False``: not an LLM call of this run). Inserted
  among the kept messages, they may sit between a call and its result: results still answer the call before them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import File
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ToolCall
from ..conversation import ToolResult
from ._cline_text import XML_TOOL_NAMES
from ._cline_text import is_environment_details
from ._cline_text import is_user_text
from ._cline_text import not_run_notice
from ._cline_text import reports_failure
from ._cline_text import result_header
from ._cline_text import split_xml_calls
from ._fields import TOO_DEEP
from ._fields import as_mapping
from ._fields import as_text
from ._fields import type_name
from ._parts import Parts
from .anthropic_messages import file_of
from .anthropic_messages import image_of
from .anthropic_messages import messages_of
from .anthropic_messages import read_block

#: Roo Code's per-message compaction tags (``ApiMessage``)
ROO_TAGS = ("isSummary", "condenseId", "condenseParent", "truncationParent", "isTruncationMarker", "truncationId")
ENCRYPTED_REASONING = "[encrypted reasoning]"
_ROLES = ("user", "assistant")


@dataclass
class SourceMessage:
    """What later steps need to know of one entry of the history file."""

    index: int
    role: str | None
    ts: int | None
    raw: Mapping[str, Any]
    #: index of its first loaded message and how many it became (0 when skipped)
    start: int = 0
    count: int = 0

    @property
    def tags(self) -> Mapping[str, Any]:
        return {k: self.raw[k] for k in ROO_TAGS if k in self.raw}


@dataclass
class History:
    """The loaded messages and how they relate to the entries of the file."""

    messages: list[Message] = field(default_factory=list)
    sources: list[SourceMessage] = field(default_factory=list)
    #: loaded indices of the log's own compaction messages (Roo summaries and truncation markers)
    summaries: set[int] = field(default_factory=set)
    warnings: list[LoadWarning] = field(default_factory=list)
    #: (entry index, block index) -> id of the call whose result that block holds
    result_blocks: dict[tuple[int, int], str] = field(default_factory=dict)
    calls: dict[str, ToolCall] = field(default_factory=dict)

    def assistant_index(self, source: int) -> int | None:
        """The loaded index of entry ``source``'s assistant message, if it has one."""
        entry = self.sources[source]
        if entry.role == "assistant" and entry.count:
            return entry.start
        return None

    def start_of(self, source: int) -> int:
        """The loaded index where entry ``source`` begins (the end of the conversation past the last entry)."""
        if source >= len(self.sources):
            return len(self.messages)
        return self.sources[source].start


def read_history(raw_messages: list[Any]) -> History:
    """Read every entry of the history; a malformed entry or block costs only itself, with a warning."""
    reader = _Reader(_answered_names(raw_messages))
    for i, raw in enumerate(raw_messages):
        try:
            reader.add(i, raw)
        except RecursionError:
            reader.history.warnings.append(LoadWarning(f"message {i}: {TOO_DEEP}", field="content"))
    return reader.finish()


def _answered_names(raw_messages: list[Any]) -> frozenset[str]:
    """Tool names that open an XML call: the known ones and those named by this log's result headers."""
    names = set(XML_TOOL_NAMES)
    for raw in raw_messages:
        if isinstance(raw, Mapping) and raw.get("role") == "user":
            for text in _texts(raw.get("content")):
                header = result_header(text)
                if header is not None and header.name:
                    names.add(header.name)
    return frozenset(names)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    return []


def _blocks(content: Any) -> list[Any] | None:
    """A message's content as a list of blocks (text becomes one text block); None when it is neither."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return content
    return None


def _ts(raw: Mapping[str, Any]) -> int | None:
    value = raw.get("ts")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


@dataclass
class _OpenResult:
    """A text result being collected from the blocks after its header."""

    call: ToolCall
    blocks: list[int]
    pieces: list[str | Image | File]
    error: bool
    #: the header stood alone: the content follows in the next blocks
    takes_blocks: bool
    texts_taken: int = 0


class _Reader:
    def __init__(self, xml_names: frozenset[str]) -> None:
        self.history = History()
        self.xml_names = xml_names
        self.pending: list[ToolCall] = []  # calls of the last assistant message still unanswered
        self.reasoning: list[str] = []  # standalone reasoning entries waiting for their assistant message

    def add(self, i: int, raw: Any) -> None:
        history = self.history
        where = f"message {i}"
        if not isinstance(raw, Mapping):
            history.sources.append(SourceMessage(i, None, None, {}, len(history.messages)))
            history.warnings.append(LoadWarning(f"{where}: skipped, expected a message object, got {type_name(raw)}",
                                                field="role"))
            return
        role = raw.get("role")
        entry = SourceMessage(i, role if role in _ROLES else None, _ts(raw), raw, len(history.messages))
        history.sources.append(entry)
        if role not in _ROLES:
            if raw.get("type") == "reasoning":
                self.reasoning += _reasoning_of(raw)
                return
            history.warnings.append(LoadWarning(f"{where}: skipped, expected role user or assistant, got {role!r}",
                                                field="role"))
            return
        inserted = raw.get("isSummary") is True or raw.get("isTruncationMarker") is True
        pending = self.pending
        blocks = _blocks(raw.get("content"))
        if blocks is None:
            history.warnings.append(LoadWarning(f"{where}: content is {type_name(raw.get('content'))}, expected text or "
                                                "a list of blocks; skipped", field="content"))
            made: list[Message] = []
        elif role == "assistant":
            made = self._assistant(i, raw, blocks)
        else:
            made = self._user(i, raw, blocks)
        start = len(history.messages)
        if inserted:  # inserted by the agent's compaction (maybe between a call and its result): not a turn
            history.summaries.update(range(start, start + len(made)))
            self.pending = pending
        entry.start, entry.count = start, len(made)
        history.messages += made

    # -------------------------------------------------------------------------------------------- assistant
    def _assistant(self, i: int, raw: Mapping[str, Any], blocks: list[Any]) -> list[Message]:
        where = f"message {i}"
        parts = Parts(reasoning=self.reasoning)
        self.reasoning = []
        for j, block in enumerate(blocks):
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "reasoning":
                parts.reasoning += _reasoning_of(block)
            elif kind != "thoughtSignature":
                read_block(block, f"{where}, block {j}", parts, self.history.calls, self.history.warnings)
        if not parts.tool_calls and parts.texts:
            self._xml_calls(i, parts)
        self.pending = list(parts.tool_calls)
        meta = _meta(raw)
        model = as_mapping(raw.get("modelInfo"))
        if isinstance(model.get("modelId"), str):
            meta["model"] = model["modelId"]
        if raw.get("isSummary") is True:
            meta["generated"] = False  # written by Roo's condense call, not an output of this run's model
        return messages_of("assistant", parts, meta, where, self.history.warnings)

    def _xml_calls(self, i: int, parts: Parts) -> None:
        texts: list[str] = []
        for text in parts.texts:
            segments, calls = split_xml_calls(text, self.xml_names)
            texts += segments
            for call in calls:
                call_id = f"xml-{i}-{len(parts.tool_calls)}"
                tool_call = ToolCall(call_id, call.name, call.params)
                parts.tool_calls.append(tool_call)
                self.history.calls[call_id] = tool_call
        if parts.tool_calls:
            parts.texts = texts

    # -------------------------------------------------------------------------------------------- user
    def _user(self, i: int, raw: Mapping[str, Any], blocks: list[Any]) -> list[Message]:
        where = f"message {i}"
        history = self.history
        parts = Parts()
        current = self._screenshot_result(blocks)
        for j, block in enumerate(blocks):
            if not isinstance(block, Mapping):
                self._close(i, current, parts)
                current = None
                read_block(block, f"{where}, block {j}", parts, history.calls, history.warnings)
                continue
            kind = block.get("type")
            text = block.get("text") if kind == "text" else None
            if isinstance(text, str):
                current = self._text(i, j, text, current, parts)
            elif kind in ("image", "document") and current is not None:
                current.pieces.append(image_of(block) if kind == "image" else file_of(block))
                current.blocks.append(j)
            else:
                self._close(i, current, parts)
                current = None
                before = len(parts.results)
                read_block(block, f"{where}, block {j}", parts, history.calls, history.warnings)
                for k in range(before, len(parts.results)):
                    result = parts.results[k] = _with_failure(parts.results[k])
                    self._answered(result.origin)
                    if result.call_id:
                        history.result_blocks[(i, j)] = result.call_id
        self._close(i, current, parts)
        self.pending = []
        meta = _meta(raw)
        if raw.get("isSummary") is True:
            meta["log_compaction_summary"] = True
        if raw.get("isTruncationMarker") is True:
            meta["log_truncation_marker"] = True
        return messages_of("user", parts, meta, where, history.warnings)

    def _text(self, i: int, j: int, text: str, current: _OpenResult | None, parts: Parts) -> _OpenResult | None:
        header = result_header(text) if self.pending else None
        notice = not_run_notice(text) if self.pending and header is None else None
        if header is not None:
            self._close(i, current, parts)
            opened = _OpenResult(self._take(header.name), [j], [text], reports_failure(header.rest),
                                 takes_blocks=not header.rest)
            if opened.takes_blocks:
                return opened
            self._close(i, opened, parts)
            return None
        if notice is not None:
            self._close(i, current, parts)
            self._close(i, _OpenResult(self._take(notice), [j], [text], True, takes_blocks=False), parts)
            return None
        if current is not None and not is_environment_details(text) and (
                current.texts_taken == 0 or not _ends_result(text)):
            if current.texts_taken == 0 and reports_failure(text):
                current.error = True
            current.pieces.append(text)
            current.blocks.append(j)
            current.texts_taken += 1
            return current
        self._close(i, current, parts)
        parts.texts.append(text)
        return None

    def _screenshot_result(self, blocks: list[Any]) -> _OpenResult | None:
        """The result Cline pushes without a header (an id-less call's text and images), when this is one."""
        if len(self.pending) != 1:
            return None
        for block in blocks:
            if not isinstance(block, Mapping):
                return None
            kind = block.get("type")
            text = block.get("text") if kind == "text" else None
            if kind == "tool_result" or (isinstance(text, str) and _ends_result(text)):
                return None
            if kind == "image":
                return _OpenResult(self._take(None), [], [], False, takes_blocks=True)
        return None

    def _take(self, name: str | None) -> ToolCall:
        """The open call a result answers: the first with ``name``, else the first."""
        chosen = next((c for c in self.pending if c.name == name), self.pending[0])
        self._answered(chosen)
        return chosen

    def _answered(self, call: ToolCall) -> None:
        self.pending = [c for c in self.pending if c is not call]

    def _close(self, i: int, current: _OpenResult | None, parts: Parts) -> None:
        if current is None:
            return None
        value = _result_value(current.pieces)
        parts.results.append(ToolResult(current.call, value, current.error))
        for j in current.blocks:
            if current.call.id:
                self.history.result_blocks[(i, j)] = current.call.id
        return None

    def finish(self) -> History:
        if self.reasoning:
            self.history.warnings.append(LoadWarning("reasoning entries after the last assistant message skipped",
                                                     field="type"))
        return self.history


def _result_value(pieces: list[str | Image | File]) -> str | tuple[str | Image | File, ...]:
    """A text result's blocks: text blocks joined by newlines, images and documents kept as parts between them."""
    parts: list[str | Image | File] = []
    for piece in pieces:
        if isinstance(piece, str) and parts and isinstance(parts[-1], str):
            parts[-1] = f"{parts[-1]}\n{piece}"
        else:
            parts.append(piece)
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 and isinstance(parts[0], str) else tuple(parts)


def _with_failure(result: ToolResult) -> ToolResult:
    """A ``tool_result`` block's result, an error also when its text reports one (Cline never sets ``is_error``;
    Roo's results are JSON ``{"status": "error" | "denied", …}``)."""
    if result.error:
        return result
    text = result.text
    header = result_header(text)
    return ToolResult(result.origin, result.result, True) if reports_failure(
        header.rest if header is not None else text) else result


def _ends_result(text: str) -> bool:
    """User text (environment details, feedback…), a header or a notice: never the content of an open result."""
    return is_user_text(text) or result_header(text) is not None or not_run_notice(text) is not None



def _reasoning_of(block: Mapping[str, Any]) -> list[str]:
    """The reasoning a Roo ``reasoning`` block or entry holds: its text, its summary texts, or a placeholder for an
    encrypted one."""
    text = as_text(block.get("text"))
    if text:
        return [text]
    summary = block.get("summary")
    texts = [s["text"] for s in summary if isinstance(s, Mapping) and isinstance(s.get("text"), str)] \
        if isinstance(summary, list) else []
    if texts:
        return ["\n".join(texts)]
    return [ENCRYPTED_REASONING] if block.get("encrypted_content") else []


def _meta(raw: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    ts = _ts(raw)
    if ts is not None:
        meta["ts"] = ts
    for key, name in (("condenseParent", "condense_parent"), ("truncationParent", "truncation_parent"),
                      ("condenseId", "condense_id"), ("truncationId", "truncation_id")):
        if isinstance(raw.get(key), str):
            meta[name] = raw[key]
    return meta


