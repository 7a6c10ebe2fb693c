"""tau-bench and tau2-bench results files: one conversation per task run.

**tau-bench** (``historical_trajectories/*.json``, ``results/*.json``): a list of task results
``{"task_id", "trial", "reward", "info", "traj": [chat-completions messages]}`` (or one such object). ``traj`` is the
agent's own prompt history, system prompt included; each result is a conversation with id
``task<task_id>-trial<trial>``.

**tau2-bench** (``data/simulations/*.json``): ``{"info", "tasks", "simulations": [{"id", "task_id", "trial",
"messages": [...]}]}``. Messages carry ``role`` (assistant/user/tool), ``content``, ``tool_calls`` as
``{"id", "name", "arguments", "requestor"}``, tool results as ``{"role": "tool", "id": <call id>, "requestor",
"error"}``, ``turn_idx``, ``usage`` and ``cost``. Rules:

* The agent's LLM calls are the assistant messages; their ``usage`` is the call's :class:`Usage`.
* The user simulator is an LLM too: its text turns are user messages (its usage is kept in ``meta`` only), and it
  calls tools on its own device. Those calls stay where they are, as user messages with tool calls answered by tool
  messages, each flagged ``meta["requestor"] = "user"`` and ``meta["hidden_from_agent"] = True``: the agent's model
  never saw them.
* The fixed greeting tau2 opens with (an assistant message no model produced) is flagged ``meta["generated"] = False``.
* For the default agent (``info.agent_info.implementation == "llm_agent"``) the system prompt is rebuilt from
  ``info.environment_info.policy`` the way that agent formats it, flagged ``meta["reconstructed"]``; tool schemas
  come from ``info.environment_info.tool_defs`` when the file has them.
* Conversation ids are the ``task_id``, with ``/trial-N`` added when a task ran several times (else the
  simulation ``id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Source
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import ToolSchema
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._fields import as_mapping
from ._fields import as_text
from ._fields import detect_json_items
from ._fields import first_misfit
from ._fields import misfit_reason
from ._fields import type_name
from ._transcript import append_read
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import parse_arguments
from .openai_chat import read_messages
from .openai_chat import usage_from_openai

#: tau2-bench ``LLMAgent``: its instruction and the system prompt template it fills with the domain policy
_TAU2_AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)
_TAU2_SYSTEM_PROMPT = "<instructions>\n{instruction}\n</instructions>\n<policy>\n{policy}\n</policy>"


def _unique_ids(ids: list[str]) -> list[str]:
    """The ids, with ``#2``, ``#3``… appended to repeats so every conversation can be selected."""
    seen: dict[str, int] = {}
    out = []
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
        out.append(i if seen[i] == 1 else f"{i}#{seen[i]}")
    return out


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return str(value) if isinstance(value, (str, int, float)) else None


# --------------------------------------------------------------------------------------------------- tau-bench
def _results(value: Any) -> list[Any] | None:
    if isinstance(value, Mapping) and "traj" in value:
        return [value]
    return value if isinstance(value, list) else None


def detect_tau(doc: Document) -> str | None:
    """None when ``doc`` holds tau-bench task results, else why not."""
    return detect_json_items(
        doc, _results, "no task result (an object, or a list of objects, with 'task_id' and a 'traj' list)",
        misfit_reason(lambda r: isinstance(r, Mapping) and "task_id" in r and isinstance(r.get("traj"), list),
                      "result {} has no 'task_id' and 'traj' list"))


def read_tau(doc: Document) -> list[Conversation]:
    """One conversation per task result."""
    results = _results(doc.value)
    if results is None:
        raise LoadError(doc.path, "expected tau-bench task results with 'traj' lists", field="traj")
    skipped: list[LoadWarning] = []
    found: list[tuple[str, list[Message], list[LoadWarning]]] = []
    for i, r in enumerate(results):
        if not isinstance(r, Mapping) or not isinstance(r.get("traj"), list):
            skipped.append(LoadWarning(f"result {i}: skipped, expected an object with a 'traj' list", field="traj"))
            continue
        messages, _, warnings = read_messages(r["traj"], doc.path)
        task, trial = _scalar_text(r.get("task_id")), _scalar_text(r.get("trial"))
        name = f"task{task}" if task is not None else f"result{i}"
        found.append((name + (f"-trial{trial}" if trial is not None else ""), messages, warnings))
    ids = _unique_ids([name for name, _, _ in found])
    return [
        Conversation(tuple(messages), (), Source("tau-bench", doc.path, cid,
                                                 tuple(skipped + warnings + structural_warnings(messages))))
        for cid, (_, messages, warnings) in zip(ids, found, strict=True)
    ]


