"""Claude Code's microcompactions: old tool results of a few tools cleared in place, without a model call.

Two rules, from the published ``cli.js`` bundles (see :mod:`._claude_code_versions` for the releases):

* **Token rule** (up to 2.1.63; on by default up to 2.1.20). Before every call, the results of the compactable tools
  not cleared yet are counted (``round(len / 4)`` per text, 2,000 per image). The newest three are always kept;
  from the oldest on, a result is cleared while the results still standing (all of them, less those cleared so far)
  exceed 40,000 tokens. It happens only when that clears at least 20,000 tokens and the context is past the warning
  threshold (20,000 below the auto-compact threshold; below the effective window when auto-compact is off, measured
  on the last reported call). ``microcompactMetadata.preTokens`` is the count of all the results considered,
  ``tokensSaved`` of those cleared, ``compactedToolIds`` their calls. A cleared result's content becomes a pointer
  to the file Claude Code saved it to (``<persisted-output>``…``</persisted-output>``; 2.0.x: ``[Old tool result
  content cleared]``), and stays cleared until the next auto-compaction. The logged ones (2.1.14–2.1.20) came
  seconds to minutes after the previous response: the rule is about tokens, not time.
* **Time-based** (2.1.81 on; server config, off by default). In the main conversation only, when the last response
  is at least ``gapThresholdMinutes`` (60) old — the prompt cache has expired — every compactable result but the
  newest ``keepRecent`` (5) becomes ``[Old tool result content cleared]``. The cleared copies live in that turn's
  request loop only: the next prompt sends the stored results again.

The compactable tools: Read, Bash (PowerShell from 2.1.8x), Grep, Glob, WebSearch, WebFetch, Edit, Write — never
Skill, Task, TodoWrite or MCP tools.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..conversation import Image
from ..conversation import Message
from ..conversation import Source
from ..history import Entry
from ._claude_code_estimate import DOCUMENT_TOKENS
from ._claude_code_estimate import rough

COMPACTABLE_TOOLS = frozenset({"Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"})
#: the token rule's constants (not settable in Claude Code)
KEEP_TOKENS = 40_000
MIN_SAVINGS = 20_000
KEEP_LAST = 3
#: the warning threshold's distance below the auto-compact threshold
WARNING_BUFFER = 20_000
#: what the time-based rule (and 2.0.x's token rule) puts in a cleared result
CLEARED_TEXT = "[Old tool result content cleared]"
#: the time-based rule's config defaults (``tengu_slate_heron``: gapThresholdMinutes, keepRecent)
GAP_THRESHOLD_MINUTES = 60
KEEP_RECENT = 5
#: an image in a result, as the microcompaction counts it
IMAGE_TOKENS = 2000


@dataclass(frozen=True)
class Clearing:
    """What the token rule would clear now."""

    #: call ids of the results to clear, oldest first
    ids: tuple[str, ...]
    #: tokens of every compactable result not cleared before (``preTokens``)
    considered: int
    #: tokens of the results cleared now (``tokensSaved``)
    saved: int


def result_tokens(message: Message) -> int:
    """A tool result's tokens as the microcompaction counts them."""
    result = message.tool_result
    if result is None:
        return 0
    if isinstance(result.result, str):
        return rough(result.result)
    return sum(rough(p) if isinstance(p, str) else IMAGE_TOKENS if isinstance(p, Image) else DOCUMENT_TOKENS
               for p in result.result)


def compactable_calls(entries: Sequence[Entry]) -> list[str]:
    """Ids of the calls to compactable tools, in order."""
    return [c.id for e in entries for c in e.message.tool_calls if c.name in COMPACTABLE_TOOLS and c.id]


class TokenRule:
    """The token rule followed through a replay: the compactable results not cleared yet, oldest first, and their
    tokens (Claude Code recounts them before every call; they only change by being appended or cleared)."""

    def __init__(self) -> None:
        self._calls: list[str] = []
        self._tokens: dict[str, int] = {}
        self._first = 0  # the results before this position are cleared
        self.total = 0

    def take(self, message: Message) -> None:
        """A message appended to the history."""
        for call in message.tool_calls:
            if call.name in COMPACTABLE_TOOLS and call.id and call.id not in self._tokens:
                self._calls.append(call.id)
                self._tokens[call.id] = 0
        result = message.tool_result
        if result is not None and result.call_id in self._tokens and not self._tokens[result.call_id]:
            self._tokens[result.call_id] = tokens = result_tokens(message)
            self.total += tokens

    def choose(self) -> Clearing:
        """What the rule would clear now, before its gate: from the oldest, while the results still standing exceed
        40,000 tokens, the newest three aside."""
        saved, ids = 0, []
        last = len(self._calls) - KEEP_LAST
        position = self._first
        while position < last and self.total - saved > KEEP_TOKENS:
            call_id = self._calls[position]
            ids.append(call_id)
            saved += self._tokens[call_id]
            position += 1
        return Clearing(tuple(ids), self.total, saved)

    def cleared(self, clearing: Clearing) -> None:
        """``clearing`` was applied: its results no longer count."""
        self._first += len(clearing.ids)
        self.total -= clearing.saved

    def start_over(self) -> None:
        """After an auto-compaction: nothing is left, nothing is cleared."""
        type(self).__init__(self)


def time_clearing(entries: Sequence[Entry], keep_recent: int) -> tuple[str, ...]:
    """The time-based rule's choice: every compactable call but the newest ``keep_recent`` (at least one kept)."""
    calls = compactable_calls(entries)
    kept = set(calls[-max(1, keep_recent):])
    return tuple(c for c in calls if c not in kept)


def persisted_pointer(call_id: str, source: Source | None, as_json: bool) -> str:
    """The pointer a cleared result becomes: the file under the session's ``tool-results`` folder Claude Code saved
    it to (the project folder is the log's own when it was read from ``~/.claude/projects``)."""
    session = (source.meta.get("session_id") if source is not None else None) or "<session>"
    folder = posixpath.dirname(source.path) if source is not None and source.path else "~/.claude/projects/<project>"
    path = posixpath.join(folder, str(session), "tool-results", f"{call_id}.{'json' if as_json else 'txt'}")
    return f"<persisted-output>Tool result saved to: {path}\n\nUse Read to view</persisted-output>"


def minutes_since_last_response(entries: Sequence[Entry]) -> float | None:
    """Minutes from the last assistant message to the newest message after it (when the request goes out), by the
    log's timestamps; None when either is missing."""
    last = next((p for p in range(len(entries) - 1, -1, -1) if entries[p].message.role == "assistant"), None)
    if last is None:
        return None
    then = _time(entries[last].message)
    later = [t for t in (_time(e.message) for e in entries[last + 1:]) if t is not None]
    if then is None or not later:
        return None
    return (max(later) - then).total_seconds() / 60


def _time(message: Message) -> datetime | None:
    text = message.meta.get("timestamp")
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
