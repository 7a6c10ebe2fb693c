"""A guided tour: presets on the bundled samples, each loading a log, setups and a step that show one lesson.

The step a lesson points at is found by replaying the preset (the first call a given warning concerns), not
written down, so the tour stays right when the samples or the strategies change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import compaction
from compaction import explain
from compaction.setups import Setup

from . import state
from . import step_panel
from .source import SAMPLE_KEY

LESSON_KEY = "tour.lesson"
WINDOW = 64_000


@dataclass(frozen=True)
class Preset:
    """One lesson: a bundled sample, the setups to compare, and which setup's warning marks the step to show."""

    key: str
    title: str
    sample: str
    setups: tuple[Setup, ...]
    lesson: str
    #: (setup position, warning kind): the step shown is the first call of that warning; None = first compaction
    step_from: tuple[int, str] | None = None


PRESETS: tuple[Preset, ...] = (
    Preset(
        "prune_vs_collapse",
        "Gentle pruning vs collapse",
        "coding_agent.openai.json",
        (
            Setup("haystack.tool_result_pruning", {}, context_window=WINDOW, label="Prune"),
            Setup("agent_framework.tool_result_compaction", {}, context_window=WINDOW, label="Collapse"),
        ),
        "Both setups fire at the same trigger. **Prune** (Haystack) keeps every message and replaces old tool "
        "results with a short placeholder, so the conversation keeps its shape and the model can still see which "
        "tools ran. **Collapse** (Agent Framework) removes whole older tool-call groups and sends a digest in their "
        "place: the digest carries the results, so it can stay large, and the floor band shows how little room is "
        "left above it. Compare the two lines after the first ▼, then open an original below.",
    ),
    Preset(
        "sliding_window_loses_task",
        "A sliding window loses the task",
        "support_agent.openai.json",
        (
            Setup("haystack.tool_result_pruning", {}, context_window=WINDOW, label="Prune"),
            Setup("agent_framework_python.sliding_window", {"keep_last_groups": 3}, context_window=WINDOW,
                  label="Window"),
        ),
        "A sliding window keeps only the last few message groups. With **keep_last_groups = 3** the customer's "
        "request itself slides out after a few calls: the badge *first user request lost* turns red and, from the "
        "step shown, the model no longer sees what it was asked to do. Pruning tool results keeps the request. "
        "Look at the lifecycle chart: the window drops everything behind it, at every call.",
        step_from=(1, "first_user_lost"),
    ),
    Preset(
        "thrashing",
        "Thrashing (compact_to ≈ compact_at)",
        "research_agent.openai.json",
        (
            Setup("haystack.tool_result_pruning", {}, context_window=WINDOW, compact_at=0.7, compact_to=0.4,
                  label="Target 0.4"),
            Setup("haystack.tool_result_pruning", {}, context_window=WINDOW, compact_at=0.7, compact_to=0.65,
                  label="Target 0.65"),
        ),
        "The same strategy twice, with its own policy each. **Target 0.4** compacts well below the trigger and "
        "then has room to grow. **Target 0.65** stops just under the trigger, so the next tool result crosses it "
        "again: compactions come back to back (a thrashing warning), each rewriting the context and invalidating "
        "the prompt cache for a few tokens. Keep compact_to well below compact_at.",
        step_from=(1, "thrashing"),
    ),
)


def lesson_step(preset: Preset, path: Path) -> int | None:
    """The step the lesson points at: the first call of the preset's warning (None: the first compaction)."""
    if preset.step_from is None:
        return None
    position, kind = preset.step_from
    conversation = compaction.load_all_conversations(path.read_bytes(), name=path.name)[0]
    found = explain.warnings_for(preset.setups[position].run(conversation))
    return next((w.steps[0] for w in found if w.kind == kind and w.steps), None)


def load_preset(preset: Preset, samples: Sequence[Path]) -> None:
    """Callback: load the preset's sample, setups and step, and show its lesson."""
    path = next(p for p in samples if p.name == preset.sample)
    state.remember(f"the lesson *{preset.title}*")
    st.session_state[SAMPLE_KEY] = path
    state.replace_setups(preset.setups, focus_position=preset.step_from[0] if preset.step_from else 0)
    step = lesson_step(preset, path)
    st.session_state[step_panel.AUTO_KEY] = step is None
    if step is not None:
        st.session_state[step_panel.STEP_KEY] = step
    st.session_state[LESSON_KEY] = preset.key


def _close() -> None:
    st.session_state.pop(LESSON_KEY, None)


def show_tour(samples: Sequence[Path], uploaded: bool = False) -> None:
    """The tour's button (a popover with one button per lesson: each says it replaces the setups, which can be
    undone; ``uploaded``: an upload is loaded, which a lesson cannot replace, so the lessons wait for it to go)."""
    names = {p.name for p in samples}
    with st.popover("Guided tour", icon=":material/school:", help="Three lessons on the bundled samples."):
        st.caption("Each lesson loads a sample, two setups and the step that shows it. It replaces your setups; "
                   "one click (*Undo*) brings them back.")
        if uploaded:
            st.caption("Remove the uploaded log in the sidebar first: an upload takes precedence over the samples.")
        for preset in PRESETS:
            missing = preset.sample not in names
            st.button(preset.title, key=f"tour.{preset.key}", on_click=load_preset, args=(preset, samples),
                      disabled=missing or uploaded, width="stretch",
                      help=f"needs the bundled sample {preset.sample}" if missing else None)


def show_lesson() -> None:
    """The current lesson (if a preset was loaded), with a button to close it."""
    current = next((p for p in PRESETS if p.key == st.session_state.get(LESSON_KEY)), None)
    if current is not None:
        with st.container(border=True):
            st.markdown(f"**Lesson — {current.title}.** {current.lesson}")
            st.button("Close the lesson", key="tour.close", on_click=_close, type="tertiary")
