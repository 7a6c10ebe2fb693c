"""Production code for Strands Agents: a ``SlidingWindowConversationManager`` handed to the ``Agent``."""

from __future__ import annotations

from ..strategies.strands import parse_per_turn
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import kwargs
from .base import py_call
from .base import py_import
from .base import register_exporter


def export_strands(setup: ResolvedSetup) -> list[Snippet]:
    """The manager with the replayed setup's arguments (the release's defaults left out)."""
    p = setup.params
    args = kwargs(setup.non_default(("window_size", "should_truncate_results")))
    per_turn = parse_per_turn(p["per_turn"])
    if per_turn is not False:
        args.append(f"per_turn={per_turn!r}")
    if int(p["pin_first"]):
        args.append(f"pin_first={int(p['pin_first'])!r}")
    code = "\n".join([
        "from strands import Agent",
        py_import("strands.agent.conversation_manager", ["SlidingWindowConversationManager"]),
        "",
        f"conversation_manager = {py_call('SlidingWindowConversationManager', args)}",
        "agent = Agent(",
        f"    model=model,  # {FILL_IN}: your model (e.g. BedrockModel(model_id=...))",
        f"    tools=tools,  # {FILL_IN}: your tools",
        "    conversation_manager=conversation_manager,",
        ")",
    ]) + "\n"
    note = (f"strands-agents 1.62.0. Tool results are truncated only when the model reports a context-window overflow "
            f"(the replay took {setup.context_window:,} tokens as the model's limit).")
    return [Snippet("python", "Strands Agent with a sliding window", code, note, fill_in=("model", "tools"))]


register_exporter("strands", frozenset({"sliding_window"}), export_strands)
