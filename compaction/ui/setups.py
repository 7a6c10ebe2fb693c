"""Sidebar setups: a strategy per setup and its parameters, as widgets generated from the registry's metadata.

The page works on a list of setups held in session state (``A`` and ``B`` by default); everything downstream
(replays, charts, tables, the side-by-side view) iterates over that list, so more setups need no new code there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

import compaction
from compaction.charts import setup_color
from compaction.strategies import Param, StrategyInfo

from .text import colored

#: (label, default strategy) of the setups a new session starts with
DEFAULT_SETUPS: tuple[tuple[str, str], ...] = (
    ("A", "haystack.tool_result_pruning"),
    ("B", "agent_framework.tool_result_compaction"),
)
SETUPS_KEY = "setups"
#: an int parameter whose range is at most this wide gets a slider, otherwise a number input
SLIDER_MAX_SPAN = 50
#: a text parameter whose default is longer than this gets a text area (placeholders, prompts)
LONG_TEXT = 40


@dataclass(frozen=True)
class SetupSpec:
    """One setup as chosen in the sidebar: a label, a strategy and its parameter values (hashable)."""

    label: str
    strategy: str
    params: tuple[tuple[str, Any], ...]
    color: str

    @property
    def info(self) -> StrategyInfo:
        return compaction.get_strategy(self.strategy)


def setup_slots() -> list[tuple[str, str]]:
    """The setups of this session as ``(label, default strategy)`` pairs."""
    if SETUPS_KEY not in st.session_state:
        st.session_state[SETUPS_KEY] = list(DEFAULT_SETUPS)
    return list(st.session_state[SETUPS_KEY])


def widget_key(label: str, strategy: str, param: str) -> str:
    """Session-state key of one parameter widget (per setup and strategy, so switching strategy starts from its
    defaults)."""
    return f"setup.{label}.{strategy}.{param}"


def strategy_key(label: str) -> str:
    return f"setup.{label}.strategy"


def param_widget(param: Param, key: str) -> Any:
    """The widget for one parameter, chosen by its type, with its bounds and its help text."""
    label = param.name.replace("_", " ").capitalize()
    help_text = param.help
    if param.type == "bool":
        return st.checkbox(label, value=bool(param.default), key=key, help=help_text)
    if param.type == "choice":
        options = list(param.choices)
        index = options.index(param.default) if param.default in options else 0
        return st.selectbox(label, options, index=index, key=key, help=help_text)
    if param.type == "int":
        low = int(param.minimum) if param.minimum is not None else None
        high = int(param.maximum) if param.maximum is not None else None
        if low is not None and high is not None and high - low <= SLIDER_MAX_SPAN:
            return st.slider(label, min_value=low, max_value=high, value=int(param.default), step=1, key=key,
                             help=help_text)
        return st.number_input(label, min_value=low, max_value=high, value=int(param.default), step=_int_step(param),
                               key=key, help=help_text)
    if param.type == "float":
        low = float(param.minimum) if param.minimum is not None else None
        high = float(param.maximum) if param.maximum is not None else None
        span = (high - low) if low is not None and high is not None else None
        step = 0.01 if span is not None and span <= 1 else 0.1
        return st.number_input(label, min_value=low, max_value=high, value=float(param.default), step=step,
                               key=key, help=help_text)
    if param.type == "str_list":
        default = param.default if isinstance(param.default, str) else ", ".join(param.default or ())
        return st.text_input(label, value=default, key=key, help=f"{help_text} Comma-separated.")
    default = str(param.default or "")
    if param.type == "str" and len(default) > LONG_TEXT:
        return st.text_area(label, value=default, key=key, help=help_text, height="content")
    placeholder = "empty: from the threshold policy" if param.type == "trigger" else None
    return st.text_input(label, value=default, key=key, help=help_text, placeholder=placeholder)


def _int_step(param: Param) -> int:
    """A step that makes a number input usable: 1 for small values, coarser for token-sized ones (200 → 10,
    100000 → 10000)."""
    default = abs(int(param.default or 0))
    return 10 ** max(len(str(default)) - 2, 0)


def choose_setup(label: str, default_strategy: str, position: int, strategies: dict[str, StrategyInfo]) -> SetupSpec:
    """Sidebar: one setup's strategy (with its summary and docs link) and its parameters."""
    color = setup_color(position)
    st.header(colored(f"■ Setup {label}", color), divider="gray")
    names = sorted(strategies, key=lambda n: (strategies[n].family, n))
    index = names.index(default_strategy) if default_strategy in names else 0
    name = st.selectbox(
        "Strategy",
        names,
        index=index,
        format_func=lambda n: strategies[n].title,
        key=strategy_key(label),
        help="How this setup compacts. Each strategy re-creates one framework's compactor, behaviour for "
        "behaviour; its parameters follow.",
    )
    info = strategies[name]
    docs = f" [Documentation ↗]({info.docs_url})" if info.docs_url else ""
    st.caption(f"{info.summary}{docs}")
    if info.policy != "threshold":
        st.caption("This strategy has its own trigger: the threshold policy above does not apply to it.")
    values = _param_widgets(label, name, [p for p in info.params if not p.advanced])
    advanced = [p for p in info.params if p.advanced]
    if advanced:
        with st.expander("Advanced parameters"):
            values.update(_param_widgets(label, name, advanced))
    return SetupSpec(label, name, tuple(sorted(values.items())), color)


def _param_widgets(label: str, strategy: str, params: Sequence[Param]) -> dict[str, Any]:
    return {p.name: param_widget(p, widget_key(label, strategy, p.name)) for p in params}


def choose_setups() -> list[SetupSpec]:
    """Sidebar: every setup of this session, in order."""
    strategies = compaction.strategies()
    return [
        choose_setup(label, default, position, strategies)
        for position, (label, default) in enumerate(setup_slots())
    ]
