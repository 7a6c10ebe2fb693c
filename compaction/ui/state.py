"""The explorer's setups as session state: which setups exist, their colours, and which one is in focus.

Each setup lives in a *slot* with a stable id (``A``, ``B``, ``C``…) that never changes when the setup is renamed,
so every widget of a setup is keyed by its slot id. A setup's values (name, strategy, parameters, policy, counter)
are the widgets' own session-state values; adding, duplicating or importing a setup seeds those keys before the
widgets are drawn. Call the functions that change setups from a widget callback, or call ``st.rerun()`` after them.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

import compaction
from compaction.charts import SETUP_COLORS
from compaction.setups import Setup
from compaction.strategies import Param

from . import settings

SLOTS_KEY = "setups.slots"
FOCUS_KEY = "setups.focus"
#: (label, strategy) of the setups a new session starts with
DEFAULT_SETUPS: tuple[tuple[str, str], ...] = (
    ("A", "haystack.tool_result_pruning"),
    ("B", "agent_framework.tool_result_compaction"),
)
#: the strategy a newly added (empty) setup starts with
NEW_SETUP_STRATEGY = "haystack.tool_result_pruning"
MAX_LABEL = 40
#: keys of a setup's buttons (a button's state cannot be written, so duplicating skips them)
BUTTON_SUFFIXES = (".duplicate", ".remove", ".confirm_live")
#: the key of a setup's parameter popover: whether it is open (a view state: never copied, kept for undo or compared)
PARAMS_OPEN_SUFFIX = ".params_open"
#: the keys of a setup that hold no part of the setup itself
TRANSIENT_SUFFIXES = (*BUTTON_SUFFIXES, PARAMS_OPEN_SUFFIX)


@dataclass(frozen=True)
class Slot:
    """One setup of the explorer: a stable id (the key of its widgets) and its colour in every chart and panel."""

    id: str
    color: str


# ------------------------------------------------------------------------------------------------ widget keys
def strategy_key(slot_id: str) -> str:
    return f"setup.{slot_id}.strategy"


def label_key(slot_id: str) -> str:
    return f"setup.{slot_id}.label"


def widget_key(slot_id: str, strategy: str, param: str) -> str:
    """Session-state key of one parameter widget (per setup and strategy, so switching strategy starts from its
    defaults)."""
    return f"setup.{slot_id}.{strategy}.{param}"


def params_open_key(slot_id: str) -> str:
    """True while the popover of a setup's parameters is open (only then are its widgets drawn)."""
    return f"setup.{slot_id}{PARAMS_OPEN_SUFFIX}"


def own_policy_key(slot_id: str) -> str:
    return f"setup.{slot_id}.own_policy"


def own_counter_key(slot_id: str) -> str:
    return f"setup.{slot_id}.own_counter"


def unconfirmed_key(slot_id: str) -> str:
    """True while a setup that came with a link or an imported file may not call a live summarizer (until the person
    on the page confirms; see :mod:`.live`)."""
    return f"setup.{slot_id}.unconfirmed_live"


def confirm_button_key(slot_id: str) -> str:
    return f"setup.{slot_id}.confirm_live"


def policy_keys(slot_id: str) -> settings.PolicyKeys:
    """The keys of a setup's own threshold-policy widgets."""
    return settings.PolicyKeys(f"setup.{slot_id}.window", f"setup.{slot_id}.compact_at", f"setup.{slot_id}.compact_to")


def counter_keys(slot_id: str) -> settings.CounterKeys:
    """The keys of a setup's own counter widgets."""
    return settings.CounterKeys(f"setup.{slot_id}.counter", f"setup.{slot_id}.chars_per_token")


# ------------------------------------------------------------------------------------------------ slots
def slots() -> list[Slot]:
    """The setups of this session in order (the defaults on first use)."""
    state = st.session_state
    if SLOTS_KEY not in state:
        state[SLOTS_KEY] = []
        for label, strategy in DEFAULT_SETUPS:
            _append(shared_setup(strategy, label))
        state[FOCUS_KEY] = state[SLOTS_KEY][0].id
    return list(state[SLOTS_KEY])


def focus() -> str | None:
    """The id of the setup in focus (the one the composition, lifecycle and export panels show)."""
    ids = [s.id for s in slots()]
    current = st.session_state.get(FOCUS_KEY)
    return current if current in ids else (ids[0] if ids else None)


