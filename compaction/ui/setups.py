"""Setups: any number of them, each with a strategy and its parameters (widgets generated from the registry's
metadata; in the tuning view, beside the thresholds) and, in the sidebar, a name and optionally its own threshold
policy and counter; add, duplicate, rename and remove.

The list of setups and their ids live in :mod:`.state`; everything downstream (replays, charts, tables, the
side-by-side view) iterates over the :class:`SetupSpec` list this module returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any
from typing import NamedTuple
from typing import TypeVar

import streamlit as st

import compaction
from compaction.setups import Setup
from compaction.strategies import Param
from compaction.strategies import StrategyInfo

from . import settings
from . import state
from .settings import initial_index
from .state import DEFAULT_SETUPS
from .state import strategy_key
from .state import widget_key
from .text import escape_markdown
from .text import setup_title

__all__ = ["DEFAULT_SETUPS", "SetupSpec", "StrategyChoice", "choose_setups", "choose_strategies", "param_widget",
           "strategy_key", "widget_key", "with_choices", "with_shared_policy"]

#: an int parameter whose range is at most this wide gets a slider, otherwise a number input
SLIDER_MAX_SPAN = 50
#: a text parameter whose default is longer than this gets a text area (placeholders, prompts)
LONG_TEXT = 40
ADD_KEY = "setups.add"
T = TypeVar("T")


@dataclass(frozen=True)
class SetupSpec:
    """One setup as chosen in the sidebar (hashable): its slot id, label, colour, strategy and parameter values,
    and the policy and counter it runs with (its own, or the shared ones)."""

    label: str
    strategy: str
    params: tuple[tuple[str, Any], ...]
    color: str
    policy: settings.Policy
    counter: str
    id: str = ""
    own_policy: bool = False
    #: False while the setup came with a link or an imported file and its live summarizer is not confirmed
    live_confirmed: bool = True

    @property
    def info(self) -> StrategyInfo:
        return compaction.get_strategy(self.strategy)

    def setup(self) -> Setup:
        """The library's :class:`~compaction.setups.Setup` (what links, exports and sweeps use)."""
        return Setup(self.strategy, dict(self.params), context_window=self.policy.context_window,
                     compact_at=self.policy.compact_at, compact_to=self.policy.compact_to, counter=self.counter,
                     label=self.label)


def shown_value(key: str, default: T) -> T:
    """What a widget of ``default``'s type keyed ``key`` holds, else ``default``: the ``value=`` a parameter widget is
    drawn with. The parameters sit in a popover, whose widgets the browser creates only when it opens, from the value
    they were last sent with (without it, a number input shows its minimum while the setup runs with its value)."""
    current = st.session_state.get(key, default)
    return current if type(current) is type(default) else default


def param_value(param: Param, key: str) -> Any:
    """The value of one parameter as its widget (:func:`param_widget`) holds it: what its key holds, else the default
    (the parameter's widgets are drawn only while their popover is open; the setup runs with this value meanwhile)."""
    if param.type == "bool":
        return shown_value(key, bool(param.default))
    if param.type == "choice":
        options = list(param.choices)
        current = st.session_state.get(key, param.default)
        return current if current in options else param.default if param.default in options else options[0]
    if param.type == "int":
        return shown_value(key, int(param.default))
    if param.type == "float":
        return shown_value(key, float(param.default))
    if param.type == "str_list":
        return shown_value(key, param.default if isinstance(param.default, str) else ", ".join(param.default or ()))
    return shown_value(key, str(param.default or ""))


def keep_value(key: str) -> None:
    """Keep what a parameter's key holds through a run that does not draw its widget (Streamlit forgets the value of
    a widget left undrawn; one written through session state stays)."""
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]


