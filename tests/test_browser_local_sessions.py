"""End to end in headless Chromium: the app served on 127.0.0.1 and opened from this machine offers the sessions of
(a fake) home on its own — the automatic rule with a real request's Host header and peer address — and offers
nothing with ``COMPACTION_LAB_LOCAL_SESSIONS=0``. Skipped without Debian's chromium or playwright."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser_page import settle
from conftest import ROOT
from conftest import STARTUP_SECONDS
from conftest import streamlit_app
from fake_home import build

import compaction
from compaction.ui import local_sessions
from compaction.ui import source

pytestmark = pytest.mark.browser

PICKER = "Sessions on this machine"


def app_env(tmp_path: Path, setting: str | None) -> dict[str, str]:
    fake = build(tmp_path / "home")
    samples = tmp_path / "samples"
    samples.mkdir()
    sample = compaction.load(str(ROOT / "tests/fixtures/codex/rollout.jsonl"))
    (samples / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(sample, "openai")))
    env = {k: v for k, v in os.environ.items() if k not in (local_sessions.SETTING, "CODEX_HOME", "CLAUDE_CONFIG_DIR",
                                                            "XDG_CONFIG_HOME", "XDG_DATA_HOME", "GEMINI_CLI_HOME")}
    env.update(HOME=str(fake.home), COMPACTION_LAB_SAMPLES=str(samples))
    if setting is not None:
        env[local_sessions.SETTING] = setting
    return env


def open_app(browser, url: str):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.goto(url, timeout=STARTUP_SECONDS * 1000)
    settle(page)
    page.locator("[data-testid='stVegaLiteChart'] svg.marks").first.wait_for(timeout=STARTUP_SECONDS * 1000)
    return page


def test_opened_from_this_machine_the_picker_is_offered(browser, tmp_path: Path):
    with streamlit_app(app_env(tmp_path, None)) as url:
        page = open_app(browser, url)
        try:
            picker = page.get_by_text(PICKER)
            assert picker.count() == 1
            picker.click()
            agent = page.locator("[data-testid='stSelectbox']").filter(has_text="Agent").first
            agent.wait_for(timeout=STARTUP_SECONDS * 1000)
            settle(page)  # the dialog's rerun (which looks for the sessions) has finished: its options are final
            agent.click()
            page.get_by_text("Claude Code (4)").wait_for(timeout=STARTUP_SECONDS * 1000)
            assert page.get_by_text("Cline (3)").count() == 1
        finally:
            page.close()


def test_switched_off_nothing_is_offered(browser, tmp_path: Path):
    with streamlit_app(app_env(tmp_path, "0")) as url:
        page = open_app(browser, url)
        try:
            assert page.get_by_text(PICKER).count() == 0
        finally:
            page.close()
