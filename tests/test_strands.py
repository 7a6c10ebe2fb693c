"""strands.sliding_window: one test per rule of agents.md §1.20 as strands-agents 1.62.0 releases it, and a
differential test driving the installed ``SlidingWindowConversationManager`` call by call over every real log and
the samples (skipped when strands-agents is not installed)."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import sample_paths
from corpus import real_conversations

import compaction
from compaction.conversation import Conversation
from compaction.conversation import File
from compaction.conversation import Image
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.replay import hidden_from_agent
from compaction.strategies.strands import parse_per_turn
from compaction.strategies.strands import truncated_text

NAME = "strands.sliding_window"


def call(i: int) -> ToolCall:
    return ToolCall(f"t{i}", "read_file", {"path": f"f{i}"})


def turns(n: int, steps: int = 1, size: int = 50) -> list[Message]:
    """n user turns, each: the question, ``steps`` tool steps, and an answer."""
    out = [system("You are helpful.")]
    for t in range(n):
        out.append(user(f"question {t}"))
        for s in range(steps):
            c = call(t * 100 + s)
            out += [assistant(None, [c]), tool(c, "x" * size)]
        out.append(assistant(f"answer {t}"))
    return out


def run(messages: list[Message], params: dict | None = None, window: int = 10**9) -> compaction.Replay:
    return compaction.replay(Conversation(tuple(messages)), NAME, params or {}, context_window=window)


def texts(r: compaction.Replay, k: int) -> list[str]:
    out = []
    for item in r.context_at(k):
        m = item.message
        out.append(f"result {m.tool_result.call_id}" if m.tool_result else
                   m.text or " ".join(f"use {c.id}" for c in m.tool_calls))
    return out


# ------------------------------------------------------------------------------------------------ the window
def test_defaults_are_the_releases():
    info = compaction.strategies()[NAME]
    assert info.defaults() == {"window_size": 40, "should_truncate_results": True, "per_turn": "false",
                               "pin_first": 0}
    assert info.policy == "window"


def test_after_each_invocation_the_last_window_size_messages_are_kept_from_a_user_message():
    r = run(turns(5), {"window_size": 5})
    # each turn is 4 messages; at turn 2's first call the 8 earlier messages are trimmed to 4 (8 - 5 = 3, moved on
    # to turn 1's question); the new question joins after that
    assert texts(r, 2 * 2) == ["You are helpful.", "question 1", "use t100", "result t100", "answer 1", "question 2"]
    assert r.steps[4].compacted and "after the invocation: trimmed 4 messages" in r.steps[4].note


def test_with_per_turn_false_one_invocation_is_never_trimmed():
    r = run(turns(1, steps=30), {"window_size": 4})
    assert not any(s.compacted for s in r.steps)


def test_per_turn_true_manages_before_every_model_call():
    r = run(turns(1, steps=6), {"window_size": 4, "per_turn": "true"})
    # no user text after the question: the window starts at a tool use with its result (the task message goes)
    assert texts(r, 3) == ["You are helpful.", "use t1", "result t1", "use t2", "result t2"]
    assert [s.compacted for s in r.steps[:4]] == [False, False, True, True]


def test_per_turn_n_manages_every_nth_model_call():
    r = run(turns(1, steps=8), {"window_size": 4, "per_turn": "3"})
    assert [s.step for s in r.steps if s.compacted] == [2, 5, 8]


def test_the_system_prompt_is_outside_the_window():
    r = run(turns(3), {"window_size": 0})
    # window_size 0 clears every message at each reduction; the system prompt is not a message
    assert texts(r, 2)[0] == "You are helpful." and texts(r, 2)[1:] == ["question 1"]


def test_pin_first_protects_the_first_messages_from_the_first_reduction_on():
    r = run(turns(5), {"window_size": 5, "pin_first": 1})
    assert texts(r, len(r.steps) - 1)[:2] == ["You are helpful.", "question 0"]


def test_no_valid_trim_point_leaves_the_history():
    msgs = [user("task"), assistant("a"), assistant("b"), assistant("c"), assistant("d"), user("next"),
            assistant("e")]
    r = run(msgs, {"window_size": 2})
    # after the first invocation: 5 messages, trimmed from 3 on: no user message, no tool use; nothing happens
    assert texts(r, len(r.steps) - 1)[:2] == ["task", "a"]
    assert "no valid trim point" in r.steps[4].note


# ------------------------------------------------------------------------------------------------ the overflow path
def test_an_overflow_first_truncates_the_oldest_tool_results():
    r = run(turns(1, steps=3, size=2000), {}, window=1_400)
    assert r.steps[3].tokens_before > 1_400 >= r.steps[3].tokens_sent
    truncated = [item.message.tool_result.text for item in r.context_at(3) if item.message.tool_result]
    assert truncated[0] == truncated_text("x" * 2000)
    assert "[truncated: 1600 chars removed]" in truncated[0] and len(truncated[1]) == len(truncated[2]) == 2000
    assert r.steps[3].note == "overflow: truncated 1 tool result of message 2"


def test_should_truncate_results_false_trims_instead():
    r = run(turns(1, steps=3, size=2000), {"should_truncate_results": False}, window=1_400)
    assert all("truncated" not in (item.message.tool_result.text if item.message.tool_result else "")
               for item in r.context_at(3))
    assert r.steps[3].note == "on overflow: trimmed 3 messages"


def test_a_truncated_message_is_not_truncated_again_and_routine_management_never_truncates():
    assert truncated_text(truncated_text("y" * 900)) is None and truncated_text("z" * 400) is None
    r = run(turns(6, size=2000), {"window_size": 2})
    assert all("truncated" not in item.message.text for k in range(len(r.steps)) for item in r.context_at(k))


def test_images_in_a_result_become_a_description():
    c = call(0)
    result = Message("tool", tool_result=ToolResult(c, ("x" * 900, Image("image/png"), File("a.pdf")), False))
    msgs = [user("look"), assistant(None, [c]), result, assistant("seen"), user("more"), assistant("ok")]
    r = run(msgs, {}, window=300)
    item = next(i for i in r.context_at(1) if i.message.tool_result)
    parts = item.message.tool_result.result
    assert parts[1] == "[image: png, 0 bytes]" and isinstance(parts[2], File) and "[truncated:" in parts[0]


def test_window_size_0_on_an_overflow_it_cannot_clear_stops_and_says_so():
    """The system prompt alone over the window: window_size 0 has nothing left to remove (the replay once looped)."""
    r = run([system("s" * 4_000), user("q"), assistant("a"), user("again"), assistant("b")], {"window_size": 0},
            window=100)
    assert len(r.steps) == 2 and "nothing left to trim" in r.steps[-1].note


def test_an_unrecoverable_overflow_is_said():
    r = run([user("x" * 5000), assistant("y")], {}, window=100)
    assert r.steps[0].triggered and "the run would fail" in r.steps[0].note


@pytest.mark.parametrize("value, parsed", [("false", False), ("true", True), ("1", True), ("4", 4), (True, True)])
def test_per_turn_values(value, parsed):
    assert parse_per_turn(value) == parsed


@pytest.mark.parametrize("value", ["0", "-2", "often"])
def test_bad_per_turn_is_named(value):
    with pytest.raises(ValueError, match="per_turn must be a positive integer"):
        run(turns(1), {"per_turn": value})


def test_the_export_builds_the_manager():
    sw = pytest.importorskip("strands.agent.conversation_manager")
    from compaction.export import export_setup

    (snippet,) = export_setup(NAME, {"window_size": 12, "per_turn": "3", "pin_first": 2,
                                     "should_truncate_results": False})
    assert snippet.language == "python"
    namespace: dict[str, Any] = {}
    code = snippet.code.split("agent = Agent(")[0]  # the agent needs the user's model and tools
    exec(compile(code, "<snippet>", "exec"), namespace)  # our own generated code
    manager = namespace["conversation_manager"]
    assert isinstance(manager, sw.SlidingWindowConversationManager)
    assert (manager.window_size, manager.should_truncate_results, manager.per_turn, manager.pin_first) == (
        12, False, 3, 2)


# ------------------------------------------------------------------------------------------------ differential
def to_strands(messages: list[Message]) -> list[dict]:
    """Messages as ``agent.messages`` (system messages are the system prompt; one step's results, one message)."""
    out: list[dict] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.tool_result is not None:
            r = m.tool_result
            items = [{"text": r.result}] if isinstance(r.result, str) else [_item(p) for p in r.result]
            block = {"toolResult": {"toolUseId": r.call_id, "status": "error" if r.error else "success",
                                    "content": items}}
            if out and out[-1].get("_results"):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block], "_results": True})
            continue
        content: list[dict] = [{"reasoningContent": {"reasoningText": {"text": r}}} for r in m.reasoning]
        content += [{"text": t} for t in m.texts]
        content += [{"image": {"format": (i.mime_type or "unknown").rpartition("/")[2], "source": {"bytes": b""}}}
                    for i in m.images]
        content += [{"toolUse": {"toolUseId": c.id, "name": c.name, "input": dict(c.arguments)}} for c in m.tool_calls]
        out.append({"role": "assistant" if m.role == "assistant" else "user", "content": content})
    return out


