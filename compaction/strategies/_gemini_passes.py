"""Gemini CLI's history passes over our stored history, as ``packages/core/src/context/*`` runs them (agents.md
§1.1–1.2): the reverse token budget on function responses and the split point of ``chatCompressionService.ts``,
and the backward scan and masking of ``toolOutputMaskingService.ts``.

The passes see the stored history the way ``GeminiChat`` holds it (:class:`ChatView`): system messages are the
``systemInstruction``, not history; the messages after the model's last response are the pending request, which
Gemini CLI appends only after compressing and masking; the rest is the history, as contents
(:mod:`compaction.gemini_contents`). Texts are measured and cut in UTF-16 code units, as JavaScript does.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..conversation import ToolResult
from ..errors import ConfigError
from ..gemini_contents import RESPONSE_KEY
from ..gemini_contents import Span
from ..gemini_contents import message_parts
from ..gemini_contents import response_key
from ..gemini_contents import result_media
from ..gemini_contents import result_text
from ..gemini_contents import spans
from ..gemini_counter import GeminiCliCounter
from ..gemini_counter import estimate_text
from ..history import Entry
from ..js_text import js_locale_int
from ..js_text import js_slice
from ..js_text import js_stringify
from ..js_text import js_trim
from ..js_text import utf16_len
from ..tokens import _IdCache

#: COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET
FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000
#: COMPRESSION_PRESERVE_THRESHOLD: the newest 30% of the history's characters are kept
PRESERVE_THRESHOLD = 0.3
MASKING_TAG = "tool_output_masked"
TOOL_OUTPUTS_DIR = "tool-outputs"
SHELL_TOOL_NAME = "run_shell_command"
#: tools whose outputs masking never touches (activate-skill, ask-user, enter/exit plan mode)
EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})
_SHELL_SECTIONS = re.compile(r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", re.M)
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


# ------------------------------------------------------------------------------------------------ the chat
@dataclass
class ChatView:
    """The stored history as Gemini CLI's chat holds it. Positions index ``entries``."""

    entries: list[Entry]
    #: positions of the history's entries (not system, not the pending request), in order
    history: list[int]
    #: the history's contents: their roles and the span of positions each covers
    turns: list[Span]
    #: positions of the pending request (after the model's last response)
    request: list[int]

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> ChatView:
        """The view of a stored history."""
        chat = [i for i, e in enumerate(entries) if e.message.role != "system"]
        last_model = max((k for k, i in enumerate(chat) if entries[i].message.role == "assistant"), default=-1)
        history, request = chat[: last_model + 1], chat[last_model + 1:]
        turns = [Span(t.role, history[t.start], history[t.end - 1] + 1)
                 for t in spans([entries[i].message for i in history])]
        return cls(list(entries), history, turns, request)

    def turn_positions(self, turn: Span) -> list[int]:
        """The positions of a turn's entries (a system message between them is not part of it)."""
        return [i for i in turn.positions if self.entries[i].message.role != "system"]

    def messages(self, positions: Sequence[int]) -> list[Message]:
        """The messages at ``positions``."""
        return [self.entries[i].message for i in positions]


# ------------------------------------------------------------------------------------------------ split point
@dataclass(frozen=True)
class ContentSize:
    """What ``findCompressSplitPoint`` reads of one content."""

    role: str
    chars: int  # JSON.stringify(content).length
    has_response: bool  # a functionResponse part
    has_call: bool  # a functionCall part


def find_compress_split_point(contents: Sequence[ContentSize], fraction: float) -> int:
    """``findCompressSplitPoint``: the index of the oldest content to keep. Candidates are user contents without
    a function response; the first whose preceding characters reach ``fraction`` of the total wins; with none, all
    of it (when the last content is a model answer without calls) or the last candidate."""
    if fraction <= 0 or fraction >= 1:
        raise ConfigError("Fraction must be between 0 and 1")
    target = sum(c.chars for c in contents) * fraction
    last_split, cumulative = 0, 0
    for i, content in enumerate(contents):
        if content.role == "user" and not content.has_response:
            if cumulative >= target:
                return i
            last_split = i
        cumulative += content.chars
    if contents and contents[-1].role == "model" and not contents[-1].has_call:
        return len(contents)
    return last_split


