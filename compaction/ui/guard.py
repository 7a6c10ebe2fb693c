"""Sections that never show a traceback: an unexpected exception becomes a one-line ``st.error``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from .text import escape_markdown

log = logging.getLogger("compaction.ui")


def one_line(exc: BaseException, limit: int = 400) -> str:
    """A readable one-line description of ``exc``: the message for expected errors, ``Type: message`` otherwise."""
    message = " ".join(str(exc).split()) or "no details"
    if not isinstance(exc, ValueError):
        message = f"{type(exc).__name__}: {message}"
    return message if len(message) <= limit else message[: limit - 1] + "…"


def show_error(prefix: str, exc: BaseException) -> None:
    """``st.error`` with ``prefix`` (our own text) and the exception's one-line, escaped message."""
    st.error(f"**{prefix}** — {escape_markdown(one_line(exc))}", icon=":material/error:")


@contextmanager
def section(title: str) -> Iterator[None]:
    """Run a page section; any exception inside it is logged and shown as one line instead of a traceback.

    Streamlit's own control flow (``st.stop``, ``st.rerun``) derives from ``BaseException`` and passes through.
    """
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the whole point: the UI never shows a traceback
        log.exception("section %r failed", title)
        show_error(f"{title} failed", exc)
