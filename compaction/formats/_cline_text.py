"""The text conventions of Cline and Roo Code histories: tool-result headers, notices, environment details and the
XML tool calls of older versions.

Both agents send a tool's outcome back as user *text* when the call has no native id (XML tools, or Cline's
fallback when a native id is lost), opened by the tool's description and ``Result:``:

* ``[read_file for 'src/x.ts'] Result:\\n<content>`` — one block (Cline ≥ 3.3x, ``ToolResultUtils``);
* ``[read_file for 'src/x.ts'] Result:`` followed by the content in the next text block(s) and any images — older
  Cline (``Cline.ts``) and Roo Code's XML protocol (``presentAssistantMessage``);
* descriptions vary by tool: ``[attempt_completion]``, ``[search_files for 'x' in '*.ts']``, ``[switch_mode to
  'code' because: …]``, ``[new_task in Code mode: '…']``, ``[read_file for 'a', 'b']``, ``[subagent: name]``…; the
  tool name is the description's first word when it is one;
* calls that were never run are answered by a notice instead: ``Tool [read_file] was not executed because a tool
  has already been used in this message…``, ``Skipping tool [x] due to user rejecting a previous tool.``, ``Tool
  [x] was interrupted and not executed due to user rejecting a previous tool.`` (and Cline's newer ``Skipping tool
  due to user rejecting a previous tool. [x]`` forms).

Assistant text of XML versions holds calls as ``<tool_name><param>value</param>…</tool_name>`` (Cline's
``parseAssistantMessageV2``: only known tool names open a call, a parameter runs to its own closing tag and is
trimmed, ``write_to_file``'s ``content`` ends at the *last* ``</content>``, an unclosed call was never run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: tool names of Cline (``ClineDefaultTool``) and Roo Code (``toolNames``, older versions' tools included) that open
#: an XML call in assistant text; names answered by a result header elsewhere in the log are added per log
XML_TOOL_NAMES = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource", "ask_followup_question",
    "attempt_completion", "plan_mode_respond", "act_mode_respond", "load_mcp_documentation", "new_task", "condense",
    "summarize_task", "report_bug", "new_rule", "web_fetch", "web_search", "focus_chain", "apply_patch",
    "generate_explanation", "use_skill", "use_subagents", "apply_diff", "insert_content", "search_and_replace",
    "search_replace", "edit_file", "switch_mode", "fetch_instructions", "codebase_search", "update_todo_list",
    "run_slash_command", "generate_image", "simple_read_file",
})
#: Cline's condense tools: ``summarize_task`` (automatic, asked for by ``<explicit_instructions
#: type="summarize_task">``) and ``condense`` (the user's ``/smol`` / ``/compact``)
CONDENSE_TOOLS = frozenset({"summarize_task", "condense"})
#: parameters whose value may itself contain the closing tag (Cline takes the last one)
_GREEDY_PARAMS = {"write_to_file": "content", "new_rule": "content"}

ENVIRONMENT_DETAILS = "<environment_details>"
_RESULT_MARK = "] Result:"
_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_NOTICES = (
    re.compile(r"^Tool \[(?P<desc>[^\]\n]+)\] was not executed because a tool has already been used in this message"),
    re.compile(r"^Skipping tool \[(?P<desc>.+?)\] due to user rejecting a previous tool\.", re.S),
    re.compile(r"^Tool \[(?P<desc>.+?)\] was interrupted and not executed due to user rejecting a previous tool\.",
               re.S),
    re.compile(r"^(?:Skipping tool|Tool was interrupted and not executed) due to user rejecting a previous tool\. "
               r"\[(?P<desc>.+?)\]\s*$", re.S),
)
#: the opening of results that report a failure (Cline ``formatResponse.toolError`` / ``toolDenied``, Roo's JSON)
_ERROR_OPENINGS = ("The tool execution failed with the following error", "The user denied this operation",
                   '{"status":"error"', '{"status":"denied"', "Error ")
#: user text that is never part of a tool's result (it ends a result's content blocks)
_USER_OPENINGS = (ENVIRONMENT_DETAILS, "[TASK RESUMPTION]", "<user_message>", "<feedback>", "<hook_context",
                  "The user provided the following feedback", "[ERROR] You did not use a tool")


@dataclass(frozen=True)
class Header:
    """A result header: the tool name it names (``None`` when the description does not start with one) and the
    text after ``Result:`` in the same block (empty in the two-block form)."""

    name: str | None
    rest: str


def result_header(text: str) -> Header | None:
    """The header a text block opens with, or None."""
    if not text.startswith("["):
        return None
    end = text.find(_RESULT_MARK)
    if end < 0:
        return None
    rest = text[end + len(_RESULT_MARK):]
    if rest[:1] not in ("", "\n", " "):
        return None
    return Header(_tool_name(text[1:end]), rest.strip())


def not_run_notice(text: str) -> str | None:
    """For a notice answering a call that was never run: the tool name it names (``""`` when it names none)."""
    for pattern in _NOTICES:
        match = pattern.match(text)
        if match:
            return _tool_name(match.group("desc")) or ""
    return None


def _tool_name(description: str) -> str | None:
    match = _NAME.match(description)
    if match is None:
        return None
    name = match.group(0)
    after = description[match.end():]
    return name if after == "" or after[0] in " ,." else None


def reports_failure(content: str) -> bool:
    """Whether a result's content (after its header) reports an error or a denial."""
    return content.lstrip().startswith(_ERROR_OPENINGS)


