"""Live summarizer calls in the app: the operator's choice, and for setups from a link or an import, the person's.

The app gates the ``openai-compatible`` summarizer (:func:`compaction.summarizers.gate_live_calls`): it calls the
model only when the server was started with ``COMPACTION_LAB_LIVE_SUMMARIZER=1``, and a setup that arrived by link
or import only after the person on the page confirms. Until then the replay writes extractive summaries instead and
records the requests it did not send; this panel says so for each such setup, with the model, the endpoint's host
and an estimate of the calls and tokens, and (when the operator enabled live calls) a button to confirm.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from compaction.summarizers import LIVE_ENV
from compaction.summarizers import LiveEstimate
from compaction.summarizers import live_enabled

from . import state
from .results import SetupResult
from .text import escape_markdown


def describe(estimate: LiveEstimate) -> str:
    """Markdown naming the models and hosts (escaped: the model name comes from the setup) and the estimate."""
    models = ", ".join(f"**{escape_markdown(m)}**" for m in estimate.models)  # escapes do not work in `code`
    hosts = ", ".join(f"**{escape_markdown(h)}**" for h in estimate.hosts)
    calls = f"{estimate.calls:,} request{'s' if estimate.calls != 1 else ''}"
    return (f"model {models} at {hosts}: about {calls}, {estimate.input_tokens:,} input tokens and up to "
            f"{estimate.max_output_tokens:,} output tokens")


def show_withheld(results: Sequence[SetupResult]) -> None:
    """One notice per setup whose live-summarizer requests were withheld (``results``: the
    :class:`~.results.SetupResult` list), with a confirmation button where the operator enabled live calls."""
    enabled = live_enabled()
    for result in results:
        if not result.withheld:
            continue
        estimate = LiveEstimate.of(result.withheld)
        label = escape_markdown(result.setup.label)
        if not enabled:
            st.info(f"**Setup {label} asks for a live summarizer** ({describe(estimate)}). This server does not "
                    f"enable live summaries ({LIVE_ENV}=1 when it starts), so its summaries are simulated "
                    "(extractive) and nothing was sent.", icon=":material/cloud_off:")
            continue
        st.warning(f"**Setup {label} came with a link or an imported file and asks for a live summarizer** — "
                   f"{describe(estimate)}, sent by this server at its operator's cost (estimated from a replay "
                   "with simulated summaries). Until you confirm, its summaries are simulated and nothing is sent.",
                   icon=":material/cloud_upload:")
        st.button(f"Send these requests for setup {result.setup.label}", key=state.confirm_button_key(result.setup.id),
                  on_click=state.confirm_live, args=(result.setup.id,), icon=":material/send:",
                  help="Replays this setup with the real model; the requests go to the host named above.")
