"""Sidebar settings shared by every setup: the token counter and the threshold policy."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from compaction.policy import validate_threshold

from . import cache
from .text import escape_markdown

#: counter spec → what the option is called in the sidebar
COUNTER_OPTIONS: dict[str, str] = {
    "approx": "approx · 4 chars/token",
    "approx:custom": "approx · custom chars/token",
    "tiktoken:o200k_base": "tiktoken · o200k_base",
    "tiktoken:cl100k_base": "tiktoken · cl100k_base",
    "maf-dotnet": "Agent Framework .NET",
    "maf-python": "Agent Framework Python",
}
DEFAULT_WINDOW = 100_000
DEFAULT_COMPACT_AT = 0.7
DEFAULT_COMPACT_TO = 0.4
DEFAULT_CHARS_PER_TOKEN = 3.3

COUNTER_KEY = "counter.kind"
CHARS_KEY = "counter.chars_per_token"
WINDOW_KEY = "policy.context_window"
AT_KEY = "policy.compact_at"
TO_KEY = "policy.compact_to"


@dataclass(frozen=True)
class Policy:
    """Haystack ``CompactionHook`` threshold settings; ``error`` is Haystack's reason when they are invalid."""

    context_window: int
    compact_at: float
    compact_to: float
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None


def check_policy(context_window: int, compact_at: float, compact_to: float) -> Policy:
    """A :class:`Policy`, validated exactly as Haystack validates ``CompactionHook``."""
    try:
        validate_threshold(context_window, compact_at, compact_to)
    except ValueError as exc:
        return Policy(context_window, compact_at, compact_to, str(exc))
    return Policy(context_window, compact_at, compact_to)


def choose_counter() -> str:
    """Sidebar: the token counter spec (``approx``, ``approx:3.3``, ``tiktoken:o200k_base``, …).

    Shows a notice when the counter falls back (e.g. a tiktoken encoding that cannot be loaded offline).
    """
    st.header("Token counter", divider="gray")
    kind = st.selectbox(
        "Counter",
        list(COUNTER_OPTIONS),
        format_func=COUNTER_OPTIONS.__getitem__,
        key=COUNTER_KEY,
        help="How tokens are counted for triggers, targets and the chart. **approx**: Haystack's "
        "ApproximateTokenCounter (the whole conversation rendered as one text, characters ÷ chars-per-token). "
        "**tiktoken**: Haystack's TiktokenCounter on the same text — o200k_base for GPT-4o/4.1/5, cl100k_base for "
        "GPT-4/3.5. **Agent Framework .NET**: UTF-8 bytes of each message ÷ 4. **Agent Framework Python**: "
        "CharacterEstimatorTokenizer, JSON characters of each message ÷ 4.",
    )
    spec = kind
    if kind == "approx:custom":
        chars = st.number_input(
            "Characters per token",
            min_value=0.5,
            max_value=20.0,
            value=DEFAULT_CHARS_PER_TOKEN,
            step=0.1,
            format="%.1f",
            key=CHARS_KEY,
            help="Haystack ApproximateTokenCounter(chars_per_token=…): code and JSON are often nearer 3 characters "
            "per token than 4.",
        )
        spec = f"approx:{chars:g}"
    choice = cache.counter(spec)
    if choice.notice:
        st.warning(escape_markdown(choice.notice), icon=":material/info:")
    return choice.counter.spec if choice.notice else spec


def choose_policy() -> Policy:
    """Sidebar: ``context_window``, ``compact_at`` and ``compact_to``, validated as Haystack does."""
    st.header("Threshold policy", divider="gray")
    window = st.number_input(
        "Context window (tokens)",
        min_value=1,
        max_value=10_000_000,
        value=DEFAULT_WINDOW,
        step=10_000,
        key=WINDOW_KEY,
        help="The model's context window. Haystack CompactionHook(context_window=…); the bundled samples reach "
        "about 60k–150k tokens uncompacted.",
    )
    compact_at = st.slider(
        "Compact at (fraction of the window)",
        min_value=0.05,
        max_value=1.0,
        value=DEFAULT_COMPACT_AT,
        step=0.01,
        key=AT_KEY,
        help="Trigger: compaction runs before an LLM call once the context reaches compact_at × window.",
    )
    compact_to = st.slider(
        "Compact to (fraction of the window)",
        min_value=0.01,
        max_value=1.0,
        value=DEFAULT_COMPACT_TO,
        step=0.01,
        key=TO_KEY,
        help="Target: the strategy is asked to bring the context under compact_to × window. Must be below "
        "compact_at, or compaction would be attempted again every step.",
    )
    policy = check_policy(int(window), round(float(compact_at), 4), round(float(compact_to), 4))
    if policy.valid:
        st.caption(
            f"Trigger at **{int(window * policy.compact_at):,}** tokens · target **{int(window * policy.compact_to):,}** "
            "tokens (strategies with their own trigger may differ)."
        )
    else:
        # our own validation text, not log content; the full reason is shown above the results
        st.error(policy.error.split(". ")[0] + ".", icon=":material/block:")
    return policy
