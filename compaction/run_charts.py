"""The tokens chart of labelled replays, built by one function for the app and for notebooks
(:meth:`compaction.compare.Comparison.chart`): the same series, events, threshold rules, floor bands, reported usage
and log compactions, so a notebook shows exactly what the app shows."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

import altair as alt

from . import anatomy
from . import charts
from . import views
from .views import Run


def series_colors(runs: Sequence[Run], setup_colors: Mapping[str, str] | None = None) -> dict[str, str]:
    """Chart colours by series name: grey for the uncompacted log, each setup's own colour (``setup_colors`` by
    label) or else the palette's colour for its position."""
    colors = {views.BASELINE: charts.BASELINE_COLOR}
    for position, (label, rep) in enumerate(runs):
        colors[views.series_name(label, rep)] = (setup_colors or {}).get(label, charts.setup_color(position))
    return colors


def tokens_chart_data(runs: Sequence[Run], context_window: int | None = None,
                      colors: Mapping[str, str] | None = None, height: int = 420,
                      selected_step: int | None = None) -> charts.ChartData[alt.LayerChart]:
    """The tokens chart of ``runs``: each setup's line, the uncompacted log, compactions and declined triggers, the
    window (``context_window``, or each setup's own when None) with every trigger and target, each setup's floor
    band, the provider-reported usage and the log's own compactions. ``colors``: by series name (default
    :func:`series_colors`). The app leaves ``selected_step`` out and marks it per click on the cached spec."""
    first = runs[0][1]
    return charts.tokens_chart_data(
        views.step_series(runs),
        views.compaction_events(runs),
        views.threshold_rules(runs, context_window),
        colors=dict(colors) if colors else series_colors(runs),
        height=height,
        selected_step=selected_step,
        floor=anatomy.floor_series(runs),
        usage=anatomy.usage_series(first),
        log_events=anatomy.log_compactions(first),
    )
