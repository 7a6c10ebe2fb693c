"""The cost, sweep and fleet components driven through ``streamlit.testing.v1.AppTest`` harnesses.

Each harness loads a real or bundled log, replays setups with the library and calls one ``show_*`` function, the
way app.py does; the tests then check what the page shows against the library's own numbers.
"""

from __future__ import annotations

from pathlib import Path

import cost_app
import pytest
from conftest import SAMPLES
from conftest import real_log
from streamlit.testing.v1 import AppTest

import compaction
from compaction.analysis.costs import compare_costs
from compaction.analysis.costs import price_model
from compaction.analysis.information import information_loss
from compaction.setups import Setup
from compaction.setups import setups_to_json
from compaction.ui import navigation

TIMEOUT = 60
CODING = str(SAMPLES / "coding_agent.openai.json")
CLAUDE_CODE = "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"
SETUPS = (Setup("haystack.tool_result_pruning", context_window=20000, label="A"),
          Setup("haystack.sliding_window", context_window=20000, label="B"))


# ------------------------------------------------------------------------------------------------ harnesses
def costs_app(log_path: str, setups=SETUPS) -> AppTest:
    return cost_app.costs_app(log_path, setups, {"A": "#1c83e1", "B": "#d6336c"}, TIMEOUT)


def metric_values(at: AppTest, label: str) -> list[str]:
    return [m.value for m in at.metric if m.label == label]


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def dollars(value: float) -> str:
    return f"${value:,.4f}"


def expected_totals(log_path: str, prices) -> list[str]:
    conv = compaction.load(log_path)
    return [dollars(compare_costs(s.run(conv), prices).setup.total_dollars) for s in SETUPS]


# ------------------------------------------------------------------------------------------------ costs
def test_costs_show_metrics_badges_and_information_loss():
    at = costs_app(CODING)
    assert not at.exception and not at.error
    assert metric_values(at, "Total $") == expected_totals(CODING, price_model("claude-sonnet-4-6"))
    conv = compaction.load(CODING)
    shed = [compare_costs(s.run(conv), price_model()).tokens_shed for s in SETUPS]
    assert all(v > 0 for v in shed) and len(metric_values(at, "Tokens shed")) == 2
    text = markdown_text(at)
    assert text.count("fewer tokens]") == 2
    assert text.count("cheaper after cache effects]") == 2
    assert "first user request" in text and "latest user request" in text
    scores = [str(information_loss(s.run(conv)).score) for s in SETUPS]
    assert metric_values(at, "Information-loss score") == scores
    assert not [s for s in at.subheader if "Calibration" in s.value]  # no usage in this log


def test_changing_preset_ttl_and_prices_changes_the_totals():
    at = costs_app(CODING)
    sonnet = metric_values(at, "Total $")
    at.selectbox(key="costs_model").set_value("gpt-4.1").run()
    assert metric_values(at, "Total $") == expected_totals(CODING, price_model("gpt-4.1")) != sonnet
    at.selectbox(key="costs_model").set_value("claude-sonnet-4-6").run()
    assert metric_values(at, "Total $") == sonnet
    at.radio(key="costs_ttl").set_value("1h").run()
    one_hour = metric_values(at, "Total $")
    assert one_hour == expected_totals(CODING, price_model("claude-sonnet-4-6", "1h")) != sonnet
    at.number_input(key="costs_claude-sonnet-4-6_input").set_value(6.0).run()
    assert metric_values(at, "Total $") == expected_totals(
        CODING, price_model("claude-sonnet-4-6", "1h", input_per_mtok=6.0)) != one_hour
    assert not at.exception


def test_calibration_panel_for_a_log_with_reported_usage():
    path = str(real_log(CLAUDE_CODE))
    at = costs_app(path)
    assert not at.exception and not at.error
    assert [s.value for s in at.subheader if "Calibration" in s.value]
    assert metric_values(at, "Calls compared") == ["72"]
    (cpt,) = metric_values(at, "Fitted chars/token")
    assert 1.0 < float(cpt) < 6.0
    assert metric_values(at, "Cache-read agreement")[0].endswith("×")


def test_setup_labels_are_not_rendered_as_markup():
    setups = (Setup("haystack.sliding_window", context_window=20000, label="<b>x</b> **y**"),)
    at = costs_app(CODING, setups)
    assert not at.exception
    assert "<b>" not in markdown_text(at) and "\\<b\\>" in markdown_text(at)


# ------------------------------------------------------------------------------------------------ sweep
SWEPT = Setup("haystack.tool_result_pruning", context_window=30000)


def _sweep_script(log_path: str, setup_json: str) -> None:
    import json

    import streamlit as st

    import compaction
    from compaction.setups import Setup
    from compaction.ui.sweep_view import show_sweep

    conversation = st.cache_resource(compaction.load)(log_path)

    def on_load(chosen: Setup) -> None:
        st.session_state["loaded"] = chosen.to_json()

    show_sweep(conversation, Setup.from_json(json.loads(setup_json)), on_load)


