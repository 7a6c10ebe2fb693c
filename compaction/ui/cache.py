"""Cached heavy work: parsing a log, building a counter, replaying a setup, building chart specs.

Parsed conversations and replays are cached as shared resources, keyed by the file's content hash and the frozen
settings. They are not pickled copies (``st.cache_data``) on purpose: a conversation is immutable, and counters
cache token counts per message *object*, so handing every rerun a fresh unpickled copy would recount everything and
grow the counters' caches with each copy. A :class:`~compaction.replay.Replay` also holds its counter and strategy
builder, which cannot be pickled. Both are read-only once built, so sharing them is safe.

Chart specs are plain dicts (``st.cache_data``): building an Altair chart validates every encoding against the
Vega-Lite schema, which would otherwise dominate the time of each click on the chart.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pandas as pd
import streamlit as st

import compaction
from compaction import anatomy, charts, explain, views
from compaction.analysis.calibration import Calibration, calibrate
from compaction.analysis.costs import CostComparison, PriceModel, compare_costs
from compaction.analysis.information import InformationLoss, information_loss
from compaction.conversation import Conversation
from compaction.explain import SetupWarning
from compaction.replay import Replay
from compaction.setups import Setup
from compaction.tokens import CounterChoice
from compaction.views import Run


def digest(data: bytes) -> str:
    """The cache key of a log's bytes."""
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(max_entries=6, show_spinner=False)
def parse_log(key: str, name: str, format: str | None, _data: bytes) -> list[Conversation]:
    """Every conversation in a log (``key`` is the content hash of ``_data``). Raises ``LoadError``."""
    return compaction.load_all_conversations(_data, format=format, name=name)


@st.cache_resource(show_spinner=False)
def counter(spec: str) -> CounterChoice:
    """The counter for ``spec`` (falls back to approx with a notice when a tiktoken encoding is unavailable)."""
    return compaction.resolve_counter(spec)


@dataclass(frozen=True)
class ReplayKey:
    """Everything a replay depends on besides the conversation itself (hashable: the cache key)."""

    source: str  # content hash + conversation id
    strategy: str
    params: tuple[tuple[str, Any], ...]
    context_window: int
    compact_at: float
    compact_to: float
    counter: str

    def setup(self, label: str = "") -> Setup:
        """The library's :class:`~compaction.setups.Setup` for this key (what the CLI and sweeps run too)."""
        return Setup(self.strategy, dict(self.params), self.context_window, self.compact_at, self.compact_to,
                     self.counter, label)


@st.cache_resource(max_entries=48, show_spinner=False)
def run_replay(key: ReplayKey, _conversation: Conversation) -> Replay:
    """Replay ``_conversation`` under the setup ``key`` describes. Raises ``ValueError`` for invalid settings."""
    return key.setup().run(_conversation)


#: identifies a set of replays shown together: ``((label, ReplayKey), …)``
RunsKey = tuple[tuple[str, ReplayKey], ...]


@st.cache_data(max_entries=32, show_spinner=False)
def tokens_chart_spec(key: RunsKey, colors: tuple[tuple[str, str], ...], context_window: int | None,
                      _runs: Sequence[Run]) -> dict:
    """The tokens chart of ``_runs`` as a Vega-Lite dict, without a selected step (added per click, cheaply): each
    setup's floor band, the provider-reported usage and the log's own compactions included."""
    first = _runs[0][1]
    return charts.tokens_chart(
        views.step_series(_runs),
        views.compaction_events(_runs),
        views.threshold_rules(_runs, context_window),
        colors=dict(colors),
        floor=anatomy.floor_series(_runs),
        usage=anatomy.usage_series(first),
        log_events=anatomy.log_compactions(first),
    ).to_dict()


@st.cache_data(max_entries=32, show_spinner=False)
def composition_spec(key: ReplayKey, _replay: Replay) -> dict:
    """The composition chart of one replay (tokens per step by kind) as a Vega-Lite dict."""
    frame = anatomy.composition(_replay)
    return charts.composition_chart(frame, anatomy.kind_order(frame["kind"].unique())).to_dict()


@st.cache_data(max_entries=32, show_spinner=False)
def lifecycle_spec(key: ReplayKey, _replay: Replay) -> dict:
    """The message-lifecycle chart of one replay as a Vega-Lite dict."""
    return charts.lifecycle_chart(anatomy.lifecycle(_replay)).to_dict()


#: per-replay results, computed once per replay object (replays are read-only and live in ``run_replay``'s cache)
_LOSSES: weakref.WeakKeyDictionary[Replay, InformationLoss] = weakref.WeakKeyDictionary()
_COSTS: weakref.WeakKeyDictionary[Replay, dict[PriceModel, CostComparison]] = weakref.WeakKeyDictionary()


def loss_of(replay: Replay) -> InformationLoss:
    """The information-loss evidence of one replay, computed once however many panels show it."""
    found = _LOSSES.get(replay)
    if found is None:
        found = _LOSSES[replay] = information_loss(replay)
    return found


def costs_of(replay: Replay, prices: PriceModel) -> CostComparison:
    """One replay priced against its baseline, computed once per price model."""
    by_prices = _COSTS.setdefault(replay, {})
    found = by_prices.get(prices)
    if found is None:
        found = by_prices[prices] = compare_costs(replay, prices)
    return found


@lru_cache(maxsize=8)
def calibration_of(conversation: Conversation, prices: PriceModel) -> Calibration:
    """Calibration of a conversation against its reported usage (conversations hash by identity)."""
    return calibrate(conversation, prices=prices)


def loss(key: ReplayKey, _replay: Replay) -> InformationLoss:
    """The information-loss evidence of one replay (a heuristic; it scans every removed message once)."""
    return loss_of(_replay)


@st.cache_data(max_entries=64, show_spinner=False)
def context_strip_spec(key: RunsKey, step: int, _strip: pd.DataFrame, labels: tuple[str, ...]) -> dict:
    """The fate strip of one step as a Vega-Lite dict."""
    return charts.context_strip_chart(_strip, labels).to_dict()


@st.cache_data(max_entries=64, show_spinner=False)
def setup_warnings(key: ReplayKey, _replay: Replay) -> list[SetupWarning]:
    """Thrashing, floors, lost task messages, split tool pairs… of one replay (they scan every call once)."""
    return explain.warnings_for(_replay)
