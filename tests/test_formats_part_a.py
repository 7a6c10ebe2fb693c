"""Readers for Claude Code, Codex, Anthropic Messages, OpenAI Responses and Inspect AI logs.

Each format is checked on its hand-written fixture (tests/fixtures/<format>/), on the real third-party logs in
../shared/real_logs when present, on bad input, and with a mutation fuzz that asserts only ``LoadError`` escapes.
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_LOGS
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from reader_checks import assert_pairs
from reader_checks import json_paths
from reader_checks import roles

import compaction
from compaction.conversation import Image
from compaction.conversation import Usage
from compaction.formats import LoadError
from compaction.formats import detect
from compaction.formats import formats
from compaction.formats import inspect_ai as inspect_format
from compaction.formats import load
from compaction.formats import load_all_conversations
from compaction.formats import parse_document

FIXTURES = Path(__file__).parent / "fixtures"
REAL = REAL_LOGS
MY_FORMATS = ("claude-code", "codex", "anthropic", "openai-responses", "inspect-ai")

CC = FIXTURES / "claude-code" / "session.jsonl"
CODEX = FIXTURES / "codex" / "rollout.jsonl"
CODEX_LEGACY = FIXTURES / "codex" / "rollout-legacy.jsonl"
ANTHROPIC_REQUEST = FIXTURES / "anthropic" / "request.json"
ANTHROPIC_LIST = FIXTURES / "anthropic" / "messages-list.json"
ANTHROPIC_CAPTURE = FIXTURES / "anthropic" / "capture.jsonl"
RESPONSES = FIXTURES / "openai-responses" / "response.json"
RESPONSES_ITEMS = FIXTURES / "openai-responses" / "items.jsonl"
INSPECT = FIXTURES / "inspect-ai" / "log.json"

FIXTURE_FORMATS = {
    CC: "claude-code", CODEX: "codex", CODEX_LEGACY: "codex", ANTHROPIC_REQUEST: "anthropic",
    ANTHROPIC_LIST: "anthropic", ANTHROPIC_CAPTURE: "anthropic", RESPONSES: "openai-responses",
    RESPONSES_ITEMS: "openai-responses", INSPECT: "inspect-ai",
}


def real(relative: str) -> Path:
    """A real log, or a clean skip when ../shared/real_logs is absent."""
    path = REAL / relative
    if not path.exists():
        pytest.skip(f"real log {relative} not available")
    return path


def real_glob(folder: str, pattern: str) -> Path:
    matches = sorted((REAL / folder).glob(pattern)) if REAL.exists() else []
    if not matches:
        pytest.skip(f"no real log matching {folder}/{pattern}")
    return matches[0]


def warning_lines(conv: compaction.Conversation) -> dict[int | None, str]:
    return {w.line: w.message for w in conv.warnings}


# ================================================================================================ Claude Code
@pytest.fixture(scope="module")
def claude_code() -> dict[str, compaction.Conversation]:
    return {c.id: c for c in load_all_conversations(CC)}


def test_claude_code_threads_are_separate_conversations(claude_code):
    assert list(claude_code) == ["main", "agent-a4f2c91", "sidechain"]
    assert all(c.format == "claude-code" for c in claude_code.values())


def test_claude_code_main_thread_messages(claude_code):
    main = claude_code["main"]
    assert roles(main) == "UATTUATATTATUUATATA"
    assert main.llm_call_indices == [1, 5, 7, 10, 14, 16, 18]
    assert main.tool_call_count == 8 and main.tool_result_count == 8
    assert_pairs(main)
    assert not any("never answered" in w.message or "no earlier call" in w.message for w in main.warnings)


def test_claude_code_merges_the_records_of_one_response(claude_code):
    first = claude_code["main"].messages[1]
    # thinking, text and two tool_use records (with a tool result in between) are one LLM output
    assert first.reasoning == ("The pattern only matches a single number-unit pair. I should read the module and see "
                               "who calls it before changing the grammar.",)
    assert first.texts == ("I'll read the parser and look for its callers.",)
    assert [c.name for c in first.tool_calls] == ["Read", "Grep"]
    assert first.meta["message_id"] == "msg_01Hq8vYc2kP3n"
    assert first.meta["uuid"] == "a1c4e2f0-3b5d-4c7e-8f90-1a2b3c4d5e01"
    assert first.meta["timestamp"] == "2026-03-04T09:12:05.640Z"
    assert first.meta["model"] == "claude-sonnet-4-5-20250929"


def test_claude_code_usage_is_the_last_snapshot_with_cache_split(claude_code):
    usage = claude_code["main"].usage
    assert sorted(usage) == [1, 5, 7, 10, 14, 16, 18]
    assert usage[1] == Usage(input_tokens=3, output_tokens=187, cache_read_tokens=0, cache_write_tokens=14210,
                             cache_write_5m_tokens=12210, cache_write_1h_tokens=2000)
    assert usage[18] == Usage(5, 118, 9800, 460, 460, 0)


def test_claude_code_tool_results(claude_code):
    main = claude_code["main"]
    failing, passing = main.messages[8], main.messages[9]  # one user record with two tool_result blocks
    assert failing.tool_result.error and failing.tool_result.tool_name == "Bash"
    assert "1 failed, 2 passed" in failing.tool_result.text
    assert not passing.tool_result.error and passing.tool_result.tool_name == "Read"
    image_result = main.messages[11].tool_result.result
    assert isinstance(image_result, tuple) and image_result[0] == "Screenshot of the CI run (1280x720):"
    assert image_result[1] == Image(mime_type="image/png", source="base64")
    assert main.messages[3].tool_result.result.startswith("src/invoicer/billing.py:14")  # one text block → text


def test_claude_code_meta_records_are_flagged_user_messages(claude_code):
    meta = claude_code["main"].messages[4]
    assert meta.role == "user" and meta.meta["is_meta"] is True
    assert meta.text.startswith("<system-reminder>")
    assert [i for i, m in enumerate(claude_code["main"].messages) if m.meta.get("is_meta")] == [4]


def test_claude_code_compaction_boundary_and_summary(claude_code):
    main = claude_code["main"]
    (event,) = main.events
    assert (event.message_index, event.kind, event.trigger, event.pre_tokens, event.post_tokens) == (
        12, "compaction", "auto", 161873, 9412)
    assert event.summary.startswith("This session is being continued from a previous conversation")
    assert main.log_summary_indices == frozenset({12})
    assert main.messages[12].meta["log_compaction_summary"] is True
    assert main.messages[12].text == event.summary


def test_claude_code_replay_leaves_the_log_summary_out(claude_code):
    main = claude_code["main"]
    rep = compaction.replay(main, "haystack.tool_result_pruning")
    assert [s.message_index for s in rep.steps] == main.llm_call_indices
    for k in range(len(rep.steps)):
        assert 12 not in [item.index for item in rep.context_at(k)]
    with_summary = compaction.replay(main, "haystack.tool_result_pruning", include_log_summaries=True)
    assert 12 in [item.index for item in with_summary.context_at(len(with_summary.steps) - 1)]


def test_claude_code_skipped_records_are_reported_by_line(claude_code):
    lines = warning_lines(claude_code["main"])
    assert "synthetic assistant record" in lines[36]
    assert "repeating an earlier record's uuid" in lines[38]
    assert "unknown type 'x-ide-selection'" in lines[39]
    assert len(claude_code["main"].warnings) == 3  # bookkeeping records (snapshot, progress, system, summary) are quiet


def test_claude_code_sidechains(claude_code):
    agent = claude_code["agent-a4f2c91"]
    assert roles(agent) == "UATA"
    assert agent.messages[1].tool_calls[0].name == "Grep"
    assert_pairs(agent)
    assert agent.usage[3] == Usage(4, 61, 3120, 240, 240, 0)
    older = claude_code["sidechain"]  # no agentId: grouped by its parentUuid chain
    assert roles(older) == "UA"
    assert older.messages[1].text.startswith("Unreleased changes go under")


def test_claude_code_sidechain_chained_to_the_main_thread_stays_a_sidechain():
    records = [json.loads(line) for line in CC.read_text().splitlines()]
    first_side = next(r for r in records if r.get("isSidechain") and "agentId" not in r)
    first_side["parentUuid"] = records[1]["uuid"]  # points into the main thread
    convs = {c.id: c for c in load_all_conversations("\n".join(json.dumps(r) for r in records).encode(),
                                                     name="session.jsonl")}
    assert roles(convs["sidechain"]) == "UA" and len(convs["main"].messages) == 19


def test_claude_code_real_session_with_compaction():
    path = real("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    main, subagent = load_all_conversations(path)  # the Task subagent's records are embedded as progress records
    assert (main.id, subagent.id, subagent.source.parent) == ("main", "agent-a2898e3", "main")
    assert main.tool_call_count == 150 and main.tool_result_count == 150
    message_ids = {json.loads(line)["message"]["id"] for line in path.read_text().splitlines()
                   if json.loads(line).get("type") == "assistant"}
    assert len(main.llm_call_indices) == len(message_ids) == 139
    assert sorted(main.usage) == main.llm_call_indices
    (event,) = main.events
    assert (event.trigger, event.pre_tokens, event.post_tokens) == ("auto", 170251, None)
    assert main.log_summary_indices == frozenset({event.message_index})
    assert event.summary.startswith("This session is being continued")
    assert main.warnings == ()
    assert_pairs(main)


def test_claude_code_real_sessions_and_subagents():
    entire = load(real("claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"))
    assert (entire.tool_call_count, len(entire.llm_call_indices), len(entire.usage)) == (78, 72, 72)
    assert [i for i, m in enumerate(entire.messages) if m.meta.get("is_meta")] != []
    subagent = load(real("claude-code/marot-spotter__4d5611e5__subagent-agent-a2898e3.jsonl"))
    assert (subagent.id, subagent.tool_call_count, subagent.tool_result_count) == ("agent-a2898e3", 33, 33)
    compact = load(real("claude-code/marot-spotter__4d5611e5__subagent-agent-acompact-e1f845.jsonl"))
    assert compact.id == "agent-acompact-e1f845"
    assert roles(compact) == "UUUUA" and sum(bool(m.meta.get("is_meta")) for m in compact.messages) == 3
    assert compact.messages[3].text.startswith("Your task is to create a detailed summary")
    assert compact.usage[4].cache_read_tokens == 164830


# ================================================================================================ Codex
@pytest.fixture(scope="module")
def codex() -> compaction.Conversation:
    return load(CODEX)


def test_codex_messages_and_model_turns(codex):
    assert codex.format == "codex"
    assert roles(codex) == "SSUUATATATATAUATUA"
    assert codex.messages[0].text.startswith("You are Codex, based on GPT-5.")  # session_meta.instructions
    assert codex.messages[1].text.startswith("<permissions instructions>")  # developer message
    assert codex.llm_call_indices == [4, 6, 8, 10, 12, 14, 17]
    assert codex.messages[4].reasoning == ("**Inspecting export formatting**",)
    assert_pairs(codex)


def test_codex_tool_kinds(codex):
    patch = codex.messages[8].tool_calls[0]
    assert patch.name == "apply_patch" and patch.arguments["_raw"].startswith("*** Begin Patch")
    shell = codex.messages[10].tool_calls[0]
    assert shell.name == "local_shell" and shell.arguments["command"][:3] == ["python", "-m", "pytest"]
    envelope = codex.messages[9]
    assert envelope.tool_result.text.startswith('{"output": "Success.')  # kept exactly as the model received it
    assert (envelope.meta["exit_code"], envelope.meta["duration_seconds"]) == (0, 0.0)
    assert codex.messages[11].tool_result.text.startswith("Exit code: 0\nWall time: 0.9 seconds")


def test_codex_usage_skips_repeated_token_counts(codex):
    got = {i: (u.input_tokens, u.cache_read_tokens, u.output_tokens) for i, u in codex.usage.items()}
    assert got == {4: (9214, 0, 58), 6: (489, 9088, 71), 8: (429, 9472, 212), 10: (532, 9856, 41),
                   12: (321, 10240, 66), 14: (294, 10496, 49), 17: (3120, 0, 54)}
    assert codex.source.context_window == 272000


def test_codex_compaction(codex):
    (event,) = codex.events  # the compacted record and its context_compacted event are one compaction
    assert event.message_index == 16 and event.kind == "compaction"
    assert event.summary.startswith("The user asked to fix tools/export_csv.py")
    assert codex.log_summary_indices == frozenset({16})
    assert codex.messages[16].role == "user" and codex.messages[16].text == event.summary
    rep = compaction.replay(codex, "haystack.tool_result_pruning")
    assert 16 not in [item.index for item in rep.context_at(len(rep.steps) - 1)]


def test_codex_unknown_records_are_reported(codex):
    lines = warning_lines(codex)
    assert "unknown type 'x_telemetry'" in lines[49] and "unknown type 'x_future_item'" in lines[48]
    assert len(codex.warnings) == 2


def test_codex_context_compacted_event_alone_marks_a_compaction():
    records = [
        {"type": "session_meta", "payload": {"id": "s", "instructions": None}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "hello"}]}},
        {"type": "event_msg", "payload": {"type": "context_compacted"}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "hi"}]}},
    ]
    conv = load("\n".join(json.dumps(r) for r in records).encode(), name="rollout.jsonl")
    assert roles(conv) == "UA"
    assert [(e.message_index, e.summary) for e in conv.events] == [(1, None)]
    assert conv.log_summary_indices == frozenset()


def test_codex_legacy_rollout():
    conv = load(CODEX_LEGACY)
    assert conv.format == "codex" and roles(conv) == "SUATA"
    assert conv.messages[0].text == "Prefer small, reviewable patches. Run the tests you touch."
    assert conv.messages[3].meta["exit_code"] == 2
    assert conv.usage == {}


def test_codex_real_rollout():
    conv = load(real_glob("codex-cli", "*.jsonl"))
    assert conv.format == "codex"
    assert conv.tool_call_count == 39 and conv.tool_result_count == 39
    assert len(conv.llm_call_indices) == 39 and sorted(conv.usage) == conv.llm_call_indices
    first = conv.usage[conv.llm_call_indices[0]]
    assert (first.input_tokens, first.cache_read_tokens, first.output_tokens) == (10128, 0, 37)
    last = conv.usage[conv.llm_call_indices[-1]]
    assert (last.input_tokens, last.cache_read_tokens, last.output_tokens) == (52645 - 52096, 52096, 731)
    assert conv.source.context_window == 258400
    assert conv.warnings == ()
    assert_pairs(conv)


# ================================================================================================ Anthropic
def test_anthropic_request_body():
    conv = load(ANTHROPIC_REQUEST)
    assert conv.format == "anthropic"
    assert roles(conv) == "SUATTUATATA"
    assert conv.messages[0].text.startswith("You are the support assistant for Parcelly")
    first = conv.messages[1]
    assert len(first.images) == 1 and first.files[0].filename == "receipt-PCL-88213.pdf"
    assert first.files[0].mime_type == "application/pdf"
    assert conv.messages[2].reasoning[0].startswith("Damaged item on arrival")
    # tool_result blocks → one tool message each, the other text block → a following user message
    assert [conv.messages[i].tool_result.tool_name for i in (3, 4)] == ["get_order", "search_help_center"]
    assert conv.messages[4].tool_result.result == (
        "[1] Items damaged in transit (updated 2026-01-10): Report within 14 days of delivery with a photo. "
        "Accessories under 50 EUR are refunded without return.",
        "[2] Refund destinations: refunds go back to the original payment method. Gift card refunds are only "
        "possible for orders paid by gift card.")
    assert conv.messages[5].text == "If it's easier, you can put it on my gift card balance instead."
    assert conv.messages[7].tool_result.error and not conv.messages[9].tool_result.error
    assert [t.name for t in conv.tools] == ["get_order", "search_help_center", "issue_refund"]
    assert conv.tools[0].parameters["required"] == ["order_id"]
    assert conv.usage == {} and conv.warnings == ()
    assert_pairs(conv)


def test_anthropic_bare_message_list_with_server_tools():
    conv = load(ANTHROPIC_LIST)
    assert conv.format == "anthropic" and roles(conv) == "UATA"
    answer = conv.messages[1]
    assert [c.name for c in answer.tool_calls] == ["days_between"]  # the server-side web search is not a client call
    assert json.loads(answer.texts[0])["type"] == "server_tool_use"
    assert answer.texts[2].startswith("The latest stable release")
    assert conv.messages[2].tool_result.text == "300"


def test_anthropic_capture_takes_the_longest_request_and_maps_usage():
    conv = load(ANTHROPIC_CAPTURE)
    assert conv.format == "anthropic"
    assert roles(conv) == "SUATA"  # the main thread, not the title request nor the token count
    assert conv.messages[0].texts[0] == "You are Claude Code, Anthropic's official CLI for Claude."
    assert conv.messages[4].text.startswith("The test is flaky because jitter")  # the final response, appended
    assert conv.usage == {2: Usage(4, 112, 0, 5210, 5210, 0), 4: Usage(6, 87, 5210, 402, 0, 402)}
    assert [t.name for t in conv.tools] == ["Bash", "Read"]
    assert_pairs(conv)


def test_anthropic_capture_rebuilds_a_streamed_response():
    lines = ANTHROPIC_CAPTURE.read_text().splitlines()
    streamed_only = "\n".join(lines[:2]).encode()  # the last pair is the streamed call
    conv = load(streamed_only, name="capture.jsonl")
    assert roles(conv) == "SUA"
    reply = conv.messages[2]
    assert reply.texts == ("I'll run the test repeatedly to reproduce the failure.",)
    assert reply.tool_calls[0].arguments["description"] == "Repeat the flaky test"
    assert conv.usage == {2: Usage(4, 112, 0, 5210, 5210, 0)}


def test_anthropic_real_request_body():
    conv = load(real("anthropic-messages/badlogic-lemmy__claude-trace-test-traffic__longest-request-body.json"))
    assert conv.format == "anthropic"
    assert conv.tool_call_count == 11 and conv.tool_result_count == 11
    assert len(conv.messages) == 28 and conv.messages[0].role == "system"
    assert [t.name for t in conv.tools] == ["Read"]
    assert conv.warnings == ()
    assert_pairs(conv)


# ================================================================================================ OpenAI Responses
def test_responses_request_and_response():
    conv = load(RESPONSES)
    assert conv.format == "openai-responses"
    assert roles(conv) == "SUATATUAT"
    assert conv.messages[0].text.startswith("You are a data analyst for Northwind Outdoor.")
    assert conv.messages[2].reasoning == ("**Querying quarterly revenue per customer**",)
    assert conv.messages[2].tool_calls[0].arguments["query"].startswith("SELECT c.name")
    assert conv.messages[5].tool_result.text.startswith("name,last_order,returns")  # output as parts
    assert conv.messages[6].images[0].mime_type == "image/png" and conv.messages[6].images[0].detail == "low"
    final = conv.messages[7]  # reasoning + hosted web search + message: one LLM call, the search's result after it
    assert final.reasoning == ("**Checking for public news about Alpine Supply**",)
    (search,) = final.tool_calls
    assert (search.id, search.name, dict(search.arguments)) == (
        "ws_0a91c2e6b7d34f15", "web_search", {"type": "search", "query": "Alpine Supply GmbH insolvency 2025"})
    assert final.texts == (conv.messages[7].texts[0],) and final.texts[0].startswith("Largest Q3 to Q4 2025 drops")
    assert conv.messages[8].tool_result.origin is search and conv.messages[8].meta["stand_in"] is True
    assert conv.usage == {7: Usage(input_tokens=921, output_tokens=356, cache_read_tokens=1920)}
    assert [t.name for t in conv.tools] == ["run_sql"]
    assert conv.warnings == ()
    assert_pairs(conv)


def test_responses_jsonl_items():
    conv = load(RESPONSES_ITEMS)
    assert conv.format == "openai-responses"
    assert roles(conv) == "SUATATUA"
    assert conv.messages[2].reasoning == (
        "The link lives in docs/install.md; replace /setup with /getting-started and run the checker.",)
    assert conv.messages[2].tool_calls[0].arguments["_raw"].startswith("*** Begin Patch")
    assert conv.messages[5].tool_result.tool_name == "local_shell"
    assert conv.messages[5].tool_result.text == "Scanned 214 links, 0 broken."
    assert [(e.message_index, e.kind) for e in conv.events] == [(6, "compaction")]
    assert "item_reference 'msg_4a99'" in warning_lines(conv)[11]
    assert_pairs(conv)


# ================================================================================================ Inspect AI
@pytest.fixture(scope="module")
def inspect_log() -> dict[str, compaction.Conversation]:
    return {c.id: c for c in load_all_conversations(INSPECT)}


def test_inspect_one_conversation_per_sample_and_epoch(inspect_log):
    assert list(inspect_log) == ["fizz-003:1", "7:2"]
    assert load(INSPECT, conversation="7:2").id == "7:2"


def test_inspect_sample_messages(inspect_log):
    conv = inspect_log["fizz-003:1"]
    assert roles(conv) == "SUATATUATA"
    assert conv.messages[1].text.startswith("Write a function `wrap(text: str, width: int)")  # attachment resolved
    assert conv.messages[2].reasoning[0].startswith("I should look at the tests first")
    assert conv.messages[2].texts == ("Let me read the tests first.",)
    timeout = conv.messages[5].tool_result
    assert timeout.error and timeout.text == "Error: Command timed out before completing."
    assert "4 passed in 0.02s" in conv.messages[8].tool_result.text
    assert [t.name for t in conv.tools] == ["bash", "python"]
    assert conv.warnings == ()
    assert_pairs(conv)


def test_inspect_usage_from_model_events(inspect_log):
    conv = inspect_log["fizz-003:1"]
    # matched by message id; the summarization call (no matching message) is not attributed to any step
    assert conv.usage == {2: Usage(812, 95, 0, 0, 0), 4: Usage(96, 61, 812, 636, 636), 7: Usage(431, 38),
                          9: Usage(22, 14, 431, 559, 559)}
    openai_style = inspect_log["7:2"]  # no message ids: in order; cached tokens are inside input_tokens
    assert openai_style.usage == {1: Usage(296, 18, 1024), 3: Usage(125, 33, 1280)}


def test_inspect_compaction(inspect_log):
    conv = inspect_log["fizz-003:1"]
    (event,) = conv.events
    assert (event.message_index, event.pre_tokens, event.post_tokens) == (6, 1702, 431)
    assert event.summary.startswith("[CONTEXT COMPACTION SUMMARY]")
    assert conv.log_summary_indices == frozenset({6})
    rep = compaction.replay(conv, "haystack.tool_result_pruning")
    assert 6 not in [item.index for item in rep.context_at(len(rep.steps) - 1)]


def _eval_archive(samples: list[dict[str, Any]], extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "wrap_text"}}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
        archive.writestr("summaries.json", "[]")
    return buffer.getvalue()


def test_inspect_eval_archive(tmp_path):
    samples = json.loads(INSPECT.read_text())["samples"]
    path = tmp_path / "run.eval"
    path.write_bytes(_eval_archive(samples, {"samples/broken_epoch_1.json": b"{not json"}))
    convs = load_all_conversations(path)
    assert [c.id for c in convs] == ["fizz-003:1", "7:2"]
    from_json = load_all_conversations(INSPECT)
    assert [roles(c) for c in convs] == [roles(c) for c in from_json]
    assert convs[0].usage == from_json[0].usage and convs[0].events == from_json[0].events
    assert any(w.field == "samples/broken_epoch_1.json" for w in convs[0].warnings)


def test_inspect_eval_archive_size_cap(tmp_path, monkeypatch):
    samples = json.loads(INSPECT.read_text())["samples"]
    path = tmp_path / "big.eval"
    path.write_bytes(_eval_archive(samples))
    monkeypatch.setattr(inspect_format, "MAX_ARCHIVE_BYTES", 1000)
    with pytest.raises(LoadError, match="archive too large"):
        load(path)


def test_inspect_real_log():
    (conv,) = load_all_conversations(real_glob("inspect-ai", "*.json"))
    assert conv.format == "inspect-ai" and conv.id == "1:1"
    assert conv.tool_call_count == 4 and conv.tool_result_count == 4
    assert len(conv.llm_call_indices) == 5 and sorted(conv.usage) == conv.llm_call_indices
    assert conv.usage[1] == Usage(1124, 23, 0)
    assert conv.usage[3] == Usage(1568 - 1024, 17, 1024)
    assert len(conv.tools) == 8 and not any(m.text.startswith("attachment://") for m in conv.messages)
    assert_pairs(conv)


# ================================================================================================ detection
@pytest.mark.parametrize("path", list(FIXTURE_FORMATS), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_detection_picks_the_fixture_format(path):
    info, _ = detect(parse_document(path.read_bytes(), str(path)))
    assert info.name == FIXTURE_FORMATS[path]


REAL_FORMATS = {
    "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl": "claude-code",
    "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl": "claude-code",
    "claude-code/marot-spotter__4d5611e5__subagent-agent-a2898e3.jsonl": "claude-code",
    "claude-code/marot-spotter__4d5611e5__subagent-agent-acompact-e1f845.jsonl": "claude-code",
    "anthropic-messages/badlogic-lemmy__claude-trace-test-traffic__longest-request-body.json": "anthropic",
    "inspect-ai/UKGovernmentBEIS-inspect_ai__tests-analysis-test_logs__2025-05-12T20-27-36-04-00_browser.json":
        "inspect-ai",
}


@pytest.mark.parametrize("relative", list(REAL_FORMATS))
def test_detection_picks_the_real_log_format(relative):
    path = real(relative)
    info, _ = detect(parse_document(path.read_bytes(), str(path)))
    assert info.name == REAL_FORMATS[relative]


def test_detection_picks_codex_for_the_real_rollout():
    path = real_glob("codex-cli", "*.jsonl")
    assert detect(parse_document(path.read_bytes(), str(path)))[0].name == "codex"


@pytest.mark.parametrize("relative", [
    "openai-chat/OpenHands__llm_completions__claude-3-5-sonnet__django-10097.json",
    "openai-plain/mini-swe-agent__astropy-12907.json",
    "openai-plain/tau-bench__task2-trial1.json",
    "openhands/OpenHands__tests-runtime-trajs__basic_gui_mode.json",
    "tau2-bench/sierra-research-tau2-bench__pr17__telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json",
])
def test_these_readers_leave_other_formats_alone(relative):
    doc = parse_document(real(relative).read_bytes(), relative)
    known = formats()
    for name in MY_FORMATS:
        assert known[name].detect(doc) is not None, name


def test_format_override():
    assert load(CODEX, format="codex").format == "codex"
    with pytest.raises(LoadError, match="does not look like OpenAI Codex CLI rollout"):
        load(CC, format="codex")
    with pytest.raises(LoadError, match="unknown format 'nope'"):
        load(CC, format="nope")


def test_formats_are_registered_with_metadata():
    known = formats()
    for name in MY_FORMATS:
        info = known[name].to_json()
        assert info["description"] and info["extensions"] and info["writable"] is False
    assert known["inspect-ai"].extensions == (".json", ".eval")
    order = list(known)
    assert all(order.index(n) < order.index("haystack") for n in MY_FORMATS)


# ================================================================================================ bad input
def _without_line(path: Path, marker: str) -> tuple[bytes, int]:
    """The file with the first line containing ``marker`` cut in half, and that line's number."""
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if marker in line)
    lines[number - 1] = lines[number - 1][: len(lines[number - 1]) // 2]
    return "\n".join(lines).encode(), number


def test_a_malformed_claude_code_line_costs_only_itself():
    data, number = _without_line(CC, '"isMeta":true')
    main = load(data, name="session.jsonl")
    assert roles(main) == "UATTATATTATUUATATA"  # only the meta message is gone
    assert "not valid JSON" in warning_lines(main)[number]
    assert main.tool_call_count == 8


def test_a_malformed_codex_line_costs_only_itself():
    lines = CODEX.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if '"call_Wm4nB8vXc3"' in line and "function_call\"" in line)
    lines[number - 1] = lines[number - 1][:40]
    conv = load("\n".join(lines).encode(), name="rollout.jsonl")
    assert "not valid JSON" in warning_lines(conv)[number]
    assert conv.tool_call_count == 4 and conv.tool_result_count == 5
    assert any("has no earlier call" in w.message for w in conv.warnings)


