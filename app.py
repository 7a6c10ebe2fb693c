"""Compaction Lab — the Streamlit app: replay an agent log under two compaction setups and compare them.

Run with ``streamlit run app.py``. The page is composed from :mod:`compaction.ui` components; every number comes
from the :mod:`compaction` library, so the CLI and notebooks give the same results. Set ``COMPACTION_LAB_SAMPLES``
to a folder of logs to offer those instead of the bundled samples.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import streamlit as st

from compaction.conversation import Conversation
from compaction.setups import Setup
from compaction.summarizers import gate_live_calls
from compaction.ui import costs
from compaction.ui import fleet_view
from compaction.ui import heap
from compaction.ui import in_view
from compaction.ui import live
from compaction.ui import navigation
from compaction.ui import results
from compaction.ui import settings
from compaction.ui import setups
from compaction.ui import share
from compaction.ui import source
from compaction.ui import state
from compaction.ui import step_panel
from compaction.ui import sweep_view
from compaction.ui import tour
from compaction.ui import tuning
from compaction.ui import url_state
from compaction.ui.cache import tokens_chart_spec
from compaction.ui.guard import section
from compaction.ui.guard import show_error

ROOT = Path(__file__).resolve().parent
SAMPLES_DIR = Path(os.environ.get("COMPACTION_LAB_SAMPLES") or ROOT / "sample_conversations")

st.set_page_config(page_title="Compaction Lab", page_icon=":material/compress:", layout="wide",
                   initial_sidebar_state="expanded")
gate_live_calls()  # a live summarizer only where the operator enabled it and the person on the page confirmed


@dataclass
class Inputs:
    """Everything the full run chose: the log (or why it could not be read), the counter and the setups (their shared
    threshold policy is bound by the tuning view, which draws its widgets)."""

    choice: source.LogChoice | None = None
    conversations: list[Conversation] = field(default_factory=list)
    conversation: Conversation | None = None
    load_error: Exception | None = None
    counter_spec: str = "approx"
    setups: list[setups.SetupSpec] = field(default_factory=list)

    @property
    def log_key(self) -> str:
        """The log and conversation on the page, as the caches and the window's log-following know them."""
        if self.choice is None or self.conversation is None:
            return ""
        return f"{self.choice.key}:{self.conversation.id}"


def choose_log(inputs: Inputs) -> None:
    """The sidebar's log picker and what was read from the log (a failing part leaves the defaults and shows why)."""
    with st.sidebar, section("Choosing the log"):
        inputs.choice = source.choose_log(SAMPLES_DIR)
        if inputs.choice is not None:
            try:
                inputs.conversations = source.read_log(inputs.choice)
            except ValueError as exc:  # LoadError, or a forced format that does not fit
                inputs.load_error = exc
            if inputs.conversations:
                inputs.conversation = source.choose_conversation(inputs.conversations)
                st.subheader("What was read", anchor=False)
                source.show_log_facts(inputs.choice, inputs.conversation, len(inputs.conversations))


def choose_setups(inputs: Inputs) -> None:
    """The sidebar's counter and every setup's name, policy and counter (their strategies and parameters are the
    tuning view's)."""
    with st.sidebar:
        with section("Token counter"):
            inputs.counter_spec = settings.choose_counter()
        with section("Setups"):
            inputs.setups = setups.choose_setups(None, inputs.counter_spec, pickers_elsewhere=True)
        with section("Import setups"):
            share.show_setups_file()


def main() -> None:
    tuning.compact_page()
    samples = source.bundled_samples(SAMPLES_DIR)
    url_state.restore(samples)
    inputs = Inputs()
    choose_log(inputs)
    with section("Header"):
        tuning.show_header(samples, inputs.choice is not None and inputs.choice.origin == "upload")
    url_state.show_messages()
    choose_setups(inputs)
    with in_view.whole_page():  # a full run draws everything, on screen or not (see compaction.ui.in_view)
        tuning_view(inputs, state.page_signature(with_policy=False))


