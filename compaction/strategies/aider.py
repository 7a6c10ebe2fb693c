"""Aider's chat-history summary (aider-chat 0.86.2, ``aider/history.py`` ``ChatSummary``, ``coders/base_coder.py``;
agents.md §1.8 — the installed release decides where the spec differs).

Aider keeps the chat in two lists: ``cur_messages`` (the exchange in progress) and ``done_messages`` (earlier
exchanges), and only ``done_messages`` is ever summarized. An exchange moves to ``done_messages`` when its reply
applied edits (``move_back_cur_messages``): aider then starts summarizing in a background thread if the done
messages' tokens exceed ``max_chat_history_tokens``, appends its acknowledgement of the edit (``I committed the
changes with git hash …`` and ``Ok.``) to them, and at the next send joins the thread — keeping the summary only if
the done messages are still the ones it summarized. Since the acknowledgement was appended meanwhile, 0.86.2 drops
every summary started after an edit; a summary started with nothing appended after it (a restored chat history, or
``moved_to_done = every_exchange``) is used at the next send.

``ChatSummary.summarize``: a history within the budget is left alone; with at most 4 messages (or past depth 3)
everything is summarized; otherwise the tail is the newest messages under half the budget, the split moved back
until the head ends with an assistant message, and of the head only the *oldest* messages within the weak model's
input limit less 512 are summarized (the rest of the head is dropped); the summary — one user message, ``I spoke to
you previously about a number of things.`` and the weak model's text — replaces the head, and the result is
summarized again while summary + tail do not fit. ``Ok.`` is appended when the last message is not the assistant's.
Tool messages count but are left out of the summary's transcript, so the kept tail may start with a tool result whose
call was summarized away.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import tiktoken_offline
from ..aider_counter import aider_message
from ..conversation import Message
from ..errors import ConfigError
from ..history import Entry
from ..history import inserted
from ..tokens import DEFAULT_COUNTER
from ..tokens import Counter
from ..tokens import make_counter
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import leading_system
from .history_runner import plural

DOCS = "https://github.com/Aider-AI/aider/blob/main/aider/history.py"
#: ``prompts.summary_prefix``
SUMMARY_PREFIX = "I spoke to you previously about a number of things.\n"
#: ``prompts.summarize``, the summarizer's system message
SUMMARIZE_PROMPT = """*Briefly* summarize this partial conversation about programming.
Include less detail about older parts and more detail about the most recent messages.
Start a new paragraph every time the topic changes!

This is only part of a longer conversation so *DO NOT* conclude the summary with language like "Finally, ...". Because the conversation continues after the summary.
The summary *MUST* include the function names, libraries, packages that are being discussed.
The summary *MUST* include the filenames that are being referenced by the assistant inside the ```...``` fenced code blocks!
The summaries *MUST NOT* include ```...``` fenced code blocks!

Phrase the summary with the USER in first person, telling the ASSISTANT about the conversation.
Write *as* the user.
The user should refer to the assistant as *you*.
Start the summary with "I asked you...".
"""
#: what aider adds to the done messages after applying edits (``auto_commit``'s ``files_content_gpt_edits``,
#: ``files_content_gpt_edits_no_repo``, ``files_content_gpt_no_edits``), each followed by its own ``Ok.``
COMMIT_ACKNOWLEDGEMENT = "I committed the changes with git hash "
OTHER_ACKNOWLEDGEMENTS = ("I updated the files.", "I didn't see any properly formatted edits in your reply?!")
OK = "Ok."
MIN_SPLIT = 4
MAX_DEPTH = 3
#: ``model_max_input_tokens -= 512``: the room ChatSummary leaves in the weak model's input
INPUT_RESERVE = 512
#: the weak model's input limit when its metadata has none
UNKNOWN_INPUT_LIMIT = 4096


@dataclass(frozen=True)
class WeakModel:
    """What ChatSummary reads from the weak model: its input limit, and the encoding litellm's ``token_counter``
    uses when it sizes a summary (the per-message counts always use cl100k_base, see :mod:`..aider_counter`)."""

    max_input_tokens: int
    list_encoding: str


#: aider's weak models for OpenAI and Gemini main models, as litellm 1.75 (aider-chat 0.86.2's) describes them
WEAK_MODELS = {
    "gpt-4o-mini": WeakModel(128_000, "o200k_base"),
    "gemini/gemini-2.5-flash": WeakModel(1_048_576, "cl100k_base"),
}


def default_history_tokens(max_input_tokens: int) -> float:
    """``Model.max_chat_history_tokens``: a sixteenth of the main model's input, at least 1024, at most 8192."""
    return min(max(max_input_tokens / 16, 1024), 8192)


def is_acknowledgement(message: Message) -> bool:
    """A user message aider adds after applying the reply's edits."""
    text = message.text
    return message.role == "user" and (text.startswith(COMMIT_ACKNOWLEDGEMENT) or text in OTHER_ACKNOWLEDGEMENTS)


