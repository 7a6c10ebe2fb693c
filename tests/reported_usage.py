"""Hand-made logs whose LLM calls report usage, for the golden-case strategy tests (Cline, Roo Code)."""

from __future__ import annotations

from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import Usage


def with_reported_totals(messages: list[Message], totals: dict[int, int], format_name: str, output_tokens: int,
                         others: int = 1_000) -> Conversation:
    """``messages`` as a ``format_name`` log whose k-th LLM call (0-based) reports ``totals[k]`` tokens in all, every
    other call ``others``; ``output_tokens`` of each call's total are output."""
    calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
    usage = {i: Usage(input_tokens=totals.get(k, others) - output_tokens, output_tokens=output_tokens)
             for k, i in enumerate(calls)}
    return Conversation(tuple(messages), source=Source(format_name), usage=usage)
