"""Numbers from the log, everywhere: replay(), compare(), the CLI and calibration take the window and prices the log
resolves to (compaction.models) unless a value is given, and say where they came from."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr

import pytest
from conftest import SAMPLES
from conftest import real_log

import compaction
from compaction import charts
from compaction.analysis.calibration import calibrate
from compaction.analysis.costs import compare_costs
from compaction.analysis.costs import price_model
from compaction.analysis.costs import prices_for
from compaction.cli import main
from compaction.models import DEFAULT_CONTEXT_WINDOW
from compaction.run_charts import series_colors
from compaction.run_charts import tokens_chart_data
from compaction.tokens import make_counter

CODEX = "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
CLAUDE_CODE = "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
OPUS_4_5 = "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"
CODING = SAMPLES / "coding_agent.openai.json"
PRUNING = "haystack.tool_result_pruning"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        code = main(list(argv), out=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def codex():
    return compaction.load(real_log(CODEX))


# ------------------------------------------------------------------------------------------------ the API
def test_replay_takes_the_window_the_log_states(codex):
    rep = compaction.replay(codex, PRUNING)
    assert (rep.context_window, rep.context_window_source) == (258_400, "log:model_context_window")
    assert rep.to_json()["policy"] == {"context_window": 258_400, "compact_at": 0.7, "compact_to": 0.4,
                                       "context_window_source": "log:model_context_window"}
    assert rep.lines["trigger"] == pytest.approx(258_400 * 0.7)


def test_an_explicit_window_wins(codex):
    rep = compaction.replay(codex, PRUNING, context_window=64_000)
    assert (rep.context_window, rep.context_window_source) == (64_000, "explicit")


def test_replay_of_a_log_without_window_or_model_uses_the_default():
    rep = compaction.replay(compaction.load(CODING), PRUNING)
    assert (rep.context_window, rep.context_window_source) == (DEFAULT_CONTEXT_WINDOW, "default")


def test_the_largest_claude_code_session_replays_with_its_models_window():
    rep = compaction.replay(compaction.load(real_log(CLAUDE_CODE)), PRUNING)
    assert (rep.context_window, rep.context_window_source) == (200_000, "model:claude-opus-4-6")


def test_compare_takes_the_log_window_unless_a_setup_names_one(codex):
    cmp = compaction.compare(codex, [PRUNING, {"strategy": "haystack.sliding_window", "label": "W"},
                                     {"strategy": PRUNING, "label": "mine", "context_window": 100_000},
                                     compaction.Setup(PRUNING, label="setup"),
                                     compaction.Setup(PRUNING, label="fixed", context_window=200_000)])
    assert [r.context_window for r in cmp.replays] == [258_400, 258_400, 100_000, 258_400, 200_000]
    assert [r.context_window_source for r in cmp.replays] == [
        "log:model_context_window", "log:model_context_window", "explicit", "log:model_context_window", "explicit"]
    assert cmp.window.source == "log:model_context_window"
    fixed = compaction.compare(codex, [PRUNING], context_window=50_000)
    assert fixed.window is None and fixed.replays[0].context_window == 50_000


def test_compare_costs_prices_a_replay_as_the_model_its_log_names():
    conv = compaction.load(real_log(OPUS_4_5))
    rep = compaction.replay(conv, PRUNING, context_window=40_000)
    assert compare_costs(rep).setup.prices.model == "claude-opus-4-5"
    assert compare_costs(rep, price_model("gpt-4.1")).setup.prices.model == "gpt-4.1"  # an explicit preset wins
    assert prices_for(conv, "1h").ttl == "1h"


# ------------------------------------------------------------------------------------------------ notebook parity
def test_compare_draws_the_apps_tokens_chart():
    from compaction.ui import cache

    conv = compaction.load(real_log(CLAUDE_CODE))
    cmp = compaction.compare(conv, [PRUNING, "agent_framework.tool_result_compaction"], context_window=60_000)
    colors = tuple(series_colors(cmp.runs).items())
    key = tuple((label, label) for label, _ in cmp.runs)
    app_spec = cache.tokens_chart_spec(key, colors, None, cmp.runs).spec
    assert cmp.chart().to_dict() == app_spec
    layers = json.dumps(app_spec["layer"])
    assert set(app_spec["datasets"]) >= {"series", "rules", "floor", "usage", "log_events", "events"}
    assert "provider-reported" in json.dumps(app_spec["layer"]) and "step" in layers  # a series of the legend
    # the selected step is marked as the app marks it: in the chart's own dataset, the spec otherwise the same
    marked = cmp.chart(selected_step=7).to_dict()
    app_marked = charts.with_selected_step(app_spec, 7)
    assert marked["layer"] == app_marked["layer"] == app_spec["layer"]
    assert marked["datasets"][charts.SELECTED_DATASET] == app_marked["datasets"][charts.SELECTED_DATASET] == [
        {"step": 7, "label": "step 7"}]


def test_the_shared_builder_colours_series_like_the_app():
    conv = compaction.load(CODING)
    cmp = compaction.compare(conv, [PRUNING, "haystack.sliding_window"], context_window=40_000)
    colors = series_colors(cmp.runs, {"A": "#123456"})
    assert colors[compaction.views.BASELINE] == charts.BASELINE_COLOR
    assert list(colors.values())[1:] == ["#123456", charts.setup_color(1)]
    data = tokens_chart_data(cmp.runs, None, colors)
    assert dict(zip(charts.legend_order(colors), data.layout.palette, strict=True)) == colors


# ------------------------------------------------------------------------------------------------ the CLI
def test_cli_replay_defaults_to_the_log_window_and_says_so(codex):
    code, text, err = run("replay", str(real_log(CODEX)), "--strategy", PRUNING, "--json")
    assert code == 0, err
    data = json.loads(text)
    assert data["policy"]["context_window"] == 258_400
    assert data["policy"]["context_window_source"] == "log:model_context_window"
    assert "258,400 (log:model_context_window)" in err
    assert data["summary"] == compaction.replay(codex, PRUNING).summary()  # the CLI and the API agree
    code, text, _ = run("replay", str(real_log(CODEX)), "--strategy", PRUNING)
    assert code == 0 and "context window 258,400 (log:model_context_window)" in text


def test_cli_explicit_window_wins_and_is_validated_against_the_resolved_one():
    code, text, _ = run("replay", str(real_log(CODEX)), "--strategy", PRUNING, "--context-window", "64000", "--json")
    assert code == 0
    assert json.loads(text)["policy"]["context_window_source"] == "explicit"
    code, _, err = run("replay", str(real_log(CODEX)), "--strategy", PRUNING, "--compact-at", "0.3",
                       "--compact-to", "0.5")
    assert code == 2 and "compact_to" in err and "Traceback" not in err


def test_cli_info_shows_the_resolved_window_and_price_preset_per_conversation():
    code, text, _ = run("info", str(real_log(CODEX)), "--json")
    assert code == 0
    (conv,) = json.loads(text)["conversations"]
    assert conv["resolved_context_window"]["value"] == 258_400
    assert conv["resolved_context_window"]["source"] == "log:model_context_window"
    assert conv["price_preset"]["value"] == "gpt-5.1-codex" and conv["price_preset"]["note"]
    code, text, _ = run("info", str(real_log(CLAUDE_CODE)), "--json")
    first = json.loads(text)["conversations"][0]
    assert first["resolved_context_window"] == {
        "value": 200_000, "source": "model:claude-opus-4-6",
        "note": first["resolved_context_window"]["note"]}
    assert first["price_preset"]["value"] == "claude-opus-4-6"
    code, text, _ = run("info", str(real_log(CLAUDE_CODE)))
    assert "window 200,000 (model:claude-opus-4-6); prices claude-opus-4-6 (model:claude-opus-4-6)" in text


def test_cli_sweep_takes_the_log_window_and_prices(tmp_path):
    # the real rollout with the window it states lowered to 30,000, so that the window decides what compacts
    text = real_log(CODEX).read_text(encoding="utf-8").replace('"model_context_window":258400',
                                                                '"model_context_window":30000')
    small = tmp_path / "rollout-small-window.jsonl"
    small.write_text(text, encoding="utf-8")
    conv = compaction.load(small)
    assert conv.source.context_window == 30_000
    code, out, err = run("sweep", str(small), "--strategy", PRUNING, "--axis", "compact_at=0.5,0.9",
                         "--no-information", "--workers", "1", "--json")
    assert code == 0, err
    assert "context window 30,000 (log:model_context_window)" in err
    # (the Codex reader does not name the rollout's model yet: then the preset is its provider's default)
    assert re.search(r"prices gpt-5\.1-codex \((default|model:gpt-5\.1-codex)\)", err), err
    rows = {r["compact_at"]: r for r in json.loads(out)["rows"]}
    for at in (0.5, 0.9):
        expected = compaction.replay(conv, PRUNING, compact_at=at).summary()
        assert (rows[at]["compactions"], rows[at]["peak_tokens"]) == (expected["compactions"],
                                                                      expected["peak_tokens_sent"])
    assert rows[0.5]["compactions"] > 0


def test_cli_fleet_keeps_one_stated_window_for_every_log(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.json").write_bytes(CODING.read_bytes())
    code, text, err = run("fleet", str(folder), "--strategy", PRUNING, "--no-information", "--workers", "1",
                          "--json")
    assert code == 0, err
    (row,) = json.loads(text)["rows"]
    conv = compaction.load(CODING)
    at_fleet_default = compaction.replay(conv, PRUNING, context_window=200_000).summary()["compactions"]
    assert row["compactions"] == at_fleet_default
    code, text, _ = run("fleet", str(folder), "--strategy", PRUNING, "--no-information", "--workers", "1",
                        "--context-window", "64000", "--json")
    assert json.loads(text)["rows"][0]["compactions"] == \
        compaction.replay(conv, PRUNING, context_window=64_000).summary()["compactions"] != at_fleet_default


# ------------------------------------------------------------------------------------------------ calibration
def test_calibration_gives_a_counter_spec_to_use():
    conv = compaction.load(real_log(OPUS_4_5))
    cal = calibrate(conv)
    spec = cal.counter_spec()
    assert spec == f"approx:{cal.chars_per_token:.4g}" == cal.summary()["fitted_counter"]
    counter = make_counter(spec)
    assert counter.spec == spec
    # the fitted counter matches the reported prompt sizes better than the default 4 chars/token
    rows = cal.rows
    fitted = sum(abs(r["fitted_prompt"] - r["reported_prompt"]) for r in rows)
    default = sum(abs(r["estimated_prompt"] - r["reported_prompt"]) for r in rows)
    assert fitted < default


def test_calibration_without_usage_has_no_counter_to_give():
    cal = calibrate(compaction.load(CODING))
    assert cal.summary()["fitted_counter"] is None
    with pytest.raises(ValueError, match="no chars-per-token was fitted"):
        cal.counter_spec()
