"""The shortcuts fleets and sweeps take per row give exactly the numbers of the long way: a replay priced from the
baseline's calls up to its first change, and the information-loss score without the evidence."""

from __future__ import annotations

import pytest

import compaction
from compaction.analysis.costs import baseline_costs
from compaction.analysis.costs import baseline_dollars
from compaction.analysis.costs import compare_costs
from compaction.analysis.costs import price_calls
from compaction.analysis.costs import price_model
from compaction.analysis.costs import replay_costs
from compaction.analysis.costs import replay_updates
from compaction.analysis.information import information_loss
from compaction.analysis.information import information_score
from compaction.setups import Setup

LOGS = ("claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl",  # timestamps: cold calls after long gaps
        "openai-plain/openhands-completions__django-10097.json")
STRATEGIES = ("agent_framework.tool_result_compaction", "haystack.sliding_window", "anthropic.clear_tool_uses_20250919",
              "openhands.observation_masking", "haystack.summarization", "claude_code.microcompact")


@pytest.fixture(scope="module", params=LOGS)
def conv(request):
    from conftest import real_log

    return compaction.load(real_log(request.param))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("model,ttl", [("claude-sonnet-4-6", "5m"), ("claude-sonnet-4-6", "1h"), ("gpt-5.5", "5m")])
def test_replay_costs_from_the_baseline_equal_pricing_every_call(conv, strategy, model, ttl):
    prices = price_model(model, ttl=ttl)
    window = max(s.tokens_before for s in Setup(strategy, context_window=10_000_000).run(conv).steps)
    for compact_at in (0.5, 0.9):
        rep = Setup(strategy, context_window=window, compact_at=compact_at, compact_to=0.3).run(conv)
        long_way = price_calls(replay_updates(rep), rep.counter, prices, rep.conversation.tools)
        assert replay_costs(rep, prices).calls == long_way.calls


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_information_score_equals_the_evidence_count(conv, strategy):
    window = max(s.tokens_before for s in Setup(strategy, context_window=10_000_000).run(conv).steps)
    rep = Setup(strategy, context_window=window, compact_at=0.5, compact_to=0.2).run(conv)
    assert information_score(rep) == information_loss(rep).score


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_replays_that_change_at_their_first_call_or_never_are_priced_as_the_long_way(conv, strategy):
    prices = price_model("claude-sonnet-4-6")
    first = Setup(strategy, context_window=10_000_000).run(conv).steps[0].tokens_before
    # a window the first call already overflows (compacts from call 0), and one no trigger reaches (the baseline's
    # calls)
    for window in (max(first // 2, 64), 10_000_000):
        rep = Setup(strategy, context_window=window, compact_at=0.5, compact_to=0.2).run(conv)
        long_way = price_calls(replay_updates(rep), rep.counter, prices, rep.conversation.tools)
        assert replay_costs(rep, prices).calls == long_way.calls
    if not any(s.snapshot or s.model_calls for s in rep.steps):  # (a strategy with no threshold may still act)
        assert replay_costs(rep, prices).calls == baseline_costs(rep, prices).calls


def test_the_baseline_total_is_summed_once_and_is_the_reports_total(conv):
    prices = price_model("gpt-5.5")
    rep = Setup("agent_framework.tool_result_compaction", context_window=10_000).run(conv)
    assert baseline_dollars(rep, prices) == baseline_costs(rep, prices).total_dollars
    assert baseline_dollars(rep, prices) == compare_costs(rep, prices).baseline.total_dollars


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_first_removals_read_from_the_steps_are_those_the_deltas_give(conv, strategy):
    from compaction.analysis.information import _first_removal

    window = max(s.tokens_before for s in Setup(strategy, context_window=10_000_000).run(conv).steps)
    rep = Setup(strategy, context_window=window, compact_at=0.5, compact_to=0.2).run(conv)
    expected: dict[int, tuple[int, str]] = {}
    for delta in rep.deltas():
        for index, fate in (delta.change.fates.items() if delta.change is not None else ()):
            if fate != "kept":
                expected.setdefault(index, (delta.step.step, fate))
    assert _first_removal(rep) == expected
    assert expected or strategy in ("anthropic.clear_tool_uses_20250919", "claude_code.microcompact")  # (too small)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_deltas_from_a_call_on_are_the_tail_of_all_the_deltas(conv, strategy):
    window = max(s.tokens_before for s in Setup(strategy, context_window=10_000_000).run(conv).steps)
    rep = Setup(strategy, context_window=window, compact_at=0.5, compact_to=0.2).run(conv)
    every = list(rep.deltas())
    for start in sorted({0, 1, len(every) // 2, len(every) - 1, len(every)}):
        assert list(rep.deltas(start)) == every[start:]
