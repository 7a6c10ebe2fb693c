"""The masking strategies keep their view up to date incrementally (history_runner.MaskedView and Follower), and
Inspect's edit and OpenHands' recent events only look at what changed; these tests replay each of them next to the
straightforward recomputation from the whole history before every call (the implementation they replaced, kept here
as the oracle) and require the same outcome and the same sent entries at every call: on the real logs, the bundled samples, generated logs with awkward pairing (call ids made twice, results
before their calls, calls without ids, unanswered calls, tags, labels, thinking, memory results) and random logs.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.formats import LoadError
from compaction.formats import load_all_conversations
from compaction.history import Entry
from compaction.history import original
from compaction.strategies import RunContext
from compaction.strategies import anthropic
from compaction.strategies import get_strategy
from compaction.strategies import inspect_ai
from compaction.strategies import langchain
from compaction.strategies import openhands
from compaction.strategies import swe_agent
from compaction.strategies.history_runner import Decision
from compaction.strategies.history_runner import MaskedView
from compaction.strategies.history_runner import leading_system
from compaction.strategies.history_runner import plural
from compaction.strategies.history_runner import with_cleared_inputs
from compaction.strategies.history_runner import with_result_text
from compaction.strategies.history_runner import with_text
from compaction.tokens import EncodingUnavailable
from compaction.tokens import make_counter

COUNTERS = ("approx", "tiktoken:o200k_base", "langchain", "maf-dotnet", "maf-python")


# ------------------------------------------------------------------------------------------------ the oracles
def call_positions(entries: Sequence[Entry]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, e in enumerate(entries):
        for c in e.message.tool_calls:
            if c.id:
                out[c.id] = i
    return out


class RecomputedClearToolUses(anthropic.ClearToolUses):
    def project(self, stored: list[Entry], tokens: int) -> Decision:
        calls = call_positions(stored)
        uses = [i for i, e in enumerate(stored) if e.message.tool_result is not None
                and e.message.tool_result.call_id in calls]
        if self.trigger_type == "input_tokens":
            triggered = tokens > self.trigger_value
        else:
            triggered = sum(len(e.message.tool_calls) for e in stored) > self.trigger_value
        if not triggered:
            return Decision()
        out = list(stored)
        inputs: dict[int, list[str]] = {}
        cleared = 0
        for i in uses[: max(len(uses) - self.keep, 0)]:
            result = stored[i].message.tool_result
            if result.tool_name in self.exclude_tools:
                continue
            out[i] = self.edited(stored[i], "cleared", lambda m: with_result_text(m, self.placeholder),
                                 mark="placeholder")
            cleared += 1
            if self.clears_inputs_of(result.tool_name):
                inputs.setdefault(calls[result.call_id], []).append(result.call_id)
        for position, ids in inputs.items():
            out[position] = self.edited(stored[position], "inputs:" + ",".join(sorted(ids)),
                                        lambda m, ids=ids: with_cleared_inputs(m, ids), mark="inputs-cleared")
        if not cleared:
            return Decision(triggered=True, note="triggered; no tool use old enough to clear")
        freed = tokens - self.count(out)
        if freed < self.clear_at_least:
            return Decision(triggered=True, note=f"not applied: clearing would free {freed:,} tokens, below "
                                                 f"clear_at_least {self.clear_at_least:,}")
        return Decision(out, True, f"cleared_tool_uses={cleared}, cleared_input_tokens={freed:,}")


class RecomputedClearThinking(anthropic.ClearThinking):
    def project(self, stored: list[Entry], tokens: int) -> Decision:
        if self.keep is None:
            return Decision()
        thinking = [i for i, e in enumerate(stored) if e.message.role == "assistant" and e.message.reasoning]
        older = thinking[: max(len(thinking) - self.keep, 0)]
        if not older:
            return Decision()
        out = list(stored)
        for i in older:
            out[i] = self.edited(stored[i], "thinking", lambda m: replace(m, reasoning=()), mark="thinking-cleared")
        return Decision(out, True, f"cleared_thinking_turns={len(older)}, cleared_input_tokens={tokens - self.count(out):,}")


class RecomputedContextEditing(langchain.ClearToolUsesRunner):
    def _request_count(self, head: Sequence[Entry], state: Sequence[Entry]) -> int:
        counted = [*head, *state] if self.model_count else state
        return self.counter.count([e.message for e in counted], self.tools)

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        head_n = leading_system(stored)
        head, state = stored[:head_n], list(stored[head_n:])
        before = self._request_count(head, state)
        if before <= self.trigger:
            return Decision()
        candidates = [i for i, e in enumerate(state) if e.message.tool_result is not None]
        candidates = [] if self.keep >= len(candidates) else candidates[: len(candidates) - self.keep] \
            if self.keep else candidates
        original_state = list(state)
        cleared_inputs: dict[int, list[str]] = {}
        cleared = 0
        for i in candidates:
            message = state[i].message
            if langchain._editing_state(message).get("cleared"):
                continue
            ai = next((j for j in range(i - 1, -1, -1) if state[j].message.role == "assistant"), None)
            if ai is None:
                continue
            call_id = message.tool_result.call_id or ""  # a ToolMessage's tool_call_id is a string
            call = next((c for c in state[ai].message.tool_calls if c.id == call_id), None)
            if call is None or (message.name or call.name) in self.exclude_tools:
                continue
            state[i] = self.edited(original_state[i], "cleared", self.cleared, mark="placeholder")
            cleared += 1
            if self.clear_inputs:
                ids = cleared_inputs.setdefault(ai, [])
                ids.append(call_id)
                state[ai] = self.edited(original_state[ai], "inputs:" + ",".join(sorted(ids)),
                                        lambda m, ids=tuple(ids): langchain._clear_inputs(m, ids),
                                        mark="inputs-cleared")
            if self.clear_at_least > 0 and before - self._request_count(head, state) >= self.clear_at_least:
                break
        if not cleared:
            return Decision(triggered=True, note="triggered; no tool result may be cleared")
        freed = before - self._request_count(head, state)
        return Decision([*head, *state], True, f"cleared {plural(cleared, 'tool result')} ({freed:,} tokens)")


class RecomputedObservationMasking(openhands.ObservationMasking):
    project = openhands.OpenHandsRunner.project  # the condensed view, then ConversationMemory's filter

    def condense(self, stored: list[Entry], tokens: int) -> Decision:
        limit = len(stored) - self.window
        masked = [i for i, e in enumerate(stored) if i < limit and e.message.tool_result is not None]
        if not masked:
            return Decision()
        out = list(stored)
        for i in masked:
            out[i] = self.edited(stored[i], "masked", lambda m: with_result_text(m, openhands.MASKED), mark="masked")
        return Decision(out, True, f"{plural(len(masked), 'observation')} masked")


class RecomputedRecentEvents(openhands.RecentEvents):
    def condense(self, stored: list[Entry], tokens: int) -> Decision:
        positions = list(range(len(stored)))
        head = positions[: self.keep_first]
        tail = positions[-max(0, self.max_events - len(head)):]
        chosen = head + tail
        if chosen == positions:
            return Decision()
        return openhands.send_events(stored, chosen)


def observation_positions(entries: Sequence[Entry]) -> list[int]:
    labelled = any("message_type" in e.message.meta for e in entries)
    text_actions = not labelled and not any(e.message.tool_result is not None for e in entries)
    out: list[int] = []
    task_seen = labelled
    for i, e in enumerate(entries):
        m = e.message
        if e.inserted is not None or m.meta.get("is_demo"):
            continue
        if m.tool_result is not None or m.meta.get("message_type") == "observation":
            out.append(i)
        elif m.role == "user" and (text_actions or not task_seen):
            out.append(i)
            task_seen = True
    return out


class RecomputedSweAgent(swe_agent.SweAgentRunner):
    def project(self, stored: list[Entry], tokens: int) -> Decision:
        masking = self.masking
        observations = observation_positions(stored)
        last_removed = max(0, (len(observations) // masking.polling) * masking.polling - masking.n)
        omit = set(observations[1:last_removed])
        positions = [i for i in observations if (i in omit and not swe_agent._tags(stored[i].message) &
                                                 masking.keep_tags) or swe_agent._tags(stored[i].message) &
                     masking.remove_tags]
        if not positions:
            return Decision()
        out = list(stored)
        for i in positions:
            out[i] = self.edited(stored[i], "masked", lambda m: with_text(m, swe_agent.elided_text(m)), mark="masked")
        return Decision(out, True, f"{plural(len(positions), 'observation')} elided")


class RecomputedEdit(inspect_ai.Edit):
    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        if tokens < self.threshold:
            return Decision()
        decision = self.compact(stored)
        entries = decision.entries
        if self.memory:
            base = entries if entries is not None else stored
            cleared = [self.edited(e, "memory", lambda m: with_result_text(m, inspect_ai.MEMORY_CLEARED),
                                   mark="placeholder") if inspect_ai._memory_to_clear(e) else e for e in base]
            if any(a is not b for a, b in zip(cleared, base, strict=True)):
                entries = cleared
                notes = [n for n in (decision.note, "memory tool content cleared") if n and "nothing" not in n]
                decision = replace(decision, note="; ".join(notes))
        return replace(decision, entries=entries, triggered=True, target=self.threshold)

    def compact(self, stored: list[Entry]) -> Decision:
        out = list(stored)
        thinking_cleared = 0
        if self.keep_thinking is not None:
            assistants = [i for i, e in enumerate(out) if e.message.role == "assistant"]
            for i in assistants[: max(len(assistants) - self.keep_thinking, 0)]:
                if out[i].message.reasoning:
                    out[i] = self.edited(out[i], "thinking", lambda m: replace(m, reasoning=()),
                                         mark="thinking-cleared")
                    thinking_cleared += 1
        calls = call_positions(out)
        uses = [i for i, e in enumerate(out) if e.message.tool_result is not None
                and e.message.tool_result.call_id in calls and e.message.tool_result.tool_name not in self.exclude]
        cleared = [i for i in uses[: max(len(uses) - self.keep_tool_uses, 0)]
                   if not out[i].message.meta.get("inspect_cleared")]
        removed: set[int] = set()
        for i in cleared:
            result = out[i].message.tool_result
            if self.keep_inputs:
                out[i] = self.edited(out[i], "removed", lambda m: with_result_text(
                    m, inspect_ai.TOOL_RESULT_REMOVED, inspect_cleared=True), mark="placeholder")
            else:
                removed.add(i)
                a = calls[result.call_id]
                out[a] = replace(out[a], message=inspect_ai._without_call(out[a].message, result.call_id),
                                 pruned=True, info={**out[a].info, "mark": "inputs-cleared"})
        out = [e for i, e in enumerate(out) if i not in removed]
        if not cleared and not thinking_cleared:
            return Decision(note="triggered; nothing to edit")
        return Decision(out, note=f"cleared {plural(len(cleared), 'tool use')}, thinking of "
                                  f"{plural(thinking_cleared, 'message')}")


def _swe(masking: bool, summary: bool):
    def build(params, ctx):
        return RecomputedSweAgent(params, ctx, swe_agent._masking(params) if masking else None,
                                  swe_agent._summary(params) if summary else None)
    return build


ORACLES = {
    "anthropic.clear_tool_uses_20250919": RecomputedClearToolUses,
    "anthropic.clear_thinking_20251015": RecomputedClearThinking,
    "langchain.context_editing": RecomputedContextEditing,
    "openhands.observation_masking": RecomputedObservationMasking,
    "openhands.recent_events": RecomputedRecentEvents,
    "swe_agent.last_n_observations": _swe(True, False),
    "swe_agent.hybrid": _swe(True, True),
    "inspect_ai.edit": RecomputedEdit,
}

#: parameter sets per strategy: defaults, and settings that make every rule fire on small logs
CASES: dict[str, list[dict[str, Any]]] = {
    "anthropic.clear_tool_uses_20250919": [
        {}, {"trigger_value": 300, "clear_tool_inputs": "true"}, {"trigger_value": 300, "keep": 0, "exclude_tools": "grep"},
        {"trigger_value": 400, "clear_at_least": 300, "keep": 1, "clear_tool_inputs": "read_file,bash"},
        {"trigger_type": "tool_uses", "trigger_value": 3, "keep": 2}],
    "anthropic.clear_thinking_20251015": [{}, {"keep": "0"}, {"keep": "3"}],
    "langchain.context_editing": [
        {}, {"trigger": 300, "clear_tool_inputs": True}, {"trigger": 300, "keep": 0, "exclude_tools": "grep"},
        {"trigger": 300, "clear_at_least": 200, "clear_tool_inputs": True},
        {"trigger": 200, "keep": 1, "clear_at_least": 1, "token_count_method": "model"}],
    "openhands.observation_masking": [{}, {"attention_window": 1}, {"attention_window": 12}],
    "openhands.recent_events": [{}, {"keep_first": 0, "max_events": 4}, {"keep_first": 3, "max_events": 3}],
    "swe_agent.last_n_observations": [{}, {"n": 1}, {"n": 2, "polling": 3}],
    "swe_agent.hybrid": [{"n": 2, "summarize_every_n_turns": 6, "keep_last_m_turns": 2}],
    "inspect_ai.edit": [
        {"threshold": 300}, {"threshold": 300, "keep_thinking_turns": "0", "keep_tool_uses": 0, "exclude_tools": "grep"},
        {"threshold": 500, "keep_tool_inputs": False}, {"threshold": 300, "keep_thinking_turns": "all", "memory": False}],
}


# ------------------------------------------------------------------------------------------------ driving
def fingerprint(entry: Entry) -> tuple:
    m = entry.message
    return (m.role, m.texts, m.tool_calls, m.tool_result, m.reasoning, m.images, m.files, m.name, dict(m.meta),
            entry.origin, entry.pruned, entry.excluded, entry.exclude_reason, entry.inserted, entry.represents,
            entry.info)


def drive(runner, conversation: Conversation) -> list[tuple]:
    """What the replay engine sees of ``runner`` over ``conversation``: each call's outcome and sent entries (or
    the error that stopped the run)."""
    calls: list[tuple] = []
    try:
        for i, message in enumerate(conversation.messages):
            if message.role == "assistant":
                o = runner.before_call()
                calls.append((o.tokens_before, o.tokens_sent, o.triggered, o.compacted, o.target, o.note,
                              o.model_calls, runner.measure(), [fingerprint(e) for e in runner.entries()]))
            runner.append(original(message, i))
    except Exception as exc:  # noqa: BLE001 - the oracle's own errors (e.g. id-less calls) must be the same
        calls.append(("error", type(exc).__name__))
    return calls


def counter_or_skip(spec: str):
    try:
        return make_counter(spec)
    except EncodingUnavailable as exc:
        pytest.skip(f"counter {spec} unavailable: {exc}")


def assert_same_as_recomputed(conversation: Conversation, name: str, params: dict[str, Any], counter: str,
                              context_window: int = 20_000) -> None:
    info = get_strategy(name)
    values = info.resolve_params(params)
    ctx = RunContext(counter_or_skip(counter), conversation.tools, context_window)
    incremental = drive(info.build(values, ctx), conversation)
    recomputed = drive(ORACLES[name](values, ctx), conversation)
    assert len(incremental) == len(recomputed)
    for k, (a, b) in enumerate(zip(incremental, recomputed, strict=True)):
        assert a == b, f"{name} {params} ({counter}): call {k} differs from the recomputation"


# ------------------------------------------------------------------------------------------------ logs
NAMES = ("read_file", "grep", "bash", "memory", "edit")


def awkward_log(seed: int, steps: int = 40, labelled: bool = False) -> Conversation:
    """A deterministic run with everything that makes incremental pairing hard."""
    rng = random.Random(seed)
    msgs: list[Message] = []
    if rng.random() < 0.7:
        msgs.append(system("You are an agent. " * rng.randint(1, 30)))
    msgs.append(user("Task: " + "fix it " * rng.randint(1, 50)))
    ids: list[str] = []
    late: list[str] = []
    for s in range(steps):
        if rng.random() < 0.08:
            meta = {"message_type": "observation"} if labelled and rng.random() < 0.5 else {}
            msgs.append(Message("user", ("follow-up " * rng.randint(1, 40),), meta=meta))
            continue
        calls = []
        for k in range(rng.choice((0, 1, 1, 1, 2, 3))):
            r = rng.random()
            call_id = (rng.choice(ids) if r < 0.12 and ids else None if r < 0.16 else
                       late.pop() if r < 0.22 and late else f"id{seed}_{s}_{k}")
            calls.append(ToolCall(call_id, rng.choice(NAMES), {"path": f"f{s}.py", "n": rng.randint(0, 9)}))
            if call_id:
                ids.append(call_id)
        reasoning = ("thinking " * rng.randint(1, 60),) if rng.random() < 0.5 else ()
        text = (f"step {s} " * rng.randint(0, 10),) if rng.random() < 0.8 else ()
        msgs.append(Message("assistant", text, tuple(calls), None, reasoning,
                            meta={"message_type": "action"} if labelled else {}))
        for c in calls:
            if rng.random() < 0.1:
                continue
            meta: dict[str, Any] = {"message_type": "observation"} if labelled else {}
            r = rng.random()
            meta.update({"tags": ["remove_output"]} if r < 0.08 else {"tags": ["keep_output"]} if r < 0.16 else
                        {"context_editing": {"cleared": True}} if r < 0.2 else {"is_demo": True} if r < 0.22 else
                        {"inspect_cleared": True} if r < 0.24 else {})
            body = "\n".join(f"out {i}" for i in range(rng.randint(0, 80)))
            msgs.append(Message("tool", tool_result=ToolResult(c, body, rng.random() < 0.1), meta=meta))
        if rng.random() < 0.06:
            late.append(f"late{seed}_{s}")
            msgs.append(tool(ToolCall(late[-1], "bash"), "early result " * rng.randint(1, 20)))
        if rng.random() < 0.04:
            msgs.append(tool(ToolCall(None, "grep"), "no id result " * rng.randint(1, 20)))
    msgs.append(assistant("Done."))
    return Conversation(tuple(msgs))


def real_and_sample_logs() -> list[tuple[str, Conversation]]:
    paths = sample_paths("*.json")
    if REAL_LOGS.is_dir():
        paths += sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.suffix != ".md")
    logs = []
    for path in paths:
        try:
            conversations = load_all_conversations(path)
        except LoadError:
            continue
        logs += [(f"{path.name}#{k}", c) for k, c in enumerate(conversations)]
    return logs


LOGS = real_and_sample_logs()
AWKWARD = [awkward_log(seed, labelled=seed % 3 == 0) for seed in range(6)]
STRATEGY_CASES = [(name, params) for name, cases in CASES.items() for params in cases]


def case_id(case: tuple[str, dict]) -> str:
    name, params = case
    return name.split(".", 1)[1] + ("" if not params else ":" + ",".join(f"{k}={v}" for k, v in params.items()))


# ------------------------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("case", STRATEGY_CASES, ids=case_id)
def test_same_as_recomputed_on_real_and_sample_logs(case):
    name, params = case
    assert LOGS
    for _, conversation in LOGS:
        assert_same_as_recomputed(conversation, name, params, "approx")


@pytest.mark.parametrize("counter", COUNTERS)
@pytest.mark.parametrize("case", STRATEGY_CASES, ids=case_id)
def test_same_as_recomputed_on_awkward_logs(case, counter):
    name, params = case
    for conversation in AWKWARD:
        assert_same_as_recomputed(conversation, name, params, counter)


@st.composite
def random_logs(draw) -> Conversation:
    """Short runs built from every kind of message the masking rules look at, ids drawn from a tiny pool so that
    they repeat, go missing and come before their calls."""
    messages: list[Message] = []
    for _ in range(draw(st.integers(0, 2))):
        messages.append(system("system " * draw(st.integers(0, 20))))
    pool = st.sampled_from(["a", "b", "c", "d", None])
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "tool", "tool"]))
        size = draw(st.integers(0, 60))
        meta = draw(st.sampled_from([{}, {}, {"tags": ["remove_output"]}, {"tags": ["keep_output"]},
                                     {"message_type": "observation"}, {"context_editing": {"cleared": True}},
                                     {"inspect_cleared": True}, {"is_demo": True}]))
        if kind == "user":
            messages.append(Message("user", ("u " * size,), meta=meta))
        elif kind == "assistant":
            calls = tuple(ToolCall(draw(pool), draw(st.sampled_from(NAMES)), {"n": k})
                          for k in range(draw(st.integers(0, 3))))
            reasoning = ("r " * size,) if draw(st.booleans()) else ()
            messages.append(Message("assistant", ("a " * size,) if draw(st.booleans()) else (), calls, None,
                                    reasoning))
        else:
            origin = ToolCall(draw(pool), draw(st.sampled_from(NAMES)))
            messages.append(Message("tool", tool_result=ToolResult(origin, "line\n" * size), meta=meta))
    messages.append(assistant("Done."))
    return Conversation(tuple(messages))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversation=random_logs(), case=st.sampled_from(STRATEGY_CASES), counter=st.sampled_from(COUNTERS))
def test_same_as_recomputed_on_random_logs(conversation, case, counter):
    name, params = case
    assert_same_as_recomputed(conversation, name, {**params, **EAGER.get(name, {})}, counter, context_window=50)


#: triggers low enough for random logs of a few hundred tokens (Inspect's threshold 1.0: the whole 50-token window)
EAGER: dict[str, dict[str, Any]] = {
    "anthropic.clear_tool_uses_20250919": {"trigger_type": "input_tokens", "trigger_value": 1},
    "langchain.context_editing": {"trigger": 0},
    "inspect_ai.edit": {"threshold": 1.0},
}


@settings(max_examples=80, deadline=None)
@given(data=st.data(), counter=st.sampled_from(COUNTERS))
def test_masked_view_matches_its_list_recounted(data, counter):
    """Appends, replacements, omissions and restorations in any order: the view is always the stored history with
    its replacements, minus what is left out, and its count is the counter's count of that list."""
    count = counter_or_skip(counter)
    stored: list[Entry] = []
    view = MaskedView(stored, count, ())
    replaced: dict[int, Entry] = {}
    omitted: set[int] = set()
    for _ in range(data.draw(st.integers(1, 40))):
        op = data.draw(st.sampled_from(["append", "append", "replace", "restore", "omit", "include", "read"]))
        if op == "append" or not stored:
            stored.append(original(user("x " * data.draw(st.integers(0, 30))), len(stored)))
            continue
        position = data.draw(st.integers(0, len(stored) - 1))
        if op == "replace":
            replaced[position] = replace(stored[position], message=user("y " * data.draw(st.integers(0, 30))))
            view.replace(position, replaced[position])
        elif op == "restore":
            replaced.pop(position, None)
            view.replace(position, stored[position])
        elif op == "omit":
            omitted.add(position)
            view.omit(position)
        elif op == "include":
            omitted.discard(position)
            view.include(position)
        else:
            expected = [replaced.get(i, e) for i, e in enumerate(stored) if i not in omitted]
            assert view.sent() == expected
            assert view.value() == count.count([e.message for e in expected])
            assert view.omitted == len(omitted)
    expected = [replaced.get(i, e) for i, e in enumerate(stored) if i not in omitted]
    assert view.sent() == expected and view.value() == count.count([e.message for e in expected])


@pytest.mark.parametrize("counter", ("approx", "langchain"))
def test_middleware_messages_count_the_history_without_its_system_prompt(counter):
    """LangChain's running count of the middleware's messages is the recount of the stored history minus its
    leading system messages, at every length, and starts again over a new list."""
    count = make_counter(counter)
    state = langchain.MiddlewareMessages(count)
    for conversation in [*AWKWARD, *(c for _, c in LOGS)]:
        stored: list[Entry] = []
        for i, message in enumerate(conversation.messages):
            stored.append(original(message, i))
            if i % 3 == 0 or i == len(conversation.messages) - 1:
                state.follow(stored)
                head = leading_system(stored)
                assert state.head == head
                assert state.view.value() == count.count([e.message for e in stored[head:]])
