"""Shared test fixtures: paths to the bundled samples and the team's real logs."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from compaction.ui import state as ui_state
from compaction.ui.server import STARTUP_SECONDS as SERVER_STARTUP_SECONDS
from compaction.ui.server import streamlit_app  # noqa: F401 - the browser tests take it from here

#: the app under test never lists the agent sessions of whoever runs the tests (tests that check the picker opt in)
os.environ.setdefault("COMPACTION_LAB_LOCAL_SESSIONS", "0")

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_conversations"
#: the real logs committed with the suite (gzip-compressed; see tests/data/real_logs/README.md)
BUNDLED_REAL_LOGS = ROOT / "tests" / "data" / "real_logs"
#: set to a folder of plain real logs (e.g. ../shared/real_logs) to run the suite on that corpus instead
REAL_LOGS_SETTING = "COMPACTION_LAB_REAL_LOGS"


def _bundled_real_logs() -> Path:
    """The bundled logs decompressed once into tests/data/.cache/<digest of the bundle> (atomic: parallel workers
    may race, one rename wins)."""
    files = sorted(p for p in BUNDLED_REAL_LOGS.rglob("*.gz"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()[:16]
    target = ROOT / "tests" / "data" / ".cache" / f"real_logs-{digest}"
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="real_logs-", dir=target.parent))
    for path in files:
        out = staging / path.relative_to(BUNDLED_REAL_LOGS).with_suffix("")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.decompress(path.read_bytes()))
    try:
        staging.rename(target)
    except OSError:  # another worker got there first
        shutil.rmtree(staging, ignore_errors=True)
    return target


def real_logs_root() -> Path:
    """The folder of plain real logs the suite reads: ``$COMPACTION_LAB_REAL_LOGS``, else the bundled ones."""
    chosen = os.environ.get(REAL_LOGS_SETTING)
    return Path(chosen).resolve() if chosen else _bundled_real_logs()


REAL_LOGS = real_logs_root()


def real_log(relative: str) -> Path:
    """Path of a real log, or skip the test when the corpus in use does not have it."""
    path = REAL_LOGS / relative
    if not path.exists():
        pytest.skip(f"real log {relative} not in {REAL_LOGS}")
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


def open_parameters(at, slot: str = "A"):
    """Open setup ``slot``'s parameter popover in an ``AppTest`` and run it: the parameters' widgets are drawn only
    while it is open."""
    at.session_state[ui_state.params_open_key(slot)] = True
    return at.run()
