"""The replay engine: what an agent with a given compaction setup would have sent, LLM call by LLM call.

For each message of the log, in order: if it is an assistant message, an LLM call produced it, so the setup's
runner measures the stored history and may compact it just before that call; then the message is appended.
Compaction is persistent (rewrites and exclusion flags stay), except for strategies that the framework applies as a
projection of the raw history. The replay keeps one snapshot of the stored history per compaction, not a copy per
step, and rebuilds the context of any call on demand.

Replay assumes the agent would have acted the same after compaction — the standard offline-replay assumption that
makes runs comparable.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from bisect import bisect_right
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from functools import cached_property
from functools import partial
from itertools import accumulate
from itertools import islice
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING
from typing import Any
from typing import NamedTuple
from typing import cast

from . import budget as work_budget
from .conversation import Conversation
from .conversation import Message
from .display import clip
from .display import counted
from .display import html_table
from .display import short_label
from .errors import ConfigError
from .history import Entry
from .history import Fate
from .history import fates_of
from .history import original
from .models import resolve_context_window
from .strategies import RunContext
from .strategies import Runner
from .strategies import StrategyInfo
from .strategies import get_strategy
from .timeline import Change
from .timeline import Snapshot
from .timeline import Timeline
from .timeline import materialize
from .tokens import Counter
from .tokens import make_counter

if TYPE_CHECKING:
    import pandas as pd

    from .setups import Setup

#: rebuilt snapshots, and fate maps, a replay keeps at hand (a UI moving step by step revisits the same few; a walk
#: over the whole replay follows its changes instead)
_MATERIALIZED_CACHE = 4
_FATES_CACHE = 64
#: uncompacted series a conversation keeps (in its ``memo``) for the next replay that differs only in compact_at /
#: compact_to (the app moving a threshold, a sweep over them); see :func:`_baseline_key`
_BASELINES_KEPT = 32
#: of those, how many keep their runner (a whole message index of the log) for replays to resume from; the older
#: ones keep their series only (a replay that needs the runner again measures the baseline anew)
_BASELINE_RUNNERS_KEPT = 4


class Step(NamedTuple):
    """One LLM call of a replay (immutable; a named tuple: a replay makes one per call, and a frozen dataclass costs
    several times more to build)."""

    step: int
    message_index: int
    tokens_uncompacted: int
    tokens_before: int
    tokens_sent: int
    triggered: bool
    compacted: bool
    target: int | None
    note: str
    snapshot: int
    model_calls: tuple[Mapping[str, int], ...] = ()

    @property
    def declined(self) -> bool:
        """Triggered, but the strategy found nothing it may compact."""
        return self.triggered and not self.compacted


_tokens_sent = attrgetter("tokens_sent")
_tokens_uncompacted = attrgetter("tokens_uncompacted")
_compacted = attrgetter("compacted")
_declined = attrgetter("declined")
_model_calls = attrgetter("model_calls")


class CallDelta(NamedTuple):
    """How one call's context follows from the previous call's: the originals appended since (all sent at first),
    then, at a call that made a new snapshot, that snapshot's :class:`~compaction.timeline.Change` against them
    (a named tuple, as :class:`Step`: an analysis of a replay follows one per call)."""

    step: Step
    appended: list[Entry]
    change: Change | None
    snapshot: int


@dataclass(frozen=True)
class ContextItem:
    """One message as it stands in a call's context (or, with ``include_removed``, as it was removed)."""

    index: int | None
    fate: Fate
    message: Message
    original: Message | None
    excluded_reason: str | None = None
    represents: tuple[int, ...] = ()
    inserted_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        m = self.message
        out: dict[str, Any] = {
            "index": self.index,
            "fate": self.fate,
            "role": m.role,
            "text": m.tool_result.text if m.tool_result is not None else m.text,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": dict(c.arguments)} for c in m.tool_calls],
            "tool_call_id": m.tool_result.call_id if m.tool_result is not None else None,
            "tool_name": m.tool_result.tool_name if m.tool_result is not None else None,
        }
        if self.represents:
            out["represents"] = list(self.represents)
        if self.inserted_kind:
            out["inserted_kind"] = self.inserted_kind
        return out


