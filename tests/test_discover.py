"""``compaction.discover`` on a fake home holding every agent's layout: what is found, in which order, what is
never followed or entered, the limits, lazy counting, and the CLI's ``discover`` contract."""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest
from fake_home import BASE_TIME
from fake_home import FakeHome
from fake_home import build
from fake_home import claude_session
from fake_home import codex_rollout
from fake_home import stamp

import compaction
from compaction import discover as disc
from compaction.cli import main
from compaction.discover import FoundSession
from compaction.discover import Limits
from compaction.discover import count_llm_calls
from compaction.discover import discover
from compaction.discover import load_session
from compaction.discover import search


@pytest.fixture
def fake(tmp_path: Path) -> FakeHome:
    return build(tmp_path / "home")


def by_path(sessions: list[FoundSession]) -> dict[str, FoundSession]:
    return {s.path: s for s in sessions}


def task_folder(fake: FakeHome, label: str) -> str:
    return str(Path(fake.expected[label]).parent)


# ------------------------------------------------------------------------------------------------ layouts
def test_finds_every_agents_layout(fake: FakeHome):
    found = by_path(discover(home=fake.home, roots=[fake.root], env={}))
    e = fake.expected
    storage = str(fake.home / ".local/share/opencode/storage")
    expected = {
        e["claude main"]: ("claude-code", "session"), e["claude subagent"]: ("claude-code", "subagent"),
        e["claude legacy agent"]: ("claude-code", "subagent"), e["claude other project"]: ("claude-code", "session"),
        e["codex rollout"]: ("codex", "session"), e["codex archived"]: ("codex", "session"),
        e["gemini main"]: ("gemini-cli", "session"), e["gemini legacy"]: ("gemini-cli", "session"),
        e["gemini migrated"]: ("gemini-cli", "session"), e["gemini subagent"]: ("gemini-cli", "subagent"),
        task_folder(fake, "cline task"): ("cline", "session"), task_folder(fake, "cline remote"): ("cline", "session"),
        task_folder(fake, "cline cli"): ("cline", "session"), task_folder(fake, "roo task"): ("roo-code", "session"),
        task_folder(fake, "roo windows"): ("roo-code", "session"),
        e["aider chat"]: ("aider", "session"), e["aider llm"]: ("aider", "session"),
    }
    for path, (agent, kind) in expected.items():
        assert path in found, path
        assert (found[path].agent, found[path].kind) == (agent, kind), path
    opencode = [s for s in discover(home=fake.home, env={}) if s.agent == "opencode"]
    assert {(s.path, s.conversation, s.kind, s.parent) for s in opencode} == {
        (storage, "ses_main", "session", None), (storage, "ses_child", "subagent", "ses_main")}
    assert len(found) == len(expected) + 1  # the OpenCode storage folder holds both of its sessions


def test_what_is_not_a_session_is_not_listed(fake: FakeHome):
    paths = {s.path for s in discover(home=fake.home, roots=[fake.root], env={})}
    assert not any(p.endswith((".txt", ".json")) and "gemini" not in p for p in paths), paths
    assert str(fake.home / ".gemini/tmp/ab12/chats/session-2025-12-02T08-00-99cc00dd.json") not in paths  # migrated
    assert not any("1767000000000" in p for p in paths)  # a task folder without a conversation history
    assert not any("node_modules" in p or "/.git/" in p for p in paths)


def test_subagents_are_linked_to_the_session_that_started_them(fake: FakeHome):
    found = by_path(discover(home=fake.home, env={}))
    assert found[fake.expected["claude subagent"]].parent == fake.expected["claude main"]
    assert found[fake.expected["gemini subagent"]].parent == fake.expected["gemini main"]
    assert found[fake.expected["claude legacy agent"]].parent is None  # named inside the file only


def test_sizes_dates_and_labels(fake: FakeHome):
    found = by_path(discover(home=fake.home, env={}))
    main_session = found[fake.expected["claude main"]]
    assert main_session.size == len(claude_session())
    assert main_session.modified == BASE_TIME + 20 * 3600
    assert main_session.modified_iso == "2026-01-01T20:00:00Z"
    assert main_session.where == "-home-me-app"
    cline = found[task_folder(fake, "cline task")]
    files = list(Path(cline.path).iterdir())
    assert cline.size == sum(f.stat().st_size for f in files) and cline.where == "Code"
    assert cline.modified == BASE_TIME + 15 * 3600  # the newest of its files
    assert found[task_folder(fake, "roo task")].where == "Cursor"
    assert found[task_folder(fake, "cline remote")].where == "vscode-server"
    opencode = next(s for s in discover(home=fake.home, env={}) if s.conversation == "ses_main")
    storage = fake.home / ".local/share/opencode/storage"
    own = [storage / "session/proj1/ses_main.json", storage / "message/ses_main/msg_1.json",
           storage / "part/msg_1/prt_1.json", storage / "part/msg_1/prt_2.json"]
    assert opencode.size == sum(p.stat().st_size for p in own)
    assert opencode.modified == BASE_TIME + 11 * 3600  # its newest part


