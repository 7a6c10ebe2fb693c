"""Haystack (haystack-ai 3.4.1): ``CompactionHook`` and its compactors, re-created from the behaviour spec.

The hook runs before every LLM call of the Agent loop. With no provider-reported ``context_tokens`` (the replay's
setting: compaction changes what the provider would have reported), the estimate is ``counter.count(messages,
tools)``; the hook triggers when it reaches ``context_window * compact_at`` and hands the compactor
``max(int(context_window * compact_to) - overhead, 0)``, where overhead is what the tool schemas add.
A compactor returns a new list, or ``None`` to decline.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from ..conversation import COMPACTION_META_KEY, Message, ToolResult
from ..history import Entry, messages_of
from ..policy import ThresholdPolicy
from ..tokens import Counter
from .base import CallOutcome, Param, RunContext, Runner, StrategyInfo, register

DOCS = "https://docs.haystack.deepset.ai/docs/agent"
PRUNING_PLACEHOLDER = "[Tool result removed to free up context. Call `{tool_name}` again if you need it.]"


# ------------------------------------------------------------------------------------------- shared definitions
def is_compaction_message(message: Message) -> bool:
    return COMPACTION_META_KEY in message.meta


def agent_step_spans(messages: Sequence[Message], start: int = 0) -> list[tuple[int, int]]:
    """Spans ``[a, b)``: an assistant message and the tool-result messages right after it."""
    spans: list[tuple[int, int]] = []
    index, n = start, len(messages)
    while index < n:
        if messages[index].role != "assistant":
            index += 1
            continue
        end = index + 1
        while end < n and messages[end].tool_result is not None:
            end += 1
        spans.append((index, end))
        index = end
    return spans


def result_step_positions(messages: Sequence[Message]) -> list[list[int]]:
    """Result positions of each tool-calling step over the whole conversation, oldest first."""
    return [list(range(a + 1, b)) for a, b in agent_step_spans(messages) if b > a + 1]


# ------------------------------------------------------------------------------------------------- compactors
class Compactor(ABC):
    """Haystack's ``Compactor`` protocol over entries: return a new list, or ``None`` to decline."""

    name: str = ""

    @abstractmethod
    def compact(self, entries: list[Entry], target: int, counter: Counter) -> list[Entry] | None: ...

    def describe(self, before: list[Entry], after: list[Entry]) -> str:
        """A short account of what one compaction did."""
        return ""


class ToolResultPruning(Compactor):
    """``ToolResultPruningCompactor``: oldest-first placeholder replacement of large, unprotected tool results."""

    name = "tool_result_pruning"

    def __init__(
        self,
        min_keep_steps: int = 1,
        min_tokens: int = 200,
        placeholder: str = PRUNING_PLACEHOLDER,
        skip_meta_keys: Sequence[str] = ("tool_result_offloaded",),
    ) -> None:
        if min_keep_steps < 1:
            raise ValueError(
                f"`min_keep_steps` must be at least 1, got {min_keep_steps}. The most recent tool-calling step "
                f"contains results the model may still need."
            )
        if min_tokens < 0:
            raise ValueError(f"`min_tokens` must be at least 0, got {min_tokens}.")
        self.min_keep_steps = min_keep_steps
        self.min_tokens = min_tokens
        self.placeholder = placeholder
        self.skip_meta_keys = tuple(skip_meta_keys)

    def compact(self, entries: list[Entry], target: int, counter: Counter) -> list[Entry] | None:
        messages = messages_of(entries)
        current = counter.count(messages)
        if current <= target:
            return None
        steps = result_step_positions(messages)
        protected = {p for step in steps[-self.min_keep_steps :] for p in step}
        out = list(entries)
        changed = False
        for index, message in enumerate(messages):
            if message.tool_result is None or index in protected:
                continue
            pruned = self._prune(message, counter)
            if pruned is None:
                continue
            new_message, saved = pruned
            out[index] = entries[index].replaced(new_message, placeholder=True)
            current -= saved
            changed = True
            if current <= target:
                break
        return out if changed else None

    def _prune(self, message: Message, counter: Counter) -> tuple[Message, int] | None:
        result = message.tool_result
        if result is None or COMPACTION_META_KEY in message.meta:
            return None
        if any(key in message.meta for key in self.skip_meta_keys):
            return None
        original_tokens = counter.count_one(message)
        if original_tokens <= self.min_tokens:
            return None
        text = self.placeholder.replace("{tool_name}", result.origin.name)
        pruned = Message(
            role="tool",
            tool_result=ToolResult(origin=result.origin, result=text, error=result.error),
            meta={
                **message.meta,
                COMPACTION_META_KEY: {"strategy": "tool_result_pruning", "original_tokens": original_tokens},
            },
        )
        saved = original_tokens - counter.count_one(pruned)
        return (pruned, saved) if saved > 0 else None

    def describe(self, before: list[Entry], after: list[Entry]) -> str:
        n = sum(1 for a, b in zip(before, after) if a is not b)
        return f"pruned {n} tool result{'s' if n != 1 else ''}, oldest first"