@dataclass(eq=False)
class Replay:
    """The result of replaying one conversation under one setup."""

    conversation: Conversation
    strategy: StrategyInfo
    params: dict[str, Any]
    counter: Counter
    context_window: int
    compact_at: float
    compact_to: float
    steps: list[Step]
    lines: dict[str, float]
    persistence: str
    skipped: frozenset[int] = frozenset()
    #: where ``context_window`` came from: ``explicit`` (given), or, when none was given, ``log:<field>``,
    #: ``model:<name>`` or ``default`` (see :func:`compaction.models.resolve_context_window`)
    context_window_source: str = "explicit"
    _snapshots: list[Snapshot] = field(default_factory=list, repr=False)
    _changes: list[Change] = field(default_factory=list, repr=False)
    #: the entry each original was appended as (None for messages left out), shared by every snapshot
    _originals: tuple[Entry | None, ...] = field(default=(), repr=False)
    _fates_cache: dict[int, dict[int, Fate]] = field(default_factory=dict, repr=False)
    _materialized: dict[int, tuple[Entry, ...]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------------------------------------- queries
    def _step(self, k: int) -> Step:
        if not 0 <= k < len(self.steps):
            raise IndexError(f"step {k} out of range: this replay has {len(self.steps)} LLM calls (0–{len(self.steps) - 1})")
        return self.steps[k]

    @property
    def snapshots(self) -> list[Snapshot]:
        """The stored history at each compaction (snapshot 0: before any), sharing unchanged prefixes."""
        return self._snapshots

    @property
    def changes(self) -> list[Change]:
        """What each snapshot changed in what is sent (aligned with :attr:`snapshots`; the first step of a snapshot
        is the call that made it)."""
        return self._changes

    def snapshot_entries(self, index: int) -> tuple[Entry, ...]:
        """Every entry of snapshot ``index`` (rebuilt from its shared prefixes; the last few are kept at hand)."""
        hit = self._materialized.get(index)
        if hit is None:
            hit = materialize(self._snapshots, index, self._materialized)
            while len(self._materialized) >= _MATERIALIZED_CACHE:
                self._materialized.pop(next(iter(self._materialized)))
            self._materialized[index] = hit
        return hit

    def appended_since(self, start: int, end: int) -> list[Entry]:
        """The entries of the originals ``start..end-1`` (those left out skipped), as the runner received them."""
        return [e for e in self._originals[start:end] if e is not None]

    def deltas(self, start: int = 0) -> Iterator[CallDelta]:
        """Every call (from call ``start`` on) as a change from the call before: what an analysis of the whole replay
        follows instead of rebuilding each call's context (the calls sharing a snapshot change only by appended
        originals)."""
        previous_index, previous_snapshot = 0, 0
        if start > 0:
            before = self.steps[start - 1]
            previous_index, previous_snapshot = before.message_index, before.snapshot
        for step in islice(self.steps, start, None):
            appended = self.appended_since(previous_index, step.message_index)
            new = step.snapshot != previous_snapshot
            yield CallDelta(step, appended, self._changes[step.snapshot] if new else None, step.snapshot)
            previous_index, previous_snapshot = step.message_index, step.snapshot

    def sent_from(self, snapshot: int, position: int) -> list[Message]:
        """The sent messages of snapshot ``snapshot``'s entries from ``position`` on (cheap when the position lies in
        what the snapshot stores itself, as a :class:`~compaction.timeline.Change`'s ``resume`` does)."""
        snap = self._snapshots[snapshot]
        entries = snap.own[position - snap.shared:] if position >= snap.shared else \
            self.snapshot_entries(snapshot)[position:]
        return [e.message for e in entries if not e.excluded]

    def entries_at(self, k: int) -> list[Entry]:
        """The stored history right before call ``k`` (after any compaction at ``k``), excluded entries included."""
        step = self._step(k)
        snap = self._snapshots[step.snapshot]
        return [*self.snapshot_entries(step.snapshot), *self.appended_since(snap.next_original, step.message_index)]

    def messages_at(self, k: int) -> list[Message]:
        """The messages call ``k`` sent, in order (``entries_at`` without excluded entries, as bare messages)."""
        return [e.message for e in self.entries_at(k) if not e.excluded]

    def fates_at(self, k: int) -> dict[int, Fate]:
        """Non-kept fates of the originals before call ``k`` (index → fate)."""
        step = self._step(k)
        fates = self._fates_cache.get(step.snapshot)
        if fates is None:
            snap = self._snapshots[step.snapshot]
            fates = fates_of(self.snapshot_entries(step.snapshot), snap.next_original, self.skipped)
            while len(self._fates_cache) >= _FATES_CACHE:
                self._fates_cache.pop(next(iter(self._fates_cache)))
            self._fates_cache[step.snapshot] = fates
        return fates

    def context_at(self, k: int, include_removed: bool = False) -> list[ContextItem]:
        """What call ``k`` sent, in order. With ``include_removed``, collapsed and dropped originals are listed too,
        at their original position, so two setups can be aligned message by message."""
        entries = self.entries_at(k)
        fates = self.fates_at(k)
        originals = self.conversation.messages
        items: list[ContextItem] = []
        for e in entries:
            if e.excluded:
                if include_removed and e.origin is not None:
                    items.append(ContextItem(e.origin, fates.get(e.origin, "dropped"), originals[e.origin],
                                             originals[e.origin], e.exclude_reason))
                continue
            if e.origin is None:
                items.append(ContextItem(None, "inserted", e.message, None, represents=e.represents,
                                         inserted_kind=e.inserted))
            else:
                items.append(ContextItem(e.origin, "pruned" if e.pruned else "kept", e.message, originals[e.origin]))
        if include_removed:
            present = {i.index for i in items if i.index is not None}
            removed = [
                ContextItem(i, fate, originals[i], originals[i])
                for i, fate in fates.items()
                if fate in ("collapsed", "dropped") and i not in present
            ]
            items = _merge_by_origin(items, removed)
        return items

    # ------------------------------------------------------------------------------------------------- summaries
    def summary(self) -> dict[str, Any]:
        """The ``summary`` object of ``replay --json``."""
        steps = self.steps  # (each figure one pass in C: a sweep summarizes every replay)
        sent = list(map(_tokens_sent, steps))
        total_sent, uncompacted = sum(sent), sum(map(_tokens_uncompacted, steps))
        return {
            "llm_calls": len(steps),
            "compactions": sum(map(_compacted, steps)),
            "declined_triggers": sum(map(_declined, steps)),
            "peak_tokens_sent": max(sent, default=0),
            "total_tokens_sent": total_sent,
            "total_tokens_uncompacted": uncompacted,
            "tokens_saved": uncompacted - total_sent,
            "summarizer_calls": sum(map(len, map(_model_calls, steps))),
        }

    def policy_json(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "compact_at": self.compact_at, "compact_to": self.compact_to,
                "context_window_source": self.context_window_source}

    def step_json(self, s: Step) -> dict[str, Any]:
        """One entry of ``replay --json``'s ``steps``."""
        inserted_sent = sum(1 for e in self.snapshot_entries(s.snapshot) if e.inserted is not None and not e.excluded)
        return _step_json(s, self.fates_at(s.step), inserted_sent)

    def steps_json(self) -> list[dict[str, Any]]:
        """``replay --json``'s ``steps``, following the snapshots' changes (no context is rebuilt)."""
        fates: dict[int, Fate] = {}
        inserted_sent = 0
        out = []
        for delta in self.deltas():
            if delta.change is not None:
                delta.change.apply_to(fates)
                inserted_sent += sum(e.inserted is not None for e in delta.change.added) - sum(
                    e.inserted is not None for e in delta.change.removed)
            out.append(_step_json(delta.step, fates, inserted_sent))
        return out

    def to_json(self, context_at: int | None = None) -> dict[str, Any]:
        """The object ``replay --json`` prints (the CLI contract)."""
        out: dict[str, Any] = {
            "format": self.conversation.format,
            "conversation": self.conversation.id,
            "messages": len(self.conversation.messages),
            "strategy": self.strategy.name,
            "params": _jsonable(self.params),
            "policy": self.policy_json(),
            "counter": self.counter.spec,
            "persistence": self.persistence,
            "lines": self.lines,
            "steps": self.steps_json(),
            "summary": self.summary(),
        }
        if context_at is not None:
            out["context_at"] = context_at
            out["context"] = [item.to_json() for item in self.context_at(context_at)]
        return out

    def frame(self) -> pd.DataFrame:
        """One row per LLM call (pandas DataFrame)."""
        import pandas as pd

        return pd.DataFrame([_step_fields(s) for s in self.steps])

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<Replay {self.strategy.name} on {short_label(self.conversation)}: {counted(s['llm_calls'], 'call')}, "
                f"{counted(s['compactions'], 'compaction')}, {s['declined_triggers']:,} declined, peak "
                f"{s['peak_tokens_sent']:,} of {self.context_window:,} ({clip(self.context_window_source, 80)}), "
                f"saved {s['tokens_saved']:,}, counter {clip(self.counter.spec, 40)}>")

    def _repr_html_(self) -> str:
        """A small table: the setup, then the summary (every value escaped)."""
        s = self.summary()
        rows = [("strategy", self.strategy.name), ("log", short_label(self.conversation)),
                ("context window", f"{self.context_window:,} ({clip(self.context_window_source, 80)})"),
                ("compact at / to", f"{self.compact_at:g} / {self.compact_to:g}"),
                ("counter", clip(self.counter.spec, 40)), *((k.replace("_", " "), f"{v:,}") for k, v in s.items())]
        return html_table(rows, self.strategy.title)


