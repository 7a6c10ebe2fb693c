"""Loading a folder or several files: walking rules, failures as warnings, unique ids, folder formats, Claude Code
subagent files linked to their session, and the CLI's info / replay on a folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import REAL_LOGS
from conftest import ROOT
from conftest import real_log

import compaction
from compaction.cli import main as cli
from compaction.conversation import Conversation
from compaction.conversation import Source
from compaction.conversation import user
from compaction.formats import LoadError
from compaction.formats import base
from compaction.formats import folders
from compaction.formats import load_all_conversations

FIXTURES = ROOT / "tests" / "fixtures"
SESSION = FIXTURES / "claude-code" / "attachments_subagents.jsonl"
CODEX = FIXTURES / "codex" / "rollout.jsonl"
SWE = FIXTURES / "swe-agent" / "text_actions.traj"


def by_id(convs: list[Conversation]) -> dict[str, Conversation]:
    ids = [c.id for c in convs]
    assert len(ids) == len(set(ids)), ids
    return {c.id: c for c in convs}


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """A folder of logs in subfolders, with things a walk must pass over."""
    (tmp_path / "codex" / "2026").mkdir(parents=True)
    shutil.copy(CODEX, tmp_path / "codex" / "2026" / "rollout.jsonl")
    shutil.copy(SWE, tmp_path / "run.traj")
    (tmp_path / "broken.json").write_text('{"messages": [', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a log", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    shutil.copy(CODEX, tmp_path / ".git" / "hidden.jsonl")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    shutil.copy(CODEX, outside)
    (tmp_path / "link-out.jsonl").symlink_to(outside)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.jsonl")
    return tmp_path


def test_a_folder_reads_every_log_file_and_reports_the_ones_that_fail(logs: Path):
    convs = load_all_conversations(logs)
    assert [(c.format, Path(c.source.path).relative_to(logs).as_posix()) for c in convs] == [
        ("swe-agent", "run.traj"), ("codex", "codex/2026/rollout.jsonl")]  # sorted: files before subfolders
    (failure,) = [w for w in convs[0].warnings if "not loaded" in w.message]
    assert failure.message.startswith("broken.json: not loaded: ")
    # the hidden folder, the link out of the tree, the pipe and the .txt file are not read
    assert not any(name in w.message for w in convs[0].warnings
                   for name in ("hidden", "link-out", "pipe", "notes"))


def test_a_folder_with_no_readable_log_fails_naming_the_reasons(tmp_path: Path):
    (tmp_path / "a.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(LoadError, match=r"no log could be read: a\.json: not loaded: "):
        load_all_conversations(tmp_path)
    (tmp_path / "a.json").unlink()
    with pytest.raises(LoadError, match="the folder holds no log file"):
        load_all_conversations(tmp_path)


def test_the_number_of_files_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for i in range(3):
        shutil.copy(CODEX, tmp_path / f"r{i}.jsonl")
    monkeypatch.setattr(folders, "FOLDER_FILE_LIMIT", 2)
    with pytest.raises(LoadError, match="more than 2 log files"):
        load_all_conversations(tmp_path)


def test_ids_are_made_unique_by_file_name_and_parents_follow(tmp_path: Path):
    shutil.copy(SESSION, tmp_path / "one.jsonl")
    shutil.copy(SESSION, tmp_path / "two.jsonl")
    shutil.copy(SWE, tmp_path / "swe.traj")
    convs = by_id(load_all_conversations(tmp_path))
    assert list(convs) == ["one.jsonl/main", "one.jsonl/agent-ab12cd3", "primary", "two.jsonl/main",
                           "two.jsonl/agent-ab12cd3"]
    assert convs["two.jsonl/agent-ab12cd3"].source.parent == "two.jsonl/main"
    assert compaction.load(tmp_path, conversation="two.jsonl/agent-ab12cd3").tool_call_count == 3


def test_a_list_of_paths(tmp_path: Path):
    shutil.copy(CODEX, tmp_path / "rollout.jsonl")
    convs = load_all_conversations([SWE, tmp_path / "rollout.jsonl", tmp_path / "missing.json"])
    assert [c.format for c in convs] == ["swe-agent", "codex"]
    assert any(w.message.startswith("missing.json: not loaded: cannot read the file") for w in convs[0].warnings)
    with pytest.raises(LoadError, match="no log given"):
        load_all_conversations([])


def _subagent_file(session: list[dict], agent: str) -> list[dict]:
    """The side file Claude Code keeps for a subagent: its records as sidechain records of the session."""
    out = []
    for record in session:
        data = record.get("data", {})
        if record["type"] == "progress" and data.get("agentId") == agent:
            inner = data["message"]
            out.append({"parentUuid": None, "isSidechain": True, "sessionId": record["sessionId"],
                        "version": record["version"], "agentId": agent, "type": inner["type"],
                        "message": inner["message"], "uuid": inner["uuid"], "timestamp": inner["timestamp"]})
    out.append({"parentUuid": out[-1]["uuid"], "isSidechain": True, "sessionId": out[-1]["sessionId"],
                "version": "2.1.110", "agentId": agent, "type": "assistant", "uuid": "final-answer",
                "timestamp": "2026-05-02T10:31:00.000Z",
                "message": {"id": "msg_sub3", "role": "assistant", "model": "claude-haiku-4-5-20251001",
                            "content": [{"type": "text", "text": "Totals use float in shop/cart.py:40."}]}})
    return out


def test_claude_code_subagent_files_are_linked_to_their_session(tmp_path: Path):
    session = [json.loads(line) for line in SESSION.read_text(encoding="utf-8").splitlines()]
    session_id = session[0]["sessionId"]
    project = tmp_path / "-work-proj"
    (project / session_id / "subagents").mkdir(parents=True)
    shutil.copy(SESSION, project / f"{session_id}.jsonl")
    side = project / session_id / "subagents" / "agent-ab12cd3.jsonl"
    side.write_text("\n".join(json.dumps(r) for r in _subagent_file(session, "ab12cd3")), encoding="utf-8")
    side.with_name("agent-ab12cd3.meta.json").write_text(json.dumps({"agentType": "Explore",
                                                                      "worktreePath": "/work/wt"}), encoding="utf-8")
    convs = by_id(load_all_conversations(tmp_path))
    assert list(convs) == ["main", "agent-ab12cd3"]  # the embedded copy is left out, the .meta.json is no log
    agent = convs["agent-ab12cd3"]
    assert agent.source.path == str(side) and "embedded" not in agent.source.meta
    assert (agent.source.parent, agent.source.parent_call_id) == ("main", "toolu_task1")
    assert agent.source.meta["parent_path"] == str(project / f"{session_id}.jsonl")
    assert agent.source.meta["worktree_path"] == "/work/wt" and agent.source.meta["agent_type"] == "Explore"
    assert len(agent.llm_call_indices) == 3  # the file holds the final answer the embedded copy lacks
    assert any("agent-ab12cd3 read from its own file" in w.message for w in convs["main"].warnings)
    alone = compaction.load(side)  # on its own it has no parent
    assert alone.source.parent is None and alone.source.meta["agent_type"] == "Explore"


def test_real_claude_code_folder():
    folder = real_log("claude-code")
    convs = by_id(load_all_conversations(folder))
    marot_main = "marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl/main"
    assert {c.format for c in convs.values()} == {"claude-code"} and len(convs) == 14
    side = convs["agent-a2898e3"]  # the side file wins over the copy embedded in the session
    assert side.source.path.endswith("__subagent-agent-a2898e3.jsonl") and len(side.llm_call_indices) == 12
    assert (side.source.parent, side.source.parent_call_id) == (marot_main, "toolu_017pLRuPHYTX5t99EnLyV53m")
    compact = convs["agent-acompact-e1f845"]  # the auto-compaction request: same session, no Task call
    assert (compact.source.parent, compact.source.parent_call_id) == (marot_main, None)
    assert not any(k.endswith("marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl/agent-a2898e3") for k in convs)
    checkpoint = [c for k, c in convs.items() if k.startswith("entireio-cli__checkpoint-00")]
    assert len(checkpoint) == 9 and sum(len(c.llm_call_indices) for c in checkpoint[1:]) == 75


def test_every_real_log_loads_from_one_folder_load():
    if not REAL_LOGS.exists():
        pytest.skip("real logs not available")
    convs = load_all_conversations(REAL_LOGS)
    paths = {Path(c.source.path).parent.name for c in convs}
    assert {"claude-code", "codex-cli", "swe-agent", "mini-swe-agent", "tau2-bench"} <= paths
    by_id(convs)


def test_a_folder_format_claims_its_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def read_folder(path: Path) -> list[Conversation] | None:
        if not (path / "task.marker").is_file():
            return None
        return [Conversation((user("from the task folder"),), source=Source("test-folder", str(path), path.name))]

    info = base.FormatInfo("test-folder", "Test folder", lambda doc: "never a file", lambda doc: [],
                           read_folder=read_folder)
    monkeypatch.setitem(base.FORMATS._items, "test-folder", info)
    (tmp_path / "tasks" / "t1").mkdir(parents=True)
    (tmp_path / "tasks" / "t1" / "task.marker").write_text("", encoding="utf-8")
    (tmp_path / "tasks" / "t1" / "inner.jsonl").write_text("{}", encoding="utf-8")  # read by the folder format only
    shutil.copy(CODEX, tmp_path / "rollout.jsonl")
    convs = load_all_conversations(tmp_path)
    assert [(c.format, c.id) for c in convs] == [("codex", "0"), ("test-folder", "t1")]
    assert not any("inner.jsonl" in w.message for w in convs[0].warnings)
    (only,) = load_all_conversations(tmp_path / "tasks" / "t1")  # the folder itself
    assert only.format == "test-folder"


# ------------------------------------------------------------------------------------------------ CLI
def test_cli_info_and_replay_on_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture):
    shutil.copy(SESSION, tmp_path / "session.jsonl")
    shutil.copy(CODEX, tmp_path / "rollout.jsonl")
    assert cli(["info", str(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert [(c["id"], c["format"], Path(c["path"]).name) for c in info["conversations"]] == [
        ("0", "codex", "rollout.jsonl"), ("main", "claude-code", "session.jsonl"),
        ("agent-ab12cd3", "claude-code", "session.jsonl")]
    assert info["conversations"][2]["parent"] == "main"
    assert cli(["replay", str(tmp_path), "--conversation", "agent-ab12cd3", "--strategy",
                "haystack.tool_result_pruning", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["format"] == "claude-code" and replayed["summary"]["llm_calls"] == 2
    assert cli(["info", str(SWE), str(CODEX)]) == 0
    text = capsys.readouterr().out
    assert "swe-agent, codex, 2 conversation(s)" in text and "[primary]" in text
    assert cli(["replay", str(tmp_path), "--conversation", "nope", "--strategy", "haystack.tool_result_pruning"]) == 2
    assert "no conversation 'nope'" in capsys.readouterr().err
