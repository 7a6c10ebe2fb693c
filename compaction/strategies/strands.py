"""Strands Agents ``SlidingWindowConversationManager`` as released in strands-agents 1.62.0
(``strands/agent/conversation_manager/sliding_window_conversation_manager.py``; agents.md §1.20). The main branch
on GitHub has other options (``max_context_tokens``, ``compactable_after_messages``): this follows the release.

Strands keeps ``agent.messages`` (user and assistant messages; the system prompt is apart) and rewrites it in place.
The stored history is read as that list (:func:`strands_messages`): system messages are the system prompt (outside
the window, never removed); the tool results answering one step are **one** user message of ``toolResult`` blocks;
every other message is one message. The manager acts at three points:

- **After each invocation** (``agent(prompt)`` returns; in a replay, before the first call of the next user turn,
  on the history before the new user message): ``apply_management`` — if there are more than ``window_size``
  messages, ``reduce_context`` trims them.
- **Before each model call**, when ``per_turn`` is ``True`` (every call) or N (every N-th call, counting every
  attempt): ``apply_management`` on the whole list.
- **On a context-window overflow** (the model rejects the request: here, the call's tokens exceed context_window):
  ``reduce_context`` with the error, and the call is retried. Only this path truncates tool results
  (``should_truncate_results``): the oldest message holding tool results has each result text longer than 400
  characters cut to its first and last 200 around ``... [truncated: N chars removed] ...`` and its images replaced
  by a short description; when that message changes nothing (already truncated) the manager trims instead.

``reduce_context`` trims to ``len − window_size`` messages (or to index 2 when the list is not longer than the
window), moved forward to the first user message that is not a tool result; if there is none, to the first
assistant tool use whose next message holds tool results (then the task message goes too). With no such point
routine management gives up; an overflow cannot be recovered and the run would fail (the replay sends the call and
says so). ``window_size = 0`` removes every unpinned message. ``pin_first`` pins the first N messages at the first
reduction (a pinned message, and the tool-pair partner next to it, is never removed).

Not replayed: ``proactive_compression`` (Strands' own token estimate of the next request against the model's
``context_window_limit``) — it needs Strands' estimator as a counter.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import Image
from ..conversation import Message
from ..conversation import ToolResult
from ..errors import ConfigError
from ..history import Entry
from ..tokens import Counter
from .base import Param
from .base import RunContext
from .base import StrategyInfo
from .base import register
from .contract import Call
from .contract import Strategy
from .history_runner import plural

DOCS = ("https://github.com/strands-agents/sdk-python/blob/v1.62.0/src/strands/agent/conversation_manager/"
        "sliding_window_conversation_manager.py")
PRESERVE_CHARS = 200
TRUNCATION_MARKER = "... [truncated:"


# ------------------------------------------------------------------------------------------------ the messages list
@dataclass(frozen=True)
class StrandsMessage:
    """One message of ``agent.messages``: the stored positions it is made of and what Strands looks at."""

    positions: tuple[int, ...]
    role: str
    has_tool_result: bool
    has_tool_use: bool


def strands_messages(entries: Sequence[Entry]) -> list[StrandsMessage]:
    """The stored history as ``agent.messages`` (system messages left out: they are the system prompt)."""
    out: list[StrandsMessage] = []
    for position, entry in enumerate(entries):
        m = entry.message
        if m.role == "system":
            continue
        if m.tool_result is not None:
            last = out[-1] if out else None
            if last is not None and last.has_tool_result and last.positions[-1] == position - 1:
                out[-1] = replace(last, positions=(*last.positions, position))
            else:
                out.append(StrandsMessage((position,), "user", True, False))
            continue
        out.append(StrandsMessage((position,), "assistant" if m.role == "assistant" else "user", False,
                                  bool(m.tool_calls)))
    return out


def valid_trim_point(messages: Sequence[StrandsMessage], start: int) -> int:
    """``find_valid_trim_point``: the first user message at or after ``start`` that is not a tool result (nor a
    tool use without its result next), or ``len(messages)``."""
    i = start
    while i < len(messages):
        m = messages[i]
        if m.role != "user" or m.has_tool_result or (
                m.has_tool_use and not (i + 1 < len(messages) and messages[i + 1].has_tool_result)):
            i += 1
            continue
        break
    return i


def tool_pair_trim_point(messages: Sequence[StrandsMessage], start: int) -> int | None:
    """The fallback: the first tool use at or after ``start`` whose next message is a user message of results."""
    for i in range(start, len(messages)):
        if messages[i].has_tool_use and i + 1 < len(messages) and messages[i + 1].role == "user" \
                and messages[i + 1].has_tool_result:
            return i
    return None


def truncated_text(text: str) -> str | None:
    """A tool result text cut to its first and last 200 characters, or None when Strands leaves it."""
    if TRUNCATION_MARKER in text or len(text) <= 2 * PRESERVE_CHARS:
        return None
    removed = len(text) - 2 * PRESERVE_CHARS
    return (f"{text[:PRESERVE_CHARS]}...\n\n... [truncated: {removed} chars removed] ...\n\n..."
            f"{text[-PRESERVE_CHARS:]}")


def image_placeholder(image: Image) -> str:
    """What an image inside a tool result becomes (the log keeps no image bytes: 0 bytes)."""
    fmt = (image.mime_type or "unknown").rpartition("/")[2] or "unknown"
    return f"[image: {fmt}, 0 bytes]"


def truncated_result(message: Message) -> Message | None:
    """A tool message with its result truncated as Strands truncates it, or None when nothing changes."""
    result = message.tool_result
    assert result is not None
    if isinstance(result.result, str):
        cut = truncated_text(result.result)
        return None if cut is None else replace(message, tool_result=ToolResult(result.origin, cut, result.error))
    parts: list[Any] = []
    changed = False
    for part in result.result:
        if isinstance(part, Image):
            parts.append(image_placeholder(part))
            changed = True
        elif isinstance(part, str) and (cut := truncated_text(part)) is not None:
            parts.append(cut)
            changed = True
        else:
            parts.append(part)
    return replace(message, tool_result=ToolResult(result.origin, tuple(parts), result.error)) if changed else None


# ------------------------------------------------------------------------------------------------ the strategy
class Overflow(Exception):
    """``ContextWindowOverflowException``: the context cannot be reduced further."""


class SlidingWindow(Strategy):
    """``SlidingWindowConversationManager``: trims ``agent.messages`` in place (a rewrite)."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        self.window = int(params["window_size"])
        if self.window < 0:
            raise ConfigError(f"window_size must be a non-negative integer, got {self.window}")
        self.truncate = bool(params["should_truncate_results"])
        self.per_turn = parse_per_turn(params["per_turn"])
        self.pin_first = max(0, int(params["pin_first"]))
        self._pin_applied = False
        self._pinned: set[int] = set()  # origins of pinned messages
        self._calls = 0  # model calls seen by the per-turn hook (attempts included)
        self._seen = 0  # stored entries already seen at the previous call
        self._started = False  # a call was made (an invocation is running)
        self._notes: list[str] = []
        self._declines: list[str] = []
        self._result: list[Entry] = []

    def lines(self) -> dict[str, float]:
        return {"trigger": self.ctx.context_window}

    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        """Runs the manager's hooks for this call (they run at every call); True when they did something."""
        self._notes, self._declines = [], []
        self._result = self._manage(list(entries))
        for note in self._notes:
            self.note(note)
        for reason in self._declines:
            self.decline(reason)
        return bool(self._notes or self._declines)

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> list[Entry] | None:
        return self._result

    def _manage(self, entries: list[Entry]) -> list[Entry]:
        new_turn = self._new_invocation_at(entries)
        if new_turn is not None and self._started:  # the previous invocation ended: apply_management
            head, tail = entries[:new_turn], entries[new_turn:]
            entries = self._apply_management(head, "after the invocation") + tail
        self._started = True
        entries = self._before_model_call(entries)
        while self.count(entries) > self.ctx.context_window:
            try:
                entries = self._reduce(entries, overflow=True)
            except Overflow:
                self._declines.append(f"overflow: {self.count(entries):,} tokens > {self.ctx.context_window:,} and "
                                      "nothing left to trim (the run would fail)")
                break
            entries = self._before_model_call(entries)
        self._seen = len(entries)  # what the next call's new messages are appended after
        return entries

    # -------------------------------------------------------------------------------------------- the manager
    def _new_invocation_at(self, entries: Sequence[Entry]) -> int | None:
        """The stored position of the first user text message appended since the previous call (a new
        ``agent(prompt)``), if any."""
        for position in range(self._seen, len(entries)):
            m = entries[position].message
            if m.role == "user" and m.tool_result is None:
                return position
        return None

    def _before_model_call(self, entries: list[Entry]) -> list[Entry]:
        """The per-turn hook of one model call attempt."""
        if self.per_turn is False:
            return entries
        self._calls += 1
        if self.per_turn is True or self._calls % self.per_turn == 0:
            return self._apply_management(entries, "per turn")
        return entries

    def _apply_management(self, entries: list[Entry], when: str) -> list[Entry]:
        if len(strands_messages(entries)) <= self.window:
            return entries
        try:
            return self._reduce(entries, overflow=False, when=when)
        except Overflow:  # routine management never raises
            return entries

    def _reduce(self, entries: list[Entry], overflow: bool, when: str = "on overflow") -> list[Entry]:
        """``reduce_context``: the new entries (an :class:`Overflow` when an overflow cannot be recovered)."""
        messages = strands_messages(entries)
        if self.pin_first and not self._pin_applied:
            for m in messages[: self.pin_first]:
                self._pinned.update(origin for p in m.positions if (origin := entries[p].origin) is not None)
            self._pin_applied = True
        pinned = [self._is_pinned(entries, messages, i) for i in range(len(messages))]
        if self.window == 0:
            drop = [m for m, p in zip(messages, pinned) if not p]
            if not drop and overflow:  # nothing left to remove: the overflow cannot be recovered
                raise Overflow
            self._notes.append(f"window_size 0 ({when}): removed {plural(len(drop), 'message')}")
            return self._without(entries, drop)
        if overflow and self.truncate:
            oldest = next((i for i, m in enumerate(messages) if m.has_tool_result and not pinned[i]), None)
            if oldest is not None:
                changed = 0
                for p in messages[oldest].positions:
                    cut = truncated_result(entries[p].message)
                    if cut is not None:
                        entries[p] = entries[p].replaced(cut, truncated_by="strands")
                        changed += 1
                if changed:
                    self._notes.append(f"overflow: truncated {plural(changed, 'tool result')} of message {oldest}")
                    return entries
        start = 2 if len(messages) <= self.window else len(messages) - self.window
        trim = valid_trim_point(messages, start)
        if trim >= len(messages):
            fallback = tool_pair_trim_point(messages, start)
            if fallback is None:
                if overflow:
                    raise Overflow
                self._declines.append(f"{when}: no valid trim point; nothing trimmed")
                return entries
            trim = fallback
        drop = [m for m, p in zip(messages[:trim], pinned) if not p]
        if not drop:
            if overflow:
                raise Overflow
            self._declines.append(f"{when}: every message in the trim range is pinned")
            return entries
        self._notes.append(f"{when}: trimmed {plural(len(drop), 'message')}")
        return self._without(entries, drop)

    def _is_pinned(self, entries: Sequence[Entry], messages: Sequence[StrandsMessage], i: int) -> bool:
        """A pinned message, or the tool-pair partner next to one (they share a tool use id)."""
        if self._flagged(entries, messages[i]):
            return True
        ids = _tool_ids(entries, messages[i])
        return bool(ids) and any(0 <= j < len(messages) and self._flagged(entries, messages[j])
                                 and ids & _tool_ids(entries, messages[j]) for j in (i - 1, i + 1))

    def _flagged(self, entries: Sequence[Entry], m: StrandsMessage) -> bool:
        return any(entries[p].origin in self._pinned for p in m.positions)

    @staticmethod
    def _without(entries: list[Entry], drop: Sequence[StrandsMessage]) -> list[Entry]:
        gone = {p for m in drop for p in m.positions}
        return [e for p, e in enumerate(entries) if p not in gone]


