"""The Streamlit app as the browser tests see it in a Playwright page: its selectors, and waiting for it to settle."""

from __future__ import annotations

import re

from conftest import STARTUP_SECONDS

CHART = "[data-testid='stVegaLiteChart']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
#: where the analysis tabs start under the tuning view (drawn, like the cards above them, only while on screen)
TABS_MARKER = ".st-key-details-tabs-in_view"


def settle(page) -> None:
    """Wait until the app is connected and its script (or fragment) has finished running."""
    page.wait_for_timeout(300)
    page.wait_for_selector(CONNECTED, timeout=STARTUP_SECONDS * 1000)
    page.wait_for_selector(IDLE, timeout=STARTUP_SECONDS * 1000)


def show_details(page) -> None:
    """Scroll to the parts under the tuning view (the cards, the lesson and the analysis tabs) and wait until they
    are drawn: the app draws each only while it is on screen or about to be (a part scrolled past is drawn too)."""
    tabs = page.get_by_role("tab", name=re.compile("Contexts side by side"))
    if not tabs.count():
        page.locator(TABS_MARKER).first.scroll_into_view_if_needed()
    tabs.first.wait_for(timeout=STARTUP_SECONDS * 1000)
    page.get_by_role("heading", name="Results").first.wait_for(timeout=STARTUP_SECONDS * 1000)
    settle(page)


def open_expanders(page, summaries, limit: int) -> None:
    """Open the first ``limit`` expanders of ``summaries`` (a locator of their ``summary`` elements) one at a time: a
    full-text expander is filled by the rerun its opening starts, so each opening is let finish (on a loaded machine
    a click during the previous rerun can wait on a detached element); then wait until one shows its text."""
    count = min(summaries.count(), limit)
    for position in range(count):
        summary = summaries.nth(position)
        summary.scroll_into_view_if_needed()
        summary.click()
        settle(page)
    if count:
        page.locator("[data-testid='stExpander'] details[open] [data-testid='stCode']").first.wait_for(
            timeout=STARTUP_SECONDS * 1000)


def open_parameters(page, setup: str = "Setup A") -> None:
    """Open the popover of ``setup``'s parameters (the button beside its strategy picker in the tuning view); it
    stays open across the reruns its widgets start (close it with Escape)."""
    column = page.locator("[data-testid='stMain'] [data-testid='stColumn']").filter(
        has=page.locator("[data-testid='stSelectbox']", has_text=setup)).filter(
        has=page.locator("[data-testid='stPopover']")).last
    column.locator("[data-testid='stPopover'] button").first.click()
    page.locator("[data-testid='stPopoverBody']").first.wait_for(timeout=STARTUP_SECONDS * 1000)
