"""``opencode.prune`` and ``opencode.compaction`` rule by rule (``agents.md §1.6``). Each test names the line of
OpenCode's source it checks: sst/opencode 31e22f65 ``packages/opencode/src/session/compaction.ts`` (C),
``overflow.ts`` (O), ``prompt.ts`` (P, the loop: when each runs) and ``message-v2.ts`` (M: what is sent). The
``opencode-ai`` npm package is a compiled binary, so these are golden cases derived from those lines."""

from __future__ import annotations

from pathlib import Path

import pytest

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import original
from compaction.strategies.opencode import CLEARED
from compaction.strategies.opencode import COMPACTION_QUESTION
from compaction.strategies.opencode import CONTINUE
from compaction.strategies.opencode import build_prompt
from compaction.strategies.opencode import estimate
from compaction.strategies.opencode import prune
from compaction.strategies.opencode import serialize
from compaction.strategies.opencode import usable

KB30 = "z" * 120_000  # 30,000 tokens at 4 characters a token


def _call(name: str, n: int) -> ToolCall:
    return ToolCall(f"call_{n}", name, {"n": n})


def _conversation(messages: list[Message], totals: dict[int, int] | None = None, others: int = 1_000
                  ) -> Conversation:
    calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
    usage = {i: Usage(input_tokens=(totals or {}).get(k, others) - 100, output_tokens=100)
             for k, i in enumerate(calls)}
    return Conversation(tuple(messages), source=Source("opencode"), usage=usage)


def _heavy_session(tool_name: str = "read") -> list[Message]:
    """Turn 1: three 30k-token tool outputs, then an answer; turns 2-4: a question and an answer each."""
    c = [_call(tool_name, k) for k in range(3)]
    return [user("task"),
            assistant(None, [c[0]]), tool(c[0], KB30),
            assistant(None, [c[1]]), tool(c[1], KB30),
            assistant(None, [c[2]]), tool(c[2], KB30),
            assistant("first answer"),
            user("second"), assistant("second answer"),
            user("third"), assistant("third answer"),
            user("fourth"), assistant("fourth answer")]


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 0), ("ab", 1), ("abcd", 1), ("abcdef", 2),
                                              ("abcdefghij", 3), ("😀", 1), ("😀😀😀", 2)])
def test_token_estimate_is_utf16_length_over_four_rounded(text: str, tokens: int) -> None:
    # util/token.ts: Math.max(0, Math.round(input.length / 4)); String.length counts UTF-16 units
    assert estimate(text) == tokens


def test_prune_skips_the_last_two_turns_and_protects_40k() -> None:
    # C lines 283-306: walk back, skip until 2 user turns, protect the first 40,000 tokens, prune the rest if > 20,000
    entries = [original(m, i) for i, m in enumerate(_heavy_session()[:12])]  # up to the third answer
    chosen, pruned, total = prune(entries)
    assert [entries[i].origin for i in chosen] == [4, 2]  # newest first: outputs 2 and 1; output 3 is protected
    assert (pruned, total) == (60_000, 90_000)


def test_prune_needs_more_than_the_minimum() -> None:
    messages = _heavy_session()
    messages[2] = tool(messages[2].tool_result.origin, "")
    messages[4] = tool(messages[4].tool_result.origin, "z" * 80_000)  # 20,000 tokens: not more than the minimum
    entries = [original(m, i) for i, m in enumerate(messages[:12])]
    chosen, pruned, _ = prune(entries)
    assert chosen == [] and pruned == 20_000
    messages[2] = tool(messages[2].tool_result.origin, "zz")  # one token more
    chosen, pruned, _ = prune([original(m, i) for i, m in enumerate(messages[:12])])
    assert pruned == 20_001 and [entries[i].origin for i in chosen] == [4, 2]


def test_skill_outputs_never_count() -> None:
    # C line 30 (PRUNE_PROTECTED_TOOLS = ["skill"]), 297
    entries = [original(m, i) for i, m in enumerate(_heavy_session("skill")[:12])]
    assert prune(entries) == ([], 0, 0)


def test_prune_runs_when_a_turn_ends_and_sends_the_placeholder_from_then_on() -> None:
    # P: compaction.prune runs after the loop exits (an answer with no tool call); M: a compacted output is sent as
    # "[Old tool result content cleared]"
    rep = compaction.replay(_conversation(_heavy_session()), "opencode.prune")
    compacted = [s for s in rep.steps if s.compacted]
    # calls: 3 tool calls, then the answers of turns 1-4; the prune after the third answer is seen by the fourth call
    assert [s.step for s in compacted] == [6]
    context = {i.index: i for i in rep.context_at(6)}
    assert context[2].fate == context[4].fate == "pruned" and context[6].fate == "kept"
    assert context[2].message.tool_result.text == CLEARED
    assert [s.step for s in rep.steps if s.triggered] == [4, 5, 6]  # every call after a finished turn


