"""The log picker's "Sessions on this machine": when it is on (the decision rule, then the app driven through
``AppTest`` with a fake home), what it lists, and that a chosen session is read like any other log."""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import MagicMock

import pytest
from conftest import ROOT
from fake_home import FakeHome
from fake_home import build
from streamlit.testing.v1 import AppTest

import compaction
from compaction.ui import local_sessions
from compaction.ui import source
from compaction.ui.local_sessions import NO_IP_ATTRIBUTE
from compaction.ui.local_sessions import local_sessions_allowed

APP = str(ROOT / "app.py")
TIMEOUT = 60
LOCAL = {"Host": "localhost:8501"}
AGENT_VARIABLES = ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA",
                   "GEMINI_CLI_HOME", "CLINE_DIR", "CLINE_DATA_DIR")


# ------------------------------------------------------------------------------------------------ the rule
@pytest.mark.parametrize(("setting", "headers", "ip", "allowed"), [
    (None, LOCAL, None, True),  # Streamlit reports a loopback peer as None
    (None, {"host": "127.0.0.1:8501"}, None, True),
    (None, {"Host": "[::1]:8501"}, "::1", True),
    (None, LOCAL, "127.0.0.1", True),
    (None, LOCAL, "::ffff:127.0.0.1", True),
    (None, LOCAL, NO_IP_ATTRIBUTE, True),  # an older Streamlit: the Host header decides
    (None, LOCAL, "192.168.1.20", False),  # a browser elsewhere that sends Host: localhost (a tunnel)
    (None, LOCAL, MagicMock(), False),  # not an address at all
    (None, {"Host": "lab.example.com"}, None, False),
    (None, {"Host": "10.0.0.5:8501"}, "10.0.0.5", False),
    (None, {**LOCAL, "X-Forwarded-For": "203.0.113.9"}, None, False),  # relayed by a proxy on the same host
    (None, {**LOCAL, "Forwarded": "for=203.0.113.9"}, None, False),
    (None, {}, None, False),  # no request headers (bare mode)
    ("", LOCAL, None, True),
    ("1", {"Host": "lab.example.com"}, "203.0.113.9", True),  # forced on
    ("true", {}, None, True),
    ("0", LOCAL, None, False),  # forced off
    ("off", LOCAL, None, False),
    ("maybe", LOCAL, None, False),  # not understood: off
])
def test_local_sessions_allowed(setting, headers, ip, allowed):
    assert local_sessions_allowed(setting, headers, ip) is allowed


# ------------------------------------------------------------------------------------------------ the app
@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHome:
    """A fake home with every agent's sessions (the app's HOME), and a samples folder with one OpenAI log."""
    home = build(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home.home))
    for name in AGENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home.root)
    samples = tmp_path / "samples"
    samples.mkdir()
    sample = compaction.load(str(ROOT / "tests/fixtures/codex/rollout.jsonl"))
    (samples / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(sample, "openai")))
    monkeypatch.setenv("COMPACTION_LAB_SAMPLES", str(samples))
    return home


def run_app(monkeypatch: pytest.MonkeyPatch, setting: str | None) -> AppTest:
    if setting is None:
        monkeypatch.delenv(local_sessions.SETTING, raising=False)
    else:
        monkeypatch.setenv(local_sessions.SETTING, setting)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def keys(at: AppTest) -> set[str]:
    return {w.key for w in at.selectbox}


def captions(at: AppTest) -> str:
    """Every caption, with the markdown escapes taken out."""
    return " ".join(str(c.value) for c in at.caption).replace("\\", "")


@pytest.mark.parametrize("setting", [None, "0"])
def test_off_lists_nothing(fake: FakeHome, monkeypatch: pytest.MonkeyPatch, setting: str | None):
    """AppTest sends no Host header, like a request that is not from this machine: nothing is searched or shown."""
    searched = []
    monkeypatch.setattr(local_sessions, "search", lambda **kw: searched.append(kw))
    at = run_app(monkeypatch, setting)
    assert local_sessions.AGENT_KEY not in keys(at)
    assert "Sessions on this machine" not in [e.label for e in at.expander]
    assert str(fake.home) not in captions(at)
    assert searched == []


