"""Pure data shaping for charts and tables: replays in, pandas DataFrames and aligned rows out.

Nothing here imports Streamlit, so the same shapes feed the app, notebooks and reports. A *run* is a labelled
replay (``("A", replay)``); every function takes runs in display order, and all runs must come from the same
conversation (their steps line up: step ``k`` is the same LLM call in each).

Long logs are shaped to stay small enough to draw: :func:`downsample_steps` keeps the lowest and highest point of
each bucket of steps per series, so sawtooth drops after a compaction survive aggregation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pandas as pd

from .conversation import Message
from .replay import ContextItem
from .replay import Replay

#: Series name of the uncompacted log in the tokens chart.
BASELINE = "Uncompacted log"
#: The most rows one chart may embed (Altair's own inline-data limit).
MAX_CHART_ROWS = 5000

Run = tuple[str, Replay]

SERIES_COLUMNS = ["step", "message_index", "series", "tokens"]
EVENT_COLUMNS = ["step", "series", "event", "tokens_before", "tokens_sent", "note", "count"]
LOGGED_COLUMNS = ["step", "series", "origin", "kind", "message_index", "tokens_before", "tokens_sent", "agent_tokens",
                  "agent_tokens_after", "note"]
RULE_COLUMNS = ["tokens", "kind", "label"]
STRIP_COLUMNS = ["setup", "start", "end", "fate", "messages", "first_index", "last_index"]


def series_name(label: str, replay: Replay) -> str:
    """The legend name of one setup: its label and its strategy's title."""
    return f"{label} · {replay.strategy.title}"


