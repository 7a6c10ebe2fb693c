"""Shared test fixtures: paths to the bundled samples and the team's real logs."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

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
STARTUP_SECONDS = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError("streamlit did not become healthy in time")


@contextmanager
def streamlit_app(env: Mapping[str, str], *extra_args: str) -> Iterator[str]:
    """``streamlit run app.py`` on a free local port; yields its URL and always stops the server."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         *extra_args],
        cwd=ROOT, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
