"""The cost, calibration, sweep and fleet chart builders: valid Vega-Lite, bounded data, exact totals."""

from __future__ import annotations

import pytest
from conftest import SAMPLES
from conftest import real_log

import compaction
from compaction import cost_charts
from compaction.analysis import views
from compaction.analysis.calibration import calibrate
from compaction.analysis.costs import CallCost
from compaction.analysis.costs import CostReport
from compaction.analysis.costs import compare_costs
from compaction.analysis.costs import price_model
from compaction.analysis.fleet import FleetResult
from compaction.analysis.information import information_loss
from compaction.analysis.sweep import sweep
from compaction.setups import Setup
from compaction.views import MAX_CHART_ROWS

SETUPS = (("A", Setup("haystack.tool_result_pruning", context_window=20000)),
          ("B", Setup("haystack.sliding_window", context_window=20000)))


@pytest.fixture(scope="module")
def conv():
    return compaction.load(SAMPLES / "coding_agent.openai.json")


@pytest.fixture(scope="module")
def comparisons(conv):
    return [(label, compare_costs(setup.run(conv), price_model())) for label, setup in SETUPS]


def embedded_rows(spec: dict) -> int:
    """Rows of inline data a Vega-Lite spec carries (datasets plus inline ``values``)."""
    rows = sum(len(v) for v in spec.get("datasets", {}).values())
    return rows + len(spec.get("data", {}).get("values", []))


def test_cost_parts_keep_every_dollar_and_token(comparisons):
    parts = views.cost_parts([(label, c.setup) for label, c in comparisons])
    for label, comparison in comparisons:
        mine = parts[parts["setup"] == label]
        assert mine["dollars"].sum() == pytest.approx(comparison.setup.total_dollars)
        totals = comparison.setup.totals()
        by_kind = mine.groupby("kind")["tokens"].sum()
        assert by_kind["cache read"] == totals["cache_read"] and by_kind["cache write"] == totals["cache_write"]
        assert by_kind["summarizer"] == totals["summarizer_tokens"]


def test_cost_stack_chart_is_valid_for_tokens_and_dollars(comparisons):
    parts = views.cost_parts([(label, c.setup) for label, c in comparisons])
    for measure in ("tokens", "dollars"):
        spec = cost_charts.cost_stack_chart(parts, "B", measure).to_dict()  # to_dict validates against the schema
        assert spec["encoding"]["y"]["field"] == measure and spec["encoding"]["x2"]["field"] == "step_stop"
        assert embedded_rows(spec) == (parts["setup"] == "B").sum()
    shared = cost_charts.stack_max(parts, "tokens")
    assert shared == max(parts[parts["setup"] == s].groupby("step")["tokens"].sum().max() for s in ("A", "B"))
    spec = cost_charts.cost_stack_chart(parts, "A", y_max=shared).to_dict()
    assert spec["encoding"]["y"]["scale"] == {"domain": [0, shared]}
    with pytest.raises(ValueError, match="measure"):
        cost_charts.cost_stack_chart(parts, "A", "euros")


def test_long_logs_are_bucketed_under_the_row_limit_with_exact_sums():
    prices = price_model("claude-sonnet-4-6")
    calls = [CallCost(step=k, input_tokens=5000 + k, cache_read=4000, cache_write=1000 + k, uncached=0, output=50,
                      dollars=prices.dollars(0, 4000, 1000 + k, 50), cold=False, prefix_messages=3,
                      summarizer_input=100 if k % 50 == 0 else 0, summarizer_output=10 if k % 50 == 0 else 0,
                      summarizer_dollars=prices.dollars(100, 0, 0, 10) if k % 50 == 0 else 0.0)
             for k in range(3000)]
    report = CostReport(prices, calls)
    parts = views.cost_parts([("A", report), ("B", report)])
    assert len(parts) <= MAX_CHART_ROWS
    assert parts[parts["setup"] == "A"]["dollars"].sum() == pytest.approx(report.total_dollars)
    assert (parts["step_end"] >= parts["step"]).all() and (parts["step_end"] > parts["step"]).any()
    spec = cost_charts.cost_stack_chart(parts, "A", "tokens").to_dict()
    assert embedded_rows(spec) <= MAX_CHART_ROWS


def test_dollars_chart_uses_the_setup_colours(comparisons):
    spec = cost_charts.dollars_chart(views.cost_summary(comparisons), {"A": "#123456", "B": "#abcdef"}).to_dict()
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    assert scale == {"domain": ["A", "B"], "range": ["#123456", "#abcdef"]}


def test_calibration_chart_from_a_real_claude_code_log():
    conv = compaction.load(real_log("claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"))
    series = views.calibration_series(calibrate(conv))
    assert set(series["series"]) == {"reported", "estimated", "fitted"}
    spec = cost_charts.calibration_chart(series).to_dict()
    assert embedded_rows(spec) == len(series) <= MAX_CHART_ROWS


def test_sweep_heatmap_selects_on_both_axes_and_greys_invalid_cells(conv):
    result = sweep(conv, SETUPS[0][1], {"compact_at": [0.5, 0.7, 0.9], "compact_to": [0.3, 0.6]},
                   with_information=False)
    cells = views.sweep_cells(result, ["dollars", "peak_tokens"])
    assert (cells["error"] != "").sum() == 1  # 0.5 / 0.6 is invalid
    spec = cost_charts.sweep_heatmap(cells, "compact_at", "compact_to", "dollars").to_dict()
    (param,) = spec["params"]
    assert param["name"] == cost_charts.CELL_SELECTION and param["select"]["fields"] == ["compact_at", "compact_to"]
    assert len(spec["layer"]) == 3
    one_axis = cost_charts.sweep_heatmap(views.sweep_cells(
        sweep(conv, SETUPS[0][1], {"min_keep_steps": [1, 2, 3]}, with_information=False), ["compactions"]),
        "min_keep_steps", None, "compactions").to_dict()
    assert one_axis["params"][0]["select"]["fields"] == ["min_keep_steps"] and len(one_axis["layer"]) == 2
    assert views.cell_values(result, {"compact_at": 0.7000000000001, "compact_to": 0.3}) == {
        "compact_at": 0.7, "compact_to": 0.3}
    assert views.cell_values(result, {"compact_at": 0.5, "compact_to": 0.6}) is None  # invalid cell
    assert views.cell_values(result, {"compact_at": 0.5}) is None


def test_fleet_distribution_chart(conv):
    rows = [{"log": f"log{i}.json", "conversation": "c", "setup": label, "dollars": 0.1 * i + (label == "B"),
             "peak_tokens": 1000 * i, "compactions": i} for i in range(5) for label in ("A", "B")]
    rows.append({"log": "bad.json", "conversation": None, "setup": None, "error": "not a log"})
    frame = views.fleet_display(FleetResult(rows).rows, {"log1.json": "first.json"})
    assert "first.json" in set(frame["log"])
    spec = cost_charts.fleet_distribution_chart(frame, "dollars", {"A": "#111111"}).to_dict()
    assert embedded_rows(spec) == 10  # the error row is left out
    assert spec["layer"][0]["mark"]["type"] == "boxplot"


def test_loss_table_lists_every_removed_message(conv):
    rep = SETUPS[0][1].run(conv)
    loss = information_loss(rep)
    table = views.loss_table(conv, loss)
    assert len(table) == len(loss.evidence) and table["needed"].sum() == loss.score
    assert table["needed"].iloc[0]  # needed ones first
    assert table["evidence"].iloc[0] and table["message"].iloc[0].startswith("#")