def _tool_ids(entries: Sequence[Entry], m: StrandsMessage) -> set[str]:
    ids: set[str] = set()
    for p in m.positions:
        msg = entries[p].message
        ids.update(c.id for c in msg.tool_calls if c.id)
        if msg.tool_result is not None and msg.tool_result.call_id:
            ids.add(msg.tool_result.call_id)
    return ids


def parse_per_turn(value: Any) -> bool | int:
    """``per_turn``: ``false``, ``true`` or a positive whole number N (every N-th model call)."""
    text = str(value).strip().lower()
    if text in ("false", "0", "no", "off", ""):
        if text == "0":
            raise ConfigError("per_turn must be a positive integer, true or false, got 0")
        return False
    if text in ("true", "yes", "on"):
        return True
    try:
        n = int(text)
    except ValueError:
        raise ConfigError(f"per_turn must be a positive integer, true or false, got {value!r}") from None
    if n <= 0:
        raise ConfigError(f"per_turn must be a positive integer, true or false, got {n}")
    return True if n == 1 else n


register(
    StrategyInfo(
        name="strands.sliding_window",
        title="Strands Agents · SlidingWindowConversationManager",
        summary=(
            "After each invocation (and before model calls with per_turn) keeps the last window_size messages, "
            "trimmed forward to a user message or a tool use with its results; on a context-window overflow "
            "(tokens above context_window) first truncates the oldest tool results to 200 + 200 characters. Uses "
            "context_window as the model's limit; ignores compact_at/compact_to."
        ),
        params=(
            Param("window_size", "int", 40, "`window_size`: the most messages kept in agent.messages (0: clear "
                  "every unpinned message at each reduction).", minimum=0, maximum=100_000),
            Param("should_truncate_results", "bool", True, "`should_truncate_results`: on a context-window "
                  "overflow, truncate the oldest message's tool results before trimming messages."),
            Param("per_turn", "str", "false", "`per_turn`: also manage before model calls — false (only after "
                  "each invocation), true (before every model call) or N (before every N-th model call)."),
            Param("pin_first", "int", 0, "`pin_first`: pin the first N messages at the first reduction; pinned "
                  "messages (and their tool-pair partners) are never removed (0: none).", minimum=0, maximum=1000),
        ),
        reference=SlidingWindow,
        policy="window",
        docs_url=DOCS,
    )
)
