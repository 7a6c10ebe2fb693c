"""LangChain v1 agent middleware: ``SummarizationMiddleware`` and ``ContextEditingMiddleware`` + ``ClearToolUsesEdit``.

The agent's system prompt is not part of the middleware's ``messages`` (LangChain passes it separately), so the
leading system messages of a log are treated as that prompt: always sent, never summarized or counted by the
middleware's triggers. Unless the run picks another counter, both strategies count with LangChain's own
``count_tokens_approximately`` (counter ``langchain``).

LangChain tunes its default counter with the last AI message's reported usage (and uses 3.3 characters per token
for Anthropic models); a replay has no such usage for the compacted run, so the plain count is used (pick counter
``langchain:3.3`` for the Anthropic tuning). For the same reason the ``tokens`` clause's alternative — the last AI
message's reported total at or above the threshold — does not apply.

``SummarizationMiddleware`` rewrites the agent state (persisted). Its summary model receives one human message: the
``summary_prompt`` with the messages to summarize (after ``trim_messages``) filled in where ``{messages}`` stands,
rendered as ``get_buffer_string(format="xml")`` renders them (:mod:`compaction.langchain_prompt`), byte for byte as
langchain 1.5.2 sends it; the summary goes back into the state as the human message
``"Here is a summary of the conversation to date:\n\n" + summary`` marked ``lc_source: summarization``.
``ContextEditingMiddleware`` edits a copy of the messages for each model request — a projection, as langchain 1.5.2
does it (observed): the state keeps the originals, so every call starts again from the full history.

Tool messages are counted as a LangChain agent holds them, named after their tool (see
:mod:`compaction.langchain_counter`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from functools import partial
from typing import Any

from ..conversation import Message
from ..conversation import ToolResult
from ..history import Entry
from ..history import inserted
from ..langchain_counter import LIST_CONTENT
from ..langchain_counter import langchain_content
from ..langchain_prompt import check_summary_prompt
from ..langchain_prompt import fill_summary_prompt
from ..langchain_prompt import xml_transcript
from ..tokens import Counter
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import registrar
from .history_runner import Decision
from .history_runner import Follower
from .history_runner import HistoryRunner
from .history_runner import MaskedView
from .history_runner import counter_or
from .history_runner import plural
from .history_runner import with_cleared_inputs
from .history_runner import with_result_text

DOCS_SUMMARY = ("https://github.com/langchain-ai/langchain/blob/master/libs/langchain_v1/langchain/agents/middleware/"
                "summarization.py")
DOCS_EDITING = ("https://github.com/langchain-ai/langchain/blob/master/libs/langchain_v1/langchain/agents/middleware/"
                "context_editing.py")
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"
NO_HISTORY = "No previous conversation history."
TOO_LONG = "Previous conversation was too long to summarize."
CLEARED_PLACEHOLDER = "[cleared]"
CONTEXT_KINDS = ("tokens", "messages", "fraction")
DEFAULT_SUMMARY_PROMPT = (
    "You are a context-extraction assistant. The conversation below is about to be cut from an agent's working "
    "memory; extract what the agent needs to carry on, under the headings SESSION INTENT, SUMMARY, ARTIFACTS and "
    "NEXT STEPS. Answer with the extracted context only.\n\n<messages>\n{messages}\n</messages>"
)


# ------------------------------------------------------------------------------------------------ context sizes
@dataclass(frozen=True)
class ContextSize:
    """One ``(kind, value)`` pair: ``("tokens", 4000)``, ``("messages", 50)``, ``("fraction", 0.8)``."""

    kind: str
    value: float

    def __str__(self) -> str:
        return f"{self.kind}={self.value:g}"


_CLAUSE_ITEM = re.compile(r"^\s*([A-Za-z_]+)\s*(>=|=|:)\s*([^\s&|]+)\s*$")


def parse_context_size(text: str, parameter: str) -> ContextSize:
    """``kind=value`` (also ``kind>=value`` / ``kind:value``), validated as LangChain validates a ContextSize."""
    match = _CLAUSE_ITEM.match(text)
    if not match:
        raise ValueError(f"{parameter} {text!r}: expected `tokens>=N`, `messages>=N` or `fraction>=F`")
    kind, raw = match.group(1).lower(), match.group(3)
    if kind not in CONTEXT_KINDS:
        raise ValueError(f"Unsupported context size type {kind} for {parameter}.")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{parameter} {text!r}: {raw!r} is not a number") from None
    if kind == "fraction":
        if not 0 < value <= 1:
            raise ValueError(f"Fractional {parameter} values must be between 0 and 1, got {value:g}.")
    else:
        if value != int(value):
            raise ValueError(f"{parameter} {text!r}: {kind} must be a whole number, got {raw}")
        if value <= 0:
            raise ValueError(f"{parameter} thresholds must be greater than 0, got {value:g}.")
        value = int(value)
    return ContextSize(kind, value)


def parse_trigger(text: str) -> tuple[dict[str, ContextSize], ...]:
    """The trigger encoding: clauses joined by ``|`` (any clause), items in a clause joined by ``&`` (all items).
    ``""`` / ``none`` is LangChain's ``trigger=None``: never summarize."""
    text = (text or "").strip()
    if text.lower() in ("", "none"):
        return ()
    clauses = []
    for clause_text in text.split("|"):
        clause: dict[str, ContextSize] = {}
        for item in clause_text.split("&"):
            size = parse_context_size(item, "trigger")
            if size.kind in clause:
                raise ValueError(f"trigger clause {clause_text.strip()!r} names {size.kind!r} twice")
            clause[size.kind] = size
        clauses.append(clause)
    return tuple(clauses)