def set_focus(slot_id: str) -> None:
    st.session_state[FOCUS_KEY] = slot_id


def next_id(taken: Sequence[str]) -> str:
    """The first free slot id: ``A``…``Z``, then ``S27``, ``S28``…"""
    for n in range(1, 10_000):
        candidate = chr(ord("A") + n - 1) if n <= 26 else f"S{n}"
        if candidate not in taken:
            return candidate
    raise ValueError("too many setups")


def next_color(taken: Sequence[str]) -> str:
    """The first setup colour no setup uses yet (the palette repeats when every colour is taken)."""
    free = [c for c in SETUP_COLORS if c not in taken]
    return free[0] if free else SETUP_COLORS[len(taken) % len(SETUP_COLORS)]


def _append(setup: Setup, notices: list[str] | None = None, untrusted: bool = False, where: str = "") -> Slot:
    current: list[Slot] = st.session_state[SLOTS_KEY]
    slot = Slot(next_id([s.id for s in current]), next_color([s.color for s in current]))
    found = _seed(slot.id, setup, where)
    if notices is not None:
        notices.extend(found)
    if untrusted:
        st.session_state[unconfirmed_key(slot.id)] = True
    st.session_state[SLOTS_KEY] = [*current, slot]
    return slot


def add_setup(setup: Setup) -> None:
    """Append ``setup`` to the explorer and put it in focus (its policy and counter become its own when they differ
    from the shared ones). Call from a widget callback, or call ``st.rerun()`` afterwards."""
    slots()
    slot = _append(setup)
    set_focus(slot.id)


def shared_setup(strategy: str, label: str = "") -> Setup:
    """A setup of ``strategy`` with default parameters and the shared policy and counter."""
    shared = settings.shared_values()
    return Setup(strategy, {}, context_window=shared.context_window, compact_at=shared.compact_at,
                 compact_to=shared.compact_to, counter=shared.counter, label=label)


def add_default_setup() -> None:
    """A new setup with the default strategy and parameters."""
    add_setup(shared_setup(NEW_SETUP_STRATEGY))


def duplicate_setup(slot_id: str) -> None:
    """A copy of a setup (strategy, parameters, policy, counter), named after it, placed right after it."""
    current = slots()
    source = next(s for s in current if s.id == slot_id)
    copy = Slot(next_id([s.id for s in current]), next_color([s.color for s in current]))
    state = st.session_state
    prefix = f"setup.{slot_id}."
    copied = [k for k in state if isinstance(k, str) and k.startswith(prefix) and not k.endswith(TRANSIENT_SUFFIXES)]
    for key in copied:
        state[f"setup.{copy.id}." + key[len(prefix):]] = state[key]
    state[label_key(copy.id)] = unique_label(f"{state.get(label_key(slot_id), slot_id)} copy",
                                             [label_of(s.id) for s in current])
    position = current.index(source) + 1
    state[SLOTS_KEY] = [*current[:position], copy, *current[position:]]
    set_focus(copy.id)


def confirm_live(slot_id: str) -> None:
    """The person on the page confirmed that this setup may call its live summarizer."""
    st.session_state.pop(unconfirmed_key(slot_id), None)


def remove_setup(slot_id: str) -> None:
    """Remove a setup (the last one stays: the explorer always has at least one)."""
    current = slots()
    if len(current) <= 1:
        return
    st.session_state[SLOTS_KEY] = [s for s in current if s.id != slot_id]
    if st.session_state.get(FOCUS_KEY) == slot_id:
        set_focus(st.session_state[SLOTS_KEY][0].id)


