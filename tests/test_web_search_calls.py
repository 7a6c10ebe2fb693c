"""Hosted web searches (Responses ``web_search_call``, in Codex rollouts and Responses item lists) are tool calls
with a result, inside the LLM call that ran them."""

from __future__ import annotations

import json

from conftest import ROOT
from conftest import real_log

import compaction
from compaction.formats import load_all_conversations
from compaction.formats.openai_responses import WEB_SEARCH_STAND_IN

ROLLOUT = ROOT / "tests" / "fixtures" / "codex" / "rollout-web-search.jsonl"
REAL_CODEX = ("codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-"
              "940e6b99603c.jsonl")


def test_codex_web_searches_are_tool_calls_of_their_turn():
    conv = compaction.load(ROLLOUT)
    assert "".join(m.role[0] for m in conv.messages) == "suattta"
    turn = conv.messages[2]  # reasoning, two searches, a message and a shell call: one LLM call
    assert conv.llm_call_indices == [2, 6] and sorted(conv.usage) == [2, 6]
    assert turn.texts == ("Node 22 is the active LTS; I'll update the Dockerfile.",)
    assert [(c.name, dict(c.arguments)) for c in turn.tool_calls] == [
        ("web_search", {"type": "search", "query": "Node.js release schedule active LTS"}),
        # its item has an empty action: the web_search_end record says what it opened
        ("web_search", {"type": "open_page", "url": "https://nodejs.org/en/about/previous-releases"}),
        ("shell", {"command": ["bash", "-lc", "sed -i 's/node:18/node:22/' Dockerfile && grep FROM Dockerfile"]})]
    searches = [m.tool_result for m in conv.messages[3:5]]
    assert [r.origin for r in searches] == list(turn.tool_calls[:2])
    assert all(r.text == WEB_SEARCH_STAND_IN for r in searches)
    assert all(m.meta["stand_in"] is True and m.meta["hosted"] is True for m in conv.messages[3:5])
    assert conv.messages[5].tool_result.text == "FROM node:22-slim\n"
    assert conv.warnings == () and conv.tool_call_count == conv.tool_result_count == 3
    assert (conv.source.model, conv.source.agent_version, conv.source.context_window) == (
        "gpt-5.2-codex", "0.77.0", 272000)


def test_a_web_search_with_sources_lists_them_as_its_result():
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Latest Python release?"}]},
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "python latest release",
                    "sources": [{"type": "url", "url": "https://www.python.org/downloads/"}, {"type": "url"}]}},
        {"type": "web_search_call", "id": "ws_2", "status": "failed", "action": {"type": "find", "url": "u", "pattern": "p"}},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Python 3.14."}]},
    ]
    (conv,) = load_all_conversations(json.dumps(items).encode(), name="items.json")
    assert conv.format == "openai-responses"
    assert "".join(m.role[0] for m in conv.messages) == "uatt"
    first, second = (m.tool_result for m in conv.messages[2:])
    assert first.text == "Sources:\nhttps://www.python.org/downloads/" and "stand_in" not in conv.messages[2].meta
    assert dict(first.origin.arguments) == {"type": "search", "query": "python latest release"}
    assert second.error is True and dict(second.origin.arguments) == {"type": "find", "url": "u", "pattern": "p"}


def test_malformed_web_search_fields_cost_nothing_else():
    items = [{"type": "message", "role": "user", "content": "q"},
             {"type": "web_search_call", "action": "not an object", "id": 7},
             {"type": "web_search_call", "action": {"type": "search", "sources": "nope"}},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a"}]}]
    (conv,) = load_all_conversations(json.dumps(items).encode(), name="items.json")
    assert [c.name for c in conv.messages[1].tool_calls] == ["web_search", "web_search"]
    assert len({c.id for c in conv.messages[1].tool_calls}) == 2 and conv.tool_result_count == 2


def test_the_real_codex_rollout_still_reads_as_before():
    conv = compaction.load(real_log(REAL_CODEX))
    assert (len(conv.llm_call_indices), conv.tool_call_count, conv.tool_result_count) == (39, 39, 39)
    assert (conv.source.model, conv.source.agent_version) == ("gpt-5.1-codex", "0.58.0")
