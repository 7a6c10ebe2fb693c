"""Anthropic Messages API context management, re-created from the behaviour spec (docs + SDK types).

Context editing (``context_management.edits``) runs server-side before the prompt reaches the model, on the full
history the client sends every time: it is a projection recomputed each call, nothing is persisted. Server-side
compaction (``compact_20260112``) is different: the client appends the returned compaction block to its history,
and the API drops everything before that block on later requests, so its effect persists.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..history import Entry
from ..history import inserted
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import registrar
from .history_runner import Decision
from .history_runner import Follower
from .history_runner import HistoryRunner
from .history_runner import count_or_all
from .history_runner import leading_system
from .history_runner import plural
from .history_runner import with_cleared_inputs
from .history_runner import with_result_text

DOCS_EDITING = "https://docs.claude.com/en/docs/build-with-claude/context-editing"
DOCS_COMPACTION = "https://docs.claude.com/en/docs/build-with-claude/compaction"
#: Anthropic does not document the text that replaces a cleared tool result; this stand-in is ours, marked as such.
CLEARED_RESULT_STAND_IN = "[tool result cleared by clear_tool_uses_20250919 — Compaction Lab stand-in text]"
TRIGGER_TYPES = ("input_tokens", "tool_uses")
COMPACTION_MINIMUM_TRIGGER = 50_000


# ------------------------------------------------------------------------------------------ clear_tool_uses
def parse_clear_tool_inputs(value: Any) -> bool | frozenset[str]:
    """``clear_tool_inputs``: ``true``/``false``, or a comma-separated list of tool names whose inputs are cleared."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (list, tuple, frozenset, set)):
        return frozenset(str(v) for v in value)
    text = str(value).strip()
    if text.lower() in ("", "false", "0", "no", "off"):
        return False
    if text.lower() in ("true", "1", "yes", "on"):
        return True
    return frozenset(t.strip() for t in text.split(",") if t.strip())


class ClearToolUses(HistoryRunner):
    """``clear_tool_uses_20250919``: once the prompt exceeds the trigger, every tool result but those of the last
    ``keep`` tool uses (oldest first, excluded tools skipped) is replaced by a placeholder, unless fewer than
    ``clear_at_least`` tokens would be freed, in which case the edit is not applied at all."""

    projects = True

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.trigger_type = params["trigger_type"]
        if self.trigger_type not in TRIGGER_TYPES:
            raise ValueError(f"trigger type must be one of {', '.join(TRIGGER_TYPES)}, got {self.trigger_type!r}")
        self.trigger_value = int(params["trigger_value"])
        self.keep = int(params["keep"])
        self.clear_at_least = int(params["clear_at_least"])
        if self.trigger_value < 1:
            raise ValueError(f"trigger value must be at least 1, got {self.trigger_value}")
        if self.keep < 0:
            raise ValueError(f"keep (tool_uses) must be at least 0, got {self.keep}")
        if self.clear_at_least < 0:
            raise ValueError(f"clear_at_least (input_tokens) must be at least 0, got {self.clear_at_least}")
        self.exclude_tools = frozenset(params["exclude_tools"])
        self.clear_inputs = parse_clear_tool_inputs(params["clear_tool_inputs"])
        self.placeholder = params["placeholder"]
        self._clearing = _ToolUseClearing(self)

    def lines(self) -> dict[str, float]:
        return {"trigger": self.trigger_value} if self.trigger_type == "input_tokens" else {}

    def clears_inputs_of(self, tool_name: str) -> bool:
        """Whether a cleared use of ``tool_name`` also has its call's inputs cleared."""
        return self.clear_inputs is True or (isinstance(self.clear_inputs, frozenset) and tool_name in self.clear_inputs)

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        clearing = self._clearing
        clearing.follow(stored)
        if self.trigger_type == "input_tokens":
            triggered = tokens > self.trigger_value
        else:
            triggered = clearing.tool_calls > self.trigger_value
        if not triggered:
            return Decision()
        clearing.advance(self.keep)
        if not clearing.cleared:
            return Decision(triggered=True, note="triggered; no tool use old enough to clear")
        freed = tokens - clearing.view.value()
        if freed < self.clear_at_least:
            return Decision(triggered=True, note=f"not applied: clearing would free {freed:,} tokens, below "
                                                 f"clear_at_least {self.clear_at_least:,}")
        return Decision.sending(clearing.view, True, f"cleared_tool_uses={clearing.cleared}, "
                                                     f"cleared_input_tokens={freed:,}")


