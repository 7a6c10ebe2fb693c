"""Microsoft Agent Framework (.NET, ``Microsoft.Agents.AI.Compaction``), re-created from the behaviour spec.

Messages are grouped into a ``CompactionMessageIndex`` (System, User, AssistantText, ToolCall, Summary groups, with
user turns). Strategies never delete: they set a sticky *excluded* flag on whole groups and may insert Summary
groups; what is sent is the included part. Every strategy has a trigger and a target (by default the inverse of the
trigger) and is skipped while at most one non-system group is included.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..conversation import Message
from ..history import Entry, inserted
from ..policy import Trigger, inverse, parse_trigger, tokens_below, tokens_exceed
from ..tokens import Counter
from .base import CallOutcome, Param, RunContext, Runner, StrategyInfo, register

DOCS = "https://learn.microsoft.com/dotnet/api/microsoft.agents.ai.compaction"
SUMMARY_FLAG = "_is_summary"
GROUP_KINDS = ("System", "User", "AssistantText", "ToolCall", "Summary")


def _reasoning_only(message: Message) -> bool:
    """.NET: every content is reasoning; an empty content list counts as reasoning-only."""
    return (
        message.role == "assistant"
        and not message.texts
        and not message.tool_calls
        and message.tool_result is None
        and not message.images
        and not message.files
    )


@dataclass(eq=False)
class Group:
    """A ``CompactionMessageGroup``."""

    kind: str
    entries: list[Entry]
    turn: int | None
    tokens: int = 0
    excluded: bool = False
    reason: str | None = None
    #: a ToolCall group still taking tool / reasoning-only messages (only ever true for the last group)
    open: bool = field(default=False, repr=False)

    @property
    def messages(self) -> list[Message]:
        return [e.message for e in self.entries]


class MessageIndex:
    """``CompactionMessageIndex`` with running totals of its included part (the metrics triggers read)."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter
        self.groups: list[Group] = []
        self._turn = 0
        self.included_tokens = 0
        self.included_messages = 0
        self.included_groups = 0
        self.included_non_system_groups = 0
        self._tool_groups = 0
        self._turn_counts: dict[int, int] = {}

    # ---------------------------------------------------------------------------------------------- metrics
    @property
    def included_turns(self) -> int:
        return sum(1 for count in self._turn_counts.values() if count > 0)

    @property
    def has_tool_calls(self) -> bool:
        return self._tool_groups > 0

    def _account(self, group: Group, sign: int) -> None:
        self.included_tokens += sign * group.tokens
        self.included_messages += sign * len(group.entries)
        self.included_groups += sign
        if group.kind != "System":
            self.included_non_system_groups += sign
        if group.kind == "ToolCall":
            self._tool_groups += sign
        if group.turn is not None and group.turn > 0:
            self._turn_counts[group.turn] = self._turn_counts.get(group.turn, 0) + sign

    def _measure(self, group: Group) -> int:
        return self.counter.count(group.messages)

    # ---------------------------------------------------------------------------------------------- building
    def _add_group(self, group: Group, position: int | None = None) -> Group:
        group.tokens = self._measure(group)
        if position is None:
            self.groups.append(group)
        else:
            self.groups.insert(position, group)
        if not group.excluded:
            self._account(group, +1)
        return group

    def _extend(self, group: Group, entry: Entry) -> None:
        if not group.excluded:
            self._account(group, -1)
        group.entries.append(entry)
        group.tokens = self._measure(group)
        if not group.excluded:
            self._account(group, +1)

    def append(self, entry: Entry) -> None:
        """Group one more message, as ``AppendFromMessages`` does."""
        m = entry.message
        last = self.groups[-1] if self.groups else None
        if m.role == "system":
            self._add_group(Group("System", [entry], None))
        elif m.role == "user":
            self._turn += 1
            self._add_group(Group("User", [entry], self._turn))
        elif m.role == "assistant" and m.tool_calls:
            pending: list[Entry] = []
            # reasoning-only assistants right before a tool-call assistant belong to its group
            while self.groups and self.groups[-1].kind == "AssistantText" and not self.groups[-1].excluded and all(
                _reasoning_only(e.message) for e in self.groups[-1].entries
            ):
                g = self.groups.pop()
                self._account(g, -1)
                pending = g.entries + pending
            self._add_group(Group("ToolCall", [*pending, entry], self._turn, open=True))
        elif m.role == "assistant" and m.meta.get(SUMMARY_FLAG) in (True, "true", "True"):
            self._add_group(Group("Summary", [entry], self._turn))
        elif (m.role == "tool" or _reasoning_only(m)) and last is not None and last.open:
            self._extend(last, entry)
        else:
            self._add_group(Group("AssistantText", [entry], self._turn))

    def exclude(self, group: Group, reason: str) -> None:
        if group.excluded:
            return
        self._account(group, -1)
        group.excluded = True
        group.reason = reason

    def insert_after(self, group: Group, new: Group) -> None:
        self._add_group(new, self.groups.index(group) + 1)

    # ---------------------------------------------------------------------------------------------- views
    def included(self) -> list[Group]:
        return [g for g in self.groups if not g.excluded]

    def entries(self) -> list[Entry]:
        out: list[Entry] = []
        for g in self.groups:
            if g.excluded:
                out.extend(e if e.excluded else e.excluded_as(g.reason or "excluded") for e in g.entries)
            else:
                out.extend(g.entries)
        return out


