"""Compaction Lab: replay real agent logs under context-compaction strategies and see what each one does.

    import compaction
    conv = compaction.load("run.jsonl")                      # or a folder, several files, bytes
    setup = compaction.Setup("haystack.tool_result_pruning", {"min_keep_steps": 2}, compact_at=0.7, compact_to=0.4)
    rep = compaction.replay(conv, setup)                      # the window comes from the log unless the setup names one
    rep.frame(); rep.context_at(12); rep.to_json()
    compaction.compare(conv, ["haystack.tool_result_pruning", "agent_framework.tool_result_compaction"])
    compaction.export(setup)                                  # the setup as production code for its framework

The names below are the public API (``compaction.__all__``); everything else is reached through its module
(``compaction.discover.discover()`` finds the agent sessions on this machine). ``compaction.export`` is the function
that turns a setup into production code; the exporters live in the package of the same name.
"""

from __future__ import annotations

from .compare import Comparison
from .compare import compare
from .conversation import Conversation
from .conversation import Message
from .conversation import ToolCall
from .conversation import ToolResult
from .conversation import ToolSchema
from .errors import CompactionError
from .errors import ConfigError
from .errors import LoadError
from .export import export
from .formats import formats
from .formats import load
from .formats import load_all_conversations
from .formats import write as convert
from .replay import Replay
from .replay import replay
from .setups import Setup
from .strategies import StrategyInfo
from .strategies import get_strategy
from .strategies import registry
from .tokens import make_counter
from .tokens import resolve_counter


def strategies() -> dict[str, StrategyInfo]:
    """All registered strategies by name."""
    return registry()


__all__ = [
    # loading logs
    "Conversation", "Message", "ToolCall", "ToolResult", "ToolSchema", "convert", "formats", "load",
    "load_all_conversations",
    # setups and replays
    "Comparison", "Replay", "Setup", "StrategyInfo", "compare", "export", "get_strategy", "replay", "strategies",
    # counting
    "make_counter", "resolve_counter",
    # errors
    "CompactionError", "ConfigError", "LoadError",
]