class _ToolUseClearing(Follower):
    """What clear_tool_uses would clear in the history so far, kept up to date as it grows.

    A tool use is a result whose call id is made anywhere in the history (the latest entry making that call owns
    it, and has its inputs cleared). Every use but the last ``keep`` is cleared, oldest first, unless its tool is
    excluded. A use found late (its call came after it) or a call id made again later is accounted for where it
    lands, so the view always matches a recomputation from the whole history.
    """

    def __init__(self, runner: ClearToolUses) -> None:
        super().__init__()
        self.runner = runner

    def restart(self) -> None:
        self.view = self.runner.masked_view(self.stored)
        self.tool_calls = 0
        self.cleared = 0
        self._calls: dict[str, int] = {}  # call id -> latest position making that call
        self._waiting: dict[str, list[int]] = {}  # call id -> results before any call with that id
        self._uses: list[int] = []
        self._done = 0  # uses[:done] are older than the kept ones: cleared unless their tool is excluded
        self._results: set[int] = set()  # cleared results
        self._inputs: dict[int, list[str]] = {}  # position -> call ids whose inputs are cleared there
        self._input_uses: dict[str, int] = {}  # call id -> cleared results that clear its inputs

    def feed(self, position: int, entry: Entry) -> None:
        message = entry.message
        self.tool_calls += len(message.tool_calls)
        for c in message.tool_calls:
            if c.id:
                self._call(c.id, position)
        result = message.tool_result
        if result is not None and result.call_id:
            if result.call_id in self._calls:
                self._use(position)
            else:
                self._waiting.setdefault(result.call_id, []).append(position)

    def advance(self, keep: int) -> None:
        """Clear every use but the last ``keep``."""
        while self._done < len(self._uses) - keep:
            self._clear(self._uses[self._done])
            self._done += 1

    def _call(self, call_id: str, position: int) -> None:
        previous = self._calls.get(call_id)
        self._calls[call_id] = position
        if previous is None:
            for waiting in self._waiting.pop(call_id, ()):
                self._use(waiting)
        elif previous != position and self._input_uses.get(call_id):
            moved = self._input_uses[call_id]
            ids = self._inputs[previous]
            for _ in range(moved):
                ids.remove(call_id)
            self._inputs.setdefault(position, []).extend([call_id] * moved)
            self._refresh(previous)
            self._refresh(position)

    def _use(self, position: int) -> None:
        at = bisect_left(self._uses, position)
        self._uses.insert(at, position)
        if at < self._done:  # older than uses already cleared: cleared as well
            self._clear(position)
            self._done += 1

    def _clear(self, position: int) -> None:
        result = self.stored[position].message.tool_result
        assert result is not None and result.call_id is not None  # a use answers a known call (see append)
        if result.tool_name in self.runner.exclude_tools:
            return
        self.cleared += 1
        self._results.add(position)
        self._refresh(position)
        if self.runner.clears_inputs_of(result.tool_name):
            owner = self._calls[result.call_id]
            self._inputs.setdefault(owner, []).append(result.call_id)
            self._input_uses[result.call_id] = self._input_uses.get(result.call_id, 0) + 1
            self._refresh(owner)

    def _refresh(self, position: int) -> None:
        """Send for ``position`` what the edits now say (cleared inputs win over a cleared result)."""
        entry, runner = self.stored[position], self.runner
        ids = self._inputs.get(position)
        if ids:
            entry = runner.edited(entry, "inputs:" + ",".join(sorted(ids)),
                                  lambda m: with_cleared_inputs(m, tuple(ids)), mark="inputs-cleared")  # called at once
        elif position in self._results:
            entry = runner.edited(entry, "cleared", lambda m: with_result_text(m, runner.placeholder),
                                  mark="placeholder")
        self.view.replace(position, entry)