@st.fragment
def tuning_view(inputs: Inputs, page: str) -> None:
    """The strategy pickers with their parameters, the thresholds, the replays, the tokens chart and everything under
    it. A fragment: a strategy, parameter or threshold change reruns only this part (the log and the sidebar's setups
    stay as drawn); when a widget inside changed something the rest of the page shows (``page``:
    :func:`.state.page_signature` without what this view draws, as the full run saw it), the whole page runs again
    instead."""
    state.rerun_page_if_changed(page, with_policy=False)
    try:
        with section("Strategies"):
            choices = setups.choose_strategies()
        with section("Threshold policy"):
            policy = tuning.show_thresholds(inputs.conversation, inputs.log_key)
        specs = setups.with_choices(setups.with_shared_policy(inputs.setups, policy), choices)
        publish(inputs.choice, specs)
        show_replays(inputs, policy, specs)
    finally:
        heap.settle()


def show_replays(inputs: Inputs, policy: settings.Policy, specs: list[setups.SetupSpec]) -> None:
    """The replays of the log under ``specs``: the chart, the cards and the analysis tabs (or why there are none)."""
    choice, conversation = inputs.choice, inputs.conversation
    if choice is None:
        st.info("Upload an agent log in the sidebar to start.", icon=":material/upload_file:")
        return
    if not url_state.show_expected_upload(choice):
        return
    if inputs.load_error is not None:
        show_error("Could not read this log", inputs.load_error)
        return
    if conversation is None:
        return
    if not conversation.llm_call_indices:
        st.warning("This log has no assistant messages, so there is no LLM call to replay.", icon=":material/warning:")
        return
    if not policy.valid and any(not s.own_policy for s in specs):
        st.error(f"**Threshold policy is invalid** — {policy.error}", icon=":material/block:")
    outcomes: list[results.SetupResult] = []
    with section("Replay"), st.spinner("Replaying the log under each setup…"):
        outcomes = results.run_setups(conversation, inputs.log_key, specs)
    results.show_setup_errors(outcomes)
    live.show_withheld(outcomes)
    runs = results.runs_of(outcomes)
    if not runs:
        st.info("Fix the settings in the sidebar to see the replay.", icon=":material/tune:")
        return
    colors = {r.setup.label: r.setup.color for r in outcomes}
    runs_key = results.runs_key(outcomes)
    page = state.page_signature()

    # the parts under the chart: each a fragment of its own, so that a widget inside reruns only that part, and a run
    # that leaves it undrawn (off screen, see step_panel.explorer) keeps the state of every widget inside

    @st.fragment
    def cards(step: int) -> None:
        """The cards and the lesson."""
        state.rerun_page_if_changed(page)
        with section("Results"):
            st.subheader("Results", anchor="results")
            results.show_metric_cards(outcomes, policy.context_window)
        with section("Lesson"):
            tour.show_lesson()

    @st.fragment
    def tabs(step: int) -> None:
        """The analysis tabs (only the open one runs)."""
        state.rerun_page_if_changed(page)
        explore, inside, summary, cost_tab, sweep_tab, fleet_tab = navigation.analysis_tabs()
        if explore.open:
            with explore:
                step_panel.show_step_context(runs, colors, step, runs_key)
        if inside.open:
            with inside:
                step_panel.show_step_inside(outcomes, step)
        if summary.open:
            with summary:
                with section("Summary"):
                    results.show_summary_table(outcomes)
                with section("Share and export"):
                    chart = tokens_chart_spec(runs_key, tuple(step_panel.series_colors(runs, colors).items()), None,
                                              runs, step_panel.TUNING_CHART_HEIGHT)
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

    regions = ((step_panel.RESULTS_KEY, "Results: the cards of each setup", cards),
               (step_panel.TABS_KEY, "Analysis tabs: contexts, inside one setup, summary, cost, sweep, fleet", tabs))
    step_panel.explorer(runs, colors, runs_key, regions, page)


def load_into_explorer(setup: Setup) -> None:
    """A sweep cell (or the best setting) becomes a new setup of the explorer, which opens (one click undoes it)."""
    state.remember("adding the sweep's setting as a new setup")
    state.add_setup(setup)
    navigation.go_to("explore")
    st.rerun()


def publish(choice: source.LogChoice | None, specs: list[setups.SetupSpec]) -> None:
    """Keep the URL in step with the view: a sample's name, or for an upload the file's name, size and digest (the
    file itself cannot travel in a link: whoever opens it is asked for that file)."""
    with section("Link"):
        url_state.publish_view(choice, [s.setup() for s in specs])


try:
    main()
finally:
    heap.settle()  # keep the cyclic GC off the caches (see compaction.ui.heap)