def sweep_app(setup: Setup = SWEPT) -> AppTest:
    import json

    return AppTest.from_function(_sweep_script, args=(CODING, json.dumps(setup.to_json())),
                                 default_timeout=TIMEOUT).run()


def set_range(at: AppTest, name: str, start: float, stop: float, count: int) -> None:
    at.number_input(key=f"sweep_{name}_start").set_value(start)
    at.number_input(key=f"sweep_{name}_stop").set_value(stop)
    at.number_input(key=f"sweep_{name}_count").set_value(count)


def test_sweep_runs_and_shows_the_best_setup_of_the_library():
    from compaction.analysis.sweep import sweep
    from compaction.ui.text import escape_markdown

    at = sweep_app()
    assert not at.exception and at.multiselect(key="sweep_axes").value == ["compact_at", "compact_to"]
    set_range(at, "compact_at", 0.5, 0.9, 3)
    set_range(at, "compact_to", 0.2, 0.6, 3)
    at.button(key="sweep_run").click().run()
    assert not at.exception and not at.error
    axes = {"compact_at": [0.5, 0.7, 0.9], "compact_to": [0.2, 0.4, 0.6]}
    expected = sweep(compaction.load(CODING), SWEPT, axes, prices=price_model("claude-sonnet-4-6"))
    best = expected.best(safety=0.9)
    assert best and at.success[0].value == escape_markdown(best[0]["why"])
    assert list(at.dataframe[1].value["why"]) == [row["why"] for row in best]
    assert at.button(key="sweep_load").disabled  # nothing selected yet
    fewest = min(row["compactions"] for row in expected.rows if "error" not in row)
    at.number_input(key="sweep_max_compactions").set_value(fewest).run()
    constrained = expected.best(safety=0.9, max_compactions=fewest)
    assert at.success[0].value == escape_markdown(constrained[0]["why"])
    assert all(row["compactions"] <= fewest for row in constrained)
    at.number_input(key="sweep_safety").set_value(0.1).run()
    assert not expected.best(safety=0.1) and "No configuration" in at.warning[0].value


def test_clicking_a_heatmap_cell_loads_that_configuration():
    at = sweep_app()
    set_range(at, "compact_at", 0.6, 0.8, 2)
    set_range(at, "compact_to", 0.3, 0.5, 2)
    at.button(key="sweep_run").click().run()
    assert at.button(key="sweep_load").disabled
    at.session_state["sweep_heat_peak_tokens"] = {"selection": {"cell": [{"compact_at": 0.8, "compact_to": 0.3}]}}
    at.run()
    assert not at.exception
    assert at.selectbox(key="sweep_choice_1").value == "compact_at=0.8, compact_to=0.3"
    load = at.button(key="sweep_load")
    assert not load.disabled
    load.click().run()
    assert at.session_state["loaded"] == SWEPT.with_values({"compact_at": 0.8, "compact_to": 0.3}).to_json()
    assert [s for s in at.success if "Loaded compact_at=0.8" in s.value]


def test_sweeping_one_integer_parameter():
    at = sweep_app()
    at.multiselect(key="sweep_axes").set_value(["min_keep_steps"]).run()
    set_range(at, "min_keep_steps", 1, 4, 4)
    at.checkbox(key="sweep_information").uncheck()
    at.button(key="sweep_run").click().run()
    assert not at.exception and not at.error
    rows = at.dataframe[0].value
    assert list(rows["min_keep_steps"]) == [1, 2, 3, 4] and "information_loss" not in rows


@pytest.mark.parametrize(("name", "start", "stop", "count", "message"), [
    ("compact_at", 0.9, 0.5, 3, "start"),
    ("compact_at", 0.5, 1.5, 3, "within"),
    ("compact_to", 0.2, 0.6, 0, "values"),
    ("compact_at", 0.1, 0.9, 25, "too many"),
])
def test_invalid_ranges_show_a_readable_error(name, start, stop, count, message):
    at = sweep_app()
    set_range(at, name, start, stop, count)
    if message == "too many":
        set_range(at, "compact_to", 0.05, 0.9, 25)
    at.run()
    assert not at.exception
    assert message in at.error[0].value and "cannot be swept" in at.error[0].value
    assert "sweep_run" not in [b.key for b in at.button]