# ------------------------------------------------------------------------------------------ clear_thinking
def parse_thinking_keep(value: Any) -> int | None:
    """``keep``: a number of thinking turns, or ``all`` (returned as ``None``)."""
    return count_or_all(value, "keep", "a number of thinking turns")


class ClearThinking(HistoryRunner):
    """``clear_thinking_20251015``: thinking blocks are removed from every assistant turn but the last ``keep``
    turns that have thinking (``all`` keeps every one)."""

    projects = True

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.keep = parse_thinking_keep(params["keep"])
        self._clearing = _ThinkingClearing(self)

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        if self.keep is None:
            return Decision()
        clearing = self._clearing
        clearing.follow(stored)
        cleared = clearing.advance(self.keep)
        if not cleared:
            return Decision()
        return Decision.sending(clearing.view, True, f"cleared_thinking_turns={cleared}, "
                                                     f"cleared_input_tokens={tokens - clearing.view.value():,}")


class _ThinkingClearing(Follower):
    """The assistant turns with thinking, in order; those before the last ``keep`` have it removed in the view."""

    def __init__(self, runner: ClearThinking) -> None:
        super().__init__()
        self.runner = runner

    def restart(self) -> None:
        self.view = self.runner.masked_view(self.stored)
        self._turns: list[int] = []
        self._cleared = 0

    def feed(self, position: int, entry: Entry) -> None:
        if entry.message.role == "assistant" and entry.message.reasoning:
            self._turns.append(position)

    def advance(self, keep: int) -> int:
        """Remove the thinking of every turn but the last ``keep``; how many turns have it removed."""
        older = max(len(self._turns) - keep, 0)
        for position in self._turns[self._cleared:older]:
            self.view.replace(position, self.runner.edited(self.stored[position], "thinking", _without_thinking,
                                                           mark="thinking-cleared"))
        self._cleared = max(self._cleared, older)
        return older


def _without_thinking(message: Message) -> Message:
    return replace(message, reasoning=())


# ------------------------------------------------------------------------------------------ compaction
COMPACTION_INSTRUCTION = (
    "Summarize this conversation so that the work can continue from the summary alone: the task and the user's "
    "requirements, what has been done and found (files, commands, results, decisions), what is in progress and "
    "what remains."
)


