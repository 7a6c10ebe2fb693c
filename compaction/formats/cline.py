"""Cline and Roo Code tasks: a task folder (``…/saoudrizwan.claude-dev/tasks/<id>/``,
``…/rooveterinaryinc.roo-cline/tasks/<id>/``) or its ``api_conversation_history.json`` (any other file of the
folder, opened alone, loads the task from the history beside it).

* ``api_conversation_history.json``: the Anthropic ``MessageParam`` list the agent sends, tool results as text
  included (``_cline_history``, ``_cline_text``).
* ``ui_messages.json``: usage per LLM call from the ``api_req_started`` records (``_cline_usage``), Cline's deleted
  ranges and Roo's ``condense_context`` / ``sliding_window_truncation`` records for the log's own compactions
  (``_cline_events``).
* ``task_metadata.json`` (Cline): ``model_usage`` (the model when no message names it) and ``environment_history``
  (``cline_version``); ``context_history.json`` (Cline's context edits); ``history_item.json`` (Roo: task id, parent
  task, mode).

What a replay starts from: the full history as the file keeps it. Both agents keep the messages they truncated or
condensed away (Cline as a deleted range outside the history, Roo tagged ``condenseParent`` / ``truncationParent``,
left in ``meta``), so a replay runs the uncompacted conversation, as for Claude Code; what Roo *inserted* (its
summaries and truncation markers) is the log's own compaction (``log_summary_indices``: left out unless asked for),
and every compaction is a :class:`LogEvent`. Cline's ``summarize_task`` call stays: it is an LLM call of the run.

Detection: Anthropic-shaped message lists only when they carry these agents' marks (result headers, not-run
notices, environment details, ``<task>``, per-message ``ts``, Cline's ``modelInfo`` / ``metrics``, Roo's tags or
blocks, or the file name); Roo Code when its tags, ``reasoning`` / ``thoughtSignature`` blocks or its environment
details' ``<slug>`` mode show, or its folder, ui records or ``history_item.json`` say so; Cline otherwise.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import cast

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Source
from ..conversation import Usage
from ..conversation import structural_warnings
from ..errors import LoadError
from ._cline_events import cline_events
from ._cline_events import roo_events
from ._cline_history import ROO_TAGS
from ._cline_history import History
from ._cline_history import read_history
from ._cline_text import is_environment_details
from ._cline_text import not_run_notice
from ._cline_text import result_header
from ._cline_usage import ApiRequest
from ._cline_usage import align
from ._cline_usage import api_requests
from ._cline_usage import call_sources
from ._cline_usage import metrics_usage
from ._cline_usage import request_usage
from ._cline_usage import roo_counts_total_input
from ._fields import as_mapping
from ._fields import as_text
from ._fields import first_misfit
from ._fields import type_name
from .base import Document
from .base import FormatInfo
from .base import parse_document
from .base import read_document
from .base import register_format

CLINE, ROO = "cline", "roo-code"
TITLES = {CLINE: "Cline task", ROO: "Roo Code task"}
API_HISTORY = "api_conversation_history.json"
UI_MESSAGES = "ui_messages.json"
TASK_METADATA = "task_metadata.json"
CONTEXT_HISTORY = "context_history.json"
HISTORY_ITEM = "history_item.json"
#: how many entries detection looks at
_SAMPLE = 200
_ROO_MODE = re.compile(r"# Current Mode\n<slug>")
_CLINE_MODE = re.compile(r"# Current Mode\n(?:ACT|PLAN) MODE")
_ROO_MODEL = re.compile(r"<model>([^<\n]{1,200})</model>")
_METADATA_KEYS = frozenset({"files_in_context", "model_usage", "environment_history"})
_HISTORY_ITEM_KEYS = frozenset({"id", "ts", "task", "tokensIn", "tokensOut", "totalCost"})
_ROO_UI_KEYS = frozenset({"apiProtocol", "contextCondense", "contextTruncation", "isProtected", "checkpoint",
                          "progressStatus", "isAnswered"})
_CLINE_UI_KEYS = frozenset({"modelInfo", "conversationHistoryDeletedRange", "lastCheckpointHash",
                            "isCheckpointCheckedOut", "conversationHistoryIndex"})


# ------------------------------------------------------------------------------------------------------ detection
def member(doc: Document) -> str | None:
    """Which file of a task folder ``doc`` is (by its content), or None."""
    if doc.kind != "json":
        return None
    value = doc.value
    if isinstance(value, list) and value:
        if _looks_like_history(value):
            return API_HISTORY
        if _looks_like_ui(value):
            return UI_MESSAGES
        if _file_name(doc.path) == CONTEXT_HISTORY:
            return CONTEXT_HISTORY
    elif isinstance(value, Mapping):
        if value.keys() & _METADATA_KEYS and all(isinstance(value[k], list) for k in value.keys() & _METADATA_KEYS):
            return TASK_METADATA
        if _HISTORY_ITEM_KEYS <= value.keys():
            return HISTORY_ITEM
    return None


def _file_name(path: str | None) -> str:
    return Path(path).name if path else ""


def _history_entry(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    if item.get("role") in ("user", "assistant"):
        return isinstance(item.get("content"), (str, list))
    return item.get("type") == "reasoning"


def _ui_message(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") in ("ask", "say") and isinstance(item.get("ts"), (int, float))


def _looks_like_history(value: list[Any]) -> bool:
    """Mostly Anthropic messages (a few damaged entries cost only themselves when read)."""
    return first_misfit(value, _history_entry, _SAMPLE) is None and _history_entry(value[0])


def _looks_like_ui(value: list[Any]) -> bool:
    return first_misfit(value, _ui_message, _SAMPLE) is None and _ui_message(value[0])


def _history_marks(value: list[Any], path: str | None) -> tuple[bool, str | None]:
    """Whether a message list carries Cline / Roo Code marks, and which agent they name when they do."""
    sample = value[:_SAMPLE]
    ours = _file_name(path) == API_HISTORY or all(
        isinstance(m, Mapping) and isinstance(m.get("ts"), int) and not isinstance(m.get("ts"), bool)
        for m in sample)
    flavor: str | None = None
    for m in sample:
        if not isinstance(m, Mapping):
            continue
        if any(tag in m for tag in ROO_TAGS) or m.get("type") == "reasoning":
            return True, ROO
        if m.get("role") == "assistant" and ("modelInfo" in m or "metrics" in m):
            ours, flavor = True, flavor or CLINE
        for block in cast("list[Any]", m.get("content")) if isinstance(m.get("content"), list) else ():
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind in ("reasoning", "thoughtSignature"):
                return True, ROO
            text = block.get("text") if kind == "text" else None
            if m.get("role") == "user" and isinstance(text, str):
                mark, named = _text_mark(text)
                ours = ours or mark
                if named == ROO:
                    return True, ROO
                flavor = flavor or named
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            mark, named = _text_mark(m["content"])
            ours, flavor = ours or mark, flavor or named
    return ours, flavor


def _text_mark(text: str) -> tuple[bool, str | None]:
    if is_environment_details(text):
        if _ROO_MODE.search(text):
            return True, ROO
        return True, CLINE if _CLINE_MODE.search(text) else None
    return bool(result_header(text) or not_run_notice(text) is not None or text.startswith("<task>")), None


def _ui_flavor(ui: list[Any]) -> str | None:
    for m in ui[:_SAMPLE * 5]:
        if not isinstance(m, Mapping):
            continue
        if m.keys() & _ROO_UI_KEYS or m.get("say") in ("condense_context", "sliding_window_truncation") or (
                m.get("say") == "api_req_started" and '"apiProtocol"' in str(m.get("text"))):
            return ROO
        if m.keys() & _CLINE_UI_KEYS:
            return CLINE
    return None


def _path_flavor(path: str | None) -> str | None:
    lowered = (path or "").replace("\\", "/").lower()
    if "saoudrizwan.claude-dev/" in lowered:
        return CLINE
    if "roo-cline/" in lowered:
        return ROO
    return None


def classify(doc: Document) -> tuple[str | None, str]:
    """(``cline`` | ``roo-code`` | None, why not) for a document."""
    kind = member(doc)
    if kind is None:
        return None, ("not a file of a Cline or Roo Code task (api_conversation_history.json, ui_messages.json, "
                      "task_metadata.json, …)")
    if kind == API_HISTORY:
        ours, flavor = _history_marks(doc.value, doc.path)
        if not ours:
            return None, ("a message list without Cline or Roo Code marks (tool result headers, environment details, "
                          "per-message ts, Roo's condense tags)")
        return flavor or _path_flavor(doc.path) or _companion_flavor(doc) or CLINE, ""
    return _member_flavor(kind, doc.value) or _path_flavor(doc.path) or _history_flavor(doc) or CLINE, ""


def _member_flavor(kind: str, value: Any) -> str | None:
    if kind == UI_MESSAGES:
        return _ui_flavor(value)
    if kind == TASK_METADATA:
        return CLINE if value.get("model_usage") or value.get("environment_history") else None
    if kind == HISTORY_ITEM:
        return ROO
    return None


def _companion_flavor(doc: Document) -> str | None:
    ui = _companion_json(doc, UI_MESSAGES, list, [])
    return _ui_flavor(ui) if ui else None


def _history_flavor(doc: Document) -> str | None:
    history = _companion_json(doc, API_HISTORY, list, [])
    return _history_marks(history, API_HISTORY)[1] if history else None


def _detector(flavor: str) -> Callable[[Document], str | None]:
    def detect(doc: Document) -> str | None:
        found, why = classify(doc)
        if found is None:
            return why
        return None if found == flavor else f"a {TITLES[found]}, not a {TITLES[flavor]}"
    return detect


# ------------------------------------------------------------------------------------------------------ task files
@dataclass
class TaskFiles:
    """The files of one task that this reader uses."""

    path: str | None
    history: list[Any]
    ui: list[Any] | None = None
    metadata: Mapping[str, Any] | None = None
    context_history: Any = None
    item: Mapping[str, Any] | None = None
    warnings: list[LoadWarning] = field(default_factory=list)


def _companion_json(doc: Document, name: str, expected: type, warnings: list[LoadWarning] | None) -> Any:
    """A companion file's JSON value when it is there and of the expected type; a warning (if asked) otherwise."""
    data = doc.companion(name)
    if data is None:
        return None
    try:
        parsed = parse_document(data, name)
    except LoadError as exc:
        if warnings is not None:
            warnings.append(LoadWarning(f"{name} beside the log is not read: {exc.reason}"))
        return None
    if parsed.kind != "json" or not isinstance(parsed.value, expected):
        if warnings is not None:
            got = type_name(parsed.value) if parsed.kind == "json" else parsed.kind
            warnings.append(LoadWarning(f"{name} beside the log is not read: expected a JSON "
                                        f"{'list' if expected is list else 'object'}, got {got}"))
        return None
    return parsed.value