def fraction_tokens(window: int, fraction: float) -> int:
    """``int(max_input_tokens * fraction)``, at least 1."""
    return max(int(window * fraction), 1)


# ------------------------------------------------------------------------------------------------ message kinds
def is_human(m: Message) -> bool:
    return m.role == "user"


def is_tool(m: Message) -> bool:
    return m.tool_result is not None


def safe_cutoff(messages: Sequence[Message], cutoff: int) -> int:
    """Move a cutoff that lands on tool messages back to the AI message that made those calls, or, if there is
    none, forward past the tool messages."""
    if cutoff >= len(messages) or not is_tool(messages[cutoff]):
        return cutoff
    ids: set[str] = set()
    end = cutoff
    while end < len(messages) and is_tool(messages[end]):
        tool_result = messages[end].tool_result
        assert tool_result is not None  # is_tool
        if tool_result.call_id:
            ids.add(tool_result.call_id)
        end += 1
    for i in range(cutoff - 1, -1, -1):
        m = messages[i]
        if m.role == "assistant" and m.tool_calls and ids & {c.id for c in m.tool_calls if c.id}:
            return i
    return end


# ------------------------------------------------------------------------------------------------ trim_messages
def _split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + parts[-1:]


def _blocks(m: Message) -> list[tuple[str, Any]]:
    if m.tool_result is not None:
        parts = m.tool_result.result
        return [("part", p) for p in ((parts,) if isinstance(parts, str) else parts)]
    return [("reasoning", r) for r in m.reasoning] + [("text", t) for t in m.texts] + \
        [("image", i) for i in m.images] + [("file", f) for f in m.files]


def _from_blocks(m: Message, blocks: Sequence[tuple[str, Any]]) -> Message:
    """A copy of ``m`` holding only ``blocks``; its content stays a list of blocks, as LangChain's copy does."""
    if m.tool_result is not None:
        parts = tuple(v for _, v in blocks)
        return replace(m, tool_result=ToolResult(m.tool_result.origin, parts, m.tool_result.error))
    pick: Callable[[str], tuple[Any, ...]] = lambda kind: tuple(v for k, v in blocks if k == kind)  # noqa: E731
    return replace(m, reasoning=pick("reasoning"), texts=pick("text"), images=pick("image"), files=pick("file"),
                   meta={**m.meta, LIST_CONTENT: True})


