"""OpenTelemetry GenAI and OpenInference traces: OTLP JSON exports and the SDK's JSON span lines.

LLM spans are ``chat``/``text_completion``/``generate_content`` operations (``gen_ai.operation.name``) or
OpenInference ``LLM`` spans. Their messages:

* GenAI conventions: ``gen_ai.system_instructions`` (parts) and ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  (JSON text, or structured values: ``{role, parts: [{type: text|tool_call|tool_call_response|reasoning, …}]}``);
  usage ``gen_ai.usage.input_tokens`` (cached included), ``output_tokens``, ``cache_read.input_tokens``,
  ``cache_creation.input_tokens``; model ``gen_ai.response.model`` or ``gen_ai.request.model``;
* OpenInference: ``llm.input_messages.N.message.{role, content, contents.M.message_content.text, tool_calls.K.tool_call.
  {id, function.name, function.arguments}, tool_call_id}`` and ``llm.output_messages…``; usage
  ``llm.token_count.{prompt, completion, prompt_details.cache_read, prompt_details.cache_write}``; ``llm.model_name``.

One conversation per ``session.id`` / ``gen_ai.conversation.id`` when spans carry one, else per agent invocation
(the outermost ``invoke_agent`` / OpenInference ``AGENT`` span), else per trace. Its LLM spans in time order: each
span's input is the whole context of that call, so the conversation is built from the first input, extended by each
call's output and by what the next input adds. Where a later input is not an extension of the previous context the
agent compacted: a warning, a :class:`LogEvent` there (``compaction`` when the new input holds messages not seen
before the last retained one, loaded as the log's summaries; ``truncation`` when it only left messages out), and the
run goes on from the new input.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import Role
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_count
from ._fields import as_text
from ._fields import optional_count
from ._otel_spans import Span
from ._otel_spans import is_otlp
from ._otel_spans import is_sdk_span
from ._otel_spans import spans_of
from .base import Document
from .base import FormatInfo
from .base import iter_records
from .base import register_format
from .openai_chat import parse_arguments

LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})
ROLES: dict[str, Role] = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "model": "assistant",
         "tool": "tool", "function": "tool"}


def _is_llm(span: Span) -> bool:
    a = span.attributes
    return a.get("gen_ai.operation.name") in LLM_OPERATIONS or a.get("openinference.span.kind") == "LLM"


def _is_agent(span: Span) -> bool:
    a = span.attributes
    return a.get("gen_ai.operation.name") in AGENT_OPERATIONS or a.get("openinference.span.kind") == "AGENT"


# -------------------------------------------------------------------------------------------- messages
def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _genai_messages(value: Any, where: str, warnings: list[LoadWarning], calls: dict[str, ToolCall]
                    ) -> list[Message]:
    items = _json(value)
    if not isinstance(items, list):
        warnings.append(LoadWarning(f"{where}: expected a JSON array of messages; skipped", field=where))
        return []
    out = []
    for item in items:
        if not isinstance(item, Mapping) or ROLES.get(str(item.get("role"))) is None:
            warnings.append(LoadWarning(f"{where}: a message without a known role skipped", field=where))
            continue
        out += _genai_message(ROLES[str(item["role"])], item.get("parts"), calls)
    return out


def _genai_message(role: Role, parts: Any, calls: dict[str, ToolCall]) -> list[Message]:
    texts, reasoning, tool_calls, results = [], [], [], []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(as_text(part.get("content")) or "")
        elif kind == "reasoning":
            reasoning.append(as_text(part.get("content")) or "")
        elif kind == "tool_call":
            arguments = part.get("arguments")
            call = ToolCall(as_text(part.get("id")), as_text(part.get("name")) or "tool",
                            arguments if isinstance(arguments, Mapping) else parse_arguments(arguments, "tool_call", []))
            calls.setdefault(call.id or "", call)
            tool_calls.append(call)
        elif kind == "tool_call_response":
            ident = as_text(part.get("id"))
            response = part.get("response")
            text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
            results.append(Message("tool", tool_result=ToolResult(calls.get(ident or "") or ToolCall(ident, "tool"),
                                                                  text)))
    if results:
        return results
    return [Message(role if role != "tool" else "user", tuple(texts), tuple(tool_calls), reasoning=tuple(reasoning))]


def _openinference_messages(attributes: Mapping[str, Any], prefix: str, calls: dict[str, ToolCall]) -> list[Message]:
    grouped: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix):].partition(".")
        if head.isdigit() and rest.startswith("message."):
            grouped.setdefault(int(head), {})[rest[len("message."):]] = value
    out = []
    for _, fields in sorted(grouped.items()):
        role = ROLES.get(str(fields.get("role")))
        if role is None:
            continue
        texts = [fields["content"]] if isinstance(fields.get("content"), str) else []
        texts += [v for k, v in sorted(fields.items()) if k.startswith("contents.") and k.endswith(
            ".message_content.text") and isinstance(v, str)]
        tool_calls = []
        for index in sorted({int(k.split(".")[1]) for k in fields if k.startswith("tool_calls.")
                             and k.split(".")[1].isdigit()}):
            base = f"tool_calls.{index}.tool_call."
            call = ToolCall(as_text(fields.get(base + "id")), as_text(fields.get(base + "function.name")) or "tool",
                            parse_arguments(fields.get(base + "function.arguments"), base, []))
            calls.setdefault(call.id or "", call)
            tool_calls.append(call)
        if role == "tool":
            ident = as_text(fields.get("tool_call_id"))
            origin = calls.get(ident or "") or ToolCall(ident, as_text(fields.get("name")) or "tool")
            out.append(Message("tool", tool_result=ToolResult(origin, "\n".join(texts))))
        else:
            out.append(Message(role, tuple(texts), tuple(tool_calls)))
    return out


@dataclass
class _Call:
    span: Span
    inputs: list[Message]
    output: Message | None
    usage: Usage | None
    model: str | None


def _call(span: Span, warnings: list[LoadWarning], calls: dict[str, ToolCall]) -> _Call:
    a = span.attributes
    where = f"span {span.span_id} ({span.name})"
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        inputs = []
        if "gen_ai.system_instructions" in a:
            inputs += _genai_message("system", _json(a["gen_ai.system_instructions"]), calls)
        inputs += _genai_messages(a.get("gen_ai.input.messages", "[]"), f"{where}: gen_ai.input.messages", warnings,
                                  calls)
        outputs = _genai_messages(a.get("gen_ai.output.messages", "[]"), f"{where}: gen_ai.output.messages",
                                  warnings, calls)
    else:
        inputs = _openinference_messages(a, "llm.input_messages.", calls)
        outputs = _openinference_messages(a, "llm.output_messages.", calls)
    output = next((m for m in outputs if m.role == "assistant"), None)
    model = as_text(a.get("gen_ai.response.model")) or as_text(a.get("gen_ai.request.model")) or as_text(
        a.get("llm.model_name"))
    return _Call(span, inputs, output, _usage(a), model)


def _usage(a: Mapping[str, Any]) -> Usage | None:
    prompt = optional_count(a.get("gen_ai.usage.input_tokens"))
    if prompt is not None:
        read = as_count(a.get("gen_ai.usage.cache_read.input_tokens"))
        write = as_count(a.get("gen_ai.usage.cache_creation.input_tokens"))
        output = as_count(a.get("gen_ai.usage.output_tokens"))
    else:
        prompt = optional_count(a.get("llm.token_count.prompt"))
        if prompt is None:
            return None
        read = as_count(a.get("llm.token_count.prompt_details.cache_read"))
        write = as_count(a.get("llm.token_count.prompt_details.cache_write"))
        output = as_count(a.get("llm.token_count.completion"))
    read, write = min(read, prompt), min(write, max(prompt - read, 0))
    return Usage(input_tokens=prompt - read - write, output_tokens=output, cache_read_tokens=read,
                 cache_write_tokens=write)


# ------------------------------------------------------------------------------------------ conversations
@dataclass
class _Run:
    key: str
    spans: list[Span] = field(default_factory=list)


def _group(spans: list[Span]) -> list[_Run]:
    by_id = {s.span_id: s for s in spans}
    runs: dict[str, _Run] = {}
    for span in spans:
        if not _is_llm(span):
            continue
        key = None
        node: Span | None = span
        seen: set[str] = set()
        while node is not None and node.span_id not in seen and key is None:
            seen.add(node.span_id)
            a = node.attributes
            key = as_text(a.get("session.id")) or as_text(a.get("gen_ai.conversation.id"))
            node = by_id.get(node.parent_id or "")
        if key is None:
            agent = None
            node, seen = span, set()
            while node is not None and node.span_id not in seen:
                seen.add(node.span_id)
                if _is_agent(node):
                    agent = node
                node = by_id.get(node.parent_id or "")
            key = f"agent-{agent.span_id}" if agent is not None else span.trace_id
        runs.setdefault(key, _Run(key)).spans.append(span)
    for run in runs.values():
        run.spans.sort(key=lambda s: (s.start, s.span_id))
    return sorted(runs.values(), key=lambda r: r.spans[0].start)


def _build(run: _Run, path: str | None, shared: list[LoadWarning]) -> Conversation:
    warnings = list(shared)
    calls: dict[str, ToolCall] = {}
    messages: list[Message] = []
    usage: dict[int, Usage] = {}
    events: list[LogEvent] = []
    summaries: set[int] = set()
    models: Counter[str] = Counter()
    context: list[Message] = []  # what the previous call saw plus its output
    for call in (_call(span, warnings, calls) for span in run.spans):
        inputs = call.inputs
        shared_prefix = 0
        while (shared_prefix < min(len(context), len(inputs))
               and context[shared_prefix].same_content(inputs[shared_prefix])):
            shared_prefix += 1
        if context and shared_prefix < len(context):
            _compacted(call, context, inputs, shared_prefix, messages, events, summaries, usage, warnings)
        else:
            messages += inputs[shared_prefix:]
        if call.output is None:
            warnings.append(LoadWarning(f"span {call.span.span_id} ({call.span.name}): no output message; the "
                                        "call is not loaded", field="gen_ai.output.messages"))
            context = list(inputs)
            continue
        meta: dict[str, Any] = {"span_id": call.span.span_id, "timestamp": call.span.start / 1e9}
        if call.model:
            meta["model"] = call.model
            models[call.model] += 1
        messages.append(Message("assistant", call.output.texts, call.output.tool_calls,
                                reasoning=call.output.reasoning, meta=meta))
        if call.usage is not None:
            usage[len(messages) - 1] = call.usage
        context = [*inputs, call.output]
    first = run.spans[0]
    source = Source("otel-genai", path, run.key, (*warnings, *structural_warnings(messages)),
                    model=models.most_common(1)[0][0] if models else None,
                    meta={k: v for k, v in (("service", first.resource.get("service.name")),
                                            ("trace_id", first.trace_id)) if isinstance(v, str)})
    return Conversation(tuple(messages), (), source, usage=usage, events=tuple(events),
                        log_summary_indices=frozenset(summaries))


def _compacted(call: _Call, context: list[Message], inputs: list[Message], prefix: int, messages: list[Message],
               events: list[LogEvent], summaries: set[int], usage: dict[int, Usage],
               warnings: list[LoadWarning]) -> None:
    """A call whose input is not an extension of the previous context: the agent compacted it in between."""
    known = [any(m.same_content(c) for c in context) for m in inputs]
    last_known = max((i for i, k in enumerate(known) if k), default=-1)
    at = len(messages)
    inserted = [m for i, m in enumerate(inputs) if i > prefix - 1 and not known[i] and i < last_known]
    for message in inserted:
        summaries.add(len(messages))
        messages.append(message.with_meta(log_compaction_summary=True))
    messages += [m for i, m in enumerate(inputs) if not known[i] and i > last_known]
    previous = max(usage.items())[1] if usage else None
    events.append(LogEvent(at, "compaction" if inserted else "truncation",
                           pre_tokens=previous.prompt_tokens + previous.output_tokens if previous else None,
                           post_tokens=call.usage.prompt_tokens if call.usage else None,
                           summary="\n".join(m.text for m in inserted) or None))
    warnings.append(LoadWarning(f"span {call.span.span_id} ({call.span.name}): its input is not an extension of "
                                f"the previous call's context (they agree on the first {prefix} messages): the agent "
                                "compacted or edited its history here", field="gen_ai.input.messages"))


def read(doc: Document) -> list[Conversation]:
    warnings: list[LoadWarning] = []
    spans = spans_of(doc, warnings)
    runs = _group(spans)
    if not runs:
        raise LoadError(doc.path, "no LLM spans (gen_ai.operation.name chat/text_completion/generate_content, or "
                        "openinference.span.kind LLM) in these traces", field="attributes")
    return [_build(run, doc.path, warnings if i == 0 else []) for i, run in enumerate(runs)]


def detect(doc: Document) -> str | None:
    if doc.kind not in ("json", "jsonl"):
        return "not JSON"
    for _, record in list(iter_records(doc))[:50]:
        if is_otlp(record) or is_sdk_span(record):
            return None
    return "no OTLP JSON ('resourceSpans') and no span objects ('context.span_id', 'attributes')"


register_format(
    FormatInfo(
        name="otel-genai",
        title="OpenTelemetry GenAI / OpenInference traces",
        detect=detect,
        read=read,
        extensions=(".json", ".jsonl"),
        description="OTLP JSON trace exports and SDK span lines with GenAI semantic-convention or OpenInference "
        "LLM spans: one conversation per session, agent invocation or trace; compactions found where a call's "
        "input stops extending the previous one.",
        reads="OTLP JSON (`resourceSpans`, one object or one per line) and the SDK's `span.to_json()` lines. LLM "
        "spans (`gen_ai.operation.name` chat/text_completion/generate_content, OpenInference `LLM`) with "
        "`gen_ai.system_instructions`, `gen_ai.input.messages`/`gen_ai.output.messages` (text, tool_call, "
        "tool_call_response, reasoning parts) or `llm.input_messages.N.message.*`/`llm.output_messages…`; usage "
        "(`gen_ai.usage.*`, `llm.token_count.*`, cached tokens as cache reads/writes) and model per call. One "
        "conversation per `session.id`/`gen_ai.conversation.id`, agent invocation root or trace, its calls in time "
        "order; where an input does not extend the previous context, a log compaction (new messages as its "
        "summary) and a warning.",
        leaves_out="Spans without captured message content (instrumentations record it only when content capture "
        "is on); the older event-based form (`gen_ai.user.message`/`gen_ai.choice` log records: current "
        "instrumentations put content on spans, and log records are not in trace exports); tool spans "
        "(`execute_tool`): their results reach the conversation through the next call's input; embeddings and "
        "retrieval spans.",
    )
)
