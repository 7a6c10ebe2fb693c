"""OpenAI Codex CLI auto-compaction (``codex-rs/core/src/compact.rs``, local compaction), from the behaviour spec.

When the input reaches the auto-compact limit (90% of the context window, or a lower configured
``model_auto_compact_token_limit``), Codex asks the model for a handoff summary of the whole history and rebuilds the
history as: the initial context (instructions, environment) + the most recent real user messages that fit in 20,000
approximate tokens (the first that does not fit is cut to the remainder with a ``…N tokens truncated…`` marker) + one
user message holding the summary. Every assistant message, tool call and tool output is gone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ..conversation import Message
from ..errors import ConfigError
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import plural
from .history_runner import with_text

DOCS = "https://github.com/openai/codex/blob/main/codex-rs/core/src/compact.rs"
#: ``templates/compact/summary_prefix.md``
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. You also "
    "have access to the state of the tools that were used by that language model. Use this to build on the work that "
    "has already been done and avoid duplicating work. Here is the summary produced by the other language model, use "
    "the information in this summary to  assist with your own analysis:"
)
NO_SUMMARY = "(no summary available)"
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
AUTO_COMPACT_FRACTION = 0.9
BYTES_PER_TOKEN = 4
SESSION_PREFIX_MARKERS = ("<environment_context>", "<user_instructions>", "# agents.md instructions")
COMPACTION_PROMPT = (
    "You are performing a context checkpoint: write a handoff summary for another model that will resume this task. "
    "Cover progress and key decisions, important context and constraints, what remains to be done, and any data or "
    "references needed to continue. Be concise and structured."
)


# ------------------------------------------------------------------------------------------------ text budget
def approx_tokens(text: str) -> int:
    """Codex's ``approx_token_count``: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN)


def _prefix_within(text: str, max_bytes: int) -> str:
    out, used = [], 0
    for ch in text:
        size = len(ch.encode("utf-8"))
        if used + size > max_bytes:
            break
        out.append(ch)
        used += size
    return "".join(out)


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Middle truncation to ``max_tokens`` approximate tokens: head and tail kept around ``…N tokens truncated…``."""
    if approx_tokens(text) <= max_tokens:
        return text
    budget = max(max_tokens, 0) * BYTES_PER_TOKEN
    head = _prefix_within(text, budget // 2)
    tail = _prefix_within(text[::-1], budget - budget // 2)[::-1]
    removed = text[len(head): len(text) - len(tail)]
    return f"{head}…{approx_tokens(removed)} tokens truncated…{tail}"


# ------------------------------------------------------------------------------------------------ message kinds
def is_summary(message: Message) -> bool:
    return message.role == "user" and message.text.startswith(SUMMARY_PREFIX)


def is_session_prefix(message: Message) -> bool:
    """Injected items Codex regenerates, not typed by the user (AGENTS.md instructions, environment context)."""
    return message.role == "user" and message.text.lstrip().lower().startswith(SESSION_PREFIX_MARKERS)


def is_initial_context(message: Message) -> bool:
    return message.role == "system" or is_session_prefix(message)


def is_real_user_message(entry: Entry) -> bool:
    m = entry.message
    return m.role == "user" and not is_summary(m) and not is_session_prefix(m) and entry.inserted != "summary"


# ------------------------------------------------------------------------------------------------ strategy
class AutoCompact(Strategy):
    """Codex local auto-compaction: the rebuilt history replaces the stored one."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        configured = int(params["auto_compact_token_limit"])
        if configured < 0:
            raise ConfigError(f"model_auto_compact_token_limit must be positive (0: unset), got {configured}")
        default = int(ctx.context_window * AUTO_COMPACT_FRACTION)
        self.limit = min(configured, default) if configured else default

    def lines(self) -> dict[str, float]:
        return {"trigger": self.limit}

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        return call.tokens >= self.limit

    def target(self, entries: Sequence[Entry], call: Call) -> int:
        return self.limit

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> list[Entry] | None:
        initial = [e for e in entries if is_initial_context(e.message)]
        history = [e for e in entries if not is_initial_context(e.message)]
        if not history:
            self.decline("triggered; nothing but initial context")
            return None
        seen, trimmed = self._fit_request(initial, history)
        call = self.summarize(COMPACTION_PROMPT, [e.message for e in [*initial, *seen]])
        text = call.text.strip() or NO_SUMMARY
        summary = inserted(Message("user", (f"{SUMMARY_PREFIX}\n{text}",), meta={"codex": "compaction_summary"}),
                           "summary", history, unseen=[e.origin for e in trimmed if e.origin is not None]
                           + [o for e in trimmed for o in e.represents], summarizer=call.backend,
                           simulated=call.simulated)
        users = self._recent_user_messages(history)
        note = f"compacted: kept {plural(len(users), 'user message')} and a summary"
        if trimmed:
            note += f"; Trimmed {plural(len(trimmed), 'older item')} to fit the compaction request"
        self.note(note)
        return [*initial, *users, summary]

    def _fit_request(self, initial: list[Entry], history: list[Entry]) -> tuple[list[Entry], list[Entry]]:
        """Drop the oldest history items while the compaction request overflows the context window."""
        prompt = Message("user", (COMPACTION_PROMPT,))
        kept = list(history)
        trimmed: list[Entry] = []
        while len(kept) > 1 and self.counter.count([e.message for e in (*initial, *kept)] + [prompt],
                                                   self.tools) > self.ctx.context_window:
            trimmed.append(kept.pop(0))
        return kept, trimmed

    def _recent_user_messages(self, history: Sequence[Entry]) -> list[Entry]:
        """Real user messages newest first within the 20,000-token budget (the first misfit cut), re-ordered."""
        remaining = COMPACT_USER_MESSAGE_MAX_TOKENS
        selected: list[Entry] = []
        for e in reversed([e for e in history if is_real_user_message(e)]):
            if remaining <= 0:
                break
            tokens = approx_tokens(e.message.text)
            if tokens <= remaining:
                selected.append(inserted(e.message, "reinserted", [e]))
                remaining -= tokens
            else:
                cut = with_text(e.message, truncate_to_tokens(e.message.text, remaining))
                selected.append(inserted(cut, "reinserted", [e], truncated=True))
                break
        return selected[::-1]


register(
    StrategyInfo(
        name="codex.auto_compact",
        title="OpenAI Codex CLI · auto-compact",
        summary=(
            "When the input reaches 90% of context_window (or a lower auto_compact_token_limit), the history is "
            "rebuilt as initial context + the most recent user messages within 20,000 tokens + one summary user "
            "message; all assistant messages, tool calls and outputs are dropped. Uses its own trigger from "
            "context_window; ignores compact_at/compact_to."
        ),
        params=(
            Param("auto_compact_token_limit", "int", 0, "`model_auto_compact_token_limit`: compact at this many tokens "
                  "instead of 90% of the context window; it can only lower the limit (0: unset).",
                  minimum=0, maximum=10_000_000),
            *SUMMARIZER_PARAMS,
        ),
        reference=AutoCompact,
        policy="none",
        docs_url=DOCS,
    )
)
