"""What the model sees of a Claude Code ``attachment`` record (``{"type": "attachment", "attachment": {...}}``).

Claude Code records context it adds on its own (hook output, the skill list, memory files, IDE selections, file
re-reads after a compaction, reminders…) as ``attachment`` records. Before each API call it turns every attachment
into user messages flagged ``isMeta`` whose text is wrapped in ``<system-reminder>`` tags, and merges them into the
neighbouring user turn. Some attachment types are only shown in the terminal and never reach the model.

The rules here were read from the normalization step of the published ``@anthropic-ai/claude-code`` package
(versions 2.1.39 to 2.1.110): which types are sent, which fields carry the text, and for a few types the version
from which they are no longer sent. The payload of each attachment (hook output, skill list, file text, memory,
diagnostics…) is reproduced exactly; the fixed sentences Claude Code puts around it are paraphrased here (a few
dozen tokens each), and the long fixed instruction texts of plan and auto mode are stood in by one short sentence
(marked ``stand_in`` in the message meta).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..conversation import Image
from ._fields import as_mapping
from ._fields import as_text

#: attachment types Claude Code keeps for its terminal only: never part of a request
NOT_SENT = frozenset({
    "already_read_file", "autocheckpointing", "background_task_status", "command_permissions", "companion_intro",
    "context_efficiency", "current_session_memory", "dynamic_skill", "edited_image_file", "hook_cancelled",
    "hook_deferred_tool", "hook_error_during_execution", "hook_non_blocking_error", "hook_permission_decision",
    "hook_system_message", "max_turns_reached", "pen_mode_enter", "pen_mode_exit", "structured_output",
    "teammate_shutdown_batch",
})

#: types that earlier versions sent and later ones drop: the first version seen not sending it (the one before it
#: that was checked still sent it: todo 2.1.59, task_progress 2.1.69, ultramemory 2.1.80, compaction_reminder 2.1.89,
#: delegate modes 2.1.39)
DROPPED_FROM: dict[str, tuple[int, ...]] = {
    "todo": (2, 1, 63), "task_progress": (2, 1, 80), "ultramemory": (2, 1, 89), "compaction_reminder": (2, 1, 110),
    "delegate_mode": (2, 1, 50), "delegate_mode_exit": (2, 1, 50),
}

#: how many characters of an IDE selection Claude Code sends
SELECTION_LIMIT = 2000


@dataclass(frozen=True)
class Sent:
    """What one attachment adds to the request: text parts (each already in ``<system-reminder>`` tags), images,
    whether it is Claude Code's own context (``isMeta``) rather than something the person typed, and whether a
    text is our stand-in for a long fixed instruction."""

    texts: tuple[str, ...]
    images: tuple[Image, ...] = ()
    is_meta: bool = True
    stand_in: bool = False


def parse_version(text: Any) -> tuple[int, ...] | None:
    """``"2.1.39"`` as ``(2, 1, 39)``; None when it is not dotted numbers."""
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    return tuple(int(p) for p in parts) if parts and all(p.isdigit() for p in parts) else None


def reaches_model(kind: str, version: tuple[int, ...] | None) -> bool | None:
    """True when an attachment of ``kind`` written by Claude Code ``version`` is sent to the model, False when it is
    not, None when the type is unknown to this reader."""
    if kind in NOT_SENT:
        return False
    if kind in DROPPED_FROM:
        return version is None or version < DROPPED_FROM[kind]
    return True if kind in _RENDERERS else None


def render(attachment: Mapping[str, Any], version: tuple[int, ...] | None) -> Sent | None:
    """What the model saw of ``attachment``, or None when nothing of it reached the model (an empty hook output, a
    type that is not sent, or an unknown type: :func:`reaches_model` tells them apart)."""
    kind = as_text(attachment.get("type")) or ""
    if not reaches_model(kind, version):
        return None
    sent = _RENDERERS[kind](attachment)
    if sent is None or not (sent.texts or sent.images):
        return None
    return sent


def reminder(text: str) -> str:
    """``text`` in the ``<system-reminder>`` tags Claude Code wraps its own context in."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


def _one(text: str | None, **flags: Any) -> Sent | None:
    return Sent((reminder(text),), **flags) if text else None


def _text(value: Any) -> str:
    """A field as text: strings as they are, other JSON values as compact JSON."""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _items(value: Any) -> list[Any]:
    """A list field's items; anything else has none."""
    return value if isinstance(value, list) else []


