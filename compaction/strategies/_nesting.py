"""Nesting any registered strategy inside a composite one (.NET ``PipelineCompactionStrategy``, Python
``TokenBudgetComposedStrategy``).

A composite host normally takes children of its own framework only. A *foreign* child (``haystack.*``,
``anthropic.*``, ``langchain.*``, the other Agent Framework family, …) is adapted as follows, each time the host
runs it:

1. The child is set up afresh (``StrategyInfo.build`` with the host run's :class:`RunContext`: same counter, tool
   schemas, context window, compact_at and compact_to) and given the host's current *included* messages, in order,
   as its own stored history — exactly as the replay engine would hand a log to it (a measure before each assistant
   message, so a .NET child closes one batch per model call).
2. The child's own ``before_call`` decides whether and how it acts: its trigger or threshold (for threshold-policy
   children, the host run's compact_at / compact_to of the context window), its protections, its target.
3. What it did is written back in the host's terms: an original whose content it replaced in place (placeholder,
   mask, offload pointer, cleared inputs…) gets that content in the host's record or group; a message it removed
   becomes excluded with the child's strategy name as the reason; a message it inserted (summary, digest, note)
   becomes a new host message at the child's position, standing for the messages it covers (so their fate is
   ``collapsed``). Surviving messages keep the host's order.

The host's own persistence applies to the result: what a child cleared stays cleared in the host's record even if
the child is a per-call projection in its own framework (Anthropic context editing, SWE-agent masking). State a
child would keep between calls of its own (a summarizer failure streak, the uuid sequence of offload keys) starts
fresh at every host call, because the child only ever sees the host's current messages.

Compositions are capped, because every host call sets up and runs each nested child afresh (the cost multiplies
with every level): a composite holds at most :data:`MAX_CHILDREN` children, and strategies nest at most
:data:`MAX_DEPTH` levels deep, the outermost included (a pipeline holding a pipeline that holds a pruning strategy is
three); going past either is a ``ValueError`` naming the cap.
A nested child's run also checks the replay's work budget (:func:`compaction.budget.checkpoint`).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

from .. import budget
from ..conversation import Message
from ..errors import ConfigError
from ..history import Entry
from .base import RunContext
from .base import Runner
from .base import StrategyInfo
from .base import get_strategy
from .base import registry
from .history_runner import plural

#: ``Entry.info`` key marking the host message a fed entry stands for (its position in the fed list)
FED_POSITION = "nested_position"
#: the most children one composite strategy (pipeline, token-budget composition) may hold
MAX_CHILDREN = 8
#: the most levels of strategies inside composites, the outermost host included (it is level 1)
MAX_DEPTH = 3

#: composites enclosing the nested child being set up or run in this thread (the outermost host not counted)
_LEVEL: ContextVar[int] = ContextVar("compaction_nesting_level", default=0)


@contextmanager
def _one_level_down() -> Iterator[None]:
    token = _LEVEL.set(_LEVEL.get() + 1)
    try:
        yield
    finally:
        _LEVEL.reset(token)


def check_children(count: int, host: str) -> None:
    """A ``ValueError`` when a composite lists more than :data:`MAX_CHILDREN` children."""
    if count > MAX_CHILDREN:
        raise ConfigError(f"{host}: {count} child strategies; a composite holds at most {MAX_CHILDREN}")


@dataclass
class NestedResult:
    """What a nested child did to the messages it was given (positions index the fed list)."""

    triggered: bool
    note: str = ""
    model_calls: list[dict[str, int]] = field(default_factory=list)
    #: fed position -> the child's new content for that message
    replaced: dict[int, Message] = field(default_factory=dict)
    #: fed positions the child removed (or, for a flag-style child, excluded)
    removed: list[int] = field(default_factory=list)
    #: (fed position of the surviving message right before it, or None at the start; the child's new entry)
    inserted: list[tuple[int | None, Entry]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.replaced or self.removed or self.inserted)


class NestedStrategy:
    """A registered strategy used as a child of a composite host (see the module docstring)."""

    def __init__(self, info: StrategyInfo, params: Mapping[str, Any], ctx: RunContext) -> None:
        self.info = info
        self.params = dict(params)
        self.ctx = ctx
        # built once up front so a bad setting fails when the host is set up, not at the first model call
        with _one_level_down():
            self._lines = dict(info.make_runner(self.params, ctx).lines())

    @property
    def name(self) -> str:
        return self.info.name

    def lines(self) -> dict[str, float]:
        """The child's own threshold lines (as its own replay would draw them)."""
        return dict(self._lines)

    def _runner_over(self, fed: Sequence[Entry]) -> Runner:
        runner = self.info.make_runner(self.params, self.ctx)
        for i, entry in enumerate(fed):
            if entry.message.role == "assistant" and i:
                runner.measure()  # the replay engine measures before each model call: close the batch there
            runner.append(entry)
        return runner

    def run(self, items: Sequence[Entry]) -> NestedResult:
        """Let the child act on ``items`` (the host's included messages, in order) and diff what it made of them."""
        budget.checkpoint()
        fed = [replace(e, info={**e.info, FED_POSITION: k}) for k, e in enumerate(items)]
        with _one_level_down():
            runner = self._runner_over(fed)
            outcome = runner.before_call()
        result = NestedResult(outcome.triggered, outcome.note, list(outcome.model_calls))
        if not outcome.compacted:
            return result
        survived: set[int] = set()
        previous: int | None = None
        for entry in runner.entries():
            position = entry.info.get(FED_POSITION)
            if position is None or not 0 <= position < len(fed) or fed[position].origin != entry.origin:
                if not entry.excluded:
                    result.inserted.append((previous, entry))
                continue
            if entry.excluded or position in survived:
                continue
            survived.add(position)
            previous = position
            before = fed[position].message
            if entry.message is not before and not entry.message.same_content(before):
                result.replaced[position] = entry.message
        result.removed = [k for k in range(len(fed)) if k not in survived]
        return result


