"""OpenHands event streams: saved trajectories (a JSON list of events, ``{"trajectory": [...]}``, or one event per
JSONL line) and evaluation outputs (``output.jsonl`` records ``{"instance_id", "history": [...]}``, one conversation
per instance).

Each event has ``id``, ``source`` (user / agent / environment), ``action`` or ``observation``, ``message``, ``args``
or ``content`` + ``extras``, ``cause`` and, for function-calling agents, ``tool_call_metadata`` (``function_name``,
``tool_call_id``, ``model_response``, ``total_calls_in_response``). The events become the messages OpenHands'
``ConversationMemory`` sends to the model:

* An agent action with ``tool_call_metadata`` is an LLM call: the assistant message is the ``model_response`` message
  (its text when not blank, and all its tool calls). Several actions from one response (same ``model_response.id``)
  are one assistant message. As in OpenHands, the message is placed once every one of its calls has a result, and is
  followed by the results in call order; a response whose calls are never all answered is placed at the end.
  Its usage is ``model_response.usage`` (or the matching ``llm_metrics.token_usages`` entry).
* An observation is the result of the call named by its ``tool_call_metadata.tool_call_id`` (or, without metadata,
  of the action its ``cause`` points to); otherwise it is a user message. Its text is what the agent shows the model:
  command output with the working-directory / interpreter / exit-code lines, the ``[Error occurred in processing
  last action]`` suffix, the editor's ``formatted_output_and_error``, OpenHands' default ``max_message_chars``
  (30,000) middle truncation, and so on. Recalled workspace context and micro-agent knowledge are rendered after
  OpenHands' prompt templates (``meta["rendered"] = "approximate"``: template whitespace varies by version).
* User ``message`` actions are user messages (with their images); agent ``message`` actions without tool calls and
  ``finish`` actions (their thought, as OpenHands sends it) are assistant text. The ``system`` action is the system
  message and its ``tools`` the tool schemas. A ``condensation`` action is recorded as a compaction
  :class:`LogEvent` with its summary.
* Events with nothing the model sees (agent state changes, ``recall`` requests, null observations, loop-recovery
  notices) are skipped silently. An agent action without ``tool_call_metadata`` (a run without function calling)
  becomes assistant text from its thought, with one warning for the run.
* Consecutive user messages are separated by a blank line, as OpenHands formats them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import ResultPart
from ..conversation import Role
from ..conversation import ToolCall
from ..conversation import ToolResult
from ..conversation import ToolSchema
from ..conversation import Usage
from ..errors import LoadError
from ._fields import UnknownTypes
from ._fields import as_mapping
from ._fields import as_text
from ._fields import first_misfit
from ._fields import type_name
from ._transcript import Transcript
from .base import Document
from .base import FormatInfo
from .base import register_format
from .openai_chat import read_messages
from .openai_chat import usage_from_openai

#: OpenHands' default ``LLMConfig.max_message_chars``: longer observations are cut in the middle
MAX_MESSAGE_CHARS = 30_000
_TRUNCATION_NOTE = "\n[... Observation truncated due to length ...]\n"
#: what OpenHands tells the model after listing the runtime's web hosts
_WEB_SERVER_NOTE = ("When starting a web server, use the corresponding ports. You should also\n"
                    "set any options to allow iframes and CORS requests, and allow the server to\n"
                    "be accessed from any host (e.g. 0.0.0.0).\n"
                    "For example, if you are using vite.config.js, you should set server.host and server.allowedHosts "
                    "to true")
#: events that put nothing in the model's context
_SILENT_ACTIONS = {"change_agent_state", "recall", "null", "condensation_request", "pause", "resume", "reject"}
_SILENT_OBSERVATIONS = {"null", "agent_state_changed", "loop_recovery", "loop_detection"}
#: observation types whose text OpenHands cuts at ``max_message_chars``
_TRUNCATED = {"delegate", "think", "task_tracking", "condense", "agent_condensation", "download", "mcp"}


def _events(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        for key in ("trajectory", "history", "events"):
            if isinstance(value.get(key), list):
                events: list[Any] = value[key]
                return events
    return None


def _looks_like_events(events: list[Any]) -> str | None:
    if not events:
        return "the event list is empty"
    misfit = first_misfit(events, lambda e: isinstance(e, Mapping) and ("action" in e or "observation" in e))
    if misfit is not None:
        return f"event {misfit} has neither 'action' nor 'observation'"
    if not any(isinstance(as_mapping(e).get("source"), str) for e in events[:50]):
        return "no event has a 'source' (user/agent/environment)"
    return None


def _is_evaluation_output(values: list[Any]) -> bool:
    """Whether JSONL records are mostly evaluation records ``{"instance_id", "history": [...]}``."""
    return first_misfit(values, lambda v: isinstance(as_mapping(v).get("history"), list)) is None


def detect(doc: Document) -> str | None:
    """None when ``doc`` is an OpenHands event list or evaluation output, else why not."""
    if doc.kind == "jsonl":
        values = [value for _, value in doc.records]
        if _is_evaluation_output(values):
            histories = [as_mapping(v).get("history") for v in values[:20]]
            if any(isinstance(h, list) and _looks_like_events(h) is None for h in histories):
                return None
            return "no record's 'history' is a list of OpenHands events"
        why = _looks_like_events(values)
        return None if why is None else f"neither evaluation records with a 'history' nor one event per line: {why}"
    events = _events(doc.value)
    if events is None:
        return "no list of OpenHands events (a list, or an object with 'trajectory'/'history')"
    return _looks_like_events(events)


# --------------------------------------------------------------------------------------------------- text rules
def truncate(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """OpenHands' middle truncation of a long observation."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + _TRUNCATION_NOTE + text[-half:]


