"""Sidebar settings shared by every setup: the token counter and the threshold policy."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic
from typing import NamedTuple
from typing import TypedDict
from typing import TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from compaction.conversation import Conversation
from compaction.models import Resolved
from compaction.models import resolve_context_window
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
DEFAULT_WINDOW = 64_000
DEFAULT_COMPACT_AT = 0.7
DEFAULT_COMPACT_TO = 0.4
DEFAULT_CHARS_PER_TOKEN = 3.3

COUNTER_KEY = "counter.kind"
CHARS_KEY = "counter.chars_per_token"
WINDOW_KEY = "policy.context_window"
AT_KEY = "policy.compact_at"
TO_KEY = "policy.compact_to"
WINDOW_RANGE = (1, 10_000_000)
AT_RANGE = (0.05, 1.0)
TO_RANGE = (0.01, 1.0)
CHARS_RANGE = (0.5, 20.0)

T = TypeVar("T")


class PolicyKeys(NamedTuple):
    """Session-state keys of one set of threshold-policy widgets."""

    window: str
    compact_at: str
    compact_to: str


class CounterKeys(NamedTuple):
    """Session-state keys of one set of counter widgets."""

    kind: str
    chars: str


class SharedValues(NamedTuple):
    """The shared policy and counter as the widgets hold them (defaults before they are drawn)."""

    context_window: int
    compact_at: float
    compact_to: float
    counter: str


SHARED_POLICY_KEYS = PolicyKeys(WINDOW_KEY, AT_KEY, TO_KEY)
SHARED_COUNTER_KEYS = CounterKeys(COUNTER_KEY, CHARS_KEY)


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


class InitialValue(TypedDict, Generic[T], total=False):
    """A widget's ``value`` argument, or nothing (see :func:`initial_value`)."""

    value: T


class InitialIndex(TypedDict, total=False):
    """A select box's ``index`` argument, or nothing (see :func:`initial_index`)."""

    index: int


class InitialDefault(TypedDict, Generic[T], total=False):
    """A multiselect's ``default`` argument, or nothing (see :func:`initial_default`)."""

    default: list[T]


def initial_value(key: str, value: T) -> InitialValue[T]:
    """``value=`` for a widget's initial value, or nothing when its key already holds a value (seeded by an
    import, a link or a tour): passing both makes Streamlit warn that the default is ignored."""
    return {} if key in st.session_state else {"value": value}


def initial_index(key: str, index: int) -> InitialIndex:
    """``index=`` for a select box, or nothing when its key already holds a value (as :func:`initial_value`)."""
    return {} if key in st.session_state else {"index": index}


def initial_default(key: str, default: list[T]) -> InitialDefault[T]:
    """``default=`` for a multiselect, or nothing when its key already holds a value (as :func:`initial_value`)."""
    return {} if key in st.session_state else {"default": default}


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(max(value, bounds[0]), bounds[1])


def _into_range(value: float, bounds: tuple[float, float], name: str, notices: list[str]) -> float:
    """``value`` moved into a widget's ``bounds`` (a widget must never receive a value outside its range), with a
    notice naming the setting and the value when it had to move. ``ValueError`` for a value that is not a finite
    number (nothing sensible to move)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    moved = _clamp(value, bounds)
    if moved != value:
        notices.append(f"{name} {_number(value)} is outside the app's range ({_number(bounds[0])} to "
                       f"{_number(bounds[1])}); using {_number(moved)}")
    return moved


def _number(value: float) -> str:
    """``10,000,000`` for large whole numbers, ``0.05`` for fractions."""
    return f"{int(value):,}" if float(value).is_integer() and abs(value) >= 1000 else f"{value:g}"


def counter_spec(kind: str, chars: float | None) -> str:
    """The counter spec of the counter widgets' values (``approx:custom`` with 3.3 → ``approx:3.3``)."""
    return f"approx:{float(chars if chars is not None else DEFAULT_CHARS_PER_TOKEN):g}" if kind == "approx:custom" \
        else kind


def shared_values() -> SharedValues:
    """The shared policy and counter, from their widgets' state (the defaults before they are drawn)."""
    state = st.session_state
    return SharedValues(
        int(state.get(WINDOW_KEY, DEFAULT_WINDOW)),
        round(float(state.get(AT_KEY, DEFAULT_COMPACT_AT)), 4),
        round(float(state.get(TO_KEY, DEFAULT_COMPACT_TO)), 4),
        counter_spec(state.get(COUNTER_KEY, "approx"), state.get(CHARS_KEY)),
    )


def policy_in_range(context_window: float | None, compact_at: float, compact_to: float
                    ) -> tuple[tuple[int, float, float], list[str]]:
    """Policy values as the widgets can hold them (moved into their ranges), and a notice per value that moved;
    ``ValueError`` for a value that is not a finite number. A window of None (take the log's) is the shared window
    as its widget holds it (it follows the loaded log)."""
    notices: list[str] = []
    if context_window is None:
        context_window = shared_values().context_window
    values = (int(_into_range(context_window, WINDOW_RANGE, "context_window", notices)),
              float(_into_range(compact_at, AT_RANGE, "compact_at", notices)),
              float(_into_range(compact_to, TO_RANGE, "compact_to", notices)))
    return values, notices


