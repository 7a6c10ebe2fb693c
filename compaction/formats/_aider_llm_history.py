"""Conversations from an ``.aider.llm.history`` (``--llm-history-file``): every request aider sent its main model,
exactly, and every reply (``Coder.send`` and ``InputOutput.log_llm_history``).

The file is a sequence of blocks, each a header line then its content:

* ``TO LLM <iso time>``: the whole request, its messages separated by ``-------`` lines, every line of a message
  prefixed with its role (``SYSTEM``, ``USER``, ``ASSISTANT``) and a space (a message with list content, e.g. an
  image, has one ``ROLE key: value`` line per item key, a multi-line text value continuing unprefixed);
* ``LLM RESPONSE <iso time>``: the reply, every line prefixed ``ASSISTANT``.

A request carries the whole chat: system prompt, examples, repo map, the past exchanges, the files in the chat, the
new message, the reminder. So a *run* (calls that carry the previous reply forward) is read as its last request
plus its reply, with each earlier reply found in it an LLM call; aider's own canned replies (``Ok.``, the
acknowledgements of the files and repo map) are flagged ``meta["generated"] = False``. A request that carries no
earlier reply starts a new run (a new aider session, ``/clear``, an architect's editor call). When aider has
summarized the chat history (a request holding ``I spoke to you previously about a number of things.``), the run
goes on past a mark of the log's own compaction: the later request's new messages follow its summary, which is
flagged as the log's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field

from ..conversation import Conversation
from ..conversation import Image
from ..conversation import LoadWarning
from ..conversation import LogEvent
from ..conversation import Message
from ..conversation import Source

BLOCK = re.compile(r"^(TO LLM|LLM RESPONSE) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*)\s*$")
SEPARATOR = "-------"
ROLES = {"SYSTEM": "system", "USER": "user", "ASSISTANT": "assistant"}
_ROLE_LINE = re.compile(r"^(SYSTEM|USER|ASSISTANT)(?: (.*))?$", re.S)
#: the first words of aider's chat-history summary (``ChatSummary.summarize_real``)
SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"


@dataclass
class _Block:
    kind: str
    time: str
    line: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Call:
    request: list[Message]
    reply: str | None
    sent_at: str
    answered_at: str | None
    line: int


@dataclass
class _Run:
    calls: list[_Call] = field(default_factory=list)

    @property
    def last_reply(self) -> str | None:
        return next((c.reply for c in reversed(self.calls) if c.reply and c.reply.strip()), None)


def blocks(text: str) -> tuple[list[_Block], list[LoadWarning]]:
    """The ``TO LLM`` / ``LLM RESPONSE`` blocks of the file, and a warning for text before the first one."""
    out: list[_Block] = []
    warnings: list[LoadWarning] = []
    for number, line in enumerate(text.splitlines(), 1):
        header = BLOCK.match(line)
        if header:
            out.append(_Block(header.group(1), header.group(2), number))
        elif out:
            out[-1].lines.append(line)
        elif line.strip():
            warnings.append(LoadWarning("skipped: text before the first 'TO LLM' block", line=number))
    return out, warnings


def request_messages(block: _Block, warnings: list[LoadWarning]) -> list[Message]:
    """The messages of a ``TO LLM`` block."""
    chunks: list[list[str]] = [[]]
    for line in block.lines:
        if line == SEPARATOR:
            chunks.append([])
        else:
            chunks[-1].append(line)
    messages = []
    for chunk in chunks:
        while chunk and not chunk[-1].strip() and not _ROLE_LINE.match(chunk[-1]):
            chunk.pop()  # the blank line a block ends with
        if not chunk:
            continue
        message = _message(chunk, block.line, warnings)
        if message is not None:
            messages.append(message)
    return messages


def _message(lines: list[str], line: int, warnings: list[LoadWarning]) -> Message | None:
    first = _ROLE_LINE.match(lines[0])
    if not first:
        warnings.append(LoadWarning(f"a message of the request does not start with a role: {lines[0][:60]!r}; "
                                    "skipped", line=line))
        return None
    tag = first.group(1)
    bodies = [_strip_role(text, tag) for text in lines]
    if bodies[0] is not None and bodies[0].startswith("type: "):
        return _list_message(tag, bodies, lines)
    text = "\n".join(body if body is not None else raw for body, raw in zip(bodies, lines, strict=True))
    return Message(ROLES[tag], (text,))  # type: ignore[arg-type]


def _strip_role(text: str, tag: str) -> str | None:
    if text == tag:
        return ""
    if text.startswith(tag + " "):
        return text[len(tag) + 1:]
    return None


def _list_message(tag: str, bodies: list[str | None], lines: list[str]) -> Message:
    """A message whose content was a list (``ROLE type: text``, ``ROLE text: …``, ``ROLE Image_url URL: …``)."""
    texts: list[list[str]] = []
    images: list[Image] = []
    in_text = False
    for body, raw in zip(bodies, lines, strict=True):
        if body is None:  # a text value's next line
            if in_text:
                texts[-1].append(raw)
            continue
        in_text = body.startswith("text: ")
        if in_text:
            texts.append([body[len("text: "):]])
        elif body.startswith("Image_url URL: "):
            url = body[len("Image_url URL: "):]
            images.append(Image(source="base64" if url.startswith("data:") else url))
    return Message(ROLES[tag], tuple("\n".join(t) for t in texts), images=tuple(images))  # type: ignore[arg-type]


def reply_text(block: _Block) -> str:
    """The reply of an ``LLM RESPONSE`` block."""
    lines = list(block.lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(stripped if (stripped := _strip_role(line, "ASSISTANT")) is not None else line
                     for line in lines)


def read_llm_history(text: str, path: str | None) -> list[Conversation]:
    """Every run of the file as a conversation."""
    found, warnings = blocks(text)
    calls: list[_Call] = []
    for i, block in enumerate(found):
        if block.kind == "LLM RESPONSE":
            if i == 0 or found[i - 1].kind != "TO LLM":
                warnings.append(LoadWarning("'LLM RESPONSE' without the 'TO LLM' request before it: skipped",
                                            line=block.line))
            continue
        answer = found[i + 1] if i + 1 < len(found) and found[i + 1].kind == "LLM RESPONSE" else None
        request = request_messages(block, warnings)
        calls.append(_Call(request, reply_text(answer) if answer else None, block.time,
                           answer.time if answer else None, block.line))
    unanswered = [c for c in calls if c.reply is None]
    if unanswered:
        warnings.append(LoadWarning(f"{len(unanswered)} request(s) without a reply (the call failed or the file "
                                    "ends): not LLM calls", line=unanswered[0].line))
    runs = _runs([c for c in calls if c.reply is not None])
    return [_conversation(run, i + 1, path, warnings if i == 0 else []) for i, run in enumerate(runs)]


def _texts(messages: list[Message], role: str) -> set[str]:
    return {m.text.strip() for m in messages if m.role == role}


def _summary_of(request: list[Message]) -> str | None:
    return next((m.text for m in request if m.role == "user" and m.text.startswith(SUMMARY_PREFIX)), None)


def _runs(calls: list[_Call]) -> list[_Run]:
    """Calls grouped into runs: a call joins the latest run whose last reply its request carries, or, when its
    request holds a new chat summary, the latest run (the summary replaced the replies)."""
    runs: list[_Run] = []
    for call in calls:
        replies = _texts(call.request, "assistant")
        home = next((r for r in reversed(runs) if r.last_reply and r.last_reply.strip() in replies), None)
        if home is None and runs and _summary_of(call.request) is not None:
            home = runs[-1]
        if home is None:
            home = _Run()
            runs.append(home)
        home.calls.append(call)
    return runs


def _conversation(run: _Run, number: int, path: str | None, shared: list[LoadWarning]) -> Conversation:
    """A run: for each stretch between chat summaries, its last request and reply; earlier replies found in it are
    the stretch's LLM calls."""
    messages: list[Message] = []
    events: list[LogEvent] = []
    summaries: set[int] = set()
    warnings = list(shared)
    lost = 0
    for stretch in _stretches(run.calls):
        last = stretch[-1]
        request = list(last.request)
        start = 0
        if messages:  # after a summary: what the earlier stretch already holds is not repeated
            start = _common_prefix(messages, request)
            summary_at = next((i for i in range(start, len(request)) if request[i].text.startswith(SUMMARY_PREFIX)),
                              start)
            events.append(LogEvent(len(messages), "compaction", summary=request[summary_at].text))
            request = request[start:]
        made, found = _with_calls(request, stretch)
        lost += len(stretch) - found
        if events and events[-1].message_index == len(messages):
            summaries.update(len(messages) + i for i, m in enumerate(made)
                             if m.text.startswith(SUMMARY_PREFIX) or _acknowledges_summary(made, i))
        messages += made
    if lost:
        warnings.append(LoadWarning(f"{lost} reply(ies) of this run are not in its last request (empty, or dropped "
                                    "by aider): not read"))
    first = run.calls[0]
    source = Source("aider", path, f"run-{number}", tuple(warnings),
                    meta={"started_at": first.sent_at, "requests": len(run.calls)})
    return Conversation(tuple(messages), (), source, events=tuple(events), log_summary_indices=frozenset(summaries))