def is_user_text(text: str) -> bool:
    """Whether a text block is the user's (environment details, feedback, resumption…), never a result's content."""
    return text.lstrip().startswith(_USER_OPENINGS)


def is_environment_details(text: str) -> bool:
    return text.lstrip().startswith(ENVIRONMENT_DETAILS)


# ------------------------------------------------------------------------------------------------ XML tool calls
@dataclass(frozen=True)
class XmlCall:
    name: str
    params: dict[str, str]


_PARAM_OPEN = re.compile(r"<([A-Za-z_][A-Za-z0-9_-]*)>")


def split_xml_calls(text: str, names: frozenset[str]) -> tuple[list[str], list[XmlCall]]:
    """The text around the complete XML tool calls in ``text`` (each segment trimmed, empty ones dropped) and the
    calls, in order. An unclosed call (the response was cut off) stays text: the agent never ran it."""
    if "<" not in text or not names:
        return ([text] if text.strip() else []), []
    opener = _opener(names)
    segments: list[str] = []
    calls: list[XmlCall] = []
    start = 0
    for match in opener.finditer(text):
        if match.start() < start:
            continue  # inside a call already read
        parsed = _read_call(text, match.group(1), match.end())
        if parsed is None:
            break
        call, end = parsed
        _keep(segments, text[start:match.start()])
        calls.append(call)
        start = end
    _keep(segments, text[start:])
    return segments, calls


_OPENERS: dict[frozenset[str], re.Pattern[str]] = {}


def _opener(names: frozenset[str]) -> re.Pattern[str]:
    pattern = _OPENERS.get(names)
    if pattern is None:
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        pattern = _OPENERS[names] = re.compile(f"<({alternatives})>")
    return pattern


def _keep(segments: list[str], piece: str) -> None:
    piece = piece.strip()
    if piece:
        segments.append(piece)


def _read_call(text: str, name: str, body_start: int) -> tuple[XmlCall, int] | None:
    """The call whose body starts at ``body_start`` and the offset after its closing tag; None if it never closes."""
    close = f"</{name}>"
    params: dict[str, str] = {}
    pos = body_start
    while True:
        close_at = text.find(close, pos)
        param = _PARAM_OPEN.search(text, pos)
        if param is not None and (close_at < 0 or param.start() < close_at):
            param_close = f"</{param.group(1)}>"
            value_end = text.find(param_close, param.end())
            if value_end < 0:  # a stray tag, not a parameter
                pos = param.end()
                continue
            params[param.group(1)] = text[param.end():value_end].strip()
            pos = value_end + len(param_close)
            continue
        if close_at < 0:
            return None
        greedy = _GREEDY_PARAMS.get(name)
        if greedy is not None:
            _take_greedy(text[body_start:close_at], greedy, params)
        return XmlCall(name, params), close_at + len(close)


def _take_greedy(body: str, param: str, params: dict[str, str]) -> None:
    opening, closing = f"<{param}>", f"</{param}>"
    first, last = body.find(opening), body.rfind(closing)
    if first >= 0 and last > first:
        params[param] = body[first + len(opening):last].strip()
