"""The tuning view in headless Chromium on the real logs (the Codex rollout and the largest Claude Code session): at
1366×768 the thresholds, the strategy pickers and the tokens chart are on screen together; the legend names every
series, the provider-reported one included; threshold labels never cover each other; a step click redraws the chart
in place (no new embed); with 4 setups no card truncates a number. One server and one page for all of it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_page import CHART
from browser_page import open_parameters
from browser_page import settle
from browser_page import show_details
from conftest import ROOT
from conftest import STARTUP_SECONDS
from conftest import real_log
from conftest import streamlit_app

from compaction import charts
from compaction.ui import source

pytestmark = pytest.mark.browser

ARTIFACTS = ROOT / "tests" / "artifacts"
CODEX = "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
CLAUDE_CODE = "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
WIDTH, HEIGHT = 1366, 768


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    logs = [real_log(CODEX), real_log(CLAUDE_CODE)]
    folder = tmp_path_factory.mktemp("real_samples")
    for log in logs:
        (folder / log.name).symlink_to(log)
    env = {**os.environ, "COMPACTION_LAB_SAMPLES": str(folder), "COMPACTION_LAB_LOCAL_SESSIONS": "0"}
    with streamlit_app(env) as url:
        yield url


def _settle(page) -> None:
    settle(page)
    page.wait_for_timeout(600)  # Vega draws after the script has finished


def _visible(page, locator) -> bool:
    """Whether the whole element is inside the viewport without scrolling."""
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= WIDTH


def _tuning_on_one_screen(page) -> None:
    chart = page.locator(f"{CHART} svg.marks").first
    controls = [page.get_by_role("spinbutton", name="Context window (tokens)").first,
                page.get_by_role("slider", name=re.compile("^Compact at")).first,
                page.get_by_role("slider", name=re.compile("^Compact to")).first,
                page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").filter(
                    has_text=re.compile("Setup B")).first]
    assert page.evaluate("window.scrollY") == 0
    assert _visible(page, chart), chart.bounding_box()
    assert all(_visible(page, c) for c in controls), [c.bounding_box() for c in controls]


def _chart_texts(page) -> list[str]:
    return page.evaluate("(chart) => [...document.querySelector(chart).querySelectorAll('svg text')]"
                         ".map(t => t.textContent)", CHART)


def _legend_colours(page) -> dict[str, str]:
    """The tokens chart's series legend: each label and its symbol's fill."""
    entries = page.evaluate("""(chart) => {
        const legend = document.querySelector(chart).querySelectorAll('.role-legend')[0];
        const fills = [...legend.querySelectorAll('.role-legend-symbol path')].map(p => p.getAttribute('fill'));
        const labels = [...legend.querySelectorAll('.role-legend-label text')].map(t => t.textContent);
        return labels.map((label, i) => [label, fills[i]]);
    }""", CHART)
    return dict(entries)


def _labels_overlap(page) -> list[tuple[str, str]]:
    """Pairs of threshold labels (window, trigger, target) whose boxes intersect."""
    boxes = page.evaluate("""(chart) => [...document.querySelector(chart).querySelectorAll('svg text')]
        .filter(t => /^(context window|trigger|target)/.test(t.textContent))
        .map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.left, r.top, r.right, r.bottom]; })""",
                          CHART)
    return [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]]


def _pick(page, title: str, position: int) -> None:
    picker = page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").nth(position)
    picker.locator("input").first.click()
    picker.locator("input").first.fill(title)
    page.get_by_role("option", name=title, exact=True).first.click()
    _settle(page)


def test_the_tuning_view_on_the_real_logs(browser, app_url: str):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        page.goto(app_url)
        page.wait_for_selector(f"{CHART} svg.marks", timeout=STARTUP_SECONDS * 1000)
        _settle(page)
        assert page.get_by_role("spinbutton", name="Context window (tokens)").input_value() == "258400"  # the log's
        _tuning_on_one_screen(page)
        assert "provider-reported prompt tokens" in _chart_texts(page)
        page.screenshot(path=str(ARTIFACTS / "tuning_codex_1366x768.png"))

        sample = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").first
        sample.click()
        page.get_by_role("option", name=Path(CLAUDE_CODE).name).click()
        _settle(page)
        window = page.get_by_role("spinbutton", name="Context window (tokens)")
        window.fill("120000")
        window.press("Enter")
        _settle(page)
        _tuning_on_one_screen(page)
        texts = _chart_texts(page)
        for name in ("Uncompacted log", "A · Haystack · ToolResultPruningCompactor",
                     "B · Agent Framework (.NET) · ToolResultCompactionStrategy", "provider-reported prompt tokens",
                     "compaction", "declined trigger", "agent compacted"):
            assert name in texts, (name, texts)
        page.screenshot(path=str(ARTIFACTS / "tuning_claude_code_1366x768.png"))

        # a step click marks the step in the same embedded chart
        svg = page.locator(f"{CHART} svg.marks").first
        svg.evaluate("node => { node.__before_click = true; }")
        point = page.locator(f"{CHART} svg.marks g.mark-symbol path[aria-label*='series: Uncompacted log; step: 100;']")
        box = point.first.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        _settle(page)
        show_details(page)
        page.wait_for_function("() => [...document.querySelectorAll('h3')].some(h => h.innerText.startsWith("
                               "'What each setup sends at step 100'))", timeout=30_000)
        assert "step 100" in _chart_texts(page)
        assert page.locator(f"{CHART} svg.marks").first.evaluate("node => node.__before_click === true")

        for _ in range(2):
            page.get_by_role("button", name="Add a setup").click()
            _settle(page)
        _pick(page, "Claude Code · auto-compact", 2)
        svg = page.locator(f"{CHART} svg.marks").first
        svg.evaluate("node => { node.__before_switch = true; }")
        _pick(page, "Haystack · SlidingWindowCompactor", 3)
        texts = _chart_texts(page)
        assert "C · Claude Code · auto-compact" in texts and "D · Haystack · SlidingWindowCompactor" in texts
        # a strategy switch renames a series, which is data: the chart is updated in place, not embedded again
        assert page.locator(f"{CHART} svg.marks").first.evaluate("node => node.__before_switch === true")
        # and every series keeps its colour (the legend's order is Vega's sort of the names)
        assert _legend_colours(page) == {
            "A · Haystack · ToolResultPruningCompactor": charts.setup_color(0),
            "B · Agent Framework (.NET) · ToolResultCompactionStrategy": charts.setup_color(1),
            "C · Claude Code · auto-compact": charts.setup_color(2),
            "D · Haystack · SlidingWindowCompactor": charts.setup_color(3),
            "Uncompacted log": charts.BASELINE_COLOR, "provider-reported prompt tokens": charts.USAGE_COLOR}
        assert not _labels_overlap(page)
        show_details(page)
        assert page.get_by_text(re.compile(r"still over the 120,000-token window|no call over the 120,000-token "
                                           r"window")).count() == 4  # one per setup
        truncated = page.evaluate("""() => [...document.querySelectorAll('[data-testid=stMetricValue] *')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)""")
        assert truncated == []
        page.get_by_role("heading", name="Results").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "tuning_4_setups_1366x768.png"))
        assert not page.locator("[data-testid='stException']").count()
        assert source.DEFAULT_SAMPLE not in page.locator("[data-testid='stSidebar']").inner_text()
    finally:
        page.close()


def _deltas_by_root(frames: list[bytes]) -> dict[int, int]:
    """How many element deltas the server sent into each root container (0 the main area, 1 the sidebar)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    roots: dict[int, int] = {}
    for frame in frames:
        message = ForwardMsg()
        message.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
        if message.WhichOneof("type") == "delta" and message.metadata.delta_path:
            root = message.metadata.delta_path[0]
            roots[root] = roots.get(root, 0) + 1
    return roots