def task_files(doc: Document, title: str) -> TaskFiles:
    """The task ``doc`` belongs to: its history (``doc`` itself or the file beside it) and the other files."""
    kind = member(doc)
    warnings: list[LoadWarning] = []
    if kind == API_HISTORY:
        files = TaskFiles(doc.path, doc.value, warnings=warnings)
    else:
        history = _companion_json(doc, API_HISTORY, list, warnings)
        if history is None:
            reason = f" ({warnings[-1].message})" if warnings else ""
            raise LoadError(doc.path, f"this is the {kind or 'a file'} of a {title}; its conversation is the "
                                      f"{API_HISTORY} beside it, which is not there{reason}")
        sibling = str(Path(doc.path).parent / API_HISTORY) if doc.path else API_HISTORY
        files = TaskFiles(sibling, history, warnings=warnings)
    own = {kind: doc.value} if kind != API_HISTORY else {}
    files.ui = own.get(UI_MESSAGES) or _companion_json(doc, UI_MESSAGES, list, warnings)
    files.metadata = own.get(TASK_METADATA) or _companion_json(doc, TASK_METADATA, Mapping, warnings)
    files.context_history = own.get(CONTEXT_HISTORY) or _companion_json(doc, CONTEXT_HISTORY, list, warnings)
    files.item = own.get(HISTORY_ITEM) or _companion_json(doc, HISTORY_ITEM, Mapping, warnings)
    return files


