"""Compaction Lab — the Streamlit app: replay an agent log under two compaction setups and compare them.

Run with ``streamlit run app.py``. The page is composed from :mod:`compaction.ui` components; every number comes
from the :mod:`compaction` library, so the CLI and notebooks give the same results. Set ``COMPACTION_LAB_SAMPLES``
to a folder of logs to offer those instead of the bundled samples.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from compaction.conversation import Conversation
from compaction.ui import results, settings, setups, source
from compaction.ui.guard import section, show_error
from compaction.ui.step_panel import step_panel

ROOT = Path(__file__).resolve().parent
SAMPLES_DIR = Path(os.environ.get("COMPACTION_LAB_SAMPLES") or ROOT / "sample_conversations")

st.set_page_config(page_title="Compaction Lab", page_icon=":material/compress:", layout="wide",
                   initial_sidebar_state="expanded")


@dataclass
class Inputs:
    """Everything the sidebar chose: the log (or why it could not be read), the counter, policy and setups."""

    choice: source.LogChoice | None = None
    conversations: list[Conversation] = field(default_factory=list)
    conversation: Conversation | None = None
    load_error: Exception | None = None
    counter_spec: str = "approx"
    policy: settings.Policy = field(default_factory=lambda: settings.check_policy(
        settings.DEFAULT_WINDOW, settings.DEFAULT_COMPACT_AT, settings.DEFAULT_COMPACT_TO))
    setups: list[setups.SetupSpec] = field(default_factory=list)


def sidebar() -> Inputs:
    """Every input of the page, from the sidebar (a failing part leaves its defaults and shows why)."""
    inputs = Inputs()
    with st.sidebar:
        with section("Choosing the log"):
            inputs.choice = source.choose_log(SAMPLES_DIR)
            if inputs.choice is not None:
                try:
                    inputs.conversations = source.read_log(inputs.choice)
                except ValueError as exc:  # LoadError, or a forced format that does not fit
                    inputs.load_error = exc
                if inputs.conversations:
                    inputs.conversation = source.choose_conversation(inputs.conversations)
        with section("Token counter"):
            inputs.counter_spec = settings.choose_counter()
        with section("Threshold policy"):
            inputs.policy = settings.choose_policy()
        with section("Setups"):
            inputs.setups = setups.choose_setups()
    return inputs


def main() -> None:
    st.title("Compaction Lab")
    st.markdown(
        "Replay a real agent log **LLM call by LLM call** under two context-compaction setups, exactly as each "
        "framework's hook would run, and see what each one sends: tokens per call, and which messages get pruned, "
        "collapsed or dropped."
    )
    inputs = sidebar()
    choice, conversation, policy = inputs.choice, inputs.conversation, inputs.policy
    if choice is None:
        st.info("Upload an agent log in the sidebar to start.", icon=":material/upload_file:")
        return
    if inputs.load_error is not None:
        show_error("Could not read this log", inputs.load_error)
        return
    if conversation is None:
        return
    with section("What was read"):
        st.subheader("What was read", anchor="read")
        source.show_log_facts(choice, conversation, len(inputs.conversations))
    if not conversation.llm_call_indices:
        st.warning("This log has no assistant messages, so there is no LLM call to replay.", icon=":material/warning:")
        return
    if not policy.valid:
        st.error(f"**Threshold policy is invalid** — {policy.error}", icon=":material/block:")
    outcomes: list[results.SetupResult] = []
    with section("Replay"), st.spinner("Replaying the log under each setup…"):
        outcomes = results.run_setups(conversation, f"{choice.key}:{conversation.id}", inputs.setups, policy,
                                      inputs.counter_spec)
    results.show_setup_errors(outcomes)
    runs = results.runs_of(outcomes)
    if not runs:
        st.info("Fix the settings in the sidebar to see the replay.", icon=":material/tune:")
        return
    with section("Results"):
        st.subheader("Results", anchor="results")
        results.show_metric_cards(outcomes, policy.context_window)
    step_panel(runs, {r.setup.label: r.setup.color for r in outcomes}, policy.context_window,
               results.runs_key(outcomes))
    with section("Summary"):
        st.subheader("Summary per setup", anchor="summary")
        results.show_summary_table(outcomes)


main()