def content_size(content: Mapping[str, Any]) -> ContentSize:
    """A ``Content`` object's size as the split point reads it."""
    parts = content.get("parts") or []
    return ContentSize(str(content.get("role")), utf16_len(js_stringify(content)),
                       any(p.get("functionResponse") for p in parts), any(p.get("functionCall") for p in parts))


class ContentSizer:
    """Sizes of the contents of a :class:`ChatView`, from per-message part lengths cached by message identity."""

    def __init__(self) -> None:
        self._parts: _IdCache[tuple[int, int]] = _IdCache()  # message -> (characters of its parts' JSON, number of parts)

    def _measure(self, message: Message) -> tuple[int, int]:
        parts = message_parts(message)
        return sum(utf16_len(js_stringify(p)) for p in parts), len(parts)

    def size(self, role: str, messages: Sequence[Message]) -> ContentSize:
        chars = count = 0
        for m in messages:
            c, n = self._parts.get(m, self._measure)
            chars += c
            count += n
        # {"role":"<role>","parts":[<parts joined by commas>]}
        chars += len('{"role":"') + len(role) + len('","parts":[') + max(count - 1, 0) + len("]}")
        return ContentSize(role, chars, any(m.tool_result is not None for m in messages),
                           any(m.tool_calls for m in messages))


# ------------------------------------------------------------------------------------------------ shared edits
def sanitize_filename_part(text: str) -> str:
    """``sanitizeFilenamePart``: everything but ``[a-zA-Z0-9_-]`` becomes ``_``."""
    return _UNSAFE.sub("_", text)


def with_output(message: Message, text: str, **meta: Any) -> Message:
    """A tool message whose response becomes ``{output: text}``, its nested media kept (the CLI spreads the old
    ``functionResponse`` and replaces only ``response``)."""
    result = message.tool_result
    assert result is not None, "with_output needs a tool message"
    media = result_media(result.result)
    body = (text, *media) if media else text
    return replace(message, tool_result=ToolResult(result.origin, body, result.error),
                   meta={**message.meta, RESPONSE_KEY: "output", **meta})


def response_object(message: Message) -> dict[str, str]:
    """A tool message's ``functionResponse.response``."""
    assert message.tool_result is not None
    return {response_key(message): result_text(message.tool_result.result)}


# ------------------------------------------------------------------------------------------------ truncation
def format_truncated_tool_output(content: str, output_file: str, max_chars: int) -> str:
    """``formatTruncatedToolOutput``: the first 20% and the last 80% of ``max_chars`` around a marker."""
    if utf16_len(content) <= max_chars:
        return content
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    head = js_slice(content, 0, head_chars)
    tail = js_slice(content, -tail_chars)  # slice(-0) is the whole text, as in JavaScript
    omitted = utf16_len(content) - head_chars - tail_chars
    return (f"Output too large. Showing first {js_locale_int(head_chars)} and last {js_locale_int(tail_chars)} "
            f"characters. For full output see: {output_file}\n{head}\n\n... [{js_locale_int(omitted)} characters "
            f"omitted] ...\n\n{tail}")


def truncation_file(temp_dir: str, tool_name: str, truncation_id: int) -> str:
    """Where ``saveTruncatedToolOutput`` writes a truncated response during compression (no session folder)."""
    safe_tool = sanitize_filename_part(tool_name).lower()
    safe_id = sanitize_filename_part(str(truncation_id)).lower()
    name = f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"
    return f"{temp_dir}/{TOOL_OUTPUTS_DIR}/{name}"


def truncation_source(message: Message) -> str:
    """The text ``truncateHistoryToBudget`` budgets and cuts: ``response.output`` (or ``content``) when it is a
    string, else the response as indented JSON."""
    response = response_object(message)
    if "output" in response:
        return response["output"]
    return js_stringify(response, 2)


