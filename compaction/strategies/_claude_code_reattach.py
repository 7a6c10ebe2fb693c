"""What Claude Code attaches again after an auto-compaction, rebuilt from the history it summarized.

After the summary, Claude Code adds (``compactConversation``, read in the 2.1.14–2.1.39 bundles):

* the files read most recently (its ``readFileState``, newest first, at most 5; not the plan file or memory files
  such as ``CLAUDE.md``), each read again from disk with a 5,000-token limit — a larger file becomes a short
  ``compact_file_reference`` note — while all of them stay within 50,000 tokens (a file whose last ``Read`` the
  microcompaction cleared is forgotten, as Claude Code forgets it);
* the todo list, when it has items; the plan file, when there is one; the skills invoked in the session (newest
  first, with their instructions);
* the background agents' status and the output of the ``SessionStart`` hooks with source ``compact``.

The transcripts of those releases do not record these attachments, so they are rebuilt here from what the history
shows: a file's content is its latest ``Read`` result (line numbers stripped; a partial read stands for the file), a
``Write``'s content, or that with the later ``Edit``s applied; a file whose content the history never showed (edited
without being read) is left out and counted. The 5,000-token limit is checked as the Read tool checks it: a rough
count first (characters / 4, / 2 for JSON), then — Claude Code asks the API — the run's counter. Background agents and hook output are not in the history: not rebuilt. Each attachment is rendered
as the log reader renders the same attachment type, so a replay's re-attachments read like logged ones.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

from ..conversation import Message
from ..formats import claude_code_attachments as attachments
from ..tokens import Counter
from ._claude_code_estimate import js_json
from ._claude_code_estimate import rough
from ._claude_code_versions import Version

MAX_FILES = 5
FILE_TOKEN_LIMIT = 5000
FILES_TOKEN_BUDGET = 50_000
#: file types Claude Code reads at two characters a token (everything else: four)
DENSE_SUFFIXES = (".json", ".jsonl", ".jsonc")
MEMORY_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
PLAN_FOLDER = "/.claude/plans/"
#: a line of the Read tool's output: right-aligned number, arrow (or tab in old releases), the text
_NUMBERED = re.compile(r"^ *\d+(?:→|\t)(.*)$")
_SKILL_BASE = re.compile(r"^Base directory for this skill: (.+)$", re.MULTILINE)
EDIT_TOOLS = ("Edit", "MultiEdit")
#: the meta flag a microcompacted result carries (set by the strategies)
CLEARED_FLAG = "claude_code_cleared"


@dataclass
class _File:
    content: str | None = None
    #: position of the last call that touched it (newest first when sorting)
    touched: int = -1


@dataclass
class Reattached:
    """The messages Claude Code adds after its summary, and what could not be rebuilt."""

    messages: list[Message] = field(default_factory=list)
    #: files Claude Code would restore whose content the history does not show
    unknown_files: int = 0


def reattach(history: Sequence[Message], version: Version, counter: Counter) -> Reattached:
    """The attachments that follow Claude Code's summary when it compacts ``history``."""
    out = Reattached()
    files = _files(history)
    recent = sorted((p for p in files if not _excluded(p)), key=lambda p: files[p].touched, reverse=True)[:MAX_FILES]
    budget = 0
    for path in recent:
        content = files[path].content
        if content is None:
            out.unknown_files += 1
            continue
        if _too_long(content, path, counter):
            attachment: dict[str, Any] = {"type": "compact_file_reference", "filename": path}
        else:
            attachment = {"type": "file", "filename": path,
                          "content": {"type": "text", "file": {"filePath": path, "content": content}}}
        size = rough(js_json(attachment))
        if budget + size > FILES_TOKEN_BUDGET:
            continue
        budget += size
        _add(out, attachment, version)
    todos = _latest_todos(history)
    if todos:
        _add(out, {"type": "todo", "content": todos, "itemCount": len(todos), "context": "post-compact"}, version)
    plan = next(((p, f.content) for p, f in sorted(files.items(), key=lambda kv: -kv[1].touched)
                 if PLAN_FOLDER in p and f.content), None)
    if plan is not None:
        _add(out, {"type": "plan_file_reference", "planFilePath": plan[0], "planContent": plan[1]}, version)
    skills = _invoked_skills(history)
    if skills:
        _add(out, {"type": "invoked_skills", "skills": skills}, version)
    return out