def command_output(content: str, extras: Mapping[str, Any]) -> str:
    """A command observation as the agent sees it: output, then the working directory, interpreter and exit code."""
    meta = as_mapping(extras.get("metadata"))
    exit_code = meta.get("exit_code", extras.get("exit_code", -1))
    text = f"{as_text(meta.get('prefix')) or ''}{content}{as_text(meta.get('suffix')) or ''}"
    if as_text(meta.get("working_dir")):
        text += f"\n[Current working directory: {meta['working_dir']}]"
    if as_text(meta.get("py_interpreter_path")):
        text += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != -1:
        text += f"\n[Command finished with exit code {exit_code}]"
    return text


def _edit_output(content: str, extras: Mapping[str, Any]) -> tuple[str, bool]:
    """(text, exact): the editor's own output, a new-file note, or (older LLM editor) the stored diff."""
    if extras.get("impl_source") == "oh_aci" and isinstance(extras.get("formatted_output_and_error"), str):
        return extras["formatted_output_and_error"], True
    if extras.get("prev_exist") is False:
        return f"[New file {as_text(extras.get('path')) or ''} is created with the provided content.]\n", True
    return content, False


def _ipython_output(content: str) -> str:
    return "\n".join(
        "![image](data:image/png;base64, ...) already displayed to user"
        if "![image](data:image/png;base64," in line else line
        for line in content.split("\n")
    )


def _images(urls: Any) -> tuple[Image, ...]:
    if not isinstance(urls, list):
        return ()
    out = []
    for url in urls:
        if isinstance(url, str) and url.strip():
            mime = url[5:].split(";", 1)[0] if url.startswith("data:") else None
            out.append(Image(mime_type=mime or None, source="base64" if url.startswith("data:") else url))
    return tuple(out)


def _extra_info(agents: list[Mapping[str, Any]]) -> str:
    """Micro-agent knowledge, one ``<EXTRA_INFO>`` block per triggered agent."""
    return "".join(
        f"\n<EXTRA_INFO>\nThe following information has been included based on a keyword match for "
        f"\"{as_text(a.get('trigger')) or ''}\".\nIt may or may not be relevant to the user's request.\n\n"
        f"{as_text(a.get('content')) or ''}\n</EXTRA_INFO>\n"
        for a in agents
    )