def test_malformed_records_cost_only_themselves_with_a_field():
    records = [json.loads(line) for line in CC.read_text().splitlines()]
    records[1]["message"] = "not an object"  # the first user prompt
    records[2]["message"]["content"] = [{"type": "tool_use", "input": {}}, 7]  # a tool_use without name, a number
    data = "\n".join(json.dumps(r) for r in records).encode()
    main = load(data, name="session.jsonl")
    lines = [(w.line, w.field) for w in main.warnings]
    assert (2, "message") in lines and (3, "name") in lines and (3, "content") in lines
    assert main.messages[0].role == "assistant"


def test_unknown_format_names_every_format_tried():
    with pytest.raises(LoadError) as error:
        load(b'{"foo": [1, 2, 3]}', name="mystery.json")
    message = str(error.value)
    assert message.startswith("mystery.json: unknown log format. Tried:")
    for name in MY_FORMATS:
        assert f"{name}: " in message


@pytest.mark.parametrize(("data", "expected"), [
    (b"", "the file is empty"),
    (b"  \n\n ", "the file is empty"),
    (b'{"messages": [{"role": "user", "content": "caf\xe9"}]}', "not UTF-8 text"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00", "binary file"),
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (b"this is not json\nnor is this\n", "unknown log format. Tried: claude-code: "),
])
def test_unreadable_input_is_a_clear_load_error(data, expected):
    with pytest.raises(LoadError, match=expected):
        load(data, name="input.jsonl")


def test_a_deeply_nested_record_costs_only_its_line():
    deep = '{"type":"user","sessionId":"s","uuid":"deep","message":{"role":"user","content":' + "[" * 50_000 + \
        "]" * 50_000 + "}}"
    data = CC.read_text().rstrip("\n") + "\n" + deep + "\n"
    conv = load(data.encode(), name="session.jsonl")
    assert len(conv.messages) == 19
    assert any("not valid JSON" in w.message for w in conv.warnings)


@pytest.mark.parametrize("data", [b"PK\x03\x04 this is no zip archive at all", b"plain text renamed to .eval"])
def test_an_eval_file_that_is_not_a_zip_is_a_load_error(tmp_path, data):
    path = tmp_path / "run.eval"
    path.write_bytes(data)
    with pytest.raises(LoadError) as error:
        load(path)
    assert str(error.value).startswith(str(path))


def test_an_eval_zip_that_is_not_forced_gives_the_zip_reason(tmp_path):
    path = tmp_path / "run.eval"
    path.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(LoadError, match="not a valid .eval \\(zip\\) archive"):
        load(path, format="inspect-ai")
    other = tmp_path / "other.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    other.write_bytes(buffer.getvalue())
    with pytest.raises(LoadError, match="without Inspect members"):
        load(other)


def test_an_inspect_log_without_samples_is_a_load_error():
    value = json.loads(INSPECT.read_text())
    value["samples"] = None
    with pytest.raises(LoadError, match="holds no samples"):
        load(json.dumps(value).encode(), name="log.json")


def test_a_capture_without_requests_is_a_load_error():
    with pytest.raises(LoadError):
        load(b'{"request": {"body": {"messages": "no"}}, "response": {}}\n{"request": 1}\n', name="trace.jsonl")


# ================================================================================================ fuzz
_WRONG_VALUES = [None, 0, -1, 2.5, True, "", "x", [], {}, [None], {"type": "text"}, {"type": "tool_result"},
                 [{"type": "function_call"}], "attachment://missing"]


def _mutate(value: Any, data: st.DataObject) -> Any:
    """Replace or delete one node of a JSON value (wrong types, missing keys)."""
    paths = json_paths(value, per_list=30)
    path = data.draw(st.sampled_from(paths))
    if not path:
        return copy.deepcopy(data.draw(st.sampled_from(_WRONG_VALUES)))
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(data.draw(st.sampled_from(_WRONG_VALUES)))
    return value


def _fuzzed(path: Path, data: st.DataObject) -> bytes:
    raw = path.read_bytes()
    action = data.draw(st.sampled_from(["truncate", "mutate", "mutate", "mutate", "drop_lines"]))
    if action == "truncate":
        return raw[: data.draw(st.integers(min_value=0, max_value=len(raw)))]
    if path.suffix == ".jsonl":
        lines = raw.decode().splitlines()
        if action == "drop_lines":
            keep = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
            return "\n".join(line for line, k in zip(lines, keep, strict=True) if k).encode()
        for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
            i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines[i] = json.dumps(_mutate(json.loads(lines[i]), data))
        return "\n".join(lines).encode()
    value = json.loads(raw)
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        value = _mutate(value, data)
    return json.dumps(value).encode()


@pytest.mark.parametrize("path", list(FIXTURE_FORMATS), ids=lambda p: f"{p.parent.name}/{p.name}")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_fixtures_only_ever_raise_load_error(path, data):
    mutated = _fuzzed(path, data)
    try:
        conversations = load_all_conversations(mutated, name=path.name)
    except LoadError as error:
        # a reader bug is wrapped as an "internal" LoadError by the loader: that is a failure here
        assert not getattr(error, "internal", False), str(error)
        return
    for conv in conversations:
        conv.summary()
        assert all(0 <= i < len(conv.messages) and conv.messages[i].role == "assistant" for i in conv.usage)
        assert all(0 <= e.message_index <= len(conv.messages) for e in conv.events)


def test_fuzz_covers_every_format():
    assert Counter(FIXTURE_FORMATS.values()).keys() == set(MY_FORMATS)
