"""The prompt-cache cost model on hand-computed cases."""

from __future__ import annotations

import pytest

from compaction.analysis.costs import CallInput
from compaction.analysis.costs import price_calls
from compaction.analysis.costs import price_model
from compaction.conversation import Message
from compaction.tokens import ApproxCounter

COUNTER = ApproxCounter(chars_per_token=1.0)  # one token per rendered character: easy to compute by hand


def msg(char: str, ts: float | None = None) -> Message:
    """A user message rendering to exactly 1000 characters ('[user] ' + 993)."""
    return Message("user", (char * 993,), meta={"timestamp": ts} if ts is not None else {})


A, B, C, D = msg("a"), msg("b"), msg("c"), msg("d")


def calls(*contexts, output=10):
    return [CallInput(i, ctx, output) for i, ctx in enumerate(contexts)]


def test_prefix_hits_writes_and_minimum_length_anthropic():
    prices = price_model("claude-sonnet-4-6")
    report = price_calls(calls([A], [A, B], [A, B, C]), COUNTER, prices)
    first, second, third = report.calls
    # first call: 1000 tokens, below the 1024 minimum: nothing cached or written
    assert (first.input_tokens, first.cache_read, first.cache_write, first.uncached) == (1000, 0, 0, 1000)
    # second: prefix [A] = 1000 < 1024 cannot be read; the whole 2001-token prompt is written
    assert (second.input_tokens, second.cache_read, second.cache_write, second.uncached) == (2001, 0, 2001, 0)
    # third: prefix [A, B] = 2001 read, the new 1001 written
    assert (third.input_tokens, third.cache_read, third.cache_write, third.uncached) == (3002, 2001, 1001, 0)
    p = 3.0 / 1e6
    assert third.dollars == pytest.approx(2001 * p * 0.1 + 1001 * p * 1.25 + 10 * 15.0 / 1e6)


def test_an_edit_invalidates_everything_after_it():
    prices = price_model("claude-sonnet-4-6")
    b_pruned = Message("user", ("x" * 10,))
    report = price_calls(calls([A, B, C], [A, b_pruned, C, D]), COUNTER, prices)
    after = report.calls[1]
    assert after.prefix_messages == 1
    # prefix [A] (1000) is under the minimum: nothing read, everything re-written
    assert after.cache_read == 0 and after.cache_write == after.input_tokens == 1000 + 1 + 17 + 1 + 1000 + 1 + 1000


def test_same_content_counts_as_identical():
    prices = price_model("claude-sonnet-4-6")
    a_copy = Message("user", A.texts)
    report = price_calls(calls([A, B], [a_copy, B, C]), COUNTER, prices)
    assert report.calls[1].prefix_messages == 2 and report.calls[1].cache_read == 2001


def test_ttl_expiry_makes_the_call_cold():
    t0 = 1_700_000_000.0
    a, b, c = msg("a", t0), msg("b", t0 + 10), msg("c", t0 + 10 + 301)
    warm = price_calls(calls([a, b], [a, b, msg("x", t0 + 20)]), COUNTER, price_model("claude-sonnet-4-6"))
    assert not warm.calls[1].cold and warm.calls[1].cache_read == 2001
    cold = price_calls(calls([a, b], [a, b, c]), COUNTER, price_model("claude-sonnet-4-6"))
    assert cold.calls[1].cold and cold.calls[1].cache_read == 0 and cold.calls[1].cache_write == 3002
    hour = price_calls(calls([a, b], [a, b, c]), COUNTER, price_model("claude-sonnet-4-6", ttl="1h"))
    assert not hour.calls[1].cold and hour.calls[1].cache_read == 2001
    assert hour.prices.write_multiplier == 2.0


def test_no_timestamps_assume_warm():
    report = price_calls(calls([A, B], [A, B, C]), COUNTER, price_model("claude-sonnet-4-6"))
    assert not report.calls[1].cold


def test_openai_caches_in_128_token_increments_without_write_surcharge():
    prices = price_model("gpt-5.5")
    third = price_calls(calls([A, B], [A, B, C]), COUNTER, prices).calls[1]
    assert third.cache_read == 2001 // 128 * 128 == 1920
    assert third.cache_write == 0 and third.uncached == 3002 - 1920
    assert third.dollars == pytest.approx(1082 * 5e-6 + 1920 * 5e-6 * 0.1 + 10 * 40e-6)


def test_summarizer_calls_are_priced_as_their_own_requests():
    prices = price_model("claude-sonnet-4-6")
    report = price_calls([CallInput(0, [A], 10, ({"input_tokens": 5000, "output_tokens": 500},))], COUNTER, prices)
    call = report.calls[0]
    assert call.summarizer_dollars == pytest.approx(5000 * 3e-6 + 500 * 15e-6)
    assert report.total_dollars == pytest.approx(call.dollars + call.summarizer_dollars)


def test_unknown_model_and_ttl_are_clear_errors():
    with pytest.raises(ValueError, match="unknown model"):
        price_model("gpt-0")
    with pytest.raises(ValueError, match="TTL"):
        price_model("claude-sonnet-4-6", ttl="2h")


def test_replay_vs_baseline_separates_fewer_tokens_from_cheaper(django_log):
    import compaction
    from compaction.analysis import compare_costs

    conv = compaction.load(django_log)
    thrash = compaction.replay(conv, "agent_framework.tool_result_compaction", context_window=30000)
    comparison = compare_costs(thrash, price_model("claude-sonnet-4-6"))
    # collapsing one group per call sheds tokens but re-writes the cache every call: more expensive
    assert comparison.tokens_shed > 0 and not comparison.net_cheaper
    assert len(comparison.setup.calls) == len(thrash.steps)


def test_a_rewritten_stretch_prices_as_the_call_priced_on_its_own():
    """Calls that rewrite a stretch of a long context and keep its end (as compactions do) carry the end's count
    over instead of recounting it: every call prices as it does right after the call before, counted afresh."""
    import random

    rng = random.Random(7)
    pool = [Message(rng.choice(("user", "assistant", "tool")), ("x" * rng.randrange(1, 3000),)) for _ in range(60)]
    copies = [Message(m.role, m.texts) for m in pool[:10]]  # same content, other objects
    counter = ApproxCounter()
    prices = price_model("claude-sonnet-4-6")
    contexts = [pool[:20]]
    for _ in range(60):
        ctx = list(contexts[-1])
        start = rng.randrange(len(ctx) + 1)
        end = rng.randrange(start, min(len(ctx), start + 4) + 1)
        ctx[start:end] = rng.sample(pool + copies, rng.randrange(0, 3))  # a stretch rewritten, the rest kept
        ctx += rng.sample(pool, rng.randrange(0, 3))  # and what the log appended since
        contexts.append(ctx)
    together = price_calls(calls(*contexts), counter, prices).calls
    for i in range(1, len(contexts)):
        alone = price_calls(calls(contexts[i - 1], contexts[i]), counter, prices).calls[1]
        assert together[i]._replace(step=alone.step) == alone