#: what a step is, in the order its JSON and the replay's frame list it
STEP_FIELDS = ("step", "message_index", "tokens_uncompacted", "tokens_before", "tokens_sent", "triggered", "compacted",
               "declined", "target", "note")


def _step_fields(s: Step) -> dict[str, Any]:
    return {name: getattr(s, name) for name in STEP_FIELDS}


def _step_json(s: Step, fates: Mapping[int, Fate], inserted_sent: int) -> dict[str, Any]:
    grouped: dict[str, list[int]] = {"pruned": [], "collapsed": [], "dropped": []}
    for i, fate in sorted(fates.items()):
        grouped[fate].append(i)
    return {
        **_step_fields(s),
        "fates": grouped,
        "inserted": inserted_sent,
        "model_calls": [dict(c) for c in s.model_calls],
    }


def _merge_by_origin(items: list[ContextItem], removed: list[ContextItem]) -> list[ContextItem]:
    """Insert removed originals before the first item that comes after them in the original order."""
    out: list[ContextItem] = []
    pending = sorted(removed, key=lambda i: cast(int, i.index))  # removed originals all have an index
    p = 0
    for item in items:
        if item.index is not None:
            while p < len(pending) and cast(int, pending[p].index) < item.index:
                out.append(pending[p])
                p += 1
        out.append(item)
    out.extend(pending[p:])
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items() if not callable(v)}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return json.loads(json.dumps(value, default=str))