def _open_watched(browser, url: str) -> tuple[object, list[bytes]]:
    """A new page on the app at 1366×768, drawn, with the list the server's websocket frames are appended to."""
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda frame: frames.append(frame)))
    page.goto(url)
    page.wait_for_selector(f"{CHART} svg.marks", timeout=STARTUP_SECONDS * 1000)
    _settle(page)
    return page, frames


def _element_kinds(frames: list[bytes]) -> dict[str, int]:
    """How many elements of each kind (``metric``, ``vega_lite_chart``…) the server sent."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    kinds: dict[str, int] = {}
    for frame in frames:
        message = ForwardMsg()
        message.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
        if message.WhichOneof("type") == "delta" and message.delta.WhichOneof("type") == "new_element":
            kind = message.delta.new_element.WhichOneof("type")
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def test_the_part_under_the_tuning_view_is_drawn_only_on_screen(browser, app_url: str):
    """At 1366×768 the tuning view fills the screen: the cards and the tabs under it are not drawn, a threshold press
    sends nothing of them, and the page keeps its height; scrolling down draws them with the current numbers and the
    tab that was open. At 1920×1080 the cards are in sight and drawn, the tabs are not."""
    page, frames = _open_watched(browser, app_url)
    try:
        page.wait_for_function("() => !document.querySelector('[data-testid=stMetric]')", timeout=30_000)
        main = page.locator("[data-testid='stMain']").first
        assert main.evaluate("node => node.scrollHeight") > 3 * HEIGHT  # room kept for what is not drawn
        # a keyboard reaches the undrawn cards: focusing their region scrolls it into view, which draws it
        page.get_by_role("region", name=re.compile(r"^Results: the cards .*drawn when scrolled into view")).focus()
        page.get_by_role("heading", name="Results").first.wait_for(timeout=30_000)
        main.evaluate("node => node.scrollTo(0, 0)")
        page.wait_for_function("() => !document.querySelector('[data-testid=stMetric]')", timeout=30_000)
        frames.clear()
        window = page.get_by_role("spinbutton", name="Context window (tokens)")
        window.fill("150000")
        window.press("Enter")
        _settle(page)
        kinds = _element_kinds(frames)
        assert kinds.get("vega_lite_chart") == 1 and "metric" not in kinds, kinds  # the tokens chart, no card
        assert page.get_by_role("heading", name="Results").count() == 0
        show_details(page)
        assert page.locator("[data-testid='stMetric']").count() >= 6  # the log's card and two setups'
        assert page.get_by_text(re.compile(r"150,000-token window")).count() >= 2
        page.get_by_role("heading", name=re.compile(r"^What each setup sends at step")).first.wait_for(timeout=30_000)

        # what its widgets hold survives the runs that leave it undrawn: the open tab comes back open
        page.get_by_role("tab", name=re.compile("Summary & share")).click()
        _settle(page)
        main.evaluate("node => node.scrollTo(0, 0)")
        page.wait_for_function("() => !document.querySelector('[data-testid=stMetric]')", timeout=30_000)
        window.fill("160000")
        window.press("Enter")
        _settle(page)
        assert page.get_by_role("heading", name="Results").count() == 0
        show_details(page)
        selected = page.get_by_role("tab", name=re.compile("Summary & share")).first
        assert selected.get_attribute("aria-selected") == "true"
        page.get_by_role("button", name="Download the setups (JSON)").wait_for(timeout=30_000)

        # at 1920×1080 the cards are in sight under the chart and drawn; the tabs under them are not
        page.set_viewport_size({"width": 1920, "height": 1080})
        main.evaluate("node => node.scrollTo(0, 0)")
        page.wait_for_function("() => ![...document.querySelectorAll('[role=tab]')].length", timeout=30_000)
        window.fill("170000")
        window.press("Enter")
        _settle(page)
        assert page.locator("[data-testid='stMetric']").count() >= 6
        assert page.get_by_text(re.compile(r"170,000-token window")).count() >= 2
        assert page.get_by_role("tab").count() == 0
        assert not page.locator("[data-testid='stException']").count()
    finally:
        page.close()


def test_a_threshold_change_reruns_only_the_tuning_view(browser, app_url: str, tmp_path: Path):
    """The strategy pickers, the thresholds, the replays and everything under them are one fragment: a new window, a
    strategy switch and a parameter change send nothing for the sidebar (its setups stay as drawn), and the setups
    file holds the thresholds, strategies and parameters as they are now."""
    page, frames = _open_watched(browser, app_url)
    try:
        window = page.get_by_role("spinbutton", name="Context window (tokens)")
        frames.clear()
        window.fill("150000")
        window.press("Enter")
        _settle(page)
        page.get_by_text(re.compile(r"Trigger at \d")).filter(has_text=f"{int(150_000 * 0.7):,}").first.wait_for(
            timeout=30_000)  # the default compact_at, 0.7, of the new window
        roots = _deltas_by_root(frames)
        assert roots.get(0, 0) > 0 and roots.get(1, 0) == 0, roots  # main area only, nothing for the sidebar
        show_details(page)
        page.get_by_role("tab", name=re.compile("Summary & share")).click()
        _settle(page)
        with page.expect_download() as download_info:
            page.get_by_role("button", name="Download the setups (JSON)").click()
        path = tmp_path / "setups.json"
        download_info.value.save_as(path)
        assert {s["context_window"] for s in json.loads(path.read_text())["setups"]} == {150_000}

        frames.clear()
        _pick(page, "Haystack · SlidingWindowCompactor", 1)
        roots = _deltas_by_root(frames)
        assert roots.get(0, 0) > 0 and roots.get(1, 0) == 0, roots  # the switch reruns the tuning view only
        assert page.get_by_role("spinbutton", name="Context window (tokens)").input_value() == "150000"

        frames.clear()  # setup B's parameters open beside its picker, and are the new strategy's
        open_parameters(page, "Setup B")
        slider = page.get_by_role("slider", name=re.compile("Min keep steps"))
        slider.wait_for(timeout=10_000)
        slider.focus()
        slider.press("ArrowRight")  # 1 -> 2
        _settle(page)
        page.keyboard.press("Escape")
        roots = _deltas_by_root(frames)
        assert roots.get(0, 0) > 0 and roots.get(1, 0) == 0, roots
        show_details(page)
        with page.expect_download() as download_info:
            page.get_by_role("button", name="Download the setups (JSON)").click()
        download_info.value.save_as(path)
        chosen = {s["label"]: s for s in json.loads(path.read_text())["setups"]}
        assert chosen["B"]["strategy"] == "haystack.sliding_window", chosen
        assert chosen["B"]["params"]["min_keep_steps"] == 2, chosen
        assert not page.locator("[data-testid='stException']").count()
    finally:
        page.close()