# ------------------------------------------------------------------------------------------------------ reading
def read_task(files: TaskFiles, flavor: str) -> Conversation:
    """One task as a conversation."""
    history = read_history(files.history)
    warnings = [*files.warnings, *history.warnings]
    requests = api_requests(files.ui or [], warnings)
    matched = align(requests, history, warnings)
    roo = flavor == ROO
    usage = _usage(history, requests, matched, roo, warnings)
    if roo:
        events = roo_events(history, files.ui, requests, matched, usage, warnings)
    else:
        events = cline_events(history, files.ui, requests, matched, usage, files.context_history, warnings)
    warnings += structural_warnings(history.messages)
    source = Source(flavor, files.path, _task_id(files), tuple(warnings), model=_model(history, requests, files, roo),
                    agent_version=_cline_version(files.metadata), parent=as_text(as_mapping(files.item).get(
                        "parentTaskId")), meta=_meta(history, files, requests))
    return Conversation(tuple(history.messages), (), source, usage=usage, events=tuple(events),
                        log_summary_indices=frozenset(history.summaries))


def _usage(history: History, requests: list[ApiRequest], matched: dict[int, ApiRequest], roo: bool,
           warnings: list[LoadWarning]) -> dict[int, Usage]:
    usage: dict[int, Usage] = {}
    total = roo_counts_total_input(requests) if roo else False
    for entry, request in matched.items():
        found = request_usage(request, roo, total)
        index = history.assistant_index(entry)
        if found is not None and index is not None:
            usage[index] = found
    from_metrics = 0
    for entry in call_sources(history):
        index = history.assistant_index(entry)
        if index is not None and index not in usage:
            found = metrics_usage(history.sources[entry].raw)
            if found is not None:
                usage[index] = found
                from_metrics += 1
    if from_metrics:
        warnings.append(LoadWarning(f"usage of {from_metrics} LLM calls from the history's own metrics (no "
                                    "api_req_started record for them): cache reads and writes are not split there, "
                                    "all cached tokens are counted as reads", field="metrics"))
    return usage


