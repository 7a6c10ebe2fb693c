"""Roo Code's context management (``agents.md §1.5``), read at RooCodeInc/Roo-Code cb836567 (v3.52.1):
``src/core/context-management/index.ts`` (``manageContext``, ``truncateConversation``), ``src/core/condense/
index.ts`` (``summarizeConversation``, ``getEffectiveApiHistory``) and ``src/core/task/Task.ts``
(``attemptApiRequest``); the condense of v3.17–v3.42 at cf5d42e1^.

Before every request Roo measures ``prevContextTokens``: the last request's tokens in (cache included) + out, plus
the provider's count of the last message (the user message about to be sent). The allowed size is 90% of the
context window less the reserved output (the model's max tokens, else 8,192).

* ``roo_code.condense`` (``autoCondenseContext`` on, the default): when ``100 · prev / window`` reaches
  ``autoCondenseContextPercent`` or ``prev`` passes the allowed size, an LLM summary replaces the conversation. From
  v3.43 the summary is a user message and the model sees only it ("fresh start"; every earlier message is tagged
  ``condenseParent``); v3.17–v3.42 kept the first message, the summary (an assistant message) and the last 3
  messages. A condense that cannot run (too few messages, condensed recently, an empty summary, a context that
  would grow) falls back to the sliding window when ``prev`` passes the allowed size.
* ``roo_code.sliding_window`` (auto-condense off): when ``prev`` passes the allowed size, half of the visible
  messages after the first (an even number) are tagged ``truncationParent`` and a marker message stands where they
  were.

Roo keeps the tagged messages on disk and filters them out of every request; the replay writes the filtered history
into the stored one, which sends the same messages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ..conversation import Message
from ..conversation import ToolCall
from ..errors import ConfigError
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from ._agent_usage import PreviousCall
from ._api_messages import ApiMessage
from ._api_messages import api_messages
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import registrar
from .contract import Call
from .contract import Strategy
from .history_runner import leading_system
from .history_runner import plural

DOCS = "https://github.com/RooCodeInc/Roo-Code/blob/main/src/core/context-management/index.ts"
CONDENSE_DOCS = "https://github.com/RooCodeInc/Roo-Code/blob/main/src/core/condense/index.ts"
#: ``TOKEN_BUFFER_PERCENTAGE``
TOKEN_BUFFER = 0.1
#: ``ANTHROPIC_DEFAULT_MAX_TOKENS``: the reserved output when the model names none
DEFAULT_MAX_TOKENS = 8_192
MIN_CONDENSE_THRESHOLD, MAX_CONDENSE_THRESHOLD = 5, 100
#: ``N_MESSAGES_TO_KEEP`` of v3.17–v3.42
KEPT_BEFORE_343 = 3
FRESH_START, KEEP_LAST_3 = "3.43+", "3.17-3.42"
#: ``src/utils/tiktoken.ts``: o200k_base, times 1.5
TOKEN_FUDGE_FACTOR = 1.5
UNKNOWN_IMAGE_TOKENS = 300
SUMMARY_HEADING = "## Conversation Summary\n"
WORKFLOWS_BLOCK = ("<system-reminder>\n## Active Workflows\nThe following directives must be maintained across all "
                   "future condensings:\n{commands}\n</system-reminder>")
#: the synthetic reasoning block of v3.17–v3.42's assistant summary
OLD_SUMMARY_REASONING = ("Condensing conversation context. The summary below captures the key information from the "
                         "prior conversation.")
#: what v3.17–v3.42 asked after the messages to summarize
OLD_FINAL_REQUEST = "Summarize the conversation so far, as described in the prompt instructions."
DEFERRED_RESULT = "Context condensation triggered. Tool execution deferred."
#: the condense request's system prompt (``SUMMARY_PROMPT``), in our words
SUMMARY_SYSTEM = (
    "You summarize conversations. This is a summarization-only system operation: call no tools and answer with "
    "text. Leave this request out of the user's intent: the latest request and next step are what the user was "
    "doing before it, so that work continues as if no condensation happened.")
#: the default ``customSupportPrompts.CONDENSE`` template, in our words
DEFAULT_CONDENSE_PROMPT = (
    "Write a detailed summary of the conversation so far for continuing the development work without losing "
    "context: first analyse it chronologically in <analysis> tags (the user's requests and intent, your approach, "
    "key decisions, concepts and code, file names, code snippets, signatures and edits, errors and their fixes, the "
    "user's feedback), then give the sections Primary Request and Intent, Key Technical Concepts, Relevant Files "
    "and Code, Problem Solving, Pending Tasks, Current Work and Optional Next Step, quoting the latest request "
    "verbatim.")
_COMMAND = re.compile(r"<command[^>]*>[\s\S]*?</command>")
ROO_KEY = "roo_code"

_ENCODING: Any = None


# ------------------------------------------------------------------------------------------------ counting
def _encoding() -> Any:
    global _ENCODING
    if _ENCODING is None:
        from ..tiktoken_offline import EncodingUnavailable
        from ..tiktoken_offline import get_encoding

        try:
            _ENCODING = get_encoding("o200k_base")
        except EncodingUnavailable:
            _ENCODING = False
    return _ENCODING


def _text_tokens(text: str) -> int:
    encoding = _encoding()
    if not text:
        return 0
    if encoding is False:  # no tokenizer on this machine: tiktoken's usual 4 characters per token
        return math.ceil(len(text) / 4)
    return len(encoding.encode(text, disallowed_special=()))


def roo_count_tokens(messages: Sequence[Message]) -> int:
    """Roo Code's ``countTokens`` of the messages' content blocks (``src/utils/tiktoken.ts``): o200k_base over
    text blocks, tool uses as ``Tool: name`` + arguments, tool results as ``Tool Result (id)`` + content, 300 per
    image whose data is unknown, all times 1.5, rounded up."""
    total = 0
    for m in messages:
        total += sum(_text_tokens(t) for t in m.texts)
        for call in m.tool_calls:
            total += _text_tokens(f"Tool: {call.name}\nArguments: {json.dumps(dict(call.arguments))}")
        if m.tool_result is not None:
            head = [f"Tool Result ({m.tool_result.call_id})"] + (["[Error]"] if m.tool_result.error else [])
            total += _text_tokens("\n".join([*head, m.tool_result.text]))
        total += UNKNOWN_IMAGE_TOKENS * len(m.images)
    return math.ceil(total * TOKEN_FUDGE_FACTOR)


# ------------------------------------------------------------------------------------------------ helpers
def is_marker(entry: Entry) -> bool:
    return entry.info.get(ROO_KEY) == "truncation_marker"


def is_summary(entry: Entry) -> bool:
    return entry.info.get(ROO_KEY) == "summary"


def _visible(groups: Sequence[ApiMessage], stored: Sequence[Entry]) -> list[ApiMessage]:
    """Messages without ``truncationParent`` / ``isTruncationMarker`` (markers are messages of their own)."""
    return [g for g in groups if not is_marker(stored[g.start])]


def _render_for_condense(messages: Sequence[Message]) -> str:
    """The condense request's messages as Roo sends them: tool uses and results turned into text blocks."""
    lines: list[str] = []
    for m in messages:
        parts = list(m.texts)
        for call in m.tool_calls:
            args = "\n".join(f"{k}: {json.dumps(v, indent=2) if isinstance(v, (dict, list)) else v}"
                             for k, v in dict(call.arguments).items())
            parts.append(f"[Tool Use: {call.name}]\n{args}")
        if m.tool_result is not None:
            parts.append(f"[Tool Result{' (Error)' if m.tool_result.error else ''}]\n{m.tool_result.text}")
        lines.append(f"[{m.role if m.role != 'tool' else 'user'}]\n" + "\n".join(parts))
    return "\n\n".join(lines)


