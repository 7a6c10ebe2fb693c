"""The app under abuse in headless Chromium: hostile log text, an upload over the size cap, and a long burst of
parameter changes and chart clicks.

One ``streamlit run app.py`` serves the whole module, with an upload cap of 1 MB (``--server.maxUploadSize 1``) and
a samples folder (``COMPACTION_LAB_SAMPLES``) holding a small coding log (the default sample) and a hostile log,
opened through the link parameter ``?log=``. Needs Debian's ``/usr/bin/chromium`` and the playwright package;
skipped cleanly when either is missing.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_page import open_expanders
from browser_page import open_parameters
from browser_page import settle
from browser_page import show_details
from conftest import ROOT
from conftest import streamlit_app
from test_app import coding_log
from test_browser import _context_step

import compaction
from compaction.conversation import Conversation
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.ui import source

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "tests" / "artifacts"
CHART = "[data-testid='stVegaLiteChart']"
EXCEPTION = "[data-testid='stException']"
ERROR_ALERT = "[data-testid='stAlertContentError']"
UPLOAD_CAP_MB = 1
HOSTILE_SAMPLE = "hostile.openai.json"
WAIT_MS = 60_000

PWN = "window.__pwned=1"
SCRIPT = f"<script>{PWN}</script>"
IMAGE = f'<img src=x onerror="{PWN}">'
IFRAME = f'<iframe src="javascript:{PWN}"></iframe>'
MARKDOWN = "**bold** [link](javascript:alert(1)) :red[x] $$x$$"
#: every hostile string, as it must appear on the page: literally
HOSTILE = (SCRIPT, IMAGE, IFRAME, MARKDOWN)
#: one 1 MB line without a newline (words: an unbroken 1 MB token stalls the information-loss heuristic, see
#: test_ui_abuse.test_a_long_unbroken_token_does_not_stall_the_replay)
HUGE_LINE = ("lorem0123 ipsum4567 dolor89ab " * 40_000)[: 1024 * 1024]


def hostile_log() -> Conversation:
    """Every text a log can carry (system, user, assistant, tool name, tool arguments, tool result) is hostile."""
    everything = " ".join(HOSTILE)
    messages = [system(f"You are terse. {everything}"), user(f"Please help. {everything}")]
    for i in range(8):
        call = ToolCall(id=f"call_{i}", name=f"read_file{IMAGE}" if i % 2 else "read_file",
                        arguments={"path": f"{SCRIPT}/{i}.py", "note": MARKDOWN})
        messages.append(assistant(f"Reading {HOSTILE[i % len(HOSTILE)]} step {i}", [call]))
        body = HUGE_LINE if i == 3 else (everything + "\n") * 300
        messages.append(tool(call, body))
    messages.append(assistant(f"Done. {everything}"))
    return Conversation(messages=tuple(messages))


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with a 1 MB upload cap, serving the coding log (default) and the hostile log as samples."""
    folder = tmp_path_factory.mktemp("abuse_samples")
    for name, conversation in ((source.DEFAULT_SAMPLE, coding_log()), (HOSTILE_SAMPLE, hostile_log())):
        (folder / name).write_text(json.dumps(compaction.convert(conversation, "openai")))
    env = {**os.environ, "COMPACTION_LAB_SAMPLES": str(folder), "COMPACTION_LAB_LOCAL_SESSIONS": "0"}
    with streamlit_app(env, "--server.maxUploadSize", str(UPLOAD_CAP_MB)) as url:
        yield url


@pytest.fixture
def page(browser):
    """A fresh page that records every JavaScript dialog (and dismisses it)."""
    opened = browser.new_page(viewport={"width": 1366, "height": 768})
    opened.dialogs = []
    opened.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))
    try:
        yield opened
    finally:
        opened.close()


def open_app(page, url: str) -> None:
    page.goto(url)
    settle(page)
    page.wait_for_selector(f"{CHART} svg.marks g.mark-symbol path", timeout=WAIT_MS)


def set_number(page, label: str, value: int) -> None:
    box = page.get_by_role("spinbutton", name=label).first
    box.fill(str(value))
    box.press("Enter")
    settle(page)


def step_points(page) -> dict[int, object]:
    """The uncompacted log's clickable points on the tokens chart, by step (read from their aria labels)."""
    points = {}
    symbols = page.locator(CHART).first.locator("svg.marks g.mark-symbol path")
    for i in range(symbols.count()):
        match = re.search(r"series: Uncompacted log; step: (\d+);", symbols.nth(i).get_attribute("aria-label") or "")
        if match:
            points[int(match.group(1))] = symbols.nth(i)
    return points


def click_point(page, point) -> None:
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    settle(page)


def trigger_caption(page) -> str:
    """The shared policy's "… Trigger at … tokens" caption under the thresholds of the tuning view."""
    return page.locator("[data-testid='stMain'] [data-testid='stCaptionContainer']").filter(
        has_text=re.compile(r"Trigger at [\d,]+ tokens")).first.inner_text()


def assert_no_error(page, when: str) -> None:
    assert not page.locator(EXCEPTION).count(), f"exception element after {when}"
    errors = page.locator(ERROR_ALERT).all_inner_texts()
    assert not errors, f"error after {when}: {errors}"


