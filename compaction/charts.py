"""Altair chart builders: pure functions from DataFrames (see :mod:`compaction.views`) to ``alt.Chart`` objects.

The app and notebooks use the same builders::

    from compaction import charts, views
    runs = [("A", rep_a), ("B", rep_b)]
    charts.tokens_chart(views.step_series(runs), views.compaction_events(runs),
                        views.threshold_rules(runs, 100_000), selected_step=12)

Colours are fixed per role so a setup looks the same in every chart and table: the uncompacted log is grey,
setups take :data:`SETUP_COLORS` in order, fates take :data:`FATE_COLORS`. No chart embeds more than
:data:`~compaction.views.MAX_CHART_ROWS` rows: long logs are downsampled (lowest and highest point per bucket).

Each builder has a ``…_data`` twin giving the chart as :class:`ChartData`: its *layout* (everything its structure
depends on) and its data frames by dataset name. Building and validating an Altair chart costs far more than its
data, so the app turns a layout into a Vega-Lite template once (:func:`template`) and fills in new data on every
change (:func:`spec_of`); the builders themselves (:func:`chart_of`) stay what notebooks and exports use.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic
from typing import TypedDict
from typing import TypeVar

import altair as alt
import pandas as pd
from altair.utils.data import to_values

from .history import FATES
from .views import BASELINE
from .views import EVENT_COLUMNS
from .views import MAX_CHART_ROWS
from .views import RULE_COLUMNS
from .views import downsample_steps
from .views import thin_events

if TYPE_CHECKING:
    from typing import Unpack  # (3.11: the annotation only)

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
#: drawn on a canvas instead of as SVG elements: charts of thousands of marks redraw several times faster (Streamlit
#: and vega-embed read the renderer from the spec's usermeta)
CANVAS = {"embedOptions": {"renderer": "canvas"}}
#: rows reserved for events when a log is long (the rest goes to the token lines)
EVENT_ROW_SHARE = 0.2
#: the tokens chart's legend: entries per row, and the widest label in pixels (a setup's label and strategy fit)
LEGEND_COLUMNS = 2
LEGEND_LABEL_LIMIT = 440


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


#: the kind of Altair chart a layout builds (a single chart, a layered one)
ChartT = TypeVar("ChartT", bound=alt.TopLevelMixin, covariant=True)


class Layout(Generic[ChartT]):
    """What a chart's Vega-Lite structure depends on (a frozen dataclass per chart kind), and how to build it with
    Altair over named datasets."""

    def build(self) -> ChartT:  # pragma: no cover - every layout defines it
        raise TypeError(f"{type(self).__name__} does not build a chart")


@dataclass(frozen=True)
class ChartData(Generic[ChartT]):
    """A chart as its layout and its data frames by dataset name (see the module docstring)."""

    layout: Layout[ChartT]
    frames: Mapping[str, pd.DataFrame]

    def records(self) -> dict[str, list[dict[str, Any]]]:
        """Each frame as the rows Altair would embed for it."""
        return {name: frame_rows(frame) for name, frame in self.frames.items()}


def frame_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows Altair embeds for a data frame (``to_values(frame)["values"]``)."""
    rows = to_values(frame)["values"]
    assert isinstance(rows, list)  # a data frame's values are its rows (a dict only for other data types)
    return rows


def chart_of(data: ChartData[ChartT]) -> ChartT:
    """The Altair chart (validated when serialized): what notebooks display and exports render."""
    return data.layout.build().properties(datasets=data.records())


@lru_cache(maxsize=64)
def template(layout: Layout[alt.TopLevelMixin]) -> dict[str, Any]:
    """The Vega-Lite dict of a layout without its named datasets (built and validated once per layout: building with
    Altair takes 0.2–0.4 s; shared, so never modify it)."""
    return layout.build().to_dict()


def spec_of(data: ChartData[alt.TopLevelMixin]) -> dict[str, Any]:
    """``chart_of(data).to_dict()``, from the layout's template: no chart is built or validated again."""
    out = dict(template(data.layout))
    out["datasets"] = {**out.get("datasets", {}), **data.records()}
    return out


def layered(*charts: alt.Chart | alt.LayerChart) -> alt.LayerChart:
    """``alt.layer(*charts)``: charts without facet encodings layer into a :class:`alt.LayerChart` (Altair 6 types
    the result as possibly a ``FacetChart``, for layers that share one)."""
    chart = alt.layer(*charts)
    assert isinstance(chart, alt.LayerChart)
    return chart