def _add(out: Reattached, attachment: Mapping[str, Any], version: Version) -> None:
    sent = attachments.render(attachment, version)
    if sent is None:
        return
    meta: dict[str, Any] = {"attachment": attachment["type"], "is_meta": True, "claude_code": "post-compact"}
    out.messages.append(Message("user", sent.texts, images=sent.images, meta=meta))


def _too_long(content: str, path: str, counter: Counter) -> bool:
    """The Read tool's limit: a rough count first, the exact one (here: the run's counter) past a quarter of it."""
    estimate = rough(content, 2 if path.endswith(DENSE_SUFFIXES) else 4)
    if estimate <= FILE_TOKEN_LIMIT // 4:
        return False
    return counter.count_one(Message("user", (content,))) > FILE_TOKEN_LIMIT


def _excluded(path: str) -> bool:
    return posixpath.basename(path) in MEMORY_FILES or PLAN_FOLDER in path


def _files(history: Sequence[Message]) -> dict[str, _File]:
    """Every file the history read, wrote or edited (and still knows): its content as far as the history shows it."""
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    files: dict[str, _File] = {}
    kept_reads = _paths_read_uncleared(history)
    for position, m in enumerate(history):
        for call in m.tool_calls:
            path = call.arguments.get("file_path")
            if not isinstance(path, str) or call.name not in ("Read", "Write", *EDIT_TOOLS):
                continue
            file = files.setdefault(path, _File())
            file.touched = position
            if call.id:
                calls[call.id] = (call.name, call.arguments)
            if call.name == "Write" and isinstance(call.arguments.get("content"), str):
                file.content = call.arguments["content"]
            elif call.name in EDIT_TOOLS:
                file.content = _edited(file.content, call.arguments)
        result = m.tool_result
        if result is None or result.error or result.call_id not in calls:
            continue
        name, arguments = calls[result.call_id]
        path = arguments.get("file_path")
        if name != "Read" or not isinstance(path, str):
            continue
        if m.meta.get(CLEARED_FLAG):
            if path not in kept_reads:
                files.pop(path, None)  # Claude Code forgets a file whose reads were all microcompacted
        elif path in files:
            files[path].content = _unnumbered(result.text)
    return files


def _paths_read_uncleared(history: Sequence[Message]) -> set[str]:
    paths = {c.id: c.arguments.get("file_path") for m in history for c in m.tool_calls if c.name == "Read"}
    return {paths[m.tool_result.call_id] for m in history  # type: ignore[misc]
            if m.tool_result is not None and m.tool_result.call_id in paths and not m.meta.get(CLEARED_FLAG)
            and isinstance(paths[m.tool_result.call_id], str)}


def _edited(content: str | None, arguments: Mapping[str, Any]) -> str | None:
    """``content`` after one Edit (or MultiEdit's edits); None when the content or an edit's text is unknown."""
    edits = cast("list[Any]", arguments.get("edits")) if isinstance(arguments.get("edits"), list) else [arguments]
    for edit in edits:
        if content is None or not isinstance(edit, Mapping):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or old not in content:
            return None
        content = content.replace(old, new) if edit.get("replace_all") is True else content.replace(old, new, 1)
    return content


def _unnumbered(text: str) -> str:
    """The Read tool's numbered output as the file's text (lines without a number prefix are kept as they are)."""
    lines = text.split("\n")
    return "\n".join(match.group(1) if (match := _NUMBERED.match(line)) else line for line in lines)


def _latest_todos(history: Sequence[Message]) -> list[Any]:
    for m in reversed(history):
        for call in reversed(m.tool_calls):
            if call.name == "TodoWrite" and isinstance(call.arguments.get("todos"), list):
                return list(call.arguments["todos"])
    return []


def _invoked_skills(history: Sequence[Message]) -> list[dict[str, str]]:
    """The skills the ``Skill`` tool loaded (newest first): the instructions Claude Code put after the call."""
    skills: list[dict[str, str]] = []
    names: dict[str, str] = {}
    for position, m in enumerate(history):
        for call in m.tool_calls:
            name = call.arguments.get("skill") or call.arguments.get("command")
            if call.name == "Skill" and isinstance(name, str) and call.id:
                names[call.id] = name
        result = m.tool_result
        if result is None or result.call_id not in names:
            continue
        body = next((n for n in history[position + 1:position + 3]
                     if n.role == "user" and n.meta.get("is_meta") and "attachment" not in n.meta), None)
        if body is not None:
            base = _SKILL_BASE.search(body.text)
            skills.append({"name": names[result.call_id],
                           "path": posixpath.join(base.group(1).strip(), "SKILL.md") if base else "",
                           "content": body.text})
    return skills[::-1]