class _RooContext(Strategy):
    """What both of Roo's strategies share: ``prevContextTokens``, the allowed size, the sliding window."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        max_tokens = int(params["max_tokens"])
        self.reserved = max_tokens or DEFAULT_MAX_TOKENS
        self.allowed = ctx.context_window * (1 - TOKEN_BUFFER) - self.reserved
        self.usage = PreviousCall(self)
        self.prev_context_tokens = 0

    def lines(self) -> dict[str, float]:
        return {"trigger": self.allowed}

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    def _measure(self, entries: Sequence[Entry], call: Call) -> int | None:
        """``prevContextTokens``: the last request's tokens in + out, plus the last message's count (None before
        the first request: Roo manages nothing until a request has reported usage)."""
        self.usage.begin(entries, call)
        total = self.usage.total()
        if not total:
            return None
        self.prev_context_tokens = total + roo_count_tokens(_last_user_message(entries))
        return self.prev_context_tokens

    def _sliding_window(self, entries: list[Entry]) -> tuple[list[Entry] | None, str]:
        """``truncateConversation(messages, 0.5)``."""
        groups = api_messages(entries)
        visible = _visible(groups, entries)
        raw = math.floor((len(visible) - 1) * 0.5)
        remove = raw - raw % 2
        if remove <= 0:
            return None, "sliding window: nothing to hide"
        hidden = visible[1:remove + 1]
        first_kept = visible[remove + 1].start if remove + 1 < len(visible) else len(entries)
        gone = {i for g in hidden for i in range(g.start, g.end)}
        marker = inserted(Message("user", (f"[Sliding window truncation: {remove} messages hidden to reduce context]",),
                                  meta={"roo_code": "truncation_marker"}), "note", (), **{ROO_KEY: "truncation_marker"})
        kept = [e for i, e in enumerate(entries[:first_kept]) if i not in gone]
        return [*kept, marker, *entries[first_kept:]], f"sliding window: hid {plural(remove, 'message')}"

    def _done(self, result: Sequence[Entry] | None, note: str) -> Sequence[Entry] | None:
        self.note(f"prevContextTokens {self.prev_context_tokens:,}: {note}")
        if result is None:
            self.report.declined = True
        else:
            self.usage.sent(self.count(result))
        return result


class SlidingWindow(_RooContext):
    """Auto-condense off: the sliding window when ``prevContextTokens`` passes the allowed size."""

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        prev = self._measure(entries, call)
        return prev is not None and prev > self.allowed

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        result, note = self._sliding_window(entries)
        return self._done(result, f"over the allowed {self.allowed:,.0f}; {note}")


class Condense(_RooContext):
    """Auto-condense on: an LLM summary at the percentage threshold, the sliding window as the fallback."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        percent = int(params["auto_condense_context_percent"])
        if not MIN_CONDENSE_THRESHOLD <= percent <= MAX_CONDENSE_THRESHOLD:
            raise ConfigError(f"auto_condense_context_percent must be between {MIN_CONDENSE_THRESHOLD} and "
                             f"{MAX_CONDENSE_THRESHOLD}, got {percent}")
        self.percent = percent
        self.version = self._version(str(params["roo_version"]), ctx)
        self.prompt = str(params["custom_condensing_prompt"]).strip() or DEFAULT_CONDENSE_PROMPT
        self.first_message: Message | None = None
        self._summary_info: dict[str, Any] = {}
        self._last_output = 0

    @staticmethod
    def _version(value: str, ctx: RunContext) -> str:
        """``auto``: the log's Roo Code version when it names one, else the current release's condense."""
        if value != "auto":
            return value
        version = ctx.source.agent_version if ctx.source is not None else None
        if version:
            try:
                major, minor = (int(x) for x in version.split(".")[:2])
            except ValueError:
                major, minor = 3, 43
            return FRESH_START if (major, minor) >= (3, 43) else KEEP_LAST_3
        return FRESH_START

    def lines(self) -> dict[str, float]:
        return {"trigger": min(self.ctx.context_window * self.percent / 100, self.allowed + 1)}

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        if self.first_message is None and entries:
            first = leading_system(entries)
            if first < len(entries):
                self.first_message = entries[first].message
        prev = self._measure(entries, call)
        if prev is None:
            return False
        return 100 * prev / self.ctx.context_window >= self.percent or prev > self.allowed

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        if self.version == FRESH_START:
            result, why = self._fresh_start(entries)
        else:
            result, why = self._keep_last(entries)
        if result is not None:
            return self._done(result, why)
        if self.prev_context_tokens > self.allowed:
            fallback, note = self._sliding_window(entries)
            return self._done(fallback, f"condense failed ({why}); {note}")
        return self._done(None, f"condense failed ({why})")

    # ------------------------------------------------------------------------------------------ v3.43+
    def _fresh_start(self, entries: list[Entry]) -> tuple[list[Entry] | None, str]:
        head = leading_system(entries)
        groups = api_messages(entries)
        since = self._since_last_summary(groups, entries)
        if len(since) <= 1:
            return None, "not enough messages" if len(groups) <= 1 else "condensed recently"
        if any(is_summary(entries[g.start]) for g in since) and len(since) <= 2:
            return None, "condensed recently"
        messages = [e.message for g in since for e in g.entries(entries)]
        summary = self._summarize([*messages, *self._deferred_results(messages)], SUMMARY_SYSTEM, self.prompt)
        if not summary:
            return None, "the summary came back empty"
        texts = [SUMMARY_HEADING + summary]
        commands = self._commands()
        if commands:
            texts.append(WORKFLOWS_BLOCK.format(commands=commands))
        environment = _latest_environment(entries)
        if environment:
            texts.append(environment)
        message = Message("user", tuple(texts), meta={"roo_code": "summary"})
        condensed = [e for e in entries[head:]]
        entry = inserted(message, "summary", condensed, **{ROO_KEY: "summary"}, **self._summary_info)
        return [*entries[:head], entry], (f"condensed {plural(len(condensed), 'message')} into a summary the model "
                                          "sees alone (fresh start)")

    # ------------------------------------------------------------------------------------------ v3.17-3.42
    def _keep_last(self, entries: list[Entry]) -> tuple[list[Entry] | None, str]:
        groups = api_messages(entries)
        if not groups:
            return None, "not enough messages"
        keep_start = max(len(groups) - KEPT_BEFORE_343, 0)
        keep = groups[keep_start:]
        preserved = self._calls_to_preserve(entries, groups, keep_start)
        slice_end = keep_start + 1 if preserved else keep_start
        before = groups[:slice_end]
        since = self._since_last_summary(before, entries)
        if since and since[0].role != "user" and groups[0].role == "user":
            since = [groups[0], *since]
        if len(since) <= 1:
            why = "not enough messages" if len(groups) <= KEPT_BEFORE_343 + 1 else "condensed recently"
            return None, why
        if any(is_summary(entries[g.start]) for g in keep):
            return None, "condensed recently"
        messages = [e.message for g in since for e in g.entries(entries)]
        summary = self._summarize(messages, self.prompt, OLD_FINAL_REQUEST)
        if not summary:
            return None, "the summary came back empty"
        message = Message("assistant", (summary,), tool_calls=tuple(preserved), reasoning=(OLD_SUMMARY_REASONING,),
                          meta={"roo_code": "summary"})
        first = groups[0]
        middle = [e for g in groups[1:keep_start] for e in g.entries(entries)]
        entry = inserted(message, "summary", middle, **{ROO_KEY: "summary"}, **self._summary_info)
        kept = [e for g in keep for e in g.entries(entries)]
        new_context = self._last_output + roo_count_tokens([e.message for e in kept])
        if new_context >= self.prev_context_tokens:
            return None, "the context would grow"
        return [*entries[:first.end], entry, *kept], (f"condensed {plural(len(middle), 'message')} into a summary; kept the first "
                                       f"message and the last {plural(len(keep), 'message')}")

    def _calls_to_preserve(self, entries: Sequence[Entry], groups: Sequence[ApiMessage], keep_start: int
                           ) -> list[ToolCall]:
        """``getKeepMessagesWithToolBlocks``: calls, in the 3 messages before the kept ones, answered in them."""
        if len(groups) <= KEPT_BEFORE_343:
            return []
        answered = [e.message.tool_result.call_id for g in groups[keep_start:] for e in g.entries(entries)
                    if e.message.tool_result is not None]
        searched = groups[max(0, keep_start - KEPT_BEFORE_343):keep_start]
        calls: dict[str, ToolCall] = {}
        for call_id in answered:
            for g in reversed(searched):
                found = next((c for e in g.entries(entries) for c in e.message.tool_calls if c.id == call_id), None)
                if found is not None and call_id not in calls:
                    calls[call_id] = found  # type: ignore[index]
                    break
        return list(calls.values())

    # ------------------------------------------------------------------------------------------ shared
    @staticmethod
    def _since_last_summary(groups: Sequence[ApiMessage], entries: Sequence[Entry]) -> list[ApiMessage]:
        """``getMessagesSinceLastSummary``: from the last summary on, or every message."""
        last = max((k for k, g in enumerate(groups) if is_summary(entries[g.start])), default=None)
        return list(groups if last is None else groups[last:])

    @staticmethod
    def _deferred_results(messages: Sequence[Message]) -> list[Message]:
        """``injectSyntheticToolResults``: a result for every call of the request that has none."""
        answered = {m.tool_result.call_id for m in messages if m.tool_result is not None}
        orphans = [c for m in messages for c in m.tool_calls if c.id not in answered]
        if not orphans:
            return []
        return [Message("user", (f"[Tool Result]\n{DEFERRED_RESULT}",) * len(orphans))]

    def _summarize(self, messages: Sequence[Message], system: str, final: str) -> str:
        """One condense call: the messages (tool blocks as text) and a final user message, under ``system``."""
        request = [*messages, Message("user", (final,))]
        call = self.summarize(system, request, rendered=_render_for_condense(request))
        self._summary_info = {"summarizer": call.backend, "simulated": call.simulated}
        self._last_output = call.usage().get("output_tokens", 0)
        return call.text.strip()

    def _commands(self) -> str:
        """``extractCommandBlocks`` of the task's first message."""
        if self.first_message is None:
            return ""
        return "\n".join(_COMMAND.findall("\n".join(self.first_message.texts)))


