"""vercel_ai.prune_messages: one test per rule of agents.md §1.12 (the ``ai`` package's ``pruneMessages`` in
``prepareStep``), on small hand-made runs."""

from __future__ import annotations

import math
import re

import pytest

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import original
from compaction.strategies.vercel_ai import ModelMessage
from compaction.strategies.vercel_ai import js_json
from compaction.strategies.vercel_ai import js_length
from compaction.strategies.vercel_ai import model_messages
from compaction.strategies.vercel_ai import parse_tool_calls
from compaction.strategies.vercel_ai import prune_messages
from compaction.strategies.vercel_ai import to_json
from compaction.strategies.vercel_ai import tool_calls_option

NAME = "vercel_ai.prune_messages"


def call(i: int, name: str = "read_file") -> ToolCall:
    return ToolCall(f"c{i}", name, {"path": f"f{i}.py"})


def think(text: str, calls=(), texts=()) -> Message:
    return Message("assistant", texts=tuple(texts), tool_calls=tuple(calls), reasoning=(text,))


def run(messages: list[Message], params: dict | None = None) -> compaction.Replay:
    return compaction.replay(Conversation(tuple(messages)), NAME, params or {})


def sent(r: compaction.Replay, k: int) -> list[Message]:
    return [item.message for item in r.context_at(k)]


def shape(messages: list[Message]) -> list[tuple]:
    """(role, reasoning, texts, call ids, result id) of each message."""
    return [(m.role, m.reasoning, m.texts, tuple(c.id for c in m.tool_calls),
             m.tool_result.call_id if m.tool_result else None) for m in messages]


def steps_run(n: int, names=("read_file",)) -> list[Message]:
    """system, task, then n steps each: reasoning + one tool call, its result; then a final answer."""
    out = [system("You are a coding agent."), user("Fix the parser.")]
    for i in range(n):
        c = call(i, names[i % len(names)])
        out += [think(f"thinking {i}", [c]), tool(c, f"contents of f{i}.py\n" * 5)]
    return out + [assistant("Done.")]


def final_context(r: compaction.Replay) -> list[Message]:
    return sent(r, len(r.steps) - 1)


# ------------------------------------------------------------------------------------------------ defaults
def test_defaults_are_the_packages_and_only_drop_empty_messages():
    info = compaction.strategies()[NAME]
    assert info.defaults() == {"reasoning": "none", "tool_calls": "none", "empty_messages": "remove",
                               "compact_after_tokens": 0}
    assert info.policy == "none"
    r = run(steps_run(4))
    assert r.summary()["compactions"] == 0
    empty = [system("s"), user("task"), assistant(None), user("again"), assistant("ok")]
    r = run(empty)
    assert shape(final_context(r)) == shape([empty[0], empty[1], empty[3]])


# ------------------------------------------------------------------------------------------------ reasoning
def test_reasoning_all_removes_every_reasoning_part_and_keeps_the_rest():
    msgs = [user("q"), think("why", texts=["answer"]), user("more"), think("because", texts=["second"])]
    r = run(msgs + [assistant("end")], {"reasoning": "all"})
    out = final_context(r)
    assert [m.reasoning for m in out] == [(), (), (), ()]
    assert [m.texts for m in out] == [("q",), ("answer",), ("more",), ("second",)]


def test_reasoning_before_last_message_keeps_the_last_messages_reasoning():
    msgs = model_messages([original(m, i) for i, m in enumerate(
        [user("q"), think("a", texts=["x"]), think("b", texts=["y"])])])
    out = prune_messages(msgs, reasoning="before-last-message")
    assert [[p.type for p in m.parts] for m in out[1:]] == [["text"], ["reasoning", "text"]]
    # the last message of a replayed call's list is a user or tool message, so every assistant loses it
    r = run([user("q"), think("a", texts=["x"]), user("go on"), assistant("y")], {"reasoning": "before-last-message"})
    assert sent(r, 1)[1].reasoning == ()


# ------------------------------------------------------------------------------------------------ tool calls
def test_before_last_n_messages_keeps_the_last_n_and_their_pairs_by_id():
    r = run(steps_run(4), {"tool_calls": "before-last-2-messages"})
    out = final_context(r)
    # the last two messages are step 3's call and its result; every older call and result is gone, and the
    # assistant messages left with only reasoning lose it with their calls and vanish
    assert shape(out) == [("system", (), ("You are a coding agent.",), (), None), ("user", (), ("Fix the parser.",), (), None),
                          ("assistant", ("thinking 3",), (), ("c3",), None), ("tool", (), (), (), "c3")]


