"""The sidebar's picker of the agent sessions on this machine (:mod:`compaction.discover`), offered only when the
app runs on the user's own machine.

Whether it is on (:func:`local_sessions_allowed`): ``COMPACTION_LAB_LOCAL_SESSIONS=1`` forces it on and ``=0`` off;
otherwise it is on only when the browser talks to the server from this machine — Streamlit's ``st.context.ip_address``
is a loopback address (Streamlit reports those as None), the ``Host`` header names ``localhost`` / ``127.0.0.1`` /
``[::1]``, and no proxy header (``X-Forwarded-For``, ``Forwarded``, …) says the request was relayed. A team
deployment behind a proxy on the same host is therefore off; set the variable to ``0`` to be sure. When it is off,
nothing is searched and nothing is listed.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import streamlit as st

from compaction.discover import FoundSession
from compaction.discover import agent_title
from compaction.discover import default_home
from compaction.discover import human_size
from compaction.discover import search

from .text import escape_markdown

SETTING = "COMPACTION_LAB_LOCAL_SESSIONS"
_ON = frozenset({"1", "true", "yes", "on"})
_OFF = frozenset({"0", "false", "no", "off"})
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: headers a reverse proxy adds: a relayed request is never treated as local
PROXY_HEADERS = ("x-forwarded-for", "x-forwarded-host", "x-real-ip", "forwarded")
#: how long a search's result is reused before the folders are looked at again (seconds)
RESCAN_SECONDS = 60

AGENT_KEY = "log.local.agent"
SESSION_KEY = "log.local.session"

#: stands for "this Streamlit has no ``st.context.ip_address``"
NO_IP_ATTRIBUTE: Any = object()


def local_sessions_allowed(setting: str | None, headers: Mapping[str, str], ip_address: Any = NO_IP_ATTRIBUTE
                           ) -> bool:
    """Whether to list this machine's sessions: forced by ``setting`` (the environment variable's value), else only
    for a request from this machine (see the module docstring). ``ip_address`` is ``st.context.ip_address``
    (:data:`NO_IP_ATTRIBUTE` when Streamlit has none); an unrecognised setting is off."""
    value = (setting or "").strip().lower()
    if value in _ON:
        return True
    if value:
        return False  # "0" and the like, or a value we do not understand: off is the safe reading
    lowered = {str(k).lower(): v for k, v in headers.items()}
    if any(h in lowered for h in PROXY_HEADERS):
        return False
    if _hostname(lowered.get("host")) not in LOCAL_HOSTS:
        return False
    return ip_address is NO_IP_ATTRIBUTE or ip_address is None or _is_loopback(ip_address)


def _hostname(host: Any) -> str | None:
    """The host name of a ``Host`` header (``localhost:8501`` → ``localhost``, ``[::1]:8501`` → ``::1``)."""
    if not isinstance(host, str) or not host.strip():
        return None
    try:
        return urlsplit(f"//{host.strip()}").hostname
    except ValueError:
        return None


def _is_loopback(ip: Any) -> bool:
    if not isinstance(ip, str):
        return False
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def enabled() -> bool:
    """:func:`local_sessions_allowed` for the current request."""
    context = st.context
    try:
        ip = context.ip_address
    except AttributeError:  # an older Streamlit without it: the Host header decides
        ip = NO_IP_ATTRIBUTE
    try:
        headers = dict(context.headers)
    except Exception:  # noqa: BLE001 - no request headers (bare mode): not a request from this machine
        headers = {}
    return local_sessions_allowed(os.environ.get(SETTING), headers, ip)


@st.cache_data(ttl=RESCAN_SECONDS, show_spinner=False)
def found_sessions(home: str, roots: tuple[str, ...]) -> tuple[list[FoundSession], list[str]]:
    """The sessions under ``home`` (and Aider's under ``roots``) and the search's notes, reused for a minute."""
    found = search(home=home, roots=roots)
    return found.sessions, found.notes


def choose_local_session() -> FoundSession | None:
    """Sidebar: pick an agent, then one of its sessions (newest first, with date and size); None when the picker is
    off, nothing is chosen, or nothing was found."""
    if not enabled():
        return None
    sessions, notes = found_sessions(str(default_home()), (os.getcwd(),))
    with st.expander("Sessions on this machine", icon=":material/computer:",
                     expanded=st.session_state.get(AGENT_KEY) is not None):
        if not sessions:
            st.caption("No agent sessions found in your home folder (Claude Code, Codex, Gemini CLI, Cline, Roo "
                       "Code, OpenCode; Aider in the folder the app was started from).")
        chosen = _pick(sessions) if sessions else None
        if notes:
            st.caption(f"{len(notes)} place(s) could not be searched in full: "
                       + "; ".join(escape_markdown(n) for n in notes[:3]) + ("; …" if len(notes) > 3 else ""))
        st.button("Look again", key="log.local.rescan", on_click=found_sessions.clear, icon=":material/refresh:",
                  help=f"The list is kept for {RESCAN_SECONDS} s; look in the folders again now.")
    return chosen


def _pick(sessions: list[FoundSession]) -> FoundSession | None:
    by_agent: dict[str, list[FoundSession]] = {}
    for s in sessions:
        by_agent.setdefault(s.agent, []).append(s)
    agent = st.selectbox("Agent", list(by_agent), index=None, placeholder="Choose an agent…", key=AGENT_KEY,
                         format_func=lambda a: f"{agent_title(a)} ({len(by_agent.get(a, ())):,})",
                         help="Sessions found in the agents' own folders under your home. Choosing one replays it "
                         "(an uploaded log takes precedence while it is loaded).")
    if agent not in by_agent:
        return None
    mine = {session_key(s): s for s in by_agent[agent]}  # newest first, as found
    key = st.selectbox("Session", list(mine), key=SESSION_KEY, format_func=lambda k: session_label(mine[k]),
                       help="Newest first: when it last changed (UTC), its size, where it belongs.")
    session = mine.get(key)
    if session is not None:
        st.caption(escape_markdown(session.path + (f" [{session.conversation}]" if session.conversation else "")))
    return session


def session_key(session: FoundSession) -> str:
    """A stable choice value for a session (its path and, in a shared log, its conversation id)."""
    return f"{session.path}#{session.conversation or ''}"


def session_label(session: FoundSession) -> str:
    """``2026-05-01 12:03 · 1.2 MB · myproject · 1111-aaaa.jsonl`` (``↳`` before a subagent's)."""
    name = session.conversation or Path(session.path).name
    parts = [session.modified_iso[:16].replace("T", " "), human_size(session.size), session.where, name]
    return ("↳ " if session.kind == "subagent" else "") + " · ".join(p for p in parts if p)
