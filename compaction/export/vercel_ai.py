"""Production code for the Vercel AI SDK: ``pruneMessages`` in an agent's ``prepareStep`` (JavaScript, valid as
TypeScript too)."""

from __future__ import annotations

import json

from ..strategies.vercel_ai import parse_tool_calls
from ..strategies.vercel_ai import tool_calls_option
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import register_exporter


def export_vercel_ai(setup: ResolvedSetup) -> list[Snippet]:
    """A ``ToolLoopAgent`` whose ``prepareStep`` prunes its messages the way the replayed setup did."""
    p = setup.params
    options = {"reasoning": p["reasoning"], "toolCalls": tool_calls_option(parse_tool_calls(p["tool_calls"])),
               "emptyMessages": p["empty_messages"]}
    after = int(p["compact_after_tokens"])
    lines = ["import { ToolLoopAgent, pruneMessages } from 'ai';", "",
             f"const pruneOptions = {json.dumps(options)};", ""]
    if after:
        lines += ["// the cookbook's trigger: prune once the messages' JSON passes COMPACT_AFTER_TOKENS × 4 characters",
                  f"const COMPACT_AFTER_TOKENS = {after};",
                  "const estimateTokens = (messages) => JSON.stringify(messages).length / 4;", "",
                  "const prepareStep = ({ messages }) => {",
                  "  if (estimateTokens(messages) > COMPACT_AFTER_TOKENS) {",
                  "    return { messages: pruneMessages({ messages, ...pruneOptions }) };",
                  "  }",
                  "};"]
    else:
        lines += ["// before every step; the returned messages are what later steps continue from",
                  "const prepareStep = ({ messages }) => ({ messages: pruneMessages({ messages, ...pruneOptions }) });"]
    lines += ["", "const agent = new ToolLoopAgent({",
              f"  model: yourModel, // {FILL_IN}: your model, e.g. 'anthropic/claude-sonnet-4.5'",
              f"  tools: yourTools, // {FILL_IN}: your tools",
              "  prepareStep,", "});"]
    note = ("pruneMessages counts messages, not tokens: the replay's context_window, compact_at and compact_to do not "
            "apply. The same prepareStep works with generateText and streamText.")
    return [Snippet("javascript", "AI SDK agent with pruneMessages in prepareStep", "\n".join(lines) + "\n", note,
                    fill_in=("yourModel", "yourTools"))]


register_exporter("vercel_ai", frozenset({"prune_messages"}), export_vercel_ai)
