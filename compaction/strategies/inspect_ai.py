"""Inspect AI compaction strategies (``inspect_ai.model._compaction``): CompactionEdit, CompactionTrim and
CompactionSummary, from the behaviour spec.

Every strategy runs when the model input reaches ``threshold`` (a fraction of the context window when a float in
(0, 1], a number of tokens otherwise) and rewrites the messages later calls build on. The sample's *input* — its
system messages and the messages before the first model output — is never compacted away.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_left
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
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
from .history_runner import plural
from .history_runner import text_of
from .history_runner import with_result_text
from .history_runner import with_text

DOCS = "https://github.com/UKGovernmentBEIS/inspect_ai/tree/main/src/inspect_ai/model/_compaction"
TOOL_RESULT_REMOVED = "(Tool result removed)"
TOOL_CALL_REMOVED = "[Tool call: {function} (parameters and results removed from history)]"
SUMMARY_WRAPPER = (
    "[CONTEXT COMPACTION SUMMARY]\n\nThe following is a summary of work completed on this task so far:\n\n"
    "<previous_summary>\n{summary}\n</previous_summary>\n\nPlease continue working on this task from where you left off."
)
TRUNCATION_MARKER = "\n\n...[tool output truncated for summarization]...\n\n"
#: output headroom reserved when fitting the summarization input into the window
OUTPUT_RESERVE = 4096
MAX_TRUNCATION_ITERATIONS = 12
MEMORY_TOOL = "memory"
#: Inspect clears memory-tool content from kept messages; its exact replacement text is not in the spec (stand-in)
MEMORY_CLEARED = "(memory content cleared — Compaction Lab stand-in text)"
SUMMARY_INSTRUCTION = (
    "Your task is to write a detailed summary of the conversation so far so that work can continue from it alone. "
    "First analyse the conversation, then give the summary inside <summary></summary> tags, covering: the primary "
    "request and intent, key technical concepts, files and code, errors and fixes, problem solving, all user "
    "messages, pending tasks, current work, and the next step."
)


# ------------------------------------------------------------------------------------------------ shared
def threshold_tokens(threshold: float, context_window: int) -> int:
    """``threshold``: a float in (0, 1] is a fraction of the context window; anything larger is a token count."""
    if threshold <= 0:
        raise ValueError(f"threshold must be a fraction in (0, 1] or a positive number of tokens, got {threshold:g}")
    return int(context_window * threshold) if threshold <= 1 else int(threshold)


def input_length(entries: Sequence[Entry]) -> int:
    """The sample's input: everything before the first assistant message."""
    for i, e in enumerate(entries):
        if e.message.role == "assistant":
            return i
    return len(entries)


def is_summary_entry(entry: Entry) -> bool:
    return bool(entry.message.meta.get("summary")) and entry.inserted is not None


class InspectRunner(HistoryRunner):
    """The shared threshold and memory handling; subclasses implement :meth:`compact`."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(ctx)
        self.params = params
        self.threshold = threshold_tokens(float(params["threshold"]), ctx.context_window)
        self.memory = bool(params["memory"])

    def lines(self) -> dict[str, float]:
        return {"trigger": self.threshold}

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        if tokens < self.threshold:
            return Decision()
        decision = self.compact(stored)
        if self.memory:
            decision = self._clear_memory(decision, stored)
        return replace(decision, triggered=True, target=self.threshold)

    @abstractmethod
    def compact(self, stored: list[Entry]) -> Decision:
        """The strategy's rewrite of the stored history, once the threshold is reached."""

    def memory_candidates(self, entries: list[Entry], decision: Decision) -> Iterable[int]:
        """Positions in ``entries`` (the history :meth:`compact`'s ``decision`` leaves, before its ``replaced``) where
        memory content may still need clearing. Default: every position."""
        return range(len(entries))

    def _clear_memory(self, decision: Decision, stored: list[Entry]) -> Decision:
        """``decision`` with the content of memory tool results cleared: in its new list, or as more replacements
        in place."""
        base = decision.entries if decision.entries is not None else stored
        earlier = decision.replaced or {} if decision.entries is None else {}
        cleared: dict[int, Entry] = {}
        for p in self.memory_candidates(base, decision):
            entry = earlier.get(p, base[p])
            if _memory_to_clear(entry):
                cleared[p] = self.edited(entry, "memory", lambda m: with_result_text(m, MEMORY_CLEARED),
                                         mark="placeholder")
        if not cleared:
            return decision
        note = "; ".join(n for n in (decision.note, "memory tool content cleared") if n and "nothing" not in n)
        if decision.entries is None:
            return replace(decision, replaced={**earlier, **cleared}, note=note)
        for p, entry in cleared.items():  # the decision's own new list
            base[p] = entry
        return replace(decision, note=note)


