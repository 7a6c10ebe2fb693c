"""SWE-agent ``.traj`` trajectories: the ``history`` the model was prompted with, one conversation per agent.

A ``.traj`` file is ``{"history": [...], "trajectory": [...], "info": {...}, "replay_config", "environment"}``. The
``history`` entries are what SWE-agent turns into model messages (``role``, ``content`` as text or text parts,
``message_type``, ``agent``); ``trajectory`` only repeats the steps for humans, so it is not read. Rules:

* **Function calling**: assistant entries carry OpenAI ``tool_calls``; results are role ``tool`` entries whose
  ``tool_call_ids`` list names the call (SWE-agent sends only the first id, as ``tool_call_id``). Claude
  ``thinking_blocks`` on an assistant entry become its reasoning.
* **Text actions** (thought-action runs): the model writes its command in a fenced block of its reply (the entry's
  ``action``), and the output comes back as the next ``user`` entry (``message_type: "observation"``, or no
  ``message_type`` in older files). Each action becomes a tool call named after its command word (``open``,
  ``edit``, ``python``, ``submit``…) with arguments ``{"command": <action>}``, the reply keeps its thought (the
  text without the block), and the observation becomes the call's tool result (:mod:`._text_actions`), so
  tool-result strategies act on them as they would on function calls. The final action (``submit``) gets the
  output the agent recorded for it: the last ``trajectory`` step's observation, else ``info.submission``, else a
  stand-in. Every message keeps ``message_type`` (and ``agent``) in ``meta`` because SWE-agent's history
  processors select on it.
* **Demonstrations** (``is_demo: true``) were part of the prompt, so they are kept, flagged ``meta["is_demo"]``.
* SWE-agent prompts each agent with its own entries only, so each ``agent`` name is its own conversation.
  ``RetryAgent`` files (``{"attempts": [traj, ...]}``) give one conversation per attempt: ``attempt-0``, ...
  Conversation ids are the agent name (``main``), or ``attempt-N`` / ``attempt-N/<agent>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Source
from ..conversation import structural_warnings
from ..conversation import user
from ..errors import LoadError
from ._fields import as_mapping
from ._fields import as_text
from ._fields import first_misfit
from ._fields import type_name
from ._text_actions import command_name
from ._text_actions import observation_result
from ._text_actions import with_text_actions
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import read_messages_with_meta

_ROLES = ("system", "user", "assistant", "tool")
_META_KEYS = ("message_type", "agent", "is_demo")
#: the result text of a final action whose output the trajectory does not hold
FINAL_STAND_IN = "(the run ended with this action; its output is not recorded — Compaction Lab stand-in text)"


def _histories(value: Any) -> list[tuple[str, list[Any], Mapping[str, Any]]] | None:
    """(attempt prefix, history list, the trajectory object holding it) triples, or None when the document is no
    SWE-agent trajectory."""
    if not isinstance(value, Mapping):
        return None
    attempts = value.get("attempts")
    if isinstance(attempts, list) and attempts and all(isinstance(a, Mapping) for a in attempts):
        found = [(f"attempt-{i}", a.get("history"), a) for i, a in enumerate(attempts)]
        if all(isinstance(h, list) for _, h, _ in found):
            return found
    history = value.get("history")
    if isinstance(history, list) and ("trajectory" in value or "info" in value):
        return [("", history, value)]
    return None


def detect(doc: Document) -> str | None:
    """None when ``doc`` is a SWE-agent trajectory, else why not."""
    if doc.kind != "json":
        return "not a single JSON document"
    histories = _histories(doc.value)
    if histories is None:
        return "no SWE-agent 'history' list next to 'trajectory'/'info' (nor RetryAgent 'attempts')"
    entries = [e for _, h, _ in histories for e in h]
    if not entries:
        return "the history is empty"
    misfit = first_misfit(entries, lambda e: isinstance(e, Mapping) and e.get("role") in _ROLES)
    if misfit is not None:
        return f"history entry {misfit} has no role (system/user/assistant/tool)"
    return None


def _thinking(entry: Mapping[str, Any]) -> str | None:
    blocks = entry.get("thinking_blocks")
    if not isinstance(blocks, list):
        return None
    texts = [t for t in (as_text(as_mapping(b).get("thinking")) for b in blocks) if t]
    return "\n".join(texts) or None


def _as_openai(entry: Mapping[str, Any], where: str, warnings: list[LoadWarning]) -> dict[str, Any]:
    """The chat-completions message SWE-agent builds from one history entry."""
    message: dict[str, Any] = {"role": entry["role"], "content": entry.get("content")}
    if entry["role"] == "tool":
        ids = entry.get("tool_call_ids")
        if isinstance(ids, list) and ids and isinstance(ids[0], str):
            message["tool_call_id"] = ids[0]
        else:
            warnings.append(LoadWarning(f"{where}: tool entry without 'tool_call_ids'; its call is unknown",
                                        field="tool_call_ids"))
    elif entry["role"] == "assistant":
        if entry.get("tool_calls") is not None:
            message["tool_calls"] = entry["tool_calls"]
        thinking = _thinking(entry)
        if thinking:
            message["reasoning_content"] = thinking
    return message


def _conversation(prefix: str, agent: str, several_agents: bool, entries: list[tuple[int, Mapping[str, Any]]],
                  path: str | None, warnings: list[LoadWarning], traj: Mapping[str, Any]) -> Conversation:
    warnings = list(warnings)
    raw, metas = [], []
    for index, entry in entries:
        raw.append(_as_openai(entry, f"history entry {index}", warnings))
        metas.append({k: entry[k] for k in _META_KEYS if k in entry})
    messages, _, read_warnings = read_messages_with_meta(raw, metas, path)
    actions = {i: entry["action"] for i, (_, entry) in enumerate(entries)
               if entry["role"] == "assistant" and not entry.get("tool_calls") and isinstance(entry.get("action"), str)}
    messages = with_text_actions(messages, actions, lambda i: f"action-{entries[i][0]}", _is_observation)
    messages = _with_final_output(messages, traj)
    warnings += read_warnings + structural_warnings(messages)
    parts = [p for p in (prefix, agent if several_agents or not prefix else "") if p]
    return Conversation(tuple(messages), (), Source("swe-agent", path, "/".join(parts), tuple(warnings)))


def _is_observation(_index: int, message: Message) -> bool:
    """A user entry that answers the action before it (not a demonstration, not another kind of message)."""
    return not message.meta.get("is_demo") and message.meta.get("message_type") in (None, "observation")


def _with_final_output(messages: list[Message], traj: Mapping[str, Any]) -> list[Message]:
    """``messages`` with a result for the text action the run ended with (no observation follows it in the
    history): the output SWE-agent recorded for it in ``trajectory``, else its ``info.submission``, else a stand-in."""
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant" or not last.meta.get("text_action"):
        return messages
    (call,) = last.tool_calls
    action = str(call.arguments["command"])
    steps = traj.get("trajectory")
    recorded = next((as_text(as_mapping(step).get("observation")) for step in reversed(steps)
                     if as_text(as_mapping(step).get("action")) is not None
                     and as_mapping(step)["action"].strip() == action.strip()), None) if isinstance(steps, list) else None
    source = "trajectory"
    if recorded is None and command_name(action) == "submit":
        recorded, source = as_text(as_mapping(traj.get("info")).get("submission")), "info.submission"
    if recorded is None:
        return [*messages, observation_result(user(FINAL_STAND_IN, stand_in=True), call)]
    return [*messages, observation_result(user(recorded, final_output=source), call)]


def _read_history(prefix: str, history: list[Any], path: str | None, traj: Mapping[str, Any]) -> list[Conversation]:
    by_agent: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    warnings: list[LoadWarning] = []
    where = f"{prefix} " if prefix else ""
    for index, entry in enumerate(history):
        if not isinstance(entry, Mapping):
            warnings.append(LoadWarning(f"{where}history entry {index}: skipped, expected an object, got "
                                        f"{type_name(entry)}", field="history"))
            continue
        if entry.get("role") not in _ROLES:
            warnings.append(LoadWarning(f"{where}history entry {index}: skipped, unknown role {entry.get('role')!r}",
                                        field="role"))
            continue
        agent = as_text(entry.get("agent")) or "main"
        by_agent.setdefault(agent, []).append((index, entry))
    if not by_agent:
        return []
    several = len(by_agent) > 1
    return [_conversation(prefix, agent, several, entries, path, warnings, traj) for agent, entries in by_agent.items()]


def read(doc: Document) -> list[Conversation]:
    """One conversation per attempt and agent."""
    histories = _histories(doc.value)
    if histories is None:
        raise LoadError(doc.path, "expected a SWE-agent trajectory with a 'history' list", field="history")
    return [conv for prefix, history, traj in histories for conv in _read_history(prefix, history, doc.path, traj)]


register_format(
    FormatInfo(
        name="swe-agent",
        title="SWE-agent trajectory",
        detect=detect,
        read=read,
        extensions=(".traj", ".json"),
        description="SWE-agent .traj files: the prompted 'history' (function calling or text actions), one "
        "conversation per agent, RetryAgent attempts included.",
        reads="The history the model was prompted with, one conversation per agent and RetryAgent attempt: function "
        "calls and their tool results, and text actions turned into tool calls (the command in the reply's fenced "
        "block, named after its command word, with the observation that follows as its result; the final submit "
        "gets the output the trajectory recorded), demonstrations flagged, message types kept.",
        leaves_out="The trajectory's step list (it repeats the history for humans). Text actions are text to the "
        "model: the tool calls are our reading of them, and their JSON form counts a few characters differently "
        "from the fenced block the model wrote.",
    )
)
