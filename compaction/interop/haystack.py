"""haystack-ai interop: ``ChatMessage``/``Tool`` conversion, and a call-by-call driver of the real ``CompactionHook``.

The driver does around the hook exactly what the Haystack ``Agent`` does around its ``before_llm`` hooks: it keeps a
real ``State`` built with the Agent's own schema (``messages`` merged as lists, ``context_tokens`` and ``tools``
replaced), sets ``tools`` before every LLM call, runs the hooks through Haystack's own hook runner, and appends the
model reply and the tool results to ``messages`` afterwards. The replies come from the log instead of a model, and no
provider usage is recorded, so ``context_tokens`` stays 0 and the hook counts the whole request each call — the
setting our replay reproduces. What the hook computed (its estimate, whether it triggered, its target, whether the
compactor returned something) is read from the tags it writes on its tracing span, so the record is the hook's own
view, not a recomputation.

haystack-ai is imported inside the functions, so importing this module never requires it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import COMPACTION_META_KEY
from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import ToolSchema
from ..formats.haystack import message_to_haystack
from ..formats.haystack import read_message

_TAG = "haystack.agent.hook.compaction."


def _require_haystack() -> None:
    try:
        import haystack  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without haystack-ai
        raise ImportError("compaction.interop.haystack needs haystack-ai: pip install 'haystack-ai==3.4.1'") from exc


# ------------------------------------------------------------------------------------------------- messages
def to_haystack_message(message: Message) -> Any:
    """One of our messages as a haystack ``ChatMessage`` (through ``ChatMessage.from_dict`` of our writer's dict)."""
    _require_haystack()
    from haystack.dataclasses import ChatMessage

    return ChatMessage.from_dict(message_to_haystack(message))


def to_haystack_messages(conversation_or_messages: Conversation | Sequence[Message]) -> list[Any]:
    """A conversation (or a list of our messages) as haystack ``ChatMessage`` objects, in order."""
    messages = (
        conversation_or_messages.messages
        if isinstance(conversation_or_messages, Conversation)
        else conversation_or_messages
    )
    return [to_haystack_message(m) for m in messages]


def from_haystack_messages(chat_messages: Sequence[Any]) -> list[Message]:
    """haystack ``ChatMessage`` objects as our messages; a message holding several tool results becomes several."""
    _require_haystack()
    out: list[Message] = []
    warnings: list[LoadWarning] = []
    for index, chat_message in enumerate(chat_messages):
        out.extend(read_message(chat_message.to_dict(), f"ChatMessage {index}", warnings))
    if warnings:
        raise ValueError("; ".join(w.message for w in warnings))
    return out


def from_haystack_message(chat_message: Any) -> Message:
    """One haystack ``ChatMessage`` as one of our messages (``ValueError`` if it holds several tool results)."""
    messages = from_haystack_messages([chat_message])
    if len(messages) != 1:
        raise ValueError(
            f"this ChatMessage holds {len(messages)} tool results, which are {len(messages)} messages in our model; "
            f"use from_haystack_messages"
        )
    return messages[0]


# ------------------------------------------------------------------------------------------------- tools
def _no_op(**_: Any) -> str:
    """The function behind a converted tool: the replay never invokes tools, counters only read their schemas."""
    return ""


def to_haystack_tools(schemas: Sequence[ToolSchema]) -> list[Any]:
    """Tool schemas as haystack ``Tool`` objects (same name, description and parameters; a no-op function)."""
    _require_haystack()
    from haystack.tools.tool import Tool  # (haystack.tools re-exports it without declaring it)

    tools = []
    for schema in schemas:
        try:
            tools.append(
                Tool(name=schema.name, description=schema.description, parameters=dict(schema.parameters),
                     function=_no_op)
            )
        except ValueError as exc:
            raise ValueError(f"tool {schema.name!r}: haystack rejects its schema: {exc}") from exc
    return tools


def _as_haystack_tools(tools: Sequence[Any]) -> list[Any]:
    return [to_haystack_tools([t])[0] if isinstance(t, ToolSchema) else t for t in tools]


# ------------------------------------------------------------------------------------------------- tracing
class _Recorder:
    """A haystack tracer whose spans keep their tags, so the driver can read what the hook reported."""

    def __init__(self) -> None:
        from haystack.tracing.tracer import Span  # (haystack.tracing re-exports these without declaring them)
        from haystack.tracing.tracer import Tracer

        # haystack (typed) is Any where mypy runs without it installed; with it, the ignores are unused
        class RecordingSpan(Span):  # type: ignore[misc, unused-ignore]
            def __init__(self, tags: dict[str, Any] | None) -> None:
                self.tags: dict[str, Any] = dict(tags or {})

            def set_tag(self, key: str, value: Any) -> None:
                self.tags[key] = value

        class RecordingTracer(Tracer):  # type: ignore[misc, unused-ignore]
            def __init__(self) -> None:
                self.stack: list[RecordingSpan] = []
                self.finished: list[RecordingSpan] = []

            @contextlib.contextmanager
            def trace(self, operation_name: str, tags: dict[str, Any] | None = None,
                      parent_span: Span | None = None) -> Iterator[Span]:
                span = RecordingSpan(tags)
                self.stack.append(span)
                try:
                    yield span
                finally:
                    self.stack.pop()
                    self.finished.append(span)

            def current_span(self) -> Span | None:
                return self.stack[-1] if self.stack else None

        self.tracer = RecordingTracer()

    def take(self) -> dict[str, Any]:
        """The compaction tags written since the last call (merged over the spans of one hook run)."""
        tags: dict[str, Any] = {}
        for span in self.tracer.finished:
            tags.update({k[len(_TAG):]: v for k, v in span.tags.items() if k.startswith(_TAG)})
        self.tracer.finished.clear()
        return tags


@contextlib.contextmanager
def _recording() -> Iterator[_Recorder]:
    """Install a recording tracer for the duration of the block, restoring whatever tracer was active."""
    from haystack.tracing.tracer import enable_tracing  # (what haystack.tracing re-exports)
    from haystack.tracing.tracer import tracer as proxy  # haystack's global ProxyTracer (haystack.tracing.tracer)

    recorder = _Recorder()
    previous = proxy.actual_tracer
    enable_tracing(recorder.tracer)
    try:
        yield recorder
    finally:
        proxy.actual_tracer = previous


# ------------------------------------------------------------------------------------------------- driver
@dataclass(frozen=True)
class HookCall:
    """One LLM call as the real hook handled it; fields named as in :class:`compaction.replay.Step`."""

    step: int
    message_index: int
    #: the estimate the hook computed (its span tag ``estimated_context_tokens``)
    tokens_before: int
    triggered: bool
    #: the compactor returned a new list and the hook wrote it to ``state.messages``
    compacted: bool
    #: the target handed to the compactor (``None`` when the hook did not trigger)
    target: int | None
    #: ``token_counter.count(messages, tools)`` of what was sent (``None`` if not measured, see ``measure_sent``)
    tokens_sent: int | None
    #: the ``ChatMessage`` list the chat generator would receive in this call
    messages: tuple[Any, ...]


def _agent_state(tools: list[Any]) -> Any:
    """A ``State`` with the schema the Agent resolves for itself, initialised as the Agent initialises it."""
    from haystack.components.agents.agent import _INTERNAL_STATE_KEYS
    from haystack.components.agents.agent import _RUN_METADATA_STATE_KEYS
    from haystack.components.agents.state import State
    from haystack.components.agents.state.state_utils import merge_lists
    from haystack.dataclasses import ChatMessage

    schema: dict[str, Any] = {"messages": {"type": list[ChatMessage], "handler": merge_lists}}
    for key, config in {**_RUN_METADATA_STATE_KEYS, **_INTERNAL_STATE_KEYS}.items():
        schema[key] = dict(config)
    state = State(schema=schema, data={})
    state.set("messages", [])
    state.set("step_count", 0)
    state.set("context_tokens", 0)
    state.set("tools", tools)
    return state


def drive_haystack_hook(
    conversation: Conversation,
    compactor: Any,
    *,
    context_window: int,
    compact_at: float = 0.7,
    compact_to: float = 0.4,
    token_counter: Any = None,
    tools: Sequence[Any] | None = None,
    include_log_summaries: bool = False,
    chat_messages: Sequence[Any] | None = None,
    measure_sent: bool = True,
) -> list[HookCall]:
    """Run haystack-ai's real ``CompactionHook(compactor, ...)`` before every LLM call of ``conversation``.

    ``compactor`` and ``token_counter`` are haystack objects (``token_counter=None`` is the hook's own default,
    ``ApproximateTokenCounter()``). ``tools`` are haystack ``Tool`` objects or our ``ToolSchema`` values; ``None``
    means the conversation's own tool schemas. The log's own compaction summaries are left out unless
    ``include_log_summaries``, and, as there, messages the agent never saw are left out and an assistant message
    the model did not generate is context, not a call. ``chat_messages`` may hold the conversation already
    converted (one ``ChatMessage`` per message, e.g. from :func:`to_haystack_messages`), so that timing the driver
    measures the hook, not the conversion. After a compaction the Agent does not count what it sends, so the driver
    does it for the record; ``measure_sent=False`` leaves ``tokens_sent`` to :func:`with_tokens_sent`, for timings
    that should hold only what the Agent does. Returns one :class:`HookCall` per LLM call.
    """
    _require_haystack()
    from haystack.hooks.compaction import CompactionHook
    from haystack.hooks.invocation import _run_hooks
    from haystack.hooks.protocol import BEFORE_LLM

    hook = CompactionHook(compactor, context_window=context_window, compact_at=compact_at, compact_to=compact_to,
                          token_counter=token_counter)
    hooks = {BEFORE_LLM: [hook]}
    flat_tools = _as_haystack_tools(conversation.tools if tools is None else tools)
    state = _agent_state(flat_tools)
    from ..replay import hidden_from_agent

    skipped = hidden_from_agent(conversation) | (
        frozenset() if include_log_summaries else frozenset(conversation.log_summary_indices))
    calls_at = frozenset(conversation.llm_call_indices)
    if chat_messages is not None and len(chat_messages) != len(conversation.messages):
        raise ValueError(f"chat_messages holds {len(chat_messages)} messages, the conversation "
                         f"{len(conversation.messages)}")
    calls: list[HookCall] = []
    with _recording() as recorder:
        for index, message in enumerate(conversation.messages):
            if index in skipped:
                continue
            if index in calls_at:
                calls.append(_one_call(hooks, state, recorder, len(calls), index, flat_tools, _run_hooks))
            state.set("messages", [chat_messages[index] if chat_messages is not None else to_haystack_message(message)])
    return with_tokens_sent(calls, hook.token_counter, flat_tools) if measure_sent else calls


def with_tokens_sent(calls: Sequence[HookCall], token_counter: Any, tools: Sequence[Any] = ()) -> list[HookCall]:
    """The records with ``tokens_sent`` filled in: the estimate where nothing changed, else a count of what was sent
    (``token_counter`` and ``tools`` as given to the hook, haystack objects)."""
    return [
        call if call.tokens_sent is not None else replace(
            call, tokens_sent=token_counter.count(messages=list(call.messages), tools=list(tools) or None)
            if call.compacted else call.tokens_before)
        for call in calls
    ]


def _one_call(hooks: dict[Any, Any], state: Any, recorder: _Recorder, step: int, index: int, tools: list[Any],
              run_hooks: Any) -> HookCall:
    """Run the ``before_llm`` hooks once, as ``Agent._run_step`` does, and record what the hook did."""
    from haystack.components.agents.state.state_utils import replace_values
    from haystack.hooks.protocol import BEFORE_LLM

    state.set("tools", tools, handler_override=replace_values)
    run_hooks(hooks=hooks, hook_point=BEFORE_LLM, state=state)
    tags = recorder.take()
    sent = tuple(state.data["messages"])
    return HookCall(
        step=step,
        message_index=index,
        tokens_before=int(tags["estimated_context_tokens"]),
        triggered=bool(tags["triggered"]),
        compacted=bool(tags.get("compacted", False)),
        target=tags.get("target_tokens"),
        tokens_sent=None,
        messages=sent,
    )


# ------------------------------------------------------------------------------------------------- comparison
def message_view(message: Message) -> tuple[Any, ...]:
    """What a chat generator receives from one of our messages (role, texts, calls, result), plus the
    ``context_compaction`` marker a compactor left on it."""
    result = message.tool_result
    return (
        message.role,
        tuple(message.texts),
        tuple((c.name, dict(c.arguments), c.id) for c in message.tool_calls),
        None if result is None else (_parts_view(result.result), result.origin.name, result.call_id, result.error),
        message.meta.get(COMPACTION_META_KEY),
    )


def _parts_view(result: Any) -> Any:
    """A tool result's content as comparable values: its text, or per part the text or the kind of attachment (ours:
    ``str`` / :class:`~compaction.conversation.Image` / ``File``; haystack: ``TextContent`` / ``ImageContent`` /
    ``FileContent``)."""
    if isinstance(result, str):
        return result
    return tuple(p if isinstance(p, str) else p.text if hasattr(p, "text") else type(p).__name__.removesuffix("Content")
                 for p in result)


def chat_message_view(chat_message: Any) -> tuple[Any, ...]:
    """:func:`message_view` of a haystack ``ChatMessage``."""
    result = chat_message.tool_call_result
    return (
        chat_message.role.value,
        tuple(chat_message.texts),
        tuple((c.tool_name, dict(c.arguments), c.id) for c in chat_message.tool_calls),
        None if result is None else (_parts_view(result.result), result.origin.tool_name, result.origin.id,
                                     result.error),
        chat_message.meta.get(COMPACTION_META_KEY),
    )


_STEP_FIELDS = ("message_index", "tokens_before", "triggered", "target", "compacted", "tokens_sent")


def differences(replay: Any, calls: Sequence[HookCall], contexts: str | Collection[int] = "all") -> list[str]:
    """Where a :class:`compaction.Replay` and :func:`drive_haystack_hook` records disagree (empty when they agree).

    Every call's measured fields are compared; the messages sent are compared for every call (``contexts="all"``),
    only for calls that compacted and the last one (``"compacted"``), for the given call numbers, or not at all
    (``"none"``).
    """
    found: list[str] = []
    if len(replay.steps) != len(calls):
        return [f"{len(replay.steps)} LLM calls replayed, {len(calls)} driven through the hook"]
    for step, call in zip(replay.steps, calls, strict=True):
        for name in _STEP_FIELDS:
            ours, theirs = getattr(step, name), getattr(call, name)
            if ours != theirs:
                found.append(f"call {step.step}: {name} {ours!r} (replay) != {theirs!r} (haystack)")
        if isinstance(contexts, str):
            wanted = contexts == "all" or (contexts == "compacted" and (call.compacted or call is calls[-1]))
        else:
            wanted = step.step in contexts
        if wanted:
            ours_sent = [message_view(item.message) for item in replay.context_at(step.step)]
            theirs_sent = [chat_message_view(m) for m in call.messages]
            if ours_sent != theirs_sent:
                first = next((i for i, (a, b) in enumerate(zip(ours_sent, theirs_sent)) if a != b),
                             min(len(ours_sent), len(theirs_sent)))
                found.append(f"call {step.step}: messages sent differ from position {first} "
                             f"({len(ours_sent)} replayed, {len(theirs_sent)} from haystack)")
    return found