def _memory_to_clear(entry: Entry) -> bool:
    result = entry.message.tool_result
    return result is not None and result.tool_name == MEMORY_TOOL and result.text != MEMORY_CLEARED


# ------------------------------------------------------------------------------------------------ edit
def parse_keep_thinking(value: Any) -> int | None:
    """``keep_thinking_turns``: a number of turns, or ``all`` (returned as ``None``)."""
    return count_or_all(value, "keep_thinking_turns")


class Edit(InspectRunner):
    """``CompactionEdit``: thinking of older assistant messages removed; all but the last ``keep_tool_uses`` tool
    uses cleared (results replaced, or call and result removed when inputs are not kept). No summary."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.keep_thinking = parse_keep_thinking(params["keep_thinking_turns"])
        self.keep_tool_uses = int(params["keep_tool_uses"])
        if self.keep_tool_uses < 0:
            raise ValueError(f"keep_tool_uses must be at least 0, got {self.keep_tool_uses}")
        self.keep_inputs = bool(params["keep_tool_inputs"])
        self.exclude = frozenset(params["exclude_tools"])
        self._left = _LeftToEdit(self.exclude)

    def compact(self, stored: list[Entry]) -> Decision:
        left = self._left
        left.follow(stored)
        edits: dict[int, Entry] = {}  # in place, unless inputs are not kept and entries go
        for i in left.aged_assistants(self.keep_thinking):
            if stored[i].message.reasoning:
                edits[i] = self.edited(stored[i], "thinking", lambda m: replace(m, reasoning=()),
                                       mark="thinking-cleared")
        thinking_cleared = len(edits)
        current: Callable[[int], Entry] = lambda i: edits.get(i, stored[i])  # noqa: E731
        cleared = [i for i in left.aged_uses(self.keep_tool_uses) if not current(i).message.meta.get("inspect_cleared")]
        removed: set[int] = set()
        for i in cleared:
            result = current(i).message.tool_result
            assert result is not None and result.call_id is not None  # a use answers a known call (see append)
            if self.keep_inputs:
                edits[i] = self.edited(current(i), "removed", lambda m: with_result_text(m, TOOL_RESULT_REMOVED,
                                                                                        inspect_cleared=True),
                                       mark="placeholder")
            else:
                removed.add(i)
                a = left.calls[result.call_id]
                edits[a] = replace(current(a), message=_without_call(current(a).message, result.call_id),
                                   pruned=True, info={**current(a).info, "mark": "inputs-cleared"})
        if not cleared and not thinking_cleared:
            return Decision(note="triggered; nothing to edit")
        note = f"cleared {plural(len(cleared), 'tool use')}, thinking of {plural(thinking_cleared, 'message')}"
        if removed:
            return Decision([current(i) for i in range(len(stored)) if i not in removed], note=note)
        return Decision(note=note, replaced=edits)

    def memory_candidates(self, entries: list[Entry], decision: Decision) -> Iterable[int]:
        if decision.entries is not None:
            return super().memory_candidates(entries, decision)
        return [*self._left.new_memory(), *(decision.replaced or ())]


class _LeftToEdit(Follower):
    """What CompactionEdit has not looked at yet, kept up to date as the history grows and across its own edits
    in place (which keep every position and role, call and tool name): the assistant messages and tool uses that
    aged past the kept ones since the last edit, and the memory results read since. A tool use is a result of a
    tool not excluded whose call id is made anywhere in the history. An edit that removes entries (inputs not kept)
    makes a new stored list, which starts it again."""

    def __init__(self, exclude: frozenset[str]) -> None:
        super().__init__()
        self.exclude = exclude

    def restart(self) -> None:
        self.calls: dict[str, int] = {}  # call id -> latest position making that call
        self._waiting: dict[str, list[int]] = {}  # call id -> results before any call with that id
        self._assistants: list[int] = []
        self._assistants_seen = 0
        self._uses: list[int] = []
        self._uses_seen = 0
        self._late: list[int] = []  # uses found (their call came later) among uses already looked at
        self._memory: list[int] = []

    def feed(self, position: int, entry: Entry) -> None:
        message = entry.message
        if message.role == "assistant":
            self._assistants.append(position)
        for c in message.tool_calls:
            if c.id:
                self._call(c.id, position)
        result = message.tool_result
        if result is None:
            return
        if result.tool_name == MEMORY_TOOL:
            self._memory.append(position)
        if result.call_id and result.tool_name not in self.exclude:
            if result.call_id in self.calls:
                self._use(position)
            else:
                self._waiting.setdefault(result.call_id, []).append(position)

    def aged_assistants(self, keep: int | None) -> list[int]:
        """Assistant messages older than the last ``keep`` not looked at before (none when ``keep`` is None)."""
        if keep is None:
            return []
        end = max(len(self._assistants) - keep, 0)
        aged = self._assistants[self._assistants_seen:end]
        self._assistants_seen = max(self._assistants_seen, end)
        return aged

    def aged_uses(self, keep: int) -> list[int]:
        """Tool uses older than the last ``keep`` not looked at before, in order."""
        end = max(len(self._uses) - keep, 0)
        aged = sorted([*self._late, *self._uses[self._uses_seen:end]])
        self._late = []
        self._uses_seen = max(self._uses_seen, end)
        return aged

    def new_memory(self) -> list[int]:
        """Memory results read since they were last asked for."""
        memory, self._memory = self._memory, []
        return memory

    def _call(self, call_id: str, position: int) -> None:
        if call_id not in self.calls:
            for waiting in self._waiting.pop(call_id, ()):
                self._use(waiting)
        self.calls[call_id] = position

    def _use(self, position: int) -> None:
        at = bisect_left(self._uses, position)
        self._uses.insert(at, position)
        if at < self._uses_seen:
            self._late.append(position)
            self._uses_seen += 1


def _without_call(message: Message, call_id: str | None) -> Message:
    call = next(c for c in message.tool_calls if c.id == call_id)
    return replace(message, tool_calls=tuple(c for c in message.tool_calls if c.id != call_id),
                   texts=(*message.texts, TOOL_CALL_REMOVED.format(function=call.name)))


# ------------------------------------------------------------------------------------------------ trim
class Trim(InspectRunner):
    """``CompactionTrim``: system messages and the sample input stay; the most recent ``preserve`` share of the
    other messages is kept, tool calls and results re-paired, and the list never ends on an assistant message."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.preserve = float(params["preserve"])
        if not 0 < self.preserve <= 1:
            raise ValueError(f"preserve must be in (0, 1], got {self.preserve:g}")

    def compact(self, stored: list[Entry]) -> Decision:
        head = input_length(stored)
        fixed = [e for e in stored[head:] if e.message.role == "system"]
        rest = [e for e in stored[head:] if e.message.role != "system"]
        keep = int(len(rest) * self.preserve)
        kept = repair_pairs(rest[len(rest) - keep:] if keep else [])
        while kept and kept[-1].message.role == "assistant":
            kept.pop()
        if len(kept) == len(rest):
            return Decision(note="triggered; nothing to trim")
        order = {id(e): i for i, e in enumerate(stored)}
        out = sorted([*stored[:head], *fixed, *kept], key=lambda e: order[id(e)])
        return Decision(out, note=f"trimmed {plural(len(rest) - len(kept), 'message')}, kept {len(kept)}")


