"""Pure data shaping for the cost, calibration, information-loss, sweep and fleet views: results in, DataFrames out.

Nothing here imports Streamlit; :mod:`compaction.cost_charts` draws these frames and notebooks can use both. Every
frame meant for a chart stays within :data:`~compaction.views.MAX_CHART_ROWS` rows: long logs are summed per bucket
of consecutive steps (a stacked bar of a bucket is the sum of its calls, so totals stay exact).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..conversation import Conversation
from ..views import MAX_CHART_ROWS
from .calibration import Calibration
from .costs import CostComparison
from .costs import CostReport
from .information import InformationLoss
from .sweep import SweepResult

#: the parts of a call's bill, in stacking order
COST_KINDS = ("cache read", "cache write", "uncached", "output", "summarizer")
COST_COLUMNS = ["setup", "step", "step_end", "kind", "tokens", "dollars"]
CALIBRATION_COLUMNS = ["message_index", "series", "tokens"]
LOSS_COLUMNS = ["message", "role", "fate", "removed_at_step", "needed", "evidence"]
#: the per-call report column of each billed part (the summarizer part is built from two columns)
_KIND_COLUMNS = {"cache read": "cache_read", "cache write": "cache_write", "uncached": "uncached", "output": "output"}


def call_parts(report: CostReport) -> pd.DataFrame:
    """One row per call and bill part: ``step``, ``kind`` (see :data:`COST_KINDS`), ``tokens`` and ``dollars``.

    Summarizer calls made at a step are their own part (their input and output tokens, priced uncached)."""
    prices = report.prices
    per_million = prices.input_per_mtok / 1e6
    rate = {
        "cache read": per_million * prices.cache_read_multiplier,
        "cache write": per_million * prices.write_multiplier,
        "uncached": per_million,
        "output": prices.output_per_mtok / 1e6,
    }
    rows = []
    for call in report.calls:
        for kind, column in _KIND_COLUMNS.items():
            tokens = getattr(call, column)
            rows.append((call.step, kind, tokens, tokens * rate[kind]))
        rows.append((call.step, "summarizer", call.summarizer_input + call.summarizer_output, call.summarizer_dollars))
    return pd.DataFrame(rows, columns=["step", "kind", "tokens", "dollars"])


def cost_parts(reports: Sequence[tuple[str, CostReport]], max_rows: int = MAX_CHART_ROWS) -> pd.DataFrame:
    """Bill parts per step for several setups (columns :data:`COST_COLUMNS`), summed over buckets of consecutive
    steps when needed so the frame has at most ``max_rows`` rows (``step``..``step_end`` is the bucket)."""
    frames = [call_parts(report).assign(setup=label) for label, report in reports]
    if not frames:
        return pd.DataFrame(columns=COST_COLUMNS)
    parts = pd.concat(frames, ignore_index=True)
    if parts.empty:
        return pd.DataFrame(columns=COST_COLUMNS)
    steps = int(parts["step"].max()) + 1
    buckets = max(max_rows // (len(reports) * len(COST_KINDS)), 1)
    width = max(math.ceil(steps / buckets), 1)
    parts["bucket"] = parts["step"] // width
    order = {label: i for i, (label, _) in enumerate(reports)}
    summed = (parts.groupby(["setup", "bucket", "kind"], sort=False)
              .agg(step=("step", "min"), step_end=("step", "max"), tokens=("tokens", "sum"), dollars=("dollars", "sum"))
              .reset_index())
    summed["_order"] = summed["setup"].map(order)
    summed["_kind"] = summed["kind"].map({k: i for i, k in enumerate(COST_KINDS)})
    return summed.sort_values(["_order", "step", "_kind"])[COST_COLUMNS].reset_index(drop=True)


def cost_summary(comparisons: Sequence[tuple[str, CostComparison]]) -> pd.DataFrame:
    """One row per setup: tokens shed, $ (setup, baseline, saved), the cache split and the two verdicts."""
    rows = []
    for label, comparison in comparisons:
        summary = comparison.summary()
        rows.append({
            "setup": label,
            "tokens_shed": summary["tokens_shed"],
            "dollars": summary["dollars"],
            "baseline_dollars": summary["baseline_dollars"],
            "dollars_saved": summary["dollars_saved"],
            "cache_read": summary["cache_read"],
            "cache_write": summary["cache_write"],
            "uncached": summary["uncached"],
            "summarizer_dollars": summary["summarizer_dollars"],
            "fewer_tokens": summary["fewer_tokens"],
            "net_cheaper": summary["net_cheaper"],
        })
    return pd.DataFrame(rows)


def calibration_series(calibration: Calibration) -> pd.DataFrame:
    """Reported vs simulated prompt tokens per compared call, long form (columns :data:`CALIBRATION_COLUMNS`).

    Series: ``reported`` (the provider's usage), ``estimated`` (our counter as configured) and, when the fit
    succeeded, ``fitted`` (the counter at the fitted chars/token plus the hidden overhead)."""
    series = {"reported": "reported_prompt", "estimated": "estimated_prompt", "fitted": "fitted_prompt"}
    rows = [(row["message_index"], name, row[column]) for row in calibration.rows
            for name, column in series.items() if column in row]
    frame = pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)
    if len(frame) > MAX_CHART_ROWS:
        keep = sorted(frame["message_index"].unique())[:: math.ceil(len(frame) / MAX_CHART_ROWS)]
        frame = frame[frame["message_index"].isin(keep)].reset_index(drop=True)
    return frame


def _message_label(conversation: Conversation, index: int) -> tuple[str, str]:
    message = conversation.messages[index]
    if message.tool_result is not None:
        return f"#{index} tool result · {message.tool_result.origin.name}", message.role
    if message.tool_calls:
        return f"#{index} {message.role} · calls {', '.join(c.name for c in message.tool_calls)}", message.role
    return f"#{index} {message.role}", message.role


def loss_table(conversation: Conversation, loss: InformationLoss) -> pd.DataFrame:
    """One row per removed message: which message, its fate, the step it was first removed at, and the evidence
    that it was needed later (empty when none was found). Needed messages come first."""
    rows = []
    for evidence in loss.evidence:
        label, role = _message_label(conversation, evidence.index)
        rows.append({"message": label, "role": role, "fate": evidence.fate, "removed_at_step": evidence.removed_at_step,
                     "needed": evidence.needed, "evidence": evidence.describe()})
    frame = pd.DataFrame(rows, columns=LOSS_COLUMNS)
    return frame.sort_values(["needed", "removed_at_step"], ascending=[False, True], kind="stable").reset_index(drop=True)


def sweep_cells(result: SweepResult, metrics: Sequence[str]) -> pd.DataFrame:
    """One row per configuration: the axis values, each of ``metrics`` (NaN where the configuration is invalid)
    and ``error`` (empty when valid)."""
    axes = list(result.axes)
    rows = []
    for row in result.rows:
        cell: dict[str, Any] = {name: row[name] for name in axes}
        for metric in metrics:
            cell[metric] = row.get(metric, math.nan) if "error" not in row else math.nan
        cell["error"] = row.get("error", "")
        rows.append(cell)
    return pd.DataFrame(rows, columns=[*axes, *metrics, "error"])


def cell_values(result: SweepResult, selection: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration of ``result`` whose axis values equal ``selection`` (as a chart returns them: floats may
    come back as ``0.7000000001``), or None when no valid row matches."""
    axes = list(result.axes)
    if any(name not in selection for name in axes):
        return None
    for row in result.rows:
        if "error" in row:
            continue
        if all(_same_value(row[name], selection[name]) for name in axes):
            return {name: row[name] for name in axes}
    return None


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    same: bool = a == b
    return same


def fleet_display(rows: Sequence[Mapping[str, Any]], names: Mapping[str, str]) -> pd.DataFrame:
    """Fleet rows with each log path replaced by its display name (an uploaded file's own name)."""
    frame = pd.DataFrame(list(rows))
    if "log" in frame:
        frame["log"] = frame["log"].map(lambda path: names.get(path, path))
    return frame
