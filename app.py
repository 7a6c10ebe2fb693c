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
from compaction.setups import Setup
from compaction.summarizers import gate_live_calls
from compaction.ui import (
    costs,
    fleet_view,
    heap,
    live,
    navigation,
    results,
    settings,
    setups,
    share,
    source,
    state,
    sweep_view,
    tour,
    url_state,
)
from compaction.ui.cache import tokens_chart_spec
from compaction.ui.guard import section, show_error
from compaction.ui.step_panel import series_colors, step_panel

ROOT = Path(__file__).resolve().parent
SAMPLES_DIR = Path(os.environ.get("COMPACTION_LAB_SAMPLES") or ROOT / "sample_conversations")

st.set_page_config(page_title="Compaction Lab", page_icon=":material/compress:", layout="wide",
                   initial_sidebar_state="expanded")
gate_live_calls()  # a live summarizer only where the operator enabled it and the person on the page confirmed


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
            log_key = f"{inputs.choice.key}:{inputs.conversation.id}" if inputs.conversation is not None else ""
            log_window = settings.follow_log_window(inputs.conversation, log_key) if log_key else None
            inputs.policy = settings.choose_policy()
            settings.show_log_window(log_window, log_key)
        with section("Setups"):
            inputs.setups = setups.choose_setups(inputs.policy, inputs.counter_spec)
    return inputs


def main() -> None:
    st.title("Compaction Lab")
    st.markdown(
        "Replay a real agent log **LLM call by LLM call** under any number of context-compaction setups, exactly "
        "as each framework's hook would run, and see what each one sends: tokens per call, and which messages get "
        "pruned, collapsed or dropped."
    )
    samples = source.bundled_samples(SAMPLES_DIR)
    url_state.restore(samples)
    url_state.show_messages()
    with section("Guided tour"):
        tour.show_tour(samples)
    inputs = sidebar()
    publish(inputs)
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
    if not policy.valid and any(not s.own_policy for s in inputs.setups):
        st.error(f"**Threshold policy is invalid** — {policy.error}", icon=":material/block:")
    outcomes: list[results.SetupResult] = []
    with section("Replay"), st.spinner("Replaying the log under each setup…"):
        outcomes = results.run_setups(conversation, f"{choice.key}:{conversation.id}", inputs.setups)
    results.show_setup_errors(outcomes)
    live.show_withheld(outcomes)
    runs = results.runs_of(outcomes)
    if not runs:
        st.info("Fix the settings in the sidebar to see the replay.", icon=":material/tune:")
        return
    with section("Results"):
        st.subheader("Results", anchor="results")
        results.show_metric_cards(outcomes, policy.context_window)
    colors = {r.setup.label: r.setup.color for r in outcomes}
    runs_key = results.runs_key(outcomes)
    explore, cost_tab, sweep_tab, fleet_tab = navigation.analysis_tabs()
    if explore.open:
        with explore:
            step_panel(runs, colors, None, runs_key, outcomes)
            with section("Summary"):
                st.subheader("Summary per setup", anchor="summary")
                results.show_summary_table(outcomes)
            with section("Share and export"):
                chart = tokens_chart_spec(runs_key, tuple(series_colors(runs, colors).items()), None, runs)
                share.show_share(outcomes, chart, choice.origin != "sample")
    replayed = [r for r in outcomes if r.replay is not None]
    if cost_tab.open:
        with cost_tab, section("Cost"):
            costs.show_costs(conversation, runs, colors)
    if sweep_tab.open:
        with sweep_tab, section("Sweep"):
            by_label = {r.setup.label: r.setup.setup() for r in replayed}
            label = st.selectbox("Setup to sweep", list(by_label), key="sweep.setup",
                                 help="The sweep varies one or two parameters of this setup over a grid.")
            sweep_view.show_sweep(conversation, by_label[label], on_load=load_into_explorer)
    if fleet_tab.open:
        with fleet_tab, section("Fleet"):
            fleet_view.show_fleet([(r.setup.label, r.setup.setup()) for r in replayed], colors=colors)


def load_into_explorer(setup: Setup) -> None:
    """A sweep cell (or the best setting) becomes a new setup of the explorer, which opens."""
    state.add_setup(setup)
    navigation.go_to("explore")
    st.rerun()


def publish(inputs: Inputs) -> None:
    """Keep the URL in step with the view (a sample's name; an upload cannot travel in a link)."""
    with section("Link"):
        sample = inputs.choice.name if inputs.choice is not None and inputs.choice.origin == "sample" else None
        url_state.publish_view(sample, [s.setup() for s in inputs.setups])


try:
    main()
finally:
    heap.settle()  # keep the cyclic GC off the caches (see compaction.ui.heap)