def test_a_protected_result_keeps_its_call_even_outside_the_window():
    c0, c1 = call(0), call(1)
    msgs = [user("task"), assistant("two reads", [c0]), tool(c0, "zero"), assistant(None, [c1]),
            user("(interjection)"), tool(c1, "one"), assistant("end")]
    r = run(msgs, {"tool_calls": "before-last-message"})
    out = final_context(r)
    # the last message is c1's result: its call survives three messages back; c0's pair goes
    assert shape(out) == [("user", (), ("task",), (), None), ("assistant", (), ("two reads",), (), None),
                          ("assistant", (), (), ("c1",), None), ("user", (), ("(interjection)",), (), None),
                          ("tool", (), (), (), "c1")]


@pytest.mark.parametrize("option", ["all", "before-last-0-messages"])
def test_all_and_last_zero_remove_every_tool_part(option):
    out = final_context(run(steps_run(3), {"tool_calls": option}))
    assert not any(m.tool_calls or m.tool_result for m in out)
    assert [m.role for m in out] == ["system", "user"]


def test_the_results_of_one_step_are_one_tool_message():
    c0, c1, c2 = call(0), call(1), call(2)
    msgs = [user("task"), assistant(None, [c0, c1]), tool(c0, "a"), tool(c1, "b"), assistant(None, [c2]),
            tool(c2, "c"), assistant("end")]
    groups = model_messages([original(m, i) for i, m in enumerate(msgs[:-1])])
    assert [(g.role, len(g.parts)) for g in groups] == [("user", 0), ("assistant", 2), ("tool", 2), ("assistant", 1),
                                                        ("tool", 1)]
    assert groups[0].text == "task" and groups[2].entries == (2, 3)
    # before-last-3-messages counts that tool message once: the first step's results are still protected
    out = final_context(run(msgs, {"tool_calls": "before-last-3-messages"}))
    assert [m.tool_result.call_id for m in out if m.tool_result] == ["c0", "c1", "c2"]
    out = final_context(run(msgs, {"tool_calls": "before-last-2-messages"}))
    assert [m.tool_result.call_id for m in out if m.tool_result] == ["c2"]


def test_per_tool_rules_remove_only_the_listed_tools():
    option = '[{"type": "all", "tools": ["grep"]}]'
    out = final_context(run(steps_run(4, ("read_file", "grep")), {"tool_calls": option}))
    assert [c.name for m in out for c in m.tool_calls] == ["read_file", "read_file"]
    assert [m.tool_result.tool_name for m in out if m.tool_result] == ["read_file", "read_file"]


def test_rules_apply_one_after_the_other():
    option = ('[{"type": "before-last-2-messages", "tools": ["grep"]}, '
              '{"type": "before-last-6-messages", "tools": ["read_file"]}]')
    msgs = steps_run(6, ("read_file", "grep"))[:-1]
    entries = [original(m, i) for i, m in enumerate(msgs)]
    out = prune_messages(model_messages(entries), rules=parse_tool_calls(option))
    # grep (steps 1, 3, 5) kept only in the last two messages; read_file (0, 2, 4) in the last six, which still
    # counts the messages the first rule emptied (they are removed at the end)
    assert [p.tool_call_id for m in out for p in m.parts if p.type == "tool-call"] == ["c4", "c5"]


def test_what_a_step_removed_is_gone_for_the_next_one():
    """prepareStep's result persists: messages emptied at an earlier step are no longer counted by the last-N
    windows of later steps, so with two rules the persistent list keeps more than one prune of the whole history
    would (the package, driven both ways, agrees: tests/test_vercel_ai_differential.py)."""
    option = ('[{"type": "before-last-2-messages", "tools": ["grep"]}, '
              '{"type": "before-last-6-messages", "tools": ["read_file"]}]')
    out = final_context(run(steps_run(6, ("read_file", "grep")), {"tool_calls": option}))
    assert [c.id for m in out for c in m.tool_calls] == ["c2", "c4", "c5"]


def test_reasoning_goes_with_the_parts_it_led_to_unless_a_text_follows():
    c0, c1 = call(0), call(1)
    msgs = [user("task"), think("plan a", [c0]), tool(c0, "a"), think("plan b", [c1], texts=["reading b"]),
            tool(c1, "b"), user("thanks"), assistant("end")]
    out = final_context(run(msgs, {"tool_calls": "all"}))
    assert shape(out) == [("user", (), ("task",), (), None), ("assistant", ("plan b",), ("reading b",), (), None),
                          ("user", (), ("thanks",), (), None)]


def test_empty_messages_keep_sends_them_with_no_content():
    out = final_context(run(steps_run(3), {"tool_calls": "all", "empty_messages": "keep"}))
    assert [m.role for m in out] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    for m in out[2:]:
        assert not (m.texts or m.tool_calls or m.tool_result or m.reasoning)
    assert to_json(model_messages([original(m, i) for i, m in enumerate(out)]),
                   [original(m, i) for i, m in enumerate(out)])[2:4] == [
        {"role": "assistant", "content": []}, {"role": "tool", "content": []}]


