"""The normalized conversation model every reader produces and every strategy consumes.

A :class:`Conversation` is an ordered tuple of immutable :class:`Message` objects plus what the log told us about
the run (tool schemas, provider-reported usage, the log's own compactions, load warnings). One assistant message is
one LLM output, so the LLM calls ("steps") of a run are exactly its assistant messages.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import fields
from dataclasses import replace
from typing import Any
from typing import Literal
from typing import TypeVar

T = TypeVar("T")
Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")

#: Meta key under which strategies record what they did to a message (Haystack's ``context_compaction``).
COMPACTION_META_KEY = "context_compaction"

#: messages take weak references (counters cache per message without keeping a log alive): Python 3.11+ gives a
#: slotted dataclass a weakref slot on request; on 3.10 a message keeps its ``__dict__`` instead of slots
_WEAKLY_REFERABLE: dict[str, bool] = {"slots": True, "weakref_slot": True} if sys.version_info >= (3, 11) else {}


@dataclass(frozen=True, slots=True)
class Image:
    """An image part; only its description is kept (the bytes never matter for counting)."""

    mime_type: str | None = None
    detail: str | None = None
    source: str | None = None  # url or "base64", for display only
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class File:
    """A file/document part."""

    filename: str | None = None
    mime_type: str | None = None
    size_bytes: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)


ResultPart = str | Image | File


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for. ``arguments`` is the decoded JSON object (or ``{"_raw": text}`` if undecodable)."""

    id: str | None
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] | None = field(default=None, compare=False)

    def arguments_json(self) -> str:
        """Arguments as compact JSON text (what an OpenAI-style log stores)."""
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one tool call; ``origin`` is the call it answers (rebuilt by id when the log omits it)."""

    origin: ToolCall
    result: str | tuple[ResultPart, ...]
    error: bool = False

    @property
    def call_id(self) -> str | None:
        return self.origin.id

    @property
    def tool_name(self) -> str:
        return self.origin.name

    @property
    def text(self) -> str:
        """The result as plain text: parts joined with no separator, non-text parts as short placeholders."""
        if isinstance(self.result, str):
            return self.result
        return "".join(part if isinstance(part, str) else placeholder(part) for part in self.result)


def placeholder(part: Image | File) -> str:
    """The short stand-in Haystack's counters measure for a non-text part."""
    if isinstance(part, Image):
        return "<image>"
    return f"<file: {part.filename or 'unnamed'}>"


@dataclass(frozen=True, eq=False, **_WEAKLY_REFERABLE)
class Message:
    """One chat message. Immutable: strategies build new messages with :func:`dataclasses.replace`.

    Equality is identity (``eq=False``) so messages can key per-message caches cheaply; use :meth:`same_content`
    to compare by value.
    """

    role: Role
    texts: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_result: ToolResult | None = None
    reasoning: tuple[str, ...] = ()
    images: tuple[Image, ...] = ()
    files: tuple[File, ...] = ()
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        return "\n".join(self.texts)

    @property
    def is_tool_result(self) -> bool:
        return self.tool_result is not None

    def same_content(self, other: Message) -> bool:
        """Value equality of everything that is sent to a model (meta excluded)."""
        return (
            self.role == other.role
            and self.texts == other.texts
            and self.tool_calls == other.tool_calls
            and self.tool_result == other.tool_result
            and self.reasoning == other.reasoning
            and self.images == other.images
            and self.files == other.files
            and self.name == other.name
        )

    def with_meta(self, **updates: Any) -> Message:
        """A copy with ``meta`` extended by ``updates``."""
        return replace(self, meta={**self.meta, **updates})

    def preview(self, limit: int = 120) -> str:
        """A one-line description for tables and hover texts."""
        if self.tool_result is not None:
            body = f"{self.tool_result.tool_name} → {self.tool_result.text}"
        elif self.tool_calls:
            calls = ", ".join(f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})" for c in self.tool_calls)
            body = (self.text + " " if self.text else "") + calls
        else:
            body = self.text or ("<reasoning>" if self.reasoning else "<no content>")
        return squeezed_preview(body, limit)


def squeezed_preview(text: str, limit: int) -> str:
    """``text`` with every whitespace run made one space, cut to ``limit`` characters (an ellipsis marking the cut).

    Only a leading part of a long text is squeezed: the squeezed form of a prefix is a prefix of the squeezed whole,
    so once it is longer than ``limit`` the rest cannot change the result."""
    size = 4 * limit + 64
    while True:
        head = " ".join(text[:size].split())
        if len(head) > limit:
            return head[: limit - 1] + "…"
        if size >= len(text):
            return head
        size *= 4