def inserted_entry(entry: Entry, child: str, message: Message) -> Entry:
    """The child's inserted entry as the host stores it (host-specific ``message``, the child named in ``info``),
    covering the originals it represents directly. Its own covers point at the copies the child was fed (and at
    entries of the child's own, gone after this call), so keeping them would grow, call after call, a graph of
    summaries of copies of summaries whose paths the timeline counts one by one: two nested summarizers made that
    graph double every few calls (minutes for one replay of a bundled sample)."""
    info = {k: v for k, v in entry.info.items() if k != FED_POSITION}
    return replace(entry, message=message, covers=entry.represents, info={**info, "nested_in": child})


def describe(result: NestedResult) -> str:
    """A short account of a nested child's effect in the host's terms."""
    effects = [f"{verb} {plural(n, 'message')}" for verb, n in (
        ("replaced the content of", len(result.replaced)), ("excluded", len(result.removed)),
        ("inserted", len(result.inserted))) if n]
    effect = ", ".join(effects) or "no change"
    return f"{result.note} → {effect}" if result.note else effect


def is_strategy_name(name: str) -> bool:
    """Whether ``name`` is written as a registered strategy's dotted id (``family.strategy``)."""
    return "." in name


def native_name(name: str, family: str, native: Sequence[str] | Mapping[str, Any]) -> str | None:
    """The host's own short name for child ``name`` (``truncation`` or ``agent_framework.truncation``), or ``None``
    when it is a strategy to nest through the adapter."""
    short = name.removeprefix(f"{family}.")
    return short if short in native else None


def native_child_values(info: StrategyInfo, args: Mapping[str, Any], inherited: Mapping[str, Any],
                        label: str) -> dict[str, Any]:
    """The parameters of a host's own child ``info``: ``args``, and the ``inherited`` host values for those it has
    and ``args`` does not set, resolved against its registration; a bad value is a ``ValueError`` starting with
    ``label``."""
    own = {p.name for p in info.params}
    try:
        return info.resolve_params({**{k: v for k, v in inherited.items() if k in own and k not in args}, **args})
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from None


def check_child_name(name: str, host: str, native: Sequence[str] | Mapping[str, Any]) -> None:
    """A ``ValueError`` naming the child when ``name`` is neither one of the host's own short names nor a registered
    strategy."""
    if name in native:
        return
    if not is_strategy_name(name):
        raise ConfigError(f"{host} child {name!r}: expected one of {', '.join(native)}, or any registered strategy "
                         f"name such as haystack.tool_result_pruning")
    known = registry()
    if name not in known:
        raise ConfigError(f"{host} child {name!r}: unknown strategy; known strategies: {', '.join(sorted(known))}")


def make_nested(name: str, args: Mapping[str, str], inherited: Mapping[str, Any], ctx: RunContext,
                label: str) -> NestedStrategy:
    """Set up registered strategy ``name`` as a nested child: its parameters are checked against its own
    registration (``inherited`` host values fill the ones it has and ``args`` does not set); errors start with
    ``label`` (e.g. ``pipeline child 2 (haystack.tool_result_pruning)``)."""
    level = _LEVEL.get() + 2
    if level > MAX_DEPTH:
        raise ConfigError(f"{label}: strategies nest at most {MAX_DEPTH} levels deep, the outermost included; this "
                         f"child would be level {level}")
    try:
        info = get_strategy(name)
        own = {p.name for p in info.params}
        values = info.resolve_params({**{k: v for k, v in inherited.items() if k in own and k not in args}, **args})
        return NestedStrategy(info, values, ctx)
    except ValueError as exc:
        raise ConfigError(f"{label}: {exc}") from None
