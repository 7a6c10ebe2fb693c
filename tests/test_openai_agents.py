"""openai_agents.session_limit: one test per rule of agents.md §1.9 as openai-agents 0.24.0 releases it, and a
differential test driving the SDK's own session input preparation (a real ``SQLiteSession``,
``prepare_input_with_session``, ``prepare_model_input_items``) call by call over every real log and the samples
(skipped when openai-agents is not installed)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import sample_paths
from corpus import real_conversations

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.replay import hidden_from_agent
from compaction.strategies.history_runner import leading_system
from compaction.strategies.openai_agents import Item
from compaction.strategies.openai_agents import deduplicate
from compaction.strategies.openai_agents import drop_orphans
from compaction.strategies.openai_agents import item_json
from compaction.strategies.openai_agents import items_of

NAME = "openai_agents.session_limit"


def call(i: int) -> ToolCall:
    return ToolCall(f"c{i}", "lookup", {"q": i})


def turn(t: int, steps: int = 1, text: bool = False) -> list[Message]:
    out = [user(f"question {t}")]
    for s in range(steps):
        c = call(t * 10 + s)
        out += [assistant("looking" if text else None, [c]), tool(c, f"result {t}.{s}")]
    return out + [assistant(f"answer {t}")]


def conversation(*turns: list[Message]) -> Conversation:
    return Conversation((system("Be brief."), *[m for t in turns for m in t]))


def run(conv: Conversation, limit: Any) -> compaction.Replay:
    return compaction.replay(conv, NAME, {"limit": limit})


def items_sent(r: compaction.Replay, k: int) -> list[str]:
    """What call k sends, as item kinds with their text or call id (instructions left out)."""
    out = []
    messages = [item.message for item in r.context_at(k)]
    for p, m in enumerate(messages[leading_system([_e(m) for m in messages]):]):
        for i in items_of(m, p):
            out.append(f"{i.kind}:{i.call_id or m.text}" if i.kind != "message" else f"{m.role}:{m.text}")
    return out


def _e(m: Message):
    from compaction.history import original

    return original(m, 0)


# ------------------------------------------------------------------------------------------------ the rules
def test_default_is_the_sdks_none_everything():
    info = compaction.strategies()[NAME]
    assert info.defaults() == {"limit": "all"} and info.policy == "none"
    r = run(conversation(turn(0), turn(1), turn(2)), "all")
    assert r.summary()["compactions"] == 0
    assert run(conversation(turn(0), turn(1), turn(2)), 50).summary()["compactions"] == 0  # more than there are


def test_the_limit_applies_when_a_run_starts_and_counts_items():
    conv = conversation(turn(0, text=True), turn(1, text=True))
    r = run(conv, 3)
    # the first run's five items were: question, "looking" + its call (two items), output, answer; the second run
    # loads the last three: the call, its output, the answer
    assert items_sent(r, 2) == ["function_call:c0", "function_call_output:c0", "assistant:answer 0",
                                "user:question 1"]


def test_within_a_run_every_generated_item_is_sent():
    conv = conversation(turn(0), turn(1, steps=6))
    r = run(conv, 1)
    last = items_sent(r, len(r.steps) - 1)
    assert last[:2] == ["assistant:answer 0", "user:question 1"]
    assert sum(x.startswith("function_call:") for x in last) == 6


def test_an_output_whose_call_the_limit_cut_is_dropped():
    conv = conversation(turn(0, steps=2), turn(1))
    r = run(conv, 3)
    # run 0's items: question, call c0, its output, call c1, its output, the answer; the last three are whole,
    # the last two leave c1's output without its call
    assert items_sent(r, 3)[:3] == ["function_call:c1", "function_call_output:c1", "assistant:answer 0"]
    r = run(conv, 2)
    assert items_sent(r, 3)[:2] == ["assistant:answer 0", "user:question 1"]
    assert "1 orphaned or repeated item dropped" in r.steps[3].note


def test_a_call_without_output_is_dropped_with_its_reasoning():
    c = call(99)
    conv = conversation([user("go"), Message("assistant", tool_calls=(c,), reasoning=("plan",)), assistant("stop")],
                        turn(1))
    r = run(conv, "all")
    assert items_sent(r, 2) == ["user:go", "assistant:stop", "user:question 1"]
    fates = {i.index: i.fate for i in r.context_at(2, include_removed=True)}
    assert fates[2] == "dropped"


def test_limit_zero_loads_no_history():
    r = run(conversation(turn(0), turn(1)), 0)
    assert items_sent(r, 2) == ["user:question 1"]


def test_a_partly_loaded_assistant_message_is_pruned_to_what_is_sent():
    conv = conversation(turn(0, text=True), turn(1))
    r = run(conv, 3)
    item = next(i for i in r.context_at(2) if i.index == 2)
    assert item.fate == "pruned" and item.message.texts == () and item.message.tool_calls == (call(0),)


def test_repeated_call_ids_are_kept_once():
    a, b = ToolCall("dup", "f", {"v": 1}), ToolCall("dup", "f", {"v": 2})
    items = [Item("function_call", 0, a), Item("function_call_output", 1, a), Item("function_call", 2, b),
             Item("function_call_output", 3, b)]
    out = deduplicate(items)
    assert [(i.kind, i.position, i.call) for i in out] == [("function_call", 0, b), ("function_call_output", 3, b)]


def test_orphans_only_among_the_history():
    a = call(1)
    items = [Item("function_call_output", 0, a), Item("message", 1), Item("function_call", 2, call(2))]
    assert drop_orphans(items, history=1, outputs_too=True) == items[1:]
    assert drop_orphans(items, history=1, outputs_too=False) == items
    assert drop_orphans(items) == items[:2]


@pytest.mark.parametrize("value", ["-1", "some", "1.5x"])
def test_bad_limit_is_named(value):
    with pytest.raises(ValueError, match="limit"):
        run(conversation(turn(0)), value)


def test_the_export_sets_the_session_limit():
    pytest.importorskip("agents")
    from agents import RunConfig
    from agents import SessionSettings

    from compaction.export import export_setup

    (snippet,) = export_setup(NAME, {"limit": 25})
    code = "\n".join(line for line in snippet.code.split("result = await")[0].splitlines() if "← fill in" not in line)
    namespace: dict[str, Any] = {}
    exec(compile(code, "<snippet>", "exec"), namespace)  # our own generated code
    config = namespace["run_config"]
    assert isinstance(config, RunConfig) and config.session_settings == SessionSettings(limit=25)


# ------------------------------------------------------------------------------------------------ differential
def conversations() -> list[tuple[str, Conversation]]:
    return [*real_conversations(), *((p.name, compaction.load(p)) for p in sample_paths("*.openai.json"))]


def to_items(messages: list[Message]) -> list[dict]:
    return [item_json(i, m) for p, m in enumerate(messages) for i in items_of(m, p)]


async def drive_sdk(conv: Conversation, limit: int | None) -> list[list[dict]]:
    """What the SDK sends at each call: each run starts with ``prepare_input_with_session`` over a real SQLite
    session holding the earlier runs' items; each call sends that plus the run's generated items
    (``prepare_model_input_items``); a run's input and generated items are saved when it ends."""
    from agents import SessionSettings
    from agents import SQLiteSession
    from agents.run_internal.items import prepare_model_input_items
    from agents.run_internal.session_persistence import prepare_input_with_session

    session = SQLiteSession("replay")
    skipped = hidden_from_agent(conv) | conv.log_summary_indices
    shown = [conv.messages[i] for i in range(len(conv.messages)) if i not in skipped]
    calls = {id(conv.messages[i]) for i in conv.llm_call_indices}
    instructions = 0
    while instructions < len(shown) and shown[instructions].role == "system":
        instructions += 1
    sent: list[list[dict]] = []
    run_input: list[dict] = []
    generated: list[dict] = []
    prepared: list[Any] = []
    pending: list[Message] = []
    in_run = False
    for m in shown[instructions:]:
        if id(m) in calls:
            new_turn = next((k for k, x in enumerate(pending) if x.role == "user" and x.tool_result is None), None)
            if new_turn is not None or not in_run:
                split = new_turn if new_turn is not None else 0
                if in_run:
                    await session.add_items(run_input + generated + to_items(pending[:split]))
                else:  # what the log holds before its first run is the session's history
                    await session.add_items(to_items(pending[:split]))
                head = pending[split:]
                first_generated = next((k for k, x in enumerate(head) if x.role not in ("user", "system")
                                        or x.tool_result is not None), len(head))
                run_input, generated = to_items(head[:first_generated]), to_items(head[first_generated:])
                prepared, _ = await prepare_input_with_session(run_input, session, None,
                                                               SessionSettings(limit=limit))
                in_run = True
            else:
                generated += to_items(pending)
            pending = []
            sent.append([dict(i) for i in prepare_model_input_items(prepared, generated)])
        pending.append(m)
    return sent


@pytest.mark.parametrize("limit", [None, 0, 1, 2, 5, 12, 40])
def test_the_sdk_and_our_replay_send_the_same_items_at_every_call(limit):
    pytest.importorskip("agents")
    changed = 0
    for name, conv in conversations():
        ours = compaction.replay(conv, NAME, {"limit": "all" if limit is None else limit})
        theirs = asyncio.run(drive_sdk(conv, limit))
        assert len(ours.steps) == len(theirs), name
        for step, expected in zip(ours.steps, theirs):
            messages = [item.message for item in ours.context_at(step.step)]
            got = to_items(messages[leading_system([_e(m) for m in messages]):])
            assert got == expected, f"{name}: call {step.step} (message {step.message_index})"
            changed += step.compacted
    assert limit is None or changed > 0
