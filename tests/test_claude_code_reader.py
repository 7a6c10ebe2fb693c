"""Claude Code reader: subagents embedded as progress records, attachment records, microcompact boundaries, the
model and version in Source (fixture tests/fixtures/claude-code/attachments_subagents.jsonl and the real logs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from conftest import real_log

import compaction
from compaction.conversation import Usage
from compaction.formats import claude_code_attachments as attachments
from compaction.formats import load_all_conversations

FIXTURE = ROOT / "tests" / "fixtures" / "claude-code" / "attachments_subagents.jsonl"
CHECKPOINT_00 = "claude-code/entireio-cli__checkpoint-00-c9e2351016-0.jsonl"
CHECKPOINT_76 = "claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl"


def records(path: Path = FIXTURE) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def load_records(recs: list[dict]) -> dict[str, compaction.Conversation]:
    data = "\n".join(json.dumps(r) for r in recs).encode()
    return {c.id: c for c in load_all_conversations(data, name="session.jsonl")}


@pytest.fixture(scope="module")
def convs() -> dict[str, compaction.Conversation]:
    return {c.id: c for c in load_all_conversations(FIXTURE)}


def roles(conv: compaction.Conversation) -> str:
    return "".join(m.role[0].upper() for m in conv.messages)


# ------------------------------------------------------------------------------------------------ subagents
def test_embedded_subagent_is_its_own_conversation_linked_to_its_task_call(convs):
    assert list(convs) == ["main", "agent-ab12cd3"]
    agent = convs["agent-ab12cd3"]
    assert (agent.source.parent, agent.source.parent_call_id) == ("main", "toolu_task1")
    task_call = next(c for m in convs["main"].messages for c in m.tool_calls if c.id == "toolu_task1")
    assert task_call.name == "Task"
    assert roles(agent) == "UATTAT"
    assert agent.messages[0].text == "Find where checkout totals are rounded."
    # two records of one response (msg_sub1) are one LLM output; its usage is the last snapshot
    assert [c.name for c in agent.messages[1].tool_calls] == ["Grep", "Read"]
    assert agent.llm_call_indices == [1, 4] and agent.usage[1] == Usage(3, 64, 0, 9000, 9000, 0)
    assert (agent.tool_call_count, agent.tool_result_count) == (3, 3)
    assert agent.source.model == "claude-haiku-4-5-20251001"
    assert agent.source.meta == {
        "session_id": "5b0c6a2e-1f3d-4c8a-9e7b-2d4f6a8c0e11", "agent_id": "ab12cd3", "embedded": True,
        "agent_type": "Explore", "description": "Find the rounding code",
        "task_result": {"status": "completed", "total_tokens": 20114, "total_tool_uses": 3, "duration_ms": 18250}}
    assert agent.warnings == ()
    assert convs["main"].source.meta["subagents"] == {"ab12cd3": "toolu_task1"}


def test_the_main_conversation_is_unchanged_by_embedded_subagents(convs):
    without = load_records([r for r in records() if r["type"] != "progress"])
    assert list(without) == ["main"]
    main, bare = convs["main"], without["main"]
    assert [m.preview(300) for m in main.messages] == [m.preview(300) for m in bare.messages]
    assert main.usage == bare.usage


def test_a_repeated_embedded_record_is_read_once(convs):
    assert convs["agent-ab12cd3"].tool_result_count == 3
    assert any("repeating an earlier record's uuid" in w.message and w.line == 18 for w in convs["main"].warnings)


def test_real_session_with_eight_embedded_subagents():
    main, *agents = load_all_conversations(real_log(CHECKPOINT_00))
    assert (main.id, len(main.llm_call_indices), main.tool_call_count) == ("main", 63, 66)
    assert len(agents) == 8 and all(a.id.startswith("agent-a") for a in agents)
    assert sum(len(a.llm_call_indices) for a in agents) == 75
    assert sum(a.tool_call_count for a in agents) == 111
    task_calls = {c.id for m in main.messages for c in m.tool_calls if c.name == "Task"}
    assert {a.source.parent_call_id for a in agents} == task_calls and {a.source.parent for a in agents} == {"main"}
    for agent in agents:  # Claude Code's own count of each subagent's tool uses agrees
        assert agent.tool_call_count == agent.source.meta["task_result"]["total_tool_uses"]
        assert agent.tool_result_count == agent.tool_call_count and agent.warnings == ()
        assert len(agent.usage) == len(agent.llm_call_indices)
    assert (main.source.model, main.source.agent_version) == ("claude-opus-4-5-20251101", "2.1.29")


def test_an_embedded_subagent_replays_from_the_cli(capsys):
    from compaction.cli import main as cli

    assert cli(["replay", str(real_log(CHECKPOINT_00)), "--conversation", "agent-a17ad42",
                "--strategy", "haystack.tool_result_pruning", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["llm_calls"] == 19
    assert cli(["info", str(real_log(CHECKPOINT_00)), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [c["parent_call_id"] for c in info["conversations"][1:]][0] == "toolu_01Rzxms5G9Vzz1MHf8mbMFC4"


# ------------------------------------------------------------------------------------------------ attachments
def test_attachments_are_meta_user_messages_where_claude_code_sends_them(convs):
    main = convs["main"]
    kinds = [m.meta.get("attachment") for m in main.messages]
    # SessionStart context and the skill list come before the first prompt (they move up past it, in order); the
    # edit note and the todo reminder follow the Task result, before the user's next prompt
    assert kinds == ["hook_additional_context", "skill_listing", None, None, None, None, None, "edited_text_file",
                     "todo_reminder", None, None, None]
    context = main.messages[0]
    assert context.role == "user" and context.meta["is_meta"] is True
    assert context.text == ("<system-reminder>\nSessionStart hook additional context: Branch main is protected; open "
                            "a PR for any change.\nCI runs on every push.\n</system-reminder>")
    assert "- pdf: read and fill PDF forms\n- xlsx: edit spreadsheets" in main.messages[1].text
    assert "40\t    total = Decimal(price) * qty" in main.messages[7].text
    assert "1. [pending] Run the checkout test" in main.messages[8].text
    assert main.messages[9].text.startswith("I switched cart.py to Decimal") and not main.messages[9].meta.get("is_meta")


def test_attachments_that_never_reach_the_model_are_counted_in_warnings(convs):
    messages = {w.message for w in convs["main"].warnings}
    assert "skipped 1 attachment record that never reaches the model, of type 'hook_success'" in messages
    assert "skipped 2 attachment records that never reach the model, of type 'hook_non_blocking_error'" in messages
    # 'todo' attachments stopped being sent in 2.1.6x; this one was written by 2.1.110
    assert "skipped 1 attachment record that never reaches the model, of type 'todo'" in messages
    assert "skipped 1 attachment record of unknown type 'brand_new_reminder'" in messages
    assert not any("skill_listing" in m or "hook_additional_context" in m for m in messages)


def test_whether_an_attachment_is_sent_depends_on_the_version_that_wrote_it():
    recs = records()
    todo = next(r for r in recs if r.get("attachment", {}).get("type") == "todo")
    todo["version"] = "2.1.39"
    main = load_records(recs)["main"]
    (sent,) = [m for m in main.messages if m.meta.get("attachment") == "todo"]
    assert "todo list is empty" in sent.text
    assert attachments.reaches_model("todo", (2, 1, 59)) and not attachments.reaches_model("todo", (2, 1, 63))
    assert attachments.reaches_model("hook_cancelled", None) is False
    assert attachments.reaches_model("no_such_type", None) is None


def test_hook_success_reaches_the_model_only_for_session_start_and_prompt_submit():
    sent = attachments.render({"type": "hook_success", "content": "ready", "hookName": "SessionStart",
                               "hookEvent": "SessionStart"}, None)
    assert sent is not None and "SessionStart hook success: ready" in sent.texts[0]
    assert attachments.render({"type": "hook_success", "content": "ok", "hookEvent": "PostToolUse"}, None) is None
    assert attachments.render({"type": "hook_additional_context", "content": []}, None) is None


def test_a_queued_prompt_the_person_typed_is_a_real_user_turn():
    typed = attachments.render({"type": "queued_command", "prompt": "also update the README"}, None)
    assert typed is not None and typed.is_meta is False and "also update the README" in typed.texts[0]
    note = attachments.render({"type": "queued_command", "prompt": "task done", "commandMode": "task-notification"},
                              None)
    assert note is not None and note.is_meta is True


def test_a_file_attachment_is_sent_as_a_read_call_and_its_result():
    sent = attachments.render({"type": "file", "filename": "/p/a.py", "truncated": True,
                               "content": {"type": "text", "file": {"filePath": "/p/a.py", "content": "x = 1\n"}}}, None)
    assert sent is not None and len(sent.texts) == 3
    assert '"file_path": "/p/a.py"' in sent.texts[0] and "x = 1" in sent.texts[1]


@pytest.mark.parametrize("kind", sorted(attachments.KNOWN_TYPES))
@pytest.mark.parametrize("payload", [{}, {"content": 7, "files": "x", "skills": [3], "memories": [None],
                                          "prompt": [1, {"type": "image"}], "addedLines": "a", "messages": [2]}])
def test_every_attachment_type_survives_odd_fields(kind, payload):
    sent = attachments.render({"type": kind, **payload}, None)
    assert sent is None or all(t.startswith("<system-reminder>") for t in sent.texts)


def test_a_malformed_attachment_record_costs_only_itself():
    recs = records()
    recs.insert(1, {**recs[1], "uuid": "bad-1", "attachment": "not an object"})
    main = load_records(recs)["main"]
    assert any("'attachment' is string" in w.message for w in main.warnings)
    assert len(main.messages) == len(load_records(records())["main"].messages)


# ------------------------------------------------------------------------------------------------ microcompact
def test_microcompact_boundary_is_a_log_event_with_the_cleared_calls(convs):
    (event,) = convs["main"].events
    assert (event.kind, event.message_index, event.trigger, event.pre_tokens, event.tokens_saved) == (
        "microcompact", 5, "auto", 48210, 9120)
    assert event.cleared == ("toolu_b1", "toolu_from_earlier")
    assert any("clears 1 of 2 tool results whose calls are not in this log" in w.message and w.line == 8
               for w in convs["main"].warnings)


def test_real_session_with_a_microcompact_and_a_compaction():
    (main,) = load_all_conversations(real_log(CHECKPOINT_76))
    assert (len(main.llm_call_indices), main.tool_call_count) == (49, 60)
    micro, compact = main.events
    assert (micro.kind, micro.trigger, micro.pre_tokens, micro.tokens_saved, len(micro.cleared)) == (
        "microcompact", "auto", 60888, 21091, 42)
    assert (compact.kind, compact.pre_tokens) == ("compaction", 155068)
    assert micro.message_index < compact.message_index
    assert main.source.agent_version == "2.1.14" and main.source.model == "claude-sonnet-4-5-20250929"
    summary = main.summary()
    assert summary["log_compactions"] == 2 and summary["agent_version"] == "2.1.14"


# ------------------------------------------------------------------------------------------------ Source
def test_version_and_model_are_those_most_records_carry(convs):
    main = convs["main"]
    assert (main.source.agent_version, main.source.model) == ("2.1.110", "claude-opus-4-7")
    assert main.source.meta["versions"] == ["2.1.110", "2.1.111"]  # the version changed within the session


def test_local_command_output_is_sent_as_a_user_message(convs):
    last = convs["main"].messages[-1]
    assert last.role == "user" and last.meta["local_command"] is True and "Total cost: $0.21" in last.text
