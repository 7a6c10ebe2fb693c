"""Conversation, Replay and Comparison show themselves briefly: a ``repr`` of at most 1,000 characters and a small,
escaped ``_repr_html_``, on the largest real logs and on hostile ones."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from conftest import real_log

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Source
from compaction.conversation import assistant
from compaction.conversation import user

LIMIT = 1_000
#: the largest real logs: the biggest Claude Code session, the one with 8 embedded subagents, the Codex rollout
LARGEST = ("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
           "claude-code/entireio-cli__checkpoint-00-c9e2351016-0.jsonl",
           "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl")
HOSTILE = "<script>alert(1)</script>" + "x" * 50_000 + "\n\n" + "<img src=x onerror=alert(2)>"


def assert_short(text: str) -> None:
    assert len(text) <= LIMIT, len(text)
    assert "\n" not in text


def assert_escaped_table(markup: str, limit: int = 4_000) -> None:
    assert len(markup) <= limit, len(markup)
    assert "<table>" in markup
    assert "<script" not in markup and "<img" not in markup


@pytest.mark.parametrize("relative", LARGEST)
def test_reprs_of_the_largest_real_logs_are_short(relative):
    conv = compaction.load(real_log(relative))
    text = repr(conv)
    assert_short(text)
    assert text.startswith(f"<Conversation {conv.format} ") and f" {len(conv.llm_call_indices):,} calls" in text
    assert f"{len(conv.messages):,} messages" in text
    if conv.format == "claude-code":
        assert "model claude-opus-4" in text
    assert_escaped_table(conv._repr_html_())
    rep = compaction.replay(conv, "haystack.tool_result_pruning")
    text = repr(rep)
    assert_short(text)
    assert text.startswith("<Replay haystack.tool_result_pruning on ")
    assert f"{rep.summary()['compactions']:,} compaction" in text and rep.context_window_source in text
    assert_escaped_table(rep._repr_html_())
    cmp = compaction.compare(conv, ["haystack.tool_result_pruning", "agent_framework.tool_result_compaction"])
    text = repr(cmp)
    assert_short(text)
    assert text.startswith("<Comparison of 2 setups on ") and "A haystack.tool_result_pruning" in text
    assert_escaped_table(cmp._repr_html_())
    bundle = cmp._repr_mimebundle_()
    assert bundle["text/plain"] == text


def test_the_conversation_repr_names_format_id_calls_messages_and_model():
    conv = Conversation((user("a"), assistant("b", model="claude-opus-4-6"), user("c"), assistant("d")),
                        source=Source("claude-code", path="/x/abc.jsonl", conversation_id="abc"))
    assert repr(conv) == "<Conversation claude-code 'abc' of abc.jsonl: 2 calls, 4 messages, model claude-opus-4-6>"
    bare = Conversation((user("a"),))
    assert repr(bare) == "<Conversation python '0': 0 calls, 1 message>"


def hostile_conversation() -> Conversation:
    messages = tuple(m for i in range(300) for m in (user(HOSTILE), assistant(HOSTILE, model=HOSTILE)))
    return Conversation(messages, source=Source(HOSTILE, path="/tmp/" + HOSTILE, conversation_id=HOSTILE,
                                                model=HOSTILE, agent_version=HOSTILE))


def test_hostile_ids_paths_models_and_labels_stay_short_and_escaped():
    conv = hostile_conversation()
    assert_short(repr(conv))
    markup = conv._repr_html_()
    assert_escaped_table(markup)
    assert html.escape("<script>") in markup
    rep = compaction.replay(conv, "haystack.sliding_window", context_window=50_000)
    assert_short(repr(rep))
    assert_escaped_table(rep._repr_html_())
    labels = [{"strategy": "haystack.sliding_window", "label": HOSTILE + str(i)} for i in range(9)]
    cmp = compaction.compare(conv, labels, context_window=50_000)
    text = repr(cmp)
    assert_short(text)
    assert "+3 more" in text
    markup = cmp._repr_html_()
    assert "<script" not in markup and "<img" not in markup


def test_a_replay_repr_is_the_summary_not_the_snapshots():
    conv = compaction.load(real_log(LARGEST[0]))
    rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=60_000)
    text = repr(rep)
    s = rep.summary()
    assert re.search(rf"peak {s['peak_tokens_sent']:,} of 60,000 \(explicit\)", text)
    assert f"saved {s['tokens_saved']:,}" in text and "counter approx:4.0" in text
    shortened = replace(conv, messages=conv.messages[:3])
    calls = len(shortened.llm_call_indices)
    assert f": {calls} call{'' if calls == 1 else 's'}, 3 messages, model claude-opus-4-6>" in repr(shortened)
