"""The whole view in the URL: the log (a bundled sample's name), the setups and the selected step.

On the first run of a session the query parameters are read back (so a shared link, or a browser reload, shows the
same view); afterwards every run writes the current view into them. Setups travel as one compact token
(:func:`compaction.setups.encode_for_url`). A link comes from anyone, so reading it is bounded and lenient
(:func:`compaction.setups.read_setups_link`): a damaged link, or a setup in it that cannot be read, is reported once,
readably, and the rest is applied; values outside the widgets' ranges are moved into them with a notice naming the
parameter and the value; the link's setups make no live summarizer call until the person on the page confirms.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from compaction.setups import Setup
from compaction.setups import encode_for_url
from compaction.setups import read_setups_link

from . import source
from . import state
from .guard import log
from .guard import one_line
from .text import escape_markdown
from .text import listed

LOG_PARAM = "log"
#: a log that cannot travel in a link (an upload, a session of this machine): ``<size>:<sha256 prefix>:<file name>``
UPLOAD_PARAM = "upload"
EXPECTED_UPLOAD_KEY = "url.expected_upload"
SHOW_SAMPLE_KEY = "url.expected_upload.dismiss"
#: hex digits of the log's sha256 a link carries, and the longest file name it carries
DIGEST_CHARS = 16
MAX_NAME_CHARS = 200
UPLOAD_TOKEN = re.compile(r"(\d{1,15}):([0-9a-f]{1,64}):(.{1,200})", flags=re.DOTALL)
SETUPS_PARAM = "setups"
STEP_PARAM = "step"
RESTORED_KEY = "url.restored"
ERROR_KEY = "url.error"
NOTICE_KEY = "url.notice"
#: the longest value of the step parameter read
MAX_STEP_CHARS = 12


def restore(samples: Sequence[Path]) -> None:
    """Once per session, before any widget is drawn: apply the link's log, setups and step to the session."""
    from . import step_panel  # the step panel writes the step back through this module

    if st.session_state.get(RESTORED_KEY):
        return
    st.session_state[RESTORED_KEY] = True
    params = st.query_params
    problems: list[str] = []
    notices: list[str] = []
    name = params.get(LOG_PARAM)
    if name:
        match = next((p for p in samples if p.name == name), None)
        if match is None:
            problems.append(f"the linked log {name[:100]!r} is not a bundled sample here")
        else:
            st.session_state[source.SAMPLE_KEY] = match
    upload = params.get(UPLOAD_PARAM)
    if upload and not name:
        expected = read_upload_token(upload)
        if expected is None:
            problems.append("the linked upload is not in the form size:digest:name")
        else:
            st.session_state[EXPECTED_UPLOAD_KEY] = expected
    token = params.get(SETUPS_PARAM)
    if token:
        _restore_setups(token, problems, notices)
    step = params.get(STEP_PARAM)
    if step:
        try:
            if len(step) > MAX_STEP_CHARS:
                raise ValueError
            st.session_state[step_panel.STEP_KEY] = max(int(step), 0)
            st.session_state[step_panel.AUTO_KEY] = False
        except ValueError:
            problems.append(f"the linked step {step[:40]!r} is not a number of LLM calls")
    if problems:
        st.session_state[ERROR_KEY] = problems
    if notices:
        st.session_state[NOTICE_KEY] = notices


def _restore_setups(token: str, problems: list[str], notices: list[str]) -> None:
    """The link's setups into the explorer: what cannot be read goes to ``problems``, values moved into range to
    ``notices``; when no setup is usable the defaults stay."""
    try:
        read = read_setups_link(token)
        problems.extend(read.problems)
        notices.extend(read.clamped)
        if read.setups:
            notices.extend(state.replace_setups(read.setups, untrusted=True))
    except ValueError as exc:
        problems.append(one_line(exc))
    except Exception as exc:  # noqa: BLE001 - a link must never break the page; a bug here is logged and reported
        log.exception("applying the link's setups failed")
        problems.append(f"the link's setups could not be applied ({one_line(exc)})")