# ------------------------------------------------------------------------------------------------- formatters
def default_tool_call_formatter(group: Group) -> str:
    """``DefaultToolCallFormatter``: ``[Tool Calls]``, then per tool name (first-seen order) ``name:`` and one
    ``  - result`` line per non-empty result; results matched by call id, else positionally."""
    calls: list[tuple[str | None, str]] = []
    by_id: dict[str, str] = {}
    positional: list[str] = []
    for m in group.messages:
        for c in m.tool_calls:
            calls.append((c.id, c.name))
        if m.tool_result is not None and m.tool_result.call_id is not None:
            by_id[m.tool_result.call_id] = m.tool_result.text
        elif m.role == "tool":
            positional.append(m.tool_result.text if m.tool_result is not None else m.text)
    order: dict[str, list[str]] = {}
    next_positional = iter(positional)
    for call_id, name in calls:
        if call_id is not None and call_id in by_id:
            result = by_id[call_id]
        else:
            result = next(next_positional, "")
        order.setdefault(name, []).append(result)
    lines = ["[Tool Calls]"]
    for name, results in order.items():
        lines.append(f"{name}:")
        lines.extend(f"  - {r}" for r in results if r)
    return "\n".join(lines)


def first_line_formatter(group: Group, limit: int = 200) -> str:
    """A custom formatter: like the default, but each result cut to its first line (at most ``limit`` chars)."""

    def cut(text: str) -> str:
        line = text.strip().splitlines()[0] if text.strip() else ""
        return line if len(line) <= limit else line[: limit - 1] + "…"

    full = default_tool_call_formatter(group).split("\n")
    return "\n".join(cut(x[4:]).join(("  - ", "")) if x.startswith("  - ") else x for x in full)


def names_only_formatter(group: Group) -> str:
    """A custom formatter: just which tools were called, with their arguments (results dropped)."""
    calls = [f"{c.name}({c.arguments_json()})" for m in group.messages for c in m.tool_calls]
    return "[Tool Calls] " + "; ".join(calls)


FORMATTERS: dict[str, Callable[[Group], str]] = {
    "default": default_tool_call_formatter,
    "first_line": first_line_formatter,
    "names_only": names_only_formatter,
}


# ------------------------------------------------------------------------------------------------- strategies
class DotnetStrategy(ABC):
    """``CompactionStrategy(trigger, target)``: the shared skip rule around ``compact_core``."""

    def __init__(self, trigger: Trigger, target: Callable[[MessageIndex], bool] | None = None) -> None:
        self.trigger = trigger
        self.target = target or inverse(trigger)

    def compact(self, index: MessageIndex) -> tuple[bool, bool, str]:
        """(triggered, changed, note)."""
        if not self.trigger(index):
            return False, False, ""
        if index.included_non_system_groups <= 1:
            return True, False, "skipped: at most one non-system group is included"
        return (True, *self.compact_core(index))

    @abstractmethod
    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        """Compact an index whose trigger fired: (changed, note)."""


class ToolResultCompaction(DotnetStrategy):
    """``ToolResultCompactionStrategy(trigger, minimumPreservedGroups=16, target)``."""

    REASON = "Collapsed by ToolResultCompactionStrategy"

    def __init__(
        self,
        trigger: Trigger,
        minimum_preserved_groups: int = 16,
        target: Callable[[MessageIndex], bool] | None = None,
        formatter: Callable[[Group], str] = default_tool_call_formatter,
    ) -> None:
        super().__init__(trigger, target)
        self.minimum_preserved_groups = max(0, minimum_preserved_groups)  # EnsureNonNegative
        self.formatter = formatter

    def compact_core(self, index: MessageIndex) -> tuple[bool, str]:
        non_system = [g for g in index.included() if g.kind != "System"]
        keep = self.minimum_preserved_groups
        protected = set(map(id, non_system[len(non_system) - keep :])) if keep else set()
        eligible = [g for g in non_system if g.kind == "ToolCall" and id(g) not in protected]
        if not eligible:
            return False, "declined: no tool-call group outside the preserved ones"
        collapsed = 0
        for group in eligible:
            text = self.formatter(group)
            index.exclude(group, self.REASON)
            digest = Message(role="assistant", texts=(text,), meta={SUMMARY_FLAG: True})
            entry = inserted(digest, "digest", covers=group.entries, strategy="ToolResultCompactionStrategy")
            index.insert_after(group, Group("Summary", [entry], group.turn))
            collapsed += 1
            if self.target(index):
                break
        return True, f"collapsed {collapsed} tool-call group{'s' if collapsed != 1 else ''} into [Tool Calls] digests"


