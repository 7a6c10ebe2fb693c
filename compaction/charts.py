"""Altair chart builders: pure functions from DataFrames (see :mod:`compaction.views`) to ``alt.Chart`` objects.

The app and notebooks use the same builders::

    from compaction import charts, views
    runs = [("A", rep_a), ("B", rep_b)]
    charts.tokens_chart(views.step_series(runs), views.compaction_events(runs),
                        views.threshold_rules(runs, 100_000), selected_step=12)

Colours are fixed per role so a setup looks the same in every chart and table: the uncompacted log is grey,
setups take :data:`SETUP_COLORS` in order, fates take :data:`FATE_COLORS`. No chart embeds more than
:data:`~compaction.views.MAX_CHART_ROWS` rows: long logs are downsampled (lowest and highest point per bucket).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import pandas as pd

from .history import FATES
from .views import BASELINE, EVENT_COLUMNS, MAX_CHART_ROWS, RULE_COLUMNS, downsample_steps, thin_events

#: Name of the point selection on the tokens chart (``event.selection.pick`` → ``[{"step": k}]``).
SELECTION = "pick"
BASELINE_COLOR = "#868e96"
#: Setup colours in order (A, B, C, …); distinct from the fate colours below.
SETUP_COLORS = ("#1c83e1", "#d6336c", "#0ca678", "#f59f00", "#7048e8", "#495057")
FATE_COLORS: Mapping[str, str] = {
    "kept": "#ced4da",
    "pruned": "#ff922b",
    "collapsed": "#9775fa",
    "dropped": "#fa5252",
    "inserted": "#40c057",
}
#: colour and dash of each horizontal rule kind
RULE_STYLES: Mapping[str, tuple[str, list[int]]] = {
    "window": ("#c92a2a", []),
    "trigger": ("#e8590c", [6, 4]),
    "target": ("#2b8a3e", [2, 3]),
}
#: event → Vega shape (an SVG path for the declined ✕, drawn as a stroke)
EVENT_SHAPES: Mapping[str, str] = {"compacted": "triangle-down", "declined": "M-1,-1L1,1M-1,1L1,-1"}
EVENT_LABELS: Mapping[str, str] = {"compacted": "compaction", "declined": "declined trigger"}
#: rows reserved for events when a log is long (the rest goes to the token lines)
EVENT_ROW_SHARE = 0.2


def setup_color(position: int) -> str:
    """The colour of the setup at ``position`` (0 = A)."""
    return SETUP_COLORS[position % len(SETUP_COLORS)]


def series_colors(series: Sequence[str]) -> dict[str, str]:
    """Colours for tokens-chart series: the uncompacted log grey, the others in setup order."""
    colors: dict[str, str] = {}
    position = 0
    for name in series:
        if name == BASELINE:
            colors[name] = BASELINE_COLOR
        elif name not in colors:
            colors[name] = setup_color(position)
            position += 1
    return colors


def _row_budget(series: pd.DataFrame, events: pd.DataFrame, rules: pd.DataFrame, max_rows: int
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Series and events cut down so that everything the chart embeds stays within ``max_rows``."""
    fixed = len(rules) + 1  # the rules and the selected-step rule
    event_cap = max(int((max_rows - fixed) * EVENT_ROW_SHARE), 1)
    events = thin_events(events, event_cap)
    series = downsample_steps(series, max(max_rows - fixed - len(events), 2))
    return series, events


