"""Inside one setup: what its context is made of, call by call, and the lifecycle of every message.

The setup in focus is chosen here (and by :func:`.state.add_setup`); the export panel shows the same setup.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence

import streamlit as st

from compaction import charts
from compaction.replay import Replay

from . import cache
from . import state
from .results import SetupResult
from .results import replayed_setups
from .text import escape_markdown
from .text import setup_title

FOCUS_WIDGET_KEY = "focus.select"
SYNCED_KEY = "focus.synced"
FLOOR_HELP = (
    "The faint band under each setup's line is its incompressible floor, approximated as the tokens of the system "
    "messages and tool schemas plus the messages of the last step (the previous LLM output and the results logged "
    "after it), which no strategy removes. A trigger at or below the floor makes a strategy compact on every call."
)


def choose_focus(labels_by_id: Mapping[str, str]) -> str | None:
    """The setup in focus among the replayed ones (by slot id). The selectbox follows :data:`.state.FOCUS_KEY` when
    that changes elsewhere (an added or imported setup); choosing here reruns the whole page, because the export
    panel outside this fragment shows the same setup."""
    ids = list(labels_by_id)
    if not ids:
        return None
    focus = state.focus()
    focus = focus if focus in ids else ids[0]
    if st.session_state.get(SYNCED_KEY) != focus or st.session_state.get(FOCUS_WIDGET_KEY) not in ids:
        st.session_state[FOCUS_WIDGET_KEY] = focus
        st.session_state[SYNCED_KEY] = focus
    chosen = st.selectbox("Setup in focus", ids, key=FOCUS_WIDGET_KEY, format_func=labels_by_id.__getitem__,
                          help="The setup whose composition, message lifecycle and production code are shown.")
    if chosen != focus:
        state.set_focus(chosen)
        st.session_state[SYNCED_KEY] = chosen
        st.rerun()
    return chosen


#: the charts of the setup in focus, in order: title, what the spinner says while it is built, its (cached) spec,
#: and the caption under it
INSIDE_CHARTS: tuple[tuple[str, str, Callable[[cache.ReplayKey, Replay], cache.ChartSpec], str], ...] = (
    ("What the context is made of", "Measuring the context of each call…", cache.composition_spec,
     "Tokens sent per call by kind, each message counted on its own with this setup's counter (framing between "
     "messages is not attributed, so the stack can differ slightly from the tokens chart). Long logs are sampled at "
     "up to 150 calls."),
    ("Message lifecycle", "Following every message through the replay…", cache.lifecycle_spec,
     "One row per message of the log (oldest at the top), from the call where it first appears: grey while sent as "
     "logged, then pruned, collapsed or dropped as the setup compacts. Hover for a preview. On long logs "
     "neighbouring messages share a row (their commonest fate)."),
)


def show_inside(results: Sequence[SetupResult], step: int) -> None:
    """Composition and lifecycle charts of the setup in focus, with the selected step marked."""
    replayed = replayed_setups(results)
    st.subheader("Inside one setup", anchor="inside")
    chosen = choose_focus({r.setup.id: r.setup.label for r in replayed})
    result = next((r for r in replayed if r.setup.id == chosen), None)
    if result is None:
        return
    st.markdown(f"**{setup_title(result.setup.label, result.setup.color)}** · "
                f"{escape_markdown(result.replay.strategy.title)}")
    for title, working, chart_spec, caption in INSIDE_CHARTS:
        st.markdown(f"**{title}**")
        with st.spinner(working):
            spec = chart_spec(result.key, result.replay)
        st.vega_lite_chart(charts.with_selected_step(spec.ready, step), width="stretch")
        st.caption(caption)
