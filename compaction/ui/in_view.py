"""Draw a part of the page only while it is on screen (or about to be).

A threshold press reruns the tuning view. At 1366×768 the tuning view fills the screen, and everything under it (the
cards, the lesson, the analysis tabs) is out of sight, yet drawing it was most of what the browser did for each press;
at 1920×1080 the cards are in sight and the tabs are not. :func:`region_in_view` puts a marker where such a region
starts (a region ends where the next one starts). Its few lines of JavaScript (fixed text: no log text or user input
ever reaches them) report whether the region's top is above the bottom of the visible page, or within
:data:`NEAR_PX` of it. A region scrolled past counts as in view, so nothing above what is visible changes height.
The report is sent only when the answer changes, and it reruns only the enclosing fragment.

While a region is out of view, the page keeps the height it had when it was last drawn, so scrolling down still
reaches it and the scroll bar does not jump. The region is drawn as soon as its marker comes within reach. Until the
browser reports (a first run, ``AppTest``, a browser without JavaScript), a region counts as in view and is drawn.

A region left undrawn must not lose what its widgets hold (the open tab, filters, a sweep's settings, uploaded
files). Streamlit forgets the state of a widget left undrawn by a run, except one inside a fragment the run did not
run: so a region is a fragment of its own, and every full run of the page draws it (inside :func:`whole_page`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import streamlit as st

#: a region starts being drawn when its top comes this close below the visible part of the page (pixels): the first
#: turn of a mouse wheel brings it in
NEAR_PX = 40
#: and stops being drawn once it is this far below it (the gap keeps scrolling near the edge from rerunning): when the
#: page loads, or later when the person scrolls or resizes it (never because the content above it grew)
FAR_PX = 80
_NAME = "compaction_lab.region_in_view"
#: the marker's script. Streamlit calls it again on every run that redraws the marker without calling what the
#: previous call returned, so each call first ends the previous one of its region (``data.region``: the key Streamlit
#: passes is made anew whenever the marker is mounted again).
_JS = f"const NEAR = {NEAR_PX}, FAR = {FAR_PX};\n" + """
const heights = new Map();
const running = new Map();
// whether the page has been scrolled or resized since it loaded: from then on, a region is put away only when the
// person moves the page, never because the content above it grew while it was being drawn
let moved = false;

// whether the app has finished its run (Streamlit marks its root while a script runs): a region's height is measured,
// and a region is put away on its own, only then, when what the run drew has its final size
function appIdle() {
  const app = document.querySelector('[data-testid="stApp"]');
  return !app || app.getAttribute("data-test-script-state") !== "running";
}

function scroller(element) {
  for (let node = element.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (/(auto|scroll)/.test(style.overflowY) && node.scrollHeight > node.clientHeight) return node;
  }
  return null;
}

export default function ({ parentElement, setStateValue, data }) {
  const key = data.region;
  const previous = running.get(key);
  if (previous) previous();
  const marker = parentElement;
  marker.dataset.inViewRegion = key;
  const drawn = Boolean(data.drawn);
  marker.style.minHeight = drawn ? "" : `${heights.get(key) || NEAR}px`;
  // undrawn, the marker stands for the region: a keyboard reaches it, and focusing it scrolls it into view
  marker.tabIndex = drawn ? -1 : 0;
  marker.setAttribute("role", "region");
  marker.setAttribute("aria-label", drawn ? data.label : `${data.label} (drawn when scrolled into view)`);
  let box = null;
  let reported = Boolean(data.visible);
  let frame = 0;
  let byPerson = false;
  const check = () => {
    const person = byPerson;
    frame = 0;
    byPerson = false;
    box = box || scroller(marker);
    const top = marker.getBoundingClientRect().top;
    const below = top - (box ? box.getBoundingClientRect().bottom : window.innerHeight);
    const idle = appIdle();
    // its height, while drawn and not yet put away: down to the next region's marker, or to the end of the page
    if (drawn && reported && idle) {
      const page = marker.closest('[data-testid="stMainBlockContainer"]') || document.body;
      let end = page.getBoundingClientRect().bottom;
      for (const other of document.querySelectorAll("[data-in-view-region]")) {
        const otherTop = other.getBoundingClientRect().top;
        if (other !== marker && otherTop > top && otherTop < end) end = otherTop;
      }
      if (end > top) heights.set(key, end - top);
    }
    let inView = reported;
    if (!reported && below < NEAR) inView = true;
    else if (reported && below > FAR && (person || (!moved && idle))) inView = false;
    if (inView !== reported) {
      reported = inView;
      setStateValue("visible", inView);
    }
  };
  const schedule = (person) => {
    byPerson = byPerson || person;
    if (!frame) frame = requestAnimationFrame(check);
  };
  const onMove = () => { moved = true; schedule(true); };
  // scroll events do not bubble: caught on their way down, they come from whichever element scrolls the page
  document.addEventListener("scroll", onMove, { passive: true, capture: true });
  window.addEventListener("resize", onMove, { passive: true });
  marker.addEventListener("focus", onMove);
  // and once the run has finished and the page has settled (charts and cards take their height after the marker)
  const app = document.querySelector('[data-testid="stApp"]');
  const runs = new MutationObserver(() => schedule(false));
  if (app) runs.observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  const settle = [setTimeout(() => schedule(false), 300), setTimeout(() => schedule(false), 1000)];
  schedule(false);
  const stop = () => {
    document.removeEventListener("scroll", onMove, { capture: true });
    window.removeEventListener("resize", onMove);
    marker.removeEventListener("focus", onMove);
    runs.disconnect();
    settle.forEach(clearTimeout);
    if (frame) cancelAnimationFrame(frame);
    if (running.get(key) === stop) running.delete(key);
  };
  running.set(key, stop);
  return stop;
}
"""

_marker = st.components.v2.component(_NAME, js=_JS, isolate_styles=False)


_WHOLE_PAGE: ContextVar[bool] = ContextVar("whole_page", default=False)


@contextmanager
def whole_page() -> Iterator[None]:
    """Inside it every region is drawn, on screen or not: wrap what a full run of the page draws (a fragment's own
    rerun does not pass through it)."""
    token = _WHOLE_PAGE.set(True)
    try:
        yield
    finally:
        _WHOLE_PAGE.reset(token)


def _rerun() -> None:
    """The report reruns the enclosing fragment; nothing else to do."""


def is_in_view(key: str) -> bool:
    """What the browser last reported for the region keyed ``key`` (True until it has reported)."""
    held: Any = st.session_state.get(key)
    visible = held.get("visible") if isinstance(held, dict) else None
    return visible is not False


def region_in_view(key: str, label: str) -> bool:
    """Place the marker of a region here; True when the region should be drawn now: it is on screen or close to it,
    the browser has not said otherwise, or this is a full run of the page (see :func:`whole_page`). ``label``: what
    the region holds, in our own words (a screen reader announces it; a keyboard can focus the undrawn region)."""
    visible = is_in_view(key)
    drawn = visible or _WHOLE_PAGE.get()
    _marker(key=key, data={"drawn": drawn, "visible": visible, "region": key, "label": label},
            default={"visible": True}, on_visible_change=_rerun, height="content")
    return drawn