# ------------------------------------------------------------------------------------------------- the hook
class HookRunner(Runner):
    """``CompactionHook`` driving one compactor (or several, in registration order, as an Agent runs its hooks)."""

    persistence = "rewrite"

    def __init__(self, compactors: Sequence[Compactor], policy: ThresholdPolicy, ctx: RunContext) -> None:
        self.compactors = list(compactors)
        self.policy = policy
        self.counter = ctx.counter
        self.tools = ctx.tools
        self._entries: list[Entry] = []
        self._tally = self.counter.tally(tools=self.tools)

    def append(self, entry: Entry) -> None:
        self._entries.append(entry)
        self._tally.append(entry.message)

    def entries(self) -> Sequence[Entry]:
        return self._entries

    def measure(self) -> int:
        return self._tally.value(with_tools=True)

    def lines(self) -> dict[str, float]:
        return {"trigger": self.policy.trigger_tokens, "target": self.policy.target_fraction_tokens}

    def before_call(self) -> CallOutcome:
        before = self.measure()
        triggered_any = compacted_any = False
        target_seen: int | None = None
        notes: list[str] = []
        for compactor in self.compactors:
            estimated = self.measure()
            if not self.policy.triggered(estimated):
                continue
            triggered_any = True
            overhead = estimated - self._tally.value(with_tools=False)
            target = self.policy.target(overhead)
            target_seen = target if target_seen is None else target_seen
            result = compactor.compact(list(self._entries), target, self.counter)
            if result is None:
                notes.append(f"{compactor.name} declined: nothing it may compact")
                continue
            notes.append(compactor.describe(self._entries, result))
            compacted_any = True
            self._entries = result
            self._tally = self.counter.tally(messages_of(result), self.tools)
        return CallOutcome(
            tokens_before=before,
            tokens_sent=self.measure(),
            triggered=triggered_any,
            compacted=compacted_any,
            target=target_seen,
            note="; ".join(n for n in notes if n),
        )


def hook_runner(compactor_factory):
    """Adapt a compactor constructor into a registry ``build`` function (policy from the run context)."""

    def build(params: Mapping[str, Any], ctx: RunContext) -> Runner:
        policy = ThresholdPolicy(ctx.context_window, ctx.compact_at, ctx.compact_to)
        return HookRunner([compactor_factory(params)], policy, ctx)

    return build


register(
    StrategyInfo(
        name="haystack.tool_result_pruning",
        family="haystack",
        title="Haystack · ToolResultPruningCompactor",
        summary=(
            "When the context reaches compact_at × window, replaces old, large tool results with a short placeholder, "
            "oldest first, until the context is under compact_to × window. The newest tool-calling steps are never "
            "touched; everything else stays as it was."
        ),
        params=(
            Param("min_keep_steps", "int", 1, "How many of the most recent tool-calling steps keep their results "
                  "untouched (at least 1: the model has not acted on the newest results yet).", minimum=1, maximum=50),
            Param("min_tokens", "int", 200, "Only results larger than this many tokens are pruned; small results cost "
                  "little and are often the ones worth keeping.", minimum=0, maximum=100_000),
            Param("placeholder", "str", PRUNING_PLACEHOLDER, "Text left in place of a pruned result; `{tool_name}` is "
                  "replaced by the tool's name.", advanced=True),
            Param("skip_meta_keys", "str_list", ("tool_result_offloaded",), "Results whose meta has any of these keys "
                  "are left alone (default: results already offloaded to a store).", advanced=True),
        ),
        build=hook_runner(
            lambda p: ToolResultPruning(p["min_keep_steps"], p["min_tokens"], p["placeholder"], p["skip_meta_keys"])
        ),
        docs_url=DOCS,
    )
)
