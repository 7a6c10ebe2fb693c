"""What a context is made of, call by call: the data behind the composition, lifecycle and floor charts.

Pure pandas shaping (no Streamlit), bounded for drawing: no frame returned here holds more than
:data:`~compaction.views.MAX_CHART_ROWS` rows. Every token count is the replay's own counter applied to one message
(``counter.count_one``), so per-kind sums approximate, but need not equal, what the setup's counter measures for the
whole context at once (separators and framing are not attributed to a kind).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .conversation import Message
from .history import FATES
from .replay import ContextItem, Replay
from .views import MAX_CHART_ROWS, Run, series_name

COMPOSITION_COLUMNS = ["step", "kind", "tokens"]
LIFECYCLE_COLUMNS = ["row", "row_end", "start", "end", "fate", "first_index", "last_index", "messages", "role",
                     "preview"]
FLOOR_COLUMNS = ["step", "series", "floor"]
USAGE_COLUMNS = ["step", "message_index", "tokens"]
LOG_EVENT_COLUMNS = ["step", "message_index", "label", "pre_tokens", "post_tokens"]
#: the most steps the composition chart samples on a long log
COMPOSITION_STEPS = 150
#: tool names shown by name in the composition chart; the others are summed as "tool result: other"
TOP_TOOLS = 8
PREVIEW_CHARS = 160
TOOL_SCHEMAS = "tool schemas"


# ------------------------------------------------------------------------------------------------ composition
def message_kind(item: ContextItem) -> str:
    """The composition kind of one sent message: system, user, assistant text, tool calls, ``tool result: <name>``
    or ``inserted <kind>`` (summary, digest, note…)."""
    if item.fate == "inserted":
        return f"inserted {item.inserted_kind or 'message'}"
    message = item.message
    if message.tool_result is not None:
        return f"tool result: {message.tool_result.tool_name or 'unnamed'}"
    if message.role == "assistant":
        return "tool calls" if message.tool_calls else "assistant text"
    return message.role if message.role in ("system", "user") else "other"


def sampled_steps(replay: Replay, max_steps: int = COMPOSITION_STEPS) -> list[int]:
    """Every step of a short replay; on a long one ``max_steps`` evenly spaced steps (first and last included)."""
    total = len(replay.steps)
    if total <= max_steps:
        return list(range(total))
    stride = (total - 1) / (max_steps - 1)
    return sorted({round(i * stride) for i in range(max_steps)})


def composition(replay: Replay, max_steps: int = COMPOSITION_STEPS, top_tools: int = TOP_TOOLS) -> pd.DataFrame:
    """Tokens sent per step and kind (long logs: sampled steps), tool schemas included when the log has them."""
    counter = replay.counter
    schemas = counter.count([], replay.conversation.tools) if replay.conversation.tools else 0
    rows: list[dict] = []
    for k in sampled_steps(replay, max_steps):
        totals: dict[str, int] = {}
        for item in replay.context_at(k):
            kind = message_kind(item)
            totals[kind] = totals.get(kind, 0) + counter.count_one(item.message)
        if schemas:
            totals[TOOL_SCHEMAS] = schemas
        rows.extend({"step": k, "kind": kind, "tokens": tokens} for kind, tokens in totals.items())
    frame = pd.DataFrame(rows, columns=COMPOSITION_COLUMNS)
    tools = frame[frame["kind"].str.startswith("tool result: ")]
    keep = set(tools.groupby("kind")["tokens"].sum().nlargest(top_tools).index)
    other = frame["kind"].str.startswith("tool result: ") & ~frame["kind"].isin(keep)
    frame.loc[other, "kind"] = "tool result: other"
    return frame.groupby(["step", "kind"], as_index=False, sort=False)["tokens"].sum()[COMPOSITION_COLUMNS]


def kind_order(kinds: Sequence[str]) -> list[str]:
    """Kinds in stacking order: what is always there at the bottom, tool results and inserted texts on top."""
    fixed = [TOOL_SCHEMAS, "system", "user", "assistant text", "tool calls"]
    present = set(kinds)
    tools = sorted(k for k in present if k.startswith("tool result: ") and k != "tool result: other")
    tail = ["tool result: other"] if "tool result: other" in present else []
    inserted = sorted(k for k in present if k.startswith("inserted"))
    rest = sorted(present - set(fixed) - set(tools) - set(tail) - set(inserted))
    return [k for k in fixed if k in present] + tools + tail + inserted + rest


# ------------------------------------------------------------------------------------------------ lifecycle
def _segments(replay: Replay) -> list[tuple[int, int, int]]:
    """``(first step, end step, a step)`` for each run of steps that share one snapshot (fates change only there)."""
    out: list[tuple[int, int, int]] = []
    for s in replay.steps:
        if out and replay.steps[out[-1][0]].snapshot == s.snapshot:
            first, _, probe = out[-1]
            out[-1] = (first, s.step + 1, probe)
        else:
            out.append((s.step, s.step + 1, s.step))
    return out


def _fate_rows(replay: Replay) -> tuple[list[int], list[list[tuple[int, int, str]]]]:
    """The original messages that reach a call, and per message its runs of equal fate ``(start, end, fate)``."""
    calls = [s.message_index for s in replay.steps]
    if not calls:
        return [], []
    indices = [i for i in range(calls[-1]) if i not in replay.skipped]
    appear = [bisect.bisect_right(calls, i) for i in indices]  # the first step whose context holds message i
    runs: list[list[tuple[int, int, str]]] = [[] for _ in indices]
    for first, end, probe in _segments(replay):
        fates = replay.fates_at(probe)
        for pos, index in enumerate(indices):
            start = max(first, appear[pos])
            if start >= end:
                continue
            fate = fates.get(index, "kept")
            own = runs[pos]
            if own and own[-1][2] == fate and own[-1][1] == start:
                own[-1] = (own[-1][0], end, fate)
            else:
                own.append((start, end, fate))
    return indices, runs


def lifecycle(replay: Replay, max_rows: int = MAX_CHART_ROWS) -> pd.DataFrame:
    """Rectangles of the message-lifecycle chart: one row per original message (``row`` = its position), x from the
    first to the last LLM call of a run of equal fate. Above ``max_rows`` rectangles, neighbouring messages are
    binned into one row (each bin and call taking the commonest fate, ties to the more drastic one) until the chart
    fits."""
    indices, runs = _fate_rows(replay)
    messages = replay.conversation.messages
    if sum(len(r) for r in runs) <= max_rows:
        rows = [
            _rect(pos, pos + 1, start, end, fate, [index], messages)
            for pos, (index, own) in enumerate(zip(indices, runs, strict=True))
            for start, end, fate in own
        ]
        return pd.DataFrame(rows, columns=LIFECYCLE_COLUMNS)
    grid = _fate_grid(runs, len(replay.steps))
    width = 2
    binned = _bin_runs(grid, width)
    while sum(len(r) for r in binned) > max_rows and width < len(indices):
        width *= 2
        binned = _bin_runs(grid, width)
    rows = []
    for b, merged in enumerate(binned):
        members = list(indices[b * width:(b + 1) * width])
        rows.extend(_rect(b * width, b * width + len(members), start, end, fate, members, messages)
                    for start, end, fate in merged)
    return pd.DataFrame(rows, columns=LIFECYCLE_COLUMNS)


def _rect(row: int, row_end: int, start: int, end: int, fate: str, members: Sequence[int],
          messages: Sequence[Message]) -> dict:
    first = messages[members[0]]
    preview = first.preview(PREVIEW_CHARS)
    if len(members) > 1:
        preview = f"{len(members)} messages, the first: {preview}"
    return {"row": row, "row_end": row_end, "start": start, "end": end, "fate": fate, "first_index": members[0],
            "last_index": members[-1], "messages": len(members), "role": first.role, "preview": preview}


def _fate_grid(runs: Sequence[list[tuple[int, int, str]]], steps: int) -> np.ndarray:
    """A message × step matrix of fate codes (positions in :data:`FATES`; -1 where the message is not yet there)."""
    codes = {fate: i for i, fate in enumerate(FATES)}
    grid = np.full((len(runs), steps), -1, dtype=np.int8)
    for pos, own in enumerate(runs):
        for start, end, fate in own:
            grid[pos, start:end] = codes[fate]
    return grid


def _bin_runs(grid: np.ndarray, width: int) -> list[list[tuple[int, int, str]]]:
    """Per bin of ``width`` messages, runs of the commonest fate per call, ties going to the more drastic fate
    (calls where no member is there yet are left out)."""
    bins = -(-grid.shape[0] // width)
    padded = np.full((bins * width, grid.shape[1]), -1, dtype=np.int8)
    padded[: grid.shape[0]] = grid
    stacked = padded.reshape(bins, width, grid.shape[1])
    counts = np.stack([(stacked == code).sum(axis=1) for code in range(len(FATES))], axis=-1)
    # ties go to the more drastic fate (later in FATES): a bin half pruned reads as pruned
    drastic_first = counts[..., ::-1].argmax(axis=-1)
    commonest = np.where(counts.sum(axis=-1) > 0, len(FATES) - 1 - drastic_first, -1)
    out = []
    for row in commonest:
        merged: list[tuple[int, int, str]] = []
        changes = np.flatnonzero(np.diff(row)) + 1
        bounds = [0, *changes.tolist(), len(row)]
        for start, end in zip(bounds, bounds[1:], strict=False):
            if row[start] >= 0:
                merged.append((start, end, FATES[row[start]]))
        out.append(merged)
    return out


# ------------------------------------------------------------------------------------------------ tokens chart extras
def floor_series(runs: Sequence[Run]) -> pd.DataFrame:
    """The incompressible floor per step and setup, approximated as the tokens of the system messages and tool
    schemas plus the messages of the last step (the previous LLM output and everything logged after it), which
    every strategy keeps. Counted per message with each setup's counter."""
    rows: list[dict] = []
    for label, rep in runs:
        counter = rep.counter
        messages = rep.conversation.messages
        schemas = counter.count([], rep.conversation.tools) if rep.conversation.tools else 0
        system_total, next_index, previous = 0, 0, 0
        name = series_name(label, rep)
        for s in rep.steps:
            for i in range(next_index, s.message_index):
                if i not in rep.skipped and messages[i].role == "system":
                    system_total += counter.count_one(messages[i])
            next_index = s.message_index
            last_step = sum(counter.count_one(messages[i]) for i in range(previous, s.message_index)
                            if i not in rep.skipped and messages[i].role != "system")
            rows.append({"step": s.step, "series": name, "floor": system_total + schemas + last_step})
            previous = s.message_index
    return pd.DataFrame(rows, columns=FLOOR_COLUMNS)


def usage_series(replay: Replay) -> pd.DataFrame:
    """Provider-reported prompt tokens per LLM call (input + cache reads + cache writes), where the log has them."""
    usage = replay.conversation.usage
    rows = [{"step": s.step, "message_index": s.message_index, "tokens": usage[s.message_index].prompt_tokens}
            for s in replay.steps if s.message_index in usage and usage[s.message_index].prompt_tokens]
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


def log_compactions(replay: Replay) -> pd.DataFrame:
    """The log's own compactions, placed at the first LLM call after each."""
    calls = [s.message_index for s in replay.steps]
    rows = []
    for event in replay.conversation.events:
        step = bisect.bisect_left(calls, event.message_index)
        if step >= len(calls):
            continue
        label = f"the agent compacted ({event.trigger})" if event.trigger else "the agent compacted"
        rows.append({"step": step, "message_index": event.message_index, "label": label,
                     "pre_tokens": event.pre_tokens, "post_tokens": event.post_tokens})
    return pd.DataFrame(rows, columns=LOG_EVENT_COLUMNS)
