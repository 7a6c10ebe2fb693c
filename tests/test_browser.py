"""End to end in headless Chromium: start ``streamlit run app.py``, click a step on the tokens chart, check that the
side-by-side panel follows, and save screenshots (``tests/artifacts/``) at 1366×768 and 1920×1080.

Needs Debian's ``/usr/bin/chromium`` and the playwright package (``playwright install`` cannot download browsers
here); skipped cleanly when either is missing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_page import CHART
from browser_page import open_expanders
from browser_page import open_parameters
from browser_page import settle
from browser_page import show_details
from conftest import ROOT
from conftest import SAMPLES
from conftest import STARTUP_SECONDS
from conftest import streamlit_app

import compaction
from compaction.ui import source

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "tests" / "artifacts"
VIEWPORTS = ((1366, 768), (1920, 1080))


@pytest.fixture(scope="module")
def samples_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The bundled samples when the default one exists; otherwise a folder with the AppTest suite's coding log."""
    env = {**os.environ, "COMPACTION_LAB_LOCAL_SESSIONS": "0"}  # never list the sessions of whoever runs the tests
    env.pop("COMPACTION_LAB_SAMPLES", None)
    if (SAMPLES / source.DEFAULT_SAMPLE).exists():
        return env
    from test_app import coding_log

    folder = tmp_path_factory.mktemp("samples")
    (folder / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(coding_log(), "openai")))
    env["COMPACTION_LAB_SAMPLES"] = str(folder)
    return env


@pytest.fixture(scope="module")
def app_url(samples_env: dict[str, str]) -> Iterator[str]:
    with streamlit_app(samples_env) as url:
        yield url


def _context_step(page) -> int:
    show_details(page)
    heading = page.get_by_role("heading", name=re.compile(r"^What each setup sends at step \d+")).first
    return int(re.search(r"step (\d+)", heading.inner_text()).group(1))


def _open(browser, url: str, width: int, height: int, small_log: bool):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    settle(page)
    page.wait_for_selector(f"{CHART} svg.marks g.mark-symbol path", timeout=STARTUP_SECONDS * 1000)
    if small_log:  # the stand-in log is small: a small window makes both setups compact
        window = page.get_by_role("spinbutton", name="Context window (tokens)")
        window.fill("20000")
        window.press("Enter")
        settle(page)
    return page


def _step_points(page, minimum: int = 5) -> dict[int, object]:
    """The uncompacted log's clickable points on the tokens chart, by step (read from their aria labels).

    Vega draws the chart after the script has finished, and draws it again when Streamlit replaces the element, so
    the points are read until at least ``minimum`` are there (or a few seconds have passed)."""
    page.wait_for_selector(f"{CHART} svg.marks g.mark-symbol path[aria-label*='series: Uncompacted log']",
                           timeout=STARTUP_SECONDS * 1000)
    points: dict[int, object] = {}
    for _ in range(40):
        points = {}
        symbols = page.locator(f"{CHART}").first.locator("svg.marks g.mark-symbol path")
        for i in range(symbols.count()):
            label = symbols.nth(i).get_attribute("aria-label") or ""
            match = re.search(r"series: Uncompacted log; step: (\d+);", label)
            if match:
                points[int(match.group(1))] = symbols.nth(i)
        if len(points) >= minimum:
            break
        page.wait_for_timeout(250)
    return points


@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_clicking_a_step_updates_the_side_by_side_panel(browser, app_url: str, samples_env: dict[str, str],
                                                        width: int, height: int):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = _open(browser, app_url, width, height, small_log="COMPACTION_LAB_SAMPLES" in samples_env)
    try:
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_top.png"))
        points = _step_points(page)
        assert len(points) >= 5, "the tokens chart has no clickable step points"
        before = _context_step(page)
        target = max(points) - 1 if max(points) - 1 != before else max(points) - 2
        point = points[target]
        point.scroll_into_view_if_needed()
        box = point.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        settle(page)
        show_details(page)
        page.wait_for_function(
            "step => [...document.querySelectorAll('h3')].some(h => h.innerText.startsWith("
            "'What each setup sends at step ' + step))",
            arg=target,
            timeout=30_000,
        )
        assert _context_step(page) == target
        assert page.get_by_role("slider", name="Step (LLM call)").input_value() == str(target)
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_chart.png"))
        page.get_by_role("heading", name=re.compile(r"^What each setup sends at step")).first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_context.png"))
        page.get_by_text("Diff of two setups at this step").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_diff.png"))
        open_tab(page, "Inside one setup")
        page.get_by_role("heading", name="Inside one setup").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_inside.png"))
        page.get_by_text("Message lifecycle").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"app_{width}x{height}_lifecycle.png"))
        assert not page.locator("[data-testid='stException']").count()
    finally:
        page.close()


