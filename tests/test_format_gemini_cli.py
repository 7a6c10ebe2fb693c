"""Gemini CLI sessions: the real ``.json`` sessions, the fixtures written by Gemini CLI's own ChatRecordingService
(``tools/gemini_cli_fixtures.mjs``: a 0.61 ``.jsonl`` session with a rewind, tool-output masking and a compression,
its subagent's session, a 0.24 ``.json`` session), hand-made records for each rule, and random record streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from conftest import real_log
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction.conversation import Usage
from compaction.formats import LoadError

FIXTURES = ROOT / "tests" / "fixtures" / "gemini-cli"
SESSION = "5f0c2a9e-1b7d-4c3e-9a41-0d2b6e8f7a10"
AGENT = "9d4e1f22-6a3b-4c5d-8e7f-112233445566"
META = {"sessionId": "s-1", "projectHash": "p" * 64, "startTime": "2026-01-01T00:00:00Z", "kind": "main"}


def jsonl(*records: Any) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def load(*records: Any, name: str = "session-2026-01-01T00-00-s1.jsonl") -> compaction.Conversation:
    return compaction.load(jsonl(META, *records), name=name)


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": [{"text": text}]}


def gemini(mid: str, text: str = "", calls: list | None = None, tokens: dict | None = None,
           model: str | None = "gemini-2.5-pro") -> dict[str, Any]:
    record: dict[str, Any] = {"id": mid, "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": text}
    if calls is not None:
        record["toolCalls"] = calls
    if tokens is not None:
        record["tokens"] = tokens
    if model is not None:
        record["model"] = model
    return record


def call(cid: str, name: str, output: Any, status: str = "success", key: str = "output") -> dict[str, Any]:
    response = {"functionResponse": {"id": cid, "name": name, "response": {key: output}}}
    return {"id": cid, "name": name, "args": {"x": 1}, "result": [response], "status": status,
            "timestamp": "2026-01-01T00:00:03Z"}


def tokens(prompt: int, cached: int = 0, out: int = 10, thoughts: int = 0, tool: int = 0) -> dict[str, int]:
    return {"input": prompt, "output": out, "cached": cached, "thoughts": thoughts, "tool": tool,
            "total": prompt + out + thoughts + tool}


# ------------------------------------------------------------------------------------------------ real sessions
def test_real_session_loads_with_its_readme_counts() -> None:
    conv = compaction.load(real_log("gemini-cli/entireio-cli__checkpoint-ab-2b9748b105-0.json"))
    assert conv.format == "gemini-cli" and conv.id == "f7633853-6663-4dbb-bbf4-6159afa29df8"
    assert len(conv.llm_call_indices) == 11 and conv.tool_call_count == 9 and conv.tool_result_count == 9
    assert conv.source.model == "gemini-2.5-flash"
    assert conv.source.agent_version == "0.23.0"  # "Gemini CLI update available! 0.23.0 → 0.24.0"
    assert conv.source.meta["projectHash"].startswith("7e8989f7")
    assert [w.message for w in conv.warnings] == [
        "skipped 1 info message(s): notices Gemini CLI showed the person, never sent to the model"]
    first = conv.messages[conv.llm_call_indices[0]]
    assert first.text.startswith("I will create a markdown file") and first.tool_calls[0].name == "write_file"
    assert first.reasoning[0].startswith("**Considering Color Documentation Format**\n\n")
    # input 12207 includes the 2558 cached tokens; thoughts are output the model generated
    assert conv.usage[conv.llm_call_indices[0]] == Usage(input_tokens=12207 - 2558, output_tokens=105 + 153,
                                                         cache_read_tokens=2558)
    assert conv.usage[conv.llm_call_indices[0]].prompt_tokens == 12207
    # the response Gemini CLI recorded with all-zero tokens reports no usage
    zero = conv.llm_call_indices[4]
    assert conv.messages[zero].tool_calls[0].arguments["command"] == "rm docs/blue.md" and zero not in conv.usage
    assert len(conv.usage) == 10


def test_short_real_session() -> None:
    conv = compaction.load(real_log("gemini-cli/entireio-cli__checkpoint-12-cbfeaa512b-0.json"))
    assert [m.role for m in conv.messages] == ["user", "assistant", "user", "assistant", "tool", "assistant", "tool",
                                               "assistant"]
    read = conv.messages[4].tool_result
    assert read.tool_name == "read_file" and read.result == "hello from gemini" and not read.error
    assert read.origin is conv.messages[3].tool_calls[0]
    assert conv.messages[3].tool_calls[0].extra == {"status": "success", "displayName": "ReadFile"}
    assert not conv.warnings


# ------------------------------------------------------------------------------------------------ fixtures
def test_jsonl_session_written_by_gemini_cli() -> None:
    conv = compaction.load(FIXTURES / "session.jsonl")
    assert conv.id == SESSION and conv.source.meta["summary"] == "Fix the checkout total"
    assert conv.source.agent_version == "0.60.1" and conv.source.model == "gemini-2.5-pro"
    ids = [m.meta["id"] for m in conv.messages]
    # the chat opens with the environment context (a checkpoint that adds it); g1 was written twice (tokens, then
    # its tool call): read once, in place; the tool response turns recorded as user messages (u2, u3, u6) repeat
    # the results read from the calls; u4/g4 were rewound; the masking re-recorded every turn (m0-m10) and the
    # compression kept the environment and m7-m10: none of them is read twice
    assert ids == ["environment-context", "u1", "g1", "g1", "g2", "g2", "g3", "u5", "g5", "g5", "g6", "c1", "c2",
                   "u7", "g7"]
    assert conv.messages[0].role == "user" and conv.messages[0].text.startswith("<session_context>")
    assert conv.tool_result_count == 3 and conv.tool_call_count == 3
    shell = conv.messages[5].tool_result
    assert shell.error and shell.text.startswith("Command: pytest -q")  # status "error"
    assert len(conv.llm_call_indices) == 6  # g1 g2 g3 g5 g6 g7; c2 is Gemini CLI's own acknowledgement
    assert conv.messages[12].meta["generated"] is False
    masking, compression = conv.events
    assert (masking.kind, masking.message_index, masking.cleared) == ("masking", 11, ("run_shell_command-2",))
    assert compression.kind == "compaction" and compression.message_index == 11
    assert compression.summary.startswith("<state_snapshot>\nThe checkout test failed")
    assert conv.log_summary_indices == frozenset({11, 12})
    messages = [w.message for w in conv.warnings]
    assert "skipped 1 error, 1 info message(s): notices Gemini CLI showed the person, never sent to the model" in messages
    assert any(m.startswith("2 message(s) rewound or rolled back") for m in messages)
    assert conv.usage[2] == Usage(input_tokens=8200, output_tokens=64) and conv.usage[4].cache_read_tokens == 8100
    rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=20_000)
    assert len(rep.steps) == 6


def test_subagent_session_is_its_own_conversation_linked_by_agent_id() -> None:
    sub = compaction.load(FIXTURES / SESSION / f"{AGENT}.jsonl")
    assert sub.id == AGENT and sub.source.parent == SESSION and sub.source.meta["kind"] == "subagent"
    assert sub.source.meta["directories"] == ["/home/dev/shop"]
    assert len(sub.llm_call_indices) == 2 and sub.tool_call_count == 1
    main = compaction.load(FIXTURES / "session.jsonl")
    starter = next(c for m in main.messages for c in m.tool_calls if c.name == "codebase_investigator")
    assert starter.extra["agentId"] == sub.id


def test_legacy_json_session_written_by_gemini_cli() -> None:
    conv = compaction.load(FIXTURES / "legacy-session.json")
    assert conv.format == "gemini-cli" and conv.source.agent_version == "0.24.0"
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    assert conv.messages[1].reasoning == ("**Listing**\n\nUse ls.",)
    assert conv.usage[3] == Usage(input_tokens=200, output_tokens=18, cache_read_tokens=4900)


# ------------------------------------------------------------------------------------------------ rules
def test_rewind_drops_the_message_and_everything_after_it() -> None:
    conv = load(user("u1", "a"), gemini("g1", "b"), user("u2", "c"), gemini("g2", "d"), {"$rewindTo": "u2"},
                user("u3", "e"), gemini("g3", "f"))
    assert [m.text for m in conv.messages] == ["a", "b", "e", "f"]
    conv = load(user("u1", "a"), gemini("g1", "b"), {"$rewindTo": "nope"}, user("u3", "e"))
    assert [m.text for m in conv.messages] == ["e"]
    assert any("$rewindTo names an unknown message 'nope'" in w.message and w.line == 4 for w in conv.warnings)


def test_set_updates_session_fields_and_a_prefix_checkpoint_rolls_back() -> None:
    conv = load(user("u1", "a"), gemini("g1", "b"), user("u2", "c"), {"$set": {"summary": "S", "kind": "main"}},
                {"$set": {"messages": [user("u1", "a"), gemini("g1", "b")]}}, user("u3", "d"))
    assert [m.text for m in conv.messages] == ["a", "b", "d"] and conv.source.meta["summary"] == "S"
    assert not conv.events


def test_a_resync_checkpoint_changes_nothing() -> None:
    records = [user("u1", "a"), gemini("g1", "b", [call("c1", "read_file", "text")], tokens(100))]
    conv = load(*records, {"$set": {"messages": records}}, gemini("g2", "done", tokens=tokens(120)))
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"] and not conv.events


def test_masking_in_place_marks_the_cleared_results() -> None:
    first = gemini("g1", "", [call("c1", "read_file", "long output " * 20)], tokens(100))
    masked = gemini("g1", "", [call("c1", "read_file", "<masked>")], tokens(100))
    conv = load(user("u1", "a"), first, {"$set": {"messages": [user("u1", "a"), masked]}}, gemini("g2", "ok"))
    assert conv.messages[2].tool_result.text.startswith("long output")  # what the first call read is kept
    assert conv.events[0].kind == "masking" and conv.events[0].cleared == ("c1",)


def test_a_checkpoint_that_only_adds_turns_reads_them_as_messages() -> None:
    opening = {"id": "env", "type": "user", "content": [{"text": "<session_context>linux</session_context>"}]}
    conv = load({"$set": {"messages": [opening]}}, user("u1", "a"),
                {"$set": {"messages": [opening, user("u1", "a"), user("x1", "added")]}}, gemini("g1", "b"))
    assert [m.text for m in conv.messages] == ["<session_context>linux</session_context>", "a", "added", "b"]
    assert not conv.events and not conv.log_summary_indices


def test_a_rewrite_that_only_drops_messages_is_a_truncation() -> None:
    conv = load(user("u1", "a"), gemini("g1", "b"), user("u2", "c"), gemini("g2", "d"),
                {"$set": {"messages": [user("n1", "c"), gemini("n2", "d", model=None)]}}, user("u3", "e"))
    assert [m.text for m in conv.messages] == ["a", "b", "c", "d", "e"]
    assert conv.events[0].kind == "truncation" and conv.events[0].message_index == 4


def test_tool_results_and_parts() -> None:
    mcp = {"id": "c2", "name": "mcp_tool", "args": {}, "status": "success",
           "result": [{"functionResponse": {"id": "c2", "name": "mcp_tool", "response": {"rows": [1, 2]}}},
                      {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}
    conv = load(user("u1", "look"),
                gemini("g1", "", [call("c1", "read_file", "no such file", key="error"), mcp], tokens(50, tool=7)),
                {"id": "u2", "type": "user", "content": [
                    {"functionResponse": {"id": "c3", "name": "late", "response": {"output": "late result"}}},
                    {"text": "and this"}, {"inlineData": {"mimeType": "image/jpeg", "data": "AAAA"}}]},
                gemini("g2", [{"text": "hm", "thought": True}, {"text": "done"}], tokens=tokens(60)))
    error, structured = conv.messages[2].tool_result, conv.messages[3].tool_result
    assert error.error and error.result == "no such file"
    assert structured.result[0] == '{"rows": [1, 2]}' and structured.result[1].mime_type == "image/png"
    late = conv.messages[4]
    assert late.tool_result.call_id == "c3" and late.tool_result.text == "late result"  # no earlier call: a warning
    assert conv.messages[5].texts == ("and this",) and conv.messages[5].images[0].mime_type == "image/jpeg"
    assert conv.messages[6].texts == ("done",) and conv.messages[6].reasoning == ("hm",)
    assert conv.usage[1] == Usage(input_tokens=57, output_tokens=10)  # the built-in tools' prompt is input too
    assert any("'c3' has no earlier call" in w.message for w in conv.warnings)


def test_synthetic_gemini_messages_are_not_llm_calls_and_media_info_is_a_user_turn() -> None:
    conv = load(user("u1", "read the clip"),
                gemini("g1", "", [call("c1", "read_file", "Binary content (audio/mpeg) read successfully.")],
                       tokens(10)),
                gemini("g2", [{"text": "Binary content received. Proceeding with analysis.", "thought": True}],
                       model=None),
                {"id": "i1", "type": "info", "content": [{"inlineData": {"mimeType": "audio/mpeg", "data": "AA"}}]},
                gemini("g3", "It is a song.", tokens=tokens(300)))
    assert conv.llm_call_indices == [1, 5]
    assert conv.messages[3].meta["generated"] is False
    assert conv.messages[4].role == "user" and conv.messages[4].files[0].mime_type == "audio/mpeg"
    assert conv.messages[4].meta["gemini_type"] == "info"


def test_malformed_records_cost_only_themselves() -> None:
    conv = load(user("u1", "a"), ["not", "an", "object"], {"what": 1}, {"id": "x", "type": ["gemini"]},
                gemini("g1", "b", calls="oops"), {"id": "u2", "type": "user", "content": [{"weird": 1}, 7]},
                gemini("g2", "c", [{"id": "c1"}, "junk"]), {"$set": {"messages": "no"}})
    assert [m.text for m in conv.messages if m.role != "tool"] == ["a", "b", "c"]
    text = " | ".join(w.message for w in conv.warnings)
    for fragment in ("expected a JSON object, got array", "not a Gemini CLI record (keys: what)",
                     "of unknown type None", "'toolCalls' is string", "part of unknown kind (weird)",
                     "expected text or a part object, got number", "tool call without a name",
                     "$set.messages is string"):
        assert fragment in text, fragment


# ------------------------------------------------------------------------------------------------ detection
def test_detection_and_override() -> None:
    assert compaction.load(jsonl(META, user("u1", "hi"))).format == "gemini-cli"
    assert compaction.load(jsonl(user("u1", "hi"), gemini("g1", "yo"))).format == "gemini-cli"
    single = {**META, "messages": [user("u1", "hi"), gemini("g1", "yo")]}
    assert compaction.load(json.dumps(single).encode(), name="s.json").format == "gemini-cli"
    with pytest.raises(LoadError, match="does not look like Gemini CLI session"):
        compaction.load(json.dumps({"messages": []}).encode(), format="gemini-cli", name="x.json")
    claude = real_log("claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl")
    assert compaction.load(claude).format == "claude-code"


# ------------------------------------------------------------------------------------------------ property
_IDS = [f"m{i}" for i in range(6)]


@st.composite
def record_streams(draw) -> list[Any]:
    """Random session files: messages (ids from a small pool, so copies and replacements happen), tool calls,
    notices, rewinds and checkpoints of random message subsets."""
    records: list[Any] = [META]
    seen: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["user", "gemini", "gemini", "info", "rewind", "checkpoint", "junk"]))
        mid = draw(st.sampled_from(_IDS))
        if kind == "user":
            record = user(mid, draw(st.sampled_from(["a", "b", ""])))
        elif kind == "gemini":
            calls = [call(f"c{draw(st.integers(0, 3))}", "t", draw(st.sampled_from(["x", "y"])))] if draw(
                st.booleans()) else None
            record = gemini(mid, draw(st.sampled_from(["", "r"])), calls,
                            tokens(draw(st.integers(0, 50))) if draw(st.booleans()) else None,
                            model=draw(st.sampled_from(["m", None])))
        elif kind == "info":
            record = {"id": mid, "type": "info", "content": "note"}
        elif kind == "rewind":
            records.append({"$rewindTo": mid})
            continue
        elif kind == "checkpoint":
            picked = draw(st.lists(st.sampled_from(seen), max_size=6)) if seen else []
            records.append({"$set": {"messages": picked, "lastUpdated": "t"}})
            continue
        else:
            records.append(draw(st.sampled_from([{"$set": 3}, {"id": 5}, [], None, {"$rewindTo": 1}])))
            continue
        seen.append(record)
        records.append(record)
    return records


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=record_streams())
def test_any_record_stream_reads_into_a_replayable_conversation(records: list[Any]) -> None:
    conv = compaction.load(jsonl(*records), name="random.jsonl", format="gemini-cli")
    for event in conv.events:
        assert 0 <= event.message_index <= len(conv.messages)
    assert all(i < len(conv.messages) for i in conv.log_summary_indices)
    assert set(conv.usage) <= set(conv.llm_call_indices)
    rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=500)
    assert len(rep.steps) == len([i for i in conv.llm_call_indices if i not in conv.log_summary_indices])


def test_fixture_files_exist() -> None:
    names = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file())
    assert names == sorted(["session.jsonl", "legacy-session.json", str(Path(SESSION) / f"{AGENT}.jsonl")])
