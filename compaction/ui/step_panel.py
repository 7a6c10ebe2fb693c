"""The tokens chart and the selected step, kept in sync between a chart click, a slider and jump buttons.

The chart's point selection (``pick``, field ``step``) is read from session state before the chart is drawn, so
the vertical rule marking the selected step is drawn in the same run as the click. A click only moves the
selection when it differs from the previous click, so the slider and the buttons keep working after a click.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import streamlit as st

from compaction import charts
from compaction import views

from . import cache
from . import in_view
from . import state
from . import url_state
from .context_view import show_context
from .guard import section
from .inspect_setup import FLOOR_HELP
from .inspect_setup import show_inside
from .results import SetupResult

CHART_KEY = "tokens_chart"
STEP_KEY = "step"
LAST_PICK_KEY = "step.last_pick"
#: True until the user picks a step: the step then follows the default (first compaction) as settings change
AUTO_KEY = "step.auto"
#: the markers where the parts under the chart start (the cards and the lesson; the tabs): each drawn only while on
#: screen or about to be
RESULTS_KEY = "details.results.in_view"
TABS_KEY = "details.tabs.in_view"
#: a part of the page under the chart: its marker's key, what it holds (for screen readers) and the fragment that
#: draws it at a step
Region = tuple[str, str, Callable[[int], None]]


def picked_step(state: Any) -> int | None:
    """The step in a chart selection state (``{"selection": {"pick": [{"step": k}]}}``), or None."""
    if not isinstance(state, Mapping):
        return None
    selection = state.get("selection")
    if not isinstance(selection, Mapping):
        return None
    points = selection.get(charts.SELECTION)
    if isinstance(points, Mapping):  # Vega may report a single point as an object
        points = [points]
    if not isinstance(points, Sequence) or not points:
        return None
    first = points[0]
    step = first.get("step") if isinstance(first, Mapping) else None
    if isinstance(step, Sequence) and not isinstance(step, str):
        step = step[0] if step else None
    try:
        return int(step) if step is not None else None
    except (TypeError, ValueError):
        return None


def sync_step(last_step: int, default: int) -> int:
    """The step to show, after applying a new chart click; clamped to ``0..last_step`` and stored.

    Until the user picks a step (click, slider, jump), the step follows ``default``.
    """
    state = st.session_state
    pick = picked_step(state.get(CHART_KEY))
    if pick != state.get(LAST_PICK_KEY):
        state[LAST_PICK_KEY] = pick
        if pick is not None:
            state[STEP_KEY] = pick
            state[AUTO_KEY] = False
    if state.get(AUTO_KEY, True):
        state[STEP_KEY] = default
    step = state.get(STEP_KEY, default)
    step = min(max(int(step), 0), last_step)
    state[STEP_KEY] = step
    return step


def _jump(runs: Sequence[views.Run], forward: bool) -> None:
    target = views.neighbour_event(runs, st.session_state.get(STEP_KEY, 0), forward)
    if target is not None:
        st.session_state[STEP_KEY] = target
        st.session_state[AUTO_KEY] = False


def _chosen() -> None:
    st.session_state[AUTO_KEY] = False


#: the tokens chart's height in the tuning view (with the threshold row and the strategy pickers above it, the chart
#: and the controls fit a 1366×768 screen together)
TUNING_CHART_HEIGHT = 340
CHART_CAPTION = (
    "One point per LLM call (the tokens it sent); dashed grey: the log without compaction. ▼ a compaction, its drop "
    "line from the tokens before to after; ✕ a declined trigger. Horizontal lines: the window, each trigger and "
    "target. Faint bands: each setup's incompressible floor. **Click a point** to inspect that call below."
)


@st.fragment
def explorer(runs: Sequence[views.Run], setup_colors: Mapping[str, str], runs_key: cache.RunsKey,
             regions: Sequence[Region] = (), page: str = "") -> None:
    """The tokens chart of the tuning view, the step selector and the ``regions`` under them (the cards, the tabs),
    each drawn at the step only while on screen or close to it (see :mod:`.in_view`) and on every full run.

    A fragment: clicking a point or moving the step reruns only this part, not the replays. The chart's
    spec stays the same from step to step (the step is its own dataset), so the browser redraws it in place. When a
    widget inside changed what the rest of the page shows (``page``: :func:`.state.page_signature` as the full run
    saw it), the whole page runs again instead.
    """
    state.rerun_page_if_changed(page)
    last_step = max(len(rep.steps) for _, rep in runs) - 1
    step = sync_step(last_step, views.default_step(runs))
    with section("Tokens chart"):
        colors = tuple(series_colors(runs, setup_colors).items())
        spec = cache.tokens_chart_spec(runs_key, colors, None, runs, TUNING_CHART_HEIGHT)
        st.vega_lite_chart(spec.at_step(step), key=CHART_KEY, on_select="rerun",
                           selection_mode=[charts.SELECTION], width="stretch")
    with section("Step selector"):
        _step_controls(runs, last_step)
        st.caption(CHART_CAPTION, help=FLOOR_HELP)
    url_state.publish_step(st.session_state[STEP_KEY])
    for key, label, draw in regions:
        if in_view.region_in_view(key, label):
            draw(st.session_state[STEP_KEY])


def show_step_context(runs: Sequence[views.Run], setup_colors: Mapping[str, str], step: int,
                      runs_key: cache.RunsKey) -> None:
    """What each setup sends at ``step``, side by side."""
    with section("Context at the selected step"):
        show_context(runs, setup_colors, step, runs_key)


def show_step_inside(results: Sequence[SetupResult], step: int) -> None:
    """Inside the setup in focus at ``step`` (``results``: the :class:`~.results.SetupResult` list)."""
    with section("Inside one setup"):
        show_inside(results, step)


def _step_controls(runs: Sequence[views.Run], last_step: int) -> None:
    step = st.session_state[STEP_KEY]
    previous = views.neighbour_event(runs, step, forward=False)
    following = views.neighbour_event(runs, step, forward=True)
    left, middle, right = st.columns([1.2, 7, 1.2], vertical_alignment="bottom")
    left.button("◀ Previous", on_click=_jump, args=(runs, False), disabled=previous is None,
                help="Jump to the previous LLM call where any setup's trigger fired.", width="stretch")
    if last_step > 0:
        middle.slider("Step (LLM call)", min_value=0, max_value=last_step, key=STEP_KEY, on_change=_chosen,
                      help="The LLM call to inspect; keyboard arrows move it one call at a time. Clicking a point "
                      "in the chart moves it too.")
    else:
        middle.caption("This log has a single LLM call.")
    right.button("Next ▶", on_click=_jump, args=(runs, True), disabled=following is None,
                 help="Jump to the next LLM call where any setup's trigger fired.", width="stretch")


def series_colors(runs: Sequence[views.Run], setup_colors: Mapping[str, str]) -> dict[str, str]:
    """Chart colours by series name: grey for the uncompacted log, each setup's own colour for its line."""
    from compaction.run_charts import series_colors as colors_of  # shared with compare()'s chart

    return colors_of(runs, setup_colors)
