"""What a context is made of, call by call: the data behind the composition, lifecycle and floor charts.

Pure pandas shaping (no Streamlit), bounded for drawing: no frame returned here holds more than
:data:`~compaction.views.MAX_CHART_ROWS` rows. Every token count is the replay's own counter applied to one message
(``counter.count_one``), so per-kind sums approximate, but need not equal, what the setup's counter measures for the
whole context at once (separators and framing are not attributed to a kind).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any
from typing import cast

import numpy as np
import pandas as pd

from .conversation import Conversation
from .conversation import Message
from .history import FATES
from .history import Entry
from .history import Fate
from .replay import ContextItem
from .replay import Replay
from .views import MAX_CHART_ROWS
from .views import Run
from .views import series_name

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
    return _message_kind(item.message)


def entry_kind(entry: Entry) -> str:
    """:func:`message_kind` of a stored entry as it is sent."""
    if entry.inserted is not None:
        return f"inserted {entry.inserted}"
    return _message_kind(entry.message)


def _message_kind(message: Message) -> str:
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
    """Tokens sent per step and kind (long logs: sampled steps), tool schemas included when the log has them.

    Follows the replay's changes: a running total per kind, updated by what each call appends and each compaction
    removes or adds."""
    counter = replay.counter
    schemas = counter.count([], replay.conversation.tools) if replay.conversation.tools else 0
    wanted = set(sampled_steps(replay, max_steps))
    totals: dict[str, int] = {}
    present: dict[str, int] = {}  # kind -> messages of that kind sent now (a kind with none is left out)

    def account(entry: Entry, sign: int) -> None:
        kind = entry_kind(entry)
        totals[kind] = totals.get(kind, 0) + sign * counter.count_one(entry.message)
        present[kind] = present.get(kind, 0) + sign

    rows: list[dict[str, Any]] = []
    for delta in replay.deltas():
        for e in delta.appended:
            account(e, 1)
        if delta.change is not None:
            for e in delta.change.removed:
                account(e, -1)
            for e in delta.change.added:
                account(e, 1)
        if delta.step.step in wanted:
            k = delta.step.step
            rows.extend({"step": k, "kind": kind, "tokens": tokens} for kind, tokens in totals.items() if present[kind])
            if schemas:
                rows.append({"step": k, "kind": TOOL_SCHEMAS, "tokens": schemas})
    frame = pd.DataFrame(rows, columns=COMPOSITION_COLUMNS)
    tools = frame[frame["kind"].str.startswith("tool result: ")]
    keep = set(tools.groupby("kind")["tokens"].sum().nlargest(top_tools).index)
    other = frame["kind"].str.startswith("tool result: ") & ~frame["kind"].isin(keep)
    frame.loc[other, "kind"] = "tool result: other"
    # pandas-stubs types a column's sum as a Series; with as_index=False it is a DataFrame (a cast, not an ignore: it
    # holds with the stubs and without them, where pandas is untyped)
    return cast("pd.DataFrame",
                frame.groupby(["step", "kind"], as_index=False, sort=False)["tokens"].sum()[COMPOSITION_COLUMNS])


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
def _fate_rows(replay: Replay) -> tuple[list[int], list[list[tuple[int, int, str]]]]:
    """The original messages that reach a call, and per message its runs of equal fate ``(start, end, fate)``:
    a message is kept from the first call that sends it, and its fate changes only where a snapshot changes it."""
    calls = [s.message_index for s in replay.steps]
    if not calls:
        return [], []
    indices = [i for i in range(calls[-1]) if i not in replay.skipped]
    position = {index: pos for pos, index in enumerate(indices)}
    runs: list[list[tuple[int, int, str]]] = [[] for _ in indices]
    current: list[tuple[int, Fate]] = [(bisect.bisect_right(calls, i), "kept") for i in indices]  # (start, fate) of each open run
    for delta in replay.deltas():
        if delta.change is None:
            continue
        k = delta.step.step
        for index, fate in delta.change.fates.items():
            pos = position[index]
            start, previous = current[pos]
            if start < k:
                runs[pos].append((start, k, previous))
            current[pos] = (k, fate)
    end = len(calls)
    for pos, (start, fate) in enumerate(current):
        if start < end:
            runs[pos].append((start, end, fate))
    return indices, runs


def lifecycle(replay: Replay, max_rows: int = MAX_CHART_ROWS) -> pd.DataFrame:
    """Rectangles of the message-lifecycle chart: one row per original message (``row`` = its position), x from the
    first to the last LLM call of a run of equal fate. Above ``max_rows`` rectangles, neighbouring messages are
    binned into one row (each bin and call taking the commonest fate, ties to the more drastic one), the bins
    doubling in width until the chart fits."""
    indices, runs = _fate_rows(replay)
    messages = replay.conversation.messages
    previews = _previews_of(replay.conversation)
    if sum(len(r) for r in runs) <= max_rows:
        rows = [
            _rect(pos, pos + 1, start, end, fate, [index], messages, previews)
            for pos, (index, own) in enumerate(zip(indices, runs, strict=True))
            for start, end, fate in own
        ]
        return pd.DataFrame(rows, columns=LIFECYCLE_COLUMNS)
    width = 2
    while -(-len(indices) // width) > max_rows and width < len(indices):
        width *= 2  # every bin holds at least one rectangle: narrower bins cannot fit
    events = _RunEvents(runs)
    binned = events.binned(width, len(replay.steps))
    while len(binned[0]) > max_rows and width < len(indices):
        width *= 2
        binned = events.binned(width, len(replay.steps))
    rows = []
    for b, start, end, code in zip(*binned, strict=True):
        members = indices[b * width:(b + 1) * width]
        rows.append(_rect(b * width, b * width + len(members), start, end, FATES[code], members, messages, previews))
    return pd.DataFrame(rows, columns=LIFECYCLE_COLUMNS)


def _previews_of(conversation: Conversation) -> dict[int, str]:
    """The hover previews of ``conversation``'s messages by index, filled as they are asked for and kept in its memo
    (every replay of a log shows the same ones)."""
    return conversation.memoized(("previews", PREVIEW_CHARS), dict)


def _rect(row: int, row_end: int, start: int, end: int, fate: str, members: Sequence[int],
          messages: Sequence[Message], previews: dict[int, str]) -> dict[str, Any]:
    first = messages[members[0]]
    preview = previews.get(members[0])
    if preview is None:
        preview = previews[members[0]] = first.preview(PREVIEW_CHARS)
    if len(members) > 1:
        preview = f"{len(members)} messages, the first: {preview}"
    return {"row": row, "row_end": row_end, "start": start, "end": end, "fate": fate, "first_index": members[0],
            "last_index": members[-1], "messages": len(members), "role": first.role, "preview": preview}


class _RunEvents:
    """The fate runs of every message as events (a run starts / ends at a call), for binning neighbouring messages
    without a message × call matrix: between two events of a bin its counts per fate, hence its commonest fate,
    stay the same."""

    def __init__(self, runs: Sequence[list[tuple[int, int, str]]]) -> None:
        codes = {fate: i for i, fate in enumerate(FATES)}
        flat = [(pos, start, end, codes[fate]) for pos, own in enumerate(runs) for start, end, fate in own]
        pos, start, end, code = (np.array(column, dtype=np.int64) for column in zip(*flat, strict=True))
        self.position = np.concatenate([pos, pos])
        self.step = np.concatenate([start, end])
        self.code = np.concatenate([code, code])
        self.delta = np.concatenate([np.ones_like(pos), -np.ones_like(pos)])

    def binned(self, width: int, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(bin, start, end, fate code) of every run of the commonest fate per bin of ``width`` messages and call,
        ties going to the more drastic fate (later in FATES: a bin half pruned reads as pruned), calls where no
        member is there yet left out."""
        bins = self.position // width
        order = np.lexsort((self.step, bins))
        bins, step = bins[order], self.step[order]
        increments = np.zeros((len(order), len(FATES)), dtype=np.int64)
        increments[np.arange(len(order)), self.code[order]] = self.delta[order]
        counts = np.cumsum(increments, axis=0)
        # every run of a bin ends in that bin, so the running counts are back to zero when the next bin starts
        last = np.ones(len(order), dtype=bool)
        last[:-1] = (bins[1:] != bins[:-1]) | (step[1:] != step[:-1])
        point_bin, point_step, point_counts = bins[last], step[last], counts[last]
        # each point holds from its call to the next point of its bin (the last point of a bin is where all end)
        following = np.empty_like(point_step)
        following[:-1] = point_step[1:]
        same_bin_next = np.zeros(len(point_bin), dtype=bool)
        same_bin_next[:-1] = point_bin[1:] == point_bin[:-1]
        following[~same_bin_next] = steps
        commonest = len(FATES) - 1 - point_counts[:, ::-1].argmax(axis=1)
        commonest[point_counts.sum(axis=1) == 0] = -1
        # merge neighbouring points of a bin with the same fate
        starts = np.ones(len(point_bin), dtype=bool)
        starts[1:] = (point_bin[1:] != point_bin[:-1]) | (commonest[1:] != commonest[:-1])
        run_index = np.cumsum(starts) - 1
        ends = np.zeros(starts.sum(), dtype=np.int64)
        np.maximum.at(ends, run_index, following)
        keep = commonest[starts] >= 0
        return point_bin[starts][keep], point_step[starts][keep], ends[keep], commonest[starts][keep]


# ------------------------------------------------------------------------------------------------ tokens chart extras
def floor_series(runs: Sequence[Run]) -> pd.DataFrame:
    """The incompressible floor per step and setup, approximated as the tokens of the system messages and tool
    schemas plus the messages of the last step (the previous LLM output and everything logged after it), which
    every strategy keeps. Counted per message with each setup's counter."""
    rows: list[dict[str, Any]] = []
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