def open_tab(page, name: str) -> None:
    """Click a detail tab under the tuning view and wait for its content."""
    page.get_by_role("tab", name=re.compile(re.escape(name))).first.click()
    settle(page)


def _sidebar_headers(page) -> list[str]:
    return [h.strip() for h in page.locator("[data-testid='stSidebar'] h2").all_inner_texts()]


def test_a_full_session_add_change_click_open_download_and_reload(browser, app_url: str,
                                                                  samples_env: dict[str, str], tmp_path: Path):
    page = _open(browser, app_url, 1366, 768, small_log="COMPACTION_LAB_SAMPLES" in samples_env)
    try:
        page.get_by_role("button", name="Add a setup").click()
        settle(page)
        assert any(h.startswith("■ Setup C") for h in _sidebar_headers(page))
        show_details(page)
        saved_before = page.locator("[data-testid='stMetric']").all_inner_texts()
        open_parameters(page, "Setup A")
        tokens = page.get_by_role("spinbutton", name="Min tokens").first
        # created when the popover opens, after several runs: it shows the value the setup runs with, not its minimum
        assert tokens.input_value() == "200"
        tokens.fill("0")
        tokens.press("Enter")
        settle(page)
        page.keyboard.press("Escape")
        show_details(page)
        assert page.locator("[data-testid='stMetric']").all_inner_texts() != saved_before
        points = _step_points(page)
        target = max(points)
        point = points[target]
        point.scroll_into_view_if_needed()
        box = point.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        settle(page)
        show_details(page)
        page.wait_for_function(
            "step => [...document.querySelectorAll('h3')].some(h => h.innerText.startsWith("
            "'What each setup sends at step ' + step))", arg=target, timeout=30_000)
        original = page.locator("[data-testid='stExpander'] summary").filter(has_text=re.compile("Original|Full message"))
        original.first.scroll_into_view_if_needed()
        original.first.click()
        settle(page)
        # the expander is filled by the rerun its opening starts: wait for the text rather than for idle
        opened = page.locator("[data-testid='stExpander'] details[open] [data-testid='stCode']")
        opened.first.wait_for(timeout=STARTUP_SECONDS * 1000)
        assert opened.count() >= 1
        page.screenshot(path=str(ARTIFACTS / "app_1366x768_original.png"))
        open_tab(page, "Summary & share")
        page.get_by_role("heading", name="Share and export").scroll_into_view_if_needed()
        with page.expect_download() as download_info:
            page.get_by_role("button", name="Download the setups (JSON)").click()
        path = tmp_path / "setups.json"
        download_info.value.save_as(path)
        exported = json.loads(path.read_text())
        assert [s["label"] for s in exported["setups"]] == ["A", "B", "C"]
        assert exported["setups"][0]["params"]["min_tokens"] == 0
        page.screenshot(path=str(ARTIFACTS / "app_1366x768_share.png"))
        assert "setups=" in page.url and "step=" in page.url
        page.reload()
        settle(page)
        page.wait_for_selector(f"{CHART} svg.marks g.mark-symbol path", timeout=STARTUP_SECONDS * 1000)
        assert any(h.startswith("■ Setup C") for h in _sidebar_headers(page))
        open_parameters(page, "Setup A")
        assert page.get_by_role("spinbutton", name="Min tokens").first.input_value() == "0"
        page.keyboard.press("Escape")
        assert _context_step(page) == target
        assert not page.locator("[data-testid='stException']").count()
        if "COMPACTION_LAB_SAMPLES" not in samples_env:  # the tour needs the bundled samples
            page.get_by_role("button", name="Guided tour").click()
            page.get_by_role("button", name="A sliding window loses the task").click()
            settle(page)
            page.keyboard.press("Escape")  # close the tour's popover
            show_details(page)
            page.get_by_text("Lesson — A sliding window loses the task").wait_for(timeout=30_000)
            assert page.get_by_text("first user request lost").count() >= 1
            assert not any(h.startswith("■ Setup C") for h in _sidebar_headers(page))  # replaced by the lesson's
            page.screenshot(path=str(ARTIFACTS / "app_1366x768_tour.png"))
            page.get_by_role("button", name="Undo").click()  # the user's own setups come back
            settle(page)
            page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stSidebar] h2')]"
                                   ".some(h => h.innerText.startsWith('■ Setup C'))", timeout=30_000)
            open_parameters(page, "Setup A")
            assert page.get_by_role("spinbutton", name="Min tokens").first.input_value() == "0"
            page.keyboard.press("Escape")
            assert not page.locator("[data-testid='stException']").count()
    finally:
        page.close()


