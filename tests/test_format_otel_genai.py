"""The OpenTelemetry GenAI / OpenInference reader on traces the real instrumentations wrote
(``tools/fixtures/otel_genai_traces.py``: opentelemetry-instrumentation-openai-v2 and
openinference-instrumentation-openai around the ``openai`` client, against a scripted local model)."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT

import compaction
from compaction.formats import detect
from compaction.formats import formats
from compaction.formats import parse_document

FIXTURES = ROOT / "tests" / "fixtures" / "otel-genai"
FILES = ("openai-v2.otlp.json", "openai-v2.console.jsonl", "openinference.otlp.jsonl")
SUMMARY = "Summary of earlier work"


@pytest.mark.parametrize("name", FILES)
def test_one_agent_run_per_file_with_calls_tools_usage_and_the_agents_compaction(name: str) -> None:
    path = FIXTURES / name
    assert detect(parse_document(path.read_bytes(), str(path)))[0].name == "otel-genai"
    conversations = compaction.load_all_conversations(path)
    assert len(conversations) == 1  # the agent span (or OpenInference session.id) groups its four calls
    conv = conversations[0]
    assert [m.role for m in conv.messages] == ["system", "user", "assistant", "tool", "assistant", "tool", "tool",
                                               "assistant", "user", "tool", "assistant"]
    assert len(conv.llm_call_indices) == 4 and set(conv.usage) == set(conv.llm_call_indices)
    assert conv.source.model == "gpt-4.1-mini-2025-04-14"
    assert conv.tool_names == ["read_file", "run_tests"]
    calls = {c.id: c for m in conv.messages for c in m.tool_calls}
    assert calls["call_read_1"].arguments == {"path": "src/window.py"}
    results = [m.tool_result for m in conv.messages if m.tool_result is not None]
    assert [r.call_id for r in results] == ["call_read_1", "call_read_2", "call_tests_1", "call_read_3"]
    assert "KeyError: 'd'" in results[2].text and results[2].tool_name == "run_tests"
    # the agent replaced its old tool outputs by a summary before the last call: a log compaction, the summary
    # left out of replays, the retained last exchange not loaded twice
    (event,) = conv.events
    assert event.kind == "compaction" and event.message_index == 8 and event.summary.startswith(SUMMARY)
    assert conv.log_summary_indices == frozenset({8})
    assert event.post_tokens == conv.usage[10].prompt_tokens
    assert any("not an extension" in w.message for w in conv.warnings)
    replay = compaction.replay(conv, "haystack.tool_result_pruning", context_window=2000)
    assert len(replay.steps) == 4


def test_usage_splits_cached_input() -> None:
    conv = compaction.load(FIXTURES / "openinference.otlp.jsonl")
    second = conv.usage[conv.llm_call_indices[1]]
    spans = [s for line in (FIXTURES / "openinference.otlp.jsonl").read_text().splitlines()
             for r in json.loads(line)["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    llm = sorted((s for s in spans if s["name"] == "ChatCompletion"), key=lambda s: int(s["startTimeUnixNano"]))
    attrs = {a["key"]: a["value"] for a in llm[1]["attributes"]}
    prompt = int(attrs["llm.token_count.prompt"]["intValue"])
    cached = int(attrs["llm.token_count.prompt_details.cache_read"]["intValue"])
    assert (second.input_tokens, second.cache_read_tokens) == (prompt - cached, cached)


def test_structured_attribute_values_and_system_instructions() -> None:
    """GenAI attributes may be structured OTLP values instead of JSON text; system instructions are a system
    message."""
    def text(value: str) -> dict:
        return {"stringValue": value}

    span = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat m", "startTimeUnixNano": "1", "attributes": [
        {"key": "gen_ai.operation.name", "value": text("chat")},
        {"key": "gen_ai.request.model", "value": text("m")},
        {"key": "gen_ai.system_instructions", "value": text(json.dumps([{"type": "text", "content": "Be brief."}]))},
        {"key": "gen_ai.input.messages", "value": text(json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": "hi"}]}]))},
        {"key": "gen_ai.output.messages", "value": text(json.dumps([{"role": "assistant", "parts": [
            {"type": "reasoning", "content": "greet"}, {"type": "text", "content": "Hello."}]}]))},
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "10"}},
        {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "4"}},
        {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "3"}},
    ]}
    data = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    conv = compaction.load(data, name="one.json")
    assert [m.role for m in conv.messages] == ["system", "user", "assistant"]
    assert conv.messages[2].reasoning == ("greet",) and conv.messages[2].text == "Hello."
    usage = conv.usage[2]
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (6, 4, 3)


def test_traces_without_llm_spans_and_damage_fail_cleanly() -> None:
    empty = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "GET /", "attributes": []}]}]}]}).encode()
    with pytest.raises(compaction.LoadError, match="no LLM spans"):
        compaction.load(empty, name="http.json")
    damaged = json.loads((FIXTURES / "openai-v2.otlp.json").read_text())
    for scope in damaged["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for attribute in span["attributes"]:
                if attribute["key"] == "gen_ai.input.messages":
                    attribute["value"] = {"stringValue": "[not json"}
    conv = compaction.load(json.dumps(damaged).encode(), name="damaged.json")
    assert any("expected a JSON array of messages" in w.message for w in conv.warnings)


def test_format_documents_what_it_reads_and_leaves_out() -> None:
    info = formats()["otel-genai"]
    assert info.reads and info.leaves_out
