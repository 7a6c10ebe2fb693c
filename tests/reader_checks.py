"""Shared by the reader tests: checks on a loaded conversation, and the nodes of a JSON value the mutation fuzz picks
from."""

from __future__ import annotations

from typing import Any

import compaction


def roles(conv: compaction.Conversation) -> str:
    """The conversation's roles as letters: S(ystem), U(ser), A(ssistant), T(ool)."""
    return "".join({"system": "S", "user": "U", "assistant": "A", "tool": "T"}[m.role] for m in conv.messages)


def assert_pairs(conv: compaction.Conversation) -> None:
    """Every tool message answers a call of an earlier assistant message (by id and name)."""
    calls = {}
    for m in conv.messages:
        for c in m.tool_calls:
            calls[c.id] = c
        if m.tool_result is not None:
            assert m.tool_result.call_id in calls, m.tool_result
            assert calls[m.tool_result.call_id].name == m.tool_result.tool_name


def json_paths(value: Any, prefix: tuple = (), per_list: int | None = None) -> list[tuple]:
    """The path (keys and indices) of every node of a JSON value, itself first; at most ``per_list`` items of each
    list (all when None)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += json_paths(v, (*prefix, k), per_list)
    elif isinstance(value, list):
        for i, v in enumerate(value[:per_list]):
            out += json_paths(v, (*prefix, i), per_list)
    return out
