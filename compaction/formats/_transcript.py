"""A conversation as a reader assembles it message by message: usage per LLM call, the log's own compactions and
their summaries, warnings, and the model most calls used. Shared by the agent-SDK readers (Pydantic AI, Google ADK),
OpenCode and OpenHands."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolSchema
from ..conversation import Usage
from ..conversation import structural_warnings


@dataclass
class Transcript:
    """Messages in order plus what the log says about them; :meth:`conversation` freezes it."""

    messages: list[Message] = field(default_factory=list)
    usage: dict[int, Usage] = field(default_factory=dict)
    events: list[LogEvent] = field(default_factory=list)
    summaries: set[int] = field(default_factory=set)
    warnings: list[LoadWarning] = field(default_factory=list)
    #: tool calls seen so far by id, so a result can name the call it answers
    calls: dict[str, ToolCall] = field(default_factory=dict)
    models: Counter[str] = field(default_factory=Counter)

    def add(self, message: Message) -> int:
        """Append a message; its index."""
        self.messages.append(message)
        for call in message.tool_calls:
            if call.id:
                self.calls[call.id] = call
        return len(self.messages) - 1

    def add_call(self, message: Message, usage: Usage | None, model: str | None) -> int:
        """Append the assistant message of one LLM call, with the usage the provider reported and its model."""
        index = self.add(message)
        if usage is not None:
            self.usage[index] = usage
        if model:
            self.models[model] += 1
        return index

    def origin(self, call_id: str | None, name: str | None) -> ToolCall:
        """The call a result answers: the one seen with that id, else one rebuilt from the result's own fields."""
        known = self.calls.get(call_id or "")
        return known if known is not None else ToolCall(call_id, name or "unknown_tool")

    def log_compaction(self, summary: str | None, meta: Mapping[str, Any] | None = None,
                       trigger: str | None = None) -> None:
        """A compaction the agent performed: a :class:`LogEvent` here and, with a summary, the summary as a user
        message in ``log_summary_indices`` (replays leave it out by default; the ``from-log`` summarizer uses it)."""
        index = len(self.messages)
        self.events.append(LogEvent(index, "compaction", trigger=trigger, summary=summary or None))
        if summary:
            self.add(Message("user", (summary,), meta={**(meta or {}), "log_compaction_summary": True}))
            self.summaries.add(index)

    @property
    def model(self) -> str | None:
        """The model most calls used (None when no call named one)."""
        return self.models.most_common(1)[0][0] if self.models else None

    def warn(self, message: str, line: int | None = None, field_name: str | None = None) -> None:
        self.warnings.append(LoadWarning(message, line=line, field=field_name))

    def conversation(self, format_name: str, path: str | None, conversation_id: str,
                     tools: Iterable[ToolSchema] = (), warnings: Iterable[LoadWarning] = (),
                     agent_version: str | None = None, meta: Mapping[str, Any] | None = None) -> Conversation:
        """The conversation read so far; file-level ``warnings`` come first."""
        all_warnings = (*warnings, *self.warnings, *structural_warnings(self.messages))
        source = Source(format_name, path, conversation_id, all_warnings, model=self.model, agent_version=agent_version,
                        meta=dict(meta or {}))
        return Conversation(tuple(self.messages), tuple(tools), source, usage=dict(self.usage),
                            events=tuple(self.events), log_summary_indices=frozenset(self.summaries))


def append_read(messages: list[Message], usage: dict[int, Usage], read: tuple[Message, Usage | None] | None) -> None:
    """Append a message a reader read, with the usage its LLM call reported keyed by its index (nothing when the
    reader skipped it: ``read`` is None)."""
    if read is None:
        return
    message, reported = read
    if reported is not None:
        usage[len(messages)] = reported
    messages.append(message)


def json_text(value: Any) -> str:
    """A JSON value as the compact text a framework sends for a structured tool result."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
