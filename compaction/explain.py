"""Plain-language accounts of a replay: what happened at a step, and warnings where a setup misbehaves.

The app shows these next to the charts; notebooks and the CLI can print them. Every sentence is built from our own
fixed wording and numbers — never from log text — so it can be shown as Markdown safely.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass
from typing import cast

from .conversation import Message
from .history import Fate
from .replay import Replay
from .replay import Step


def _k(n: float) -> str:
    """142345 → '142k', 950 → '950'."""
    n = float(n)
    if abs(n) >= 10_000:
        return f"{n / 1000:.0f}k"
    if abs(n) >= 1000:
        return f"{n / 1000:.1f}k"
    return f"{n:.0f}"


def _changes(rep: Replay, step: Step) -> dict[Fate, int]:
    """How many originals changed fate at this step (newly pruned/collapsed/dropped) and messages inserted."""
    now = rep.fates_at(step.step)
    before = rep.fates_at(step.step - 1) if step.step > 0 else {}
    changed = Tally(fate for index, fate in now.items() if before.get(index) != fate)
    entries = rep.entries_at(step.step)
    inserted_now = sum(1 for e in entries if e.inserted is not None and not e.excluded)
    inserted_before = 0
    if step.step > 0:
        inserted_before = sum(1 for e in rep.entries_at(step.step - 1) if e.inserted is not None and not e.excluded)
    changed["inserted"] = max(inserted_now - inserted_before, 0)
    return dict(changed)


def what_happened(rep: Replay, k: int) -> str:
    """A short account of call ``k``: the measurement, the trigger, what the strategy did, the result."""
    step = rep.steps[k]
    trigger = rep.lines.get("trigger")
    target = rep.lines.get("target")
    parts = [f"Before call {k} (log message {step.message_index}) the context measured **{_k(step.tokens_before)}** "
             f"tokens ({rep.counter.spec})"]
    if trigger is not None:
        rule = f"{rep.compact_at:g} × {_k(rep.context_window)}" if rep.strategy.policy == "threshold" else "trigger"
        if step.triggered:
            parts.append(f", reaching the trigger of {_k(trigger)} ({rule})")
        else:
            parts.append(f", under the trigger of {_k(trigger)} ({rule}): nothing to do.")
            return "".join(parts) + _uncompacted_note(step)
    parts.append(". " if not parts[-1].endswith(".") else " ")
    if not step.triggered:
        parts.append("The strategy did not act at this call.")
        return "".join(parts) + _uncompacted_note(step)
    if not step.compacted:
        parts.append("The strategy was asked to compact but **declined**: nothing it is allowed to touch would help"
                     f"{' (' + step.note + ')' if step.note else ''}. The context is sent as it is.")
        return "".join(parts) + _uncompacted_note(step)
    changes = _changes(rep, step)
    done = [f"{n} {fate}" for fate, n in changes.items() if n and fate != "inserted"]
    if changes.get("inserted"):
        done.append(f"{changes['inserted']} message{'s' if changes['inserted'] != 1 else ''} inserted")
    goal = f" toward a target of {_k(cast(float, step.target if step.target is not None else target))}" if (
        step.target is not None or target is not None) else ""
    parts.append(f"It compacted{goal}: {step.note or ', '.join(done)}")
    if done and step.note:
        parts.append(f" ({', '.join(done)})")
    parts.append(f"; the call sent **{_k(step.tokens_sent)}** tokens "
                 f"({_k(step.tokens_before - step.tokens_sent)} fewer).")
    return "".join(parts) + _uncompacted_note(step)


def _uncompacted_note(step: Step) -> str:
    if step.tokens_uncompacted != step.tokens_sent:
        return f" Without compaction this call would have sent {_k(step.tokens_uncompacted)}."
    return ""


@dataclass(frozen=True)
class SetupWarning:
    """Something a user should look at, with the calls it concerns."""

    kind: str  # thrashing | floor | declined | first_user_lost | split_pair
    message: str
    steps: tuple[int, ...] = ()


def warnings_for(rep: Replay) -> list[SetupWarning]:
    """Thrashing, a post-compaction floor at the trigger, declined triggers, a lost first user message, and a tool
    call separated from its result."""
    out: list[SetupWarning] = []
    compacted = [s.step for s in rep.steps if s.compacted]
    back_to_back = [b for a, b in zip(compacted, compacted[1:]) if b == a + 1]
    trigger = rep.lines.get("trigger")
    stuck = [s.step for s in rep.steps if s.compacted and s.tokens_sent >= trigger] if trigger is not None else []
    if back_to_back:
        # compactions that end above the trigger come back whatever compact_to is: name what keeps them there
        advice = floor_cause(rep, stuck[0]) if stuck else "Lower compact_to, or raise compact_at."
        out.append(SetupWarning("thrashing", f"Thrashing: {len(back_to_back)} compaction(s) came on the call right after "
                           "another. Each one rewrites the context (and invalidates the prompt cache) for little gain. "
                           + advice, tuple(back_to_back)))
    if trigger is not None:
        if stuck:
            out.append(SetupWarning("floor", f"Floor at the trigger: after {len(stuck)} compaction(s) the context was still "
                               f"≥ the trigger ({_k(trigger)}). " + floor_cause(rep, stuck[0]), tuple(stuck)))
    declined = [s.step for s in rep.steps if s.declined]
    if declined:
        out.append(SetupWarning("declined", f"Declined triggers: {len(declined)} call(s) crossed the trigger but the "
                           "strategy found nothing it may compact; the context was sent unchanged. "
                           + floor_cause(rep, declined[0], inserted=False), tuple(declined)))
    users = [i for i, m in enumerate(rep.conversation.messages) if m.role == "user" and i not in rep.skipped]
    if users:
        lost = _steps_where_lost(rep, users[0])
        if lost:
            fate = rep.fates_at(lost[0]).get(users[0])
            out.append(SetupWarning("first_user_lost", f"The first user message (the task) was {fate} from call {lost[0]} "
                               "on; the model no longer sees the original request verbatim.", tuple(lost[:50])))
    split = _split_pairs(rep)
    if split:
        out.append(SetupWarning("split_pair", f"A tool call and its result were separated in {len(split)} call(s) "
                           "(one sent without the other): providers reject such requests.", tuple(split[:50])))
    return out


#: parameters that protect the newest part of the context from compaction, by the name the frameworks give them
PROTECTING_PARAMS = ("minimum_preserved_groups", "min_keep_steps", "keep_last_groups", "keep_last", "keep",
                     "keep_recent", "preserve_recent", "n", "window_size")
#: inserted messages holding at least this share of what a call sent are what keeps the context high
INSERTED_SHARE = 0.4


def floor_cause(rep: Replay, step: int, inserted: bool = True) -> str:
    """Why the context stays high at ``step`` after (or despite) a trigger, named from what was sent: inserted
    digests or summaries that carry most of it (their formatter keeps the content), the newest groups a parameter
    protects, or an incompressible part (system prompt, tool schemas, the last step) at the trigger itself."""
    counter = rep.counter
    sent = rep.steps[step].tokens_sent
    items = rep.context_at(step)
    if inserted and sent:
        added = [item for item in items if item.fate == "inserted"]
        added_tokens = sum(counter.count_one(item.message) for item in added)
        if added_tokens >= INSERTED_SHARE * sent:
            covered = {i for item in added for i in (item.represents or ())}
            messages = rep.conversation.messages
            stood_for = sum(counter.count_one(messages[i]) for i in covered if i < len(messages))
            knob = ("its formatter" if "formatter" in rep.params else "a shorter summary or digest")
            return (f"The {len(added)} inserted digest(s) or summaries carry {_k(added_tokens)} of the {_k(sent)} sent"
                    + (f", standing for {_k(stood_for)}" if stood_for else "")
                    + f": they keep most of what they replace. Shorten them ({knob}), not compact_to.")
    protecting = [(name, rep.params[name]) for name in PROTECTING_PARAMS
                  if isinstance(rep.params.get(name), int) and not isinstance(rep.params.get(name), bool)
                  and rep.params[name] > 0]
    kept = sum(1 for item in items if item.fate == "kept")
    if protecting and kept >= 0.5 * max(len(items), 1):
        name, value = protecting[0]
        return (f"{kept:,} of the {len(items):,} messages sent are kept as logged: the newest part is protected "
                f"({name}={value}). Lower {name} to let the strategy reach more of the context.")
    return ("What the strategy may not touch (system prompt, tool schemas, the last step) is too large for these "
            "thresholds: raise compact_at or the window.")


def _steps_where_lost(rep: Replay, index: int) -> list[int]:
    """The calls at which original ``index`` was collapsed or dropped."""
    fates: dict[int, Fate] = {}
    lost = []
    for delta in rep.deltas():
        if delta.change is not None:
            delta.change.apply_to(fates)
        if fates.get(index) in ("collapsed", "dropped"):
            lost.append(delta.step.step)
    return lost


class _Pairing:
    """Tool calls and results in a context as it changes: which results lack their call, which calls their result."""

    def __init__(self) -> None:
        self._calls: dict[str, int] = {}
        self._results: dict[str, int] = {}
        self.orphan_results: set[str] = set()
        self.unanswered_calls: set[str] = set()

    def update(self, message: Message, sign: int) -> None:
        """Account for ``message`` joining (``sign`` 1) or leaving (-1) the context."""
        for call in message.tool_calls:
            if call.id:
                self._calls[call.id] = self._calls.get(call.id, 0) + sign
                self._settle(call.id)
        result = message.tool_result
        if result is not None and result.call_id:
            self._results[result.call_id] = self._results.get(result.call_id, 0) + sign
            self._settle(result.call_id)

    def _settle(self, call_id: str) -> None:
        calls, results = self._calls.get(call_id, 0) > 0, self._results.get(call_id, 0) > 0
        for found, group in ((results and not calls, self.orphan_results), (calls and not results, self.unanswered_calls)):
            if found:
                group.add(call_id)
            else:
                group.discard(call_id)


def _split_pairs(rep: Replay) -> list[int]:
    """Calls whose context holds a result without its call, or a call without a result the log had by then.

    Appending originals never splits a pair, so only the calls that start a new snapshot are judged; the verdict
    holds until the next snapshot."""
    messages = rep.conversation.messages
    result_at = {m.tool_result.call_id: i for i, m in enumerate(messages)
                 if m.tool_result is not None and m.tool_result.call_id}
    pairing = _Pairing()
    bad: list[int] = []
    verdict = False
    for delta in rep.deltas():
        for e in delta.appended:
            pairing.update(e.message, 1)
        if delta.change is not None or delta.step.step == 0:
            if delta.change is not None:
                for e in delta.change.removed:
                    pairing.update(e.message, -1)
                for e in delta.change.added:
                    pairing.update(e.message, 1)
            late = any(result_at.get(c, len(messages)) < delta.step.message_index for c in pairing.unanswered_calls)
            verdict = bool(pairing.orphan_results) or late
        if verdict:
            bad.append(delta.step.step)
    return bad
