"""What to choose: sweep one setup over one or two parameters, read the heatmaps, load a cell into the explorer.

:func:`show_sweep` is a self-contained component; every session-state key it owns starts with its ``key``. The
grid helpers (:func:`sweepable_axes`, :func:`axis_values`, :func:`grid_values`) are pure and raise ``ValueError``
with a readable message for ranges a user can get wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from compaction import cost_charts
from compaction.analysis import views
from compaction.analysis.calibration import default_prices
from compaction.analysis.costs import PriceModel
from compaction.analysis.sweep import SweepResult
from compaction.analysis.sweep import linspace
from compaction.analysis.sweep import sweep
from compaction.conversation import Conversation
from compaction.setups import Setup
from compaction.strategies import get_strategy

from .costs import choose_prices
from .guard import section
from .guard import show_error
from .text import escape_markdown

#: the heatmaps drawn, in order (information loss only when it was computed)
HEATMAP_METRICS = ("dollars", "peak_tokens", "compactions", "thrash", "information_loss")
MAX_VALUES_PER_AXIS = 25
MAX_CELLS = 400
#: grids larger than this run on two local processes (when the fast path does not apply)
PARALLEL_FROM = 12


@dataclass(frozen=True)
class Axis:
    """A parameter that can be swept, its bounds and a sensible default range."""

    name: str
    kind: str  # "int" | "float"
    minimum: float
    maximum: float
    start: float
    stop: float
    count: int
    help: str


def _param_axis(name: str, kind: str, minimum: float | None, maximum: float | None, current: float,
                help_text: str) -> Axis:
    low = float(minimum) if minimum is not None else 0.0
    high = float(maximum) if maximum is not None else max(current * 4, low + 10)
    if kind == "int":
        start = max(low, float(int(current // 2)))
        stop = min(high, float(max(int(current) * 2, int(start) + 4)))
        count = int(min(5, stop - start + 1))
    else:
        start, stop, count = max(low, current / 2), min(high, current * 1.5 or high), 5
    return Axis(name, kind, low, high, start, max(stop, start), max(count, 1), help_text)


def sweepable_axes(setup: Setup) -> dict[str, Axis]:
    """Every numeric knob of ``setup`` that a sweep can vary: the threshold policy (when the strategy uses it) and
    the strategy's int/float parameters."""
    info = get_strategy(setup.strategy)
    axes: dict[str, Axis] = {}
    if info.policy == "threshold":
        axes["compact_at"] = Axis("compact_at", "float", 0.05, 1.0, 0.5, 0.9, 5,
                                  "Fraction of the context window at which compaction triggers.")
        axes["compact_to"] = Axis("compact_to", "float", 0.0, 0.95, 0.2, 0.6, 5,
                                  "Fraction of the context window compaction aims to get under.")
    if info.policy in ("threshold", "window"):
        window = setup.context_window
        if window is None:  # the log's own: there is no value to sweep around until a replay resolves it
            raise ValueError("the context window must be given to sweep it (the setup takes the log's own)")
        axes["context_window"] = Axis("context_window", "int", 1000, 10_000_000, max(1000, window // 2), window * 2,
                                      4, "The model's context window in tokens.")
    current = setup.resolved_params()
    for param in info.params:
        if param.type in ("int", "float"):
            axes[param.name] = _param_axis(param.name, param.type, param.minimum, param.maximum,
                                           float(current.get(param.name, param.default) or 0), param.help)
    return axes


def axis_values(axis: Axis, start: float, stop: float, count: int) -> list[float] | list[int]:
    """``count`` values from ``start`` to ``stop`` (integers de-duplicated), checked against the axis bounds."""
    if not axis.minimum <= start <= axis.maximum or not axis.minimum <= stop <= axis.maximum:
        raise ValueError(f"{axis.name}: the range must lie within {axis.minimum:g}–{axis.maximum:g}, "
                         f"got {start:g}–{stop:g}")
    if start > stop:
        raise ValueError(f"{axis.name}: the start ({start:g}) is above the stop ({stop:g})")
    if not 1 <= count <= MAX_VALUES_PER_AXIS:
        raise ValueError(f"{axis.name}: choose 1–{MAX_VALUES_PER_AXIS} values, got {count}")
    values = linspace(start, stop, count)
    if axis.kind == "int":
        return sorted({int(round(v)) for v in values})
    return values


def grid_values(axes: Mapping[str, Axis], ranges: Mapping[str, tuple[float, float, int]]
                ) -> dict[str, list[float] | list[int]]:
    """The values of every chosen axis, with the grid size checked against :data:`MAX_CELLS`."""
    if not 1 <= len(ranges) <= 2:
        raise ValueError(f"choose one or two parameters to sweep, got {len(ranges)}")
    values = {name: axis_values(axes[name], *ranges[name]) for name in ranges}
    cells = 1
    for v in values.values():
        cells *= len(v)
    if cells > MAX_CELLS:
        raise ValueError(f"{cells} configurations is too many for one sweep; choose at most {MAX_CELLS}")
    return values


def configuration_label(values: Mapping[str, Any]) -> str:
    """``compact_at=0.7, compact_to=0.4`` (our own text, from numbers)."""
    return ", ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                     for name, value in values.items())


def _choose_ranges(axes: Mapping[str, Axis], key: str) -> dict[str, tuple[float, float, int]]:
    names = list(axes)
    default = [n for n in ("compact_at", "compact_to") if n in axes] or names[:2]
    chosen = st.multiselect("Parameters to sweep (one or two)", names, default=default, max_selections=2,
                            key=f"{key}_axes", help="Policy settings and the strategy's numeric parameters.")
    ranges: dict[str, tuple[float, float, int]] = {}
    for name in chosen:
        axis = axes[name]
        row = st.columns([2, 2, 1])
        is_int = axis.kind == "int"
        cast = int if is_int else float
        step = 1 if is_int else 0.05
        number = "%d" if is_int else "%.3f"
        start = row[0].number_input(f"{name} from", value=cast(axis.start), step=cast(step), format=number,
                                    key=f"{key}_{name}_start", help=axis.help)
        stop = row[1].number_input(f"{name} to", value=cast(axis.stop), step=cast(step), format=number,
                                   key=f"{key}_{name}_stop")
        count = row[2].number_input(f"{name} values", value=axis.count, step=1, key=f"{key}_{name}_count")
        ranges[name] = (float(start), float(stop), int(count))
    return ranges


def conversation_fingerprint(conversation: Conversation) -> tuple[Any, ...]:
    """Cheap identity of a conversation across reruns (a stored sweep is only shown for the log it ran on)."""
    return (conversation.id, conversation.format, len(conversation.messages),
            sum(len(m.text) for m in conversation.messages))


def _signature(setup: Setup, values: Mapping[str, Sequence[float]], prices: PriceModel, with_information: bool
               ) -> str:
    return json.dumps([setup.to_json(), values, repr(prices), with_information], sort_keys=True, default=str)


def _run(conversation: Conversation, setup: Setup, values: Mapping[str, Sequence[float]], prices: PriceModel,
         with_information: bool
         ) -> SweepResult:
    cells = 1
    for v in values.values():
        cells *= len(v)
    bar = st.progress(0.0, text=f"Sweeping {cells} configurations…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"{done} of {total} configurations")

    result = sweep(conversation, setup, values, prices=prices, with_information=with_information,
                   workers=2 if cells >= PARALLEL_FROM else 1, progress=progress)
    bar.empty()
    return result


def _selected_cell(result: SweepResult, charts: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """The configuration of the most recently clicked heatmap cell (each chart's selection is compared with what
    it was on the previous run, so the newest click wins), or None when nothing new was clicked."""
    seen: dict[str, Any] = st.session_state.setdefault(f"{key}_seen", {})
    newest = None
    for chart_key, event in charts.items():
        points = _points(event)
        if points != seen.get(chart_key):
            seen[chart_key] = points
            if points:
                newest = views.cell_values(result, points[0])
    return newest


def _points(event: Any) -> list[dict[str, Any]]:
    try:
        points = event["selection"][cost_charts.CELL_SELECTION]
    except (KeyError, TypeError):
        return []
    return [dict(p) for p in points] if isinstance(points, list) else []


def _show_heatmaps(result: SweepResult, key: str) -> dict[str, Any]:
    axes = list(result.axes)
    metrics = [m for m in HEATMAP_METRICS if any(m in row for row in result.rows)]
    cells = views.sweep_cells(result, metrics)
    x, y = axes[0], (axes[1] if len(axes) > 1 else None)
    events = {}
    columns = st.columns(2)
    for i, metric in enumerate(metrics):
        chart_key = f"{key}_heat_{metric}"
        with columns[i % 2]:
            events[chart_key] = st.altair_chart(cost_charts.sweep_heatmap(cells, x, y, metric), key=chart_key,
                                                on_select="rerun", selection_mode=[cost_charts.CELL_SELECTION])
    return events


def _show_best(result: SweepResult, on_load: Callable[[Setup], None], key: str) -> None:
    st.subheader("Best setup under constraints")
    row = st.columns(2)
    safety = row[0].number_input("Safety factor", min_value=0.1, max_value=1.0, value=0.9, step=0.05,
                                 key=f"{key}_safety", help="Keep the peak prompt under this fraction of the window.")
    max_compactions = row[1].number_input("Max compactions", min_value=0, value=None, step=1,
                                          key=f"{key}_max_compactions", placeholder="no limit")
    best = result.best(safety=safety, max_compactions=None if max_compactions is None else int(max_compactions))
    if not best:
        st.warning("No configuration keeps the peak under the safety limit with at most that many compactions. "
                   "Widen the ranges or relax the constraints.", icon=":material/warning:")
        return
    winner = best[0]
    st.success(escape_markdown(winner["why"]), icon=":material/emoji_events:")
    table = [{"rank": r["rank"], **{name: r[name] for name in result.axes}, "dollars": r["dollars"],
              "peak_tokens": r["peak_tokens"], "compactions": r["compactions"], "thrash": r["thrash"],
              "why": r["why"]} for r in best]
    st.dataframe(table, hide_index=True, key=f"{key}_best",
                 column_config={"dollars": st.column_config.NumberColumn("$", format="$%.4f")})
    values = {name: winner[name] for name in result.axes}
    if st.button(f"Load the best ({configuration_label(values)}) into the explorer", key=f"{key}_load_best"):
        on_load(result.setup.with_values(values))
        st.success("Loaded into the explorer.", icon=":material/check:")


def _show_result(result: SweepResult, on_load: Callable[[Setup], None], key: str) -> None:
    errors = [row["error"] for row in result.rows if "error" in row]
    if len(errors) == len(result.rows):
        st.error(f"**Every configuration is invalid** — {escape_markdown(errors[0])}", icon=":material/block:")
        return
    if errors:
        st.caption(f"{len(errors)} of {len(result.rows)} configurations are invalid (grey cells; hover for why).")
    events = _show_heatmaps(result, key)
    run_id = st.session_state.get(f"{key}_run_id", 0)
    valid = [{name: row[name] for name in result.axes} for row in result.rows if "error" not in row]
    labels = [configuration_label(v) for v in valid]
    choice_key = f"{key}_choice_{run_id}"
    clicked = _selected_cell(result, events, key)
    if clicked is not None:
        st.session_state[choice_key] = configuration_label(clicked)
    choice = st.selectbox("Selected configuration", labels, index=None, key=choice_key,
                          placeholder="click a heatmap cell, or choose here")
    if st.button("Load into the explorer", disabled=choice is None, key=f"{key}_load", type="primary") and (
            choice is not None):
        values = valid[labels.index(choice)]
        on_load(result.setup.with_values(values))
        st.success(f"Loaded {configuration_label(values)} into the explorer.", icon=":material/check:")
    st.dataframe(result.frame(), hide_index=True, key=f"{key}_rows")
    _show_best(result, on_load, key)


def show_sweep(conversation: Conversation, setup: Setup, on_load: Callable[[Setup], None], key: str = "sweep"
               ) -> None:
    """The sweep component: choose one or two parameters of ``setup`` and their ranges, run, read the heatmaps,
    pick a cell (click or select) and ``on_load(setup.with_values(cell))`` it into the explorer."""
    try:
        axes = sweepable_axes(setup)
    except ValueError as exc:
        show_error("This setup cannot be swept", exc)
        return
    if not axes:
        st.info(f"{setup.strategy} has no numeric setting to sweep.", icon=":material/info:")
        return
    ranges = _choose_ranges(axes, key)
    if not ranges:
        st.info("Choose one or two parameters to sweep.", icon=":material/tune:")
        return
    with_information = st.checkbox("Score information loss too (slower)", value=True, key=f"{key}_information")
    prices = default_prices(conversation)
    with section("Prices"):
        prices = choose_prices(f"{key}_prices", prices.model)
    try:
        values = grid_values(axes, ranges)
    except ValueError as exc:
        show_error("These ranges cannot be swept", exc)
        return
    signature = _signature(setup, values, prices, with_information)
    source = conversation_fingerprint(conversation)
    if st.button("Run sweep", key=f"{key}_run", type="primary"):
        with section("Sweep"):
            result = _run(conversation, setup, values, prices, with_information)
            st.session_state[f"{key}_result"] = (source, signature, result)
            st.session_state[f"{key}_run_id"] = st.session_state.get(f"{key}_run_id", 0) + 1
            st.session_state[f"{key}_seen"] = {}
    stored = st.session_state.get(f"{key}_result")
    if stored is None or stored[0] != source:
        st.info("Choose the ranges and run the sweep.", icon=":material/grid_on:")
        return
    if stored[1] != signature:
        st.caption("The settings changed since this sweep ran; run it again to update the heatmaps.")
    with section("Sweep results"):
        _show_result(stored[2], on_load, key)
