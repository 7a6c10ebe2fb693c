"""Shared test fixtures: paths to the bundled samples and the team's real logs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compaction.ui.server import STARTUP_SECONDS as SERVER_STARTUP_SECONDS
from compaction.ui.server import streamlit_app  # noqa: F401 - the browser tests take it from here

#: the app under test never lists the agent sessions of whoever runs the tests (tests that check the picker opt in)
os.environ.setdefault("COMPACTION_LAB_LOCAL_SESSIONS", "0")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_conversations"
REAL_LOGS = ROOT.parent / "shared" / "real_logs"


def real_log(relative: str) -> Path:
    """Path of a file in ../shared/real_logs, or skip the test when the folder is absent."""
    path = REAL_LOGS / relative
    if not path.exists():
        pytest.skip(f"real log {relative} not available")
    return path


def sample_paths(pattern: str = "*.openai.json") -> list[Path]:
    return sorted(SAMPLES.glob(pattern))


@pytest.fixture
def django_log() -> Path:
    return real_log("openai-plain/openhands-completions__django-10097.json")


#: Debian's chromium (playwright cannot download browsers on our machines)
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Headless Debian chromium driven by Playwright; skips cleanly when either is missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield launched
        finally:
            launched.close()


#: seconds a streamlit server (or a page) gets to come up
STARTUP_SECONDS = SERVER_STARTUP_SECONDS
