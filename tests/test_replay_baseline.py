"""A replay's uncompacted series is kept in the conversation's memo and reused by the next replay of the same log,
strategy, parameters, counter and window: what it may be reused for must not depend on compact_at / compact_to."""

from __future__ import annotations

import pickle

import pytest
from conftest import sample_paths

import compaction
from compaction.strategies import registry
from compaction.tokens import ApproxCounter

STRATEGIES = sorted(registry())


@pytest.fixture(scope="module")
def conversation() -> compaction.Conversation:
    return compaction.load(sample_paths("coding_agent.openai.json")[0])


def _fresh(conversation: compaction.Conversation) -> compaction.Conversation:
    """The same log with an empty memo (a pickled copy leaves the memo behind)."""
    return pickle.loads(pickle.dumps(conversation))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_uncompacted_series_does_not_depend_on_the_thresholds(conversation, strategy: str):
    counter = ApproxCounter()
    series = set()
    for compact_at, compact_to in ((0.5, 0.2), (0.9, 0.6)):
        fresh = _fresh(conversation)  # nothing reused: each series is measured
        replay = compaction.replay(fresh, strategy, context_window=20_000, compact_at=compact_at,
                                   compact_to=compact_to, counter=counter)
        series.add(tuple(s.tokens_uncompacted for s in replay.steps))
    assert len(series) == 1


@pytest.mark.parametrize("strategy", ["haystack.tool_result_pruning", "agent_framework.tool_result_compaction",
                                      "anthropic.clear_tool_uses_20250919"])
def test_a_reused_series_gives_the_replay_a_fresh_one_would(conversation, strategy: str):
    counter = ApproxCounter()
    warm = _fresh(conversation)
    compaction.replay(warm, strategy, context_window=20_000, compact_at=0.6, counter=counter)
    assert any(key[0] == "baseline" for key in warm.memo)
    reused = compaction.replay(warm, strategy, context_window=20_000, compact_at=0.8, counter=counter)
    cold = compaction.replay(_fresh(conversation), strategy, context_window=20_000, compact_at=0.8, counter=counter)
    assert reused.to_json() == cold.to_json()


def test_what_the_series_depends_on_is_in_the_key(conversation):
    """Another window, counter or parameter measures anew (and a counter's id is never taken for another's)."""
    warm = _fresh(conversation)
    first = compaction.replay(warm, "haystack.tool_result_pruning", context_window=20_000, counter="approx")
    other_counter = compaction.replay(warm, "haystack.tool_result_pruning", context_window=20_000,
                                      counter="approx:2")
    assert [s.tokens_uncompacted for s in other_counter.steps] != [s.tokens_uncompacted for s in first.steps]
    other_strategy = compaction.replay(warm, "agent_framework.tool_result_compaction",
                                                 context_window=20_000, counter="approx")
    assert len([k for k in warm.memo if k[0] == "baseline"]) == 3
    assert other_strategy.steps[-1].tokens_uncompacted > 0
