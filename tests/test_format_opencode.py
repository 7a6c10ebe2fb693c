"""The OpenCode reader on sessions the real ``opencode`` binary wrote (``tools/fixtures/opencode_session.py``).

``requests.ndjson`` records what OpenCode itself sent to the model in every call of that run (roles, tool call ids
and the sha256 of each message's text), so the calls we read are checked against what OpenCode really sent — the
split into calls, tool results, reasoning, the ``[Old tool result content cleared]`` it sent for pruned outputs and
the history it sent after compacting.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import ROOT

import compaction
from compaction.formats import detect
from compaction.formats import formats
from compaction.formats import parse_document
from compaction.formats.opencode import CLEARED
from compaction.formats.opencode import COMPACTION_PROMPT
from compaction.formats.opencode import read_folder

FIXTURES = ROOT / "tests" / "fixtures" / "opencode"
EXPORT = FIXTURES / "session.export.json"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture(scope="module")
def session() -> compaction.Conversation:
    return compaction.load(EXPORT)


@pytest.fixture(scope="module")
def export() -> dict:
    return json.loads(EXPORT.read_text(encoding="utf-8"))


def _requests(thread: str) -> list[list[dict]]:
    lines = (json.loads(line) for line in (FIXTURES / "requests.ndjson").read_text().splitlines())
    return [r["messages"] for r in lines if r["thread"] == thread]


def _as_sent(message: compaction.Message, cleared: set[str]) -> dict:
    """A loaded message as the digest of what OpenCode sends for it."""
    out: dict = {"role": message.role}
    if message.tool_result is not None:
        cid = message.tool_result.call_id
        out["sha256"] = _sha(CLEARED if cid in cleared else message.tool_result.text)
        out["tool_call_id"] = cid
    else:
        out["sha256"] = _sha("".join(message.texts))
    if message.tool_calls:
        out["tool_calls"] = [c.id for c in message.tool_calls]
    if message.reasoning:
        out["reasoning_sha256"] = _sha("".join(message.reasoning))
    return out


def test_detected_and_read_with_model_version_usage(session: compaction.Conversation) -> None:
    assert detect(parse_document(EXPORT.read_bytes(), str(EXPORT)))[0].name == "opencode"
    summary = session.summary()
    assert summary["model"] == "mirror-coder-1" and summary["agent_version"] == "1.18.33"
    assert summary["tool_calls"] == summary["tool_results"] == 10
    assert set(summary["tools"]) == {"read", "bash", "task"}
    assert not session.warnings
    assert session.source.meta["title"] == "Sync hang on large trees"
    # one LLM call per step: 14 agent calls and the compaction's summary call, each with its own usage
    assert len(session.llm_call_indices) == 15 and set(session.usage) == set(session.llm_call_indices)
    first = session.usage[session.llm_call_indices[0]]
    assert (first.input_tokens, first.output_tokens, first.cache_read_tokens) == (2469, 72, 0)
    second = session.usage[session.llm_call_indices[1]]
    assert (second.input_tokens, second.cache_read_tokens) == (30650, 2469)


def test_every_call_sends_what_opencode_sent(session: compaction.Conversation, export: dict) -> None:
    """Before the compaction each call's input is the loaded history up to it, with pruned outputs replaced by
    OpenCode's placeholder once the pruning happened; after it, the summary, the tail OpenCode kept, and what
    followed."""
    sent = _requests("session")
    calls = [i for i in session.llm_call_indices if i not in session.log_summary_indices]
    assert len(sent) == len(calls) == 14
    pruning = next(e for e in session.events if e.kind == "microcompact")
    compacting = next(e for e in session.events if e.kind == "compaction")
    tail_id = next(p["tail_start_id"] for m in export["messages"] for p in m["parts"] if p["type"] == "compaction")
    tail = next(i for i, m in enumerate(session.messages) if m.meta.get("message_id") == tail_id)
    for request, index in zip(sent, calls, strict=True):
        cleared = set(pruning.cleared) if index > pruning.message_index else set()
        if index < compacting.message_index:
            history = list(range(index))
        else:
            summary = sorted(session.log_summary_indices)
            history = [*summary, *range(tail, compacting.message_index), *range(summary[-1] + 1, index)]
        expected = [_as_sent(session.messages[i], cleared) for i in history]
        assert request[0]["role"] == "system"  # OpenCode's system prompt: not stored in the session
        assert request[1:] == expected, f"call producing message {index}"


def test_subagent_calls_match_too() -> None:
    child = compaction.load(FIXTURES / "subagent.export.json")
    sent = _requests("subagent")
    assert child.source.parent and child.source.parent.startswith("ses_")
    assert len(sent) == len(child.llm_call_indices) == 2
    for request, index in zip(sent, child.llm_call_indices, strict=True):
        assert request[1:] == [_as_sent(m, set()) for m in child.messages[:index]]


def test_pruned_outputs_are_a_microcompact_event_and_keep_their_text(session: compaction.Conversation) -> None:
    event = next(e for e in session.events if e.kind == "microcompact")
    assert event.cleared == ("call_t0s0_0", "call_t0s0_1", "call_t0s1_0")
    assert session.messages[event.message_index].text.startswith("Now read the config module")
    for message in session.messages:
        if message.tool_result is not None and message.tool_result.call_id in event.cleared:
            assert message.meta["sent_as"] == CLEARED
            assert len(message.tool_result.text) > 50_000  # the original output, for the uncompacted baseline


def test_compaction_is_a_log_event_with_its_summary_left_out_of_replays(session: compaction.Conversation) -> None:
    event = next(e for e in session.events if e.kind == "compaction")
    request, answer = sorted(session.log_summary_indices)
    assert event.message_index == request and session.messages[request].text == COMPACTION_PROMPT
    assert event.trigger == "manual" and event.summary == session.messages[answer].text
    assert event.summary.startswith("## Objective")
    assert event.pre_tokens == 14990 + 43010 + 35  # the context of the last call before it
    replay = compaction.replay(session, "haystack.tool_result_pruning", context_window=60_000)
    assert len(replay.steps) == 14
    with_summaries = compaction.replay(session, "haystack.tool_result_pruning", context_window=60_000,
                                       include_log_summaries=True)
    assert len(with_summaries.steps) == 15


def test_several_steps_in_one_message_are_several_calls(export: dict) -> None:
    """Older OpenCode kept all steps of a turn in one assistant message (step-start … step-finish, repeated);
    each step is one model call, as the AI SDK splits it."""
    merged = copy.deepcopy(export)
    first, second = merged["messages"][1], merged["messages"][2]
    first["parts"] += second["parts"]
    del merged["messages"][2]
    conv = compaction.load(json.dumps(merged).encode(), name="merged.json")
    original = compaction.load(EXPORT)
    assert [m.role for m in conv.messages] == [m.role for m in original.messages]
    step_usage = [conv.usage[i] for i in conv.llm_call_indices[:2]]
    assert step_usage == [original.usage[i] for i in original.llm_call_indices[:2]]
    assert conv.messages[conv.llm_call_indices[1]].meta["step"] == 1


def test_errors_interruptions_and_user_parts(export: dict) -> None:
    edited = copy.deepcopy(export)
    messages = edited["messages"]
    user = messages[0]
    user["parts"] += [
        {"type": "text", "text": "hidden", "ignored": True},
        {"type": "file", "mime": "text/plain", "url": "file:///x.txt", "filename": "x.txt"},
        {"type": "file", "mime": "image/png", "url": "data:image/png;base64,AAAA", "filename": "shot.png"},
        {"type": "file", "mime": "application/pdf", "url": "file:///spec.pdf", "filename": "spec.pdf"},
        {"type": "agent", "name": "general"},
    ]
    tools = [p for p in messages[1]["parts"] if p["type"] == "tool"]
    tools[0]["state"] = {"status": "error", "input": {}, "error": "Error: file not found", "time": {"start": 1}}
    tools[1]["state"] = {"status": "running", "input": {}, "time": {"start": 1}}
    messages.insert(4, {"info": {**messages[3]["info"], "id": "msg_failed", "error": {"name": "APIError",
                                                                                        "data": {}}},
                        "parts": [{"type": "text", "text": "half an answer"}]})
    conv = compaction.load(json.dumps(edited).encode(), name="edited.json")
    first = conv.messages[0]
    assert "hidden" not in first.texts and len(first.images) == 1 and first.images[0].source == "base64"
    assert [f.filename for f in first.files] == ["spec.pdf"]
    results = [m.tool_result for m in conv.messages[2:4]]
    assert results[0].error and results[0].text == "Error: file not found"
    assert results[1].error and results[1].text == "[Tool execution was interrupted]"
    assert not any("half an answer" in m.text for m in conv.messages)
    assert any("ended in an error" in w.message for w in conv.warnings)


def test_damaged_exports_warn_and_bad_ones_fail_cleanly(export: dict) -> None:
    edited = copy.deepcopy(export)
    edited["messages"][3] = "nonsense"
    edited["messages"][5]["parts"][2] = {"no": "type"}
    edited["messages"][7]["info"]["role"] = "robot"
    conv = compaction.load(json.dumps(edited).encode(), name="damaged.json")
    fields = {w.field for w in conv.warnings}
    assert {"messages[3]", "messages[5].parts[2]", "messages[7].info.role"} <= fields
    with pytest.raises(compaction.LoadError, match="does not look like OpenCode"):
        compaction.load(b'{"info": {}, "messages": 3}', format="opencode", name="bad.json")


# --------------------------------------------------------------------------------------------------- store
def test_sqlite_store_of_a_real_run(tmp_path: Path) -> None:
    """OpenCode's own opencode.db (a bash call, then a task subagent): both sessions, parent first, the child
    linked to the task call that started it."""
    conversations = read_folder(FIXTURES / "data")
    assert conversations is not None and len(conversations) == 2
    main, child = conversations
    assert child.source.parent == main.id and main.source.parent is None
    task = next(c for m in main.messages for c in m.tool_calls if c.name == "task")
    assert child.source.parent_call_id == task.id
    assert [c.name for m in main.messages for c in m.tool_calls] == ["bash", "task"]
    assert child.messages[0].text.startswith("List every add_argument option")
    assert main.usage and child.usage and main.source.agent_version == "1.18.33"


def _storage_from(database: Path, root: Path) -> Path:
    """The same sessions in the JSON-file layout older OpenCode wrote (the one its JSON-to-SQLite migration
    reads): storage/session/<project>/<id>.json, message/<session>/<id>.json, part/<message>/<id>.json."""
    storage = root / "storage"
    with sqlite3.connect(database) as db:
        for ident, project, parent, title, version, created in db.execute(
                "SELECT id, project_id, parent_id, title, version, time_created FROM session"):
            info = {"id": ident, "projectID": project, "title": title, "version": version, "time": {"created": created}}
            if parent:
                info["parentID"] = parent
            (storage / "session" / project).mkdir(parents=True, exist_ok=True)
            (storage / "session" / project / f"{ident}.json").write_text(json.dumps(info))
        for ident, session, data in db.execute("SELECT id, session_id, data FROM message"):
            (storage / "message" / session).mkdir(parents=True, exist_ok=True)
            body = {**json.loads(data), "id": ident, "sessionID": session}
            (storage / "message" / session / f"{ident}.json").write_text(json.dumps(body))
        for ident, message, session, data in db.execute("SELECT id, message_id, session_id, data FROM part"):
            (storage / "part" / message).mkdir(parents=True, exist_ok=True)
            body = {**json.loads(data), "id": ident, "messageID": message, "sessionID": session}
            (storage / "part" / message / f"{ident}.json").write_text(json.dumps(body))
    return storage


def test_legacy_storage_folder_reads_like_the_database(tmp_path: Path) -> None:
    storage = _storage_from(FIXTURES / "data" / "opencode.db", tmp_path)
    from_db = read_folder(FIXTURES / "data")
    for folder in (tmp_path, storage):
        from_files = read_folder(folder)
        assert from_files is not None
        assert [c.id for c in from_files] == [c.id for c in from_db]
        for a, b in zip(from_files, from_db, strict=True):
            assert [m.same_content(n) for m, n in zip(a.messages, b.messages, strict=True)] == [True] * len(a)
            assert a.usage == b.usage and a.source.parent_call_id == b.source.parent_call_id
    one = next(p for p in (storage / "message").iterdir())
    alone = read_folder(one)
    assert alone is not None and [c.id for c in alone] == [one.name]


def test_store_damage_costs_only_the_damaged_file(tmp_path: Path) -> None:
    storage = _storage_from(FIXTURES / "data" / "opencode.db", tmp_path)
    victim = sorted((storage / "part").rglob("*.json"))[3]
    victim.write_text("{not json")
    conversations = read_folder(tmp_path)
    assert conversations is not None
    assert any(str(victim) in w.message for c in conversations for w in c.warnings)


def test_folders_that_are_not_opencode_and_broken_databases(tmp_path: Path) -> None:
    assert read_folder(tmp_path) is None
    (tmp_path / "opencode.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(compaction.LoadError, match="OpenCode"):
        read_folder(tmp_path)
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    shutil.copy(FIXTURES / "data" / "opencode.db", copy_dir / "opencode.db")
    with sqlite3.connect(copy_dir / "opencode.db") as db:
        db.execute("UPDATE part SET data = '[1, 2' WHERE rowid = (SELECT min(rowid) FROM part)")
    conversations = read_folder(copy_dir)
    assert conversations is not None
    assert any("not valid JSON" in w.message for c in conversations for w in c.warnings)


def test_format_documents_what_it_reads_and_leaves_out() -> None:
    info = formats()["opencode"]
    assert info.reads and info.leaves_out and info.read_folder is read_folder