def test_a_general_sweep_on_two_processes_and_a_strategy_without_knobs():
    setup = Setup("agent_framework.tool_result_compaction", context_window=20000)
    at = sweep_app(setup)
    at.multiselect(key="sweep_axes").set_value(["compact_at", "minimum_preserved_groups"]).run()
    set_range(at, "compact_at", 0.5, 0.8, 4)
    set_range(at, "minimum_preserved_groups", 2, 8, 4)  # 16 cells: above PARALLEL_FROM, no fast path
    at.checkbox(key="sweep_information").uncheck()
    at.button(key="sweep_run").click().run()
    assert not at.exception and not at.error
    rows = at.dataframe[0].value
    assert len(rows) == 16 and rows["compactions"].nunique() > 1
    bare = sweep_app(Setup("anthropic.clear_thinking_20251015"))
    assert not bare.exception and "no numeric setting" in bare.info[0].value


def test_a_grid_where_every_configuration_is_invalid():
    at = sweep_app()
    set_range(at, "compact_at", 0.3, 0.3, 1)
    set_range(at, "compact_to", 0.5, 0.6, 2)
    at.button(key="sweep_run").click().run()
    assert not at.exception and "Every configuration is invalid" in at.error[0].value


# ------------------------------------------------------------------------------------------------ fleet
FLEET_SETUPS = (("prune", Setup("haystack.tool_result_pruning", context_window=20000)),
                ("window", Setup("haystack.sliding_window", context_window=20000)))


def _fleet_script(setups_json: str) -> None:
    from compaction.setups import setups_from_json
    from compaction.ui.fleet_view import show_fleet

    show_fleet([(s.label, s) for s in setups_from_json(setups_json)], colors={"prune": "#1c83e1"})


def fleet_app() -> AppTest:
    setups = [Setup(s.strategy, s.params, context_window=s.context_window, label=name) for name, s in FLEET_SETUPS]
    return AppTest.from_function(_fleet_script, args=(setups_to_json(setups),), default_timeout=TIMEOUT).run()


def test_fleet_over_uploaded_logs_with_a_bad_file():
    from compaction.analysis.fleet import fleet

    at = fleet_app()
    assert at.button(key="fleet_run").disabled
    names = ["coding_agent.openai.json", "research_agent.openai.json"]
    uploads = [(name, (SAMPLES / name).read_bytes(), "application/json") for name in names]
    uploads.append(("**broken**.json", b"{ this is not a log", "application/json"))
    at.file_uploader(key="fleet_files").set_value(uploads).run()
    at.button(key="fleet_run").click().run()
    assert not at.exception
    (error,) = at.error
    assert error.value.startswith("**Could not read \\*\\*broken\\*\\*\\.json** — not valid JSON")
    expected = fleet([SAMPLES / n for n in names], FLEET_SETUPS, prices=price_model("claude-sonnet-4-6"), workers=1,
                     with_information=False).aggregate()
    aggregate = at.dataframe[0].value
    assert list(aggregate["setup"]) == [row["setup"] for row in expected]
    assert list(aggregate["median_dollars"]) == pytest.approx([row["median_dollars"] for row in expected])
    rows = at.dataframe[1].value
    assert set(rows["log"].dropna()) == {*names, "**broken**.json"}
    assert len([b for b in at.button if str(b.key).startswith("fleet_open_")]) == 2  # each log listed once
    # the worst log by $ opens in the explorer
    at.button(key="fleet_open_0").click().run()
    opened = at.session_state["fleet_open_log"]
    worst = max((r for r in fleet([SAMPLES / n for n in names], FLEET_SETUPS, workers=1,
                                  with_information=False).rows), key=lambda r: r["dollars"])
    assert opened["name"] == Path(worst["log"]).name and opened["path"] is None
    assert opened["data"] == (SAMPLES / opened["name"]).read_bytes()
    assert at.session_state[navigation.PENDING_KEY] == "explore"  # the explorer opens on the next run
    assert {b.label for b in at.get("download_button")} == {"Download per-log CSV", "Download JSON"}


def test_fleet_over_a_server_folder(tmp_path):
    real_log("claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl")
    at = fleet_app()
    at.radio(key="fleet_source").set_value("A folder on the server").run()
    at.text_input(key="fleet_folder").input(str(tmp_path / "missing")).run()
    assert "not a folder" in at.error[0].value and at.button(key="fleet_run").disabled
    at.text_input(key="fleet_folder").input(str(tmp_path)).run()
    assert "holds no log files" in at.error[0].value
    folder = real_log("openai-plain")
    at.text_input(key="fleet_folder").input(str(folder)).run()
    assert not at.error and "3 logs found." in [c.value for c in at.caption]
    at.button(key="fleet_run").click().run()
    assert not at.exception
    aggregate = at.dataframe[0].value
    assert set(aggregate["setup"]) == {"prune", "window"} and (aggregate["conversations"] >= 3).all()
    at.selectbox(key="fleet_metric").set_value("peak_tokens").run()
    at.button(key="fleet_open_0").click().run()
    opened = at.session_state["fleet_open_log"]
    assert opened["path"] and Path(opened["path"]).parent.resolve() == folder.resolve() and opened["data"] == Path(
        opened["path"]).read_bytes()
