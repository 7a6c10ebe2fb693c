"""The whole view in the URL: the log (a bundled sample's name), the setups and the selected step.

On the first run of a session the query parameters are read back (so a shared link, or a browser reload, shows the
same view); afterwards every run writes the current view into them. Setups travel as one compact token
(:func:`compaction.setups.encode_for_url`); a damaged link is reported once, readably, and the defaults are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from compaction.setups import Setup, decode_from_url, encode_for_url

from . import source, state

LOG_PARAM = "log"
SETUPS_PARAM = "setups"
STEP_PARAM = "step"
RESTORED_KEY = "url.restored"
ERROR_KEY = "url.error"


def restore(samples: Sequence[Path]) -> None:
    """Once per session, before any widget is drawn: apply the link's log, setups and step to the session."""
    from . import step_panel  # the step panel writes the step back through this module

    if st.session_state.get(RESTORED_KEY):
        return
    st.session_state[RESTORED_KEY] = True
    params = st.query_params
    problems: list[str] = []
    name = params.get(LOG_PARAM)
    if name:
        match = next((p for p in samples if p.name == name), None)
        if match is None:
            problems.append(f"the linked log {name!r} is not a bundled sample here")
        else:
            st.session_state[source.SAMPLE_KEY] = match
    token = params.get(SETUPS_PARAM)
    if token:
        try:
            state.replace_setups(decode_from_url(token))
        except ValueError as exc:
            problems.append(str(exc))
    step = params.get(STEP_PARAM)
    if step:
        try:
            st.session_state[step_panel.STEP_KEY] = max(int(step), 0)
            st.session_state[step_panel.AUTO_KEY] = False
        except ValueError:
            problems.append(f"the linked step {step!r} is not a number")
    if problems:
        st.session_state[ERROR_KEY] = "; ".join(problems)


def pop_error() -> str | None:
    """Why the link could not be applied in full (once), or None."""
    return st.session_state.pop(ERROR_KEY, None)


def _put(name: str, value: str | None) -> None:
    params = st.query_params
    if value is None:
        if name in params:
            del params[name]
    elif params.get(name) != value:
        params[name] = value


def publish_view(log_name: str | None, setups: Sequence[Setup]) -> None:
    """Write the log (None for an upload, which a link cannot carry) and the setups into the URL."""
    _put(LOG_PARAM, log_name)
    _put(SETUPS_PARAM, encode_for_url(setups) if setups else None)


def publish_step(step: int | None) -> None:
    """Write the selected step into the URL."""
    _put(STEP_PARAM, None if step is None else str(int(step)))