def _task_id(files: TaskFiles) -> str:
    item_id = as_text(as_mapping(files.item).get("id"))
    if item_id:
        return item_id
    folder = Path(files.path).parent.name if files.path else ""
    return folder or "0"


def _model(history: History, requests: list[Any], files: TaskFiles, roo: bool) -> str | None:
    """The model most LLM calls used: per message (Cline ``modelInfo``; Roo's environment details), else per
    request, else the task metadata's ``model_usage``."""
    counts: Counter[str] = Counter()
    if roo:
        for message in history.messages:
            if message.role == "user":
                for text in message.texts:
                    if is_environment_details(text):
                        counts.update(_ROO_MODEL.findall(text)[:1])
    else:
        counts.update(m.meta["model"] for m in history.messages if isinstance(m.meta.get("model"), str))
    if not counts:
        counts.update(r.model for r in requests if r.model)
    if not counts:
        usage = as_mapping(files.metadata).get("model_usage")
        for entry in usage if isinstance(usage, list) else ():
            model = as_text(as_mapping(entry).get("model_id"))
            if model:
                counts[model] += 1
    return counts.most_common(1)[0][0] if counts else None


def _cline_version(metadata: Mapping[str, Any] | None) -> str | None:
    environments = as_mapping(metadata).get("environment_history")
    if isinstance(environments, list):
        for environment in reversed(environments):
            version = as_text(as_mapping(environment).get("cline_version"))
            if version:
                return version
    return None


