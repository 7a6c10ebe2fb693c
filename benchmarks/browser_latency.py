"""Browser latency: a threshold key press in the app, until the tokens chart is redrawn and the page is idle, against
the same on a minimal Streamlit page, in the same headless Chromium.

The app serves the largest Claude Code log of ``../shared/real_logs/claude-code`` (or ``--log``) as its only sample;
the minimal page is a number input and one altair chart of as many points as the app's tokens chart draws, redrawn
from the input's value. Playwright drives Debian's chromium. In the page, a MutationObserver records when the chart
last changed and when the app last became idle; a figure is the later of the two minus the key press (all three
``performance.now()`` in the page), once nothing has changed for a while.

Figures, each a median over ``--changes`` presses (every press a value not seen before, so the replays run) after
:data:`WARMUP` untimed ones, against the median of the minimal page's presses made in between (each press of the app
is followed by one of the minimal page, open in another tab of the same browser: on a shared machine a busy moment
slows both, so the ratio holds where either figure alone moves by ±20 %):

- the minimal page: Enter in its number input after typing a new value;
- the app with 2 setups: the same on the context window, and a key press on the compact_at slider;
- the app with 4 setups: the same two;
- a strategy switch (setup B's picker, alternately two strategies), with 2 setups.

Targets: 2 setups at most 1.5× the minimal page, 4 setups and a strategy switch at most 2×, at 1366×768. There the
tuning view fills the screen and the app leaves the cards and tabs under it undrawn (:mod:`compaction.ui.in_view`);
``--viewport 1920x1080`` measures a screen where the cards are in view, so they are redrawn on every press.

    python benchmarks/browser_latency.py [--log LOG] [--changes N] [--viewport WIDTHxHEIGHT]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from figures import Figure
from figures import print_figures
from make_logs import REAL_LOGS

from compaction.ui.server import STARTUP_SECONDS
from compaction.ui.server import free_port
from compaction.ui.server import streamlit_app
from compaction.ui.server import wait_healthy

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CHART = "[data-testid='stVegaLiteChart']"
APP = "[data-testid='stApp']"
IDLE = f"{APP}[data-test-script-state='notRunning']"
RUNNING = f"{APP}[data-test-script-state='running']"
#: nothing in the page may change for this long before a measure is read
QUIET_MS = 600
VIEWPORT = {"width": 1366, "height": 768}
#: untimed presses after a page opens (the browser's first redraws compile Vega's and React's code paths)
WARMUP = 3
#: ratio targets against the minimal page
TARGET_2 = 1.5
TARGET_4 = 2.0
TARGET_SWITCH = 2.0
#: the two strategies a switch alternates between (setup B starts on the first)
SWITCH = ("Agent Framework (.NET) · ToolResultCompactionStrategy", "Haystack · SlidingWindowCompactor")

#: records the key press, the last change inside the first chart of the page, and when the app last became idle
_WATCH = """
() => {
  window.__keyAt = 0; window.__chartAt = 0; window.__idleAt = 0; window.__changedAt = 0;
  document.addEventListener("keydown", () => { window.__keyAt = performance.now(); }, true);
  new MutationObserver((mutations) => {
    const now = performance.now();
    window.__changedAt = now;
    const chart = document.querySelector("CHART");
    if (chart && mutations.some((m) => chart.contains(m.target))) window.__chartAt = now;
    const app = document.querySelector("APP");
    if (app && app.getAttribute("data-test-script-state") === "notRunning"
        && mutations.some((m) => m.target === app && m.attributeName === "data-test-script-state")) {
      window.__idleAt = now;
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
}
""".replace("CHART", CHART).replace("APP", APP)

#: installed before any page script: a chart drawn on a canvas changes no DOM node, so every draw into a canvas of the
#: first chart on the page (Vega clears it before each redraw) counts as a change of that chart
_CANVAS_WATCH = """
(() => {
  const clear = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...args) {
    const chart = document.querySelector("CHART");
    if (chart && chart.contains(this.canvas)) { window.__chartAt = performance.now(); window.__changedAt = window.__chartAt; }
    return clear.apply(this, args);
  };
})();
""".replace("CHART", CHART)

#: the minimal page: a number input and one altair chart of ``POINTS`` points that follow it
MINIMAL_PAGE = """
import altair as alt
import pandas as pd
import streamlit as st

value = st.number_input("Value", min_value=1, max_value=10_000_000, value=200_000, step=1_000)
steps = POINTS // 3
frame = pd.DataFrame([{"step": k, "series": s, "tokens": (k * value) // steps + 500 * n}
                      for n, s in enumerate(("a", "b", "c")) for k in range(steps)])
st.altair_chart(alt.Chart(frame).mark_line(point=True).encode(x="step:Q", y="tokens:Q", color="series:N"),
                width="stretch")
"""


def real_logs() -> Path | None:
    """The team's real logs: ``../shared/real_logs`` of this checkout, or of a folder above it (a git worktree)."""
    for folder in (REAL_LOGS, *(p / "shared" / "real_logs" for p in Path(__file__).resolve().parents)):
        if folder.is_dir():
            return folder
    return None


def largest_claude_code_log() -> Path | None:
    """The largest Claude Code session of :func:`real_logs` (its subagents' own files left out), or None."""
    root = real_logs()
    folder = root / "claude-code" if root is not None else None
    logs = [p for p in folder.glob("*.jsonl") if "subagent" not in p.name] if folder and folder.is_dir() else []
    return max(logs, key=lambda p: p.stat().st_size, default=None)


@contextmanager
def minimal_page(points: int) -> Iterator[str]:
    """Serve :data:`MINIMAL_PAGE` with ``points`` points; yields its URL."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "minimal.py"
        script.write_text(textwrap.dedent(MINIMAL_PAGE).replace("POINTS", str(points)))
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"], cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(port, proc)
            yield f"http://127.0.0.1:{port}/"
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def _quiet(page) -> None:
    """Wait until the app is idle and nothing in the page has changed for :data:`QUIET_MS`."""
    page.wait_for_selector(IDLE, timeout=STARTUP_SECONDS * 1000)
    page.wait_for_function(f"() => performance.now() - window.__changedAt > {QUIET_MS}", timeout=60_000,
                           polling=100)
    page.wait_for_selector(IDLE, timeout=STARTUP_SECONDS * 1000)


def _new_page(browser, viewport: dict[str, int] | None = None):
    page = browser.new_page(viewport=viewport or VIEWPORT)
    page.add_init_script(_CANVAS_WATCH)
    return page


def _open(page, url: str) -> None:
    page.goto(url, timeout=STARTUP_SECONDS * 1000)
    page.wait_for_selector(f"{CHART} svg, {CHART} canvas", timeout=STARTUP_SECONDS * 1000)
    page.wait_for_selector(IDLE, timeout=STARTUP_SECONDS * 1000)
    page.evaluate(_WATCH)
    _quiet(page)


def _measure(page, act: Callable[[], None]) -> float:
    """Milliseconds from the key press ``act`` makes to the chart redrawn and the page idle."""
    page.evaluate("() => { window.__keyAt = 0; window.__chartAt = 0; window.__idleAt = 0; }")
    act()
    try:
        page.wait_for_selector(RUNNING, timeout=1500)
    except Exception:  # noqa: BLE001 - a fast rerun may finish before the running state is seen
        pass
    page.wait_for_function("() => window.__keyAt && window.__chartAt > window.__keyAt", timeout=30_000, polling=50)
    _quiet(page)
    key_at, chart_at, idle_at = page.evaluate("() => [window.__keyAt, window.__chartAt, window.__idleAt]")
    if not key_at or chart_at <= key_at:
        raise RuntimeError(f"the chart did not change after the key press ({key_at=}, {chart_at=}, {idle_at=})")
    return max(chart_at, idle_at) - key_at


def _warm_up(page, act: Callable[[], None]) -> None:
    """An untimed press: it only has to run; the first one after a page opens sometimes changes the chart before the
    watcher sees it (then waiting for a change would time out)."""
    try:
        _measure(page, act)
    except Exception:  # noqa: BLE001 - a missed redraw of an untimed press costs nothing but the wait
        _quiet(page)


def _type_number(page, label: str | re.Pattern, value: int) -> Callable[[], None]:
    box = page.get_by_role("spinbutton", name=label).first

    def act() -> None:
        box.fill(str(value))
        box.press("Enter")
    return act


def _slider_key(page, key: str) -> Callable[[], None]:
    slider = page.get_by_role("slider", name=re.compile(r"^Compact at")).first

    def act() -> None:
        slider.focus()
        slider.press(key)
    return act


def _switch(page, title: str) -> Callable[[], None]:
    """Choose ``title`` in setup B's strategy picker (the main area's second picker), ending with Enter."""
    picker = page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").filter(
        has_text=re.compile("Setup B")).first

    def act() -> None:
        picker.locator("input").first.click()
        picker.locator("input").first.fill(title)
        page.get_by_role("option", name=title, exact=True).first.wait_for(timeout=10_000)
        page.keyboard.press("Enter")
    return act


def _chart_points(log: Path) -> int:
    """How many points the app's tokens chart draws on ``log``: one per LLM call and series (the uncompacted log and
    two setups)."""
    import compaction

    return 3 * len(compaction.load(log).llm_call_indices)


def _windows(start: int, count: int) -> list[int]:
    return [start + 1_000 * (k + 1) for k in range(count)]


class Reference:
    """The minimal page, open in its own tab of the same browser: one press (a value it has not seen) after each timed
    press of the app, so both see the same load of the machine at the same moment."""

    def __init__(self, page) -> None:
        self.page = page
        self.values = iter(range(200_000, 10**9, 1_000))

    def press(self) -> float:
        """One timed Enter in the minimal page's number input (its tab brought to the front first)."""
        self.page.bring_to_front()
        return _measure(self.page, _type_number(self.page, "Value", next(self.values)))


def _paired(page, reference: Reference, acts: list[Callable[[], None]]) -> tuple[list[float], list[float]]:
    """Each of ``acts`` timed in the app, each followed by a timed press of the minimal page."""
    app: list[float] = []
    minimal: list[float] = []
    for act in acts:
        page.bring_to_front()
        app.append(_measure(page, act))
        minimal.append(reference.press())
    return app, minimal


def run(log: Path, changes: int = 5, viewport: dict[str, int] | None = None) -> list[Figure]:
    """Measure the app on ``log`` against the minimal page, ``changes`` presses per figure, each press of the app
    followed by one of the minimal page (interleaved: a busy moment of the machine slows both). ``viewport``: the
    pages' size (default :data:`VIEWPORT`; the app draws what is under the tuning view only while it is on screen,
    which at 1920×1080 the cards are)."""
    from playwright.sync_api import sync_playwright

    points = _chart_points(log)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        (Path(folder) / log.name).symlink_to(log.resolve())
        env = {**os.environ, "COMPACTION_LAB_SAMPLES": folder, "COMPACTION_LAB_LOCAL_SESSIONS": "0"}
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            with streamlit_app(env) as url, minimal_page(points) as minimal_url:
                reference = Reference(_new_page(browser, viewport))
                _open(reference.page, minimal_url)
                for w in _windows(100_000, WARMUP):
                    _warm_up(reference.page, _type_number(reference.page, "Value", w))
                page = _new_page(browser, viewport)
                _open(page, url)
                window = int(page.get_by_role("spinbutton", name="Context window (tokens)").first.input_value())
                for w in _windows(window - 1_000 * (WARMUP + 1), WARMUP):
                    _warm_up(page, _type_number(page, "Context window (tokens)", w))
                # compact_at 0.69, 0.70, 0.69…: each a first replay, since the window moved in between
                keys = ("ArrowLeft", "ArrowRight") * changes
                measured = {"two_window": _paired(page, reference, [
                    _type_number(page, "Context window (tokens)", w) for w in _windows(window, changes)])}
                window += 1_000 * changes
                measured["two_slider"] = _paired(page, reference, [_slider_key(page, k) for k in keys[:changes]])
                measured["switch"] = _paired(page, reference, [_switch(page, SWITCH[(k + 1) % 2])
                                                               for k in range(changes)])
                page.bring_to_front()
                if changes % 2:
                    _measure(page, _switch(page, SWITCH[0]))
                for _ in range(2):
                    page.get_by_role("button", name="Add a setup").click()
                    _quiet(page)
                measured["four_window"] = _paired(page, reference, [
                    _type_number(page, "Context window (tokens)", w) for w in _windows(window, changes)])
                measured["four_slider"] = _paired(page, reference, [_slider_key(page, k) for k in keys[:changes]])
        finally:
            browser.close()
    minimal = [t for _, times in measured.values() for t in times]

    def each(values: list[float]) -> str:
        return ", ".join(f"{v:.0f}" for v in values) + " ms"

    def ratio(name: str, key: str, target: float) -> Figure:
        app, reference_times = measured[key]
        value, base = statistics.median(app), statistics.median(reference_times)
        return Figure(f"{name}: median {value:.0f} ms / minimal page {base:.0f} ms", value / base, "×",
                      f"<= {target:g}×", target, note=f"app: {each(app)}; minimal page in between: "
                      f"{each(reference_times)}")

    return [
        Figure(f"minimal page ({points} points): number input Enter -> chart redrawn, page idle",
               statistics.median(minimal), "ms", "reference", note=f"all {len(minimal)} presses"),
        ratio("app, 2 setups: window Enter", "two_window", TARGET_2),
        ratio("app, 2 setups: compact_at key", "two_slider", TARGET_2),
        ratio("app, 2 setups: strategy switch", "switch", TARGET_SWITCH),
        ratio("app, 4 setups: window Enter", "four_window", TARGET_4),
        ratio("app, 4 setups: compact_at key", "four_slider", TARGET_4),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="the log to serve (default: the largest real Claude Code log)")
    parser.add_argument("--changes", type=int, default=5, help="presses per figure (at least 2)")
    parser.add_argument("--viewport", default=f"{VIEWPORT['width']}x{VIEWPORT['height']}",
                        help="the pages' size, WIDTHxHEIGHT (default %(default)s)")
    args = parser.parse_args(argv)
    size = re.fullmatch(r"(\d{3,5})x(\d{3,5})", args.viewport)
    if size is None:
        parser.error("--viewport must be WIDTHxHEIGHT, e.g. 1920x1080")
    viewport = {"width": int(size.group(1)), "height": int(size.group(2))}
    if args.changes < 2:
        parser.error("--changes must be at least 2")
    if not Path(CHROMIUM).exists():
        parser.error(f"{CHROMIUM} is not installed (Debian's chromium package)")
    log = args.log or largest_claude_code_log()
    if log is None:
        from make_logs import calls_log

        log = calls_log(1000)
        print(f"no real Claude Code log found (../shared/real_logs): using {log}")
    print(f"log: {log}; viewport {args.viewport}")
    print_figures(run(log, args.changes, viewport), "browser latency")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