def _with_content_text(m: Message, text: str) -> Message:
    if m.tool_result is not None:
        return with_result_text(m, text)
    return replace(m, texts=(text,), reasoning=(), images=(), files=())


def _partial_from_end(m: Message, base: int, budget: int, count: Callable[[Sequence[Message]], int]) -> Message | None:
    """The largest tail of ``m`` (its last content blocks, else the last lines of the text of its last block when
    that is a text block) that fits beside ``base`` tokens."""
    content = langchain_content(m)
    if isinstance(content, list):
        blocks = _blocks(m)
        for drop in range(1, len(blocks)):
            candidate = _from_blocks(m, blocks[drop:])
            if base + count([candidate]) <= budget:
                return candidate
        kind, last = blocks[-1] if blocks else ("", None)
        text = last if kind in ("text", "part") and isinstance(last, str) else None
    else:
        text = content
    if not text:
        return None
    splits = list(reversed(_split_lines(text)))
    lo, hi = 0, len(splits)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if base + count([_with_content_text(m, "".join(reversed(splits[:mid])))]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return _with_content_text(m, "".join(reversed(splits[:lo]))) if lo else None


def trim_last(messages: Sequence[Message], max_tokens: int, count: Callable[[Sequence[Message]], int]
              ) -> tuple[list[int], dict[int, Message]]:
    """``trim_messages(strategy="last", allow_partial=True, start_on="human", include_system=True)``.

    Returns the kept positions (chronological) and, for a partially kept message, its trimmed copy.
    """
    positions = list(range(len(messages)))
    system = positions[0] if positions and messages[0].role == "system" else None
    rest = positions[1:] if system is not None else positions
    budget = max(0, max_tokens - count([messages[system]])) if system is not None else max_tokens
    reversed_rest = rest[::-1]
    partial: dict[int, Message] = {}
    if count([messages[i] for i in reversed_rest]) <= budget:
        kept = reversed_rest
    else:
        lo, hi = 0, len(reversed_rest)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count([messages[i] for i in reversed_rest[:mid]]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        kept = reversed_rest[:lo]
        if lo < len(reversed_rest):
            nxt = reversed_rest[lo]
            base = count([messages[i] for i in kept])
            piece = _partial_from_end(messages[nxt], base, budget, count)
            if piece is not None:
                partial[nxt] = piece
                kept = [*kept, nxt]
    while kept and not is_human(partial.get(kept[-1], messages[kept[-1]])):
        partial.pop(kept[-1], None)
        kept = kept[:-1]
    chronological = kept[::-1]
    return ([system] if system is not None else []) + chronological, partial


# ------------------------------------------------------------------------------------------------ summarization
class SummarizationRunner(HistoryRunner):
    """``SummarizationMiddleware.before_model``: trigger clauses, a ``keep`` cutoff made safe for tool pairs, a
    summary of the trimmed prefix, and the state rebuilt as [summary human message] + preserved messages."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx, counter_or(ctx, "langchain"), count_tools=False)
        self.params = params
        self.trigger = parse_trigger(params["trigger"])
        self.keep = parse_context_size(params["keep"], "keep")
        trim = int(params["trim_tokens_to_summarize"])
        if trim < 0:
            raise ValueError(f"trim_tokens_to_summarize must be at least 0 (0: no trimming), got {trim}")
        self.trim = trim or None
        failures, ceiling = int(params["max_consecutive_summary_failures"]), int(params["hard_token_ceiling"])
        if failures < 0:
            raise ValueError(f"max_consecutive_summary_failures must be at least 1 (0: no limit), got {failures}")
        if ceiling < 0:
            raise ValueError(f"hard_token_ceiling must be at least 1 (0: none), got {ceiling}")
        self.max_failures, self.ceiling = failures or None, ceiling or None
        self.prompt = params["summary_prompt"]
        check_summary_prompt(self.prompt)
        self.failures = 0
        self._state = MiddlewareMessages(self.counter)

    def lines(self) -> dict[str, float]:
        tokens = [self._threshold(s) for clause in self.trigger for s in clause.values() if s.kind != "messages"]
        return {"trigger": min(tokens)} if tokens else {}

    def _threshold(self, size: ContextSize) -> int:
        return int(size.value) if size.kind == "tokens" else fraction_tokens(self.ctx.context_window, size.value)

    def _count(self, messages: Sequence[Message]) -> int:
        return self.counter.count(messages)

    def should_summarize(self, messages: int, tokens: int) -> bool:
        """Whether a trigger clause holds for that many messages and tokens."""
        for clause in self.trigger:
            if all(messages >= s.value if s.kind == "messages" else tokens >= self._threshold(s)
                   for s in clause.values()):
                return True
        return False

    def cutoff(self, messages: Sequence[Message]) -> int:
        if self.keep.kind == "messages":
            if len(messages) <= self.keep.value:
                return 0
            return safe_cutoff(messages, len(messages) - int(self.keep.value))
        target = max(self._threshold(self.keep), 1)
        if self._count(messages) <= target:
            return 0
        lo, hi = 0, len(messages)
        candidate = len(messages)
        for _ in range(len(messages).bit_length() + 1):
            if lo >= hi:
                break
            mid = (lo + hi) // 2
            if self._count(messages[mid:]) <= target:
                candidate, hi = mid, mid
            else:
                lo = mid + 1
        if candidate == len(messages):
            candidate = lo
        if candidate >= len(messages):
            if len(messages) == 1:
                return 0
            candidate = len(messages) - 1
        return safe_cutoff(messages, candidate)

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        self._state.follow(stored)
        head = self._state.head
        state_tokens = self._state.view.value()
        if not self.should_summarize(len(stored) - head, state_tokens):
            return Decision()
        state = stored[head:]
        messages = [e.message for e in state]
        cut = self.cutoff(messages)
        if cut <= 0:
            return Decision(triggered=True, note="triggered; cutoff 0: nothing to summarize")
        covered = state[:cut]
        try:
            text, seen, partial, calls = self._summary(covered)
        except Exception as exc:  # the summarizer backend failed: LangChain counts failures, then gives up
            self.failures += 1
            if (self.max_failures is not None and self.failures >= self.max_failures) or \
                    (self.ceiling is not None and state_tokens >= self.ceiling):
                raise RuntimeError(f"SummarizationFailedError after {self.failures} failure(s): {exc}") from exc
            return Decision(triggered=True, note=f"summary failed ({exc}); skipped this turn")
        self.failures = 0
        unseen = _unseen(covered, seen)
        summary = inserted(Message("user", (SUMMARY_PREFIX + text,), meta={"lc_source": "summarization"}), "summary",
                           covered, unseen=unseen, partial=[covered[i].origin for i in partial
                                                            if covered[i].origin is not None])
        note = f"summarized {plural(cut, 'message')}, kept {plural(len(state) - cut, 'message')}"
        if unseen:
            note += f"; the summarizer never saw {plural(len(unseen), 'original')} (trim_tokens_to_summarize)"
        return Decision([*stored[:head], summary, *state[cut:]], True, note, model_calls=calls)

    def _summary(self, covered: Sequence[Entry]) -> tuple[str, set[int], dict[int, Message], list[dict[str, int]]]:
        """(summary text, positions seen, partial copies, model calls) for the covered prefix."""
        messages = [e.message for e in covered]
        if not messages:
            return NO_HISTORY, set(), {}, []
        partial: dict[int, Message]
        if self.trim is None:
            positions, partial = list(range(len(messages))), {}
        else:
            positions, partial = trim_last(messages, self.trim, self._count)
        if not positions:
            return TOO_LONG, set(), {}, []
        shown = [partial.get(i, messages[i]) for i in positions]
        rendered = xml_transcript(shown)
        request = Message("user", (fill_summary_prompt(self.prompt, rendered),))
        call = self.summarize(self.params, self.prompt, shown, rendered=rendered, sent=(request,))
        return call.text.strip(), set(positions), partial, [call.usage()]


def _unseen(covered: Sequence[Entry], seen: set[int]) -> list[int]:
    """Originals the summarizer never saw: covered originals left out by the trim, everything an unseen earlier
    summary stood for, and what earlier summaries had already never seen."""
    out: dict[int, None] = {}
    for i, e in enumerate(covered):
        if i in seen:
            for o in e.info.get("unseen", ()):
                out[o] = None
        elif e.inserted is None and e.origin is not None:
            out[e.origin] = None
        else:
            for o in e.represents:
                out[o] = None
    return list(out)


# ------------------------------------------------------------------------------------------------ middleware messages
class MiddlewareMessages(Follower):
    """The middleware's ``messages`` (the stored history without its leading system prompt) and their count
    without tool schemas, kept up to date as the history grows."""

    def __init__(self, counter: Counter) -> None:
        super().__init__()
        self.counter = counter

    def restart(self) -> None:
        self.head = 0
        self.view = MaskedView(self.stored, self.counter, ())

    def feed(self, position: int, entry: Entry) -> None:
        if position == self.head and entry.message.role == "system":
            self.head += 1
            self.view.omit(position)


# ------------------------------------------------------------------------------------------------ context editing
class ClearToolUsesRunner(HistoryRunner):
    """``ContextEditingMiddleware([ClearToolUsesEdit(...)])`` applied to each model request."""

    projects = True

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        counter = counter_or(ctx, "langchain")
        self.model_count = params["token_count_method"] == "model"
        super().__init__(ctx, counter, count_tools=self.model_count)
        self.trigger = int(params["trigger"])
        self.clear_at_least = int(params["clear_at_least"])
        self.keep = int(params["keep"])
        if self.keep < 0:
            raise ValueError(f"keep must be at least 0, got {self.keep}")
        self.clear_inputs = bool(params["clear_tool_inputs"])
        self.exclude_tools = frozenset(params["exclude_tools"])
        self.placeholder = params["placeholder"]
        self._clearing = _ResultClearing(self)

    def lines(self) -> dict[str, float]:
        return {"trigger": self.trigger}

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        clearing = self._clearing
        clearing.follow(stored)
        before = tokens if self.model_count else clearing.view.value()
        if before <= self.trigger:
            return Decision()
        cleared = clearing.clear(max(clearing.tool_results - self.keep, 0), before, self.clear_at_least)
        if not cleared:
            return Decision(triggered=True, note="triggered; no tool result may be cleared")
        freed = before - clearing.request.value()
        return Decision.sending(clearing.sent, True, f"cleared {plural(cleared, 'tool result')} ({freed:,} tokens)")

    def cleared(self, message: Message) -> Message:
        """A tool message with its result replaced by the placeholder (and the edit recorded in its meta)."""
        edited = with_result_text(message, self.placeholder)
        return edited.with_meta(context_editing={**_editing_state(message), "cleared": True,
                                                 "strategy": "clear_tool_uses"})


class _ResultClearing(MiddlewareMessages):
    """What ClearToolUsesEdit would clear in the history so far, kept up to date as it grows.

    Whether a tool result may be cleared never changes once it is in the history (its meta, the nearest AI message
    before it and that message's calls are fixed), so each is judged once. ``view`` counts the messages as they
    are; ``request`` counts what the middleware measures after clearing; ``sent`` is what the model receives.
    """

    def __init__(self, runner: ClearToolUsesRunner) -> None:
        super().__init__(runner.counter)
        self.runner = runner

    def restart(self) -> None:
        super().restart()
        runner = self.runner
        self.sent = runner.masked_view(self.stored)
        self.request = self.sent if runner.model_count else MaskedView(self.stored, self.counter, ())
        self.tool_results = 0
        self._tool_positions: list[int] = []
        self._assistant: int | None = None  # the latest AI message
        self._clearable: dict[int, int] = {}  # tool result position -> its AI message's position
        self._examined = 0  # the first tool results already looked at
        self._cleared: dict[int, None] = {}  # cleared tool results, in the order they were cleared
        self._inputs: dict[int, list[str]] = {}  # AI message position -> call ids whose inputs are cleared

    def feed(self, position: int, entry: Entry) -> None:
        head = self.head
        super().feed(position, entry)
        if self.head > head:
            if self.request is not self.sent:
                self.request.omit(position)
            return
        message = entry.message
        if is_tool(message):
            self.tool_results += 1
            self._tool_positions.append(position)
            if self._may_clear(message):
                assert self._assistant is not None  # _may_clear
                self._clearable[position] = self._assistant
        if message.role == "assistant":
            self._assistant = position

    def _may_clear(self, message: Message) -> bool:
        """Not cleared before, answered by the nearest AI message before it, and not of an excluded tool."""
        if _editing_state(message).get("cleared") or self._assistant is None:
            return False
        call_id = _tool_call_id(message)
        call = next((c for c in self.stored[self._assistant].message.tool_calls if c.id == call_id), None)
        return call is not None and (message.name or call.name) not in self.runner.exclude_tools

    def clear(self, candidates: int, before: int, at_least: int) -> int:
        """Clear the first ``candidates`` tool results that may be, oldest first; with ``at_least``, only until
        that many tokens are freed (recomputed from none cleared, as the freed count moves with the history).
        Returns how many are cleared."""
        if at_least > 0:
            self._restore()
        while self._examined < candidates:
            position = self._tool_positions[self._examined]
            self._examined += 1
            if position not in self._clearable:
                continue
            self._clear(position)
            if at_least > 0 and before - self.request.value() >= at_least:
                break
        return len(self._cleared)

    def _clear(self, position: int) -> None:
        self._cleared[position] = None
        self._refresh(position)
        if self.runner.clear_inputs:
            assistant = self._clearable[position]
            self._inputs.setdefault(assistant, []).append(_tool_call_id(self.stored[position].message))
            self._refresh(assistant)

    def _restore(self) -> None:
        edited = [*self._cleared, *self._inputs]
        self._cleared, self._inputs, self._examined = {}, {}, 0
        for position in edited:
            self._refresh(position)

    def _refresh(self, position: int) -> None:
        """Send for ``position`` what the edits now say (cleared inputs win over a cleared result)."""
        entry, runner = self.stored[position], self.runner
        ids = self._inputs.get(position)
        if ids:
            entry = runner.edited(entry, "inputs:" + ",".join(sorted(ids)),
                                  partial(_clear_inputs, ids=tuple(ids)), mark="inputs-cleared")
        elif position in self._cleared:
            entry = runner.edited(entry, "cleared", runner.cleared, mark="placeholder")
        self.sent.replace(position, entry)
        if self.request is not self.sent:
            self.request.replace(position, entry)


def _editing_state(message: Message) -> dict[str, Any]:
    """The message's ``context_editing`` metadata (a log may carry anything there: non-mappings count as none)."""
    state = message.meta.get("context_editing")
    return dict(state) if isinstance(state, Mapping) else {}


def _tool_call_id(message: Message) -> str:
    """A tool result's ``tool_call_id`` as LangChain holds it: a ``ToolMessage`` must have a string id, so a result
    the log gave no id has ``""``. The edit matches it against the AI message's call ids, which may be None: an
    id-less call is never matched, so its result is never cleared (nor its inputs)."""
    result = message.tool_result
    assert result is not None  # asked only of tool results
    return result.call_id or ""


def _clear_inputs(message: Message, ids: Sequence[str]) -> Message:
    state = _editing_state(message)
    state["cleared_tool_inputs"] = sorted(set(state.get("cleared_tool_inputs", ())) | set(ids))
    return with_cleared_inputs(message, ids, context_editing=state)


# ------------------------------------------------------------------------------------------------ registration
_register = registrar("langchain", policy="none")

_register(
    "summarization",
    title="LangChain · SummarizationMiddleware",
    summary=(
        "Before each model call, when a trigger clause holds, the older messages are replaced by one human "
        "message 'Here is a summary of the conversation to date:' and the most recent `keep` messages stay "
        "(the cut never separates a tool call from its results). Only the last trim_tokens_to_summarize tokens of "
        "the replaced part reach the summarizer, as one human message: the summary prompt with them filled in "
        "as XML `<message type=\"…\">` elements. Default trigger: none (never summarizes). The system prompt is "
        "not part of the middleware's messages. Uses its own trigger; ignores compact_at/compact_to; `fraction` "
        "is relative to context_window."
    ),
    params=(
        Param("trigger", "str", "", "`trigger`: clauses such as `tokens>=4000`, `messages>=50|fraction>=0.8` "
              "(`|`: any clause, `&`: all items of a clause). Empty = None: never summarizes."),
        Param("keep", "str", "messages=20", "`keep`: what stays verbatim — `messages=N`, `tokens=N` or "
              "`fraction=F` (of context_window)."),
        Param("trim_tokens_to_summarize", "int", 4000, "`trim_tokens_to_summarize`: the summarizer only sees the "
              "most recent this-many tokens of the replaced part, starting at a human message (0: None, no trim).",
              minimum=0, maximum=1_000_000),
        Param("max_consecutive_summary_failures", "int", 3, "`max_consecutive_summary_failures`: failed summaries "
              "in a row before the run stops (0: None, no limit).", minimum=0, maximum=100, advanced=True),
        Param("hard_token_ceiling", "int", 0, "`hard_token_ceiling`: a failed summary stops the run once the "
              "messages reach this many tokens (0: None).", minimum=0, maximum=10_000_000, advanced=True),
        Param("summary_prompt", "str", DEFAULT_SUMMARY_PROMPT, "`summary_prompt`: the summarizer prompt; "
              "`{messages}` marks where the messages go (filled as Python's str.format fills it, so `{{` and `}}` "
              "are literal braces and no other `{field}` may appear).", advanced=True),
        *SUMMARIZER_PARAMS,
    ),
    build=SummarizationRunner,
    docs_url=DOCS_SUMMARY,
)

_register(
    "context_editing",
    title="LangChain · ContextEditingMiddleware + ClearToolUsesEdit",
    summary=(
        "Each model request, when the messages exceed `trigger` tokens, tool results older than the last `keep` "
        "are replaced by `[cleared]`, oldest first — all of them, or until clear_at_least tokens are freed. A "
        "result is only cleared when the nearest AI message before it made its call. Applied to a copy of the "
        "messages (projection). Uses its own trigger; ignores compact_at/compact_to."
    ),
    params=(
        Param("trigger", "int", 100_000, "`trigger`: the edit runs when the messages exceed this many tokens.",
              minimum=0, maximum=10_000_000),
        Param("clear_at_least", "int", 0, "`clear_at_least`: stop clearing once this many tokens are freed "
              "(0: clear every candidate).", minimum=0, maximum=10_000_000),
        Param("keep", "int", 3, "`keep`: the most recent tool results never cleared (excluded tools count too).",
              minimum=0, maximum=1000),
        Param("clear_tool_inputs", "bool", False, "`clear_tool_inputs`: also empty the arguments of the calls "
              "whose results are cleared."),
        Param("exclude_tools", "str_list", (), "`exclude_tools`: tool names whose results are never cleared."),
        Param("placeholder", "str", CLEARED_PLACEHOLDER, "`placeholder`: text left in a cleared result."),
        Param("token_count_method", "choice", "approximate", "`token_count_method`: `approximate` counts the "
              "messages; `model` counts system prompt, messages and tool schemas.", choices=("approximate", "model"),
              advanced=True),
    ),
    build=ClearToolUsesRunner,
    docs_url=DOCS_EDITING,
)