# --------------------------------------------------------------------------------------------------- tau2-bench
def detect_tau2(doc: Document) -> str | None:
    """None when ``doc`` is a tau2-bench results file, else why not."""
    if doc.kind != "json":
        return "not a single JSON document"
    value = doc.value
    if not isinstance(value, Mapping) or not isinstance(value.get("simulations"), list):
        return "no object with a 'simulations' list"
    misfit = first_misfit(value["simulations"],
                          lambda s: isinstance(s, Mapping) and isinstance(s.get("messages"), list))
    if misfit is not None:
        return f"simulation {misfit} has no 'messages' list"
    return None


def _tau2_system(info: Mapping[str, Any]) -> Message | None:
    policy = as_text(as_mapping(info.get("environment_info")).get("policy"))
    if policy is None or as_mapping(info.get("agent_info")).get("implementation") != "llm_agent":
        return None
    text = _TAU2_SYSTEM_PROMPT.format(instruction=_TAU2_AGENT_INSTRUCTION, policy=policy)
    return Message("system", (text,), meta={"reconstructed": "tau2 llm_agent system prompt from the domain policy"})


def _tau2_tools(info: Mapping[str, Any]) -> list[ToolSchema]:
    defs = as_mapping(info.get("environment_info")).get("tool_defs")
    if isinstance(defs, Mapping):
        items = list(defs.items())
    else:
        items = [(None, d) for d in defs] if isinstance(defs, list) else []
    tools = []
    for key, raw in items:
        raw = as_mapping(raw)
        fn = as_mapping(raw.get("function")) or raw
        name = as_text(fn.get("name")) or (key if isinstance(key, str) else None)
        if name is None:
            continue
        description = as_text(fn.get("description")) or as_text(fn.get("doc")) or ""
        params = as_mapping(fn.get("parameters")) or as_mapping(fn.get("params"))
        tools.append(ToolSchema(name, description, dict(params)))
    return tools


def _tau2_calls(raw: Any, where: str, warnings: list[LoadWarning]) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        warnings.append(LoadWarning(f"{where}: 'tool_calls' is {type_name(raw)}, expected a list; ignored",
                                    field="tool_calls"))
        return []
    calls = []
    for j, tc in enumerate(raw):
        tc = as_mapping(tc)
        name = as_text(tc.get("name"))
        if name is None:
            warnings.append(LoadWarning(f"{where}: tool call {j} skipped, expected a 'name'", field="tool_calls"))
            continue
        calls.append(ToolCall(as_text(tc.get("id")), name, parse_arguments(tc.get("arguments"), where, warnings)))
    return calls


def _tau2_message(m: Mapping[str, Any], where: str, calls: dict[str, ToolCall],
                  warnings: list[LoadWarning]) -> tuple[Message, Usage | None] | None:
    role = m.get("role")
    content = m.get("content")
    if content is not None and not isinstance(content, str):
        warnings.append(LoadWarning(f"{where}: 'content' is {type_name(content)}, expected text; ignored",
                                    field="content"))
        content = None
    texts = (content,) if content else ()
    meta: dict[str, Any] = {k: m[k] for k in ("turn_idx", "timestamp", "cost") if _scalar_text(m.get(k)) is not None}
    requestor = as_text(m.get("requestor"))
    if role == "tool":
        call_id = as_text(m.get("id"))
        origin = calls.get(call_id) if call_id else None
        origin = origin or ToolCall(call_id, "unknown_tool")
        if requestor:
            meta["requestor"] = requestor
        if requestor == "user" or (origin.extra or {}).get("requestor") == "user":
            meta["hidden_from_agent"] = True
        return Message("tool", tool_result=ToolResult(origin, content or "", m.get("error") is True), meta=meta), None
    if role not in ("assistant", "user", "system"):
        warnings.append(LoadWarning(f"{where}: skipped, unknown role {role!r}", field="role"))
        return None
    tool_calls = _tau2_calls(m.get("tool_calls"), where, warnings)
    if role == "user" and tool_calls:
        meta.update(requestor="user", hidden_from_agent=True)
        tool_calls = [ToolCall(c.id, c.name, c.arguments, {"requestor": "user"}) for c in tool_calls]
    for c in tool_calls:
        if c.id:
            calls[c.id] = c
    usage = usage_from_openai(m.get("usage"))
    if role == "assistant" and usage is None and m.get("raw_data") is None and m.get("turn_idx") == 0:
        meta["generated"] = False
    if role == "user" and usage is not None:
        meta["user_simulator_usage"] = dict(m["usage"])
    message = Message(role, texts, tuple(tool_calls), meta=meta)
    return message, (usage if role == "assistant" else None)


