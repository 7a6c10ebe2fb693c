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
from functools import cached_property
from functools import lru_cache
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

import compaction
from compaction import anatomy
from compaction import charts
from compaction import explain
from compaction import views
from compaction.analysis.calibration import Calibration
from compaction.analysis.calibration import calibrate
from compaction.analysis.costs import CostComparison
from compaction.analysis.costs import PriceModel
from compaction.analysis.costs import compare_costs
from compaction.analysis.information import InformationLoss
from compaction.analysis.information import information_loss
from compaction.budget import ReplayBudgetExceeded
from compaction.budget import WorkBudget
from compaction.conversation import Conversation
from compaction.explain import SetupWarning
from compaction.replay import Replay
from compaction.setups import Setup
from compaction.summarizers import WithheldRequest
from compaction.summarizers import live_calls
from compaction.tokens import CounterChoice
from compaction.views import Run


def digest(data: bytes) -> str:
    """The cache key of a log's bytes."""
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(max_entries=8, show_spinner=False)
def sample_file(path: str, mtime_ns: int, size: int) -> tuple[bytes, str]:
    """A bundled sample's bytes and content hash, read once per version of the file."""
    data = Path(path).read_bytes()
    return data, digest(data)


@st.cache_resource(max_entries=16, show_spinner=False)
def upload_digest(file_id: str, size: int, _data: bytes) -> str:
    """The content hash of an uploaded file, computed once per upload."""
    return digest(_data)


@st.cache_resource(max_entries=6, show_spinner=False)
def parse_log(key: str, name: str, format: str | None, _data: bytes, folder: str | None = None
              ) -> list[Conversation]:
    """Every conversation in a log (``key`` is the content hash of ``_data``; ``folder``: where a log of this machine
    lies, for the files that belong with it — never set for an upload). Raises ``LoadError``."""
    return compaction.load_all_conversations(_data, format=format, name=name, folder=folder)


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
    #: whether a live summarizer may really be called (else its requests are withheld: see compaction.summarizers)
    live: bool = False

    def setup(self, label: str = "") -> Setup:
        """The library's :class:`~compaction.setups.Setup` for this key (what the CLI and sweeps run too)."""
        return Setup(self.strategy, dict(self.params), context_window=self.context_window,
                     compact_at=self.compact_at, compact_to=self.compact_to, counter=self.counter, label=label)


@dataclass(frozen=True)
class Replayed:
    """One replay the app ran: the replay, or None when its work budget stopped it (``stopped`` says where and why),
    and the live-summarizer requests it did not send."""

    replay: Replay | None
    withheld: tuple[WithheldRequest, ...] = ()
    stopped: str | None = None


@st.cache_resource(max_entries=48, show_spinner=False)
def run_replay(key: ReplayKey, _conversation: Conversation, _budget: WorkBudget | None = None) -> Replayed:
    """Replay ``_conversation`` under the setup ``key`` describes, within ``_budget``. Raises ``ValueError`` for
    invalid settings. A replay that spends a budget it had to itself is kept as stopped (it would stop again); one
    stopped because the replays before it spent the page's budget raises, so it runs again on the next page run."""
    with live_calls(key.live) as withheld:
        try:
            replay = key.setup().run(_conversation, budget=_budget)
        except ReplayBudgetExceeded as exc:
            if not exc.alone:
                raise
            return Replayed(None, tuple(withheld), str(exc))
    return Replayed(replay, tuple(withheld))


