"""The public API: ``compaction.__all__`` is curated, every name in it exists, and the one Setup value runs,
exports, hashes and round-trips."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

import compaction
from compaction.setups import Params

EXPECTED = {
    "Conversation", "Message", "ToolCall", "ToolResult", "ToolSchema", "convert", "formats", "load",
    "load_all_conversations", "Comparison", "Replay", "Setup", "StrategyInfo", "compare", "export", "get_strategy",
    "replay", "strategies", "make_counter", "resolve_counter", "CompactionError", "ConfigError", "LoadError",
}


def test_all_is_the_curated_list_and_every_name_exists() -> None:
    assert set(compaction.__all__) == EXPECTED
    assert all(hasattr(compaction, name) for name in compaction.__all__)


def test_errors_form_one_hierarchy() -> None:
    from compaction.budget import ReplayBudgetExceeded
    from compaction.errors import UsageError

    for error in (compaction.LoadError, compaction.ConfigError, UsageError, ReplayBudgetExceeded):
        assert issubclass(error, compaction.CompactionError) and issubclass(error, ValueError)
    with pytest.raises(compaction.ConfigError, match="unknown strategy 'nope'"):
        compaction.get_strategy("nope")
    with pytest.raises(compaction.ConfigError, match="unknown counter"):
        compaction.make_counter("nope")


def test_one_setup_value_runs_exports_hashes_and_round_trips() -> None:
    conv = compaction.load(SAMPLES / "coding_agent.openai.json")
    setup = compaction.Setup("haystack.tool_result_pruning", {"min_keep_steps": 2, "skip_meta_keys": ["x"]},
                             context_window=40_000, compact_at=0.7, compact_to=0.4, counter="approx")
    assert isinstance(setup.params, Params) and setup.params["skip_meta_keys"] == ("x",)
    assert hash(setup) == hash(compaction.Setup.from_json(setup.to_json()))
    assert compaction.Setup.from_json(setup.to_json()) == setup
    by_setup = compaction.replay(conv, setup)
    spelled_out = compaction.replay(conv, "haystack.tool_result_pruning", {"min_keep_steps": 2, "skip_meta_keys": "x"},
                                    context_window=40_000, compact_at=0.7, compact_to=0.4)
    assert by_setup.to_json() == spelled_out.to_json() == setup.run(conv).to_json()
    snippets = compaction.export(setup)
    assert snippets and "ToolResultPruningCompactor(" in snippets[0].code and "min_keep_steps=2" in snippets[0].code
    with pytest.raises(compaction.ConfigError):
        compaction.replay(conv, setup, {"min_keep_steps": 3})


def test_a_setup_without_a_window_takes_the_logs() -> None:
    conv = compaction.load(SAMPLES / "coding_agent.openai.json")
    setup = compaction.Setup("haystack.tool_result_pruning")
    assert setup.context_window is None and setup.to_json()["context_window"] is None
    rep = compaction.replay(conv, setup)
    assert rep.context_window_source != "explicit"
    assert compaction.Setup.from_json({"strategy": "haystack.tool_result_pruning"}).context_window is None