def chars_in_range(chars: float | None) -> tuple[float | None, list[str]]:
    """Chars per token as its widget can hold it, and a notice when it moved."""
    notices: list[str] = []
    return (None if chars is None else float(_into_range(chars, CHARS_RANGE, "chars per token", notices))), notices


def seed_policy(keys: PolicyKeys, context_window: float | None, compact_at: float, compact_to: float) -> list[str]:
    """Write policy values into widget keys before the widgets are drawn, moved into the widgets' ranges: returns a
    notice for each value that had to move (``ValueError`` for one that is not a finite number). A window of None
    (the setup takes the log's) leaves the window widget as it is."""
    values, notices = policy_in_range(context_window, compact_at, compact_to)
    state = st.session_state
    if context_window is not None:
        state[keys.window] = values[0]
    state[keys.compact_at], state[keys.compact_to] = values[1:]
    return notices


def seed_counter(keys: CounterKeys, kind: str, chars: float | None) -> list[str]:
    """Write counter values into widget keys before the widgets are drawn (chars per token moved into its widget's
    range): returns a notice when it had to move."""
    chars, notices = chars_in_range(chars)
    st.session_state[keys.kind] = kind
    if chars is not None:
        st.session_state[keys.chars] = chars
    return notices


COUNTER_HELP = (
    "How tokens are counted for triggers, targets and the chart. **approx**: Haystack's "
    "ApproximateTokenCounter (the whole conversation rendered as one text, characters ÷ chars-per-token). "
    "**tiktoken**: Haystack's TiktokenCounter on the same text — o200k_base for GPT-4o/4.1/5, cl100k_base for "
    "GPT-4/3.5. **Agent Framework .NET**: UTF-8 bytes of each message ÷ 4. **Agent Framework Python**: "
    "CharacterEstimatorTokenizer, JSON characters of each message ÷ 4."
)


def choose_counter(keys: CounterKeys = SHARED_COUNTER_KEYS, header: bool = True) -> str:
    """The token counter spec (``approx``, ``approx:3.3``, ``tiktoken:o200k_base``, …) from its widgets.

    Shows a notice when the counter falls back (e.g. a tiktoken encoding that cannot be loaded offline).
    """
    if header:
        st.header("Token counter", divider="gray")
    kind = st.selectbox("Counter", list(COUNTER_OPTIONS), format_func=COUNTER_OPTIONS.__getitem__, key=keys.kind,
                        help=COUNTER_HELP)
    spec = kind
    if kind == "approx:custom":
        chars = st.number_input(
            "Characters per token",
            min_value=CHARS_RANGE[0],
            max_value=CHARS_RANGE[1],
            **initial_value(keys.chars, DEFAULT_CHARS_PER_TOKEN),
            step=0.1,
            format="%.1f",
            key=keys.chars,
            help="Haystack ApproximateTokenCounter(chars_per_token=…): code and JSON are often nearer 3 characters "
            "per token than 4.",
        )
        spec = counter_spec(kind, chars)
    choice = cache.counter(spec)
    if choice.notice:
        st.warning(escape_markdown(choice.notice), icon=":material/info:")
    return choice.counter.spec if choice.notice else spec


def choose_policy(keys: PolicyKeys = SHARED_POLICY_KEYS, header: bool = True, inline: bool = False) -> Policy:
    """``context_window``, ``compact_at`` and ``compact_to`` from their widgets, validated as Haystack does.

    ``inline``: the three widgets side by side on one row (the tuning view at the top of the page), else stacked."""
    if header:
        st.header("Threshold policy", divider="gray")
    slots = st.columns([1.0, 1.35, 1.35], gap="medium") if inline else (st.container(), st.container(),
                                                                        st.container())
    window = slots[0].number_input(
        "Context window (tokens)",
        min_value=WINDOW_RANGE[0],
        max_value=WINDOW_RANGE[1],
        **initial_value(keys.window, DEFAULT_WINDOW),
        step=1_000,
        key=keys.window,
        help="The model's context window. Haystack CompactionHook(context_window=…). It follows the loaded log (the "
        "window the log states, else its model's); a log that says nothing starts at 64,000, sized for the bundled "
        "samples.",
    )
    compact_at = _fraction_slider(slots[1], "Compact at", AT_RANGE, keys.compact_at, DEFAULT_COMPACT_AT,
                                  "Trigger: compaction runs before an LLM call once the context reaches compact_at × "
                                  "window.")
    compact_to = _fraction_slider(slots[2], "Compact to", TO_RANGE, keys.compact_to, DEFAULT_COMPACT_TO,
                                  "Target: the strategy is asked to bring the context under compact_to × window. Must "
                                  "be below compact_at, or compaction would be attempted again every step.")
    policy = check_policy(int(window), round(float(compact_at), 4), round(float(compact_to), 4))
    if policy.valid:
        if not inline:
            st.caption(f"Trigger at **{int(window * policy.compact_at):,}** tokens · target "
                       f"**{int(window * policy.compact_to):,}** tokens (strategies with their own trigger may differ).")
    elif policy.error is not None:
        # our own validation text, not log content; the full reason is shown above the results
        st.error(policy.error.split(". ")[0] + ".", icon=":material/block:")
    return policy


