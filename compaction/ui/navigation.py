"""The page's detail tabs under the tuning view, run lazily: only the open tab's content runs, so a change of settings
re-renders what the user is looking at. Other parts of the page can send the user to a tab (a sweep cell or a fleet log opened in the
explorer); the switch is applied at the start of the next run, before the tabs are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.elements.lib.mutable_tab_container import TabContainer

TAB_KEY = "view.tab"
PENDING_KEY = "view.tab.next"
#: the tabs by name, with their labels
TABS = {"explore": ":material/view_column: Contexts side by side", "inside": ":material/stacked_bar_chart: Inside one setup",
        "summary": ":material/ios_share: Summary & share", "cost": ":material/payments: Cost & caching",
        "sweep": ":material/grid_on: Sweep", "fleet": ":material/folder_copy: Fleet"}


def analysis_tabs() -> Sequence[TabContainer]:
    """The tab containers in :data:`TABS` order; each has ``.open`` (only the open one should be filled)."""
    pending = st.session_state.pop(PENDING_KEY, None)
    if pending is not None:
        st.session_state[TAB_KEY] = TABS[pending]
    return st.tabs(list(TABS.values()), key=TAB_KEY, on_change="rerun")


def go_to(tab: str) -> None:
    """Open tab ``tab`` (a :data:`TABS` name) on the next run."""
    if tab not in TABS:
        raise ValueError(f"unknown tab {tab!r}; tabs: {', '.join(TABS)}")
    st.session_state[PENDING_KEY] = tab