def show_messages() -> None:
    """Why the link could not be applied in full, and which of its values were moved into range (once each)."""
    problems = st.session_state.pop(ERROR_KEY, None)
    if problems:
        st.warning("**The link could not be applied in full** — " + listed(problems), icon=":material/link_off:")
    notices = st.session_state.pop(NOTICE_KEY, None)
    if notices:
        st.info("**Some values from the link were moved into range** — " + listed(notices), icon=":material/tune:")


def _put(name: str, value: str | None) -> None:
    params = st.query_params
    if value is None:
        if name in params:
            del params[name]
    elif params.get(name) != value:
        params[name] = value


def upload_token(name: str, size: int, digest: str) -> str:
    """What a link says of a log it cannot carry: ``<size>:<sha256 prefix>:<file name>``."""
    return f"{int(size)}:{digest[:DIGEST_CHARS]}:{os.path.basename(name)[:MAX_NAME_CHARS]}"


def read_upload_token(token: str) -> dict[str, object] | None:
    """``{"name", "size", "digest"}`` from :func:`upload_token`'s form, or None when it is not in that form."""
    match = UPLOAD_TOKEN.fullmatch(token[: MAX_NAME_CHARS + 100])
    if match is None:
        return None
    return {"size": int(match.group(1)), "digest": match.group(2), "name": " ".join(match.group(3).split())}


def publish_view(choice: source.LogChoice | None, setups: Sequence[Setup]) -> None:
    """Write the log and the setups into the URL: a bundled sample by name; a log a link cannot carry (an upload, a
    session of this machine, a log opened from the fleet) by its name, size and digest, so that whoever opens the
    link is asked for that file (a link that still waits for its file keeps saying so)."""
    sample = choice.name if choice is not None and choice.origin == "sample" else None
    upload = None
    expected = st.session_state.get(EXPECTED_UPLOAD_KEY)
    if choice is not None and choice.origin != "sample" and choice.folder is None:
        upload = upload_token(choice.name, len(choice.data), choice.key)
    elif expected:
        sample, upload = None, upload_token(str(expected["name"]), int(expected["size"]), str(expected["digest"]))
    _put(LOG_PARAM, sample)
    _put(UPLOAD_PARAM, upload)
    _put(SETUPS_PARAM, encode_for_url(setups) if setups else None)


def _show_sample_instead() -> None:
    st.session_state.pop(EXPECTED_UPLOAD_KEY, None)


def show_expected_upload(choice: source.LogChoice) -> bool:
    """When the link was made on a log it could not carry: until that file is uploaded, say which one (name, size,
    digest) instead of replaying the sample, and return False; once a file is uploaded, say whether it is the same
    one. True: go on with the replay."""
    expected = st.session_state.get(EXPECTED_UPLOAD_KEY)
    if not expected:
        return True
    name, size, digest = escape_markdown(str(expected["name"])), int(expected["size"]), str(expected["digest"])
    if choice.origin == "sample":
        st.info(f"**This link was made on a log of its own: upload {name}** ({size:,} bytes, sha256 starting "
                f"`{digest}`) in the sidebar to see this view. The link's setups are loaded; the bundled sample is "
                "not shown in its place.", icon=":material/upload_file:")
        st.button("Show the bundled sample instead", key=SHOW_SAMPLE_KEY, on_click=_show_sample_instead,
                  icon=":material/description:")
        return False
    st.session_state.pop(EXPECTED_UPLOAD_KEY, None)
    if not choice.key.startswith(digest):
        st.warning(f"**This is not the file the link was made on** ({name}, {size:,} bytes, sha256 starting "
                   f"`{digest}`): its numbers may differ from the shared view.", icon=":material/difference:")
    return True


def publish_step(step: int | None) -> None:
    """Write the selected step into the URL."""
    _put(STEP_PARAM, None if step is None else str(int(step)))