def repair_pairs(entries: Sequence[Entry]) -> list[Entry]:
    """Drop tool results whose call is not kept, and calls whose results are not kept."""
    calls = {c.id for e in entries for c in e.message.tool_calls}
    results = {e.message.tool_result.call_id for e in entries if e.message.tool_result is not None}
    out: list[Entry] = []
    for e in entries:
        m = e.message
        if m.tool_result is not None and m.tool_result.call_id not in calls:
            continue
        orphans = [c for c in m.tool_calls if c.id not in results]
        if orphans:
            kept_calls = tuple(c for c in m.tool_calls if c.id in results)
            if not kept_calls and not m.text.strip():
                continue
            e = replace(e, message=replace(m, tool_calls=kept_calls), pruned=True,
                        info={**e.info, "mark": "inputs-cleared"})
        out.append(e)
    return out


# ------------------------------------------------------------------------------------------------ summary
class Summary(InspectRunner):
    """``CompactionSummary``: the conversation since the last summary is summarized; the new input is the system
    messages + the sample input + one user message wrapping the summary."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.instructions = params["instructions"]

    def compact(self, stored: list[Entry]) -> Decision:
        head = input_length(stored)
        last = max((i for i, e in enumerate(stored) if is_summary_entry(e)), default=None)
        start = last if last is not None else head
        conversation = stored[start:]
        if not [e for e in conversation if not is_summary_entry(e)]:
            return Decision(note="triggered; nothing new to summarize")
        instruction = SUMMARY_INSTRUCTION + (f"\n\n{self.instructions}" if self.instructions else "")
        shown, truncated = self._fit([e.message for e in (*stored[:head], *conversation)], instruction)
        call = self.summarize(self.params, instruction, shown)
        text = SUMMARY_WRAPPER.replace("{summary}", extract_summary(call.text))
        covered = [e for e in stored[head:] if e.message.role != "system"]
        summary = inserted(Message("user", (text,), meta={"summary": True}), "summary", covered,
                           summarizer=call.backend, simulated=call.simulated)
        note = f"summarized {plural(len(stored) - head, 'message')}"
        if truncated:
            note += f"; {plural(truncated, 'tool output')} truncated to fit the summarization window"
        systems = [e for e in stored[head:] if e.message.role == "system"]
        return Decision([*stored[:head], *systems, summary], note=note, model_calls=[call.usage()])

    def _fit(self, messages: list[Message], instruction: str) -> tuple[list[Message], int]:
        """Middle-truncate the largest tool outputs while the summarization input overflows the window."""
        budget = self.ctx.context_window - OUTPUT_RESERVE
        shown = list(messages)
        truncated: set[int] = set()
        for _ in range(MAX_TRUNCATION_ITERATIONS):
            total = self.counter.count([Message("system", (instruction,)), *shown])
            if total <= budget:
                break
            tools = [i for i, m in enumerate(shown) if m.tool_result is not None]
            if not tools:
                break
            largest = max(tools, key=lambda i: len(text_of(shown[i])))
            text = text_of(shown[largest])
            keep = max(len(text) - (total - budget) * 4, 0) // 2
            if len(text) <= 2 * keep + len(TRUNCATION_MARKER):
                break
            shown[largest] = with_text(shown[largest], text[:keep] + TRUNCATION_MARKER + text[len(text) - keep:])
            truncated.add(largest)
        return shown, len(truncated)


def extract_summary(text: str) -> str:
    """The body of ``<summary>…</summary>`` when the completion has one, else the whole text."""
    start = text.find("<summary>")
    end = text.rfind("</summary>")
    if start != -1 and end > start:
        return text[start + len("<summary>"): end].strip()
    return text.strip()


# ------------------------------------------------------------------------------------------------ registration
COMMON = (
    Param("threshold", "float", 0.9, "`threshold`: compact when the input reaches this fraction of context_window "
          "(0–1], or this many tokens when above 1.", minimum=0.01, maximum=10_000_000),
    Param("memory", "bool", True, "`memory`: content of `memory` tool results is cleared from kept messages "
          "(the warning turn Inspect adds first cannot be replayed; the cleared text is our stand-in)."),
)


_register = registrar("inspect_ai", policy="none", docs_url=DOCS)

_register(
    "edit",
    title="Inspect AI · CompactionEdit",
    summary=(
        "At the threshold: thinking is removed from all but the last assistant messages, and all but the last "
        "keep_tool_uses tool results become `(Tool result removed)` (or call and result disappear when inputs are "
        "not kept). No summary. Uses its own threshold; ignores compact_at/compact_to."
    ),
    params=(
        *COMMON,
        Param("keep_thinking_turns", "str", "1", "`keep_thinking_turns`: assistant messages that keep their "
              "reasoning (a number, or `all`)."),
        Param("keep_tool_uses", "int", 3, "`keep_tool_uses`: the most recent tool uses left intact (0: clear all).",
              minimum=0, maximum=1000),
        Param("keep_tool_inputs", "bool", True, "`keep_tool_inputs`: keep the calls and replace only results; off: "
              "call and result are removed and the assistant gets a `[Tool call: …]` note."),
        Param("exclude_tools", "str_list", (), "`exclude_tools`: tools whose uses are never cleared."),
    ),
    build=Edit,
)

_register(
    "trim",
    title="Inspect AI · CompactionTrim",
    summary=(
        "At the threshold: system messages and the sample input stay, the most recent `preserve` share of the "
        "other messages is kept (the rest dropped), tool calls and results re-paired. Uses its own threshold; "
        "ignores compact_at/compact_to."
    ),
    params=(
        *COMMON,
        Param("preserve", "float", 0.8, "`preserve`: share of the conversation messages kept, most recent first.",
              minimum=0.01, maximum=1.0),
    ),
    build=Trim,
)

_register(
    "summary",
    title="Inspect AI · CompactionSummary",
    summary=(
        "At the threshold: the conversation since the last summary is summarized, and the input becomes system + "
        "sample input + one user message `[CONTEXT COMPACTION SUMMARY] …`. Uses its own threshold; ignores "
        "compact_at/compact_to."
    ),
    params=(
        *COMMON,
        Param("instructions", "str", "", "`instructions`: extra summarization instructions appended to the "
              "prompt."),
        *SUMMARIZER_PARAMS,
    ),
    build=Summary,
)