def _named(name: str) -> alt.NamedData:
    return alt.NamedData(name=name)


def _row_budget(series: pd.DataFrame, events: pd.DataFrame, rules: pd.DataFrame, max_rows: int
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Series and events cut down so that everything the chart embeds stays within ``max_rows``."""
    fixed = len(rules) + 1  # the rules and the selected-step rule
    event_cap = max(int((max_rows - fixed) * EVENT_ROW_SHARE), 1)
    events = thin_events(events, event_cap)
    series = downsample_steps(series, max(max_rows - fixed - len(events), 2))
    return series, events


class TokensChartOptions(TypedDict, total=False):
    """The keyword options of :func:`tokens_chart` (and :func:`tokens_chart_data`, which gives their defaults)."""

    selected_step: int | None
    colors: Mapping[str, str] | None
    height: int
    max_rows: int
    floor: pd.DataFrame | None
    usage: pd.DataFrame | None
    log_events: pd.DataFrame | None


def tokens_chart(series: pd.DataFrame, events: pd.DataFrame | None = None, rules: pd.DataFrame | None = None,
                 **options: Unpack[TokensChartOptions]) -> alt.LayerChart:
    """Tokens sent per LLM call, one line per series, with the context window, trigger and target as labelled
    horizontal rules, compaction events as markers (▼ compacted, ✕ declined) over a before → after drop line, and
    ``selected_step`` as a vertical rule. Optional layers: each setup's incompressible ``floor`` as a faint band
    (``step, series, floor``), the provider-reported ``usage`` (``step, tokens``) as its own dotted series, and the
    log's own compactions (``log_events``: ``step, label, pre_tokens, post_tokens``) as vertical markers. Clicking a
    point selects its step through the ``pick`` selection (field ``step``). ``options``: see
    :class:`TokensChartOptions`; ``max_rows`` (default :data:`~compaction.views.MAX_CHART_ROWS`) caps the rows it
    embeds, ``height`` defaults to 420."""
    return chart_of(tokens_chart_data(series, events, rules, **options))


def tokens_chart_data(
    series: pd.DataFrame,
    events: pd.DataFrame | None = None,
    rules: pd.DataFrame | None = None,
    *,
    selected_step: int | None = None,
    colors: Mapping[str, str] | None = None,
    height: int = 420,
    max_rows: int = MAX_CHART_ROWS,
    floor: pd.DataFrame | None = None,
    usage: pd.DataFrame | None = None,
    log_events: pd.DataFrame | None = None,
) -> ChartData[alt.LayerChart]:
    """:func:`tokens_chart` as :class:`ChartData`: the rows it embeds, cut to ``max_rows``, and its layout."""
    events = events if events is not None else pd.DataFrame(columns=EVENT_COLUMNS)
    rules = rules if rules is not None else pd.DataFrame(columns=RULE_COLUMNS)
    extras = [f for f in (floor, usage, log_events) if f is not None and not f.empty]
    budget = max(max_rows - sum(min(len(f), max_rows // 5) for f in extras), max_rows // 2)
    series, events = _row_budget(series, events, rules, budget)
    names = tuple(dict.fromkeys(series["series"]))
    palette = dict(colors) if colors else series_colors(names)
    colour_of = {name: palette.get(name, BASELINE_COLOR) for name in names}
    if usage is not None and not usage.empty:
        colour_of[USAGE_SERIES] = USAGE_COLOR
    last_step = int(series["step"].max()) if not series.empty else 0
    top = max([float(series["tokens"].max()) if not series.empty else 0.0,
               *(float(v) for v in rules["tokens"])], default=0.0)
    frames = {"series": _with_event_notes(series, events),
              "rules": staggered_labels(rules, top, height) if not rules.empty
              else pd.DataFrame([{"tokens": 0.0, "kind": "none", "label": "", "label_x": 4.0}]),
              SELECTED_DATASET: selected_step_frame(selected_step)}
    if floor is not None and not floor.empty:
        frames["floor"] = downsample_steps(floor, max_rows // 5, value="floor")
    if usage is not None and not usage.empty:
        frames["usage"] = downsample_steps(usage.assign(series=USAGE_SERIES), max_rows // 5)
    if log_events is not None and not log_events.empty:
        frames["log_events"] = log_events.head(max_rows // 5)
    # always a dataset (empty when nothing compacted): the chart keeps one structure while the thresholds move, and
    # the legend always explains the markers
    frames["events"] = events.assign(colour=events["series"].map(colour_of).fillna(BASELINE_COLOR).astype(str))
    layout = TokensLayout(tuple(colour_of[name] for name in legend_order(colour_of)), 30 if last_step <= 300 else 12,
                          tuple(frames), height)
    return ChartData(layout, frames)


def legend_order(names: Iterable[str]) -> list[str]:
    """Series names in the order of the tokens chart's legend and colour range: ascending as Vega compares strings
    (by UTF-16 code units), so it matches the domain Vega sorts from the data."""
    return sorted(names, key=lambda name: name.encode("utf-16-be"))


#: the name of the tokens chart's clickable points (the view its ``pick`` selection listens on)
POINTS_VIEW = "step_points"
#: the legend name of the provider-reported prompt tokens (a series of its own in the tokens chart)
USAGE_SERIES = "provider-reported prompt tokens"
#: the tokens chart's dataset holding the selected step (one row, or none): a new step is new data in the same spec,
#: so the browser updates the chart in place instead of embedding it again
SELECTED_DATASET = "selected"
#: the height of a threshold label in pixels, and the horizontal room one takes
LABEL_HEIGHT_PX = 15
LABEL_WIDTH_PX = 230


def selected_step_frame(step: int | None) -> pd.DataFrame:
    """The selected-step dataset of the tokens chart: ``step, label`` for ``step``, no row for None."""
    if step is None:
        return pd.DataFrame({"step": pd.Series([], dtype="int64"), "label": pd.Series([], dtype="str")})
    return pd.DataFrame([{"step": int(step), "label": f"step {int(step)}"}])


def staggered_labels(rules: pd.DataFrame, top: float, height: int) -> pd.DataFrame:
    """``rules`` with ``label_x``, the pixel where each line's label starts: a label that would overlap the one of a
    line close below it (within :data:`LABEL_HEIGHT_PX` at this ``height``, for a y axis up to about ``top``) moves
    right to the next free slot, so no two labels cover each other."""
    rules = rules.sort_values("tokens").reset_index(drop=True)
    span = top * 1.05 if top > 0 else 1.0
    gap = span * LABEL_HEIGHT_PX / max(height, 1)
    placed: list[tuple[float, int]] = []  # (tokens, slot) of the labels placed so far
    slots = []
    for value in rules["tokens"]:
        near = {slot for tokens, slot in placed if abs(float(value) - tokens) < gap}
        slot = next(n for n in range(len(placed) + 1) if n not in near)
        placed.append((float(value), slot))
        slots.append(slot)
    return rules.assign(label_x=[4.0 + LABEL_WIDTH_PX * n for n in slots])


@dataclass(frozen=True)
class TokensLayout(Layout[alt.LayerChart]):
    """The structure of the tokens chart: the series' colours in :func:`legend_order`, point size, which optional
    layers it has. The series' names are data, not structure: renaming a setup or switching its strategy keeps the
    chart's spec, so the browser updates the chart in place instead of embedding it again."""

    palette: tuple[str, ...]
    point_size: int
    datasets: tuple[str, ...]
    height: int

    def build(self) -> alt.LayerChart:
        # the colour scale's domain is the series names in the data, sorted as Vega sorts strings; its range is the
        # colours in that order (legend_order)
        color = alt.Color(
            "series:N",
            title=None,
            sort="ascending",
            scale=alt.Scale(range=list(self.palette)),
            # in columns, so every series stays in the legend however many setups there are (one row would be cut)
            legend=alt.Legend(orient="top", direction="horizontal", columns=min(len(self.palette), LEGEND_COLUMNS),
                              labelLimit=LEGEND_LABEL_LIMIT, symbolStrokeWidth=3, symbolOpacity=1,
                              symbolType="circle", columnPadding=16),
        )
        x = alt.X("step:Q", title="LLM call (step)", axis=alt.Axis(format="d", tickMinStep=1))
        y = alt.Y("tokens:Q", title="tokens sent",
                  axis=alt.Axis(labelExpr="datum.value ? format(datum.value, '~s') : '0'"))
        pick = alt.selection_point(name=SELECTION, fields=["step"], on="click", nearest=True, clear=False)
        base = alt.Chart(_named("series"))  # one dataset shared by the lines and the points
        lines = base.mark_line(strokeWidth=2, interpolate="linear").encode(
            x=x,
            y=y,
            color=color,
            strokeDash=alt.condition(alt.datum.series == BASELINE, alt.value([5, 4]), alt.value([1, 0])),
        )
        points = base.mark_circle(size=self.point_size, opacity=0.9).encode(
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
        ).add_params(pick).properties(name=POINTS_VIEW)  # named: Altair would name it by a hash of the chart
        layers: list[alt.Chart | alt.LayerChart] = [_rules_layer(), lines]
        if "floor" in self.datasets:  # after the lines: the legend takes its symbols from the first layer
            layers.append(_floor_layer(color))
        if "usage" in self.datasets:
            layers.append(_usage_layer(x, color))
        if "log_events" in self.datasets:
            layers.append(_log_events_layer(x))
        if "events" in self.datasets:
            layers.extend(_event_layers(x, color))
        # the clickable points (and their nearest-point voronoi) go on top so a click anywhere selects a step
        layers.append(points)
        if SELECTED_DATASET in self.datasets:
            layers.append(alt.LayerChart.from_dict(selected_step_layer(None)))
        # (Altair's configure_* methods are untyped: the annotation restores what they return)
        chart: alt.LayerChart = layered(*layers).properties(height=self.height).configure_legend(
            labelFontSize=12).configure_axis(labelFontSize=11, titleFontSize=12)
        return chart


#: colour of the provider-reported usage series and of the log's own compaction markers
USAGE_COLOR = "#343a40"
LOG_EVENT_COLOR = "#5f3dc4"


def _floor_layer(color: alt.Color) -> alt.Chart:
    """Each setup's incompressible floor as a faint band from 0, in the setup's colour (sharing the series legend:
    a layer that hid its own legend would hide the merged one)."""
    band: alt.Chart = alt.Chart(_named("floor")).mark_area(opacity=0.12, interpolate="step-after").encode(
        x="step:Q",
        y=alt.Y("floor:Q", stack=None),
        color=color,
        tooltip=[alt.Tooltip("series:N", title="floor of"), alt.Tooltip("step:Q", title="step"),
                 alt.Tooltip("floor:Q", title="incompressible floor (approx.)", format=",")],
    )
    return band


def _usage_layer(x: alt.X, color: alt.Color) -> alt.LayerChart:
    """Provider-reported prompt tokens per call: a dotted dark line with small squares (a series of the legend)."""
    base = alt.Chart(_named("usage"))
    tooltip = [alt.Tooltip("step:Q", title="step"),
               alt.Tooltip("tokens:Q", title="provider-reported prompt tokens", format=",")]
    line = base.mark_line(strokeDash=[1, 3], strokeWidth=2).encode(x=x, y="tokens:Q", color=color)
    marks = base.mark_square(size=18).encode(x=x, y="tokens:Q", color=color, tooltip=tooltip)
    return layered(line, marks)


def _log_events_layer(x: alt.X) -> alt.LayerChart:
    """Vertical markers where the real agent compacted (as recorded in the log), labelled at the top."""
    base = alt.Chart(_named("log_events"))
    label = base.mark_text(align="left", baseline="top", dx=4, y=2, fontSize=11, fontWeight="bold",
                           color=LOG_EVENT_COLOR).encode(x=x, text=alt.value("agent compacted"))
    return layered(_log_event_rules(base, x), label)


def _log_event_rules(base: alt.Chart, x: alt.X) -> alt.Chart:
    rules: alt.Chart = base.mark_rule(color=LOG_EVENT_COLOR, strokeDash=[8, 3], strokeWidth=2).encode(
        x=x,
        tooltip=[alt.Tooltip("label:N", title="in the log"), alt.Tooltip("step:Q", title="before step"),
                 alt.Tooltip("pre_tokens:Q", title="tokens before (log)", format=","),
                 alt.Tooltip("post_tokens:Q", title="tokens after (log)", format=",")],
    )
    return rules


def _with_event_notes(series: pd.DataFrame, events: pd.DataFrame) -> pd.DataFrame:
    """The series with each point's trigger outcome and note (``—`` where nothing happened), for its tooltip."""
    if events.empty:
        return series.assign(event="—", note="—")
    notes = events[["step", "series", "event", "note"]].drop_duplicates(["step", "series"])
    merged = series.merge(notes, on=["step", "series"], how="left")
    return merged.fillna({"event": "—", "note": "—"})


def _rules_layer() -> alt.LayerChart:
    """The window / trigger / target lines, each labelled at the left end, where a growing context is still low.

    Colours are fixed values, not a scale: in a layered chart a stroke/fill scale would be shared with (and
    distort) the series colours of the other layers."""
    base = alt.Chart(_named("rules"))
    layers = []
    for kind, (color, dash) in RULE_STYLES.items():
        of_kind = base.transform_filter(alt.datum.kind == kind)
        layers.append(of_kind.mark_rule(strokeWidth=1.5, color=color, strokeDash=dash or [1, 0]).encode(
            y="tokens:Q", tooltip=[alt.Tooltip("label:N", title="line")]))
        layers.append(of_kind.mark_text(align="left", baseline="bottom", dy=-3, fontSize=11, fontWeight="bold",
                                        color=color).encode(x=alt.X("label_x:Q", scale=None, axis=None),
                                                            y="tokens:Q", text="label:N"))
    return layered(*layers)


def _event_layers(x: alt.X, color: alt.Color) -> list[alt.Chart]:
    """A drop line from tokens before to tokens sent, and a marker at the top (▼ compacted, ✕ declined), outlined and
    filled with its series' colour (a column of the events: a stroke or fill scale would not share the colour
    scale's domain)."""
    base = alt.Chart(_named("events"))
    drop = base.transform_filter(alt.datum.event == "compacted").mark_rule(strokeWidth=1.5, opacity=0.55).encode(
        x=x, y="tokens_before:Q", y2="tokens_sent:Q", color=color
    )
    kinds = list(EVENT_SHAPES)
    label_expr = " : ".join(f"datum.label == '{k}' ? '{EVENT_LABELS[k]}'" for k in kinds) + " : datum.label"
    marker = base.mark_point(size=110, filled=False, opacity=1, strokeWidth=2).encode(
        x=x,
        y=alt.Y("tokens_before:Q"),
        stroke=alt.Stroke("colour:N", scale=None, legend=None),
        fill=alt.condition(alt.datum.event == "compacted", alt.Fill("colour:N", scale=None, legend=None),
                           alt.value("transparent")),
        shape=alt.Shape(
            "event:N",
            title=None,
            scale=alt.Scale(domain=kinds, range=[EVENT_SHAPES[k] for k in kinds]),
            legend=alt.Legend(orient="top", direction="horizontal", labelExpr=label_expr, symbolStrokeWidth=2,
                              symbolFillColor="#495057", symbolStrokeColor="#495057"),
        ),
    )
    return [drop, marker]


SELECTED_COLOR = "#212529"


def selected_step_layer(step: int | None) -> dict[str, Any]:
    """The vertical rule marking the selected step, labelled at the bottom of the plot (a growing context is high at
    the top right, where a label would cover the lines), as a plain Vega-Lite layer: over the rows of ``step`` given
    inline, or for None over the :data:`SELECTED_DATASET` dataset (the tokens chart's own, where the step is data).

    Plain data so it can be appended to a cached chart's spec (see :func:`with_selected_step`) without rebuilding
    the whole chart on every click.
    """
    x = {"field": "step", "type": "quantitative"}
    data = ({"name": SELECTED_DATASET} if step is None
            else {"values": [{"step": int(step), "label": f"step {int(step)}"}]})
    return {
        "data": data,
        "layer": [
            {"mark": {"type": "rule", "color": SELECTED_COLOR, "strokeWidth": 2, "opacity": 0.8}, "encoding": {"x": x}},
            {
                "mark": {"type": "text", "align": "left", "baseline": "bottom", "dx": 4, "dy": -4, "fontSize": 11,
                         "fontWeight": "bold", "color": SELECTED_COLOR},
                "encoding": {"x": x, "y": {"datum": 0}, "text": {"field": "label", "type": "nominal"}},
            },
        ],
    }


def with_selected_step(spec: Mapping[str, Any], step: int | None) -> dict[str, Any]:
    """A copy of a chart spec (``….to_dict()``) with the selected step marked: in the tokens chart's
    :data:`SELECTED_DATASET` when the spec has one (plain rows), else as one more layer."""
    out = dict(spec)
    if SELECTED_DATASET in spec.get("datasets", {}):
        out["datasets"] = {**spec["datasets"], SELECTED_DATASET: frame_rows(selected_step_frame(step))}
    elif step is not None:
        out["layer"] = [*spec["layer"], selected_step_layer(step)]
    return out


def context_strip_chart(strip: pd.DataFrame, setups: Sequence[str], *, row_height: int = 26) -> alt.Chart:
    """One horizontal band per setup along the aligned context (oldest message left), coloured by fate."""
    return chart_of(context_strip_data(strip, setups, row_height=row_height))


def context_strip_data(strip: pd.DataFrame, setups: Sequence[str], *, row_height: int = 26) -> ChartData[alt.Chart]:
    """:func:`context_strip_chart` as :class:`ChartData`: the setups' order is a column (``setup_order``), so the
    spec stays the same when a setup is renamed or switches strategy."""
    order = {label: position for position, label in enumerate(setups)}
    return ChartData(StripLayout(row_height), {"strip": strip.assign(setup_order=strip["setup"].map(order))})


@dataclass(frozen=True)
class StripLayout(Layout[alt.Chart]):
    """The structure of the context strip: the band height (one band per setup, in the order of the data's
    ``setup_order``)."""

    row_height: int

    def build(self) -> alt.Chart:
        strip: alt.Chart = (
            alt.Chart(_named("strip"))
            .mark_rect(stroke="white", strokeWidth=0.3)
            .encode(
                x=alt.X("start:Q", title="messages in the context, oldest → newest (aligned across setups)",
                        axis=alt.Axis(format="d", labels=False, ticks=False, grid=False)),
                x2="end:Q",
                y=alt.Y("setup:N", title=None, sort=alt.EncodingSortField("setup_order", op="min"),
                        scale=alt.Scale(paddingInner=0.3, paddingOuter=0.15),
                        axis=alt.Axis(labelFontWeight="bold", labelFontSize=13, ticks=False, domain=False)),
                color=_fate_color(),
                tooltip=[
                    alt.Tooltip("setup:N", title="setup"),
                    alt.Tooltip("fate:N", title="fate"),
                    alt.Tooltip("messages:Q", title="messages"),
                    alt.Tooltip("first_index:Q", title="from message #"),
                    alt.Tooltip("last_index:Q", title="to message #"),
                ],
            )
            .properties(height=alt.Step(self.row_height))
        )
        return strip


def _fate_color() -> alt.Color:
    """Colour by fate (:data:`FATE_COLORS`, in the order of :data:`~compaction.history.FATES`), its legend on top:
    the context strip's and the lifecycle chart's."""
    fates = list(FATES)
    return alt.Color("fate:N", title=None, scale=alt.Scale(domain=fates, range=[FATE_COLORS[f] for f in fates]),
                     legend=alt.Legend(orient="top", direction="horizontal"))


KIND_COLORS: Mapping[str, str] = {
    "tool schemas": "#adb5bd",
    "system": "#495057",
    "user": "#1c7ed6",
    "assistant text": "#66d9e8",
    "tool calls": "#99e9f2",
    "tool result: other": "#ffd8a8",
}
#: warm hues, ordered so that neighbours in a legend differ most (orange, crimson, yellow, lime, pink, …)
TOOL_RESULT_COLORS = ("#fd7e14", "#c2255c", "#fab005", "#94d82d", "#f783ac", "#a61e4d", "#e67700", "#ffd43b")
INSERTED_COLORS = ("#2f9e44", "#51cf66", "#8ce99a", "#087f5b")


def kind_colors(kinds: Sequence[str]) -> dict[str, str]:
    """A colour per composition kind: fixed ones for the fixed kinds, oranges for tool results, greens for inserted
    texts (as in :data:`FATE_COLORS`: results are what gets pruned, inserted texts are what gets inserted)."""
    colors = {}
    tools = inserted = 0
    for kind in kinds:
        if kind in KIND_COLORS:
            colors[kind] = KIND_COLORS[kind]
        elif kind.startswith("tool result: "):
            colors[kind] = TOOL_RESULT_COLORS[tools % len(TOOL_RESULT_COLORS)]
            tools += 1
        elif kind.startswith("inserted"):
            colors[kind] = INSERTED_COLORS[inserted % len(INSERTED_COLORS)]
            inserted += 1
        else:
            colors[kind] = BASELINE_COLOR
    return colors


def composition_chart(frame: pd.DataFrame, order: Sequence[str], *, selected_step: int | None = None,
                      height: int = 320) -> alt.LayerChart:
    """Stacked tokens per step by kind (``step, kind, tokens``; see :func:`compaction.anatomy.composition`)."""
    return chart_of(composition_chart_data(frame, order, selected_step=selected_step, height=height))


def composition_chart_data(frame: pd.DataFrame, order: Sequence[str], *, selected_step: int | None = None,
                           height: int = 320) -> ChartData[alt.LayerChart]:
    """:func:`composition_chart` as :class:`ChartData`."""
    ranks = {k: i for i, k in enumerate(order)}
    return ChartData(CompositionLayout(tuple(order), height, selected_step),
                     {"composition": frame.assign(rank=frame["kind"].map(ranks))})


@dataclass(frozen=True)
class CompositionLayout(Layout[alt.LayerChart]):
    """The structure of the composition chart: the kinds in stacking order."""

    order: tuple[str, ...]
    height: int
    selected_step: int | None

    def build(self) -> alt.LayerChart:
        order = list(self.order)
        palette = kind_colors(order)
        area = alt.Chart(_named("composition")).mark_area(interpolate="step-after", opacity=0.9).encode(
            x=alt.X("step:Q", title="LLM call (step)", axis=alt.Axis(format="d", tickMinStep=1)),
            y=alt.Y("tokens:Q", stack="zero", title="tokens sent",
                    axis=alt.Axis(labelExpr="datum.value ? format(datum.value, '~s') : '0'")),
            color=alt.Color("kind:N", title=None, sort=order,
                            scale=alt.Scale(domain=order, range=[palette[k] for k in order]),
                            legend=alt.Legend(orient="right", labelLimit=220)),
            order=alt.Order("rank:Q"),
            tooltip=[alt.Tooltip("step:Q", title="step"), alt.Tooltip("kind:N", title="kind"),
                     alt.Tooltip("tokens:Q", title="tokens", format=",")],
        )
        return _with_step(area, self.selected_step).properties(height=self.height, usermeta=CANVAS)


def lifecycle_chart(frame: pd.DataFrame, *, selected_step: int | None = None, height: int = 380) -> alt.LayerChart:
    """Message lifecycle: one row per original message (oldest at the top), x = LLM call, coloured by fate
    (``row, row_end, start, end, fate, …``; see :func:`compaction.anatomy.lifecycle`)."""
    return chart_of(lifecycle_chart_data(frame, selected_step=selected_step, height=height))


def lifecycle_chart_data(frame: pd.DataFrame, *, selected_step: int | None = None, height: int = 380) -> ChartData[alt.LayerChart]:
    """:func:`lifecycle_chart` as :class:`ChartData`."""
    return ChartData(LifecycleLayout(height, selected_step), {"lifecycle": frame})


@dataclass(frozen=True)
class LifecycleLayout(Layout[alt.LayerChart]):
    """The structure of the lifecycle chart."""

    height: int
    selected_step: int | None

    def build(self) -> alt.LayerChart:
        rects = alt.Chart(_named("lifecycle")).mark_rect().encode(
            x=alt.X("start:Q", title="LLM call (step)", axis=alt.Axis(format="d", tickMinStep=1)),
            x2="end:Q",
            y=alt.Y("row:Q", title="message (oldest at the top)", scale=alt.Scale(reverse=True, nice=False, zero=True),
                    axis=alt.Axis(format="d")),
            y2="row_end:Q",
            color=_fate_color(),
            tooltip=[
                alt.Tooltip("first_index:Q", title="message #"),
                alt.Tooltip("messages:Q", title="messages in this row"),
                alt.Tooltip("role:N", title="role"),
                alt.Tooltip("fate:N", title="fate"),
                alt.Tooltip("start:Q", title="from step"),
                alt.Tooltip("end:Q", title="until step (excl.)"),
                alt.Tooltip("preview:N", title="preview"),
            ],
        )
        return _with_step(rects, self.selected_step).properties(height=self.height, usermeta=CANVAS)


def _with_step(chart: alt.Chart, step: int | None) -> alt.LayerChart:
    """``chart`` as a layered chart, with the selected-step rule on top when a step is given."""
    layers: list[alt.Chart | alt.LayerChart] = [chart]
    if step is not None:
        layers.append(alt.LayerChart.from_dict(selected_step_layer(step)))
    return layered(*layers)
