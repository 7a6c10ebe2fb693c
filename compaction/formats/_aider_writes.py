"""Splitting an ``.aider.chat.history.md`` back into the writes aider appended to it (``aider/io.py``).

Aider appends four kinds of text:

* the session header ``\\n# aider chat started at YYYY-MM-DD HH:MM:SS\\n\\n``;
* the person's input (``user_input``): ``\\n#### line1  \\n#### line2  \\n`` (one input, every line prefixed, each
  ending with two spaces);
* aider's own output (``tool_output`` / ``tool_warning`` / ``tool_error`` / answers to its questions):
  ``> text  \\n``. A warning or error of several lines is written line by line; ``tool_output`` of a multi-line
  text prefixes only its first line and ends only its last with the two spaces;
* the model's reply (``ai_output``): ``\\n`` + the reply + ``\\n\\n``, verbatim.

A reply may itself contain ``> `` or ``#### `` lines (Markdown quotes, headings). When the file keeps aider's
two-space line ends, an output or input line is told apart by them (aider always writes them, a model rarely
does); when an editor stripped them, every ``> `` / ``#### `` line starting a paragraph is aider's, as aider's own
``split_chat_history_markdown`` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

HEADER = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
#: aider's usage report, the one output that may continue on a line of its own after a reply
_USAGE_START = "> Tokens: "
_MARK = "  "


@dataclass
class Write:
    """One piece aider appended: ``user`` input, ``status`` output or the ``assistant``'s reply, with the line
    (1-based) it starts on."""

    kind: str
    text: str
    line: int


@dataclass
class Session:
    """The writes after one ``# aider chat started at`` header."""

    started_at: str | None
    line: int
    writes: list[Write] = field(default_factory=list)


def sessions(text: str) -> list[Session]:
    """The sessions of a chat history, each with its writes in order."""
    lines = text.splitlines()
    marked = _keeps_marks(lines)
    out: list[Session] = []
    for write in _Reader(lines, marked).writes():
        if write.kind == "header":
            out.append(Session(write.text, write.line))
        else:
            if not out:
                out.append(Session(None, write.line))
            out[-1].writes.append(write)
    return out


def _keeps_marks(lines: list[str]) -> bool:
    """Whether aider's two-space line ends survived (most input / output lines still have them)."""
    tagged = [line for line in lines if line.startswith(("#### ", "> ")) or line.rstrip() in ("####", ">")]
    return bool(tagged) and sum(line.endswith(_MARK) for line in tagged) * 2 >= len(tagged)


def _is_input(line: str) -> bool:
    return line.startswith("#### ") or line.rstrip() == "####"


def _is_output(line: str) -> bool:
    return line.startswith("> ") or line.rstrip() == ">"


class _Reader:
    def __init__(self, lines: list[str], marked: bool) -> None:
        self._lines = lines
        self._marked = marked

    def writes(self) -> list[Write]:
        """Every write in order; the rest of a multi-line output whose marks were stripped joins its output."""
        out: list[Write] = []
        for write in self._scan():
            if write.kind == "continuation" and out and out[-1].kind in ("status", "user"):
                out[-1].text += "\n" + write.text
            elif write.kind == "continuation":
                out.append(Write("status", write.text, write.line))
            else:
                out.append(write)
        return out

    def _scan(self) -> Iterator[Write]:
        lines, i = self._lines, 0
        previous = "blank"  # what the last non-blank line was: "header", "user", "status", "assistant"
        after_blank = True
        reply: list[str] = []
        reply_line = 0
        while i < len(lines):
            line = lines[i]
            header = HEADER.match(line)
            if header:
                if reply:
                    yield _reply(reply, reply_line)
                    reply = []
                yield Write("header", header.group(1), i + 1)
                previous, after_blank, i = "header", True, i + 1
                continue
            if not line.strip():
                if reply:
                    reply.append("")
                after_blank, i = True, i + 1
                continue
            kind = self._kind(line, previous, after_blank)
            if kind == "assistant":
                if not reply:
                    reply_line = i + 1
                reply.append(line)
                previous, after_blank, i = "assistant", False, i + 1
                continue
            if reply:
                yield _reply(reply, reply_line)
                reply = []
            if kind == "continuation":
                yield Write("continuation", line, i + 1)
                after_blank, i = False, i + 1
                continue
            end = self._end(i, kind)
            yield Write(kind, "\n".join(lines[i:end + 1]), i + 1)
            previous, after_blank, i = kind, False, end + 1
        if reply:
            yield _reply(reply, reply_line)

    def _kind(self, line: str, previous: str, after_blank: bool) -> str:
        directly_after_aider = not after_blank and previous in ("user", "status", "header")
        if directly_after_aider:
            if _is_input(line):
                return "user"
            if _is_output(line):
                return "status"
            return "continuation"  # the rest of a multi-line output whose marks were stripped
        if not after_blank:
            return "assistant"  # inside a reply: its own quotes and headings
        marked = line.endswith(_MARK) or not self._marked
        if _is_input(line) and marked:
            return "user"
        if _is_output(line) and (marked or line.startswith(_USAGE_START)):
            return "status"
        return "assistant"

    def _end(self, start: int, kind: str) -> int:
        """The last line of the write starting at ``start``: for an input, its last ``#### `` line; for a
        multi-line output (its first line lacks the two-space end) the first later line that has it; else the line
        itself."""
        lines = self._lines
        if kind == "user":
            end = start
            while end + 1 < len(lines) and _is_input(lines[end + 1]):
                end += 1
            return end
        if kind != "status" or not self._marked or lines[start].endswith(_MARK):
            return start
        for end in range(start + 1, len(lines)):
            if HEADER.match(lines[end]) or _is_input(lines[end]):
                break
            if lines[end].endswith(_MARK):
                return end
        return start


def _reply(lines: list[str], line: int) -> Write:
    return Write("assistant", "\n".join(lines).strip("\n"), line)


def input_text(write: Write) -> str:
    """The person's input as typed: the ``#### `` prefixes and aider's two-space line ends taken off."""
    out = []
    for line in write.text.split("\n"):
        body = line[5:] if line.startswith("#### ") else line[4:] if line.startswith("####") else line
        out.append(body[:-2] if body.endswith(_MARK) else body.rstrip() if not body.strip() else body)
    return "\n".join(out)


def output_text(write: Write) -> str:
    """Aider's output as it printed it: the ``> `` prefix and the two-space end taken off."""
    text = write.text
    text = text[2:] if text.startswith("> ") else text[1:] if text.startswith(">") else text
    return text[:-2] if text.endswith(_MARK) else text.rstrip() if not text.strip() else text