def _fraction_slider(slot: DeltaGenerator, name: str, bounds: tuple[float, float], key: str, default: float,
                     help_text: str) -> float:
    """A threshold of the policy as a fraction of the window (``name`` … ``(fraction of the window)``) in ``slot``,
    in steps of 0.01 within ``bounds``."""
    return slot.slider(f"{name} (fraction of the window)", min_value=bounds[0], max_value=bounds[1],
                     **initial_value(key, default), step=0.01, key=key, help=help_text)


def policy_caption(policy: Policy) -> str:
    """``Trigger at **44,800** tokens · target **25,600**`` (our own words and numbers), for a valid policy."""
    window = policy.context_window
    return (f"Trigger at **{int(window * policy.compact_at):,}** tokens · target **{int(window * policy.compact_to):,}**"
            " (strategies with their own trigger may differ)")


# ------------------------------------------------------------------------------------------------ window from the log
#: what the window widget was last given from a log (``{"log", "value", "source", "note"}``): while the widget still
#: holds that value the user has not set the window, so the next log may set it again
LOG_WINDOW_KEY = "policy.context_window.from_log"
USE_LOG_WINDOW_KEY = "policy.context_window.use_log"


@dataclass(frozen=True)
class LogWindow:
    """The window a loaded log resolves to, and what became of it: ``applied`` (the widget now holds it) or, when
    the user had set another window, ``offered`` (a button asks before replacing it)."""

    resolved: Resolved
    applied: bool
    offered: bool


def _user_window() -> int | None:
    """The window the user (or a link, an import, a tour) set, or None while the widget holds what the app put there
    (the default, or the last log's window; a link that sets exactly the default is taken for the default)."""
    state = st.session_state
    if WINDOW_KEY not in state:
        return None
    current = int(state[WINDOW_KEY])
    seeded = state.get(LOG_WINDOW_KEY)
    expected = seeded["value"] if seeded else DEFAULT_WINDOW
    return None if current == expected else current


def _apply_log_window(log_key: str, resolved: Resolved) -> None:
    value = int(_clamp(int(resolved.value), WINDOW_RANGE))
    st.session_state[WINDOW_KEY] = value
    st.session_state[LOG_WINDOW_KEY] = {"log": log_key, "value": value, "source": resolved.source,
                                        "note": resolved.note}


def follow_log_window(conversation: Conversation, log_key: str) -> LogWindow:
    """Seed the shared window widget from the loaded log (call before :func:`choose_policy` draws it): the log's
    stated window, else its model's, else :data:`DEFAULT_WINDOW`. A window the user set is never replaced: the log's
    is offered instead (see :func:`show_log_window`)."""
    resolved = resolve_context_window(conversation, default=DEFAULT_WINDOW)
    value = int(_clamp(int(resolved.value), WINDOW_RANGE))
    user = _user_window()
    if user is None:
        _apply_log_window(log_key, resolved)
        return LogWindow(resolved, applied=True, offered=False)
    return LogWindow(resolved, applied=False, offered=user != value and resolved.source != "default")


def window_note(window: LogWindow | None, source: bool = True) -> str | None:
    """Where the window widget's value came from, as caption markdown (None when the log's window is not applied;
    ``source``: with the resolution's source, e.g. ``log:model_context_window``)."""
    if window is None or not window.applied:
        return None
    resolved = window.resolved
    origin = "window from the log" if resolved.source != "default" else "default window"
    return f"{origin}: {escape_markdown(resolved.note)}" + (f" ({escape_markdown(resolved.source)})" if source else "")


def show_log_window(window: LogWindow | None, log_key: str, caption: bool = True) -> None:
    """Under the window widget: where its value came from (unless ``caption`` is False: the caller shows
    :func:`window_note` itself), or the log's window with a button to use it."""
    if window is None:
        return
    resolved = window.resolved
    note = window_note(window)
    if note is not None:
        if caption:
            st.caption(note[0].upper() + note[1:] + ".")
    elif window.offered:
        with st.container(horizontal=True, vertical_alignment="center", gap="small", wrap=False):
            st.caption(f":blue[:material/info:] This log's window is **{int(resolved.value):,}** — "
                       f"{escape_markdown(resolved.note)}. Your window is kept.", width="stretch")
            st.button("Use the log's window", key=USE_LOG_WINDOW_KEY, on_click=_apply_log_window,
                      args=(log_key, resolved), help="Replace the shared context window with the log's.",
                      type="tertiary")