def replace_setups(setups: Sequence[Setup], focus_position: int = 0, untrusted: bool = False) -> list[str]:
    """Make ``setups`` the explorer's setups; the first one's policy and counter become the shared ones.

    Returns notices: values moved into the widgets' ranges, and setups left out because the app does not offer
    their counter (each costs only itself; ``ValueError`` when none is left, and then nothing changes).
    ``untrusted``: they came with a link or an imported file, so none may call a live summarizer before the person
    on the page confirms it."""
    notices: list[str] = []
    usable: list[tuple[int, Setup]] = []
    for position, setup in enumerate(setups, start=1):
        try:
            counter_widget_values(setup.counter)
            usable.append((position, setup))
        except ValueError as exc:
            notices.append(f"setup {position} left out: {exc}")
    if not usable:
        raise ValueError("; ".join(notices) or "expected at least one setup")
    first = usable[0][1]
    state = st.session_state
    for key in [k for k in state if isinstance(k, str) and k.startswith("setup.")]:
        del state[key]
    notices += [f"shared policy: {n}" for n in settings.seed_policy(settings.SHARED_POLICY_KEYS, first.context_window,
                                                                    first.compact_at, first.compact_to)]
    notices += [f"shared counter: {n}" for n in settings.seed_counter(settings.SHARED_COUNTER_KEYS,
                                                                      *counter_widget_values(first.counter))]
    state[SLOTS_KEY] = []
    added = [_append(s, notices, untrusted, f"setup {position}") for position, s in usable]
    set_focus(added[min(focus_position, len(added) - 1)].id)
    return notices


#: session-state keys outside the setups' own (``setup.…``) that change what the whole page shows
PAGE_KEYS = (SLOTS_KEY, FOCUS_KEY, "fleet_open_log", *settings.SHARED_POLICY_KEYS, *settings.SHARED_COUNTER_KEYS)


def page_signature(with_policy: bool = True) -> str:
    """What the whole page depends on in session state (the setups, the shared policy and counter, a log opened from
    the fleet), as one string: a part of the page that reruns alone compares it with the full run's to know whether
    a widget inside it changed the rest of the page (see :func:`.step_panel.explorer`). ``with_policy=False``: all
    but what the tuning view draws itself — the shared policy, the setups' strategies and their parameters."""
    state = st.session_state
    opened = state.get("fleet_open_log")
    skipped = {"fleet_open_log", *(() if with_policy else settings.SHARED_POLICY_KEYS)}
    parts = [repr(state.get(k)) for k in PAGE_KEYS if k not in skipped]
    parts.append(repr((opened.get("name"), opened.get("conversation"))) if isinstance(opened, dict) else "")
    parts += sorted(f"{k}={state[k]!r}" for k in state if isinstance(k, str) and k.startswith("setup.")
                    and not k.endswith(TRANSIENT_SUFFIXES) and (with_policy or not is_strategy_key(k)))
    return "\n".join(parts)


def rerun_page_if_changed(page: str, with_policy: bool = True) -> None:
    """At the start of a fragment: when a widget inside it changed what the rest of the page shows (``page``: the
    :func:`page_signature` the full run that drew the fragment saw; empty: no check), run the whole page again."""
    if page and page_signature(with_policy) != page:
        st.rerun()


def is_strategy_key(key: str) -> bool:
    """True for the session-state key of a setup's strategy picker or of one of its parameters
    (``setup.<slot>.strategy``, ``setup.<slot>.<strategy>.<param>``: a strategy's name holds a dot)."""
    parts = key.split(".")
    return parts[0] == "setup" and (len(parts) >= 4 or (len(parts) == 3 and parts[2] == "strategy"))


# ------------------------------------------------------------------------------------------------ undo
UNDO_KEY = "setups.undo"
UNDO_BUTTON_KEY = "setups.undo.button"
KEEP_BUTTON_KEY = "setups.undo.keep"
#: what an undo puts back besides the setups' own keys: the slots, the focus, the shared policy and counter, the sample
UNDO_KEYS = (SLOTS_KEY, FOCUS_KEY, *settings.SHARED_POLICY_KEYS, *settings.SHARED_COUNTER_KEYS, "log.sample",
             "step", "step.auto")


def remember(reason: str) -> None:
    """Keep the setups as they are (with the shared policy and counter, the sample and the step) before ``reason``
    (our own words, e.g. "the lesson …") replaces or changes them, so that :func:`undo` can put them back."""
    state = st.session_state
    saved = {k: state[k] for k in state if isinstance(k, str) and k.startswith("setup.")
             and not k.endswith(TRANSIENT_SUFFIXES) and not k.startswith("setups.")}
    saved.update({k: state[k] for k in UNDO_KEYS if k in state})
    state[UNDO_KEY] = {"reason": reason, "values": saved}


