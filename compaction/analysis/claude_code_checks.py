"""Claude Code's replayed compactions against the log's own records (``compact_boundary``,
``microcompact_boundary``).

Up to a real boundary a replay sends the log's own context, so the replayed rule should compact where the agent did:
:func:`boundary_rows` pairs each of the log's compactions with the replay's nearest one of the same kind (the call
right after the boundary against the call the replay compacted before), the agent's ``preTokens`` with the replay's
measure of Claude Code's count at those calls, and for a microcompaction the results cleared;
:func:`false_alarms` lists the replay's compactions that no real one is near.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import Conversation
from ..replay import Replay
from ..replay import replay
from ..strategies import get_strategy
from ..strategies.claude_code import ClaudeCodeStrategy
from ..strategies.claude_code import Measured

#: how many calls a replayed compaction may be off the real one
TOLERANCE = 2
#: the log's event kinds and the replay's: auto-compaction and microcompaction
KINDS = ("compaction", "microcompact")


@dataclass(frozen=True)
class MeasuredReplay:
    """A replay of a Claude Code strategy and the strategy's record of every call."""

    replay: Replay
    measured: tuple[Measured, ...]
    strategy: ClaudeCodeStrategy

    def step_of(self, message_index: int) -> int | None:
        """The first call at or after message ``message_index`` (the call a boundary before it preceded)."""
        return next((s.step for s in self.replay.steps if s.message_index >= message_index), None)

    def replayed(self, kind: str) -> list[int]:
        """The calls before which the replay compacted (``compaction``) or microcompacted (``microcompact``)."""
        if kind == "compaction":
            return [m.step for m in self.measured if m.auto_compacted]
        return [m.step for m in self.measured if m.cleared]


@dataclass(frozen=True)
class BoundaryRow:
    """One of the log's compactions next to the replay's nearest one of the same kind."""

    conversation: str
    version: str
    kind: str
    real_step: int | None
    replayed_step: int | None
    pre_tokens: int | None
    #: the replay's measure of Claude Code's count at the real call and at the replayed one (a microcompaction:
    #: the tokens of the compactable results it considered)
    measure_at_real: int | None
    measure_at_replayed: int | None
    threshold: int
    #: microcompactions: the cleared calls the log names (those this log holds), and the replay's
    cleared_real: tuple[str, ...] = ()
    cleared_replayed: tuple[str, ...] = ()
    tokens_saved: int | None = None

    @property
    def offset(self) -> int | None:
        """Replayed call minus real call (None when either is missing)."""
        if self.real_step is None or self.replayed_step is None:
            return None
        return self.replayed_step - self.real_step

    @property
    def matched(self) -> bool:
        """Within :data:`TOLERANCE` calls, and for a microcompaction with the same cleared results."""
        if self.offset is None or abs(self.offset) > TOLERANCE:
            return False
        return self.kind != "microcompact" or set(self.cleared_real) == set(self.cleared_replayed)


def measured_replay(conversation: Conversation, strategy: str = "claude_code.auto_compact",
                    params: Mapping[str, Any] | None = None, **policy: Any) -> MeasuredReplay:
    """Replay ``conversation`` with a Claude Code strategy (its reference) and keep the strategy's record."""
    info = get_strategy(strategy)
    made: list[ClaudeCodeStrategy] = []

    def build(values: Mapping[str, Any], ctx: Any) -> ClaudeCodeStrategy:
        made.append(info.reference(values, ctx))  # type: ignore[misc]
        return made[-1]

    rep = replay(conversation, replace(info, reference=build), params, reference=True, **policy)
    runner = made[0]  # the replay builds its runner first (then, maybe, one for the uncompacted baseline)
    return MeasuredReplay(rep, tuple(runner.measured), runner)


def boundary_rows(run: MeasuredReplay) -> list[BoundaryRow]:
    """Each of the log's compactions next to the replay's nearest one of the same kind."""
    rows = []
    conversation = run.replay.conversation
    known = {c.id for m in conversation.messages for c in m.tool_calls if c.id}
    by_step = {m.step: m for m in run.measured}
    for event in conversation.events:
        if event.kind not in KINDS:
            continue
        real = run.step_of(event.message_index)
        replayed = _nearest(run.replayed(event.kind), real)
        rows.append(BoundaryRow(
            conversation=conversation.id,
            version=run.strategy.rules.label,
            kind=event.kind,
            real_step=real,
            replayed_step=replayed,
            pre_tokens=event.pre_tokens,
            measure_at_real=_tokens(by_step, real, event.kind),
            measure_at_replayed=_tokens(by_step, replayed, event.kind),
            threshold=run.strategy.threshold if event.kind == "compaction" else run.strategy.warning,
            cleared_real=tuple(i for i in event.cleared if i in known),
            cleared_replayed=by_step[replayed].cleared if replayed is not None else (),
            tokens_saved=event.tokens_saved,
        ))
    return rows


def false_alarms(run: MeasuredReplay) -> list[tuple[str, int]]:
    """``(kind, call)`` for each replayed compaction with no real one of its kind within :data:`TOLERANCE` calls."""
    events: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for event in run.replay.conversation.events:
        step = run.step_of(event.message_index)
        if event.kind in events and step is not None:
            events[event.kind].append(step)
    return [(kind, step) for kind in KINDS for step in run.replayed(kind)
            if not any(abs(step - real) <= TOLERANCE for real in events[kind])]


def _nearest(steps: list[int], target: int | None) -> int | None:
    if not steps:
        return None
    if target is None:
        return steps[0]
    return min(steps, key=lambda s: (abs(s - target), s))


def _tokens(by_step: Mapping[int, Measured], step: int | None, kind: str) -> int | None:
    if step is None or step not in by_step:
        return None
    measured = by_step[step]
    return measured.results_tokens if kind == "microcompact" else measured.measure.tokens