def param_widget(param: Param, key: str) -> Any:
    """The widget for one parameter, chosen by its type, with its bounds and its help text."""
    label = param.name.replace("_", " ").capitalize()
    help_text = param.help
    value = param_value(param, key)
    if param.type == "bool":
        return st.checkbox(label, value=value, key=key, help=help_text)
    if param.type == "choice":
        return st.selectbox(label, list(param.choices), index=list(param.choices).index(value), key=key,
                            help=help_text)
    if param.type == "int":
        return _int_widget(param, label, key, value)
    if param.type == "float":
        return _float_widget(param, label, key, value)
    if param.type == "str_list":
        return st.text_input(label, value=value, key=key, help=f"{help_text} Comma-separated.")
    if param.type == "str" and len(str(param.default or "")) > LONG_TEXT:
        return st.text_area(label, value=value, key=key, help=help_text, height="content")
    placeholder = "empty: from the threshold policy" if param.type == "trigger" else None
    return st.text_input(label, value=value, key=key, help=help_text, placeholder=placeholder)


def _int_widget(param: Param, label: str, key: str, value: int) -> int:
    """A slider for a narrow range, else a number input."""
    low = int(param.minimum) if param.minimum is not None else None
    high = int(param.maximum) if param.maximum is not None else None
    if low is not None and high is not None and high - low <= SLIDER_MAX_SPAN:
        return st.slider(label, min_value=low, max_value=high, value=value, step=1, key=key, help=param.help)
    return st.number_input(label, min_value=low, max_value=high, value=value, step=_int_step(param), key=key,
                           help=param.help)


def _float_widget(param: Param, label: str, key: str, value: float) -> float:
    """A number input stepping by 0.01 over a range at most 1 wide, else by 0.1."""
    low = float(param.minimum) if param.minimum is not None else None
    high = float(param.maximum) if param.maximum is not None else None
    span = (high - low) if low is not None and high is not None else None
    step = 0.01 if span is not None and span <= 1 else 0.1
    return st.number_input(label, min_value=low, max_value=high, value=value, step=step, key=key, help=param.help)


def _int_step(param: Param) -> int:
    """A step that makes a number input usable: 1 for small values, coarser for token-sized ones (200 → 10,
    100000 → 10000)."""
    default = abs(int(param.default or 0))
    step: int = 10 ** max(len(str(default)) - 2, 0)  # int ** int is Any to mypy (a negative power is a float)
    return step


STRATEGY_HELP = ("How this setup compacts. Each strategy re-creates one framework's compactor, behaviour for behaviour "
                 "(grouped by framework, named as the framework names it); its parameters are behind the button "
                 "beside it.")
PARAMS_HELP = "This strategy's parameters (changing one replays this setup; the sidebar keeps its name and policy)."


class StrategyChoice(NamedTuple):
    """What a setup's strategy picker and its parameters chose: the strategy's name and the parameter values."""

    strategy: str
    params: tuple[tuple[str, Any], ...]


def strategy_options(strategies: dict[str, StrategyInfo]) -> list[str]:
    """Strategy names grouped by framework (in the order of their full titles), then by title."""
    return sorted(strategies, key=lambda n: (strategies[n].title.split(" · ")[0].lower(), strategies[n].title.lower()))


def choose_strategy(slot_id: str, strategies: dict[str, StrategyInfo], label: str) -> str:
    """One setup's strategy picker (its full title, framework first); a stale value is dropped before it draws."""
    names = strategy_options(strategies)
    key = strategy_key(slot_id)
    if st.session_state.get(key) not in names:
        st.session_state.pop(key, None)
    return st.selectbox(label, names, **initial_index(key, names.index(state.NEW_SETUP_STRATEGY)),
                        format_func=lambda n: strategies[n].title, key=key, help=STRATEGY_HELP)


def choose_params(slot_id: str, info: StrategyInfo) -> tuple[tuple[str, Any], ...]:
    """The strategy's summary with its documentation link, its parameters, and its advanced ones in an expander."""
    docs = f" [Documentation ↗]({info.docs_url})" if info.docs_url else ""
    st.caption(f"{info.summary}{docs}")
    if info.policy != "threshold":
        st.caption("This strategy has its own trigger: the threshold policy does not apply to it.")
    values = _param_widgets(slot_id, info.name, [p for p in info.params if not p.advanced])
    advanced = [p for p in info.params if p.advanced]
    if advanced:
        with st.expander("Advanced parameters"):
            values.update(_param_widgets(slot_id, info.name, advanced))
    if not info.params:
        st.caption("It has no parameters.")
    return tuple(sorted(values.items()))


