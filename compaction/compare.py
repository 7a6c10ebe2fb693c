"""Several setups on one conversation, for notebooks and scripts: ``compaction.compare(conv, setups)``.

The result shows itself in Jupyter as the metrics table and the app's tokens chart — built by the very function the
app uses (:func:`compaction.run_charts.tokens_chart_data`) — and exposes everything as DataFrames and Replays for
further work. Its ``repr`` is one short line.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from .conversation import Conversation
from .display import clip
from .display import counted
from .display import html_table
from .display import short_label
from .models import Resolved
from .models import resolve_context_window
from .replay import Replay
from .setups import Setup

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from .charts import ChartData

#: setups a ``repr`` names one by one (the rest are counted)
REPR_SETUPS = 6


@dataclass(repr=False)
class Comparison:
    """Labelled replays of one conversation (``window``: how the default window was chosen, when none was given)."""

    conversation: Conversation
    setups: list[Setup]
    replays: list[Replay]
    window: Resolved | None = None

    @property
    def runs(self) -> list[tuple[str, Replay]]:
        return [(s.name, r) for s, r in zip(self.setups, self.replays)]

    def __getitem__(self, label: str) -> Replay:
        for name, rep in self.runs:
            if name == label:
                return rep
        raise KeyError(f"no setup labelled {label!r}; labels: {', '.join(n for n, _ in self.runs)}")

    def frame(self) -> pd.DataFrame:
        """One row per setup: calls, compactions, declined triggers, peak and total tokens, tokens saved."""
        from .views import summary_table

        return summary_table(self.runs)

    def steps(self) -> pd.DataFrame:
        """Tokens per call, one row per step and series (long format)."""
        from .views import step_series

        return step_series(self.runs)

    def chart_data(self, selected_step: int | None = None, height: int = 420) -> ChartData[alt.LayerChart]:
        """The app's tokens chart of these setups as :class:`~compaction.charts.ChartData`, from the app's own
        builder (:func:`compaction.run_charts.tokens_chart_data`)."""
        from .run_charts import tokens_chart_data

        return tokens_chart_data(self.runs, None, height=height, selected_step=selected_step)

    def chart(self, selected_step: int | None = None, height: int = 420) -> alt.TopLevelMixin:
        """The app's tokens chart for these setups (an Altair chart), ``selected_step`` marked as the app marks it."""
        from .charts import chart_of

        return chart_of(self.chart_data(selected_step, height))

    def __repr__(self) -> str:
        parts = []
        for name, rep in self.runs[:REPR_SETUPS]:
            s = rep.summary()
            parts.append(f"{clip(name, 30)} {rep.strategy.name}: {counted(s['compactions'], 'compaction')}, peak "
                         f"{s['peak_tokens_sent']:,}")
        more = len(self.runs) - REPR_SETUPS
        if more > 0:
            parts.append(f"+{more} more")
        window = f"window {self.replays[0].context_window:,} ({clip(self.replays[0].context_window_source, 60)}); " \
            if self.replays else ""
        return (f"<Comparison of {counted(len(self.setups), 'setup')} on {short_label(self.conversation)}: {window}"
                f"{'; '.join(parts)}>")

    def _repr_html_(self) -> str:
        """The metrics table (escaped) under a one-line title."""
        title = f"{len(self.setups)} setups on {short_label(self.conversation)}"
        if self.replays:
            title += f" · window {self.replays[0].context_window:,} ({clip(self.replays[0].context_window_source, 60)})"
        table = self.frame().to_html(index=False, escape=True)
        return f"{html_table((), title)}{table}"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        try:
            raw = self.chart()._repr_mimebundle_(include, exclude) or {}
            bundle = dict(raw[0] if isinstance(raw, tuple) else raw)  # (data, metadata) or data
        except Exception:  # noqa: BLE001 - a chart that cannot render must not hide the table
            bundle = {}
        bundle["text/html"] = self._repr_html_() + bundle.get("text/html", "")
        bundle["text/plain"] = repr(self)
        return bundle


def _as_setup(item: Setup | str | Mapping[str, Any], defaults: Mapping[str, Any], position: int) -> Setup:
    if isinstance(item, Setup):
        return item
    if isinstance(item, str):
        return Setup(item, label=f"{chr(ord('A') + position)}", **defaults)
    data = {**defaults, **item}
    return Setup.from_json(data, f"setup {position + 1}")


def compare(conv: Conversation, setups: Sequence[Setup | str | Mapping[str, Any]], *,
            context_window: int | None = None, compact_at: float = 0.7, compact_to: float = 0.4,
            counter: str = "approx") -> Comparison:
    """Replay ``conv`` under each setup: a :class:`Setup`, a strategy name (labelled A, B, …), or a dict such as
    ``{"strategy": ..., "params": {...}, "label": ...}``. Policy keywords are the defaults for names and dicts;
    ``context_window=None`` takes the log's window (:func:`compaction.models.resolve_context_window`)."""
    window = resolve_context_window(conv) if context_window is None else None
    defaults = {"context_window": window.value if window else context_window, "compact_at": compact_at,
                "compact_to": compact_to, "counter": counter}
    resolved = [_as_setup(item, defaults, i) for i, item in enumerate(setups)]
    replays = [s.run(conv) for s in resolved]
    if window is not None:  # the setups that took the default window say where it came from
        for item, rep in zip(setups, replays):
            if isinstance(item, str) or (isinstance(item, Mapping) and "context_window" not in item):
                rep.context_window_source = window.source
    return Comparison(conv, resolved, replays, window)