def _lines(value: Any) -> list[str]:
    return [_text(v) for v in value] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------------------- hooks
def _hook_context(a: Mapping[str, Any]) -> Sent | None:
    lines = _lines(a.get("content"))
    return _one(f"{_text(a.get('hookName'))} hook additional context: " + "\n".join(lines)) if lines else None


def _hook_success(a: Mapping[str, Any]) -> Sent | None:
    if a.get("hookEvent") not in ("SessionStart", "UserPromptSubmit") or not _text(a.get("content")):
        return None
    return _one(f"{_text(a.get('hookName'))} hook success: {_text(a.get('content'))}")


def _hook_blocking(a: Mapping[str, Any]) -> Sent | None:
    error = as_mapping(a.get("blockingError"))
    return _one(f"{_text(a.get('hookName'))} hook blocking error from command {_text(error.get('command'))!r}: "
                f"{_text(error.get('blockingError'))}")


def _hook_stopped(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"{_text(a.get('hookName'))} hook stopped continuation: {_text(a.get('message'))}")


def _async_hook(a: Mapping[str, Any]) -> Sent | None:
    response = as_mapping(a.get("response"))
    texts = [_text(response.get("systemMessage")),
             _text(as_mapping(response.get("hookSpecificOutput")).get("additionalContext"))]
    return Sent(tuple(reminder(t) for t in texts if t))


# ------------------------------------------------------------------------------------------------- files
def _simulated_read(tool: str, arguments: Mapping[str, Any], result: str) -> tuple[str, str]:
    """The two texts Claude Code sends for a file it read on the model's behalf: the call and its result."""
    return (reminder(f"Called the {tool} tool with the following input: {json.dumps(arguments, ensure_ascii=False)}"),
            reminder(f"Result of calling the {tool} tool: {result}"))


def _file(a: Mapping[str, Any]) -> Sent | None:
    name = _text(a.get("filename"))
    content = as_mapping(a.get("content"))
    file = as_mapping(content.get("file"))
    kind = content.get("type")
    if kind == "image":
        call, _ = _simulated_read("Read", {"file_path": name}, "")
        return Sent((call,), images=(Image(mime_type=as_text(file.get("type")), source="base64"),))
    if kind == "notebook":
        body = _text(file.get("cells"))
    elif kind == "pdf":
        body = f"(PDF {name}, {_text(file.get('originalSize'))} bytes, sent as a document)"
    else:
        body = _text(file.get("content")) or _text(content.get("content"))
    texts: tuple[str, ...] = _simulated_read("Read", {"file_path": name}, body)
    if a.get("truncated") is True:
        texts += (reminder(f"Note: {name} was too long and was cut to its first lines; read more with the Read "
                           "tool if needed."),)
    return Sent(texts)


def _directory(a: Mapping[str, Any]) -> Sent | None:
    path = _text(a.get("path"))
    return Sent(_simulated_read("Bash", {"command": f"ls {path}", "description": f"Lists files in {path}"},
                                _text(a.get("content"))))


def _edited_file(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"Note: {_text(a.get('filename'))} was changed by the user or a linter, on purpose; keep the change. "
                f"The relevant lines:\n{_text(a.get('snippet'))}")


def _compact_file_reference(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"Note: {_text(a.get('filename'))} was read before the conversation was summarized but is too large "
                "to include again; use the Read tool to see it.")


def _pdf_reference(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"PDF file: {_text(a.get('filename'))} ({_text(a.get('pageCount'))} pages, "
                f"{_text(a.get('fileSize'))} bytes), too large to read at once: read it by page ranges.")


def _selection(a: Mapping[str, Any]) -> Sent | None:
    content = _text(a.get("content"))
    if len(content) > SELECTION_LIMIT:
        content = content[:SELECTION_LIMIT] + "\n... (truncated)"
    return _one(f"The user selected lines {_text(a.get('lineStart'))} to {_text(a.get('lineEnd'))} of "
                f"{_text(a.get('filename'))}:\n{content}\n\nIt may or may not matter for the current task.")


def _opened_file(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"The user opened {_text(a.get('filename'))} in the IDE; it may or may not matter for the task.")