def tokens_chart(
    series: pd.DataFrame,
    events: pd.DataFrame | None = None,
    rules: pd.DataFrame | None = None,
    *,
    selected_step: int | None = None,
    colors: Mapping[str, str] | None = None,
    height: int = 420,
    max_rows: int = MAX_CHART_ROWS,
) -> alt.LayerChart:
    """Tokens sent per LLM call, one line per series, with the context window, trigger and target as labelled
    horizontal rules, compaction events as markers (▼ compacted, ✕ declined), and ``selected_step`` as a vertical
    rule. Clicking a point selects its step through the ``pick`` selection (field ``step``)."""
    events = events if events is not None else pd.DataFrame(columns=EVENT_COLUMNS)
    rules = rules if rules is not None else pd.DataFrame(columns=RULE_COLUMNS)
    series, events = _row_budget(series, events, rules, max_rows)
    names = list(dict.fromkeys(series["series"]))
    palette = dict(colors) if colors else series_colors(names)
    series_scale = alt.Scale(domain=names, range=[palette.get(n, BASELINE_COLOR) for n in names])
    color = alt.Color(
        "series:N",
        title=None,
        scale=series_scale,
        legend=alt.Legend(orient="top", direction="horizontal", labelLimit=360, symbolStrokeWidth=3),
    )
    x = alt.X("step:Q", title="LLM call (step)", axis=alt.Axis(format="d", tickMinStep=1))
    y = alt.Y("tokens:Q", title="tokens sent", axis=alt.Axis(labelExpr="datum.value ? format(datum.value, '~s') : '0'"))
    last_step = int(series["step"].max()) if not series.empty else 0
    pick = alt.selection_point(name=SELECTION, fields=["step"], on="click", nearest=True, clear=False)

    base = alt.Chart(_with_event_notes(series, events))  # one dataset shared by the lines and the points
    lines = base.mark_line(strokeWidth=2, interpolate="linear").encode(
        x=x,
        y=y,
        color=color,
        strokeDash=alt.condition(alt.datum.series == BASELINE, alt.value([5, 4]), alt.value([1, 0])),
    )
    point_size = 30 if last_step <= 300 else 12
    points = base.mark_circle(size=point_size, opacity=0.9).encode(
        x=x,
        y=y,
        color=color,
        tooltip=[
            alt.Tooltip("series:N", title="series"),
            alt.Tooltip("step:Q", title="step"),
            alt.Tooltip("message_index:Q", title="message #"),
            alt.Tooltip("tokens:Q", title="tokens sent", format=","),
            alt.Tooltip("event:N", title="trigger"),
            alt.Tooltip("note:N", title="what happened"),
        ],
    ).add_params(pick)
    layers: list[alt.Chart] = [_rules_layer(rules), lines]
    if not events.empty:
        layers.extend(_event_layers(events, x, color, series_scale))
    # the clickable points (and their nearest-point voronoi) go on top so a click anywhere selects a step
    layers.append(points)
    if selected_step is not None:
        layers.append(alt.LayerChart.from_dict(selected_step_layer(selected_step)))
    return alt.layer(*layers).properties(height=height).configure_legend(labelFontSize=12).configure_axis(
        labelFontSize=11, titleFontSize=12
    )


