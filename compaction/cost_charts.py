"""Altair chart builders for costs, calibration, sweeps and fleets: pure functions from DataFrames to charts.

The frames come from :mod:`compaction.analysis.views`; the app and notebooks share these builders::

    from compaction import cost_charts
    from compaction.analysis import views
    cost_charts.cost_stack_chart(views.cost_parts([("A", report_a), ("B", report_b)]), measure="dollars")

Bill parts keep fixed colours (:data:`COST_KIND_COLORS`); setups take the colours the caller passes (the app's
setup colours), so a setup looks the same here as in the explorer.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import TypedDict

import altair as alt
import pandas as pd

from .analysis.views import COST_KINDS
from .charts import BASELINE_COLOR
from .charts import layered
from .charts import series_colors

COST_KIND_COLORS: Mapping[str, str] = {
    "cache read": "#74c0fc",
    "cache write": "#f76707",
    "uncached": "#adb5bd",
    "output": "#5f3dc4",
    "summarizer": "#e64980",
}
CALIBRATION_COLORS: Mapping[str, str] = {"reported": "#212529", "estimated": "#f59f00", "fitted": "#1c83e1"}
MEASURE_TITLES: Mapping[str, str] = {"tokens": "Tokens", "dollars": "US dollars"}
#: name of the point selection on a sweep heatmap (``event.selection.cell`` → ``[{axis: value, …}]``)
CELL_SELECTION = "cell"
METRIC_TITLES: Mapping[str, str] = {
    "dollars": "Total $",
    "peak_tokens": "Peak tokens",
    "compactions": "Compactions",
    "thrash": "Back-to-back compactions",
    "information_loss": "Information-loss score",
    "tokens_sent": "Tokens sent",
    "declined": "Declined triggers",
}


def _setup_scale(setups: Sequence[str], colors: Mapping[str, str] | None) -> alt.Scale:
    palette = {**series_colors(list(setups)), **(colors or {})}
    return alt.Scale(domain=list(setups), range=[palette[s] for s in setups])


def stack_max(parts: pd.DataFrame, measure: str) -> float:
    """The tallest stacked bar of ``parts`` over all setups (to give side-by-side stack charts one y scale)."""
    if parts.empty:
        return 0.0
    return float(parts.groupby(["setup", "step"])[measure].sum().max())


def cost_stack_chart(parts: pd.DataFrame, setup: str, measure: str = "tokens", *, y_max: float | None = None,
                     height: int = 220) -> alt.Chart:
    """Per step (or bucket of steps) of one ``setup``, its bill split into cache read / cache write / uncached /
    output / summarizer, stacked. ``measure`` is ``"tokens"`` or ``"dollars"``; ``y_max`` fixes the y scale (see
    :func:`stack_max`) so charts of several setups compare at a glance."""
    if measure not in MEASURE_TITLES:
        raise ValueError(f"measure must be one of {', '.join(MEASURE_TITLES)}, got {measure!r}")
    mine = parts[parts["setup"] == setup]
    chart: alt.Chart = alt.Chart(mine).mark_bar().encode(
        x=alt.X("step:Q", title="LLM call (step)", scale=alt.Scale(domainMin=0, nice=False)),
        x2="step_stop:Q",
        y=alt.Y(f"sum({measure}):Q", title=MEASURE_TITLES[measure], stack="zero",
                scale=alt.Scale(domain=[0, y_max]) if y_max else alt.Undefined),
        color=alt.Color("kind:N", title="Part of the bill",
                        scale=alt.Scale(domain=list(COST_KINDS), range=[COST_KIND_COLORS[k] for k in COST_KINDS])),
        order=alt.Order("kind_order:Q"),
        tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("step:Q", title="from step"),
                 alt.Tooltip("step_end:Q", title="to step"), alt.Tooltip("kind:N", title="part"),
                 alt.Tooltip("tokens:Q", format=",.0f"), alt.Tooltip("dollars:Q", format="$,.5f")],
    ).transform_calculate(
        kind_order=_kind_order_expression(), step_stop="datum.step_end + 1",
    ).properties(height=height, width="container", title=f"{setup}: {MEASURE_TITLES[measure].lower()} per call")
    return chart


def _kind_order_expression() -> str:
    cases = " : ".join(f"datum.kind === '{kind}' ? {i}" for i, kind in enumerate(COST_KINDS))
    return f"{cases} : {len(COST_KINDS)}"


def dollars_chart(summary: pd.DataFrame, colors: Mapping[str, str] | None = None) -> alt.LayerChart:
    """Total $ per setup as bars, with the uncompacted baseline's $ as a grey tick on each bar."""
    setups = list(summary["setup"]) if not summary.empty else []
    bars = alt.Chart(summary).mark_bar().encode(
        y=alt.Y("setup:N", title=None, sort=setups),
        x=alt.X("dollars:Q", title="Total $ (setup)"),
        color=alt.Color("setup:N", scale=_setup_scale(setups, colors), legend=None),
        tooltip=[alt.Tooltip("setup:N"), alt.Tooltip("dollars:Q", title="setup $", format="$,.4f"),
                 alt.Tooltip("baseline_dollars:Q", title="uncompacted $", format="$,.4f"),
                 alt.Tooltip("dollars_saved:Q", title="saved $", format="$,.4f")],
    )
    baseline = alt.Chart(summary).mark_tick(color=BASELINE_COLOR, thickness=3, size=28).encode(
        y=alt.Y("setup:N", sort=setups), x=alt.X("baseline_dollars:Q"),
        tooltip=[alt.Tooltip("baseline_dollars:Q", title="uncompacted $", format="$,.4f")],
    )
    return layered(bars, baseline).properties(height=alt.Step(34), width="container",
                                              title="Total $ per setup (grey tick: the uncompacted log)")


