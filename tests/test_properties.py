"""Properties of the replay engine under both registered strategies, on random conversations (random result sizes,
parallel calls, unanswered calls, several user turns) and random windows and thresholds:

- the input conversation is never mutated;
- compaction never separates a tool call from its result: a result is only sent with its call, and a call whose result
  the log already holds is only sent with that result (a call never answered is left as it was, nothing invented);
- compaction never makes a call bigger: Haystack pruning sends at most what it measured; for Agent Framework .NET the
  tokens sent are exactly the tokens before, minus each collapsed group, plus its digest (a .NET digest repeats every
  result under a header, so it can outweigh a group with short ids — the real library does that too);
- replays are deterministic: two runs give equal ``to_json()``.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck
from hypothesis import event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.tokens import make_counter

WORDS = ("def", "return", "self", "assert", "import", "pytest", "error:", "OK", "src/app.py", "42", "None", "→", "日本")


@st.composite
def texts(draw, max_size: int) -> str:
    """Text of a random length built from code-ish words (cheap to generate, varied enough for counting)."""
    size = draw(st.integers(0, max_size))
    seed = draw(st.integers(0, len(WORDS) - 1))
    words = [WORDS[(seed + i * 7) % len(WORDS)] for i in range(size // 5 + 1)]
    return " ".join(words)[:size]


@st.composite
def conversations(draw) -> Conversation:
    """A coding-agent run: optional system prompt, 1–4 user turns, each with 0–5 steps of 0–3 parallel calls."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(system("You are a coding agent. " + draw(texts(200))))
    call_number = 0
    for turn in range(draw(st.integers(1, 4))):
        messages.append(user(f"Task {turn}: " + draw(texts(300))))
        for _ in range(draw(st.integers(0, 5))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                call_number += 1
                call_id = f"call_{call_number:03d}" if draw(st.booleans()) else f"c{call_number}"
                calls.append(ToolCall(call_id, draw(st.sampled_from(["read_file", "grep", "run_tests", "edit"])),
                                      {"path": f"src/m{call_number}.py"} if draw(st.booleans()) else {}))
            text = draw(st.one_of(st.none(), texts(200)))
            messages.append(assistant(text if text or not calls else None, calls))
            answered = [c for c in calls if draw(st.integers(0, 9)) > 0]  # about one call in ten stays unanswered
            for c in draw(st.permutations(answered)):
                messages.append(tool(c, draw(texts(3000)), error=draw(st.integers(0, 9)) == 0))
        messages.append(assistant(draw(texts(400)) or "Done."))
    return Conversation(tuple(messages))


@st.composite
def windows(draw, peak: int) -> dict[str, Any]:
    """A window around the run's uncompacted peak, so that compaction happens often but not always."""
    compact_at = draw(st.sampled_from([0.5, 0.6, 0.7, 0.8, 0.9, 1.0]))
    compact_to = round(compact_at * draw(st.sampled_from([0.2, 0.4, 0.6, 0.8])), 3)
    return {
        "context_window": max(1, int(peak * draw(st.sampled_from([0.25, 0.4, 0.6, 0.8, 1.2])))),
        "compact_at": compact_at,
        "compact_to": compact_to,
    }


def frozen_state(conversation: Conversation) -> Any:
    """Everything a strategy could mutate in place (meta and argument dicts included), deep-copied."""
    return [(m, copy.deepcopy((m.texts, [dict(c.arguments) for c in m.tool_calls], m.tool_result, dict(m.meta))))
            for m in conversation.messages]


def assert_unchanged(conversation: Conversation, before: Any) -> None:
    after = frozen_state(conversation)
    assert [m for m, _ in after] == [m for m, _ in before]  # the very same objects, in order
    assert [state for _, state in after] == [state for _, state in before]


def assert_calls_and_results_stay_together(rep: compaction.Replay) -> None:
    messages = rep.conversation.messages
    for step in rep.steps:
        answered_before = {m.tool_result.call_id for m in messages[: step.message_index] if m.tool_result is not None}
        items = rep.context_at(step.step)
        sent_calls = {c.id for item in items for c in item.message.tool_calls}
        sent_results = {item.message.tool_result.call_id for item in items if item.message.tool_result is not None}
        assert sent_results <= sent_calls, f"call {step.step}: a result was sent without its call"
        assert sent_calls & answered_before <= sent_results, f"call {step.step}: a call was sent without its result"
        for item in items:
            if item.fate == "kept":
                assert item.message.same_content(item.original)
            elif item.fate == "pruned":
                assert item.message.tool_result is not None and item.original.tool_result is not None
                assert item.message.tool_result.origin == item.original.tool_result.origin


def assert_deterministic(conversation: Conversation, strategy: str, params: dict, **setup: Any) -> compaction.Replay:
    first = compaction.replay(conversation, strategy, params, **setup)
    second = compaction.replay(conversation, strategy, params, **setup)
    assert first.to_json() == second.to_json()
    assert [[i.to_json() for i in first.context_at(k)] for k in range(len(first.steps))] == [
        [i.to_json() for i in second.context_at(k)] for k in range(len(second.steps))
    ]
    return first


def peak_tokens(conversation: Conversation, counter: str) -> int:
    baseline = compaction.replay(conversation, "haystack.tool_result_pruning", context_window=10**12, counter=counter)
    return max([s.tokens_before for s in baseline.steps], default=1) or 1


PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                             derandomize=True)