# ---------------------------------------------------------------------------------------------------- hostile log
def test_hostile_log_text_renders_inert(page, app_url: str):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        open_app(page, f"{app_url}?log={HOSTILE_SAMPLE}")
        assert HOSTILE_SAMPLE in " ".join(page.locator("[data-testid='stCaptionContainer']").all_inner_texts())
        set_number(page, "Context window (tokens)", 20_000)
        points = step_points(page)
        assert points, "the tokens chart has no clickable step points"
        click_point(page, points[max(points)])
        show_details(page)
        page.locator("[data-testid='stButtonGroup'] button").filter(has_text="All messages").first.click()
        settle(page)
        # only the tool whose name carries an image tag (its 1 MB result among them): the filter lists the name inert
        tools = page.locator("[data-testid='stMultiSelect']").filter(has_text="Tools").first
        tools.locator("input").first.click()
        tools.locator("input").first.fill("onerror")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        settle(page)
        open_expanders(page, page.locator("[data-testid='stExpander'] summary").filter(
            has_text=re.compile("Original|Full message")), 8)
        page.wait_for_timeout(500)
        assert page.locator("[data-testid='stExpander'] details[open] [data-testid='stCode']").count() >= 1

        assert page.dialogs == []
        assert page.evaluate("() => typeof window.__pwned") == "undefined"
        injected = page.evaluate("""() => ({
            scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('__pwned')).length,
            images: document.querySelectorAll('img[src="x"], [onerror]').length,
            iframes: [...document.querySelectorAll('iframe')].filter(f => f.outerHTML.includes('__pwned')).length,
            links: document.querySelectorAll('a[href^="javascript:"]').length,
            bold: [...document.querySelectorAll('b, strong')].filter(b => b.textContent === 'bold').length,
            math: [...document.querySelectorAll('.katex')].filter(k => k.textContent.trim() === 'x').length,
        })""")
        assert injected == {"scripts": 0, "images": 0, "iframes": 0, "links": 0, "bold": 0, "math": 0}
        shown = page.locator("[data-testid='stMain']").inner_text()
        for text in HOSTILE:
            assert text in shown, text
        assert HUGE_LINE[:60] in shown  # the 1 MB line is shown (cut), as text
        assert not page.locator(EXCEPTION).count()
    finally:
        page.screenshot(path=str(ARTIFACTS / "abuse_hostile_log.png"))


# ------------------------------------------------------------------------------------------- upload over the cap
def test_an_upload_over_the_cap_gets_streamlits_size_message(page, app_url: str, tmp_path: Path):
    open_app(page, app_url)
    big = tmp_path / "too_big.json"
    big.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * (2 * 1024 * 1024)}]}))
    sidebar = page.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_text(f"{UPLOAD_CAP_MB}MB per file").count() >= 1  # the cap is stated before uploading
    sidebar.locator("input[type='file']").first.set_input_files(str(big))
    cap = re.compile(rf"File must be {UPLOAD_CAP_MB}(\.0)? ?MB or smaller")
    # Streamlit marks the rejected file (a red chip) and announces the reason to screen readers ...
    chip = sidebar.locator("[data-testid='stFileChip'][aria-invalid='true']").filter(has_text="too_big.json").first
    chip.wait_for(timeout=WAIT_MS)
    announced = page.locator(f"[id='{chip.get_attribute('aria-describedby')}']")
    assert announced.get_attribute("role") == "alert" and cap.search(announced.inner_text())
    # ... and shows it in a tooltip when the pointer is on the chip
    chip.hover()
    tooltip = page.get_by_role("tooltip").filter(has_text=cap).first
    tooltip.wait_for(state="visible", timeout=10_000)
    box = tooltip.bounding_box()
    assert box is not None and box["width"] > 50 and box["height"] > 10
    page.wait_for_timeout(500)  # the tooltip fades in
    page.screenshot(path=str(ARTIFACTS / "abuse_upload_over_cap.png"))
    settle(page)
    assert not page.locator(EXCEPTION).count()
    caption = " ".join(page.locator("[data-testid='stCaptionContainer']").all_inner_texts())
    assert "too_big.json" not in caption and source.DEFAULT_SAMPLE in caption  # the sample is still replayed


# ------------------------------------------------------------------------------------- 50 changes and step clicks
def test_fifty_parameter_changes_and_step_clicks(page, app_url: str):
    open_app(page, app_url)
    set_number(page, "Context window (tokens)", 20_000)
    compact_at = page.get_by_role("slider", name=re.compile(r"^Compact at")).first
    windows = (18_000, 22_000, 26_000, 20_000)
    min_tokens = (0, 150, 400, 200)
    started = time.monotonic()
    for i in range(50):
        kind, round_ = i % 4, i // 4
        trigger_before = trigger_caption(page)
        if kind == 0:
            set_number(page, "Context window (tokens)", windows[round_ % len(windows)])
            what = "a context window change"
        elif kind == 1:
            compact_at.focus()
            compact_at.press("ArrowRight" if round_ % 2 == 0 else "ArrowLeft")
            settle(page)
            what = "a compact_at change"
        elif kind == 2:
            value = min_tokens[round_ % len(min_tokens)]
            open_parameters(page, "Setup A")
            set_number(page, "Min tokens", value)
            assert page.get_by_role("spinbutton", name="Min tokens").first.input_value() == str(value)
            page.keyboard.press("Escape")
            what = "a min_tokens change"
        else:
            points = step_points(page)
            assert len(points) >= 5
            steps = sorted(points)
            target = steps[(i * 7) % len(steps)]
            click_point(page, points[target])
            assert _context_step(page) == target
            what = "a step click"
        if kind in (0, 1):  # the change reached the script: the trigger it reports moved
            assert trigger_caption(page) != trigger_before, what
        assert_no_error(page, f"action {i + 1} ({what})")
    elapsed = time.monotonic() - started
    print(f"50 parameter changes and step clicks took {elapsed:.1f} s ({elapsed / 50:.2f} s each)")
    assert page.dialogs == []
    assert page.locator(f"{CHART} svg.marks").count() >= 1
