"""Plain-language accounts and warnings."""

from __future__ import annotations

import compaction
from compaction import explain
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.explain import warnings_for
from compaction.explain import what_happened


def test_account_of_a_compaction_names_trigger_target_and_result(django_log):
    conv = compaction.load(django_log)
    rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=30000)
    k = next(s.step for s in rep.steps if s.compacted)
    text = what_happened(rep, k)
    assert "reaching the trigger of 21k (0.7 × 30k)" in text
    assert "pruned" in text and "toward a target of" in text and "fewer" in text
    quiet = what_happened(rep, 0)
    assert "nothing to do" in quiet


def test_declined_trigger_is_explained():
    call = ToolCall("c1", "search", {"q": "x"})
    messages = (Message("system", ("s" * 4000,)), Message("user", ("find it",)), Message("assistant", (), (call,)),
                Message("tool", tool_result=ToolResult(call, "r" * 40)), Message("assistant", ("done",)))
    rep = compaction.replay(compaction.Conversation(messages), "haystack.tool_result_pruning", context_window=1200)
    assert rep.steps[1].declined
    assert "declined" in what_happened(rep, 1)
    kinds = {w.kind for w in warnings_for(rep)}
    assert "declined" in kinds


def test_thrashing_and_floor_warnings(django_log):
    conv = compaction.load(django_log)
    rep = compaction.replay(conv, "agent_framework.tool_result_compaction", context_window=30000)
    kinds = {w.kind: w for w in warnings_for(rep)}
    assert "thrashing" in kinds and kinds["thrashing"].steps
    assert "floor" in kinds


def test_first_user_lost_and_split_pair_with_sliding_window(django_log):
    conv = compaction.load(django_log)
    rep = compaction.replay(conv, "haystack.sliding_window", context_window=30000)
    kinds = {w.kind for w in warnings_for(rep)}
    # Haystack's sliding window keeps the task anchor (the last user message), so the task survives
    assert "first_user_lost" not in kinds
    healthy = compaction.replay(conv, "haystack.tool_result_pruning", context_window=30000)
    assert "split_pair" not in {w.kind for w in warnings_for(healthy)}


def test_the_advice_names_the_cause_it_sees():
    from conftest import real_log

    conv = compaction.load(real_log("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
    rep = compaction.replay(conv, "agent_framework.tool_result_compaction", context_window=120_000)
    found = {w.kind: w.message for w in explain.warnings_for(rep)}
    # the [Tool Calls] digests carry the results: the formatter is the knob, not compact_to
    assert "inserted digest(s)" in found["floor"] and "formatter" in found["floor"]
    assert "not compact_to" in found["thrashing"] and "Lower compact_to" not in found["thrashing"]
    protected = compaction.replay(conv, "agent_framework.tool_result_compaction", context_window=120_000,
                                  params={"minimum_preserved_groups": 60})
    cause = explain.floor_cause(protected, len(protected.steps) - 1, inserted=False)
    assert "minimum_preserved_groups=60" in cause
