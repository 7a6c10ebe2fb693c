"""Conversations from an ``.aider.chat.history.md``: what of the transcript reached the model (``aider/coders/
base_coder.py``, ``aider/commands.py``, ``aider/prompts.py``).

Each ``# aider chat started at`` session is a conversation, and so is each stretch after ``/clear`` or
``/reset`` (aider drops the whole chat history: the next call sees none of it). In a session:

* an input is the user's message; an input that is a command (``/…``, ``!…``) is not sent and is kept as a user
  message the model never saw (``meta["hidden_from_agent"]``); ``/ask``, ``/code``, ``/architect`` with a text are
  logged by aider a second time as a plain input, which is the message sent;
* a reply is one LLM call; the ``Tokens: … sent, … received.`` line after it is its usage (rounded by aider to
  0.1k below 10k and to 1k above, so approximate: ``Source.meta["usage_approximate"]``), ``Cost:`` goes to the
  message's ``meta``;
* aider's output lines are its own and not sent (their count is ``Source.meta["aider_output_lines"]``), except
  where aider adds a message to the chat, which is rebuilt with aider's own wording: ``Commit <hash> <msg>``
  after an edit (``I committed the changes with git hash …``, answered ``Ok.``; ``I updated the files.`` or ``I
  didn't see any properly formatted edits…`` when no commit follows), added mentioned files (``I added these
  files to the chat: …``), an edit-format error, lint errors the person asked to fix (sent back as the next
  request; aider logs them with each line's indentation stripped), ``/run`` / ``/test`` / suggested shell
  command output added to the chat, ``/web`` pages and URLs added to an input, and an interrupted request (``^C
  KeyboardInterrupt`` / ``I see that you interrupted my previous reply.``). Command output and page contents are
  not in the transcript: a stand-in says what is missing (``meta["aider_not_in_log"]``). Aider's own replies
  (``Ok.``) are flagged ``meta["generated"] = False``;
* in architect mode aider hands the architect's reply to the editor model, logging it as an input: that input and
  the editor's reply are flagged ``meta["aider_role"] = "editor"`` (the editor's call has its own context, which
  the transcript does not hold), and the architect's chat then gets ``I made those changes to the files.``
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from ..conversation import Conversation
from ..conversation import LoadWarning
from ..conversation import Message
from ..conversation import Source
from ..conversation import Usage
from ._aider_writes import Session
from ._aider_writes import Write
from ._aider_writes import input_text
from ._aider_writes import output_text

# aider's own messages to the model (aider/prompts.py, aider/coders/base_prompts.py, aider/coders/base_coder.py)
RUN_OUTPUT = "I ran this command:\n\n{command}\n\nAnd got this output:\n\n{output}\n"
SHELL_OUTPUT = "Output from {command}\n{output}\n"
ADDED_FILES = "I added these files to the chat: {fnames}\nLet me know if there are others we should add."
COMMITTED = "I committed the changes with git hash {hash} & commit msg: {message}"
UPDATED = "I updated the files."
NO_EDITS = "I didn't see any properly formatted edits in your reply?!"
WEB_CONTENT = "Here is the content of {url}:\n\n{content}"
INTERRUPT = "^C KeyboardInterrupt"
INTERRUPTED = "I see that you interrupted my previous reply."
EDITOR_DONE = "I made those changes to the files."

_NUMBER = r"[\d,]+(?:\.\d+)?k?"
_TOKENS = re.compile(rf"^Tokens: (?P<sent>{_NUMBER}) sent(?:, (?P<write>{_NUMBER}) cache write)?"
                     rf"(?:, (?P<hit>{_NUMBER}) cache hit)?, (?P<received>{_NUMBER}) received\."
                     r"(?:\s+Cost: \$(?P<cost>[\d.]+) message, \$(?P<session>[\d.]+) session\.)?")
_VERSION = re.compile(r"^Aider v(\S+)$")
_MODEL = re.compile(r"^(Main model|Model|Editor model): (\S+) with (\S+) edit format")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$", re.S)
_APPLIED = re.compile(r"^(Applied edit to |Did not apply edit to .* \(--dry-run\)$)")
_APPLY_FAILED = re.compile(r"^# \d+ SEARCH/REPLACE blocks? failed to match!")
_ANSWER = re.compile(r"^(?P<question>.+?)\? \(Y\)es/\(N\)o.*\]: ?(?P<answer>[a-z])$", re.S)
_RUN_ADDED = re.compile(r"^Added (\d+) lines? of output to the chat\.$")
_RUNNING = re.compile(r"^Running (.+)$", re.S)
_SCRAPING = re.compile(r"^Scraping (\S+)\.\.\.$")
_CLEARED = ("All chat history cleared.", "All files dropped and chat history cleared.")
_EDIT_FORMAT_ERROR = "The LLM did not conform to the edit format."
_EDIT_ERRORS_URL = "https://aider.chat/docs/troubleshooting/edit-errors.html"
_RUN_COMMANDS = ("/run ", "/test ", "!")

USAGE_NOTE = "Tokens: lines are rounded by aider (0.1k below 10k, 1k above)"


@dataclass
class _Reply:
    """What aider did after the latest reply (until the next input): the statuses that add messages."""

    edited: bool = False
    committed: bool = False
    commit_failed: bool = False
    expect_error: bool = False
    reflection: str | None = None
    added_files: list[str] = field(default_factory=list)
    lint_lines: list[str] = field(default_factory=list)
    shell_commands: list[str] = field(default_factory=list)
    subject: str | None = None
    url: str | None = None
    #: the reply is the editor model's (architect mode)
    editor: bool = False
    active: bool = False


@dataclass
class _Segment:
    """One conversation of a session (a session is cut at ``/clear``)."""

    messages: list[Message] = field(default_factory=list)
    usage: dict[int, Usage] = field(default_factory=dict)
    #: aider's output lines that sent nothing to the model
    skipped: int = 0
    stand_ins: int = 0


class SessionReader:
    """Reads one session's writes into its conversations."""

    def __init__(self, session: Session, number: int, path: str | None) -> None:
        self._session = session
        self._number = number
        self._path = path
        self._segments = [_Segment()]
        self._reply = _Reply()
        self._command: str | None = None
        self._awaiting_reply = False
        self._editor_request = False
        self._interrupted = False
        self._model: str | None = None
        self._editor_model: str | None = None
        self._edit_format: str | None = None
        self._version: str | None = None
        self._no_repo = False
        self._no_auto_commits = False

    # ------------------------------------------------------------------------------------------------ output
    def conversations(self) -> list[Conversation]:
        for write in self._session.writes:
            if write.kind == "user":
                self._input(write)
            elif write.kind == "assistant":
                self._answer(write)
            else:
                self._status(output_text(write), write)
        self._settle()
        return [self._conversation(i, segment) for i, segment in enumerate(self._segments)]

    def _conversation(self, index: int, segment: _Segment) -> Conversation:
        ident = f"session-{self._number}" + (f".{index + 1}" if index else "")
        warnings: list[LoadWarning] = []
        if segment.stand_ins:
            warnings.append(LoadWarning(f"{segment.stand_ins} command output(s) or web page(s) the model read are not "
                                        "in the chat history: a stand-in marks each"))
        models = Counter(m.meta["model"] for m in segment.messages if m.role == "assistant" and "model" in m.meta
                         and m.meta.get("generated") is not False)
        meta: dict[str, Any] = {}
        if self._session.started_at:
            meta["started_at"] = self._session.started_at
        if self._edit_format:
            meta["edit_format"] = self._edit_format
        if segment.usage:
            meta["usage_approximate"] = USAGE_NOTE
        if segment.skipped:  # announcements, questions, notices: aider's own output, never sent
            meta["aider_output_lines"] = segment.skipped
        source = Source("aider", self._path, ident, tuple(warnings),
                        model=models.most_common(1)[0][0] if models else self._model,
                        agent_version=self._version, meta=meta)
        return Conversation(tuple(segment.messages), (), source, usage=dict(segment.usage))

    @property
    def _segment(self) -> _Segment:
        return self._segments[-1]

    def _add(self, message: Message) -> None:
        self._segment.messages.append(message)

    def _aider_says(self, text: str, reply: str | None = "Ok.", line: int | None = None, **meta: Any) -> None:
        """A message aider adds to the chat, and aider's canned answer to it (not a model's)."""
        self._add(Message("user", (text,), meta={"aider_added": True, **({"line": line} if line else {}), **meta}))
        if reply is not None:
            self._add(Message("assistant", (reply,), meta={"aider_added": True, "generated": False}))

    def _stand_in(self, what: str) -> str:
        self._segment.stand_ins += 1
        return f"[{what}: not kept in .aider.chat.history.md]"

    # ------------------------------------------------------------------------------------------------ writes
    def _input(self, write: Write) -> None:
        text = input_text(write)
        if _ANSWER.match(text):  # a question answered for a group ("All"), logged by aider as an input
            self._status(text, write)
            return
        self._settle()
        self._reply = _Reply()
        if text.startswith(("/", "!")):
            self._command = text
            name = "!" if text.startswith("!") else text.split(None, 1)[0]
            self._add(Message("user", (text,), meta={"line": write.line, "hidden_from_agent": True,
                                                     "aider_command": name}))
            return
        messages = self._segment.messages
        editor = (self._edit_format == "architect" and bool(messages) and messages[-1].role == "assistant"
                  and messages[-1].meta.get("generated") is not False and messages[-1].text == text)
        self._add(Message("user", (text,), meta={"line": write.line, **({"aider_role": "editor"} if editor else {})}))
        self._awaiting_reply = True
        self._editor_request = editor

    def _answer(self, write: Write) -> None:
        reply = self._reply
        self._settle_edits()  # aider files the edit outcome before it sends a reflection back
        if reply.reflection is not None:
            self._aider_says(reply.reflection, None, reflection=True)
        editor = self._editor_request or reply.editor
        meta: dict[str, Any] = {"line": write.line}
        model = self._editor_model if editor else self._model
        if model:
            meta["model"] = model
        if editor:
            meta["aider_role"] = "editor"
        self._add(Message("assistant", (write.text,), meta=meta))
        self._awaiting_reply = self._editor_request = False
        self._reply = _Reply(active=True, editor=editor)

    def _settle(self) -> None:
        """Close what the latest reply left open (an interruption, edits without a commit line, the editor's run)."""
        self._settle_edits()
        if self._reply.editor:
            self._reply.editor = False
            self._aider_says(EDITOR_DONE)
        if self._interrupted:
            self._interrupted = False
            messages = self._segment.messages
            if messages and messages[-1].role == "user" and not messages[-1].meta.get("hidden_from_agent"):
                last = messages[-1]
                messages[-1] = Message("user", (*last.texts[:-1], last.texts[-1] + "\n" + INTERRUPT), meta=last.meta)
                self._add(Message("assistant", (INTERRUPTED,), meta={"aider_added": True, "generated": False}))
            else:
                self._aider_says(INTERRUPT, INTERRUPTED)

    def _settle_edits(self) -> None:
        reply = self._reply
        if reply.edited and not reply.committed:
            reply.committed = True
            plain = self._no_repo or self._no_auto_commits or reply.commit_failed
            self._aider_says(UPDATED if plain else NO_EDITS)

    # ------------------------------------------------------------------------------------------------ statuses
    def _status(self, text: str, write: Write) -> None:
        if not self._effect(text, write):
            self._segment.skipped += 1

    def _effect(self, text: str, write: Write) -> bool:
        """Apply a status line's effect on what the model is sent; False when it has none."""
        reply = self._reply
        tokens = _TOKENS.match(text)
        if tokens:
            return self._usage(tokens)
        if text in _CLEARED:
            self._settle()
            self._segments.append(_Segment())
            self._reply = _Reply()
            return True
        if text == "^C again to exit":
            if self._awaiting_reply:
                self._interrupted = True
            return False
        self._announcement(text)
        if not reply.active:
            return self._input_effect(text, write)
        if _APPLIED.match(text):
            reply.edited = True
            return False
        commit = _COMMIT.match(text)
        if commit:
            if reply.edited and not reply.committed:
                reply.committed = True
                self._aider_says(COMMITTED.format(hash=commit.group(1), message=commit.group(2)))
                return True
            return False
        if text.startswith("Unable to commit"):
            reply.commit_failed = True
            return False
        if text == _EDIT_FORMAT_ERROR:
            reply.expect_error = True
            return False
        if reply.expect_error and not text.startswith(_EDIT_ERRORS_URL):
            reply.expect_error = False
            reply.reflection = text
            if _APPLY_FAILED.match(text):
                reply.edited = True  # the blocks were parsed: aider goes on to commit (nothing)
            return True
        answer = _ANSWER.match(text)
        if answer:
            return self._reply_question(answer.group("question"), answer.group("answer"), write)
        running = _RUNNING.match(text)
        if running:
            reply.shell_commands.append(running.group(1))
            return False
        if _RUN_ADDED.match(text):
            return self._command_output(text, write)
        if reply.edited:
            reply.lint_lines.append(text)
        reply.subject = text
        return False

    def _input_effect(self, text: str, write: Write) -> bool:
        """Statuses between an input and the reply: command output and pages added, URLs added to the input."""
        reply = self._reply
        if _RUN_ADDED.match(text):
            return self._command_output(text, write)
        scraping = _SCRAPING.match(text)
        if scraping:
            reply.url = scraping.group(1)
            return False
        if text == "... added to chat." and reply.url:
            self._aider_says(WEB_CONTENT.format(url=reply.url, content=self._stand_in("the page's content")),
                             line=write.line, aider_not_in_log="web page")
            return True
        answer = _ANSWER.match(text)
        if answer and answer.group("question") == "Add URL to the chat" and answer.group("answer") in "ya":
            return self._url_into_input(reply.subject)
        reply.subject = text
        return False

    def _reply_question(self, question: str, answer: str, write: Write) -> bool:
        reply = self._reply
        yes = answer in ("y", "a")
        if question == "Add file to the chat" and yes and reply.subject:
            if reply.subject not in reply.added_files:  # a group's answer is logged twice (input and output)
                reply.added_files.append(reply.subject)
            reply.reflection = ADDED_FILES.format(fnames=", ".join(reply.added_files))
            return True
        if question == "Attempt to fix lint errors" and yes and reply.lint_lines:
            reply.reflection = "\n".join(reply.lint_lines)
            return True
        if question == "Attempt to fix test errors" and yes:
            last = self._segment.messages[-2] if len(self._segment.messages) > 1 else None
            if last is not None and last.meta.get("aider_not_in_log") == "command output":
                reply.reflection = last.text
                return True
        return False

    def _command_output(self, text: str, write: Write) -> bool:
        """``Added N lines of output to the chat.``: a ``/run`` / ``/test`` command's output, or the output of the
        shell commands the model suggested."""
        lines = _RUN_ADDED.match(text).group(1)  # type: ignore[union-attr]
        reply = self._reply
        if reply.active and reply.shell_commands:
            body = "".join(SHELL_OUTPUT.format(command=c, output=self._stand_in(f"the output of {c}"))
                           for c in reply.shell_commands) + "\n\n"
            self._aider_says(body, "Ok", line=write.line, aider_not_in_log="command output")
            reply.shell_commands = []
            return True
        if reply.active:  # the test command aider runs after an edit (--auto-test): the transcript does not name it
            command = self._stand_in("the test command")
        else:
            command = self._command or ""
        for prefix in _RUN_COMMANDS:
            if command.startswith(prefix):
                command = command[len(prefix):].strip()
                break
        output = self._stand_in(f"{lines} line(s) of command output")
        self._aider_says(RUN_OUTPUT.format(command=command, output=output), line=write.line,
                         aider_not_in_log="command output")
        return True

    def _url_into_input(self, url: str | None) -> bool:
        messages = self._segment.messages
        if not url or not messages or messages[-1].role != "user" or messages[-1].meta.get("hidden_from_agent"):
            return False
        last = messages[-1]
        page = WEB_CONTENT.format(url=url, content=self._stand_in("the page's content"))
        messages[-1] = Message("user", (*last.texts[:-1], last.texts[-1] + "\n\n" + page),
                               meta={**last.meta, "aider_not_in_log": "web page"})
        return True

    def _announcement(self, text: str) -> None:
        version = _VERSION.match(text)
        if version:
            self._version = version.group(1)
            return
        model = _MODEL.match(text)
        if model:
            if model.group(1) == "Editor model":
                self._editor_model = model.group(2)
            else:
                self._model, self._edit_format = model.group(2), model.group(3)
            return
        if text == "Git repo: none":
            self._no_repo = True
        elif self._version is None and "aider" in text and "--no-auto-commits" in text.split():
            self._no_auto_commits = True

    def _usage(self, tokens: re.Match[str]) -> bool:
        messages = self._segment.messages
        index = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"
                      and messages[i].meta.get("generated") is not False), None)
        if index is None or index in self._segment.usage:
            return True
        sent, hit, write = (_count(tokens.group(k)) for k in ("sent", "hit", "write"))
        self._segment.usage[index] = Usage(input_tokens=max(sent - hit - write, 0),
                                           output_tokens=_count(tokens.group("received")),
                                           cache_read_tokens=hit, cache_write_tokens=write)
        if tokens.group("cost"):
            messages[index] = messages[index].with_meta(cost=float(tokens.group("cost")))
        return True


def _count(text: str | None) -> int:
    """A token count as aider prints it: ``222``, ``3.2k``, ``12k`` (older versions: ``1,234``)."""
    if not text:
        return 0
    text = text.replace(",", "")
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return round(float(text))
