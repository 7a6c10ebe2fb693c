"""Work budgets: how many CPU-seconds a replay may spend before it stops cleanly.

The library and the CLI replay without a budget (their callers choose their own). The app gives every replay it
starts a :class:`WorkBudget`, so a shared link or an imported setup cannot keep the server busy: the replay checks
the budget once per LLM call (and the nesting adapter once per nested child run), and when it is spent raises
:class:`ReplayBudgetExceeded` saying at which call it stopped and why.

CPU time is the calling thread's (:func:`time.thread_time`): other sessions served by the same process, and time
spent waiting on a network summarizer, do not count against a replay.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING

from .errors import CompactionError

if TYPE_CHECKING:
    from .conversation import Conversation


class ReplayBudgetExceeded(CompactionError, ValueError):
    """A replay stopped because its work budget was spent (a ``ValueError``: the settings asked for too much work)."""

    def __init__(self, step: int, calls: int, spent: float, budget: WorkBudget) -> None:
        self.step = step
        self.calls = calls
        self.spent = spent
        self.budget = budget
        #: True when the replay had the whole budget to itself (it would stop again on its own), False when work
        #: done before it under the same budget left it too little
        self.alone = budget.started_full
        why = (f"it used its budget of {budget.seconds:g} CPU-seconds" if self.alone else
               f"the {budget.pool_seconds:g} CPU-seconds this page may spend were used up by the replays before it")
        super().__init__(f"stopped at LLM call {step} of {calls} after {spent:.1f} CPU-seconds: {why} "
                         f"({budget.purpose})")


@dataclass
class WorkBudget:
    """At most ``seconds`` CPU-seconds of this thread from the moment it is made (``pool``: a larger budget it
    draws from as well, e.g. everything one page run may spend). ``purpose`` ends the stop message."""

    seconds: float
    purpose: str = "a limit of the app; the CLI and the Python API replay without one"
    pool: WorkBudget | None = None
    _start: float = field(default_factory=time.thread_time, repr=False)

    def __post_init__(self) -> None:
        self.started_full = self.pool is None or self.pool.remaining() >= self.seconds

    @property
    def pool_seconds(self) -> float:
        return self.pool.seconds if self.pool is not None else self.seconds

    def spent(self) -> float:
        """CPU-seconds used since the budget was made."""
        return time.thread_time() - self._start

    def remaining(self) -> float:
        """CPU-seconds left (the pool's, when it has less)."""
        own = self.seconds - self.spent()
        return min(own, self.pool.remaining()) if self.pool is not None else own

    def share(self, seconds: float, purpose: str | None = None) -> WorkBudget:
        """A budget of ``seconds`` for one piece of work that also counts against this one."""
        return WorkBudget(seconds, purpose or self.purpose, pool=self)

    def check(self, step: int, calls: int) -> None:
        """Raise :class:`ReplayBudgetExceeded` (stopped at call ``step`` of ``calls``) when the budget is spent."""
        if self.remaining() <= 0:
            raise ReplayBudgetExceeded(step, calls, self.spent(), self)


#: the budget of the replay running in this thread and where it is (budget, LLM call, calls), for the checks
#: deeper down (nested compositions); set when a replay starts, so one that stopped leaves nothing behind for the next
_ACTIVE: ContextVar[tuple[WorkBudget, int, int] | None] = ContextVar("compaction_active_budget", default=None)


def begin(budget: WorkBudget | None, conversation: Conversation, skipped: Collection[int]) -> int:
    """A replay of ``conversation`` starts under ``budget`` (or none): returns its number of LLM calls (0 without
    a budget, which needs no count)."""
    if budget is None:
        _ACTIVE.set(None)
        return 0
    calls = sum(1 for i, m in enumerate(conversation.messages) if i not in skipped and m.role == "assistant"
                and m.meta.get("generated", True) is not False)
    _ACTIVE.set((budget, 0, calls))
    return calls


def at_call(step: int, calls: int) -> None:
    """The running replay is at LLM call ``step``: check its budget (nothing when it has none)."""
    current = _ACTIVE.get()
    if current is not None:
        _ACTIVE.set((current[0], step, calls))
        current[0].check(step, calls)


def checkpoint() -> None:
    """Check the running replay's budget from inside one LLM call (nothing when it has none)."""
    current = _ACTIVE.get()
    if current is not None:
        budget, step, calls = current
        budget.check(step, calls)


def end(budget: WorkBudget | None) -> None:
    """The replay that began under ``budget`` finished."""
    if budget is not None:
        _ACTIVE.set(None)
