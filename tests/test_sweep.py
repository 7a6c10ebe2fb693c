"""Sweeps equal individual replays; the fast path equals the full engine; constraints pick the cheapest setup."""

from __future__ import annotations

import pytest

import compaction
from compaction.analysis.costs import price_model
from compaction.analysis.fastpath import fast_sweep_rows
from compaction.analysis.sweep import Setup
from compaction.analysis.sweep import evaluate
from compaction.analysis.sweep import grid
from compaction.analysis.sweep import linspace
from compaction.analysis.sweep import sweep
from compaction.analysis.sweep import thrash_count
from compaction.strategies import registry

METRICS = ("dollars", "baseline_dollars", "peak_tokens", "tokens_sent", "compactions", "declined", "thrash",
           "calls_over_window")


@pytest.fixture(scope="module")
def conv():
    from conftest import real_log

    return compaction.load(real_log("openai-plain/openhands-completions__django-10097.json"))


def assert_rows_equal(row, full):
    for key in METRICS:
        if isinstance(full[key], float):
            assert row[key] == pytest.approx(full[key], rel=1e-9), key
        else:
            assert row[key] == full[key], key


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "gpt-5.5"])
def test_fast_path_equals_full_replays(conv, model):
    prices = price_model(model)
    setup = Setup("haystack.tool_result_pruning", context_window=30000)
    combos = grid({"compact_at": [0.5, 0.7, 0.9], "compact_to": [0.2, 0.45], "min_keep_steps": [1, 3],
                   "min_tokens": [0, 200, 2000]})
    rows = fast_sweep_rows(conv, setup, combos, prices)
    assert rows is not None and len(rows) == len(combos)
    compacting = 0
    for row, values in zip(rows, combos):
        full = evaluate(conv, setup.with_values(values), prices, with_information=False, fast=False)
        assert_rows_equal(row, full)
        compacting += row["compactions"] > 0
    assert compacting >= len(combos) // 2  # the grid really exercises compaction


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "gpt-5.5"])
def test_fast_path_rows_that_never_trigger_are_exactly_what_a_run_gives(conv, model, monkeypatch):
    from compaction.analysis import fastpath
    from compaction.analysis.fastpath import fast_rows

    peak = max(s.tokens_before for s in Setup("haystack.tool_result_pruning", context_window=10_000_000).run(conv).steps)
    setups = [Setup("haystack.tool_result_pruning", context_window=window, compact_at=at, compact_to=0.2)
              for window in (peak // 2, peak, 2 * peak) for at in (0.5, 0.9, 0.99)]
    seen = []
    quiet = fastpath._quiet
    monkeypatch.setattr(fastpath, "_quiet", lambda lay, threshold: seen.append(quiet(lay, threshold)) or seen[-1])
    shortcut = fast_rows(conv, setups, price_model(model), with_information=True)
    assert True in seen and False in seen  # the grid has both
    monkeypatch.setattr(fastpath, "_quiet", lambda lay, threshold: False)
    assert shortcut == fast_rows(conv, setups, price_model(model), with_information=True)


def test_fast_path_with_custom_counter_ratio(conv):
    setup = Setup("haystack.tool_result_pruning", context_window=25000, counter="approx:3.3")
    combos = grid({"compact_at": [0.6, 0.8], "compact_to": [0.3]})
    rows = fast_sweep_rows(conv, setup, combos, price_model())
    for row, values in zip(rows, combos):
        assert_rows_equal(row, evaluate(conv, setup.with_values(values), price_model(), with_information=False,
                                        fast=False))


def test_fast_path_declines_other_setups(conv):
    assert fast_sweep_rows(conv, Setup("agent_framework.tool_result_compaction"), [{}], price_model()) is None
    assert fast_sweep_rows(conv, Setup("haystack.tool_result_pruning", counter="maf-dotnet"), [{}],
                           price_model()) is None


def test_general_sweep_equals_individual_replays_and_parallel_equals_serial(conv):
    setup = Setup("agent_framework.tool_result_compaction", context_window=30000)
    axes = {"compact_at": [0.6, 0.8], "minimum_preserved_groups": [4, 16]}
    serial = sweep(conv, setup, axes, with_information=True)
    parallel = sweep(conv, setup, axes, with_information=True, workers=2)
    assert serial.rows == parallel.rows
    for row in serial.rows:
        values = {k: row[k] for k in axes}
        full = evaluate(conv, setup.with_values(values), price_model())
        assert_rows_equal(row, full)
        assert row["information_loss"] == full["information_loss"]


def test_invalid_combinations_are_reported_not_raised(conv):
    result = sweep(conv, Setup("haystack.tool_result_pruning", context_window=30000),
                   {"compact_at": [0.5, 0.7], "compact_to": [0.6]}, with_information=False)
    errors = [r for r in result.rows if "error" in r]
    assert len(errors) == 1 and "compact_to" in errors[0]["error"]


def test_unknown_axis_is_a_clear_error(conv):
    with pytest.raises(ValueError, match="cannot sweep 'keep'"):
        sweep(conv, Setup("haystack.tool_result_pruning"), {"keep": [1, 2]})


def test_best_minimises_dollars_under_constraints(conv):
    setup = Setup("haystack.tool_result_pruning", context_window=30000)
    result = sweep(conv, setup, {"compact_at": linspace(0.5, 0.95, 4), "compact_to": linspace(0.1, 0.45, 4)},
                   with_information=False)
    best = result.best(safety=0.9, max_compactions=5, top=3)
    assert best
    ok = [r for r in result.rows if "error" not in r and r["peak_tokens"] <= 27000 and r["compactions"] <= 5]
    assert best[0]["dollars"] == min(r["dollars"] for r in ok)
    assert [b["rank"] for b in best] == list(range(1, len(best) + 1))
    assert "peak" in best[0]["why"] and "compact_at=" in best[0]["why"]


def test_progress_is_reported(conv):
    seen = []
    sweep(conv, Setup("agent_framework.tool_result_compaction", context_window=30000), {"compact_at": [0.6, 0.8]},
          with_information=False, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (2, 2)


def test_thrash_counts_back_to_back_compactions():
    assert thrash_count([3, 4, 5, 9, 11, 12]) == 3
    assert thrash_count([]) == 0


def test_evaluate_takes_the_fast_path_with_the_same_numbers(conv):
    setup = Setup("haystack.tool_result_pruning", context_window=30000, params={"min_keep_steps": 2})
    fast = evaluate(conv, setup, price_model())
    full = evaluate(conv, setup, price_model(), fast=False)
    assert_rows_equal(fast, full)
    assert fast["information_loss"] == full["information_loss"]


def _grid_setups(strategy: str, conv) -> list[Setup]:
    """compact_at × compact_to around the log's uncompacted peak: the higher triggers lie above it, the lowest
    below, so quiet replays are shared and the others are not."""
    peak = max(s.tokens_before for s in Setup(strategy, context_window=10_000_000).run(conv).steps)
    window = 2 * peak + 1
    return [Setup(strategy, context_window=window, compact_at=a, compact_to=b)
            for a in (0.95, 0.8, 0.6, 0.4, 0.2) for b in (0.1, 0.3, 0.9)]


@pytest.mark.parametrize("strategy", sorted(registry()))
def test_evaluate_many_shares_replays_only_where_rows_are_equal(conv, strategy, monkeypatch):
    from compaction.analysis.sweep import evaluate_many

    setups = _grid_setups(strategy, conv)
    replays = []
    run = Setup.run
    monkeypatch.setattr(Setup, "run", lambda self, c, *a, **k: replays.append(self) or run(self, c, *a, **k))
    shared = evaluate_many(conv, setups, price_model())
    monkeypatch.undo()
    assert strategy == "haystack.tool_result_pruning" or 0 < len(replays) < len(setups)  # (pruning: the fast path)
    for setup, row in zip(setups, shared):
        assert row == evaluate(conv, setup, price_model()), (setup.compact_at, setup.compact_to)