def truncate_to_budget(view: ChatView, max_chars: int, next_id: Callable[[], int], temp_dir: str,
                       budget: int = FUNCTION_RESPONSE_TOKEN_BUDGET) -> dict[int, Message]:
    """``truncateHistoryToBudget``: newest first, function responses are kept while their estimated tokens stay
    within ``budget``; every older one is replaced by its truncated form (its placeholder then counts toward the
    budget). Returns the replaced messages by position."""
    used = 0
    replaced: dict[int, Message] = {}
    for turn in reversed(view.turns):
        for position in reversed(view.turn_positions(turn)):
            message = view.entries[position].message
            if message.tool_result is None:
                continue
            text = truncation_source(message)
            tokens = estimate_text(text)
            if used + tokens > budget:
                path = truncation_file(temp_dir, message.tool_result.tool_name or "unknown_tool", next_id())
                cut = format_truncated_tool_output(text, path, max_chars)
                replaced[position] = with_output(message, cut, gemini_truncated=True)
                used += estimate_text(cut)
            else:
                used += tokens
    return replaced


# ------------------------------------------------------------------------------------------------ masking
@dataclass(frozen=True)
class MaskingSettings:
    """``contextManagement.tools.outputMasking``."""

    protection_threshold_tokens: int = 50_000
    min_prunable_threshold_tokens: int = 30_000
    protect_latest_turn: bool = True


@dataclass(frozen=True)
class Prunable:
    """A function response past the protection window: its position, estimated tokens and saved content."""

    position: int
    tokens: int
    content: str  # JSON.stringify(response, null, 2)


@dataclass(frozen=True)
class Scan:
    """What the backward scan found."""

    prunable: list[Prunable]
    total: int  # totalPrunableTokens

    def due(self, settings: MaskingSettings) -> bool:
        """Whether masking runs (the batch threshold)."""
        return self.total >= settings.min_prunable_threshold_tokens


#: a tool message's saved content (``JSON.stringify(response, null, 2)``) and whether it is masked already, by message
_OUTPUT_CONTENTS: _IdCache[tuple[str, bool]] = _IdCache()


def tool_output_content(message: Message) -> tuple[str, bool]:
    """What ``getToolOutputContent`` saves of a tool message, and whether it holds a ``<tool_output_masked`` text
    (cached: the scan reads every output before every call)."""

    def compute(m: Message) -> tuple[str, bool]:
        content = js_stringify(response_object(m), 2)
        return content, f"<{MASKING_TAG}" in content

    return _OUTPUT_CONTENTS.get(message, compute)


def scan_tool_outputs(view: ChatView, estimator: GeminiCliCounter, settings: MaskingSettings) -> Scan:
    """The backward scan of ``ToolOutputMaskingService.mask``: from the history's second-newest content (its newest,
    when the latest turn is not protected), parts in reverse, function responses of tools that are not exempt and
    not masked yet count toward the protected window; the one that crosses it and every older one are prunable."""
    start = len(view.turns) - 2 if settings.protect_latest_turn else len(view.turns) - 1
    cumulative, total, crossed = 0, 0, False
    prunable: list[Prunable] = []
    for turn in reversed(view.turns[: start + 1] if start >= 0 else []):
        for position in reversed(view.turn_positions(turn)):
            message = view.entries[position].message
            result = message.tool_result
            if result is None or (result.tool_name and result.tool_name in EXEMPT_TOOLS):
                continue
            content, masked = tool_output_content(message)
            if masked:
                continue
            tokens = estimator.quarters(message) // 4
            if not crossed:
                cumulative += tokens
                if cumulative > settings.protection_threshold_tokens:
                    crossed = True
                    total += tokens
                    prunable.append(Prunable(position, tokens, content))
            else:
                total += tokens
                prunable.append(Prunable(position, tokens, content))
    return Scan(prunable, total)