def test_a_cleared_output_stops_the_walk() -> None:
    # C line 299: an already compacted part ends the walk: outputs older than it are never counted again
    entries = [original(m, i) for i, m in enumerate(_heavy_session()[:12])]
    entries[4] = entries[4].replaced(tool(entries[4].message.tool_result.origin, CLEARED), opencode="cleared")
    chosen, pruned, total = prune(entries)
    assert (chosen, pruned, total) == ([], 0, 30_000)  # output 3 counted, output 2 cleared: output 1 is not reached


def test_prune_again_after_more_turns() -> None:
    messages = _heavy_session()
    c = [_call("read", k) for k in range(3, 6)]
    messages += [user("fifth"), assistant(None, [c[0]]), tool(c[0], KB30), assistant(None, [c[1]]),
                 tool(c[1], KB30), assistant(None, [c[2]]), tool(c[2], KB30), assistant("fifth answer"),
                 user("sixth"), assistant("sixth answer"), user("seventh"), assistant("seventh answer"),
                 user("eighth"), assistant("eighth answer")]
    rep = compaction.replay(_conversation(messages), "opencode.prune")
    assert len([s for s in rep.steps if s.compacted]) == 2
    last = {i.index: i.fate for i in rep.context_at(rep.steps[-1].step)}
    # the second walk: outputs 6 (protected), 5 and 4, then output 3 (older, not cleared yet), then output 2: cleared,
    # the walk stops
    assert [k for k in (2, 4, 6, 16, 18, 20) if last[k] == "pruned"] == [2, 4, 6, 16, 18]


def test_usable_context() -> None:
    # O lines 10-20: reserved = cfg.reserved ?? min(20,000, max output); input limit - reserved, else context -
    # max output - reserved
    assert usable(200_000, 32_000, 0, None) == 148_000
    assert usable(200_000, 8_000, 0, None) == 184_000
    assert usable(200_000, 32_000, 0, 5_000) == 163_000
    assert usable(400_000, 128_000, 272_000, None) == 252_000
    assert usable(0, 32_000, 0, None) == 0


def _long_session(turns: int, size: str = "y" * 8_000) -> list[Message]:
    messages: list[Message] = []
    for k in range(turns):
        call = _call("bash", k)
        messages += [user(f"question {k}"), assistant(f"looking {k}", [call]), tool(call, size),
                     assistant(f"answer {k}")]
    return messages


def test_compaction_fires_when_the_last_call_reaches_the_usable_context() -> None:
    # P: lastFinished (not a summary) and isOverflow(lastFinished.tokens); O line 32: count >= usable
    messages = _long_session(6)
    below = compaction.replay(_conversation(messages, {5: 147_999}), "opencode.compaction")
    assert not any(s.compacted for s in below.steps)
    at = compaction.replay(_conversation(messages, {5: 148_000}), "opencode.compaction")
    assert [s.step for s in at.steps if s.compacted] == [6]
    assert len(at.steps[6].model_calls) == 1


def test_the_next_request_after_compaction() -> None:
    # C lines 106-116 (the preserve budget: a quarter of usable within 2,000-15,000), 223-269 (whole turns newest
    # first while they fit); M (filterCompacted): [compaction request, summary, retained tail, continue]
    messages = _long_session(12)
    rep = compaction.replay(_conversation(messages, {20: 150_000}), "opencode.compaction")
    step = rep.steps[21]
    assert step.compacted and "budget 15,000" in step.note
    context = rep.context_at(21)
    assert context[0].message.texts == (COMPACTION_QUESTION,) and context[0].message.role == "user"
    assert context[1].fate == "inserted" and context[1].message.role == "assistant"
    assert context[-1].message.texts == (CONTINUE,)
    kept = [i.index for i in context[2:-1]]
    # each turn is about 2,050 tokens: 7 whole turns fit 15,000 (turns 4-10, the current one included); turn 3 does
    # not fit whole, and of its messages after the first only its answer fits what is left (splitTurn)
    assert messages[kept[0]].text == "answer 3" and messages[kept[1]].text == "question 4"
    assert kept == list(range(kept[0], 43))
    assert set(context[1].represents) == set(range(kept[0]))


def test_no_retained_turns_with_tail_turns_zero() -> None:
    # C line 227: tail_turns <= 0 -> head is every message, no tail
    messages = _long_session(6)
    rep = compaction.replay(_conversation(messages, {5: 150_000}), "opencode.compaction", {"tail_turns": 0})
    context = rep.context_at(6)
    assert [i.message.text for i in context if i.fate != "inserted"] == []
    assert len(context) == 3