# ------------------------------------------------------------------------------------------------ tokens per step
def step_series(runs: Sequence[Run]) -> pd.DataFrame:
    """Tokens sent per LLM call: one row per step and series (the uncompacted log first, then each setup).

    The uncompacted series is the first run's own baseline (its counter, its framework's way of counting).
    """
    if not runs:
        return pd.DataFrame(columns=SERIES_COLUMNS)
    first = runs[0][1]
    frames = [
        pd.DataFrame(
            {
                "step": [s.step for s in first.steps],
                "message_index": [s.message_index for s in first.steps],
                "series": BASELINE,
                "tokens": [s.tokens_uncompacted for s in first.steps],
            }
        )
    ]
    for label, rep in runs:
        frames.append(
            pd.DataFrame(
                {
                    "step": [s.step for s in rep.steps],
                    "message_index": [s.message_index for s in rep.steps],
                    "series": series_name(label, rep),
                    "tokens": [s.tokens_sent for s in rep.steps],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[SERIES_COLUMNS]


def compaction_events(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per step where a setup's trigger fired: ``event`` is ``compacted`` or ``declined``."""
    rows = [
        {
            "step": s.step,
            "series": series_name(label, rep),
            "event": "compacted" if s.compacted else "declined",
            "tokens_before": s.tokens_before,
            "tokens_sent": s.tokens_sent,
            "note": s.note,
            "count": 1,
        }
        for label, rep in runs
        for s in rep.steps
        if s.triggered
    ]
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def logged_and_replayed_compactions(runs: Sequence[Run]) -> pd.DataFrame:
    """Per setup, the log's own compactions next to the replay's ("simulated vs actual" markers).

    ``origin`` is ``log`` for a compaction the real agent recorded (Claude Code ``compact_boundary`` /
    ``microcompact_boundary``, Roo Code's condense, OpenCode's prune…), at ``step``, the call right after it;
    ``agent_tokens`` is the agent's own count before it (``preTokens``) and ``agent_tokens_after`` after it
    (``postTokens``, or ``preTokens`` less ``tokensSaved``), when the log gives them. ``origin`` is ``replay`` for a
    call the setup compacted before. On both, ``tokens_before`` / ``tokens_sent`` are the setup's own measures at that
    call (the tokens chart's scale), so a marker sits on the setup's line. ``kind`` is the log's event kind; a
    replayed compaction whose note names a microcompaction and no auto-compaction is ``microcompact``, any other
    ``compaction``. One row per logged event and per compacted call, per setup."""
    rows = []
    for label, rep in runs:
        series = series_name(label, rep)
        for event in rep.conversation.events:
            step = next((s for s in rep.steps if s.message_index >= event.message_index), None)
            if step is None:
                continue
            after = event.post_tokens if event.post_tokens is not None else (
                event.pre_tokens - event.tokens_saved if event.pre_tokens is not None and event.tokens_saved is not None
                else None)
            rows.append({"step": step.step, "series": series, "origin": "log", "kind": event.kind,
                         "message_index": event.message_index, "tokens_before": step.tokens_before,
                         "tokens_sent": step.tokens_sent, "agent_tokens": event.pre_tokens,
                         "agent_tokens_after": after, "note": event.trigger or ""})
        for s in rep.steps:
            if s.compacted:
                kind = "microcompact" if "microcompact" in s.note and "auto-compact" not in s.note else "compaction"
                rows.append({"step": s.step, "series": series, "origin": "replay", "kind": kind,
                             "message_index": s.message_index, "tokens_before": s.tokens_before,
                             "tokens_sent": s.tokens_sent, "agent_tokens": None, "agent_tokens_after": None,
                             "note": s.note})
    frame = pd.DataFrame(rows, columns=LOGGED_COLUMNS)
    return frame.astype({"agent_tokens": "Int64", "agent_tokens_after": "Int64"})


def threshold_rules(runs: Sequence[Run], context_window: int | None = None) -> pd.DataFrame:
    """Horizontal lines to draw: the context window (``context_window``, or each setup's own when None) and each
    setup's trigger and target.

    Lines at the same height and of the same kind are merged into one, labelled with every setup that uses it.
    """
    merged: dict[tuple[str, float], list[str]] = {}
    if context_window:
        merged[("window", float(context_window))] = []
    for label, rep in runs:
        kinds = {"trigger": rep.lines.get("trigger"), "target": rep.lines.get("target")}
        if not context_window:
            merged.setdefault(("window", float(rep.context_window)), []).append(label)
        for kind, value in kinds.items():
            if value is not None:
                merged.setdefault((kind, float(value)), []).append(label)
    rows = []
    for (kind, value), labels in merged.items():
        owners = f" ({', '.join(labels)})" if labels and len(labels) < len(runs) else ""
        name = "context window" if kind == "window" else kind
        rows.append({"tokens": value, "kind": kind, "label": f"{name}{owners} {value:,.0f}"})
    return pd.DataFrame(rows, columns=RULE_COLUMNS)


def downsample_steps(frame: pd.DataFrame, max_rows: int, by: str = "series", value: str = "tokens") -> pd.DataFrame:
    """At most ``max_rows`` rows: per ``by`` group, steps are bucketed and each bucket keeps its lowest and highest
    row (real steps, so a click on a kept point still selects a real LLM call). Small frames are returned as is."""
    if len(frame) <= max_rows or frame.empty:
        return frame
    groups = max(frame[by].nunique(), 1)
    steps = int(frame["step"].max()) + 1
    buckets_per_group = max(max_rows // (2 * groups), 1)
    width = math.ceil(steps / buckets_per_group)
    bucket = frame["step"] // width
    keys = [frame[by], bucket]
    lows = frame.groupby(keys, sort=False)[value].idxmin()
    highs = frame.groupby(keys, sort=False)[value].idxmax()
    keep = sorted(set(lows.tolist()) | set(highs.tolist()))
    return frame.loc[keep].sort_values([by, "step"]).reset_index(drop=True)


def thin_events(events: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    """At most ``max_rows`` event rows: when there are more, events of the same series and kind are merged per
    bucket of steps into the first one, with ``count`` saying how many it stands for."""
    if len(events) <= max_rows or events.empty:
        return events
    groups = max(events.groupby(["series", "event"]).ngroups, 1)
    buckets_per_group = max(max_rows // groups, 1)
    width = math.ceil((int(events["step"].max()) + 1) / buckets_per_group)
    keyed = events.assign(_bucket=events["step"] // width)
    grouped = keyed.groupby(["series", "event", "_bucket"], sort=False)
    firsts = grouped.head(1).copy()
    firsts["count"] = grouped["count"].transform("sum").loc[firsts.index]
    return firsts.drop(columns="_bucket").sort_values(["series", "step"]).reset_index(drop=True)


def default_step(runs: Sequence[Run]) -> int:
    """The step to show first: the first compaction of any setup, else the last LLM call."""
    compacted = [s.step for _, rep in runs for s in rep.steps if s.compacted]
    if compacted:
        return min(compacted)
    return max((len(rep.steps) - 1 for _, rep in runs), default=0)


def neighbour_event(runs: Sequence[Run], step: int, forward: bool) -> int | None:
    """The next (or previous) step after (before) ``step`` where any setup's trigger fired."""
    steps = sorted({s.step for _, rep in runs for s in rep.steps if s.triggered})
    if forward:
        return next((s for s in steps if s > step), None)
    return next((s for s in reversed(steps) if s < step), None)


# ------------------------------------------------------------------------------------------------ summary table
def summary_table(runs: Sequence[Run]) -> pd.DataFrame:
    """One row for the uncompacted log and one per setup: calls, compactions, declined triggers, peak and total
    tokens sent, and tokens saved against the setup's own uncompacted count (absolute and percent)."""
    columns = ["Setup", "Strategy", "LLM calls", "Compactions", "Declined triggers", "Peak tokens sent",
               "Total tokens sent", "Tokens saved", "Saved %"]
    if not runs:
        return pd.DataFrame(columns=columns)
    first = runs[0][1]
    baseline_steps = [s.tokens_uncompacted for s in first.steps]
    rows = [
        {
            "Setup": "—",
            "Strategy": BASELINE,
            "LLM calls": len(baseline_steps),
            "Compactions": 0,
            "Declined triggers": 0,
            "Peak tokens sent": max(baseline_steps, default=0),
            "Total tokens sent": sum(baseline_steps),
            "Tokens saved": 0,
            "Saved %": 0.0,
        }
    ]
    for label, rep in runs:
        s = rep.summary()
        total = s["total_tokens_uncompacted"]
        rows.append(
            {
                "Setup": label,
                "Strategy": rep.strategy.title,
                "LLM calls": s["llm_calls"],
                "Compactions": s["compactions"],
                "Declined triggers": s["declined_triggers"],
                "Peak tokens sent": s["peak_tokens_sent"],
                "Total tokens sent": s["total_tokens_sent"],
                "Tokens saved": s["tokens_saved"],
                "Saved %": round(100.0 * s["tokens_saved"] / total, 1) if total else 0.0,
            }
        )
    return pd.DataFrame(rows, columns=columns)


LOSS_COLUMNS = ["Information loss score", "Removed messages", "Re-fetches", "First user request survives",
                "Latest user request survives"]


def metrics_table(runs: Sequence[Run], losses: Mapping[str, Mapping[str, int | bool]] | None = None) -> pd.DataFrame:
    """:func:`summary_table` plus, per setup, its policy, counter and information-loss signals (``losses`` maps a
    label to :meth:`InformationLoss.summary() <compaction.analysis.information.InformationLoss.summary>`)."""
    table = summary_table(runs)
    by_label = {label: rep for label, rep in runs}
    extra: dict[str, list[Any]] = {"Context window": [], "Compact at": [], "Compact to": [], "Counter": []}
    extra.update({c: [] for c in LOSS_COLUMNS})
    keys = ["information_loss_score", "removed_messages", "refetches", "first_user_request_survives",
            "latest_user_request_survives"]
    for label in table["Setup"]:
        rep = by_label.get(label)
        extra["Context window"].append(rep.context_window if rep else None)
        extra["Compact at"].append(rep.compact_at if rep else None)
        extra["Compact to"].append(rep.compact_to if rep else None)
        extra["Counter"].append(rep.counter.spec if rep else None)
        loss = (losses or {}).get(label, {})
        for column, key in zip(LOSS_COLUMNS, keys, strict=True):
            extra[column].append(loss.get(key) if rep else None)
    return table.assign(**extra)


# ------------------------------------------------------------------------------------------- context side by side
def message_text(message: Message) -> str:
    """The whole message as readable plain text: reasoning, text, tool calls (name and JSON arguments), or the
    tool result with its tool's name; images and files as short placeholders."""
    parts: list[str] = []
    if message.reasoning:
        parts.append("[reasoning]\n" + "\n".join(message.reasoning))
    result = message.tool_result
    if result is not None:
        parts.append(f"[{result.tool_name} result{' (error)' if result.error else ''}]\n{result.text}")
    if message.texts:
        parts.append(message.text)
    parts.extend(f"→ {call.name}({call.arguments_json()})" for call in message.tool_calls)
    parts.extend(f"[image{': ' + image.source if image.source else ''}]" for image in message.images)
    parts.extend(f"[file: {file.filename or 'unnamed'}]" for file in message.files)
    return "\n\n".join(parts) if parts else "<no content>"


@dataclass(frozen=True)
class AlignedRow:
    """One row of the side-by-side view: the same original message (or an inserted one) in each setup.

    ``key`` orders rows: ``(original index, 0, 0)`` for an original message, ``(index of the original just before
    it, 1, n)`` for the n-th inserted message at that place. ``cells`` maps each setup label to its item, or to
    ``None`` when that setup has nothing at this place.
    """

    key: tuple[int, int, int]
    index: int | None
    cells: Mapping[str, ContextItem | None] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """True when any setup's message here is not sent as it was logged."""
        return any(item is None or item.fate != "kept" for item in self.cells.values())


def _keyed_items(items: Sequence[ContextItem]) -> list[tuple[tuple[int, int, int], ContextItem]]:
    keyed = []
    anchor, seq = -1, 0
    for item in items:
        if item.index is not None:
            anchor, seq = item.index, 0
            keyed.append(((item.index, 0, 0), item))
        else:
            keyed.append(((anchor, 1, seq), item))
            seq += 1
    return keyed


def aligned_context(runs: Sequence[Run], step: int) -> list[AlignedRow]:
    """What each setup sends at ``step``, aligned by original message index (removed originals included, so a
    collapsed or dropped message sits on the same row as its kept counterpart in the other setup)."""
    labels = [label for label, _ in runs]
    by_key: dict[tuple[int, int, int], dict[str, ContextItem]] = {}
    for label, rep in runs:
        for key, item in _keyed_items(rep.context_at(step, include_removed=True)):
            by_key.setdefault(key, {})[label] = item
    rows = []
    for key in sorted(by_key):
        cells = by_key[key]
        rows.append(AlignedRow(key, key[0] if key[1] == 0 else None, {label: cells.get(label) for label in labels}))
    return rows


def fate_counts(rows: Sequence[AlignedRow], label: str) -> dict[str, int]:
    """How many messages of each fate one setup has in the aligned rows."""
    counts: dict[str, int] = {}
    for row in rows:
        item = row.cells.get(label)
        if item is not None:
            counts[item.fate] = counts.get(item.fate, 0) + 1
    return counts


def context_strip(rows: Sequence[AlignedRow], labels: Sequence[str], max_rows: int = MAX_CHART_ROWS) -> pd.DataFrame:
    """Runs of equal fate per setup along the aligned rows, for a one-line-per-setup map of the context.

    Consecutive rows with the same fate become one segment ``[start, end)``. If that is still more than
    ``max_rows`` segments, rows are binned and each bin shows its most frequent fate.
    """
    per_setup = {label: [(pos, row) for pos, row in enumerate(rows) if row.cells.get(label) is not None]
                 for label in labels}
    segments = [seg for label in labels for seg in _runs(label, per_setup[label], width=1)]
    if len(segments) > max_rows:
        width = math.ceil(len(rows) * len(labels) / max(max_rows, 1))
        segments = [seg for label in labels for seg in _runs(label, per_setup[label], width=width)]
    return pd.DataFrame(segments, columns=STRIP_COLUMNS)


def _cell(row: AlignedRow, label: str) -> ContextItem:
    """The item of setup ``label`` in a row given to :func:`_runs` (those rows all hold one)."""
    item = row.cells[label]
    assert item is not None  # context_strip passes only the rows the setup has
    return item


def _runs(label: str, positioned: Sequence[tuple[int, AlignedRow]], width: int) -> list[dict[str, Any]]:
    """Segments of equal fate; with ``width > 1`` positions are first binned, each bin taking its commonest fate."""
    cells: list[tuple[int, int, str, int | None, int]] = []  # (start, end, fate, original index, messages)
    if width <= 1:
        cells = [(pos, pos + 1, _cell(row, label).fate, _cell(row, label).index, 1) for pos, row in positioned]
    else:
        bins: dict[int, list[tuple[int, AlignedRow]]] = {}
        for pos, row in positioned:
            bins.setdefault(pos // width, []).append((pos, row))
        for b, members in sorted(bins.items()):
            fates = [_cell(row, label).fate for _, row in members]
            commonest = max(set(fates), key=fates.count)
            index = next((_cell(row, label).index for _, row in members if _cell(row, label).index is not None), None)
            cells.append((b * width, (b + 1) * width, commonest, index, len(members)))
    out: list[dict[str, Any]] = []
    for start, end, fate, index, count in cells:
        last = out[-1] if out else None
        if last is not None and last["fate"] == fate and last["end"] == start:
            last["end"] = end
            last["messages"] += count
            if index is not None:
                last["last_index"] = index
                if last["first_index"] is None:
                    last["first_index"] = index
            continue
        out.append({"setup": label, "start": start, "end": end, "fate": fate, "messages": count,
                    "first_index": index, "last_index": index})
    return out


# ------------------------------------------------------------------------------------------------ diff of two setups
def sent_text(item: ContextItem | None) -> str:
    """What a setup sends for one aligned row, as plain text ("" when it sends nothing there)."""
    if item is None or item.fate in ("collapsed", "dropped"):
        return ""
    return message_text(item.message)


def differing_rows(rows: Sequence[AlignedRow], a: str, b: str) -> list[AlignedRow]:
    """The aligned rows where setups ``a`` and ``b`` differ: in fate, or in the text they send."""
    out = []
    for row in rows:
        left, right = row.cells.get(a), row.cells.get(b)
        fate_a = left.fate if left is not None else None
        fate_b = right.fate if right is not None else None
        if fate_a != fate_b or sent_text(left) != sent_text(right):
            out.append(row)
    return out


def text_diff(row: AlignedRow, a: str, b: str, context: int = 3) -> str:
    """A unified diff of what ``a`` and ``b`` send on one row (empty when they send the same text)."""
    import difflib

    left = sent_text(row.cells.get(a)).splitlines()
    right = sent_text(row.cells.get(b)).splitlines()
    return "\n".join(difflib.unified_diff(left, right, fromfile=f"setup {a}", tofile=f"setup {b}", n=context,
                                          lineterm=""))