def held_params(slot_id: str, info: StrategyInfo) -> tuple[tuple[str, Any], ...]:
    """The values :func:`choose_params` would return, without drawing a widget (kept through the runs that do not
    draw them)."""
    keys = {p.name: widget_key(slot_id, info.name, p.name) for p in info.params}
    for key in keys.values():
        keep_value(key)
    return tuple(sorted((p.name, param_value(p, keys[p.name])) for p in info.params))


def choose_strategy_and_params(slot_id: str, strategies: dict[str, StrategyInfo], label: str) -> StrategyChoice:
    """A setup's strategy picker, and beside it a button that opens the strategy's parameters. Their widgets are
    drawn only while it is open: a threshold change then reruns two widgets per setup, not eight."""
    with st.container(horizontal=True, vertical_alignment="bottom", wrap=False, gap="small"):
        name = choose_strategy(slot_id, strategies, label)
        params = held_params(slot_id, strategies[name])
        popover = st.popover("", icon=":material/tune:", help=PARAMS_HELP, width="content",
                             key=state.params_open_key(slot_id), on_change="rerun")
        if popover.open:
            with popover:
                params = choose_params(slot_id, strategies[name])
    return StrategyChoice(name, params)


def choose_strategies(strategies: dict[str, StrategyInfo] | None = None, per_row: int = 4
                      ) -> dict[str, StrategyChoice]:
    """The tuning view's strategy pickers with their parameters, one per setup side by side (``per_row`` to a row),
    each labelled with the setup's name in its colour: what each chose, by slot id."""
    strategies = strategies or compaction.strategies()
    slots = state.slots()
    chosen: dict[str, StrategyChoice] = {}
    taken: list[str] = []
    for start in range(0, len(slots), per_row):
        row = slots[start:start + per_row]
        for col, slot in zip(st.columns(per_row if len(slots) > per_row else len(row)), row):
            label = state.unique_label(state.label_of(slot.id), taken)
            taken.append(label)
            with col:
                chosen[slot.id] = choose_strategy_and_params(slot.id, strategies, setup_title(label, slot.color))
    return chosen


def choose_setup(slot: state.Slot, strategies: dict[str, StrategyInfo], shared_policy: settings.Policy,
                 shared_counter: str, taken: Sequence[str], removable: bool, pickers_elsewhere: bool = False
                 ) -> SetupSpec:
    """Sidebar: one setup's name, policy and counter, and (unless ``pickers_elsewhere``: the tuning view draws them
    and completes the spec with :func:`with_choices`) its strategy and parameters."""
    wanted = state.label_of(slot.id)
    label = state.unique_label(wanted, taken)
    st.header(setup_title(label, slot.color), divider="gray")
    st.text_input("Name", key=state.label_key(slot.id), max_chars=state.MAX_LABEL,
                  help="How this setup is called in every chart, table and export.")
    if not wanted.strip():
        st.caption(f"No name given: shown as {escape_markdown(label)}.")
    elif label != " ".join(wanted.split())[: state.MAX_LABEL]:
        st.caption(f"Another setup is called that: shown as {escape_markdown(label)}.")
    if pickers_elsewhere:
        choice = StrategyChoice(_current_strategy(slot.id, strategies), ())
    else:
        name = choose_strategy(slot.id, strategies, "Strategy")
        choice = StrategyChoice(name, choose_params(slot.id, strategies[name]))
    policy, counter, own_policy = _policy_and_counter(slot.id, shared_policy, shared_counter)
    left, right = st.columns(2)
    left.button("Duplicate", key=f"setup.{slot.id}.duplicate", on_click=state.duplicate_setup, args=(slot.id,),
                icon=":material/content_copy:", width="stretch", help="Add a copy of this setup to vary one thing.")
    right.button("Remove", key=f"setup.{slot.id}.remove", on_click=state.remove_setup, args=(slot.id,),
                 icon=":material/delete:", width="stretch", disabled=not removable,
                 help="Remove this setup (the explorer keeps at least one).")
    confirmed = not st.session_state.get(state.unconfirmed_key(slot.id), False)
    return SetupSpec(label, choice.strategy, choice.params, slot.color, policy, counter, slot.id, own_policy,
                     confirmed)