def _mcp_resource(a: Mapping[str, Any]) -> Sent | None:
    texts: list[str] = []
    for item in _items(as_mapping(a.get("content")).get("contents")):
        item = as_mapping(item)
        if isinstance(item.get("text"), str):
            texts += ["Full contents of resource:", item["text"], "Do not read this resource again unless it may have "
                      "changed."]
        elif "blob" in item:
            texts.append(f"[Binary content: {_text(item.get('mimeType')) or 'application/octet-stream'}]")
    if not texts:
        texts = [f'<mcp-resource server="{_text(a.get("server"))}" uri="{_text(a.get("uri"))}">(No content)'
                 "</mcp-resource>"]
    return Sent(tuple(reminder(t) for t in texts))


def _diagnostics(a: Mapping[str, Any]) -> Sent | None:
    files = a.get("files")
    if not isinstance(files, list) or not files:
        return None
    lines: list[str] = []
    for file in files:
        file = as_mapping(file)
        lines.append(f"{_text(file.get('uri'))}:")
        for d in _items(file.get("diagnostics")):
            d = as_mapping(d)
            start = as_mapping(as_mapping(d.get("range")).get("start"))
            where = f"[Line {_text(start.get('line'))}:{_text(start.get('character'))}]" if start else ""
            source = f" ({_text(d.get('source'))})" if d.get("source") else ""
            lines.append(f"  {_text(d.get('severity'))} {where} {_text(d.get('message'))}{source}".rstrip())
    return _one("<new-diagnostics>New diagnostic issues were detected:\n\n" + "\n".join(lines) + "</new-diagnostics>")


# ------------------------------------------------------------------------------------------------- memory, skills
def _skill_listing(a: Mapping[str, Any]) -> Sent | None:
    content = _text(a.get("content"))
    return _one(f"Skills available through the Skill tool:\n\n{content}") if content else None


def _invoked_skills(a: Mapping[str, Any]) -> Sent | None:
    skills = [as_mapping(s) for s in _items(a.get("skills"))]
    if not skills:
        return None
    body = "\n\n---\n\n".join(f"### Skill: {_text(s.get('name'))}\nPath: {_text(s.get('path'))}\n\n"
                              f"{_text(s.get('content'))}" for s in skills)
    return _one(f"Skills invoked in this session; keep following them:\n\n{body}")


def _nested_memory(a: Mapping[str, Any]) -> Sent | None:
    content = as_mapping(a.get("content"))
    return _one(f"Contents of {_text(content.get('path'))}:\n\n{_text(content.get('content'))}")


def _relevant_memories(a: Mapping[str, Any]) -> Sent | None:
    texts = []
    for memory in _items(a.get("memories")):
        memory = as_mapping(memory)
        header = _text(memory.get("header")) or _text(memory.get("path"))
        texts.append(reminder(f"{header}\n\n{_text(memory.get('content'))}"))
    return Sent(tuple(texts))


def _content_as_is(a: Mapping[str, Any]) -> Sent | None:
    return _one(_text(a.get("content")))


# ------------------------------------------------------------------------------------------------- tasks, todos
def _todo(a: Mapping[str, Any]) -> Sent | None:
    if a.get("itemCount") == 0:
        return _one("Reminder: the todo list is empty; use the TodoWrite tool if the work would benefit from one "
                    "(do not mention this to the user).")
    return _one(f"The todo list changed (do not mention this to the user). Its contents now:\n\n"
                f"{_text(a.get('content'))}. Continue with the tasks at hand if applicable.")


def _todo_reminder(a: Mapping[str, Any]) -> Sent | None:
    items = [as_mapping(i) for i in _items(a.get("content"))]
    text = ("The TodoWrite tool has not been used recently; consider it if the work benefits from tracking, and clean "
            "up a stale list. Never mention this reminder to the user.")
    if items:
        listed = "\n".join(f"{n}. [{_text(i.get('status'))}] {_text(i.get('content'))}" for n, i in enumerate(items, 1))
        text += f"\n\nThe todo list now:\n\n[{listed}]"
    return _one(text)


def _task_reminder(a: Mapping[str, Any]) -> Sent | None:
    items = [as_mapping(i) for i in _items(a.get("content"))]
    text = ("The task tools have not been used recently; consider adding and updating tasks if the work benefits "
            "from tracking. Never mention this reminder to the user.")
    if items:
        listed = "\n".join(f"#{_text(i.get('id'))}. [{_text(i.get('status'))}] {_text(i.get('subject'))}"
                           for i in items)
        text += f"\n\nThe existing tasks:\n\n{listed}"
    return _one(text)