def is_ok(message: Message) -> bool:
    """Aider's own ``Ok.`` after something it added to the chat."""
    return message.role == "assistant" and message.text == OK and not message.tool_calls


def transcript(entries: Sequence[Entry]) -> str:
    """``summarize_all``'s user message: ``# USER`` / ``# ASSISTANT`` and each message's content, newline-ended;
    other roles left out."""
    content = ""
    for e in entries:
        role = e.message.role.upper()
        if role not in ("USER", "ASSISTANT"):
            continue
        content += f"# {role}\n" + aider_message(e.message)["content"]
        if not content.endswith("\n"):
            content += "\n"
    return content


@dataclass(frozen=True)
class _Pending:
    """A summary started in the background: the done messages it was computed from, its result, and after what."""

    snapshot: list[Entry]
    result: list[Entry]
    after: str


class ChatSummary(Strategy):
    """Aider's done/cur split of the chat and ``ChatSummary`` over the done messages, at aider's timing."""

    count_tools = False

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.aider = make_counter("aider")
        configured = int(params["max_chat_history_tokens"])
        if configured < 0:
            raise ConfigError(f"max_chat_history_tokens must be at least 0 (0: the model's default), got {configured}")
        self.max_tokens: float = configured or default_history_tokens(ctx.context_window)
        weak = WEAK_MODELS[str(params["weak_model"])]
        limit = int(params["weak_model_max_input_tokens"]) or weak.max_input_tokens
        self.head_limit = (limit or UNKNOWN_INPUT_LIMIT) - INPUT_RESERVE
        self._list_encoding = tiktoken_offline.get_encoding(weak.list_encoding)
        self.every_exchange = params["moved_to_done"] == "every_exchange"
        self._done: list[Entry] = []
        self._last_origin = -1
        self._pending: _Pending | None = None

    def framework_counter(self) -> Counter | None:
        return make_counter("aider") if self.ctx.counter.spec == make_counter(DEFAULT_COUNTER).spec else None

    def lines(self) -> dict[str, float]:
        return {}

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    # ------------------------------------------------------------------------------------------ counting
    def tokens(self, entries: Sequence[Entry]) -> int:
        return sum(self.aider.count_one(e.message) for e in entries)

    def too_big(self, entries: Sequence[Entry]) -> bool:
        return self.tokens(entries) > self.max_tokens

    def summary_tokens(self, message: Message) -> int:
        """``token_count([summary])``: litellm's ``token_counter`` over one user message (3 per message, the
        role and the content encoded, 3 for the reply)."""
        enc = self._list_encoding
        return 3 + len(enc.encode_ordinary(message.role)) + len(enc.encode_ordinary(message.text)) + 3

    # ------------------------------------------------------------------------------------------ the timing
    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        chat = entries[leading_system(entries):]
        start = len(chat)
        while start > 0 and ((origin := chat[start - 1].origin) is None or origin > self._last_origin):
            start -= 1
        i = start
        while i < len(chat):
            entry = chat[i]
            if entry.origin is not None:
                self._last_origin = max(self._last_origin, entry.origin)
            if is_acknowledgement(entry.message):
                self._move_back(list(chat[:i]), "the reply's edits")
                ack = 2 if i + 1 < len(chat) and is_ok(chat[i + 1].message) else 1
                self._done = list(chat[: i + ack])
                i += ack
                continue
            if (self.every_exchange and entry.message.role == "user" and i > len(self._done)
                    and chat[i - 1].message.role in ("assistant", "tool")):
                self._move_back(list(chat[:i]), "the exchange")
                self._done = list(chat[:i])
            i += 1
        return self._pending is not None

    def _move_back(self, done: list[Entry], what: str) -> None:
        """``move_back_cur_messages`` then ``summarize_start``: the done messages grow to ``done``; when they are
        over budget, a summary of them starts in the background (its model calls are this call's: it ends at this
        call's send). A summary started earlier since the last send ends here unused: the done messages it
        summarized have grown since (a move-back always adds the exchange, or an acknowledgement)."""
        self._done = done
        if not self.too_big(done):
            return
        self._pending = _Pending(list(done), self.summarize_chat(done), f"after {what} that ended before this call")

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        pending = self._pending
        assert pending is not None
        self._pending = None
        system = entries[: leading_system(entries)]
        chat = entries[len(system):]
        before = self.tokens(pending.snapshot)
        if not _same(pending.snapshot, self._done):
            self.decline(f"summarized {plural(len(pending.snapshot), 'done message')} ({before:,} tokens > "
                         f"{self.max_tokens:g}) in the background {pending.after}, then dropped the summary: aider "
                         "had appended its edit acknowledgement to the done messages meanwhile, and summarize_end "
                         "keeps a summary only of an unchanged history")
            return None
        if not _same(chat[: len(self._done)], self._done):
            raise AssertionError("aider's done messages are no longer the start of the chat")
        rest = chat[len(self._done):]
        self._done = list(pending.result)
        summaries = sum(1 for e in pending.result if e.inserted == "summary")
        kept = sum(1 for e in pending.result if e.inserted is None)
        done = plural(len(pending.snapshot), "done message")
        self.note(f"chat history summarized in the background {pending.after}: {done} ({before:,} tokens > "
                  f"{self.max_tokens:g}) became {plural(summaries, 'summary')} and {plural(kept, 'message')} kept "
                  f"({self.tokens(pending.result):,} tokens)")
        return [*system, *self._done, *rest]

    # ------------------------------------------------------------------------------------------ ChatSummary
    def summarize_chat(self, done: list[Entry]) -> list[Entry]:
        """``ChatSummary.summarize``."""
        result = self._summarize_real(done, 0)
        if result and result[-1].message.role != "assistant":
            result.append(inserted(Message("assistant", (OK,), meta={"aider": "ok"}), "note"))
        return result

    def _summarize_real(self, messages: list[Entry], depth: int) -> list[Entry]:
        sized = [self.aider.count_one(e.message) for e in messages]
        if sum(sized) <= self.max_tokens and depth == 0:
            return list(messages)
        if len(messages) <= MIN_SPLIT or depth > MAX_DEPTH:
            return self._summarize_all(messages)
        tail_tokens, split, half = 0, len(messages), self.max_tokens // 2
        for i in range(len(sized) - 1, -1, -1):
            if tail_tokens + sized[i] < half:
                tail_tokens += sized[i]
                split = i
            else:
                break
        while messages[split - 1].message.role != "assistant" and split > 1:
            split -= 1
        if split <= MIN_SPLIT:
            return self._summarize_all(messages)
        keep: list[Entry] = []
        total = 0
        for tokens, entry in zip(sized[:split], messages[:split]):
            total += tokens
            if total > self.head_limit:
                break
            keep.append(entry)
        summary = self._summarize_all(keep)
        tail = messages[split:]
        if self.summary_tokens(summary[0].message) + sum(sized[split:]) < self.max_tokens:
            return summary + tail
        return self._summarize_real(summary + tail, depth + 1)

    def _summarize_all(self, messages: Sequence[Entry]) -> list[Entry]:
        """``summarize_all``: one user message, the prefix and the weak model's summary of the transcript."""
        call = self.summarize(SUMMARIZE_PROMPT, [e.message for e in messages], rendered=transcript(messages))
        message = Message("user", (SUMMARY_PREFIX + call.text,), meta={"aider": "chat_summary"})
        return [inserted(message, "summary", messages, summarizer=call.backend, simulated=call.simulated)]