INJECTIONS = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
              "[click me](javascript:alert(1)) **LOUD** <b>bold</b> :red[alarm]")


def _hostile_log() -> bytes:
    from compaction.conversation import Conversation
    from compaction.conversation import ToolCall
    from compaction.conversation import assistant
    from compaction.conversation import system
    from compaction.conversation import tool
    from compaction.conversation import user

    messages = [system("You are terse. " + INJECTIONS[2]), user("Please help. " + INJECTIONS[0] + " " + INJECTIONS[1])]
    for i in range(6):
        call = ToolCall(id=f"c{i}", name="read_file", arguments={"path": INJECTIONS[1]})
        messages.append(assistant(f"Reading {INJECTIONS[0]}", [call]))
        messages.append(tool(call, (INJECTIONS[1] + " " + INJECTIONS[2] + "\n") * 400))
    messages.append(assistant("Done " + INJECTIONS[1]))
    return json.dumps(compaction.convert(Conversation(messages=tuple(messages)), "openai")).encode()


def test_hostile_log_text_renders_as_inert_text(browser, app_url: str, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(app_url)
        settle(page)
        upload = tmp_path / "hostile.json"
        upload.write_bytes(_hostile_log())
        page.locator("[data-testid='stSidebar'] input[type='file']").first.set_input_files(str(upload))
        # the rerun the upload starts may not have begun when the page first looks idle (a loaded machine):
        # wait for the sidebar's "What was read" to name the uploaded file, then for its chart
        page.locator("[data-testid='stSidebar']").get_by_text("uploaded file: hostile.json").first.wait_for(
            timeout=STARTUP_SECONDS * 1000)
        settle(page)
        page.wait_for_selector(f"{CHART} svg.marks", timeout=STARTUP_SECONDS * 1000)
        window = page.get_by_role("spinbutton", name="Context window (tokens)").first
        window.fill("8000")
        window.press("Enter")
        settle(page)
        show_details(page)
        page.locator("[data-testid='stButtonGroup'] button").filter(has_text="All messages").first.click()
        settle(page)
        open_expanders(page, page.locator("[data-testid='stMain'] [data-testid='stExpander'] summary").filter(
            has_text=re.compile("Original|Full ")), 6)
        page.wait_for_timeout(500)
        assert dialogs == []
        injected = page.evaluate("""() => ({
            images: document.querySelectorAll('img[src="x"], [onerror]').length,
            scripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(1)')).length,
            links: document.querySelectorAll('a[href^="javascript:"]').length,
            bold: [...document.querySelectorAll('b, strong')].filter(b => b.textContent === 'bold'
                                                                       || b.textContent === 'LOUD').length,
        })""")
        assert injected == {"images": 0, "scripts": 0, "links": 0, "bold": 0}
        body = page.locator("[data-testid='stMain']").inner_text()
        assert "<img src=x onerror=alert(1)>" in body and "<script>alert(1)</script>" in body
        assert not page.locator("[data-testid='stException']").count()
    finally:
        page.screenshot(path=str(ARTIFACTS / "app_1366x768_hostile.png"), full_page=True)
        page.close()
