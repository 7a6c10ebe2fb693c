"""The previous LLM call's usage as a coding agent reads it before the next call, in a replay.

Cline, Roo Code and OpenCode decide whether to compact from the usage the provider reported for the previous request
(prompt tokens, cache reads and writes included, plus the output tokens). The replay runs the uncompacted
conversation, so the log's reported usage describes the replayed context only where neither the replay nor the
log's own agent had compacted yet:

* before the log's first compaction, the reported prompt less what the replay's compactions took away (what the
  uncompacted context counted minus what was sent, with the strategy's counter), floored at zero: until the replay
  first compacts, exactly what the log reports;
* from the log's first compaction on, the reported figures describe the agent's compacted context, not the
  replayed one: what the replay sent, plus the part of the prompt the log does not show (system prompt, tool
  definitions: the reported prompt less the counted uncompacted context, at the last call before that compaction
  that reported usage);
* a call the log reports no usage for is measured the same way, by what was sent plus that overhead.

The output tokens are the logged ones (the counter's count of the call's message when the log reports none).

:class:`PreviousCall` follows a replay call by call. A strategy calls :meth:`PreviousCall.begin` from its
``triggered`` (every call) and :meth:`PreviousCall.sent` whenever it changes what this call sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..conversation import Message
from ..history import Entry
from .contract import Call
from .contract import Strategy


@dataclass
class CallRecord:
    """One LLM call of the replay, as later calls need to know it."""

    #: index, in the loaded conversation, of the message the call produced
    index: int
    #: the strategy's counter over every original message before the call (the uncompacted context)
    uncompacted: int
    #: the strategy's counter over what the call sent
    sent: int
    #: the call's own output (the assistant message), once it is appended
    output: Message | None = None


class PreviousCall:
    """The usage of the replay's previous LLM call, as its agent reads it (see the module docstring)."""

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy
        self._originals = strategy.counter.tally(tools=strategy.tools)
        self._seen: set[int] = set()
        self.previous: CallRecord | None = None
        self.current: CallRecord | None = None
        events = strategy.ctx.events
        #: calls from this message index on were sent after the log's own first compaction
        self.log_compacted_from = min((e.message_index for e in events), default=None)
        #: what the reported prompt holds besides the logged messages (system prompt, tools), last calibrated
        self.overhead = 0

    def begin(self, entries: Sequence[Entry], call: Call) -> None:
        """A new call: take in the originals appended since the last one, and make the last call the previous."""
        fresh: list[Entry] = []
        for entry in reversed(entries):  # appended originals are the tail of the stored history
            if entry.origin is None or entry.pruned or entry.origin in self._seen:
                break
            fresh.append(entry)
        for entry in reversed(fresh):
            self._seen.add(entry.origin)  # type: ignore[arg-type]
            self._originals.append(entry.message)
            if self.current is not None and entry.origin == self.current.index:
                self.current.output = entry.message
        self.previous = previous = self.current
        self.current = CallRecord(call.message_index, self._originals.value(with_tools=True), call.tokens)
        usage = self.strategy.ctx.usage.get(previous.index) if previous is not None else None
        if previous is not None and usage is not None and self._logged_context(previous.index):
            self.overhead = usage.prompt_tokens - previous.uncompacted

    def _logged_context(self, index: int) -> bool:
        """Whether the call producing message ``index`` was sent before the log's own first compaction."""
        return self.log_compacted_from is None or index < self.log_compacted_from

    def sent(self, tokens: int) -> None:
        """What this call sends after the strategy changed it."""
        if self.current is not None:
            self.current.sent = tokens

    def prompt_and_output(self) -> tuple[int, int] | None:
        """The previous call's (prompt tokens, output tokens) as the agent reads them; None before the first call."""
        prev = self.previous
        if prev is None:
            return None
        usage = self.strategy.ctx.usage.get(prev.index)
        if usage is not None and self._logged_context(prev.index):
            removed = max(prev.uncompacted - prev.sent, 0)
            return max(usage.prompt_tokens - removed, 0), usage.output_tokens
        if usage is not None:
            output = usage.output_tokens
        else:
            output = self.strategy.counter.count_one(prev.output) if prev.output is not None else 0
        return max(prev.sent + self.overhead, 0), output

    def total(self) -> int | None:
        """Prompt plus output tokens of the previous call (what Cline and Roo Code compare with their limits)."""
        found = self.prompt_and_output()
        return None if found is None else found[0] + found[1]