def _same(a: Sequence[Entry], b: Sequence[Entry]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


register(
    StrategyInfo(
        name="aider.chat_summary",
        title="Aider · ChatSummary",
        summary=(
            "Aider 0.86.2's chat-history summary: when an exchange moves to the done messages and they exceed "
            "max_chat_history_tokens, the weak model summarizes all but a tail under half the budget into one "
            "'I spoke to you previously…' user message, in the background; the result is used at the next send if "
            "the done messages did not change meanwhile (after an edit they always did: aider appends its "
            "acknowledgement). The budget defaults to context_window / 16 within 1,024–8,192; ignores "
            "compact_at/compact_to."
        ),
        params=(
            Param("max_chat_history_tokens", "int", 0, "`--max-chat-history-tokens` (`max-chat-history-tokens:` in "
                  ".aider.conf.yml, AIDER_MAX_CHAT_HISTORY_TOKENS): the done messages' budget; 0: the main model's "
                  "default, its input tokens / 16 within 1,024–8,192 (the context window stands for them).",
                  minimum=0, maximum=1_000_000),
            Param("weak_model", "choice", "gpt-4o-mini", "`--weak-model`: the model that writes the summary and "
                  "whose tokenizer sizes it (gpt-4o-mini for OpenAI main models, gemini/gemini-2.5-flash for "
                  "Gemini ones).", choices=tuple(WEAK_MODELS)),
            Param("weak_model_max_input_tokens", "int", 0, "The weak model's `max_input_tokens` (set in "
                  ".aider.model.metadata.json): of the head, only the oldest messages within it less 512 are "
                  "summarized (0: the weak model's own).", minimum=0, maximum=10_000_000, advanced=True),
            Param("moved_to_done", "choice", "edits", "When an exchange joins the done messages: `edits` — as aider "
                  "does, after a reply whose edits it applied (recognized by the acknowledgement aider adds, `I "
                  "committed the changes…`; other agents' logs have none); `every_exchange` — after every "
                  "exchange, with no acknowledgement (what a restored chat history gets).",
                  choices=("edits", "every_exchange")),
            *SUMMARIZER_PARAMS,
        ),
        reference=ChatSummary,
        policy="window",
        docs_url=DOCS,
    )
)
