"""Numbers from the log in the app (``streamlit.testing.v1.AppTest``): the window widget seeds from the loaded log
unless the user set it (then the log's window is offered with a button), the cost view's price preset follows the
model with a notice, and one button makes the calibrated counter the shared one."""

from __future__ import annotations

import shutil
from pathlib import Path

import cost_app
import pytest
from conftest import ROOT
from conftest import SAMPLES
from conftest import real_log
from streamlit.testing.v1 import AppTest

import compaction
from compaction.analysis.calibration import calibrate
from compaction.analysis.costs import compare_costs
from compaction.analysis.costs import price_model
from compaction.setups import Setup
from compaction.ui import settings
from compaction.ui import source

TIMEOUT = 60
CODEX = "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
CLAUDE_CODE = "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
OPUS_4_5 = "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"
CODING = str(SAMPLES / "coding_agent.openai.json")


def texts(elements) -> list[str]:
    return [str(e.value) for e in elements]


def window(at: AppTest) -> int:
    return int(at.number_input(key=settings.WINDOW_KEY).value)


def buttons(at: AppTest) -> dict[str, object]:
    return {b.key: b for b in at.button}


# ------------------------------------------------------------------------------------------------ the window widget
def _window_script(first: str) -> None:
    import streamlit as st

    import compaction
    from compaction.ui import settings

    path = st.session_state.get("log_path", first)
    conversation = st.cache_resource(compaction.load)(path)
    seeded = settings.follow_log_window(conversation, path)
    settings.choose_policy()
    settings.show_log_window(seeded, path)


def window_app() -> AppTest:
    return AppTest.from_function(_window_script, args=(str(real_log(CODEX)),), default_timeout=TIMEOUT).run()


def open_log(at: AppTest, path: str) -> AppTest:
    at.session_state["log_path"] = path
    return at.run()


def test_the_window_follows_each_loaded_log_until_the_user_sets_one():
    at = window_app()
    assert not at.exception
    assert window(at) == 258_400
    assert any("Window from the log" in c and "258,400" in c for c in texts(at.caption))
    open_log(at, str(real_log(CLAUDE_CODE)))
    assert window(at) == 200_000  # a new log, and the user had not set the window: it follows
    open_log(at, CODING)
    assert window(at) == settings.DEFAULT_WINDOW
    assert any("Default window" in c for c in texts(at.caption))


def test_a_window_the_user_set_is_kept_and_the_logs_is_offered():
    at = window_app()
    at.number_input(key=settings.WINDOW_KEY).set_value(100_000).run()
    assert window(at) == 100_000
    open_log(at, str(real_log(CLAUDE_CODE)))
    assert window(at) == 100_000  # never replaced without asking
    assert any("200,000" in c and "kept" in c for c in texts(at.caption))  # offered next to the thresholds
    buttons(at)[settings.USE_LOG_WINDOW_KEY].click().run()
    assert window(at) == 200_000
    assert not any("kept" in c for c in texts(at.caption))
    assert any("Window from the log" in c for c in texts(at.caption))
    open_log(at, str(real_log(CODEX)))  # the log's window is the app's again: the next log sets it
    assert window(at) == 258_400


def test_a_log_without_a_window_offers_nothing():
    at = window_app()
    at.number_input(key=settings.WINDOW_KEY).set_value(100_000).run()
    open_log(at, CODING)
    assert window(at) == 100_000
    assert not any("kept" in c for c in texts(at.caption)) and settings.USE_LOG_WINDOW_KEY not in buttons(at)


def test_a_window_from_a_link_or_import_is_kept():
    at = AppTest.from_function(_window_script, args=(str(real_log(CODEX)),), default_timeout=TIMEOUT)
    at.session_state[settings.WINDOW_KEY] = 20_000  # what seed_policy writes for a link, an import or a tour
    at.run()
    assert window(at) == 20_000
    assert settings.USE_LOG_WINDOW_KEY in buttons(at)


# ------------------------------------------------------------------------------------------------ the cost view
SETUPS = (Setup("haystack.tool_result_pruning", context_window=40_000, label="A"),)


def costs_app(path: str) -> AppTest:
    return cost_app.costs_app(path, SETUPS, {"A": "#1c83e1"}, TIMEOUT)