def simple_preview(content: str) -> str:
    """``formatSimplePreview``: the first and last 10 lines of a text longer than 20 lines."""
    lines = content.split("\n")
    if len(lines) <= 20:
        return content
    head, tail = lines[:10], lines[-10:]
    return "\n".join(head) + f"\n\n... [{len(lines) - 20} lines omitted] ...\n\n" + "\n".join(tail)


def shell_preview(response: Mapping[str, str]) -> str:
    """``formatShellPreview``: the ``Output:`` section cut to its head and tail, the other sections (Error, Exit
    Code, …) in full."""
    content = response.get("output") or response.get("stdout") or ""
    parts = _SHELL_SECTIONS.split(content)
    if len(parts) < 3:
        return simple_preview(content)  # not in the shell tool's format: no section, no error line added
    pieces = [simple_preview(js_trim(parts[0]))] if js_trim(parts[0]) else []
    for i in range(1, len(parts), 2):
        name, section = parts[i], js_trim(parts[i + 1]) if i + 1 < len(parts) else ""
        pieces.append(f"Output: {simple_preview(section)}" if name == "Output" else f"{name}: {section}")
    preview = "\n".join(pieces)
    error = response.get("error")
    if error and f"Error: {error}" not in content:
        preview += f"\n[Error: {error}]"
    return preview


def masked_snippet(tool_name: str, content: str, response: Mapping[str, str], file_path: str) -> str:
    """The ``<tool_output_masked>`` text that replaces a masked output."""
    if tool_name == SHELL_TOOL_NAME:
        preview = shell_preview(response)
    elif utf16_len(content) > 500:
        preview = f"{js_slice(content, 0, 250)}\n... [TRUNCATED] ...\n{js_slice(content, -250)}"
    else:
        preview = content
    return f"<{MASKING_TAG}>\n{preview}\n\nOutput too large. Full output available at: {file_path}\n</{MASKING_TAG}>"


def masked_file_suffix(key: str) -> str:
    """The random part of a masked output's file name (``Math.random().toString(36).substring(7)``), drawn here
    from a hash of ``key`` so that a replay is deterministic."""
    number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    digits = ""
    for _ in range(6):
        number, digit = divmod(number, 36)
        digits += "0123456789abcdefghijklmnopqrstuvwxyz"[digit]
    return digits


def masked_file(temp_dir: str, session_id: str | None, tool_name: str, call_id: str) -> str:
    """Where ``ToolOutputMaskingService`` writes a masked output."""
    folder = f"{temp_dir}/{TOOL_OUTPUTS_DIR}"
    if session_id:
        folder += f"/session-{sanitize_filename_part(session_id)}"
    safe_tool = sanitize_filename_part(tool_name).lower()
    safe_call = sanitize_filename_part(call_id).lower()
    return f"{folder}/{safe_tool}_{safe_call}_{masked_file_suffix(f'{session_id}/{call_id}')}.txt"


@dataclass(frozen=True)
class Masking:
    """What a masking pass did: the masked messages by position and the estimated tokens saved."""

    replaced: dict[int, Message]
    saved: int
    prunable_tokens: int


def mask_tool_outputs(view: ChatView, scan: Scan, estimator: GeminiCliCounter, temp_dir: str,
                      session_id: str | None, now_ms: Callable[[Message], str]) -> Masking:
    """Mask every prunable output whose ``<tool_output_masked>`` form is smaller (``ToolOutputMaskingService``).
    ``now_ms`` stands in for ``Date.now()`` as the file name of an output whose call has no id."""
    replaced: dict[int, Message] = {}
    saved = 0
    for item in scan.prunable:
        message = view.entries[item.position].message
        result = message.tool_result
        assert result is not None
        tool_name = result.tool_name or "unknown_tool"
        path = masked_file(temp_dir, session_id, tool_name, result.call_id or now_ms(message))
        snippet = masked_snippet(tool_name, item.content, response_object(message), path)
        masked = with_output(message, snippet, gemini_masked=True)
        savings = item.tokens - estimator.quarters(masked) // 4
        if savings > 0:
            replaced[item.position] = masked
            saved += savings
    return Masking(replaced, saved, scan.total)