#: ("baseline", strategy, parameters, counter id, window, skipped, reference): see :func:`_baseline_key`
_BaselineKey = tuple[str, str, tuple[tuple[str, str], ...], int, int, frozenset[int], bool]


def _baseline_key(conversation: Conversation, info: StrategyInfo, values: Mapping[str, Any], counter: Counter,
                  context_window: int, skipped: frozenset[int], reference: bool = False) -> _BaselineKey:
    """What a replay's uncompacted series depends on: the log, the strategy with its parameters, the counter, the
    window and what is left out. Not compact_at / compact_to: the baseline runner only appends and measures, it never
    compacts (``tests/test_replay_baseline.py`` holds every registered strategy to that)."""
    params = tuple(sorted((k, repr(v)) for k, v in values.items()))
    return "baseline", info.name, params, id(counter), context_window, skipped, reference


@dataclass(frozen=True, eq=False)
class _Baseline:
    """A replay's uncompacted series (one measure per call). When the runner that measured it keeps marks, also
    that runner (at the end of the log) and its :meth:`~compaction.strategies.Runner.mark` before each call and at
    the end, from which the runner of a replay under other thresholds resumes (see :func:`_take_quiet_calls`)."""

    counter: Counter  # kept, so that its id is not taken by another counter
    series: tuple[int, ...]
    runner: Runner | None = None
    marks: tuple[Any, ...] = ()

    @cached_property
    def peaks(self) -> list[int]:
        """The highest measure up to each call (ascending, so the first call over a count is a bisection)."""
        return list(accumulate(self.series, max))