def test_newest_first(fake: FakeHome):
    sessions = discover(home=fake.home, roots=[fake.root], env={})
    stamps = [s.modified for s in sessions]
    assert stamps == sorted(stamps, reverse=True)
    assert sessions[0].path == fake.expected["aider llm"]
    newest = fake.home / ".codex/sessions/2026/01/02/rollout-2026-01-02T10-00-00-abc.jsonl"
    stamp(newest, 100)
    assert discover(home=fake.home, roots=[fake.root], env={})[0].path == str(newest)


def test_a_root_that_is_not_a_folder_is_a_note(fake: FakeHome):
    missing = fake.home / "no-such-folder"
    result = search(home=fake.home, roots=[missing, fake.root], agents=["aider"], env={})
    assert {s.path for s in result.sessions} == {fake.expected["aider chat"], fake.expected["aider llm"]}
    assert result.notes == [f"{missing}: not a folder; not searched for Aider histories"]


def test_agents_filter_and_unknown_agent(fake: FakeHome):
    assert {s.agent for s in discover(home=fake.home, agents=["codex", "roo-code"], env={})} == {"codex", "roo-code"}
    assert {s.agent for s in discover(home=fake.home, agents=["cline"], env={})} == {"cline"}
    assert discover(home=fake.home, agents=["aider"], env={}) == []  # no root given
    with pytest.raises(ValueError, match="unknown agent 'cursor'; known agents: claude-code"):
        discover(home=fake.home, agents=["cursor"], env={})


def test_honours_home_and_the_agents_own_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = build(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home.home))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "GEMINI_CLI_HOME",
                 "CLINE_DIR", "CLINE_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert {s.path for s in discover()} == {s.path for s in discover(home=home.home, env={})}
    elsewhere = FakeHome(tmp_path / "elsewhere")
    rollout = elsewhere.write("", "codex/sessions/2026/02/01/rollout-x.jsonl", codex_rollout(), 50)
    claude = elsewhere.write("", "claude/projects/p/s.jsonl", claude_session(), 51)
    cursor = elsewhere.write("", "xdg/Cursor/User/globalStorage/saoudrizwan.claude-dev/tasks/9/"
                                 "api_conversation_history.json", "[]", 52)
    gemini = elsewhere.write("", "gem/.gemini/tmp/p/chats/session-x-12345678.jsonl", "{}\n", 53)
    opencode = elsewhere.write("", "data/opencode/storage/session/p/ses_x.json", "{}", 54)
    cline_cli = elsewhere.write("", "cline-data/tasks/7/api_conversation_history.json", "[]", 55)
    env = {"HOME": str(home.home), "CODEX_HOME": str(elsewhere.home / "codex"),
           "CLAUDE_CONFIG_DIR": str(elsewhere.home / "claude"), "XDG_CONFIG_HOME": str(elsewhere.home / "xdg"),
           "GEMINI_CLI_HOME": str(elsewhere.home / "gem"), "XDG_DATA_HOME": str(elsewhere.home / "data"),
           "CLINE_DATA_DIR": str(elsewhere.home / "cline-data")}
    found = {(s.path, s.conversation) for s in discover(env=env)}
    for path in (rollout, claude, gemini):
        assert (str(path), None) in found
    assert (str(cursor.parent), None) in found and (str(cline_cli.parent), None) in found
    assert (str(opencode.parents[2]), "ses_x") in found
    assert (home.expected["codex rollout"], None) in found  # ~/.codex is still looked in