class DotnetRunner(Runner):
    """A .NET strategy applied before every model call (``AIContextProviderChatClient`` + ``CompactionProvider``)."""

    persistence = "flag"

    def __init__(self, strategy: DotnetStrategy, ctx: RunContext, lines: Mapping[str, float] | None = None) -> None:
        self.strategy = strategy
        self.index = MessageIndex(ctx.counter)
        self._lines = dict(lines or {})

    def append(self, entry: Entry) -> None:
        self.index.append(entry)

    def entries(self) -> Sequence[Entry]:
        return self.index.entries()

    def measure(self) -> int:
        return self.index.included_tokens

    def lines(self) -> dict[str, float]:
        return self._lines

    def before_call(self) -> CallOutcome:
        before = self.measure()
        triggered, changed, note = self.strategy.compact(self.index)
        return CallOutcome(
            tokens_before=before, tokens_sent=self.measure(), triggered=triggered, compacted=changed, note=note
        )


def trigger_and_target(params: Mapping[str, Any], ctx: RunContext) -> tuple[Trigger, Trigger | None, dict]:
    """The trigger/target a .NET setup uses: explicit params, else compact_at/compact_to of the window."""
    trigger = parse_trigger(params["trigger"]) if params.get("trigger") else tokens_exceed(
        int(ctx.context_window * ctx.compact_at)
    )
    if params.get("target"):
        target: Trigger | None = parse_trigger(params["target"])
    elif params.get("trigger"):
        target = None  # .NET default: the inverse of the trigger
    else:
        target = tokens_below(int(ctx.context_window * ctx.compact_to))
    lines = {}
    if trigger.token_threshold() is not None:
        lines["trigger"] = trigger.token_threshold()
    if target is not None and target.token_threshold() is not None:
        lines["target"] = target.token_threshold()
    return trigger, target, lines


TRIGGER_PARAMS = (
    Param("trigger", "trigger", "", "When to compact, as a .NET CompactionTrigger: TokensExceed(n), MessagesExceed(n), "
          "TurnsExceed(n), GroupsExceed(n), HasToolCalls(), Always(), Never(), All(…), Any(…). Empty = "
          "TokensExceed(context_window × compact_at)."),
    Param("target", "trigger", "", "When to stop, as a trigger that must become true (e.g. TokensBelow(40000)). "
          "Empty = TokensBelow(context_window × compact_to) when the trigger is empty too, else the inverse of the "
          "trigger (the .NET default)."),
)


def _build_tool_result_compaction(params: Mapping[str, Any], ctx: RunContext) -> Runner:
    trigger, target, lines = trigger_and_target(params, ctx)
    strategy = ToolResultCompaction(
        trigger,
        params["minimum_preserved_groups"],
        target,
        formatter=params.get("formatter_fn") or FORMATTERS[params["formatter"]],
    )
    return DotnetRunner(strategy, ctx, lines)


register(
    StrategyInfo(
        name="agent_framework.tool_result_compaction",
        family="agent_framework",
        title="Agent Framework (.NET) · ToolResultCompactionStrategy",
        summary=(
            "When the trigger fires, collapses old tool-call groups (the call and its results) into one short "
            "[Tool Calls] summary message each, oldest first, until the target holds. The last "
            "minimum_preserved_groups groups of any kind are never collapsed."
        ),
        params=(
            *TRIGGER_PARAMS,
            Param("minimum_preserved_groups", "int", 16, "The newest non-system groups (user, assistant, tool-call…) "
                  "that are never collapsed, whatever the target.", minimum=0, maximum=200),
            Param("formatter", "choice", "default", "How a collapsed group is written: `default` is .NET's "
                  "DefaultToolCallFormatter ([Tool Calls] / name: / - result); `first_line` keeps each result's first "
                  "line; `names_only` keeps only the calls.", choices=tuple(FORMATTERS)),
        ),
        build=_build_tool_result_compaction,
        docs_url=DOCS + ".toolresultcompactionstrategy",
    )
)
