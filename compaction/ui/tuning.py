"""The tuning view at the top of the page: the setups' strategy pickers on one row, the thresholds on the next, and
(drawn by :func:`.step_panel.explorer`) the tokens chart under them, so that moving a threshold and seeing its effect
happen on one screen (1366×768 included) without scrolling.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from compaction.analysis.calibration import default_prices
from compaction.conversation import Conversation

from . import cache
from . import costs
from . import settings
from . import tour
from .state import show_undo

#: the page's own style (fixed CSS, no log text): less empty space above the title, so the tuning view fits one screen
PAGE_STYLE = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 3rem; }
[data-testid="stSidebarUserContent"] { padding-top: 1rem; }
</style>"""
TAGLINE = "Replay an agent log LLM call by LLM call under any compaction setup, as each framework would."


def compact_page() -> None:
    """Apply :data:`PAGE_STYLE` (it takes no room on the page)."""
    st.html(PAGE_STYLE)


def show_header(samples: Sequence[Path], uploaded: bool) -> None:
    """The title on one line with the guided tour's button, and the offer to undo a replacement of the setups."""
    with st.container(horizontal=True, vertical_alignment="center", gap="medium", wrap=False):
        st.markdown("#### Compaction Lab", width="stretch", help=TAGLINE)
        tour.show_tour(samples, uploaded)
    show_undo()


def show_thresholds(conversation: Conversation | None, log_key: str) -> settings.Policy:
    """The shared threshold policy on one row (the window follows the loaded log), one caption line saying where the
    window came from and where the trigger and target are, and, on a log that reports usage, one click to use the
    counter calibrated on it."""
    log_window = settings.follow_log_window(conversation, log_key) if conversation is not None else None
    policy = settings.choose_policy(header=False, inline=True)
    notes = [note for note in (settings.window_note(log_window, source=False),) if note]
    if policy.valid:
        notes.append(settings.policy_caption(policy))
    with st.container(horizontal=True, vertical_alignment="center", gap="small", wrap=False):
        if notes:
            text = " · ".join(notes)
            st.caption(text[0].upper() + text[1:] + ".", width="stretch",
                       help=f"Where the window came from: {log_window.resolved.source}." if log_window else None)
        if conversation is not None and conversation.usage:
            calibration = cache.calibration_of(conversation, default_prices(conversation))
            costs.show_calibrated_counter(calibration, "tuning")
    settings.show_log_window(log_window, log_key, caption=False)
    return policy