@PROPERTY_SETTINGS
@given(data=st.data(), conversation=conversations())
def test_haystack_tool_result_pruning_properties(data: st.DataObject, conversation: Conversation):
    counter = data.draw(st.sampled_from(["approx", "approx:3.3"]))
    setup = data.draw(windows(peak_tokens(conversation, counter)))
    params = {"min_keep_steps": data.draw(st.integers(1, 3)), "min_tokens": data.draw(st.sampled_from([0, 20, 200]))}
    before = frozen_state(conversation)
    rep = assert_deterministic(conversation, "haystack.tool_result_pruning", params, counter=counter, **setup)
    assert_unchanged(conversation, before)
    assert_calls_and_results_stay_together(rep)
    event(f"compactions: {min(sum(s.compacted for s in rep.steps), 3)}+")
    for step in rep.steps:
        assert step.tokens_sent <= step.tokens_before
        if step.compacted:
            assert step.tokens_sent < step.tokens_before
        else:
            assert step.tokens_sent == step.tokens_before


@PROPERTY_SETTINGS
@given(data=st.data(), conversation=conversations())
def test_agent_framework_tool_result_compaction_properties(data: st.DataObject, conversation: Conversation):
    counter_spec = data.draw(st.sampled_from(["maf-dotnet", "approx"]))
    setup = data.draw(windows(peak_tokens(conversation, counter_spec)))
    trigger = data.draw(st.sampled_from(["", "MessagesExceed(6)", "Any(GroupsExceed(5), HasToolCalls())"]))
    params = {"trigger": trigger, "minimum_preserved_groups": data.draw(st.sampled_from([0, 1, 2, 4, 16]))}
    before = frozen_state(conversation)
    rep = assert_deterministic(conversation, "agent_framework.tool_result_compaction", params, counter=counter_spec,
                               **setup)
    assert_unchanged(conversation, before)
    assert_calls_and_results_stay_together(rep)
    counter = make_counter(counter_spec)
    messages = conversation.messages
    digests_before: set[tuple[int, ...]] = set()
    event(f"compactions: {min(sum(s.compacted for s in rep.steps), 3)}+")
    for step in rep.steps:
        digests = {item.represents: item.message for item in rep.context_at(step.step) if item.fate == "inserted"}
        new = {covered: digest for covered, digest in digests.items() if covered not in digests_before}
        assert bool(new) == step.compacted
        change = sum(counter.count([d]) - counter.count([messages[i] for i in covered]) for covered, d in new.items())
        assert step.tokens_sent == step.tokens_before + change
        if all(counter.count([d]) <= counter.count([messages[i] for i in c]) for c, d in new.items()):
            assert step.tokens_sent <= step.tokens_before
        elif step.tokens_sent > step.tokens_before:
            event("a digest outweighed what it replaced")
        assert len(rep.context_at(step.step)) <= len([m for m in messages[: step.message_index]])
        digests_before = set(digests)
