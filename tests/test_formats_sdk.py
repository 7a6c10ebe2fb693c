"""Agent-SDK log formats: Pydantic AI message histories, Google ADK sessions, OpenAI Agents SDK session databases
and RunState JSON. The fixtures are the libraries' own output (tools/fixtures/*.py ran them offline on stub
models)."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

import compaction
from compaction.formats import LoadError
from compaction.formats import parse_document

FIXTURES = Path(__file__).parent / "fixtures"
PAI = FIXTURES / "pydantic-ai"
ADK = FIXTURES / "google-adk"
AGENTS = FIXTURES / "openai-agents"


def _roles(conv: compaction.Conversation) -> str:
    return "".join({"system": "S", "user": "U", "assistant": "A", "tool": "T"}[m.role] for m in conv.messages)


# ------------------------------------------------------------------------------------------------- Pydantic AI
def test_pydantic_ai_run_reads_every_part_kind_the_model_saw() -> None:
    conv = compaction.load(PAI / "fix_run.json")
    assert conv.format == "pydantic-ai"
    assert _roles(conv) == "SSUATTATATUATATAUA"
    assert conv.messages[0].text.startswith("You are a careful coding agent") and conv.messages[0].meta["instructions"]
    assert conv.messages[1].text == "Repository: demo-app (Python 3.12)."
    prompt = conv.messages[2]
    assert [(i.source, i.mime_type) for i in prompt.images] == [("https://example.org/ci.png", "image/png"),
                                                                 ("base64", "image/png")]
    first = conv.messages[3]
    assert first.reasoning == ("The test fails; read both files first.",)
    assert [c.id for c in first.tool_calls] == ["toolu_01", "toolu_02"]
    assert conv.messages[4].tool_result.origin is first.tool_calls[0]
    retried = conv.messages[7].tool_result
    assert retried.error and retried.text == "target 'tests/' is a folder; pass a test file"
    assert conv.messages[7].meta["outcome"] == "retried"
    search = conv.messages[8]  # the provider's own web search stays inside its response, as text
    assert '"part_kind":"builtin-tool-call"' in search.texts[0] and "builtin-tool-return" in search.texts[1]
    assert conv.messages[9].tool_result.text.startswith('{"passed":0,"failed":1')
    assert conv.messages[15].files[0].mime_type == "text/x-diff"
    assert conv.messages[16].text == "say what you changed and whether the tests pass" and conv.messages[16].meta["retry"]
    assert len(conv.llm_call_indices) == 7 and conv.tool_call_count == 6 and conv.tool_result_count == 6
    assert not conv.warnings


def test_pydantic_ai_usage_splits_cache_tokens_out_of_input_and_names_the_model() -> None:
    conv = compaction.load(PAI / "fix_run.json")
    assert sorted(conv.usage) == conv.llm_call_indices
    first, second = conv.usage[3], conv.usage[6]
    assert (first.input_tokens, first.cache_write_tokens, first.cache_read_tokens, first.output_tokens) == (
        1000, 200, 0, 80)  # the log says input_tokens 1200, which includes the 200 written to the cache
    assert (second.input_tokens, second.cache_read_tokens, second.prompt_tokens) == (750, 900, 1650)
    assert conv.source.model == "claude-sonnet-4-5"
    assert conv.messages[3].meta["provider"] == "anthropic"


def test_pydantic_ai_compaction_parts_are_log_compactions_with_their_summaries() -> None:
    conv = compaction.load(PAI / "fix_run.json")
    (event,) = conv.events
    assert event.kind == "compaction" and event.message_index == 10
    assert conv.log_summary_indices == frozenset({10})
    assert conv.messages[10].role == "user" and conv.messages[10].text == event.summary
    assert event.summary.startswith("Summary: src/app.py's add() returns a - b")
    assert conv.messages[11].tool_calls[0].name == "write_file"  # the rest of that response

    continued = compaction.load(PAI / "continued_run.json")
    assert _roles(continued) == "SUUATA"  # the instructions go first, ahead of the application's summary
    app_summary, opaque = continued.events
    assert app_summary.message_index == 1 and app_summary.summary.startswith("The user asked to fix")
    assert continued.log_summary_indices == frozenset({1})
    assert opaque.summary is None and opaque.message_index == 3  # OpenAI's compaction is encrypted
    replay = compaction.replay(continued, "haystack.tool_result_pruning", context_window=2000)
    assert len(replay.steps) == 2


def test_pydantic_ai_legacy_history_retry_prompts_read_as_the_model_got_them() -> None:
    conv = compaction.load(PAI / "legacy_v1_run.json")
    assert conv.format == "pydantic-ai" and _roles(conv) == "SUATATAUA"
    retry = conv.messages[3].tool_result
    assert retry.error and retry.origin.id == "c1" and retry.tool_name == "convert"
    assert retry.text.startswith("2 validation errors:\n```json\n[") and retry.text.endswith(
        "Fix the errors and try again.")
    assert conv.messages[7].text == "Validation feedback:\ngive the price to the cent\n\nFix the errors and try again."
    assert conv.usage[2].input_tokens == 300 and conv.source.model == "gpt-4o"


def test_pydantic_ai_damaged_parts_cost_only_themselves() -> None:
    history = json.loads((PAI / "legacy_v1_run.json").read_text())
    history[1]["parts"].append({"part_kind": "hologram", "content": "?"})
    history[1]["parts"].append({"part_kind": "hologram"})
    history[2]["parts"] = "not a list"
    history[3]["parts"][0]["args"] = "{broken"
    history.append(["not", "a", "message"])
    conv = compaction.load(json.dumps(history).encode(), name="damaged.json")
    messages = [w.message for w in conv.warnings]
    assert "skipped 2 parts of unknown type 'hologram'" in messages
    assert any("message 2: skipped, 'parts' is string" in m for m in messages)
    assert any("not valid JSON; kept as raw text" in m for m in messages)
    assert any("message 8: skipped, expected an object" in m for m in messages)
    assert conv.messages[3].tool_calls[0].arguments == {"_raw": "{broken"}
    with pytest.raises(LoadError, match="does not look like Pydantic AI"):
        compaction.load(b'{"kind": "request"}', format="pydantic-ai", name="one.json")


# ------------------------------------------------------------------------------------------------- Google ADK
def test_adk_session_reads_content_parts_tool_results_and_usage() -> None:
    conv = compaction.load(ADK / "support.session.json")
    assert conv.format == "google-adk" and conv.id == "s-support-1"
    assert _roles(conv) == "UATTAUATAUUATAUAU"
    assert conv.messages[0].images[0].mime_type == "image/png"
    call = conv.messages[1]
    assert call.reasoning == ("The user wants to know where order 1042 is.",)
    assert [(c.id, c.name) for c in call.tool_calls] == [("adk-call-1", "get_order"), ("adk-call-2", "get_shipping")]
    assert conv.messages[2].tool_result.origin is call.tool_calls[0]
    assert json.loads(conv.messages[2].tool_result.text)["status"] == "shipped"
    refund = conv.messages[7].tool_result
    assert refund.error and refund.text == '{"error":"refund service unavailable (503)"}'
    assert '"executable_code"' in conv.messages[8].texts[0] and '"code_execution_result"' in conv.messages[8].texts[1]
    assert conv.messages[8].texts[2].startswith("The refund service is down")
    assert sorted(conv.usage) == conv.llm_call_indices and len(conv.llm_call_indices) == 7
    assert conv.usage[1].input_tokens == 340 and conv.usage[1].output_tokens == 45 + 14  # thoughts are output
    assert conv.usage[6].cache_read_tokens == 256
    assert conv.source.model == "gemini-2.5-flash-001"
    assert conv.source.meta["app_name"] == "shop_support" and conv.source.meta["user_id"] == "u-7"
    assert not conv.warnings


def test_adk_events_compaction_summaries_are_log_compactions() -> None:
    conv = compaction.load(ADK / "support.session.json")
    first, second = conv.events
    assert (first.message_index, second.message_index) == (9, 16)
    assert conv.log_summary_indices == frozenset({9, 16})
    assert conv.messages[9].text == first.summary and first.summary.startswith("Conversation Language: English.")
    assert "start_timestamp" in conv.messages[9].meta and conv.messages[9].meta["author"] == "user"
    replay = compaction.replay(conv, "haystack.tool_result_pruning", context_window=2000)
    assert len(replay.steps) == 7


def test_adk_snake_case_dump_reads_the_same_as_the_camel_case_export() -> None:
    camel = compaction.load(ADK / "support.session.json")
    snake = compaction.load(ADK / "support.model_dump.json")
    assert [m.same_content(n) for m, n in zip(camel.messages, snake.messages, strict=True)] == [True] * len(
        camel.messages)
    assert camel.usage == snake.usage and camel.events == snake.events


def test_adk_jsonl_stream_splits_sessions_and_skips_partial_and_failed_events() -> None:
    lines = (ADK / "support.events.jsonl").read_text().splitlines()
    conv = compaction.load(ADK / "support.events.jsonl")
    assert conv.format == "google-adk" and len(conv.llm_call_indices) == 7  # adk run --jsonl prints agent events
    other = [json.dumps({**json.loads(line), "session_id": "s-2"}) for line in lines[:3]]
    partial = json.dumps({**json.loads(lines[0]), "partial": True})
    failed = json.dumps({"author": "support_agent", "invocationId": "e-9", "errorCode": "429",
                         "errorMessage": "quota exceeded", "session_id": "s-2"})
    data = "\n".join([*lines, partial, *other, failed]).encode()
    first, second = compaction.load_all_conversations(data, name="two.jsonl")
    assert (first.id, second.id) == ("s-support-1", "s-2")
    assert any("1 partial (streaming) event(s) skipped" in w.message for w in first.warnings)
    assert any("the model call failed (429: quota exceeded)" in w.message for w in second.warnings)
    assert len(second.llm_call_indices) == 2


def test_adk_list_of_events_and_bad_content() -> None:
    events = json.loads((ADK / "support.session.json").read_text())["events"][:4]
    events[3]["content"] = {"role": "model", "parts": "text"}
    events[1]["content"]["parts"].append(7)
    conv = compaction.load(json.dumps(events).encode(), name="events.json")
    assert conv.format == "google-adk" and _roles(conv) == "UATT"
    messages = [w.message for w in conv.warnings]
    assert any("event 3: skipped, 'content' has no 'parts' list" in m for m in messages)
    assert any("event 1 part 3: skipped, expected an object, got number" in m for m in messages)


# ------------------------------------------------------------------------------------------------- Agents SDK
def test_agents_sqlite_database_is_a_binary_document_others_stay_refused() -> None:
    data = (AGENTS / "agents.db").read_bytes()
    assert parse_document(data, "agents.db").kind == "sqlite"
    assert data[18:20] == b"\x02\x02"  # the SDK writes in WAL mode: the reader must open it all the same
    with pytest.raises(LoadError, match="binary file"):
        parse_document(b"\x7fELF\x02\x01\x01\x00" + bytes(64), "a.out")


def test_agents_sqlite_sessions_are_conversations_with_turn_usage() -> None:
    research, ops = compaction.load_all_conversations(AGENTS / "agents.db")
    assert (research.format, research.id, ops.id) == ("openai-agents", "research-1", "ops-2")
    assert _roles(research) == "UATTATAUATAUA"
    assert [c.id for c in research.messages[1].tool_calls] == ["call_002", "call_003"]
    assert research.messages[1].reasoning == ("Search first, then fetch the best hit.",)
    assert research.messages[9].tool_result.text == "An error occurred while running the tool. Please try again."
    turns = research.source.meta["turn_usage"]
    assert [(t["turn"], t["requests"]) for t in turns] == [(1, 3), (2, 2), (3, 1)]
    # only the one-request turn's usage can be attached to a call; the others stay per turn
    assert list(research.usage) == [12]
    assert research.usage[12].prompt_tokens == turns[2]["input_tokens"]
    assert research.usage[12].cache_read_tokens == turns[2]["input_tokens_details"]["cached_tokens"]
    assert not research.warnings and not ops.warnings


def test_agents_compaction_session_history_has_its_compaction_item() -> None:
    ops = compaction.load(AGENTS / "agents.db", conversation="ops-2")
    assert _roles(ops) == "UUATA"  # the compacted history: the user messages, the opaque item, the next turn
    (event,) = ops.events
    assert event.kind == "compaction" and event.message_index == 1 and event.summary is None
    assert not ops.usage  # a plain SQLiteSession stores no usage
    replay = compaction.replay(ops, "haystack.tool_result_pruning", context_window=2000)
    assert len(replay.steps) == 2


def test_agents_run_state_usage_goes_to_the_call_of_each_model_response() -> None:
    conv = compaction.load(AGENTS / "research-1.run_state.json")
    assert conv.format == "openai-agents" and _roles(conv) == "UATTATAUATAUA"
    state = json.loads((AGENTS / "research-1.run_state.json").read_text())
    (response,) = state["model_responses"]
    assert list(conv.usage) == [12]
    assert conv.usage[12].prompt_tokens == response["usage"]["input_tokens"]
    assert conv.usage[12].cache_read_tokens == 128
    assert conv.source.meta == {"schema_version": state["$schemaVersion"], "agent": "researcher",
                                "current_turn": 1}


def test_agents_bare_item_list_reads_as_responses_items_with_the_same_messages() -> None:
    items = compaction.load(AGENTS / "research-1.items.json")
    research = compaction.load(AGENTS / "agents.db")
    assert items.format == "openai-responses"
    assert [m.same_content(n) for m, n in zip(items.messages, research.messages, strict=True)] == [True] * 13


def test_agents_database_from_bytes_with_custom_tables(tmp_path: Path) -> None:
    path = tmp_path / "custom.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE my_sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMP)")
        conn.execute("CREATE TABLE my_items (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
                     "message_data TEXT NOT NULL, created_at TIMESTAMP)")
        rows = [("a", json.dumps({"role": "user", "content": "hi"})),
                ("a", json.dumps({"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": "hello"}]})),
                ("b", json.dumps({"role": "user", "content": "other"})), ("b", "{not json"), ("b", "[1]")]
        conn.executemany("INSERT INTO my_items (session_id, message_data) VALUES (?, ?)", rows)
    first, second = compaction.load_all_conversations(path.read_bytes(), name="upload.sqlite")
    assert (first.id, _roles(first), second.id, _roles(second)) == ("a", "UA", "b", "U")
    messages = [w.message for w in second.warnings]
    assert any("my_items row 4: message_data is not valid JSON" in m for m in messages)
    assert any("my_items row 5: skipped, expected an item object, got array" in m for m in messages)


def test_agents_wal_file_beside_the_database_is_reported(tmp_path: Path) -> None:
    shutil.copy(AGENTS / "agents.db", tmp_path / "agents.db")
    (tmp_path / "agents.db-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(60))
    conv = compaction.load(tmp_path / "agents.db")
    assert any("agents.db-wal beside the database holds 64 bytes" in w.message for w in conv.warnings)


def test_agents_foreign_and_hostile_databases_are_clean_errors(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    with pytest.raises(LoadError, match="without the Agents SDK's session tables") as caught:
        compaction.load(foreign)
    assert not caught.value.internal
    hostile = tmp_path / "hostile.db"  # a view where the table should be: never queried
    with sqlite3.connect(hostile) as conn:
        conn.execute("CREATE TABLE x (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)")
        conn.execute("CREATE VIEW agent_messages AS SELECT 1 AS id, session_id, message_data FROM x")
        conn.execute("INSERT INTO x VALUES (1, 's', '{\"role\": \"user\", \"content\": \"from x\"}')")
    conv = compaction.load(hostile)  # the real table x has the columns; the view is not a table
    assert conv.messages[0].text == "from x"
    empty = tmp_path / "empty.db"
    with sqlite3.connect(empty) as conn:
        conn.execute("CREATE TABLE agent_messages (id INTEGER PRIMARY KEY, session_id TEXT, message_data TEXT)")
    with pytest.raises(LoadError, match="holds no session items"):
        compaction.load(empty)


def test_agents_damaged_database_bytes_only_raise_load_errors() -> None:
    data = (AGENTS / "agents.db").read_bytes()
    rnd = random.Random(15)
    outcomes = set()
    for _ in range(150):
        if rnd.random() < 0.5:
            damaged = data[: rnd.randrange(16, len(data))]
        else:
            buf = bytearray(data)
            for _ in range(rnd.randint(1, 30)):
                buf[rnd.randrange(100, len(buf))] = rnd.randrange(256)
            damaged = bytes(buf)
        try:
            compaction.load_all_conversations(damaged, name="damaged.db")
            outcomes.add("loaded")
        except LoadError as exc:
            assert not exc.internal, exc
            assert str(exc).startswith("damaged.db")
            outcomes.add("error")
    assert "error" in outcomes


def test_agents_database_through_a_temporary_copy_where_python_cannot_deserialize(monkeypatch) -> None:
    from compaction.formats import _sqlite

    monkeypatch.setattr(_sqlite, "IN_MEMORY", False)
    before = set(Path(tempfile.gettempdir()).glob("*.sqlite"))
    research, ops = compaction.load_all_conversations((AGENTS / "agents.db").read_bytes(), name="agents.db")
    assert (research.id, len(research.messages), ops.id) == ("research-1", 13, "ops-2")
    with pytest.raises(LoadError, match="damaged"):
        compaction.load_all_conversations((AGENTS / "agents.db").read_bytes()[:5000], name="cut.db")
    assert set(Path(tempfile.gettempdir()).glob("*.sqlite")) == before  # the copies are removed
