"""Production configuration for Anthropic API: the ``context_management`` request field."""

from __future__ import annotations

import json
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import py_literal_block
from .base import register_exporter

BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"


def anthropic_edit(setup: ResolvedSetup) -> tuple[dict[str, Any], str, list[str]]:
    """(the ``context_management`` edit object, the beta it needs, notes)."""
    from ..strategies.anthropic import CLEARED_RESULT_STAND_IN
    from ..strategies.anthropic import parse_thinking_keep

    p, kind, notes = setup.params, setup.info.name.split(".", 1)[1], []
    if kind == "clear_tool_uses_20250919":
        edit: dict[str, Any] = {"type": kind,
                                "trigger": {"type": p["trigger_type"], "value": int(p["trigger_value"])},
                                "keep": {"type": "tool_uses", "value": int(p["keep"])}}
        if p["clear_at_least"]:
            edit["clear_at_least"] = {"type": "input_tokens", "value": int(p["clear_at_least"])}
        if p["exclude_tools"]:
            edit["exclude_tools"] = list(p["exclude_tools"])
        inputs = _clear_tool_inputs(p["clear_tool_inputs"])
        if inputs is not False:
            edit["clear_tool_inputs"] = inputs
        if p["placeholder"] != CLEARED_RESULT_STAND_IN:
            notes.append("The placeholder text is not an API setting: the API writes its own text in cleared results.")
        return edit, BETA_CONTEXT_MANAGEMENT, notes
    if kind == "clear_thinking_20251015":
        keep = parse_thinking_keep(p["keep"])
        notes.append("clear_thinking needs extended thinking on in the request, and goes first in `edits` when "
                     "combined with clear_tool_uses.")
        return ({"type": kind, "keep": "all" if keep is None else {"type": "thinking_turns", "value": keep}},
                BETA_CONTEXT_MANAGEMENT, notes)
    edit = {"type": kind, "trigger": {"type": "input_tokens", "value": int(p["trigger"])}}
    if p["instructions"]:
        edit["instructions"] = p["instructions"]
    if p["pause_after_compaction"]:
        edit["pause_after_compaction"] = True
    notes.append("Append each response's content (the compaction block included) to your messages: on later "
                 "requests the API drops everything before the compaction block.")
    return edit, BETA_COMPACT, notes


def _clear_tool_inputs(value: Any) -> bool | list[str]:
    """``clear_tool_inputs`` as the API takes it: a bool, or tool names in the order given."""
    from ..strategies.anthropic import parse_clear_tool_inputs

    parsed = parse_clear_tool_inputs(value)
    if isinstance(parsed, bool):
        return parsed
    raw = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return list(dict.fromkeys(str(t).strip() for t in raw if str(t).strip()))


def export_anthropic(setup: ResolvedSetup) -> list[Snippet]:
    """The ``context_management`` JSON and a ``client.beta.messages.create`` call that sends it."""
    edit, beta, notes = anthropic_edit(setup)
    config = {"edits": [edit]}
    thinking = edit["type"] == "clear_thinking_20251015"
    lines = [
        "import anthropic",
        "",
        fill_in_line("client", "anthropic.Anthropic()", "your client (reads ANTHROPIC_API_KEY)"),
        fill_in_line("messages", '[{"role": "user", "content": "Fix the failing test in tests/test_io.py"}]',
                     "the conversation so far"),
        fill_in_line("tools", "[]", "your tool definitions"),
        "",
        f"context_management = {py_literal_block(config)}",
        "",
        "response = client.beta.messages.create(",
        f"    model={'claude-sonnet-4-6' if beta == BETA_COMPACT else 'claude-sonnet-4-5'!r},",
        f"    max_tokens={16000 if thinking else 4096},",
    ]
    if thinking:
        lines.append('    thinking={"type": "enabled", "budget_tokens": 8000},')
    lines += ["    messages=messages,", "    tools=tools,", f"    betas=[{beta!r}],",
              "    context_management=context_management,", ")"]
    return [
        Snippet("json", "Anthropic request field `context_management`", json.dumps(config, indent=2) + "\n",
                f"Send with the beta header anthropic-beta: {beta}."),
        Snippet("python", "Anthropic Python SDK request", "\n".join(lines) + "\n",
                " ".join(["Context management runs server-side on every request you send, and the API measures "
                          f"input tokens itself (the replay estimated them with the {setup.counter!r} counter).",
                          *notes]),
                ("client", "messages", "tools")),
    ]


register_exporter("anthropic", frozenset({"clear_tool_uses_20250919", "clear_thinking_20251015", "compact_20260112"}), export_anthropic)
