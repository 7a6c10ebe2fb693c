"""``streamlit run app.py`` on a free local port, headless: what the browser tests and the browser benchmark drive."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

#: the app's entry point
APP_ROOT = Path(__file__).resolve().parents[2]
#: seconds a streamlit server gets to come up
STARTUP_SECONDS = 60


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]  # (host, port) for an IPv4 socket
        return port


def wait_healthy(port: int, proc: subprocess.Popen[bytes], seconds: float = STARTUP_SECONDS) -> None:
    """Block until the server on ``port`` answers its health check; ``RuntimeError`` if it exits or times out."""
    deadline = time.monotonic() + seconds
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
    """Run the app with environment ``env`` (and extra ``streamlit run`` options); yields its URL and always stops
    the server."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         *extra_args],
        cwd=APP_ROOT, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
