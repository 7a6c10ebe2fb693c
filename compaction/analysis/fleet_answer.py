"""The answer of a fleet sweep: the best setting under the user's constraints, how it is distributed across the
sessions (not only its mean: which sessions it hurts), and the sessions to open for a closer look.

Constraints hold per session: a setting meets them on a session when its peak stays within ``safety`` × the window,
at most ``max_calls_over_window`` calls exceed the window, and it makes at most ``max_compactions`` compactions,
scores at most ``max_information_loss`` and costs at most ``max_cost_ratio`` × that session's uncompacted baseline
(each when given). A setting is eligible when it meets them on at least ``coverage`` of the sessions it ran on
without error; the best eligible setting costs least in total over the corpus. A session is *hurt* by a setting when
the setting breaks a constraint there or costs more than sending everything uncompacted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any


@dataclass(frozen=True)
class Constraints:
    """Per-session limits a setting must meet (None: no limit), and the share of sessions it must meet them on."""

    safety: float = 1.0
    max_calls_over_window: int | None = None
    max_compactions: int | None = None
    max_information_loss: int | None = None
    max_cost_ratio: float | None = None
    coverage: float = 1.0

    def broken(self, row: Mapping[str, Any]) -> list[str]:
        """The constraints ``row`` breaks, each as a short phrase."""
        out = []
        window = row.get("context_window")
        if window and row["peak_tokens"] > window * self.safety:
            out.append(f"peak {row['peak_tokens']:,} > {self.safety:g} × window")
        over = row.get("calls_over_window", 0)
        if self.max_calls_over_window is not None and over > self.max_calls_over_window:
            out.append(f"{over} calls over the window")
        if self.max_compactions is not None and row["compactions"] > self.max_compactions:
            out.append(f"{row['compactions']} compactions")
        loss = row.get("information_loss")
        if self.max_information_loss is not None and loss is not None and loss > self.max_information_loss:
            out.append(f"information loss {loss}")
        if self.max_cost_ratio is not None and row["dollars"] > row["baseline_dollars"] * self.max_cost_ratio:
            out.append(f"${row['dollars']:.4f} > {self.max_cost_ratio:g} × baseline")
        return out


@dataclass
class SettingSummary:
    """One setting across the corpus."""

    setup: str
    base: str
    values: dict[str, Any]
    sessions: int
    errors: int
    dollars: float
    baseline_dollars: float
    meets: int  # sessions it meets the constraints on
    hurt: list[dict[str, Any]] = field(default_factory=list)  # rows of the sessions it hurts, worst first
    ratio_median: float = math.nan  # dollars / baseline per session
    ratio_p90: float = math.nan
    ratio_max: float = math.nan
    peak_max: int = 0
    compactions_median: float = math.nan
    information_loss: int = 0

    @property
    def coverage(self) -> float:
        return self.meets / self.sessions if self.sessions else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"setup": self.setup, "base": self.base, "values": self.values, "sessions": self.sessions,
                "errors": self.errors, "dollars": self.dollars, "baseline_dollars": self.baseline_dollars,
                "saved": self.baseline_dollars - self.dollars, "meets": self.meets, "coverage": self.coverage,
                "hurt": len(self.hurt), "ratio_median": self.ratio_median, "ratio_p90": self.ratio_p90,
                "ratio_max": self.ratio_max, "peak_max": self.peak_max,
                "compactions_median": self.compactions_median, "information_loss": self.information_loss}


@dataclass
class FleetAnswer:
    """The settings ranked (eligible ones first, cheapest first), the best one and the sessions to open."""

    constraints: Constraints
    settings: list[SettingSummary]
    best: SettingSummary | None
    open_next: list[dict[str, Any]]

    def lines(self) -> list[str]:
        """The answer in a few sentences."""
        c = self.constraints
        if self.best is None:
            share = f"{c.coverage:.0%} of the sessions"
            return [f"no setting meets the constraints on {share}; the closest: "
                    + ", ".join(f"{s.setup} ({s.coverage:.0%})" for s in self.settings[:3])]
        b = self.best
        out = [f"best: {b.setup} — ${b.dollars:,.4f} over {b.sessions} sessions (uncompacted ${b.baseline_dollars:,.4f}, "
               f"{_percent(b.baseline_dollars - b.dollars, b.baseline_dollars)} saved); meets the constraints on "
               f"{b.meets} of {b.sessions}",
               f"per session, $ ÷ uncompacted: median {b.ratio_median:.3f}, p90 {b.ratio_p90:.3f}, worst "
               f"{b.ratio_max:.3f}; highest peak {b.peak_max:,} tokens; median {b.compactions_median:g} compactions",
               f"it hurts {len(b.hurt)} session{'s' if len(b.hurt) != 1 else ''}"
               + (" (costlier than uncompacted, or a constraint broken)" if b.hurt else "")]
        for rank, s in enumerate(s for s in self.settings[1:4] if s.coverage >= c.coverage):
            out.append(f"#{rank + 2}: {s.setup} — ${s.dollars:,.4f}, hurts {len(s.hurt)}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"best": None if self.best is None else self.best.to_json(),
                "settings": [s.to_json() for s in self.settings], "open_next": self.open_next,
                "constraints": self.constraints.__dict__}


def _percent(part: float, whole: float) -> str:
    return f"{part / whole:.1%}" if whole else "0%"


def _quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def answer(rows: Iterable[Mapping[str, Any]], constraints: Constraints | None = None, *, order: Sequence[str] = (),
           open_count: int = 5) -> FleetAnswer:
    """Rank every setting of a fleet's ``rows`` under ``constraints`` (see the module docstring); ``order`` is the
    setups' own order (ties keep it)."""
    constraints = constraints or Constraints()
    by_setup: dict[str, list[Mapping[str, Any]]] = {}
    errors: dict[str, int] = {}
    for row in rows:
        name = row.get("setup")
        if name is None:
            continue
        if row.get("error") is not None:
            errors[name] = errors.get(name, 0) + 1
            continue
        by_setup.setdefault(name, []).append(row)
    for name in errors:
        by_setup.setdefault(name, [])
    settings = []
    for name, group in by_setup.items():
        hurt = []
        meets = 0
        ratios = []
        for row in group:
            broken = constraints.broken(row)
            meets += not broken
            costlier = row["dollars"] > row["baseline_dollars"]
            if broken or costlier:
                why = broken or [f"${row['dollars']:.4f} > uncompacted ${row['baseline_dollars']:.4f}"]
                hurt.append({**row, "why": "; ".join(why), "excess": row["dollars"] - row["baseline_dollars"]})
            if row["baseline_dollars"]:
                ratios.append(row["dollars"] / row["baseline_dollars"])
        hurt.sort(key=lambda r: (-len(constraints.broken(r)), -r["excess"]))
        first = group[0] if group else {}
        settings.append(SettingSummary(
            setup=name, base=str(first.get("base", name)), values=dict(first.get("values") or {}),
            sessions=len(group), errors=errors.get(name, 0), dollars=sum(r["dollars"] for r in group),
            baseline_dollars=sum(r["baseline_dollars"] for r in group), meets=meets, hurt=hurt,
            ratio_median=_quantile(ratios, 0.5), ratio_p90=_quantile(ratios, 0.9), ratio_max=max(ratios, default=math.nan),
            peak_max=max((r["peak_tokens"] for r in group), default=0),
            compactions_median=_quantile([r["compactions"] for r in group], 0.5),
            information_loss=sum(r.get("information_loss") or 0 for r in group)))
    position = {name: i for i, name in enumerate(order)}
    settings.sort(key=lambda s: (s.sessions == 0 or s.coverage < constraints.coverage, s.dollars,
                                 position.get(s.setup, len(position))))
    best = next((s for s in settings if s.sessions and s.coverage >= constraints.coverage), None)
    return FleetAnswer(constraints, settings, best, _open_next(best, by_setup, open_count))


def _open_next(best: SettingSummary | None, by_setup: Mapping[str, list[Mapping[str, Any]]], n: int
               ) -> list[dict[str, Any]]:
    """The sessions to look at under the best setting: those it hurts first, then those it saves least on."""
    if best is None:
        return []
    chosen: list[dict[str, Any]] = []
    seen: set[tuple[Any, Any]] = set()
    rest = sorted(by_setup[best.setup], key=lambda r: r["baseline_dollars"] - r["dollars"])
    for row in [*best.hurt, *rest]:
        key = (row["log"], row.get("conversation"))
        if key in seen:
            continue
        seen.add(key)
        chosen.append({"log": row["log"], "conversation": row.get("conversation"), "setup": best.setup,
                       "dollars": row["dollars"], "baseline_dollars": row["baseline_dollars"],
                       "peak_tokens": row["peak_tokens"], "compactions": row["compactions"],
                       "why": row.get("why") or "saves least under the best setting"})
        if len(chosen) >= n:
            break
    return chosen