def undo() -> None:
    """Callback: put back the setups :func:`remember` kept (nothing to undo: nothing changes)."""
    state = st.session_state
    kept = state.pop(UNDO_KEY, None)
    if not kept:
        return
    for key in [k for k in state if isinstance(k, str) and k.startswith("setup.")]:
        del state[key]
    for key in UNDO_KEYS:
        state.pop(key, None)
    for key, value in kept["values"].items():
        state[key] = value
    state.pop("tour.lesson", None)


def forget_undo() -> None:
    """Callback: keep the new setups (the undo offer goes away)."""
    st.session_state.pop(UNDO_KEY, None)


def show_undo() -> None:
    """When setups were just replaced: what replaced them, and one click to get the previous ones back."""
    kept = st.session_state.get(UNDO_KEY)
    if not kept:
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.markdown(f":material/history: Your setups were replaced by {kept['reason']}.")  # our own words
        st.button("Undo", key=UNDO_BUTTON_KEY, on_click=undo, icon=":material/undo:", type="primary",
                  help="Put back the setups, thresholds, counter, sample and step you had before.")
        st.button("Keep the new ones", key=KEEP_BUTTON_KEY, on_click=forget_undo, type="tertiary")


# ------------------------------------------------------------------------------------------------ values
def label_of(slot_id: str) -> str:
    return str(st.session_state.get(label_key(slot_id)) or slot_id)


def unique_label(wanted: str, taken: Sequence[str]) -> str:
    """``wanted`` (trimmed, on one line, at most :data:`MAX_LABEL` characters), numbered if another setup has it."""
    base = " ".join(str(wanted).split())[:MAX_LABEL] or "Setup"
    label, n = base, 2
    while label in taken:
        label, n = f"{base} ({n})", n + 1
    return label


def widget_value(param: Param, value: Any) -> Any:
    """A parameter value as its widget holds it (lists as comma-separated text, numbers as numbers)."""
    if param.type == "str_list":
        return value if isinstance(value, str) else ", ".join(str(v) for v in value or ())
    if param.type == "int":
        return int(value)
    if param.type == "float":
        return float(value)
    if param.type == "bool":
        return bool(value)
    return "" if value is None else str(value)


def counter_widget_values(spec: str) -> tuple[str, float | None]:
    """The counter widgets' values for a counter spec; ``ValueError`` for a counter the app does not offer."""
    if spec in settings.COUNTER_OPTIONS:
        return spec, None
    kind, _, arg = spec.partition(":")
    if kind == "approx":
        try:
            return "approx:custom", float(arg)
        except ValueError:
            pass
    raise ValueError(f"counter {spec!r} is not one the app offers ({', '.join(settings.COUNTER_OPTIONS)})")


def _seed(slot_id: str, setup: Setup, where: str = "") -> list[str]:
    """Write a setup's values into its widgets' keys (before they are drawn); returns a notice for each value moved
    into its widget's range (starting with ``where``, by default the setup's label)."""
    state = st.session_state
    info = compaction.get_strategy(setup.strategy)
    taken = [label_of(s.id) for s in state.get(SLOTS_KEY, [])]
    state[label_key(slot_id)] = unique_label(setup.label or slot_id, taken)
    state[strategy_key(slot_id)] = setup.strategy
    params: Mapping[str, Param] = {p.name: p for p in info.params}
    for name, value in setup.params.items():
        if name in params and not callable(value):
            state[widget_key(slot_id, setup.strategy, name)] = widget_value(params[name], value)
    shared = settings.shared_values()
    notices: list[str] = []
    where = where or f"setup {state[label_key(slot_id)]}"
    policy, moved = settings.policy_in_range(setup.context_window, setup.compact_at, setup.compact_to)
    if policy != (shared.context_window, shared.compact_at, shared.compact_to):
        state[own_policy_key(slot_id)] = True
        settings.seed_policy(policy_keys(slot_id), *policy)
        notices += [f"{where}: {n}" for n in moved]
    kind, chars = counter_widget_values(setup.counter)
    chars, moved = settings.chars_in_range(chars)
    if settings.counter_spec(kind, chars) != shared.counter:
        state[own_counter_key(slot_id)] = True
        settings.seed_counter(counter_keys(slot_id), kind, chars)
        notices += [f"{where}: {n}" for n in moved]
    return notices
