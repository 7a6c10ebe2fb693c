"""The Streamlit app as the browser tests see it in a Playwright page: its selectors, and waiting for it to settle."""

from __future__ import annotations

from conftest import STARTUP_SECONDS

CHART = "[data-testid='stVegaLiteChart']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"


def settle(page) -> None:
    """Wait until the app is connected and its script (or fragment) has finished running."""
    page.wait_for_timeout(300)
    page.wait_for_selector(CONNECTED, timeout=STARTUP_SECONDS * 1000)
    page.wait_for_selector(IDLE, timeout=STARTUP_SECONDS * 1000)