def system(text: str, **meta: Any) -> Message:
    """A system message with one text part."""
    return Message(role="system", texts=(text,), meta=meta)


def user(text: str, **meta: Any) -> Message:
    """A user message with one text part."""
    return Message(role="user", texts=(text,), meta=meta)


def assistant(text: str | None = None, tool_calls: Iterable[ToolCall] = (), **meta: Any) -> Message:
    """An assistant message; ``text=None`` means no text part at all."""
    return Message(role="assistant", texts=() if text is None else (text,), tool_calls=tuple(tool_calls), meta=meta)


def tool(call: ToolCall, result: str, error: bool = False, **meta: Any) -> Message:
    """A tool message answering ``call``."""
    return Message(role="tool", tool_result=ToolResult(origin=call, result=result, error=error), meta=meta)


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """A tool definition as sent to the model (``name``, ``description``, JSON-schema ``parameters``)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def spec(self) -> dict[str, Any]:
        """The ``{"name", "description", "parameters"}`` dict Haystack renders for counting."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


@dataclass(frozen=True, slots=True)
class Usage:
    """Provider-reported usage of one LLM call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Everything the model read: uncached input + cache reads + cache writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class LoadWarning:
    """Something in the log that was skipped or repaired while reading it."""

    message: str
    line: int | None = None
    field: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message, **({"field": self.field} if self.field else {})}


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A compaction the real agent performed, as recorded in the log (e.g. Claude Code ``compact_boundary``)."""

    message_index: int  # position in the conversation before which it happened
    #: "compaction" (history summarized), "microcompact" (tool results cleared in place), "truncation" (messages
    #: dropped), "condense" (Roo Code's condensed summary), "masking" (tool outputs masked)
    kind: str
    trigger: str | None = None  # "auto" / "manual"
    pre_tokens: int | None = None
    post_tokens: int | None = None
    summary: str | None = None
    #: tool call ids whose results the agent cleared (Claude Code ``microcompactMetadata.compactedToolIds``)
    cleared: tuple[str, ...] = ()
    tokens_saved: int | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """Where a conversation came from."""

    format: str
    path: str | None = None
    conversation_id: str = "0"
    warnings: tuple[LoadWarning, ...] = ()
    #: the model's context window when the log states it (Codex ``model_context_window``)
    context_window: int | None = None
    #: the model the log names (the one most LLM calls used), e.g. ``claude-opus-4-6``, ``gpt-5.1-codex``
    model: str | None = None
    #: the agent's own version when the log records it (Claude Code ``version``, Codex ``cli_version``)
    agent_version: str | None = None
    #: for a subagent: the id of the conversation that started it, and the id of the tool call (e.g. Claude Code's
    #: ``Task``) that did
    parent: str | None = None
    parent_call_id: str | None = None
    #: other facts the log states about the run (format-specific, JSON values), shown by ``info``
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False)
class Conversation:
    """A loaded agent run: messages in order plus what the log says about them."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    source: Source = field(default_factory=lambda: Source(format="python"))
    #: provider-reported usage keyed by the index of the assistant message the call produced
    usage: Mapping[int, Usage] = field(default_factory=dict)
    #: the log's own compactions
    events: tuple[LogEvent, ...] = ()
    #: message indices that hold the log's own compaction summaries (left out of simulated runs by default)
    log_summary_indices: frozenset[int] = frozenset()
    #: what analyses derive from this conversation alone and keep for the next one (uncompacted series, previews);
    #: it lives and dies with the conversation, and ``dataclasses.replace`` starts a copy with an empty one
    memo: dict[tuple[Hashable, ...], Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __getstate__(self) -> list[Any]:
        """Pickled without its memo (it may hold counters; a copy builds its own)."""
        return [{} if f.name == "memo" else getattr(self, f.name) for f in fields(self)]

    def __setstate__(self, state: list[Any]) -> None:
        for f, value in zip(fields(self), state, strict=True):
            object.__setattr__(self, f.name, value)

    def __len__(self) -> int:
        return len(self.messages)

    def memoized(self, key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
        """What ``compute()`` returns, computed once and kept in :attr:`memo` under ``key`` (an analysis of this
        conversation alone: it is freed with the conversation, never held by a global cache)."""
        try:
            hit: T = self.memo[key]
            return hit
        except KeyError:
            value = self.memo[key] = compute()
            return value

    @property
    def id(self) -> str:
        return self.source.conversation_id

    @property
    def format(self) -> str:
        return self.source.format

    @property
    def warnings(self) -> tuple[LoadWarning, ...]:
        return self.source.warnings

    @property
    def llm_call_indices(self) -> list[int]:
        """Indices of the assistant messages the agent's model generated: one per LLM call."""
        return [i for i, m in enumerate(self.messages) if m.role == "assistant"
                and m.meta.get("generated", True) is not False and m.meta.get("hidden_from_agent") is not True]

    @property
    def tool_call_count(self) -> int:
        return sum(len(m.tool_calls) for m in self.messages)

    @property
    def tool_result_count(self) -> int:
        return sum(1 for m in self.messages if m.tool_result is not None)

    @property
    def tool_names(self) -> list[str]:
        """Tool names seen in calls, in first-seen order."""
        seen: dict[str, None] = {}
        for m in self.messages:
            for c in m.tool_calls:
                seen.setdefault(c.name, None)
        return list(seen)

    def summary(self) -> dict[str, Any]:
        """The per-conversation object of ``info --json``."""
        return {
            "id": self.id,
            "messages": len(self.messages),
            "llm_calls": len(self.llm_call_indices),
            "tool_calls": self.tool_call_count,
            "tool_results": self.tool_result_count,
            "tools": self.tool_names,
            "reported_usage": bool(self.usage),
            "log_compactions": len(self.events),
            **{key: value for key, value in (
                ("model", self.source.model), ("agent_version", self.source.agent_version),
                ("context_window", self.source.context_window), ("parent", self.source.parent),
                ("parent_call_id", self.source.parent_call_id)) if value is not None},
        }

    def __repr__(self) -> str:
        """``<Conversation claude-code 'main' of s.jsonl: 139 calls, 293 messages, model claude-opus-4-6>`` (short:
        every part from the log is clipped)."""
        from .display import clip
        from .display import counted
        from .display import short_label
        from .models import log_model

        model = log_model(self)
        tail = f", model {clip(model, 60)}" if model else ""
        return (f"<Conversation {short_label(self)}: {counted(len(self.llm_call_indices), 'call')}, "
                f"{counted(len(self.messages), 'message')}{tail}>")

    def _repr_html_(self) -> str:
        """A small table: what the log holds, and the window and price preset it resolves to (escaped)."""
        from .display import clip
        from .display import file_name
        from .display import html_table
        from .models import log_model
        from .models import resolve_context_window
        from .models import resolve_price_model

        window, prices = resolve_context_window(self), resolve_price_model(self)
        rows = [("format", clip(self.format, 30)), ("id", clip(self.id, 60)),
                *((("file", file_name(self.source.path)),) if self.source.path else ()),
                ("LLM calls", f"{len(self.llm_call_indices):,}"), ("messages", f"{len(self.messages):,}"),
                ("tool calls", f"{self.tool_call_count:,}"), ("model", clip(log_model(self) or "—", 60)),
                ("context window", f"{window.value:,} ({clip(window.source, 80)})"),
                ("price preset", f"{prices.value} ({clip(prices.source, 80)})"),
                ("reported usage", "yes" if self.usage else "no"), ("log compactions", f"{len(self.events):,}"),
                ("load warnings", f"{len(self.warnings):,}")]
        return html_table(rows, "Conversation")


def structural_warnings(messages: Iterable[Message]) -> list[LoadWarning]:
    """Warnings for results with no earlier call and calls that are never answered."""
    warnings: list[LoadWarning] = []
    open_calls: dict[str, int] = {}
    for index, m in enumerate(messages):
        for c in m.tool_calls:
            if c.id:
                open_calls[c.id] = index
        if m.tool_result is not None:
            cid = m.tool_result.call_id
            if cid and cid in open_calls:
                del open_calls[cid]
            elif cid:
                warnings.append(LoadWarning(f"message {index}: tool result for call id {cid!r} has no earlier call"))
    for cid, index in open_calls.items():
        warnings.append(LoadWarning(f"message {index}: tool call {cid!r} is never answered"))
    return warnings
