"""langchain interop: our messages as the LangChain messages an agent holds, and a call-by-call driver of real
LangChain v1 agent middleware (``SummarizationMiddleware``, ``ContextEditingMiddleware``).

The driver does around the middleware what ``create_agent``'s graph does around it: the agent state's ``messages``
(the conversation without its leading system messages, which are the agent's system prompt) are updated with
LangGraph's own ``add_messages`` reducer; before every LLM call the middleware's ``before_model`` runs on the state
and its update is applied, then its ``wrap_model_call`` wraps the model request, and the model receives the system
prompt followed by the request's messages, which the driver records. The replies and the tool results come from the
log instead of a model and tools, and are appended after the call. As in our replay, messages the agent never saw
are left out, the log's own compaction summaries too unless ``include_log_summaries``, and an assistant message the
model did not generate is context, not a call.

Messages are converted as a LangChain agent holds them: content as :func:`compaction.langchain_counter.langchain_content`
sees it, AI tool calls as LangChain ``tool_calls``, and every ``ToolMessage`` named after its tool, as the agent's tool
node names it. No usage metadata is attached, so LangChain's usage-based count scaling never applies (as in the
replay).

langchain is imported inside the functions, so importing this module never requires it.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import Message
from ..langchain_counter import langchain_content
from ..langchain_counter import langchain_name
from ..langchain_counter import langchain_tool_calls

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentState
    from langchain_core.messages import AnyMessage
    from langchain_core.messages import MessageLikeRepresentation


def _require_langchain() -> None:
    try:
        import langchain.agents  # noqa: F401
    except ImportError as exc:  # pragma: no cover - exercised only without langchain
        raise ImportError("compaction.interop.langchain needs langchain: pip install 'langchain>=1.5,<2'") from exc


# ------------------------------------------------------------------------------------------------- messages
def to_langchain_message(message: Message) -> Any:
    """One of our messages as the ``langchain_core`` message a LangChain agent would hold."""
    _require_langchain()
    from langchain_core.messages import AIMessage
    from langchain_core.messages import HumanMessage
    from langchain_core.messages import SystemMessage
    from langchain_core.messages import ToolMessage

    content = langchain_content(message)
    editing = message.meta.get("context_editing")
    metadata = {"response_metadata": {"context_editing": dict(editing)}} if isinstance(editing, dict) else {}
    if message.role == "assistant":
        return AIMessage(content=content, tool_calls=langchain_tool_calls(message), name=message.name, **metadata)
    if message.tool_result is not None:
        result = message.tool_result
        return ToolMessage(content=content, tool_call_id=result.call_id or "", name=langchain_name(message),
                           status="error" if result.error else "success", **metadata)
    if message.role == "system":
        return SystemMessage(content=content, name=message.name)
    source = message.meta.get("lc_source")
    extra = {"additional_kwargs": {"lc_source": source}} if isinstance(source, str) else {}
    return HumanMessage(content=content, name=message.name, **extra)


def to_langchain_messages(messages: Sequence[Message]) -> list[Any]:
    """Our messages as LangChain messages, in order."""
    return [to_langchain_message(m) for m in messages]


def langchain_view(message: Any) -> tuple[Any, ...]:
    """What a chat model receives from a LangChain message (kind, content, tool calls, call id, name) plus the marks
    the middleware leaves on it (``lc_source``, ``context_editing``): equal views are the same message."""
    calls = tuple((c["name"], c["args"], c.get("id")) for c in getattr(message, "tool_calls", None) or ())
    return (message.type, message.content, calls, getattr(message, "tool_call_id", None), message.name,
            message.additional_kwargs.get("lc_source"), message.response_metadata.get("context_editing"))


# ------------------------------------------------------------------------------------------------- the driver
@dataclass(frozen=True)
class MiddlewareCall:
    """One LLM call as the real middleware handled it."""

    step: int
    message_index: int  # the log's assistant message this call produced
    tokens_before: int  # system prompt + state messages, before the middleware ran
    tokens_sent: int  # what the model received
    rewritten: bool  # before_model changed the state
    state: tuple[Any, ...]  # the state's messages after before_model
    sent: tuple[Any, ...]  # what the model received: the system prompt, then the request's messages


def _add_messages(messages: Sequence[AnyMessage], update: Any) -> list[AnyMessage]:
    """LangGraph's ``add_messages`` reducer on the agent state's messages: given a list it returns a list of messages
    (its annotation is any input it accepts, a single message or a string too)."""
    from langgraph.graph.message import add_messages

    left: list[MessageLikeRepresentation] = [*messages]  # (a copy: add_messages makes one too)
    return cast("list[AnyMessage]", add_messages(left, update))


def drive_langchain_middleware(
    conversation: Conversation,
    middleware: Any,
    *,
    model: Any = None,
    token_counter: Callable[[Sequence[Any]], int] | None = None,
    include_log_summaries: bool = False,
) -> list[MiddlewareCall]:
    """Run one real LangChain agent middleware before every LLM call of ``conversation``, as ``create_agent`` does.

    ``model`` is the agent's chat model placed in each ``ModelRequest`` (a ``GenericFakeChatModel`` when None; only
    middleware that asks the model to count tokens uses it). ``token_counter`` measures ``tokens_before`` and
    ``tokens_sent`` (``count_tokens_approximately`` when None). Returns one :class:`MiddlewareCall` per LLM call.
    """
    _require_langchain()
    from langchain.agents.middleware import AgentMiddleware
    from langchain.agents.middleware import ModelRequest
    from langchain.agents.middleware import ModelResponse
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.messages.utils import count_tokens_approximately

    from ..replay import hidden_from_agent

    count = token_counter or count_tokens_approximately
    model = model if model is not None else GenericFakeChatModel(messages=iter(()))
    skipped = hidden_from_agent(conversation) | (
        frozenset() if include_log_summaries else frozenset(conversation.log_summary_indices))
    overrides = type(middleware).before_model is not AgentMiddleware.before_model
    wraps = type(middleware).wrap_model_call is not AgentMiddleware.wrap_model_call

    system: list[Any] = []
    state: AgentState[Any] = {"messages": []}
    calls: list[MiddlewareCall] = []
    in_prompt = True  # still reading the leading system messages (the agent's system prompt)
    for index, message in enumerate(conversation.messages):
        if index in skipped:
            continue
        if message.role == "assistant" and message.meta.get("generated", True) is not False:
            before = count([*system, *state["messages"]])
            update = middleware.before_model(state, None) if overrides else None
            if update and "messages" in update:
                state["messages"] = _add_messages(state["messages"], update["messages"])
            received: list[Any] = []

            def handler(request: Any, received: list[Any] = received) -> Any:
                received.extend([*system, *request.messages])
                return ModelResponse(result=[AIMessage(content="")])

            request = ModelRequest(model=model, messages=list(state["messages"]), state=state,
                                   system_message=system[0] if len(system) == 1 else None)
            if wraps:
                middleware.wrap_model_call(request, handler)
            else:
                handler(request)
            calls.append(MiddlewareCall(len(calls), index, before, count(received), bool(update),
                                        tuple(state["messages"]), tuple(received)))
        converted = to_langchain_message(message)
        if in_prompt and message.role == "system":
            system.append(converted)
            continue
        in_prompt = False
        state["messages"] = _add_messages(state["messages"], [converted])
    return calls