def totals(at: AppTest) -> list[str]:
    return [m.value for m in at.metric if m.label == "Total $"]


def expected_total(path: str, preset: str) -> str:
    conv = compaction.load(path)
    return f"${compare_costs(SETUPS[0].run(conv), price_model(preset)).setup.total_dollars:,.4f}"


def test_the_price_preset_follows_the_model_with_a_notice():
    path = str(real_log(OPUS_4_5))
    at = costs_app(path)
    assert not at.exception and not at.error
    assert at.selectbox(key="costs_model").value == "claude-opus-4-5"
    assert any("Price preset from the log" in c and "claude" in c for c in texts(at.caption))
    assert totals(at) == [expected_total(path, "claude-opus-4-5")]
    assert totals(at) != [expected_total(path, "claude-sonnet-4-6")]  # what the format used to pick


def test_a_preset_the_user_chose_is_kept_and_the_logs_is_offered():
    path = str(real_log(OPUS_4_5))
    at = costs_app(path)
    at.selectbox(key="costs_model").set_value("gpt-4.1").run()
    assert at.selectbox(key="costs_model").value == "gpt-4.1"
    assert totals(at) == [expected_total(path, "gpt-4.1")]
    assert any("claude\\-opus\\-4\\-5" in i and "kept" in i for i in texts(at.info))
    buttons(at)["costs_use_log_preset"].click().run()
    assert at.selectbox(key="costs_model").value == "claude-opus-4-5"
    assert totals(at) == [expected_total(path, "claude-opus-4-5")]


def test_a_log_without_a_model_says_which_default_prices_it():
    at = costs_app(CODING)
    assert at.selectbox(key="costs_model").value == "claude-sonnet-4-6"
    assert any("Price preset from the log" in c and "names no model" in c for c in texts(at.caption))


def test_one_click_uses_the_calibrated_counter():
    path = str(real_log(OPUS_4_5))
    spec = calibrate(compaction.load(path)).counter_spec()
    at = costs_app(path)
    (button,) = [b for b in at.button if b.key == "costs_use_calibrated"]
    assert spec in button.label and not button.disabled
    button.click().run()
    assert not at.exception
    assert at.session_state[settings.COUNTER_KEY] == "approx:custom"
    assert at.session_state[settings.CHARS_KEY] == float(spec.partition(":")[2])
    assert settings.counter_spec(at.session_state[settings.COUNTER_KEY], at.session_state[settings.CHARS_KEY]) == spec
    assert any("shared counter is the calibrated one" in c for c in texts(at.caption))
    assert "costs_use_calibrated" not in buttons(at)


# ------------------------------------------------------------------------------------------------ the whole app
@pytest.fixture
def samples_with_codex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled coding sample (the default) and the real Codex rollout, as the app's samples folder."""
    folder = tmp_path / "samples"
    folder.mkdir()
    shutil.copy(CODING, folder / source.DEFAULT_SAMPLE)
    shutil.copy(real_log(CODEX), folder / "codex-rollout.jsonl")
    monkeypatch.setenv("COMPACTION_LAB_SAMPLES", str(folder))
    return folder


def test_the_app_seeds_its_window_from_the_codex_rollout(samples_with_codex: Path):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert window(at) == settings.DEFAULT_WINDOW  # the sample states no window and names no model
    at.selectbox(key=source.SAMPLE_KEY).set_value(samples_with_codex / "codex-rollout.jsonl").run()
    assert not at.exception and not at.error, texts(at.error)
    assert window(at) == 258_400
    assert any("Window from the log" in c and "258,400" in c for c in texts(at.caption))
    at.number_input(key=settings.WINDOW_KEY).set_value(30_000).run()
    at.selectbox(key=source.SAMPLE_KEY).set_value(samples_with_codex / source.DEFAULT_SAMPLE).run()
    assert window(at) == 30_000
    at.selectbox(key=source.SAMPLE_KEY).set_value(samples_with_codex / "codex-rollout.jsonl").run()
    assert window(at) == 30_000 and settings.USE_LOG_WINDOW_KEY in buttons(at)
    buttons(at)[settings.USE_LOG_WINDOW_KEY].click().run()
    assert not at.exception and window(at) == 258_400