def _stretches(calls: list[_Call]) -> list[list[_Call]]:
    """Calls cut where the chat summary a request holds changes."""
    out: list[list[_Call]] = []
    summary: str | None = None
    for call in calls:
        current = _summary_of(call.request)
        if not out or (current is not None and current != summary):
            out.append([])
        summary = current if current is not None else summary
        out[-1].append(call)
    return out


def _common_prefix(before: list[Message], after: list[Message]) -> int:
    n = 0
    while n < len(before) and n < len(after) and before[n].role == after[n].role and before[n].text == after[n].text:
        n += 1
    return n


def _acknowledges_summary(made: list[Message], i: int) -> bool:
    return i > 0 and made[i].role == "assistant" and made[i].text == "Ok." and made[i - 1].text.startswith(
        SUMMARY_PREFIX)


def _with_calls(request: list[Message], stretch: list[_Call]) -> tuple[list[Message], int]:
    """The last request and its reply, each earlier reply of the stretch found in order and marked as an LLM call
    (with its times); every other assistant message is aider's own. Returns the messages and the calls found."""
    earlier = stretch[:-1]
    out: list[Message] = []
    k = 0
    for message in request:
        if message.role != "assistant":
            out.append(message)
            continue
        position = next((j for j in range(k, len(earlier)) if (earlier[j].reply or "").strip() == message.text.strip()),
                        None)
        if position is None:
            out.append(message.with_meta(generated=False))
            continue
        k = position + 1
        out.append(message.with_meta(**_times(earlier[position])))
    last = stretch[-1]
    out.append(Message("assistant", (last.reply or "",), meta=_times(last)))
    found = 1 + sum(1 for m in out[:-1] if m.role == "assistant" and m.meta.get("generated") is not False)
    return out, found


def _times(call: _Call) -> dict[str, str]:
    return {"sent_at": call.sent_at, **({"timestamp": call.answered_at} if call.answered_at else {})}