# ------------------------------------------------------------------------------------------------ safety
def test_symlinks_are_never_followed_out_of_the_tree_nor_round_a_loop(fake: FakeHome, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text('{"type": "user"}\n')
    (outside / "project").mkdir()
    (outside / "project" / "elsewhere.jsonl").write_text('{"type": "user"}\n')
    projects = fake.home / ".claude/projects"
    (projects / "-home-me-app" / "leak.jsonl").symlink_to(outside / "secret.jsonl")
    (projects / "linked-project").symlink_to(outside / "project", target_is_directory=True)
    (projects / "-home-me-app" / "alias.jsonl").symlink_to(Path(fake.expected["claude main"]))
    (fake.root / "webapp" / "loop").symlink_to(fake.root, target_is_directory=True)
    (fake.root / "webapp" / "up").symlink_to(fake.home, target_is_directory=True)
    started = time.monotonic()
    found = by_path(discover(home=fake.home, roots=[fake.root], env={}))
    assert time.monotonic() - started < 10
    assert not any("secret" in p or "elsewhere" in p for p in found)
    alias = found[str(projects / "-home-me-app" / "alias.jsonl")]  # a link to a file inside the tree is a session
    assert alias.size == len(claude_session())
    assert [p for p in found if p.endswith(".aider.chat.history.md")] == [fake.expected["aider chat"]]


def test_a_linked_agent_folder_is_searched(tmp_path: Path):
    """``~/.claude`` kept elsewhere (a dotfiles repository) and linked into the home is the user's own folder."""
    dotfiles = FakeHome(tmp_path / "dotfiles")
    session = dotfiles.write("", "claude/projects/p/s.jsonl", claude_session(), 1)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude").symlink_to(tmp_path / "dotfiles" / "claude", target_is_directory=True)
    assert [s.path for s in discover(home=home, env={})] == [str(session)]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_unreadable_folders_are_skipped_with_a_note(fake: FakeHome):
    locked = fake.home / ".claude/projects/-home-me-lib"
    locked.chmod(0)
    try:
        result = search(home=fake.home, env={})
    finally:
        locked.chmod(0o755)
    paths = {s.path for s in result.sessions}
    assert fake.expected["claude main"] in paths and fake.expected["claude other project"] not in paths
    assert any(str(locked) in note and "permission denied" in note for note in result.notes), result.notes


def test_unreadable_entries_as_seen_by_the_walker(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    """The same rule without depending on the user: a folder whose listing raises PermissionError is skipped."""
    locked = str(fake.home / ".codex/sessions/2026")
    real_scandir = os.scandir

    def scandir(path):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(disc.os, "scandir", scandir)
    result = search(home=fake.home, env={})
    paths = {s.path for s in result.sessions}
    assert fake.expected["codex rollout"] not in paths and fake.expected["codex archived"] in paths
    assert result.notes == [f"{locked}: not readable (permission denied); skipped"]


def test_limits_bound_the_search(fake: FakeHome):
    result = search(home=fake.home, roots=[fake.root], env={}, limits=Limits(max_entries=3))
    assert len(result.sessions) < 5
    assert any("search stopped after 3 directory entries" in n for n in result.notes), result.notes
    deep = fake.root / "a/b/c/d"
    deep.mkdir(parents=True)
    (deep / ".aider.chat.history.md").write_text("# aider chat started at 2026-01-01 10:00:00\n")
    assert str(deep / ".aider.chat.history.md") not in {
        s.path for s in discover(home=fake.home, roots=[fake.root], env={}, limits=Limits(max_depth=3))}
    assert str(deep / ".aider.chat.history.md") in {
        s.path for s in discover(home=fake.home, roots=[fake.root], env={}, limits=Limits(max_depth=4))}
    small = search(home=fake.home, roots=[fake.root], agents=["aider"], env={}, limits=Limits(max_root_entries=2))
    assert any("Aider search stopped after 2 directory entries under one root" in n for n in small.notes)
    late = search(home=fake.home, env={}, limits=Limits(seconds=0))
    assert late.sessions == [] and any("stopped after 0 s" in n for n in late.notes)


def test_thousands_of_sessions_are_listed_fast(tmp_path: Path):
    home = tmp_path / "home"
    for p in range(20):
        project = home / ".claude/projects" / f"-p{p}"
        project.mkdir(parents=True)
        for i in range(100):
            (project / f"s{i}.jsonl").write_text("{}\n")
    for day in range(10):
        folder = home / ".codex/sessions/2026/01" / f"{day:02d}"
        folder.mkdir(parents=True)
        for i in range(100):
            (folder / f"rollout-{i}.jsonl").write_text("{}\n")
    compaction.formats()  # readers imported once, as in any process that has loaded a log
    started = time.perf_counter()
    sessions = discover(home=home, env={})
    elapsed = time.perf_counter() - started
    assert len(sessions) == 3000
    assert elapsed < 3, f"{elapsed:.2f} s for 3,000 sessions"  # ~0.1 s on an idle machine; slack for shared CPUs


# ------------------------------------------------------------------------------------------------ OpenCode database
def opencode_database(path: Path) -> None:
    """A database with OpenCode 1.2's session / message / part tables (only the columns discover reads)."""
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT, title TEXT,
                              time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);
        INSERT INTO session VALUES ('ses_a', 'p', NULL, '/home/me/app', 'A', 1767225600000, 1767229200000);
        INSERT INTO session VALUES ('ses_b', 'p', 'ses_a', '/home/me/app', 'B', 1767225600000, 1767232800000);
        INSERT INTO message VALUES ('m1', 'ses_a', '{"role":"user"}');
        INSERT INTO part VALUES ('p1', 'm1', 'ses_a', '{"type":"text","text":"hello"}');
    """)
    conn.commit()
    conn.close()


def test_opencode_database_sessions_when_the_reader_takes_databases(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "home/.local/share/opencode"
    data.mkdir(parents=True)
    opencode_database(data / "opencode.db")
    monkeypatch.setattr(disc, "_reads_databases", lambda name: False)
    assert discover(home=tmp_path / "home", env={}) == []
    monkeypatch.setattr(disc, "_reads_databases", lambda name: name == "opencode")
    sessions = discover(home=tmp_path / "home", env={})
    assert [(s.conversation, s.kind, s.parent, s.where, s.modified) for s in sessions] == [
        ("ses_b", "subagent", "ses_a", "app", 1767232800.0), ("ses_a", "session", None, "app", 1767229200.0)]
    assert {s.conversation: s.size for s in sessions} == {"ses_a": len('{"role":"user"}') + len(
        '{"type":"text","text":"hello"}'), "ses_b": 0}
    assert all(s.path == str(data / "opencode.db") for s in sessions)


def test_a_damaged_opencode_database_is_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = tmp_path / "home/.local/share/opencode"
    data.mkdir(parents=True)
    (data / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    monkeypatch.setattr(disc, "_reads_databases", lambda name: True)
    result = search(home=tmp_path / "home", env={})
    assert result.sessions == []
    assert len(result.notes) == 1 and str(data / "opencode.db") in result.notes[0]


def test_the_database_is_only_read(tmp_path: Path):
    opencode_database(tmp_path / "x.db")
    conn = disc._open_read_only(str(tmp_path / "x.db"))
    try:
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute("DELETE FROM session")
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute("ATTACH DATABASE ':memory:' AS other")
    finally:
        conn.close()
    assert len(sqlite3.connect(tmp_path / "x.db").execute("SELECT * FROM session").fetchall()) == 2


# ------------------------------------------------------------------------------------------------ counting
def test_llm_calls_are_counted_only_when_asked(fake: FakeHome):
    sessions = discover(home=fake.home, agents=["claude-code", "codex"], env={})
    assert all(s.llm_calls is None and "llm_calls" not in s.to_json() for s in sessions)
    counted = by_path(count_llm_calls(sessions))
    expected_claude = sum(len(c.llm_call_indices) for c in compaction.load_all_conversations(fake.expected["claude main"]))
    expected_codex = sum(len(c.llm_call_indices) for c in compaction.load_all_conversations(fake.expected["codex rollout"]))
    assert expected_claude > 0 and expected_codex > 0
    assert counted[fake.expected["claude main"]].llm_calls == expected_claude
    assert counted[fake.expected["codex rollout"]].llm_calls == expected_codex
    assert counted[fake.expected["claude main"]].to_json()["llm_calls"] == expected_claude


def test_a_session_that_cannot_be_read_gets_a_count_error(fake: FakeHome):
    broken = fake.write("", ".codex/sessions/2026/01/03/rollout-broken.jsonl", b"\x00\x01 not a log", 60)
    counted = by_path(count_llm_calls(discover(home=fake.home, agents=["codex"], env={})))
    assert counted[str(broken)].llm_calls is None
    assert "binary" in counted[str(broken)].count_error
    assert counted[str(broken)].to_json()["count_error"] == counted[str(broken)].count_error
    assert counted[fake.expected["codex rollout"]].count_error is None


def test_load_session_picks_the_conversation_of_a_shared_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    conv = compaction.load(str(Path(__file__).parent / "fixtures/codex/rollout.jsonl"))
    from dataclasses import replace

    a = replace(conv, source=replace(conv.source, conversation_id="ses_a"))
    b = replace(conv, source=replace(conv.source, conversation_id="ses_b"))
    calls = []

    def fake_load(path, format=None):
        calls.append(path)
        return [a, b]

    monkeypatch.setattr(disc, "load_all_conversations", fake_load)
    first = FoundSession("opencode", str(tmp_path), 1, 0.0, conversation="ses_b")
    assert [c.id for c in load_session(first)] == ["ses_b"]
    with pytest.raises(compaction.LoadError, match="no conversation 'ses_c' in this log; its conversations are: "
                                                   "ses_a, ses_b"):
        load_session(replace(first, conversation="ses_c"))
    calls.clear()
    counted = count_llm_calls([first, replace(first, conversation="ses_a")])
    assert calls == [str(tmp_path)]  # the shared log is read once
    assert [s.llm_calls for s in counted] == [len(conv.llm_call_indices)] * 2


# ------------------------------------------------------------------------------------------------ JSON and CLI
def test_json_object_contract(fake: FakeHome):
    session = by_path(discover(home=fake.home, env={}))[fake.expected["claude subagent"]]
    data = session.to_json()
    assert data == {"path": fake.expected["claude subagent"], "agent": "claude-code",
                    "modified": "2026-01-01T19:00:00Z", "size": len(claude_session()), "kind": "subagent",
                    "parent": fake.expected["claude main"], "where": "-home-me-app"}


def run_cli(args: list[str], monkeypatch: pytest.MonkeyPatch, home: Path, cwd: Path | None = None
            ) -> tuple[int, str]:
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "GEMINI_CLI_HOME",
                 "CLINE_DIR", "CLINE_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    if cwd is not None:
        monkeypatch.chdir(cwd)
    out = io.StringIO()
    return main(["discover", *args], out=out), out.getvalue()


def test_cli_json(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    code, text = run_cli(["--json", "--root", str(fake.root)], monkeypatch, fake.home)
    assert code == 0
    rows = json.loads(text)
    assert len(rows) == len(discover(home=fake.home, roots=[fake.root], env={}))
    for row in rows:
        assert {"path", "agent", "modified", "size"} <= set(row)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", row["modified"])
        assert isinstance(row["size"], int) and "llm_calls" not in row
    assert [r["modified"] for r in rows] == sorted((r["modified"] for r in rows), reverse=True)
    assert rows[0]["path"] == fake.expected["aider llm"]


def test_cli_count_and_agent(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    code, text = run_cli(["--json", "--count", "--agent", "codex"], monkeypatch, fake.home)
    rows = json.loads(text)
    assert code == 0 and {r["agent"] for r in rows} == {"codex"} and len(rows) == 2
    expected = len(compaction.load(fake.expected["codex rollout"]).llm_call_indices)
    assert all(r["llm_calls"] == expected for r in rows)


def test_cli_table(fake: FakeHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    code, text = run_cli(["--agent", "claude-code", "--agent", "opencode"], monkeypatch, fake.home)
    lines = text.splitlines()
    assert code == 0
    assert lines[0].split() == ["modified", "(UTC)", "agent", "kind", "size", "path"]
    assert lines[1].startswith("2026-01-01 20:00  claude-code  session")
    assert lines[1].endswith(fake.expected["claude main"]) and "31.0 kB" in lines[1]
    assert any(line.endswith("storage [ses_child]") and "subagent" in line for line in lines)
    code, text = run_cli(["--count", "--agent", "claude-code"], monkeypatch, fake.home)
    assert "LLM calls" in text.splitlines()[0]


def test_cli_searches_the_current_folder_for_aider_by_default(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    code, text = run_cli(["--json", "--agent", "aider"], monkeypatch, fake.home, cwd=fake.root)
    assert code == 0 and {r["path"] for r in json.loads(text)} == {fake.expected["aider chat"],
                                                                    fake.expected["aider llm"]}


def test_cli_nothing_found_and_bad_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture):
    (tmp_path / "empty").mkdir()
    code, text = run_cli([], monkeypatch, tmp_path / "empty", cwd=tmp_path / "empty")
    assert (code, text) == (0, "no agent sessions found\n")
    code, text = run_cli(["--json"], monkeypatch, tmp_path / "empty", cwd=tmp_path / "empty")
    assert (code, json.loads(text)) == (0, [])
    with pytest.raises(SystemExit) as exc:
        run_cli(["--agent", "cursor"], monkeypatch, tmp_path / "empty")
    assert exc.value.code == 2
    assert "invalid choice: 'cursor'" in capsys.readouterr().err


def test_cli_notes_go_to_stderr(fake: FakeHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture):
    locked = str(fake.home / ".claude/projects")
    real_scandir = os.scandir
    monkeypatch.setattr(disc.os, "scandir",
                        lambda p: (_ for _ in ()).throw(PermissionError(13, "denied")) if str(p) == locked
                        else real_scandir(p))
    code, text = run_cli(["--json", "--agent", "claude-code"], monkeypatch, fake.home)
    assert code == 0 and json.loads(text) == []
    assert f"compaction: note: {locked}: not readable (permission denied); skipped" in capsys.readouterr().err