def _known_baseline(key: _BaselineKey, conversation: Conversation, counter: Counter) -> _Baseline | None:
    hit = conversation.memo.get(key)
    return hit if isinstance(hit, _Baseline) and hit.counter is counter else None


def _remember_baseline(key: _BaselineKey, conversation: Conversation, baseline: _Baseline) -> None:
    memo = conversation.memo
    memo.pop(key, None)  # (what is remembered anew is the newest)
    kept = [k for k in memo if k[0] == "baseline"]
    for old in kept[: max(0, len(kept) - _BASELINES_KEPT + 1)]:
        del memo[old]
    if baseline.runner is not None:
        with_runners = [k for k in memo if k[0] == "baseline" and memo[k].runner is not None]
        for old in with_runners[: max(0, len(with_runners) - _BASELINE_RUNNERS_KEPT + 1)]:
            memo[old] = _Baseline(memo[old].counter, memo[old].series)
    memo[key] = baseline


def _run_baseline(runner: Runner, counter: Counter, plan: Sequence[tuple[int, bool]], shared: Sequence[Entry],
                  calls: int) -> _Baseline:
    """The uncompacted series of a log, measured by ``runner`` (which only appends and measures), with its marks
    when it keeps them. ``plan``: the messages the replay goes through, each with whether an LLM call made it;
    ``calls``: how many there are, for the running replay's budget (checked at each call, as the replay is)."""
    series: list[int] = []
    marks: list[Any] = []
    for i, call in plan:
        if call:
            work_budget.at_call(len(series), calls)
            marks.append(runner.mark())
            series.append(runner.measure())
        runner.append(shared[i])
    marks.append(runner.mark())
    if any(m is None for m in marks):
        return _Baseline(counter, tuple(series))
    return _Baseline(counter, tuple(series), runner, tuple(marks))


#: ``Step(*fields)`` with every field given, in C (a named tuple is a tuple)
_new_step = partial(tuple.__new__, Step)


def _quiet_steps(calls_at: Sequence[int], series: Sequence[int], first: int) -> Iterator[Step]:
    """The steps of the first ``first`` calls, which compacted nothing (each field of a tuple zipped in C: the
    commonest steps of a sweep over thresholds, built without a Python call each)."""
    values = zip(range(first), calls_at, series, series, series, repeat(False), repeat(False), repeat(None),
                 repeat(""), repeat(0), repeat(()))
    return cast(Iterator[Step], map(_new_step, values))


def _take_quiet_calls(runner: Runner, quiet: int, baseline: _Baseline, calls_at: Sequence[int],
                      plan: Sequence[tuple[int, bool]], shared: Sequence[Entry], originals: list[Entry | None],
                      timeline: Timeline, steps: list[Step], budget: work_budget.WorkBudget | None) -> int:
    """Take the calls before the first whose uncompacted measure is over ``quiet`` (up to which ``runner`` surely
    does nothing: :meth:`~compaction.strategies.Runner.quiet_through`) from ``baseline``: their steps (the running
    replay's ``budget`` checked at each, as the replay would), the originals appended meanwhile, and the runner
    resumed from the baseline's mark at that call. Returns how many entries of ``plan`` were taken."""
    first = bisect_right(baseline.peaks, quiet)
    if first == 0 or baseline.runner is None:
        return 0
    quiet_steps = _quiet_steps(calls_at, baseline.series, first)
    if budget is None:
        steps.extend(quiet_steps)
    else:
        for step in quiet_steps:
            work_budget.at_call(step.step, len(calls_at))
            steps.append(step)
    runner.resume(baseline.runner, baseline.marks[first])
    end = calls_at[first] if first < len(calls_at) else len(originals)
    taken = bisect_left(plan, (end,))
    appended = [shared[i] for i, _ in islice(plan, taken)]
    for (i, _), entry in zip(plan, appended):
        originals[i] = entry
    timeline.extend(appended)
    return taken