def test_on_offers_the_sessions_grouped_by_agent_newest_first(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    at = run_app(monkeypatch, "1")
    agent = at.selectbox(key=local_sessions.AGENT_KEY)
    assert agent.value is None  # nothing chosen: the bundled sample is shown
    assert agent.options == ["Aider (2)", "Claude Code (4)", "Codex CLI (2)", "Gemini CLI (4)", "Cline (3)",
                             "Roo Code (2)", "OpenCode (2)"]  # by each agent's newest session
    assert "bundled sample" in captions(at)
    agent.set_value("claude-code").run()
    assert not at.exception
    session = at.selectbox(key=local_sessions.SESSION_KEY)
    assert session.options == [
        "2026-01-01 20:00 · 31.0 kB · -home-me-app · 1111-aaaa.jsonl",
        "↳ 2026-01-01 19:00 · 31.0 kB · -home-me-app · agent-a1b2.jsonl",
        "2026-01-01 12:00 · 31.0 kB · -home-me-lib · 2222-bbbb.jsonl",
        "↳ 2026-01-01 03:00 · 31.0 kB · -home-me-app · agent-0042.jsonl",
    ]
    text = captions(at)
    assert "session on this machine" in text and "1111" in text
    expected = compaction.load_all_conversations(fake.expected["claude main"])
    assert f"**{expected[0].summary()['messages']}** messages" in " ".join(str(m.value) for m in at.markdown)
    assert "log" not in dict(at.query_params)  # a local path never goes into a link


def test_a_chosen_session_is_read_like_a_log_of_its_format(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    at = run_app(monkeypatch, "1")
    at.selectbox(key=local_sessions.AGENT_KEY).set_value("codex").run()
    session = at.selectbox(key=local_sessions.SESSION_KEY)
    assert session.options[1].startswith("2026-01-01 02:00") and "archived" in session.options[1]
    session.set_value(session.options[1]).run()  # by key: the archived rollout
    assert not at.exception and not at.error
    assert ":blue-badge[codex]" in " ".join(str(m.value) for m in at.markdown)
    assert "rollout-2025-12-30" in captions(at)


def test_an_upload_takes_precedence(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    at = run_app(monkeypatch, "1")
    at.selectbox(key=local_sessions.AGENT_KEY).set_value("claude-code").run()
    data = Path(fake.expected["codex rollout"]).read_bytes()
    at.file_uploader(key=source.UPLOAD_KEY).set_value(("mine.jsonl", data, "application/json")).run()
    assert not at.exception
    assert "uploaded file" in captions(at)


def test_a_session_that_vanished_is_a_warning_not_a_crash(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    at = run_app(monkeypatch, "1")
    at.selectbox(key=local_sessions.AGENT_KEY).set_value("claude-code").run()
    Path(fake.expected["claude main"]).unlink()
    at.run()
    assert not at.exception
    assert any("cannot be read any more" in str(w.value) for w in at.warning)
    assert "bundled sample" in captions(at)


def test_nothing_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeHome):
    empty = tmp_path / "empty-home"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.chdir(empty)
    at = run_app(monkeypatch, "1")
    assert local_sessions.AGENT_KEY not in keys(at)
    assert "No agent sessions found in your home folder" in captions(at)


def test_a_folder_session_is_read_from_its_folder(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    """A Cline task folder goes through the same read as any log (here the folder's loading is stood in for, since
    the Cline reader and folder loading live elsewhere)."""
    read = []
    real_load = compaction.load_all_conversations

    def load_folder(folder, format=None):
        read.append((folder, format))
        return real_load(fake.expected["codex rollout"])

    monkeypatch.setattr(source.compaction, "load_all_conversations", load_folder)
    at = run_app(monkeypatch, "1")
    at.selectbox(key=local_sessions.AGENT_KEY).set_value("cline").run()
    assert not at.exception
    folder = str(Path(fake.expected["cline task"]).parent)
    assert read and read[-1][0] == folder
    assert folder in captions(at)


def test_look_again_finds_new_sessions_and_forgets_gone_ones(fake: FakeHome, monkeypatch: pytest.MonkeyPatch):
    at = run_app(monkeypatch, "1")
    at.selectbox(key=local_sessions.AGENT_KEY).set_value("codex").run()
    assert len(at.selectbox(key=local_sessions.SESSION_KEY).options) == 2
    fake.write("", ".codex/sessions/2026/01/05/rollout-new.jsonl", Path(fake.expected["codex rollout"]).read_bytes(),
               90)
    at.run()
    assert len(at.selectbox(key=local_sessions.SESSION_KEY).options) == 2  # the list is kept for a while
    at.button(key="log.local.rescan").click().run()
    assert not at.exception
    options = at.selectbox(key=local_sessions.SESSION_KEY).options
    assert len(options) == 3 and options[0].startswith("2026-01-04 18:00")
    for path in Path(fake.home / ".codex").rglob("rollout-*.jsonl"):
        path.unlink()
    at.button(key="log.local.rescan").click().run()
    assert not at.exception
    assert "Codex CLI" not in " ".join(at.selectbox(key=local_sessions.AGENT_KEY).options)
    assert "bundled sample" in captions(at)