def _with_event_notes(series: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """The series with each point's trigger outcome and note (``—`` where nothing happened), for its tooltip."""
    if events.empty:
        return series.assign(event="—", note="—")
    notes = events[["step", "series", "event", "note"]].drop_duplicates(["step", "series"])
    merged = series.merge(notes, on=["step", "series"], how="left")
    return merged.fillna({"event": "—", "note": "—"})


def _rules_layer(rules: pd.DataFrame) -> alt.LayerChart:
    """The window / trigger / target lines, each labelled at the left end, where a growing context is still low.

    Colours are fixed values, not a scale: in a layered chart a stroke/fill scale would be shared with (and
    distort) the series colours of the other layers."""
    if rules.empty:
        rules = pd.DataFrame([{"tokens": 0.0, "kind": "none", "label": ""}])
    base = alt.Chart(rules)
    layers = []
    for kind, (color, dash) in RULE_STYLES.items():
        of_kind = base.transform_filter(alt.datum.kind == kind)
        layers.append(of_kind.mark_rule(strokeWidth=1.5, color=color, strokeDash=dash or [1, 0]).encode(
            y="tokens:Q", tooltip=[alt.Tooltip("label:N", title="line")]))
        layers.append(of_kind.mark_text(align="left", baseline="bottom", x=4, dy=-3, fontSize=11, fontWeight="bold",
                                        color=color).encode(y="tokens:Q", text="label:N"))
    return alt.layer(*layers)


def _event_layers(events: pd.DataFrame, x: alt.X, color: alt.Color, series_scale: alt.Scale) -> list[alt.Chart]:
    """A drop line from tokens before to tokens sent, and a marker at the top (▼ compacted, ✕ declined)."""
    base = alt.Chart(events)
    drop = base.transform_filter(alt.datum.event == "compacted").mark_rule(strokeWidth=1.5, opacity=0.55).encode(
        x=x, y="tokens_before:Q", y2="tokens_sent:Q", color=color
    )
    kinds = list(EVENT_SHAPES)
    label_expr = " : ".join(f"datum.label == '{k}' ? '{EVENT_LABELS[k]}'" for k in kinds) + " : datum.label"
    marker = base.mark_point(size=110, filled=False, opacity=1, strokeWidth=2).encode(
        x=x,
        y=alt.Y("tokens_before:Q"),
        stroke=alt.Stroke("series:N", scale=series_scale, legend=None),
        fill=alt.condition(alt.datum.event == "compacted", alt.Fill("series:N", scale=series_scale, legend=None),
                           alt.value("transparent")),
        shape=alt.Shape(
            "event:N",
            title=None,
            scale=alt.Scale(domain=kinds, range=[EVENT_SHAPES[k] for k in kinds]),
            legend=alt.Legend(orient="bottom", direction="horizontal", labelExpr=label_expr, symbolStrokeWidth=2,
                              symbolFillColor="#495057", symbolStrokeColor="#495057"),
        ),
    )
    return [drop, marker]


SELECTED_COLOR = "#212529"


def selected_step_layer(step: int) -> dict:
    """The vertical rule marking the selected step, labelled at the bottom of the plot (a growing context is high at
    the top right, where a label would cover the lines), as a plain Vega-Lite layer.

    Plain data so it can be appended to a cached ``tokens_chart(...).to_dict()`` (see :func:`with_selected_step`)
    without rebuilding the whole chart on every click.
    """
    x = {"field": "step", "type": "quantitative"}
    return {
        "data": {"values": [{"step": int(step), "label": f"step {int(step)}"}]},
        "layer": [
            {"mark": {"type": "rule", "color": SELECTED_COLOR, "strokeWidth": 2, "opacity": 0.8}, "encoding": {"x": x}},
            {
                "mark": {"type": "text", "align": "left", "baseline": "bottom", "dx": 4, "dy": -4, "fontSize": 11,
                         "fontWeight": "bold", "color": SELECTED_COLOR},
                "encoding": {"x": x, "y": {"datum": 0}, "text": {"field": "label", "type": "nominal"}},
            },
        ],
    }


def with_selected_step(spec: Mapping, step: int | None) -> dict:
    """A copy of a tokens-chart spec (``tokens_chart(...).to_dict()``) with the selected step marked."""
    out = dict(spec)
    if step is not None:
        out["layer"] = [*spec["layer"], selected_step_layer(step)]
    return out


def context_strip_chart(strip: pd.DataFrame, setups: Sequence[str], *, row_height: int = 26) -> alt.Chart:
    """One horizontal band per setup along the aligned context (oldest message left), coloured by fate."""
    fates = list(FATES)
    return (
        alt.Chart(strip)
        .mark_rect(stroke="white", strokeWidth=0.3)
        .encode(
            x=alt.X("start:Q", title="messages in the context, oldest → newest (aligned across setups)",
                    axis=alt.Axis(format="d", labels=False, ticks=False, grid=False)),
            x2="end:Q",
            y=alt.Y("setup:N", title=None, sort=list(setups), scale=alt.Scale(paddingInner=0.3, paddingOuter=0.15),
                    axis=alt.Axis(labelFontWeight="bold", labelFontSize=13, ticks=False, domain=False)),
            color=alt.Color(
                "fate:N",
                title=None,
                scale=alt.Scale(domain=fates, range=[FATE_COLORS[f] for f in fates]),
                legend=alt.Legend(orient="top", direction="horizontal"),
            ),
            tooltip=[
                alt.Tooltip("setup:N", title="setup"),
                alt.Tooltip("fate:N", title="fate"),
                alt.Tooltip("messages:Q", title="messages"),
                alt.Tooltip("first_index:Q", title="from message #"),
                alt.Tooltip("last_index:Q", title="to message #"),
            ],
        )
        .properties(height=alt.Step(row_height))
    )