def _current_strategy(slot_id: str, strategies: dict[str, StrategyInfo]) -> str:
    """The strategy the setup's picker holds now (the default for a new setup)."""
    current = st.session_state.get(strategy_key(slot_id))
    return current if current in strategies else state.NEW_SETUP_STRATEGY


def _policy_and_counter(slot_id: str, shared_policy: settings.Policy, shared_counter: str
                        ) -> tuple[settings.Policy, str, bool]:
    """The setup's own threshold policy and counter when asked for, else the shared ones."""
    own_policy = st.session_state.get(state.own_policy_key(slot_id), False)
    own_counter = st.session_state.get(state.own_counter_key(slot_id), False)
    title = "Policy and counter" + (" (own)" if own_policy or own_counter else " (shared)")
    with st.expander(title, expanded=bool(own_policy or own_counter)):
        own_policy = st.checkbox("Own threshold policy", key=state.own_policy_key(slot_id),
                                 help="Use a context window, compact_at and compact_to for this setup only (a "
                                      "strategy with its own trigger ignores them).")
        policy = settings.choose_policy(state.policy_keys(slot_id), header=False) if own_policy else shared_policy
        own_counter = st.checkbox("Own token counter", key=state.own_counter_key(slot_id),
                                  help="Count this setup's tokens with another counter than the shared one.")
        counter = settings.choose_counter(state.counter_keys(slot_id), header=False) if own_counter else shared_counter
    return policy, counter, bool(own_policy)


def _param_widgets(slot_id: str, strategy: str, params: Sequence[Param]) -> dict[str, Any]:
    return {p.name: param_widget(p, widget_key(slot_id, strategy, p.name)) for p in params}


def choose_setups(shared_policy: settings.Policy | None = None, shared_counter: str | None = None,
                  pickers_elsewhere: bool = False) -> list[SetupSpec]:
    """Sidebar: every setup of this session, in order, and a button to add one (``pickers_elsewhere``: the
    strategies and their parameters are drawn by :func:`choose_strategies` and joined with :func:`with_choices`)."""
    shared = settings.shared_values()
    policy = shared_policy or settings.check_policy(shared.context_window, shared.compact_at, shared.compact_to)
    counter = shared_counter or shared.counter
    strategies = compaction.strategies()
    slots = state.slots()
    specs: list[SetupSpec] = []
    for slot in slots:
        specs.append(choose_setup(slot, strategies, policy, counter, [s.label for s in specs], len(slots) > 1,
                                  pickers_elsewhere))
    st.button("Add a setup", key=ADD_KEY, on_click=state.add_default_setup, icon=":material/add:", width="stretch",
              help="Compare one more strategy or parameter choice; every chart and table follows.")
    return specs


def with_choices(specs: Sequence[SetupSpec], choices: dict[str, StrategyChoice]) -> list[SetupSpec]:
    """``specs`` with the strategy and parameters the tuning view's pickers chose for each (by slot id)."""
    return [replace(spec, strategy=choices[spec.id].strategy, params=choices[spec.id].params)
            if spec.id in choices else spec for spec in specs]


def with_shared_policy(specs: Sequence[SetupSpec], policy: settings.Policy) -> list[SetupSpec]:
    """``specs`` with ``policy`` as the shared threshold policy of every setup that has no policy of its own (the
    sidebar draws the setups before the tuning view draws the policy's widgets)."""
    return [spec if spec.own_policy else replace(spec, policy=policy) for spec in specs]
