"""Compaction Lab: replay real agent logs under context-compaction strategies and see what each one does.

    import compaction
    conv = compaction.load("run.jsonl")
    rep = compaction.replay(conv, "haystack.tool_result_pruning", params={"min_keep_steps": 2},
                            context_window=200_000, compact_at=0.7, compact_to=0.4, counter="approx")
    rep.frame(); rep.context_at(12); rep.to_json()
    compaction.compare(conv, ["haystack.tool_result_pruning", "agent_framework.tool_result_compaction"])
"""

from __future__ import annotations

from .compare import Comparison, compare
from .conversation import Conversation, Message, ToolCall, ToolResult, ToolSchema
from .formats import LoadError, formats, load, load_all_conversations
from .formats import write as convert
from .replay import Replay, replay
from .setups import Setup
from .strategies import get_strategy, registry
from .tokens import make_counter, resolve_counter


def strategies() -> dict:
    """All registered strategies by name."""
    return registry()


__all__ = [
    "Comparison", "Setup", "compare",
    "Conversation", "LoadError", "Message", "Replay", "ToolCall", "ToolResult", "ToolSchema", "convert", "formats",
    "get_strategy", "load", "load_all_conversations", "make_counter", "replay", "resolve_counter", "strategies",
]