def _replay_plan(conversation: Conversation, include_log_summaries: bool
                 ) -> tuple[frozenset[int], tuple[tuple[int, bool], ...], tuple[int, ...]]:
    """What every replay of ``conversation`` goes through (made once per conversation): the messages left out, the
    others in order with whether an LLM call made each (an assistant message the model generated), and the
    positions of those calls."""

    def make() -> tuple[frozenset[int], tuple[tuple[int, bool], ...], tuple[int, ...]]:
        skipped = hidden_from_agent(conversation) | (
            frozenset() if include_log_summaries else frozenset(conversation.log_summary_indices))
        plan = tuple((i, m.role == "assistant" and m.meta.get("generated", True) is not False)
                     for i, m in enumerate(conversation.messages) if i not in skipped)
        return skipped, plan, tuple(i for i, call in plan if call)

    return conversation.memoized(("replay plan", include_log_summaries), make)


def hidden_from_agent(conversation: Conversation) -> frozenset[int]:
    """Messages in the log that the agent's model never saw (e.g. tau2-bench's user-simulator tool traffic)."""
    return frozenset(i for i, m in enumerate(conversation.messages) if m.meta.get("hidden_from_agent") is True)


def original_entries(conversation: Conversation) -> tuple[Entry, ...]:
    """The entry of every original message as first appended, made once per conversation and shared by its replays
    (entries are immutable and compare by identity, which is all a replay asks of them)."""
    return conversation.memoized(("original entries",), lambda: tuple(
        original(m, i) for i, m in enumerate(conversation.messages)))


def setup_arguments(setup: Setup, params: Mapping[str, Any] | None,
                    call: str) -> tuple[str, Mapping[str, Any], str, int | None, float, float]:
    """What a call given ``setup`` runs with, as its keyword form spells it: strategy, params, counter,
    context_window, compact_at, compact_to. ``params`` given with a setup are a ``ConfigError`` naming ``call``."""
    if params is not None:
        raise ConfigError(f"{call} takes its parameters from the setup, not from params=")
    return setup.strategy, setup.params, setup.counter, setup.context_window, setup.compact_at, setup.compact_to