class Compact(HistoryRunner):
    """``compact_20260112``: once the input exceeds the trigger the API summarizes the whole conversation into a
    compaction block; the client appends it, and later requests drop every block before it."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.params = params
        self.trigger = int(params["trigger"])
        if self.trigger < COMPACTION_MINIMUM_TRIGGER:
            raise ValueError(f"trigger must be at least {COMPACTION_MINIMUM_TRIGGER:,} input tokens, got "
                             f"{self.trigger:,}")
        self.instructions = params["instructions"] or COMPACTION_INSTRUCTION
        self.pause = bool(params["pause_after_compaction"])

    def lines(self) -> dict[str, float]:
        return {"trigger": self.trigger}

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        if tokens <= self.trigger:
            return Decision()
        head = leading_system(stored)
        covered = stored[head:]
        if not covered:
            return Decision(triggered=True, note="triggered; nothing to compact")
        call = self.summarize(self.params, self.instructions, [e.message for e in covered])
        block = Message("assistant", (call.text,), meta={"anthropic_block": "compaction"})
        summary = inserted(block, "summary", covered, wrapper="compaction block", summarizer=call.backend,
                           simulated=call.simulated)
        how = ("paused after compaction: the compaction block was returned alone and the request re-sent"
               if self.pause else "compacted and continued in the same request")
        return Decision([*stored[:head], summary], True, f"{how}; {plural(len(covered), 'message')} before the "
                        f"compaction block dropped", self.trigger, [call.usage()])


# ------------------------------------------------------------------------------------------ registration
_register = registrar("anthropic", policy="none", docs_url=DOCS_EDITING)

_register(
    "clear_tool_uses_20250919",
    title="Anthropic · context editing: clear_tool_uses_20250919",
    summary=(
        "Server-side context editing, recomputed on the full history every call: once the prompt exceeds the "
        "trigger, all tool results but the last `keep` tool uses are replaced by a placeholder (oldest first; "
        "excluded tools kept), optionally with their inputs. If fewer than clear_at_least tokens would be freed "
        "the edit is skipped entirely. Uses its own trigger; ignores compact_at/compact_to."
    ),
    params=(
        Param("trigger_type", "choice", "input_tokens", "`trigger.type`: `input_tokens` (prompt size) or "
              "`tool_uses` (number of tool uses in the history).", choices=TRIGGER_TYPES),
        Param("trigger_value", "int", 100_000, "`trigger.value`: the edit activates when the measure exceeds this.",
              minimum=1, maximum=10_000_000),
        Param("keep", "int", 3, "`keep` (`tool_uses`): the most recent tool use/result pairs left intact; they "
              "are counted over all tools, excluded ones included.", minimum=0, maximum=1000),
        Param("clear_at_least", "int", 0, "`clear_at_least` (`input_tokens`): if clearing would free fewer tokens "
              "than this, the edit is not applied at all (0: no minimum).", minimum=0, maximum=10_000_000),
        Param("exclude_tools", "str_list", (), "`exclude_tools`: tool names whose results are never cleared."),
        Param("clear_tool_inputs", "str", "false", "`clear_tool_inputs`: `true` to also clear the inputs of "
              "cleared tool uses, or a comma-separated list of tool names whose inputs are cleared."),
        Param("placeholder", "str", CLEARED_RESULT_STAND_IN, "Text left in a cleared result. Anthropic does not "
              "document its placeholder text; the default is a stand-in of ours, marked as such.", advanced=True),
    ),
    build=ClearToolUses,
)

_register(
    "clear_thinking_20251015",
    title="Anthropic · context editing: clear_thinking_20251015",
    summary=(
        "Server-side context editing, recomputed every call: thinking blocks are removed from all assistant "
        "turns but the most recent `keep` turns with thinking. Always active (no trigger); ignores "
        "compact_at/compact_to. Only counters that count reasoning (maf-*, langchain) show its effect."
    ),
    params=(
        Param("keep", "str", "1", "`keep`: `thinking_turns` to keep (a number; 1 is the API default) or `all` "
              "to keep every thinking block."),
    ),
    build=ClearThinking,
)

_register(
    "compact_20260112",
    title="Anthropic · server-side compaction: compact_20260112",
    summary=(
        "When the input exceeds the trigger, the API summarizes the whole conversation into a compaction block; "
        "the client keeps it and later requests drop everything before it (the system prompt stays). Uses its "
        "own trigger; ignores compact_at/compact_to."
    ),
    params=(
        Param("trigger", "int", 150_000, "`trigger` (`input_tokens`): compaction runs when the input exceeds it "
              "(the API's minimum is 50,000).", minimum=COMPACTION_MINIMUM_TRIGGER, maximum=10_000_000),
        Param("instructions", "str", "", "`instructions`: summarization instructions used instead of the default "
              "prompt (empty: the default)."),
        Param("pause_after_compaction", "bool", False, "`pause_after_compaction`: the response stops after the "
              "compaction block and the client sends the request again (the note says which happened)."),
        *SUMMARIZER_PARAMS,
    ),
    build=Compact,
    docs_url=DOCS_COMPACTION,
)