def _tau2_conversation(sim: Mapping[str, Any], cid: str, system: Message | None, tools: list[ToolSchema],
                       path: str | None, warnings: list[LoadWarning]) -> Conversation:
    warnings = list(warnings)
    messages: list[Message] = [system] if system else []
    usage: dict[int, Usage] = {}
    calls: dict[str, ToolCall] = {}
    for j, raw in enumerate(sim["messages"]):
        where = f"message {j}"
        if not isinstance(raw, Mapping):
            warnings.append(LoadWarning(f"{where}: skipped, expected an object, got {type_name(raw)}"))
            continue
        append_read(messages, usage, _tau2_message(raw, where, calls, warnings))
    warnings += structural_warnings(messages)
    return Conversation(tuple(messages), tuple(tools), Source("tau2-bench", path, cid, tuple(warnings)), usage=usage)


def _tau2_ids(sims: list[tuple[int, Mapping[str, Any]]]) -> list[str]:
    tasks = [_scalar_text(s.get("task_id")) for _, s in sims]
    names = []
    for (i, s), task in zip(sims, tasks, strict=True):
        if task is None:
            names.append(as_text(s.get("id")) or f"simulation-{i}")
        elif tasks.count(task) > 1 and _scalar_text(s.get("trial")) is not None:
            names.append(f"{task}/trial-{_scalar_text(s.get('trial'))}")
        else:
            names.append(task)
    return _unique_ids(names)


def read_tau2(doc: Document) -> list[Conversation]:
    """One conversation per simulation."""
    value = doc.value
    if not isinstance(value, Mapping) or not isinstance(value.get("simulations"), list):
        raise LoadError(doc.path, "expected tau2-bench results with a 'simulations' list", field="simulations")
    info = as_mapping(value.get("info"))
    system, tools = _tau2_system(info), _tau2_tools(info)
    skipped: list[LoadWarning] = []
    sims: list[tuple[int, Mapping[str, Any]]] = []
    for i, s in enumerate(value["simulations"]):
        if isinstance(s, Mapping) and isinstance(s.get("messages"), list):
            sims.append((i, s))
        else:
            skipped.append(LoadWarning(f"simulation {i}: skipped, expected an object with a 'messages' list",
                                       field="simulations"))
    return [_tau2_conversation(s, cid, system, tools, doc.path, skipped)
            for (_, s), cid in zip(sims, _tau2_ids(sims), strict=True)]


register_format(
    FormatInfo(
        name="tau-bench",
        title="tau-bench results",
        detect=detect_tau,
        read=read_tau,
        description="tau-bench task results (a list of {task_id, trial, reward, info, traj}); one conversation "
        "per task trial.",
        reads="A list of task results (or one): each traj, the agent's own chat-completions prompt history with "
        "its system prompt, tool calls and results, is a conversation with id task<task_id>-trial<trial>.",
        leaves_out="Usage and tool schemas (the results file has neither), and the reward and info of each "
        "result.",
    )
)

register_format(
    FormatInfo(
        name="tau2-bench",
        title="tau2-bench results",
        detect=detect_tau2,
        read=read_tau2,
        description="tau2-bench results ({info, tasks, simulations}); one conversation per simulation, the user "
        "simulator's own tool calls flagged as hidden from the agent.",
        reads="Each simulation's messages: the agent's turns as LLM calls with their usage, the user simulator's "
        "text as user messages, the simulator's own tool calls kept in place but flagged hidden from the agent, "
        "tool results with errors, for the default llm_agent the system prompt rebuilt from the domain policy "
        "(flagged reconstructed), and tool schemas from the file's tool_defs when it has them.",
        leaves_out="The user simulator's usage (kept in message meta only, not as LLM calls); the system prompt of "
        "other agent implementations (the file does not hold it); task definitions, rewards and evaluation "
        "results.",
    )
)