def arrow_bytes(frame: pd.DataFrame) -> bytes:
    """A chart's data frame as the Arrow IPC bytes ``st.vega_lite_chart`` sends, with the values Altair's sanitizing
    would leave (missing and infinite numbers as nulls, strings as ``utf8``).

    Going through ``sanitize_pandas_dataframe`` turns every string column into Python objects, which pyarrow then
    converts one by one: 18 ms for the 3,400-row lifecycle chart, against 1 ms straight from the frame's own types."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    columns = []
    for column in table.columns:
        if pa.types.is_large_string(column.type):
            column = column.cast(pa.string())
        elif pa.types.is_floating(column.type):
            column = pc.if_else(pc.is_inf(column), pa.scalar(None, column.type), column)
        columns.append(column)
    table = pa.Table.from_arrays(columns, names=table.column_names)
    sink = pa.BufferOutputStream()
    with pa.RecordBatchStreamWriter(sink, table.schema) as writer:
        writer.write_table(table)
    data: bytes = sink.getvalue().to_pybytes()  # pyarrow is untyped
    return data


#: identifies a set of replays shown together: ``((label, ReplayKey), …)``
RunsKey = tuple[tuple[str, ReplayKey], ...]


@dataclass(frozen=True)
class ChartSpec:
    """A chart for the page: ``ready`` is its Vega-Lite dict with every named dataset already in Arrow, as
    ``st.vega_lite_chart`` sends it, built from the layout's cached template (no Altair chart is built or validated,
    no rows converted again on a rerun); ``spec`` is the plain Vega-Lite dict, for exports. Shared by every rerun
    and session: never modify them (``charts.with_selected_step`` copies)."""

    data: charts.ChartData[alt.TopLevelMixin]
    ready: dict[str, Any]

    @classmethod
    def of(cls, data: charts.ChartData[alt.TopLevelMixin]) -> ChartSpec:
        template = charts.template(data.layout)
        arrow = {name: arrow_bytes(frame) for name, frame in data.frames.items()}
        return cls(data, {**template, "datasets": {**template.get("datasets", {}), **arrow}})

    @cached_property
    def spec(self) -> dict[str, Any]:
        return charts.spec_of(self.data)

    def at_step(self, step: int | None) -> dict[str, Any]:
        """``ready`` with the selected step marked. The tokens chart holds the step in its own dataset, so its spec
        stays the same from step to step and the browser redraws the chart in place; other charts get a layer."""
        if charts.SELECTED_DATASET in self.ready.get("datasets", {}):
            return {**self.ready, "datasets": {**self.ready["datasets"], charts.SELECTED_DATASET: _step_arrow(step)}}
        return charts.with_selected_step(self.ready, step)


@lru_cache(maxsize=256)
def _step_arrow(step: int | None) -> bytes:
    """The selected-step dataset as Arrow bytes (one row; cached, a click costs no conversion)."""
    return arrow_bytes(charts.selected_step_frame(step))


@st.cache_resource(max_entries=32, show_spinner=False)
def tokens_chart_spec(key: RunsKey, colors: tuple[tuple[str, str], ...], context_window: int | None,
                      _runs: Sequence[Run], height: int = 420) -> ChartSpec:
    """The tokens chart of ``_runs``, without a selected step (added per click, cheaply): each setup's floor band,
    the provider-reported usage and the log's own compactions included (built as notebooks build it:
    :func:`compaction.run_charts.tokens_chart_data`)."""
    from compaction.run_charts import tokens_chart_data  # the one builder the app and compare() share

    return ChartSpec.of(tokens_chart_data(_runs, context_window, dict(colors), height=height))


@st.cache_resource(max_entries=32, show_spinner=False)
def composition_spec(key: ReplayKey, _replay: Replay) -> ChartSpec:
    """The composition chart of one replay (tokens per step by kind)."""
    frame = anatomy.composition(_replay)
    return ChartSpec.of(charts.composition_chart_data(frame, anatomy.kind_order(frame["kind"].unique())))


@st.cache_resource(max_entries=32, show_spinner=False)
def lifecycle_spec(key: ReplayKey, _replay: Replay) -> ChartSpec:
    """The message-lifecycle chart of one replay."""
    return ChartSpec.of(charts.lifecycle_chart_data(anatomy.lifecycle(_replay)))


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


def calibration_of(conversation: Conversation, prices: PriceModel) -> Calibration:
    """Calibration of a conversation against its reported usage, kept in its memo."""
    return conversation.memoized(("calibration", prices), lambda: calibrate(conversation, prices=prices))


def loss(key: ReplayKey, _replay: Replay) -> InformationLoss:
    """The information-loss evidence of one replay (a heuristic; it scans every removed message once)."""
    return loss_of(_replay)


@st.cache_resource(max_entries=64, show_spinner=False)
def context_strip_spec(key: RunsKey, step: int, _strip: pd.DataFrame, labels: tuple[str, ...]) -> ChartSpec:
    """The fate strip of one step."""
    return ChartSpec.of(charts.context_strip_data(_strip, labels))


@st.cache_resource(max_entries=64, show_spinner=False)
def aligned_context(key: RunsKey, step: int, _runs: Sequence[Run]) -> list[views.AlignedRow]:
    """The contexts of ``_runs`` at ``step``, aligned by original message (shared: do not modify)."""
    return views.aligned_context(_runs, step)


@st.cache_resource(max_entries=64, show_spinner=False)
def setup_warnings(key: ReplayKey, _replay: Replay) -> list[SetupWarning]:
    """Thrashing, floors, lost task messages, split tool pairs… of one replay (they scan every call once)."""
    return explain.warnings_for(_replay)