def _item(part: Any) -> dict:
    if isinstance(part, str):
        return {"text": part}
    if isinstance(part, Image):
        return {"image": {"format": (part.mime_type or "unknown").rpartition("/")[2], "source": {"bytes": b""}}}
    return {"document": {"format": "txt", "name": part.filename or "unnamed", "source": {"bytes": b""}}}


def clean(messages: list[dict]) -> list[dict]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def from_strands(messages: list[dict], calls: dict[str, ToolCall]) -> list[Message]:
    """``agent.messages`` back as our messages, to count what the model would be sent."""
    out: list[Message] = []
    latest = dict(calls)  # a result answers the latest call with its id (some logs reuse ids)
    for m in messages:
        results = [b["toolResult"] for b in m["content"] if "toolResult" in b]
        if results:
            for r in results:
                parts = tuple(i["text"] if "text" in i else Image("image/" + i["image"]["format"]) if "image" in i
                              else File(i["document"]["name"]) for i in r["content"])
                out.append(Message("tool", tool_result=ToolResult(latest[r["toolUseId"]], parts,
                                                                  r["status"] == "error")))
            continue
        uses = tuple(ToolCall(b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"]["input"])
                     for b in m["content"] if "toolUse" in b)
        latest.update((c.id, c) for c in uses)
        out.append(Message(m["role"], texts=tuple(b["text"] for b in m["content"] if "text" in b), tool_calls=uses,
                           images=tuple(Image("image/" + b["image"]["format"]) for b in m["content"] if "image" in b)))
    return out


def drive_manager(conv: Conversation, params: dict, window: int) -> list[list[dict]]:
    """``agent.messages`` before each model call when the real manager runs as the Strands agent runs it: after
    each invocation, in the before-model-call hooks, and on each overflow (then the call is retried)."""
    cm = pytest.importorskip("strands.agent.conversation_manager")
    from strands.hooks import BeforeModelCallEvent
    from strands.hooks import HookRegistry
    from strands.types.exceptions import ContextWindowOverflowException

    per_turn = parse_per_turn(params.get("per_turn", "false"))
    manager = cm.SlidingWindowConversationManager(params.get("window_size", 40),
                                                  params.get("should_truncate_results", True), per_turn=per_turn,
                                                  pin_first=params.get("pin_first") or None)
    hooks = HookRegistry()
    manager.register_hooks(hooks)
    agent = SimpleNamespace(messages=[])
    counter = compaction.make_counter("approx")
    calls = {c.id: c for m in conv.messages for c in m.tool_calls}
    for m in conv.messages:
        if m.tool_result is not None:
            calls.setdefault(m.tool_result.call_id, m.tool_result.origin)
    skipped = hidden_from_agent(conv) | conv.log_summary_indices
    shown = [i for i in range(len(conv.messages)) if i not in skipped]
    systems = [conv.messages[i] for i in shown if conv.messages[i].role == "system"]
    llm_calls = set(conv.llm_call_indices)
    sent: list[list[dict]] = []
    pending: list[Message] = []
    started = False

    def append(messages: list[Message]) -> None:
        for d in to_strands(messages):
            last = agent.messages[-1] if agent.messages else None
            if d.get("_results") and last is not None and last.get("_results"):
                last["content"] += d["content"]
            else:
                agent.messages.append(d)

    for i in shown:
        if i in llm_calls:
            split = next((k for k, m in enumerate(pending) if m.role == "user" and m.tool_result is None), None)
            if started and split is not None:
                append(pending[:split])
                manager.apply_management(agent)
                pending = pending[split:]
            append(pending)
            pending, started = [], True
            while True:
                hooks.invoke_callbacks(BeforeModelCallEvent(agent=agent, invocation_state={}))
                tokens = counter.count(systems + from_strands(agent.messages, calls), conv.tools)
                if tokens <= window:
                    break
                try:
                    manager.reduce_context(agent, e=ContextWindowOverflowException("too long"))
                except ContextWindowOverflowException:
                    break
            sent.append(copy.deepcopy(clean(agent.messages)))
        pending.append(conv.messages[i])
    return sent


def conversations() -> list[tuple[str, Conversation]]:
    return [*real_conversations(), *((p.name, compaction.load(p)) for p in sample_paths("*.openai.json"))]


GRID = (
    ({"window_size": 6}, 0.6),
    ({"window_size": 10, "per_turn": "true"}, 0.5),
    ({"window_size": 4, "per_turn": "3", "pin_first": 2}, 0.4),
    ({"window_size": 40}, 0.3),
    ({"window_size": 20, "should_truncate_results": False}, 0.4),
    ({"window_size": 0, "per_turn": "5"}, 1.0),
)


@pytest.mark.parametrize("params, fraction", GRID, ids=[str(g[0]) for g in GRID])
def test_the_real_manager_and_our_replay_keep_the_same_messages_at_every_call(params, fraction):
    pytest.importorskip("strands.agent.conversation_manager")
    changed = truncated = 0
    for name, conv in conversations():
        total = compaction.make_counter("approx").count(conv.messages, conv.tools)
        window = max(500, int(total * fraction))
        ours = compaction.replay(conv, NAME, params, context_window=window, counter="approx")
        theirs = drive_manager(conv, params, window)
        assert len(ours.steps) == len(theirs), name
        for step, expected in zip(ours.steps, theirs):
            got = clean(to_strands([item.message for item in ours.context_at(step.step)]))
            assert got == expected, f"{name}: call {step.step} (message {step.message_index})"
            changed += step.compacted
            truncated += "overflow: truncated" in step.note
    assert changed > 0
    assert truncated > 0 or not params.get("should_truncate_results", True) or params["window_size"] == 0