def _task_status(a: Mapping[str, Any]) -> Sent | None:
    status = _text(a.get("status"))
    if status == "killed":
        return _one(f'Task "{_text(a.get("description"))}" ({_text(a.get("taskId"))}) was stopped by the user.')
    parts = [f"Task {_text(a.get('taskId'))}", f"(type: {_text(a.get('taskType'))})", f"(status: {status})",
             f"(description: {_text(a.get('description'))})"]
    if a.get("deltaSummary"):
        parts.append(f"Delta: {_text(a.get('deltaSummary'))}")
    if a.get("outputFilePath"):
        parts.append(f"Its output is in {_text(a.get('outputFilePath'))}.")
    else:
        parts.append("Its output can be read with the task output tool.")
    return _one(" ".join(parts))


def _task_progress(a: Mapping[str, Any]) -> Sent | None:
    return _one(_text(a.get("message")))


def _queued_command(a: Mapping[str, Any]) -> Sent | None:
    prompt = a.get("prompt")
    images: tuple[Image, ...] = ()
    if isinstance(prompt, list):
        blocks = [as_mapping(b) for b in prompt]
        text = "\n".join(_text(b.get("text")) for b in blocks if b.get("type") == "text")
        images = tuple(Image(mime_type=as_text(as_mapping(b.get("source")).get("media_type")), source="base64")
                       for b in blocks if b.get("type") == "image")
    else:
        text = _text(prompt)
    typed = a.get("origin") is None and a.get("commandMode") != "task-notification" and a.get("isMeta") is not True
    body = (f"The user sent a new message while you were working:\n{text}\n\nAddress it once the current task is "
            "done; do not ignore it.")
    return Sent((reminder(body),), images, is_meta=not typed)


# ------------------------------------------------------------------------------------------------- modes, budgets
def _plan_file(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"A plan file from plan mode exists at {_text(a.get('planFilePath'))}.\n\nPlan contents:\n\n"
                f"{_text(a.get('planContent'))}\n\nIf it is relevant and not yet done, keep working on it.")


def _plan_mode(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"Plan mode is active (Claude Code's plan-mode instructions; plan file "
                f"{_text(a.get('planFilePath'))}, {'sparse' if a.get('reminderType') == 'sparse' else 'full'} "
                "reminder).", stand_in=True)


def _plan_mode_reentry(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"Re-entering plan mode (Claude Code's instructions); the earlier plan is at "
                f"{_text(a.get('planFilePath'))}.", stand_in=True)


def _plan_mode_exit(a: Mapping[str, Any]) -> Sent | None:
    where = f" The plan file is {_text(a.get('planFilePath'))}." if a.get("planExists") else ""
    return _one(f"## Exited Plan Mode\n\nPlan mode is over: edits, tools and actions are allowed again.{where}")


def _fixed(text: str, stand_in: bool = False) -> Callable[[Mapping[str, Any]], Sent | None]:
    return lambda _a: _one(text, stand_in=stand_in)


def _output_style(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"{_text(a.get('style'))} output style is active; follow its guidelines.")


def _agent_mention(a: Mapping[str, Any]) -> Sent | None:
    return _one(f'The user wants the agent "{_text(a.get("agentType"))}" invoked; invoke it with the context it '
                "needs.")


def _token_usage(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"Token usage: {_text(a.get('used'))}/{_text(a.get('total'))}; {_text(a.get('remaining'))} remaining")


def _budget(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"USD budget: ${_text(a.get('used'))}/${_text(a.get('total'))}; ${_text(a.get('remaining'))} "
                "remaining")


def _output_tokens(a: Mapping[str, Any]) -> Sent | None:
    turn = _text(a.get("turn"))
    if a.get("budget") is not None:
        turn += f" / {_text(a.get('budget'))}"
    return _one(f"Output tokens — turn: {turn} · session: {_text(a.get('session'))}")


def _date_change(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"The date changed; today is {_text(a.get('newDate'))}. Do not mention this to the user.")


def _effort(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"The user asked for reasoning effort {_text(a.get('level'))} on this turn.")