def calibration_chart(series: pd.DataFrame) -> alt.Chart:
    """Reported vs simulated prompt tokens per call of the real run (frame from ``views.calibration_series``)."""
    names = [n for n in CALIBRATION_COLORS if n in set(series["series"])] if not series.empty else []
    chart: alt.Chart = alt.Chart(series).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("message_index:Q", title="Message index of the call"),
        y=alt.Y("tokens:Q", title="Prompt tokens"),
        color=alt.Color("series:N", title=None,
                        scale=alt.Scale(domain=names, range=[CALIBRATION_COLORS[n] for n in names])),
        strokeDash=alt.condition("datum.series === 'reported'", alt.value([1, 0]), alt.value([5, 3])),
        tooltip=[alt.Tooltip("message_index:Q"), alt.Tooltip("series:N"), alt.Tooltip("tokens:Q", format=",.0f")],
    ).properties(height=220, width="container", title="Prompt tokens: reported by the provider vs simulated")
    return chart


class _Axes(TypedDict, total=False):
    """The position channels of a heatmap's layers (``y`` only for a two-axis sweep)."""

    x: alt.X
    y: alt.Y


def sweep_heatmap(cells: pd.DataFrame, x: str, y: str | None, metric: str) -> alt.LayerChart:
    """A heatmap of ``metric`` over the swept axes (``y`` None for a one-axis sweep); invalid configurations are
    grey. Clicking a valid cell selects it (point selection :data:`CELL_SELECTION` on the axis fields)."""
    fields = [x] if y is None else [x, y]
    selection = alt.selection_point(name=CELL_SELECTION, fields=fields, on="click", clear="dblclick")
    title = METRIC_TITLES.get(metric, metric)
    number = "$,.4f" if metric == "dollars" else ",.0f"
    tooltip = [alt.Tooltip(f"{f}:O") for f in fields] + [
        alt.Tooltip(f"{m}:Q", title=METRIC_TITLES.get(m, m), format="$,.4f" if m == "dollars" else ",.0f")
        for m in cells.columns if m not in fields and m != "error"
    ]
    encoding: _Axes = {"x": alt.X(f"{x}:O", title=x, axis=alt.Axis(labelAngle=0))}
    if y is not None:
        encoding["y"] = alt.Y(f"{y}:O", title=y, sort="descending")
    valid = cells[cells["error"] == ""]
    invalid = cells[cells["error"] != ""]
    rects = alt.Chart(valid).mark_rect(stroke="white", strokeWidth=1).encode(
        **encoding,
        color=alt.Color(f"{metric}:Q", title=title, scale=alt.Scale(scheme="orangered")),
        opacity=alt.condition(selection, alt.value(1.0), alt.value(0.35)),
        strokeWidth=alt.condition(selection, alt.value(2), alt.value(0)),
        tooltip=tooltip,
    ).add_params(selection)
    values = valid[metric].dropna()
    middle = float((values.min() + values.max()) / 2) if not values.empty else 0.0
    labels = alt.Chart(valid).mark_text(fontSize=10).encode(
        **encoding, text=alt.Text(f"{metric}:Q", format=number),
        color=alt.condition(f"datum['{metric}'] > {middle!r}", alt.value("white"), alt.value("#212529")),
    )
    layers = [rects, labels]
    if not invalid.empty:
        layers.append(alt.Chart(invalid).mark_rect(color="#e9ecef").encode(
            **encoding, tooltip=[alt.Tooltip(f"{f}:O") for f in fields] + [alt.Tooltip("error:N", title="invalid")]))
    return layered(*layers).properties(title=title, width="container", height=alt.Step(34))


def fleet_distribution_chart(frame: pd.DataFrame, metric: str, colors: Mapping[str, str] | None = None
                             ) -> alt.LayerChart:
    """The distribution of ``metric`` over a fleet's conversations, per setup: a box plot with every
    conversation as a point (hover shows which log)."""
    ok = frame[frame[metric].notna()] if metric in frame else frame.iloc[0:0]
    ok = ok[["setup", "log", "conversation", metric]].copy() if not ok.empty else pd.DataFrame(
        columns=["setup", "log", "conversation", metric])
    setups = list(dict.fromkeys(ok["setup"]))
    title = METRIC_TITLES.get(metric, metric)
    scale = _setup_scale(setups, colors)
    box = alt.Chart(ok).mark_boxplot(extent=1.5, opacity=0.5).encode(
        y=alt.Y("setup:N", title=None, sort=setups),
        x=alt.X(f"{metric}:Q", title=title),
        color=alt.Color("setup:N", scale=scale, legend=None),
    )
    points = alt.Chart(ok).mark_circle(size=40, opacity=0.8).encode(
        y=alt.Y("setup:N", sort=setups),
        x=alt.X(f"{metric}:Q"),
        yOffset=alt.YOffset("jitter:Q"),
        color=alt.Color("setup:N", scale=scale, legend=None),
        tooltip=[alt.Tooltip("log:N"), alt.Tooltip("conversation:N"), alt.Tooltip("setup:N"),
                 alt.Tooltip(f"{metric}:Q", title=title, format="$,.4f" if metric == "dollars" else ",.0f")],
    ).transform_calculate(jitter="(random() - 0.5) * 16")
    return layered(box, points).properties(height=alt.Step(56), width="container",
                                           title=f"{title} per conversation")