def _meta(history: History, files: TaskFiles, requests: list[Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    providers = Counter(as_text(as_mapping(s.raw.get("modelInfo")).get("providerId")) for s in history.sources)
    providers.pop(None, None)
    if not providers:
        providers.update(r.provider for r in requests if r.provider)
    if not providers:
        usage = as_mapping(files.metadata).get("model_usage")
        providers.update(p for e in (usage if isinstance(usage, list) else ())
                         if (p := as_text(as_mapping(e).get("model_provider_id"))))
    if providers:
        meta["provider"] = providers.most_common(1)[0][0]
    environments = as_mapping(files.metadata).get("environment_history")
    if isinstance(environments, list) and environments:
        last = as_mapping(environments[-1])
        host = " ".join(v for v in (as_text(last.get("host_name")), as_text(last.get("host_version"))) if v)
        if host:
            meta["host"] = host
    item = as_mapping(files.item)
    for key, name in (("mode", "mode"), ("workspace", "workspace"), ("rootTaskId", "root_task")):
        if as_text(item.get(key)):
            meta[name] = item[key]
    protocols = sorted({p for r in requests if isinstance(p := r.info.get("apiProtocol"), str)})
    if protocols:
        meta["api_protocol"] = protocols[0] if len(protocols) == 1 else protocols
    costs = [c for r in requests if isinstance(c := r.info.get("cost"), (int, float)) and not isinstance(c, bool)]
    if costs:
        meta["reported_cost"] = round(sum(costs), 6)
    return meta


def _reader(flavor: str) -> Callable[[Document], list[Conversation]]:
    def read(doc: Document) -> list[Conversation]:
        return [read_task(task_files(doc, TITLES[flavor]), flavor)]
    return read


def _folder_reader(flavor: str) -> Callable[[Path], list[Conversation] | None]:
    def read_folder(folder: Path) -> list[Conversation] | None:
        """The task in ``folder`` when it is a task folder of this agent, else None."""
        history = Path(folder) / API_HISTORY
        if not history.is_file():
            return None
        doc = read_document(history)
        found, _ = classify(doc)
        if found != flavor:
            return None
        return [read_task(task_files(doc, TITLES[flavor]), flavor)]
    return read_folder


_SHARED_LEAVES_OUT = (
    "The system prompt and tool definitions (the task folder does not store them), checkpoints, the ui-only records "
    "(asks, says, partial streams), costs (summed into meta only) and usage of requests that produced no response. "
    "A replay starts from the whole history the file keeps, truncated or condensed messages included.")


def _register(flavor: str, description: str, reads: str, leaves_out: str) -> None:
    """Register the reader of one flavor of task folder (Cline or Roo Code)."""
    register_format(FormatInfo(name=flavor, title=TITLES[flavor], detect=_detector(flavor), read=_reader(flavor),
                               read_folder=_folder_reader(flavor), description=description, reads=reads,
                               leaves_out=leaves_out))


_register(
    CLINE,
    description="Cline task folders (api_conversation_history.json with ui_messages.json, task_metadata.json, "
    "context_history.json): XML or native tool calls, '[tool for …] Result:' text results, usage per call, "
    "summarize_task/condense and truncation events.",
    reads="api_conversation_history.json as Anthropic messages, with the XML tool calls of older versions and the "
    "'[tool for 'x'] Result:' texts and not-run notices turned into tool calls and their results; usage per call from "
    "ui_messages.json api_req_started records (tokensIn uncached, cacheReads, cacheWrites as 5-minute writes) matched "
    "to the response at conversationHistoryIndex + 2, else by timestamps, else by order (else Cline's own "
    "metrics.tokens); the model (modelInfo, else task_metadata.json model_usage) and cline_version; summarize_task / "
    "condense calls as condense events, changes of conversationHistoryDeletedRange (and context_history.json's "
    "truncation notice) as truncations, its duplicate-file-read notices as masking with the calls cleared.",
    leaves_out=_SHARED_LEAVES_OUT + " Focus-chain files and subagent usage records are not read.",
)
_register(
    ROO,
    description="Roo Code task folders (api_conversation_history.json with ui_messages.json, history_item.json): "
    "native or XML tool calls, usage per call, condense summaries and sliding-window truncation markers as events.",
    reads="api_conversation_history.json as Anthropic messages (reasoning blocks as reasoning; XML calls and "
    "'[tool for 'x'] Result:' texts of the XML protocol as tool calls and results); usage from ui_messages.json "
    "api_req_started records matched by timestamps (tokensIn is total input for the OpenAI protocol and, since Roo "
    "3.30, for Anthropic); the model from the environment details' <model>; isSummary messages as condense events and "
    "isTruncationMarker messages as truncations (timed and sized by condense_context / sliding_window_truncation ui "
    "records), both left out of replays as the log's own compaction; condenseParent / truncationParent kept in meta; "
    "history_item.json's id, parent task and mode.",
    leaves_out=_SHARED_LEAVES_OUT + " Roo's thought signatures (provider data, not content) are dropped.",
)