def _last_user_message(entries: Sequence[Entry]) -> list[Message]:
    """The messages of the last API message when it is the user's (read from the end: a call costs only that)."""
    out: list[Message] = []
    for entry in reversed(entries):
        if entry.excluded:
            continue
        if entry.message.role in ("assistant", "system"):
            break
        if entry.inserted is not None:  # a marker or summary is a message of its own
            if not out:
                out.append(entry.message)
            break
        out.append(entry.message)
    return out[::-1]


def _latest_environment(entries: Sequence[Entry]) -> str:
    """The environment details an automatic condense adds: the latest ones the replayed agent sent."""
    for entry in reversed(entries):
        if entry.message.role == "user":
            for text in reversed(entry.message.texts):
                if text.lstrip().startswith("<environment_details>"):
                    return text
    return ""


_CONTEXT_PARAMS = (
    Param("max_tokens", "int", 0, "The model's max output tokens (Roo's `getModelMaxOutputTokens`, set per "
          "profile): reserved from the window when deciding; 0 uses ANTHROPIC_DEFAULT_MAX_TOKENS (8,192).",
          minimum=0, maximum=1_000_000),
)

_register = registrar("roo_code", policy="none")

_register(
    "condense",
    title="Roo Code · intelligent context condensing",
    summary=(
        "When 100 · prevContextTokens / context_window reaches auto_condense_context_percent, or prevContext"
        "Tokens passes 90% of the window less the reserved output, an LLM summary replaces the conversation "
        "(v3.43+: the model sees the summary alone; v3.17–v3.42: the first message, the summary and the last 3 "
        "messages); if the condense cannot run, the sliding window hides half the messages. Uses its own "
        "thresholds from context_window; ignores compact_at/compact_to."
    ),
    params=(
        Param("auto_condense_context_percent", "int", 100, "`autoCondenseContextPercent` (Settings → Context "
              "Management → threshold to trigger intelligent context condensing, or a profile's own threshold): "
              "condense when the context reaches this percent of the window.", minimum=MIN_CONDENSE_THRESHOLD,
              maximum=MAX_CONDENSE_THRESHOLD),
        *_CONTEXT_PARAMS,
        Param("custom_condensing_prompt", "str", "", "`customSupportPrompts.CONDENSE` (Settings → Prompts → "
              "Context Condensing): the condense instructions sent after the messages; empty uses Roo's "
              "default."),
        Param("roo_version", "choice", "auto", "Which Roo Code release's condense to replay: `3.43+` (the "
              "summary is a user message the model sees alone), `3.17-3.42` (first message + summary + last 3 "
              "messages) or `auto` (the log's version, else 3.43+).", choices=("auto", FRESH_START, KEEP_LAST_3)),
        *SUMMARIZER_PARAMS,
    ),
    reference=Condense,
    docs_url=CONDENSE_DOCS,
)

_register(
    "sliding_window",
    title="Roo Code · sliding window truncation",
    summary=(
        "With auto-condense off: when prevContextTokens (the last request's tokens in + out, plus the last "
        "message) passes 90% of context_window less the reserved output, half of the visible messages after "
        "the first (an even number) are hidden and a `[Sliding window truncation: N messages hidden to reduce "
        "context]` marker takes their place. Uses its own threshold from context_window; ignores "
        "compact_at/compact_to."
    ),
    params=_CONTEXT_PARAMS,
    reference=SlidingWindow,
    docs_url=DOCS,
)