def _delta(added_key: str, removed_key: str, added: str, removed: str) -> Callable[[Mapping[str, Any]], Sent | None]:
    def render_delta(a: Mapping[str, Any]) -> Sent | None:
        sections = []
        if _lines(a.get(added_key)):
            sections.append(added + "\n" + "\n".join(_lines(a.get(added_key))))
        if _lines(a.get(removed_key)):
            sections.append(removed + "\n" + "\n".join(_lines(a.get(removed_key))))
        return _one("\n\n".join(sections))
    return render_delta


def _team_context(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"# Team Coordination\n\nYou are teammate {_text(a.get('agentName'))} in team "
                f"\"{_text(a.get('teamName'))}\". Team config: {_text(a.get('teamConfigPath'))}. Task list: "
                f"{_text(a.get('taskListPath'))}. The team lead is \"team-lead\"; refer to teammates by name.")


def _mailbox(a: Mapping[str, Any]) -> Sent | None:
    lines = []
    for m in _items(a.get("messages")):
        m = as_mapping(m)
        lines.append(f"{_text(m.get('from'))}: {_text(m.get('text') or m.get('message') or m.get('content'))}")
    return _one("\n".join(lines))


def _delegate_mode(a: Mapping[str, Any]) -> Sent | None:
    return _one(f"## Delegate Mode\n\nDelegate mode for team \"{_text(a.get('teamName'))}\": only the team and task "
                f"tools may be used. Task list: {_text(a.get('taskListPath'))}.", stand_in=True)


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], Sent | None]] = {
    "hook_additional_context": _hook_context,
    "hook_success": _hook_success,
    "hook_blocking_error": _hook_blocking,
    "hook_stopped_continuation": _hook_stopped,
    "async_hook_response": _async_hook,
    "file": _file,
    "directory": _directory,
    "edited_text_file": _edited_file,
    "compact_file_reference": _compact_file_reference,
    "pdf_reference": _pdf_reference,
    "selected_lines_in_ide": _selection,
    "opened_file_in_ide": _opened_file,
    "mcp_resource": _mcp_resource,
    "diagnostics": _diagnostics,
    "skill_listing": _skill_listing,
    "invoked_skills": _invoked_skills,
    "nested_memory": _nested_memory,
    "relevant_memories": _relevant_memories,
    "critical_system_reminder": _content_as_is,
    "ultramemory": _content_as_is,
    "todo": _todo,
    "todo_reminder": _todo_reminder,
    "task_reminder": _task_reminder,
    "task_status": _task_status,
    "task_progress": _task_progress,
    "queued_command": _queued_command,
    "plan_file_reference": _plan_file,
    "plan_mode": _plan_mode,
    "plan_mode_reentry": _plan_mode_reentry,
    "plan_mode_exit": _plan_mode_exit,
    "auto_mode": _fixed("Auto mode is active (Claude Code's auto-mode instructions: act autonomously, ask only before "
                        "destructive actions).", stand_in=True),
    "auto_mode_exit": _fixed("## Exited Auto Mode\n\nAuto mode is over: ask when the approach is unclear."),
    "delegate_mode": _delegate_mode,
    "delegate_mode_exit": _fixed("## Exited Delegate Mode\n\nDelegate mode is over: every tool may be used again."),
    "team_context": _team_context,
    "teammate_mailbox": _mailbox,
    "output_style": _output_style,
    "agent_mention": _agent_mention,
    "token_usage": _token_usage,
    "budget_usd": _budget,
    "output_token_usage": _output_tokens,
    "date_change": _date_change,
    "ultrathink_effort": _effort,
    "compaction_reminder": _fixed("Auto-compact is on: when the context window is nearly full, older messages are "
                                  "summarized automatically, so there is no need to stop or rush."),
    "verify_plan_reminder": _fixed("The plan is implemented: verify directly that every plan item was completed."),
    "deferred_tools_delta": _delta("addedLines", "removedNames",
                                   "Deferred tools now available (load their schemas with the tool search before "
                                   "calling them):", "Deferred tools no longer available:"),
    "agent_listing_delta": _delta("addedLines", "removedTypes", "Agent types available for the Agent tool:",
                                  "Agent types no longer available:"),
    "mcp_instructions_delta": _delta("addedBlocks", "removedNames",
                                     "# MCP Server Instructions\n\nInstructions the MCP servers gave for their tools:",
                                     "MCP servers that disconnected (their instructions no longer apply):"),
}

#: every attachment type this reader knows: the ones it sends and the ones it knows are never sent
KNOWN_TYPES = frozenset(_RENDERERS) | NOT_SENT