def test_a_turn_that_does_not_fit_is_split_inside() -> None:
    # C lines 161-186 (splitTurn: the earliest message after the turn's first whose rest fits), 252-262
    messages = _long_session(3, size="y" * 80_000)  # 20,000-token outputs: no turn with one fits 15,000
    rep = compaction.replay(_conversation(messages, {3: 150_000}), "opencode.compaction")
    context = rep.context_at(4)  # the call after "answer 1": turn 2 is its question alone
    kept = [messages[i.index].text for i in context[2:-1]]
    # turn 2 fits whole; turn 1 does not, nor does its call with its 20,000-token output: its answer alone is kept
    assert kept == ["answer 1", "question 2"]


def test_a_second_compaction_feeds_the_first_summary_forward() -> None:
    # C lines 88-104 (completed compactions are hidden), 321-324 (the previous summary goes to the prompt), and
    # core/session/compaction.ts buildPrompt (<prior-summary>)
    messages = _long_session(12)
    # the second time, the log's 170,000 less what the first compaction took away still reaches 148,000
    rep = compaction.replay(_conversation(messages, {10: 150_000, 20: 170_000}), "opencode.compaction")
    steps = [s.step for s in rep.steps if s.compacted]
    assert steps == [11, 21]
    first_summary = rep.context_at(11)[1]
    second = rep.context_at(21)
    assert sum(1 for i in second if i.message.texts == (COMPACTION_QUESTION,)) == 1  # the old pair is gone
    assert set(first_summary.represents) <= set(second[1].represents)


def test_the_summary_request() -> None:
    # C lines 56-86 (serialize: [User]/[Assistant]/[Assistant tool call]/[Tool result] lines, outputs cut at 2,000
    # characters with "\n[truncated]", cleared outputs as the placeholder, errors as [Tool error])
    a, b = _call("bash", 1), _call("read", 2)
    entries = [original(m, i) for i, m in enumerate([
        user("fix the bug"), assistant("I'll look.", [a, b]), tool(a, "x" * 2_500), tool(b, "nope", error=True)])]
    text = serialize(entries)
    assert text.split("\n\n")[0] == "[User]: fix the bug"
    lines = text.split("\n\n")[1].split("\n")
    assert lines[0] == "[Assistant]: I'll look."
    assert lines[1] == '[Assistant tool call]: bash({"n": 1})'
    assert lines[2] == "[Tool result]: " + "x" * 2_000
    assert lines[3] == "[truncated]"
    assert lines[5] == "[Tool error]: nope"
    prompt = build_prompt("CONV", None)
    assert prompt.startswith("Here is the conversation so far:\n\n<conversation>\nCONV\n</conversation>\n\n")
    assert "<prior-summary>" not in prompt
    assert "<prior-summary>\nOLD\n</prior-summary>" in build_prompt("CONV", "OLD")


def test_prune_with_compaction() -> None:
    # compaction.prune with auto compaction on: both run, the prune when a turn ends
    rep = compaction.replay(_conversation(_heavy_session()), "opencode.compaction", {"prune": True})
    assert [s.step for s in rep.steps if s.compacted] == [6]
    assert "prune: cleared 2 tool outputs" in rep.steps[6].note


def test_export_is_opencode_json() -> None:
    import json

    from compaction.export import export_setup

    (snippet,) = export_setup("opencode.prune", {})
    assert json.loads(snippet.code)["compaction"] == {"auto": False, "prune": True}
    snippets = export_setup("opencode.compaction", {"prune": True, "reserved": 10_000, "preserve_recent_tokens": 8_000,
                                                    "tail_turns": 2, "mode": "suffix", "output_token_max": 16_000,
                                                    "model_input_limit": 150_000})
    config = json.loads(snippets[0].code)
    assert config["$schema"] == "https://opencode.ai/config.json"
    assert config["compaction"] == {"auto": True, "prune": True, "reserved": 10_000, "preserve_recent_tokens": 8_000,
                                    "tail_turns": 2, "mode": "suffix"}
    assert json.loads(snippets[1].code) == {"limit": {"context": 200_000, "output": 32_000, "input": 150_000}}
    assert snippets[2].code == "export OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX=16000\n"


def test_prune_replayed_on_opencodes_own_log_clears_what_opencode_cleared_where_it_did() -> None:
    """The real OpenCode 1.18.33 run (tests/fixtures/opencode, made by tools/fixtures/opencode_session.py) pruned
    once, recorded as a microcompact log event; a replay of opencode.prune on the same log prunes at that call and
    clears the very same tool outputs, and nowhere else."""
    conv = compaction.load(Path(__file__).parent / "fixtures" / "opencode" / "session.export.json")
    (event,) = [e for e in conv.events if e.kind == "microcompact"]
    rep = compaction.replay(conv, "opencode.prune")
    compacted = [s for s in rep.steps if s.compacted]
    assert len(compacted) == 1
    step = compacted[0]
    real_call = sum(1 for i in conv.llm_call_indices if i < event.message_index)
    assert step.step == real_call
    fates = rep.fates_at(step.step)
    cleared = {conv.messages[i].tool_result.call_id for i, fate in fates.items() if fate == "pruned"}
    assert cleared == set(event.cleared)
