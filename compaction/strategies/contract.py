"""The strategy contract: a strategy written the way its framework documents it.

A strategy is a class of :class:`Strategy` with up to three methods, each a plain function of the stored history:

- :meth:`Strategy.triggered` — *when*: whether the framework compacts before this call. The default is Haystack's
  ``CompactionHook`` rule over the run's threshold policy (``tokens >= context_window × compact_at``); a strategy
  with its own rule (a trigger parameter, a reported-usage threshold, an idle gap) overrides it, and
  :meth:`Strategy.target` with it.
- :meth:`Strategy.compact` — *how*, persistently: given the stored history, the token goal and the counter, return
  the new stored history (entries replaced, left out, inserted or flagged as excluded), or ``None`` to decline. What
  it returns is what the framework writes back, and later calls start from it.
- :meth:`Strategy.project` — *how*, per call: the view sent in this call, recomputed from the stored history as the
  framework recomputes it (Anthropic context editing, observation masking), or ``None`` to send the stored history.

The engine (:class:`ReferenceRunner`) owns everything else: it keeps the stored history, counts it with the
strategy's counter after every change, finds what changed by entry identity, and records each call's outcome. A
strategy tells it what happened beyond its result through :meth:`Strategy.note`, :meth:`Strategy.decline` and
:meth:`Strategy.model_call`.

Speed-ups are optional. A strategy's registered ``fast`` runner (any :class:`~compaction.strategies.base.Runner`)
must send exactly what its reference sends at every call; ``tests/test_fast_paths.py`` replays every registered
strategy both ways on every real log and a parameter grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

from ..conversation import Message
from ..conversation import ToolSchema
from ..history import Entry
from ..summarizers import SummaryCall
from ..tokens import Counter
from ..tokens import Tally
from .base import CallOutcome
from .base import Persistence
from .base import RunContext
from .base import Runner
from .history_runner import summarize


@dataclass(frozen=True)
class Call:
    """What the engine measured before one LLM call."""

    #: the call's number in the replay (0 for the first LLM call)
    step: int
    #: the strategy's counter over what would be sent now (the tool schemas included when the strategy counts them)
    tokens: int
    #: the same without the tool schemas
    message_tokens: int
    #: index, in the loaded conversation, of the message this call produced (the log's usage and timestamps are
    #: keyed by it; the message itself is the future, not the context)
    message_index: int

    @property
    def overhead(self) -> int:
        """What is counted besides the messages (the tool schemas)."""
        return self.tokens - self.message_tokens


@dataclass
class Report:
    """What a strategy said about one call besides its result."""

    notes: list[str] = field(default_factory=list)
    declined: bool = False
    model_calls: list[dict[str, int]] = field(default_factory=list)


class Strategy:
    """The reference semantics of one strategy, set up for one replay (``params`` are resolved and coerced).

    Subclasses override :meth:`compact` and/or :meth:`project`, and :meth:`triggered` / :meth:`target` when the
    framework has its own rule for when to compact."""

    #: "rewrite": compact's result replaces the stored history; "flag": it keeps excluded entries stored (Agent
    #: Framework's sticky exclusions); "project": what is sent is recomputed from the stored history every call
    persistence: Persistence = "rewrite"
    #: whether the framework counts the tool schemas with the messages
    count_tools: ClassVar[bool] = True

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        self.params = params
        self.ctx = ctx
        self.counter: Counter = self.framework_counter() or ctx.counter
        self.report = Report()

    # ------------------------------------------------------------------------------------------ the contract
    def framework_counter(self) -> Counter | None:
        """The counter the framework itself uses when the run keeps the default counter (None: the run's)."""
        return None

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        """Whether to compact before this call. Default: Haystack's ``CompactionHook`` over the run's policy."""
        return call.tokens >= self.ctx.context_window * self.ctx.compact_at

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        """The token goal handed to :meth:`compact` (None: the strategy has none). Default: Haystack's,
        ``int(context_window × compact_to)`` less what is counted besides the messages."""
        return max(int(self.ctx.context_window * self.ctx.compact_to) - call.overhead, 0)

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        """The new stored history, or None to decline (``entries`` is a copy: change it or build another)."""
        return None

    def project(self, entries: list[Entry], call: Call) -> Sequence[Entry] | None:
        """What is sent in this call, computed from the stored history, or None to send it as it is."""
        return None

    def lines(self) -> dict[str, float]:
        """Threshold lines for the tokens chart. Default: the run policy's trigger and target."""
        ctx = self.ctx
        return {"trigger": ctx.context_window * ctx.compact_at, "target": int(ctx.context_window * ctx.compact_to)}

    # ------------------------------------------------------------------------------------------ reporting
    def note(self, text: str) -> None:
        """A short account of what this call did, in the framework's terms ("pruned 6 results")."""
        if text:
            self.report.notes.append(text)

    def decline(self, reason: str) -> None:
        """The framework was asked to compact (or its rule fired) but did not change anything, for ``reason``."""
        self.report.declined = True
        self.note(reason)

    def model_call(self, usage: Mapping[str, int]) -> None:
        """A summarizer or compaction-model call made at this step (``{"input_tokens", "output_tokens"}``)."""
        self.report.model_calls.append(dict(usage))

    # ------------------------------------------------------------------------------------------ helpers
    def summarize(self, instruction: str, messages: Sequence[Message], budget_tokens: int | None = None,
                  rendered: str | None = None, sent: Sequence[Message] = ()) -> SummaryCall:
        """One call of the summarizer this strategy's params select (``summarizer``, ``summary_tokens``), recorded
        as a model call of this step (``rendered``, ``sent``: see :func:`~.history_runner.summarize`)."""
        call = summarize(self.ctx, self.counter, self.params, instruction, messages, budget_tokens, rendered, sent)
        self.model_call(call.usage())
        return call

    def count(self, entries: Sequence[Entry]) -> int:
        """The strategy's counter over the sent part of ``entries`` (tool schemas included when it counts them)."""
        return self.counter.count([e.message for e in entries if not e.excluded], self.tools)

    @property
    def tools(self) -> Sequence[ToolSchema]:
        """The tool schemas counted with the messages (none when the framework does not count them)."""
        return self.ctx.tools if self.count_tools else ()


def overrides(strategy: Strategy, name: str) -> bool:
    """Whether ``strategy``'s class defines its own ``name`` method (not :class:`Strategy`'s default)."""
    return getattr(type(strategy), name) is not getattr(Strategy, name)


class _Count:
    """The running count of a list of entries' sent messages, updated from the first entry that changed."""

    def __init__(self, counter: Counter, tools: Sequence[ToolSchema]) -> None:
        self.counter, self.tools = counter, tools
        self._sent: list[Message] = []
        self._marks: list[Any] = []
        self._tally: Tally = counter.tally(tools=tools)

    def follow(self, entries: Sequence[Entry]) -> None:
        """Count ``entries`` now, reusing the count of the longest prefix of sent messages that did not change."""
        sent = [e.message for e in entries if not e.excluded]
        old = self._sent
        common = 0
        limit = min(len(old), len(sent))
        while common < limit and old[common] is sent[common]:
            common += 1
        if common < len(old):
            mark = self._marks[common - 1] if common else None
            if common and mark is not None:
                self._tally.rewind(mark)
                del self._marks[common:]
            else:
                self._tally = self.counter.tally(tools=self.tools)
                self._marks = self._tally.extend_marked(sent[:common])
        self._marks.extend(self._tally.extend_marked(sent[common:]) if common < len(sent) else ())
        self._sent = sent

    def append(self, message: Message) -> None:
        self._sent.append(message)
        self._marks.extend(self._tally.extend_marked((message,)))

    def value(self, with_tools: bool = True) -> int:
        return self._tally.value(with_tools=with_tools)


class ReferenceRunner(Runner):
    """Drives a :class:`Strategy` through a replay: the stored history, its count, and each call's outcome."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy
        self.persistence = strategy.persistence
        self.framework_counter = strategy.counter if strategy.counter is not strategy.ctx.counter else None
        self._compacts = overrides(strategy, "compact")
        self._projects = overrides(strategy, "project")
        self._stored: list[Entry] = []
        self._stored_count = _Count(strategy.counter, strategy.tools)
        self._view: list[Entry] | None = None
        self._view_count: _Count | None = None
        self._step = 0

    # ------------------------------------------------------------------------------------------ Runner protocol
    def append(self, entry: Entry) -> None:
        self._stored.append(entry)
        if not entry.excluded:
            self._stored_count.append(entry.message)
        if self._view is not None:
            self._view.append(entry)
            if not entry.excluded and self._view_count is not None:
                self._view_count.append(entry.message)

    def entries(self) -> Sequence[Entry]:
        return self._view if self._view is not None else self._stored

    def measure(self) -> int:
        count = self._view_count if self._view_count is not None else self._stored_count
        return count.value(with_tools=True)

    def lines(self) -> dict[str, float]:
        return self.strategy.lines()

    def before_call(self) -> CallOutcome:
        strategy = self.strategy
        strategy.report = Report()
        before = self._stored_count.value(with_tools=True)
        call = self._call(self._stored_count)
        triggered = compacted = False
        target: int | None = None
        if self._compacts and strategy.triggered(self._stored, call):
            triggered = True
            target = strategy.target(self._stored, call)
            result = strategy.compact(list(self._stored), target, strategy.counter)
            if result is not None and not _same(result, self._stored):
                self._stored = list(result)
                self._stored_count.follow(self._stored)
                compacted = True
            elif not strategy.report.notes:
                strategy.note("nothing it may compact")
        self._view = self._view_count = None
        if self._projects:
            view = strategy.project(list(self._stored), self._call(self._stored_count))
            if view is not None and not _same(view, self._stored):
                self._view = list(view)
                self._view_count = _Count(strategy.counter, strategy.tools)
                self._view_count.follow(self._view)
                compacted = True
                triggered = True
        triggered = triggered or strategy.report.declined
        self._step += 1
        return self.outcome(before, triggered=triggered, compacted=compacted, target=target,
                            notes=strategy.report.notes, model_calls=strategy.report.model_calls)

    def _call(self, count: _Count) -> Call:
        return Call(self._step, count.value(with_tools=True), count.value(with_tools=False), self.call_index)


def _same(a: Sequence[Entry], b: Sequence[Entry]) -> bool:
    """The same entries (by identity), in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


__all__ = ["Call", "Persistence", "ReferenceRunner", "Report", "Strategy"]