def _workspace_context(extras: Mapping[str, Any]) -> str:
    """Repository, instructions and runtime information, after OpenHands' ``additional_info`` template."""
    parts = []
    repo, directory = as_text(extras.get("repo_name")), as_text(extras.get("repo_directory"))
    if repo or directory:
        parts.append(f"<REPOSITORY_INFO>\nAt the user's request, repository {repo or ''} has been cloned to the "
                     f"current working directory {directory or ''}.\n</REPOSITORY_INFO>")
    if (as_text(extras.get("repo_instructions")) or "").strip():
        parts.append(f"<REPOSITORY_INSTRUCTIONS>\n{extras['repo_instructions']}\n</REPOSITORY_INSTRUCTIONS>")
    runtime = []
    hosts = as_mapping(extras.get("runtime_hosts"))
    if hosts:
        runtime.append("The user has access to the following hosts for accessing a web application,\neach of which "
                       "has a corresponding port:\n" + "\n".join(f"* {h} (port {p})" for h, p in hosts.items())
                       + "\n" + _WEB_SERVER_NOTE)
    if as_text(extras.get("additional_agent_instructions")):
        runtime.append(extras["additional_agent_instructions"])
    secrets = as_mapping(extras.get("custom_secrets_descriptions"))
    if secrets:
        runtime.append("<CUSTOM_SECRETS>\nYou are have access to the following environment variables\n"
                       + "\n".join(f"* $**{k}**: {v}" for k, v in secrets.items()) + "\n</CUSTOM_SECRETS>")
    if as_text(extras.get("date")):
        runtime.append(f"Today's date is {extras['date']} (UTC).")
    if runtime:
        parts.append("<RUNTIME_INFORMATION>\n" + "\n".join(runtime) + "\n</RUNTIME_INFORMATION>")
    if as_text(extras.get("conversation_instructions")):
        parts.append(f"<CONVERSATION_INSTRUCTIONS>\n{extras['conversation_instructions']}\n"
                     "</CONVERSATION_INSTRUCTIONS>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------- reader
@dataclass
class _Response:
    """An LLM response whose assistant message waits until every one of its calls has a result."""

    message: Message
    usage: Usage | None
    calls: tuple[str, ...]
    event_ids: list[Any]

    def placed(self) -> Message:
        return self.message.with_meta(openhands_event_ids=tuple(self.event_ids))


@dataclass
class _Reader(Transcript):
    """Turns one event list into the messages OpenHands would send, in its order: a :class:`Transcript` whose
    assistant messages wait in ``pending`` until their calls' results arrive."""

    path: str | None = None
    tools: list[ToolSchema] = field(default_factory=list)
    pending: dict[str, _Response] = field(default_factory=dict)
    results: dict[str, Message] = field(default_factory=dict)
    action_calls: dict[Any, str] = field(default_factory=dict)
    used_usage_ids: set[str] = field(default_factory=set)
    seen_agents: set[str] = field(default_factory=set)
    text_actions: int = 0
    unknown: UnknownTypes = field(default_factory=lambda: UnknownTypes("observation"))

    # ---- emitting
    def emit(self, message: Message, usage: Usage | None = None) -> None:
        if usage is not None:
            self.usage[len(self.messages)] = usage
        self.messages.append(message)

    def flush(self, final: bool = False) -> None:
        """Place every response whose calls all have results (all remaining ones when ``final``)."""
        for rid in list(self.pending):
            response = self.pending[rid]
            if final or all(c in self.results for c in response.calls):
                del self.pending[rid]
                self.emit(response.placed(), response.usage)
                for cid in response.calls:
                    if cid in self.results:
                        self.emit(self.results.pop(cid))
        if final:
            for message in self.results.values():
                self.emit(message)
            self.results.clear()

    # ---- actions
    def _usage_of(self, event: Mapping[str, Any], response: Mapping[str, Any], rid: str | None) -> Usage | None:
        found = usage_from_openai(response.get("usage"))
        if found is not None:
            return found
        entries = [u for u in _list(as_mapping(event.get("llm_metrics")).get("token_usages")) if isinstance(u, Mapping)]
        for entry in reversed(entries):
            entry_id = as_text(entry.get("response_id")) or ""
            if (rid is None or entry_id == rid) and entry_id not in self.used_usage_ids:
                self.used_usage_ids.add(entry_id)
                return usage_from_openai(entry)
        return None

    def _assistant_from_response(self, response: Mapping[str, Any], where: str) -> Message | None:
        choices = response.get("choices")
        choice = as_mapping(choices[0]) if isinstance(choices, list) and choices else {}
        raw = as_mapping(choice.get("message"))
        if not raw:
            return None
        content = raw.get("content")
        message = {"role": "assistant", "tool_calls": raw.get("tool_calls") or []}
        if isinstance(content, str) and content.strip():
            message["content"] = content
        out, _, warnings = read_messages([message], self.path)
        self.warnings += [replace(w, message=f"{where}: {w.message}") for w in warnings]
        return out[0] if out else None

    def tool_action(self, event: Mapping[str, Any], metadata: Mapping[str, Any], where: str) -> None:
        call_id = as_text(metadata.get("tool_call_id"))
        response = as_mapping(metadata.get("model_response"))
        rid = as_text(response.get("id")) or f"event-{event.get('id')}"
        if call_id and _hashable(event.get("id")) is not None:
            self.action_calls[event["id"]] = call_id
        if rid in self.pending:
            self.pending[rid].event_ids.append(event.get("id"))
            return
        message = self._assistant_from_response(response, where)
        if message is None:
            args = {k: v for k, v in as_mapping(event.get("args")).items() if k != "thought"}
            thought = as_text(as_mapping(event.get("args")).get("thought"))
            name = as_text(metadata.get("function_name")) or str(event.get("action"))
            message = Message("assistant", (thought,) if thought else (), (ToolCall(call_id, name, args),))
            self.warnings.append(LoadWarning(f"{where}: no model_response; the tool call is rebuilt from the "
                                             "action's args", field="tool_call_metadata.model_response"))
        for call in message.tool_calls:
            if call.id:
                self.calls[call.id] = call
        meta = {"response_id": rid}
        if event.get("timestamp") is not None:
            meta["timestamp"] = event["timestamp"]
        self.pending[rid] = _Response(message.with_meta(**meta), self._usage_of(event, response, rid),
                                      tuple(c.id for c in message.tool_calls if c.id), [event.get("id")])

    def action(self, event: Mapping[str, Any], where: str) -> None:
        kind, source = as_text(event.get("action")), event.get("source")
        args = as_mapping(event.get("args"))
        metadata = as_mapping(event.get("tool_call_metadata"))
        meta = {"openhands_event_id": event.get("id"), "openhands_action": kind}
        if kind in _SILENT_ACTIONS:
            return
        if kind == "system":
            self.emit(Message("system", _texts(args.get("content") or event.get("message")), meta=meta))
            _, self.tools, _ = read_messages([], self.path, cast("list[Any]", args.get("tools"))
                                             if isinstance(args.get("tools"), list) else [])
        elif kind == "condensation":
            summary = as_text(args.get("summary"))
            self.events.append(LogEvent(len(self.messages), "compaction", "auto", summary=summary))
        elif kind == "message":
            text = args.get("content") if isinstance(args.get("content"), str) else event.get("message")
            role: Role = "user" if source == "user" else "assistant"
            usage = self._agent_usage(event, metadata) if role == "assistant" else None
            self.emit(Message(role, _texts(text), images=_images(args.get("image_urls")), meta=meta), usage)
        elif kind == "finish":
            self.emit(*self._finish(event, args, metadata, meta))
        elif source == "agent" and metadata:
            self.tool_action(event, metadata, where)
        elif source == "user" and kind == "run":
            self.emit(Message("user", (f"User executed the command:\n{as_text(args.get('command')) or ''}",),
                              meta=meta))
        elif source == "agent":
            self.text_actions += 1
            thought = as_text(args.get("thought")) or as_text(event.get("message"))
            self.emit(Message("assistant", _texts(thought), meta=meta), self._agent_usage(event, metadata))
        elif source == "user" and as_text(event.get("message")):
            self.emit(Message("user", _texts(event["message"]), meta=meta))

    def _agent_usage(self, event: Mapping[str, Any], metadata: Mapping[str, Any]) -> Usage | None:
        response = as_mapping(metadata.get("model_response"))
        return self._usage_of(event, response, as_text(response.get("id")))

    def _finish(self, event: Mapping[str, Any], args: Mapping[str, Any], metadata: Mapping[str, Any],
                meta: dict[str, Any]) -> tuple[Message, Usage | None]:
        """The finish action as OpenHands sends it: its thought, with the response's text appended."""
        thought = as_text(args.get("thought")) or ""
        response = as_mapping(metadata.get("model_response"))
        if metadata:
            choices = response.get("choices")
            content = as_text(as_mapping(as_mapping(choices[0] if isinstance(choices, list) and choices else {})
                                         .get("message")).get("content")) or ""
            thought = (thought + "\n" + content if thought != content else thought) if thought else content
        if as_text(args.get("final_thought")):
            meta["final_thought"] = args["final_thought"]
        role: Role = "user" if event.get("source") == "user" else "assistant"
        usage = self._agent_usage(event, metadata) if role == "assistant" else None
        return Message(role, _texts(thought), meta=meta), usage

    # ---- observations
    def observation(self, event: Mapping[str, Any], where: str) -> None:
        kind = as_text(event.get("observation"))
        if kind in _SILENT_OBSERVATIONS:
            return
        content = cast(str, event.get("content")) if isinstance(event.get("content"), str) else ""
        extras = as_mapping(event.get("extras"))
        meta: dict[str, Any] = {"openhands_event_id": event.get("id"), "openhands_observation": kind}
        metadata = as_mapping(event.get("tool_call_metadata"))
        call_id = as_text(metadata.get("tool_call_id")) or self.action_calls.get(_hashable(event.get("cause")))
        images: tuple[Image, ...] = ()
        error = event.get("success") is False
        if kind == "recall":
            text = self._recall(extras)
            if not text:
                return
            meta["rendered"] = "approximate"
        elif kind == "run":
            text = command_output(content, extras)
            text = truncate(text if call_id else f"\nObserved result of command executed by user:\n{text}")
        elif kind == "run_ipython":
            text = truncate(_ipython_output(content))
            images = _images(extras.get("image_urls"))
        elif kind == "edit":
            text, exact = _edit_output(content, extras)
            text = truncate(text)
            if not exact:
                meta["rendered"] = "approximate"
        elif kind in ("read", "browse", "browse_interactive"):
            text = content
        elif kind == "delegate":
            outputs = as_mapping(extras.get("outputs"))
            text = truncate(outputs["content"] if isinstance(outputs.get("content"), str) else content)
        elif kind == "error":
            text = truncate(content) + "\n[Error occurred in processing last action]"
            error = True
        elif kind == "user_rejected":
            text = "OBSERVATION:\n" + truncate(content) + "\n[Last action has been rejected by the user]"
        elif kind in _TRUNCATED:
            text = truncate(content)
        else:
            if not content:
                return
            self.unknown.add(kind, None)
            text = content
        if call_id:
            name = as_text(metadata.get("function_name")) or "unknown_tool"
            origin = self.origin(call_id, name)
            result: str | tuple[ResultPart, ...] = text if not images else (text, *images)
            message = Message("tool", tool_result=ToolResult(origin, result, error), meta=meta)
            if any(call_id in r.calls for r in self.pending.values()):
                self.results[call_id] = message
            else:
                self.emit(message)
        else:
            self.emit(Message("user", _texts(text), images=images, meta=meta))

    def _recall(self, extras: Mapping[str, Any]) -> str:
        agents = [a for a in _list(extras.get("microagent_knowledge")) if isinstance(a, Mapping)]
        if extras.get("recall_type") == "knowledge":
            agents = [a for a in agents if as_text(a.get("name")) not in self.seen_agents]
            text = _extra_info(agents)
        else:
            text = "\n".join(t for t in (_workspace_context(extras), _extra_info(agents)) if t)
        self.seen_agents.update(n for n in (as_text(a.get("name")) for a in agents) if n)
        return text

    # ---- whole stream
    def read(self, events: list[Any]) -> None:
        for i, event in enumerate(events):
            where = f"event {i}"
            if not isinstance(event, Mapping):
                self.warnings.append(LoadWarning(f"{where}: skipped, expected an object, got {type_name(event)}"))
                continue
            if "action" in event:
                self.action(event, where)
            elif "observation" in event:
                self.observation(event, where)
            else:
                self.warnings.append(LoadWarning(f"{where}: skipped, neither an action nor an observation"))
            self.flush()
        self.flush(final=True)
        self.warnings += self.unknown.warnings()
        if self.text_actions:
            self.warnings.append(LoadWarning(f"{self.text_actions} agent action(s) have no tool_call_metadata (a run "
                                             "without function calling); kept as assistant text from their thought",
                                             field="tool_call_metadata"))


def _texts(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) and value else ()


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _separate_user_messages(messages: list[Message]) -> list[Message]:
    """OpenHands starts a user message that follows another user message with a blank line."""
    out: list[Message] = []
    for m in messages:
        if m.role == "user" and out and out[-1].role == "user" and m.texts:
            m = replace(m, texts=("\n\n" + m.texts[0], *m.texts[1:]))
        out.append(m)
    return out


def _read_events(events: list[Any], path: str | None, conversation_id: str,
                 extra_warnings: list[LoadWarning]) -> Conversation:
    reader = _Reader(path=path)
    reader.read(events)
    reader.messages[:] = _separate_user_messages(reader.messages)
    return reader.conversation("openhands", path, conversation_id, reader.tools, extra_warnings)


def read(doc: Document) -> list[Conversation]:
    """One conversation per event stream: the file's, or one per evaluation record (id: its ``instance_id``)."""
    if doc.kind == "jsonl" and not _is_evaluation_output([value for _, value in doc.records]):
        return [_read_events([value for _, value in doc.records], doc.path, "0", [])]
    if doc.kind == "jsonl":
        skipped: list[LoadWarning] = []
        found: list[tuple[str, list[Any]]] = []
        for line, record in doc.records:
            record = as_mapping(record)
            if not isinstance(record.get("history"), list):
                skipped.append(LoadWarning("skipped: no 'history' list of events", line=line, field="history"))
                continue
            instance = record.get("instance_id")
            found.append((str(instance) if isinstance(instance, (str, int)) else f"line-{line}", record["history"]))
        return [_read_events(events, doc.path, cid, skipped) for cid, events in found]
    events = _events(doc.value)
    if events is None:
        raise LoadError(doc.path, "expected a list of OpenHands events", field="trajectory")
    instance = as_mapping(doc.value).get("instance_id")
    return [_read_events(events, doc.path, str(instance) if isinstance(instance, (str, int)) else "0", [])]


register_format(
    FormatInfo(
        name="openhands",
        title="OpenHands event stream",
        detect=detect,
        read=read,
        extensions=(".json", ".jsonl"),
        description="OpenHands trajectories (a list of events, or {trajectory}) and evaluation output.jsonl "
        "({instance_id, history}); events become the messages ConversationMemory sends.",
        reads="Event streams and evaluation outputs, turned into the messages ConversationMemory sends: one LLM "
        "call per model_response (its text and every tool call, usage from model_response.usage or llm_metrics), "
        "observations as the results of their calls with OpenHands' formatting and its 30,000-character middle "
        "truncation, the system action and its tools, recalled context through OpenHands' templates, and "
        "condensation actions as log compactions with their summaries.",
        leaves_out="Events the model never sees (agent state changes, recall requests, null observations, loop "
        "recovery); the whitespace of recalled context is approximate (it varies by version); a run without "
        "function calling has no tool calls: its actions become assistant text, with a warning.",
    )
)