def replay(
    conversation: Conversation,
    strategy: str | StrategyInfo | Setup,
    params: Mapping[str, Any] | None = None,
    *,
    context_window: int | None = None,
    compact_at: float = 0.7,
    compact_to: float = 0.4,
    counter: str | Counter = "approx",
    include_log_summaries: bool = False,
    reference: bool = False,
    budget: work_budget.WorkBudget | None = None,
) -> Replay:
    """Replay ``conversation`` under a setup and return the steps, fates and contexts.

    ``replay(conv, setup)`` takes a :class:`~compaction.setups.Setup`; the keyword form (``replay(conv,
    "haystack.tool_result_pruning", params, context_window=…, compact_at=…, compact_to=…, counter=…)``) is the same
    thing spelled out.

    ``context_window=None`` takes the window from the log (its stated window, else its model's from the model
    table, else the table's default: :func:`compaction.models.resolve_context_window`); the replay's
    ``context_window_source`` says which (``explicit`` for a given window).

    ``params`` override the strategy's defaults (strings are coerced, so CLI values work). Invalid settings raise
    ``ValueError`` with the framework's own reason. The log's own compaction summaries (Claude Code) are left out
    unless ``include_log_summaries``; messages the agent never saw (``meta["hidden_from_agent"]``) are always left
    out, and assistant messages the model did not generate (``meta["generated"] is False``, e.g. a fixed greeting)
    are context, not LLM calls. ``reference`` runs the strategy's reference semantics even when it has a faster
    runner (they send the same; ``tests/test_fast_paths.py`` holds every strategy to it). A ``budget``
    (:class:`~compaction.budget.WorkBudget`) is checked once per LLM call: a replay that spends it stops with
    :class:`~compaction.budget.ReplayBudgetExceeded`.
    """
    from .setups import Setup  # the setup module builds on this one

    if isinstance(strategy, Setup):
        strategy, params, counter, context_window, compact_at, compact_to = setup_arguments(
            strategy, params, "replay(conversation, setup)")
    window_source = "explicit"
    if context_window is None:
        resolved = resolve_context_window(conversation)
        context_window, window_source = resolved.value, resolved.source
    info = get_strategy(strategy) if isinstance(strategy, str) else strategy
    values = info.resolve_params(params)
    counter_obj = make_counter(counter) if isinstance(counter, str) else counter
    # the summaries the log's own compactions wrote (a log may also mark other inserted text, such as a truncation
    # marker, as left out of replays: that is no summary)
    log_summaries = tuple(e.summary for e in conversation.events if e.summary) or tuple(
        conversation.messages[i].text for i in sorted(conversation.log_summary_indices))
    ctx = RunContext(counter_obj, conversation.tools, context_window, compact_at, compact_to, log_summaries,
                     conversation.usage, conversation.source, conversation.events, conversation.memo)
    runner = info.make_runner(values, ctx, reference=reference)
    skipped, plan, calls_at = _replay_plan(conversation, include_log_summaries)
    shared = original_entries(conversation)
    baseline_key = _baseline_key(conversation, info, values, counter_obj, context_window, skipped, reference)
    known = _known_baseline(baseline_key, conversation, counter_obj)
    project = runner.persistence == "project"
    # calls up to the first that may change something are taken from the uncompacted baseline (measured first)
    quiet = None if project or runner.mark() is None else runner.quiet_through()
    calls = work_budget.begin(budget, conversation, skipped)
    if quiet is not None and (known is None or known.runner is None):
        known = _run_baseline(info.make_runner(values, ctx, reference=reference), ctx.counter, plan, shared, calls)
        _remember_baseline(baseline_key, conversation, known)
    baseline = info.make_runner(values, ctx, reference=reference) if known is None else None
    uncompacted: list[int] = []
    # a strategy may count with its framework's own counter when the run keeps the default (LangChain)
    counter_obj = getattr(runner, "framework_counter", None) or counter_obj

    timeline = Timeline()
    originals: list[Entry | None] = [None] * len(conversation.messages)
    steps: list[Step] = []
    stored_snapshot = False  # the last snapshot holds the stored history as a projection that changed nothing sent it
    taken = 0 if quiet is None or known is None else _take_quiet_calls(
        runner, quiet, known, calls_at, plan, shared, originals, timeline, steps, budget)
    series = known.series if known is not None else uncompacted
    snapshot = len(timeline.snapshots) - 1
    append, keep = runner.append, timeline.append
    for i, call in islice(plan, taken, None):
        if call:
            runner.call_index = i
            if budget is not None:
                work_budget.at_call(len(steps), calls)
            outcome = runner.before_call()
            if outcome.compacted or (project and not stored_snapshot):
                # a projection that changed nothing sends the stored history: one snapshot of it serves every such
                # call until the next change (the originals appended meanwhile are the snapshot's tail)
                snapshot = timeline.snapshot(runner.entries(), i, runner.first_change())
            stored_snapshot = project and not outcome.compacted
            if baseline is not None:
                uncompacted.append(baseline.measure())
            steps.append(Step(len(steps), i, series[len(steps)], outcome.tokens_before, outcome.tokens_sent,
                              outcome.triggered, outcome.compacted, outcome.target, outcome.note, snapshot,
                              tuple(outcome.model_calls)))
        entry = originals[i] = shared[i]
        append(entry)
        if baseline is not None:
            baseline.append(entry)
        keep(entry)
    work_budget.end(budget)
    if known is None:
        _remember_baseline(baseline_key, conversation, _Baseline(ctx.counter, tuple(uncompacted)))
    return Replay(
        conversation=conversation,
        strategy=info,
        params=values,
        counter=counter_obj,
        context_window=context_window,
        compact_at=compact_at,
        compact_to=compact_to,
        steps=steps,
        lines=runner.lines(),
        persistence=runner.persistence,
        skipped=skipped,
        context_window_source=window_source,
        _snapshots=timeline.snapshots,
        _changes=timeline.changes,
        _originals=tuple(originals),
    )