def test_fates_follow_the_parts():
    r = run(steps_run(3), {"tool_calls": "before-last-2-messages"})
    fates = {item.index: item.fate for item in r.context_at(len(r.steps) - 1, include_removed=True)}
    # steps 0 and 1 (messages 2-5) are gone; nothing is rewritten in place
    assert [fates[i] for i in (2, 3, 4, 5)] == ["dropped"] * 4
    texts = [user("q"), think("r", [call(0)], texts=["t"]), tool(call(0), "x"), user("next"), assistant("end")]
    r = run(texts, {"tool_calls": "all"})
    fates = {item.index: item.fate for item in r.context_at(len(r.steps) - 1, include_removed=True)}
    assert fates[1] == "pruned" and fates[2] == "dropped"


# ------------------------------------------------------------------------------------------------ when, and persistence
def test_pruned_before_every_step_by_default():
    r = run(steps_run(5), {"tool_calls": "before-last-2-messages"})
    assert [s.compacted for s in r.steps] == [False, False, True, True, True, True]
    assert all(not s.triggered for s in r.steps[:2])


def test_compact_after_tokens_prunes_when_the_json_estimate_passes_it_and_the_result_persists():
    msgs = steps_run(6)
    conv = Conversation(tuple(msgs))
    per_step = math.ceil(js_length(js_json(to_json(model_messages([original(m, i) for i, m in enumerate(msgs[:8])]),
                                         [original(m, i) for i, m in enumerate(msgs[:8])]))) / 4)
    r = compaction.replay(conv, NAME, {"tool_calls": "before-last-2-messages", "compact_after_tokens": per_step})
    fired = [s.step for s in r.steps if s.compacted]
    assert fired and fired[0] == 4
    # after the prune the list is below the threshold again: the next step is not pruned, and what the prune
    # removed stays removed (the loop continues from the returned list)
    assert not r.steps[fired[0] + 1].triggered
    gone = {m.tool_result.call_id for m in sent(r, fired[0]) if m.tool_result}
    later = {m.tool_result.call_id for m in sent(r, fired[0] + 1) if m.tool_result}
    assert "c0" not in gone and "c0" not in later and "c3" in later and "c4" in later


def test_estimate_is_the_json_text_length_over_four():
    messages = [user("héllo 😀"), assistant("x", [ToolCall("c1", "f", {"n": 1.0, "big": 1e21})])]
    entries = [original(m, i) for i, m in enumerate(messages)]
    text = js_json(to_json(model_messages(entries), entries))
    assert text == ('[{"role":"user","content":"héllo 😀"},{"role":"assistant","content":[{"type":"text","text":"x"},'
                    '{"type":"tool-call","toolCallId":"c1","toolName":"f","input":{"n":1,"big":1e+21}}]}]')
    assert js_length(text) == len(text) + 1  # the emoji is two UTF-16 units


# ------------------------------------------------------------------------------------------------ the option strings
@pytest.mark.parametrize("value, rules", [
    ("none", ()), ("[]", ()), ("all", '[{"type": "all"}]'), ("before-last-message", '[{"type": "before-last-message"}]'),
    ("before-last-12-messages", '[{"type": "before-last-12-messages"}]'),
])
def test_tool_calls_strings_are_rules(value, rules):
    parsed = parse_tool_calls(value)
    assert parsed == (parse_tool_calls(rules) if isinstance(rules, str) else rules)
    assert tool_calls_option(parsed) == (value if value != "[]" else "none")


@pytest.mark.parametrize("value, message", [
    ("before-last-two-messages", "before-last-N-messages"),
    ("before-last--1-messages", "before-last-N-messages"),
    ("[{\"type\": \"all\"", "must be JSON"),
    ("[" + "9" * 5000 + "]", "could not be read"),
    ('[{"tools": ["x"]}]', "tool_calls[0]"),
    ('[{"type": "all", "tools": "x"}]', "tool_calls[0].tools"),
    ('[{"type": "all", "tool": ["x"]}]', "unknown key"),
    ('{"type": "all"}', "before-last-N-messages"),
])
def test_bad_tool_calls_are_named(value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        run(steps_run(1), {"tool_calls": value})
    with pytest.raises(ValueError, match="expected an option string or a list"):
        parse_tool_calls(42)


def test_a_model_message_keeps_its_entries():
    msgs = [user("a"), tool(call(0), "r0"), tool(call(1), "r1")]
    groups = model_messages([original(m, i) for i, m in enumerate(msgs)])
    assert groups == [ModelMessage("user", text="a", entries=(0,)), groups[1]]
    assert groups[1].entries == (1, 2)
