"""Several setups on one conversation, for notebooks and scripts: ``compaction.compare(conv, setups)``.

The result shows itself in Jupyter as the metrics table and the tokens chart — the same chart functions the app
uses — and exposes everything as DataFrames and Replays for further work.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .conversation import Conversation
from .replay import Replay
from .setups import Setup


@dataclass
class Comparison:
    """Labelled replays of one conversation."""

    conversation: Conversation
    setups: list[Setup]
    replays: list[Replay]

    @property
    def runs(self) -> list[tuple[str, Replay]]:
        return [(s.name, r) for s, r in zip(self.setups, self.replays)]

    def __getitem__(self, label: str) -> Replay:
        for name, rep in self.runs:
            if name == label:
                return rep
        raise KeyError(f"no setup labelled {label!r}; labels: {', '.join(n for n, _ in self.runs)}")

    def frame(self):
        """One row per setup: calls, compactions, declined triggers, peak and total tokens, tokens saved."""
        from .views import summary_table

        return summary_table(self.runs)

    def steps(self):
        """Tokens per call, one row per step and series (long format)."""
        from .views import step_series

        return step_series(self.runs)

    def chart(self, selected_step: int | None = None, height: int = 360):
        """The app's tokens chart for these setups."""
        from .charts import tokens_chart
        from .views import compaction_events, step_series, threshold_rules

        window = max((r.context_window for r in self.replays), default=None)
        return tokens_chart(step_series(self.runs), compaction_events(self.runs), threshold_rules(self.runs, window),
                            selected_step=selected_step, height=height)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        try:
            bundle = dict(self.chart()._repr_mimebundle_(include, exclude) or {})
        except Exception:  # noqa: BLE001 - a chart that cannot render must not hide the table
            bundle = {}
        table = self.frame().to_html(index=False, escape=True)
        title = html.escape(f"{len(self.setups)} setups on {self.conversation.source.path or 'conversation'}")
        bundle.setdefault("text/html", "")
        bundle["text/html"] = f"<b>{title}</b>{table}" + bundle["text/html"]
        bundle["text/plain"] = self.frame().to_string(index=False)
        return bundle


def _as_setup(item: Setup | str | Mapping[str, Any], defaults: Mapping[str, Any], position: int) -> Setup:
    if isinstance(item, Setup):
        return item
    if isinstance(item, str):
        return Setup(item, label=f"{chr(ord('A') + position)}", **defaults)
    data = {**defaults, **item}
    return Setup.from_json(data, f"setup {position + 1}")


def compare(conv: Conversation, setups: Sequence[Setup | str | Mapping[str, Any]], *,
            context_window: int = 200_000, compact_at: float = 0.7, compact_to: float = 0.4,
            counter: str = "approx") -> Comparison:
    """Replay ``conv`` under each setup: a :class:`Setup`, a strategy name (labelled A, B, …), or a dict such as
    ``{"strategy": ..., "params": {...}, "label": ...}``. Policy keywords are the defaults for names and dicts."""
    defaults = {"context_window": context_window, "compact_at": compact_at, "compact_to": compact_to,
                "counter": counter}
    resolved = [_as_setup(item, defaults, i) for i, item in enumerate(setups)]
    return Comparison(conv, resolved, [s.run(conv) for s in resolved])
