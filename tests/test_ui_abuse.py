"""The app under abuse (AppTest): every error a user can cause in the UI is one readable message, never a traceback.

Each test drives the real ``app.py`` against a temporary samples folder (``COMPACTION_LAB_SAMPLES``) and checks two
things: ``at.exception`` stays empty, and an ``st.error`` / ``st.warning`` / ``st.info`` with a *specific* message is
shown (which setup, which field, what was expected). Widgets are found by their session-state keys, which the UI
modules export, so the tests follow the layout as it changes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT
from conftest import open_parameters
from streamlit.testing.v1 import AppTest
from test_app import coding_log

import compaction
from compaction import tiktoken_offline
from compaction import tokens
from compaction.conversation import Conversation
from compaction.conversation import system
from compaction.conversation import user
from compaction.strategies import base as strategy_base
from compaction.ui import cache
from compaction.ui import settings
from compaction.ui import setups
from compaction.ui import source

APP = str(ROOT / "app.py")
TIMEOUT = 60
RESULTS = "Results"  # the subheader above the metric cards, drawn once the replays are shown
CLAUDE_CODE_SESSION = ROOT / "tests" / "fixtures" / "claude-code" / "session.jsonl"


# ------------------------------------------------------------------------------------------------------- helpers
def texts(elements) -> list[str]:
    return [str(e.value) for e in elements]


def plain(elements) -> str:
    """The elements' markdown as the reader sees it: backslash escapes removed, joined by spaces."""
    return " ".join(re.sub(r"\\(.)", r"\1", t) for t in texts(elements))


def subheaders(at: AppTest) -> list[str]:
    return texts(at.subheader)


def no_traceback(at: AppTest) -> None:
    """No exception element, and no message that reads like a traceback."""
    assert not at.exception, texts(at.exception)
    shown = " ".join(texts(at.error) + texts(at.warning) + texts(at.info))
    assert "Traceback" not in shown and 'File "' not in shown


def write_log(folder: Path, conversation: Conversation, name: str = source.DEFAULT_SAMPLE) -> None:
    (folder / name).write_text(json.dumps(compaction.convert(conversation, "openai")))


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A samples folder holding the AppTest suite's coding log under the default sample name."""
    folder = tmp_path / "samples"
    folder.mkdir()
    write_log(folder, coding_log())
    monkeypatch.setenv("COMPACTION_LAB_SAMPLES", str(folder))
    return folder


def open_app(samples: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, texts(at.exception)
    return at


@pytest.fixture
def app(samples: Path) -> AppTest:
    """The app on the coding log with a window small enough that both default setups compact."""
    at = open_app(samples)
    at.number_input(key=settings.WINDOW_KEY).set_value(20_000).run()
    assert not at.exception and not at.error, texts(at.error)
    return at


def set_strategy(at: AppTest, slot: str, strategy: str) -> AppTest:
    at.selectbox(key=setups.strategy_key(slot)).set_value(strategy).run()
    assert not at.exception and not at.error, texts(at.error)
    return at


def set_param(at: AppTest, slot: str, strategy: str, param: str, value: object) -> AppTest:
    open_parameters(at, slot)
    widget = at.get_by_key(setups.widget_key(slot, strategy, param))
    assert widget is not None, (slot, strategy, param)
    return widget.set_value(value).run()


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    return at.file_uploader(key=source.UPLOAD_KEY).set_value((name, data, "application/octet-stream")).run()


def saved_tokens(at: AppTest) -> list[str]:
    return [m.value for m in at.metric if m.label == "Tokens saved"]


# ----------------------------------------------------------------------------------------------- threshold policy
@pytest.mark.parametrize(("compact_at", "compact_to"), [(0.5, 0.5), (0.3, 0.6)], ids=["equal", "above"])
def test_compact_to_not_below_compact_at_is_haystacks_reason(app: AppTest, compact_at: float, compact_to: float):
    app.slider(key=settings.AT_KEY).set_value(compact_at).run()
    app.slider(key=settings.TO_KEY).set_value(compact_to).run()
    no_traceback(app)
    errors = " ".join(texts(app.error))
    assert "0 < compact_to < compact_at <= 1" in errors
    assert RESULTS not in subheaders(app)
    assert any("Fix the settings in the sidebar" in i for i in texts(app.info))


def test_the_context_window_widget_does_not_accept_zero(app: AppTest):
    window = app.number_input(key=settings.WINDOW_KEY)
    assert window.min is not None and window.min >= 1
    window.set_value(0).run()  # refused: the widget keeps a window of at least its minimum
    no_traceback(app)
    assert app.number_input(key=settings.WINDOW_KEY).value >= 1
    app.number_input(key=settings.WINDOW_KEY).set_value(1).run()  # the smallest window allowed still replays
    no_traceback(app)
    assert not app.error, texts(app.error)
    assert RESULTS in subheaders(app) and len(saved_tokens(app)) == 2


# ------------------------------------------------------------------------------------------ strategy parameters
@pytest.mark.parametrize("trigger", ["TokensExceed(", "TokensExceed(lots)", "Sometimes()", "All(TokensExceed(5),"])
def test_a_malformed_trigger_is_that_setups_error_only(app: AppTest, trigger: str):
    strategy = "agent_framework.truncation"
    set_strategy(app, "A", strategy)
    set_param(app, "A", strategy, "trigger", trigger)
    no_traceback(app)
    assert len(app.error) == 1, texts(app.error)
    assert "Setup A" in plain(app.error) and "trigger '" in plain(app.error)
    assert RESULTS in subheaders(app) and len(saved_tokens(app)) == 1  # setup B still replays


@pytest.mark.parametrize(("strategy", "children", "expected"), [
    ("agent_framework.pipeline", "tool_result_compaction; no_such_strategy", "child 'no_such_strategy': expected"),
    ("agent_framework.pipeline", "truncation(minimum_preserved_groups=", "missing ')'"),
    ("agent_framework_python.token_budget_composed", "haystack.nothing_here", "haystack.nothing_here"),
])
def test_a_bad_pipeline_child_is_a_readable_error(app: AppTest, strategy: str, children: str, expected: str):
    set_strategy(app, "B", strategy)
    set_param(app, "B", strategy, "children", children)
    no_traceback(app)
    assert len(app.error) == 1, texts(app.error)
    assert "Setup B" in plain(app.error) and expected in plain(app.error)
    assert RESULTS in subheaders(app) and len(saved_tokens(app)) == 1


def test_a_placeholder_with_format_braces_is_taken_literally(app: AppTest):
    strategy = "haystack.tool_result_pruning"
    hostile = "{0} {missing} { <b>x</b> %s {tool_name}"
    set_param(app, "A", strategy, "placeholder", hostile)
    no_traceback(app)
    assert not app.error, texts(app.error)
    assert saved_tokens(app)[0] != "0"  # the replay ran and pruned with that placeholder


# ------------------------------------------------------------------------------------------------------ uploads
REJECTED_UPLOADS = [
    ("zero.json", b"", "the file is empty"),
    ("binary.json", bytes(range(256)) * 8, "binary file"),
    ("utf16.json", json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode("utf-16")[:-1],
     "UTF-16 text (byte-order mark FF FE) that does not decode"),  # whole UTF-16 logs load (test_safe_files.py)
    ("latin1.json", '{"messages": [{"role": "user", "content": "café"}]}'.encode("latin-1"), "not UTF-8 text"),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ("cut.json", json.dumps(compaction.convert(coding_log(), "openai")).encode()[:5000], "not valid JSON"),
    ("null.json", b"null", "unknown log format"),
    ("numbers.json", b"[1, 2, 3]", "unknown log format"),
]


@pytest.mark.parametrize(("name", "data", "expected"), REJECTED_UPLOADS, ids=[u[0] for u in REJECTED_UPLOADS])
def test_an_upload_the_app_rejects_is_a_readable_error(app: AppTest, name: str, data: bytes, expected: str):
    upload(app, name, data)
    no_traceback(app)
    errors = plain(app.error)
    assert "Could not read this log" in errors, errors
    assert f"— {name}" in errors and expected in errors
    assert RESULTS not in subheaders(app)


def test_an_upload_with_a_huge_number_names_the_file(app: AppTest):
    upload(app, "huge_number.json", b'{"messages": [{"role": "user", "content": ' + b"9" * 5000 + b"}]}")
    no_traceback(app)
    errors = plain(app.error)
    assert "Could not read this log" in errors and "huge_number.json" in errors


def test_forcing_a_format_that_does_not_fit_explains_why(app: AppTest):
    app.selectbox(key=source.FORMAT_KEY).set_value("claude-code").run()
    no_traceback(app)
    errors = plain(app.error)
    assert "Could not read this log" in errors and "does not look like Claude Code session" in errors
    app.selectbox(key=source.FORMAT_KEY).set_value(source.AUTO_FORMAT).run()
    assert not app.exception and not app.error and RESULTS in subheaders(app)


def test_a_log_in_an_unknown_format_lists_what_was_tried(app: AppTest):
    unknown = {"transcript": [{"speaker": "agent", "said": "hello"}], "version": 3}
    upload(app, "mystery.json", json.dumps(unknown).encode())
    no_traceback(app)
    errors = plain(app.error)
    assert "mystery.json: unknown log format" in errors and "Tried" in errors


def test_a_jsonl_log_with_bad_lines_loads_and_lists_them(app: AppTest):
    if not CLAUDE_CODE_SESSION.exists():
        pytest.skip("the Claude Code fixture is missing")
    lines = CLAUDE_CODE_SESSION.read_bytes().splitlines()
    damaged = [lines[0], b'{"type": "user", "message": {', *lines[1:4], b'{"type": "user", "x": "\xff"}', *lines[4:],
               b"]]]"]
    upload(app, "session.jsonl", b"\n".join(damaged) + b"\n")
    no_traceback(app)
    assert not app.error, texts(app.error)
    assert ":blue-badge[claude-code]" in plain(app.markdown)
    expander = next(e for e in app.expander if e.label.startswith("Load warnings"))
    listed = texts(expander.text)
    assert any(w.startswith("line 2: ") for w in listed), listed
    assert any(w.startswith("line 6: ") and "UTF-8" in w for w in listed), listed
    assert any(w.startswith(f"line {len(damaged)}: ") for w in listed), listed
    assert RESULTS in subheaders(app)


def with_token_in_a_tool_result(token: str) -> Conversation:
    """The coding log with ``token`` appended to its second tool result."""
    messages = list(coding_log().messages)
    index = [i for i, m in enumerate(messages) if m.role == "tool"][1]
    result = messages[index]
    messages[index] = dataclasses.replace(result, tool_result=dataclasses.replace(
        result.tool_result, result=f"{result.tool_result.text}\n{token}"))
    return Conversation(messages=tuple(messages))


def test_a_megabyte_unbroken_token_opens_like_any_log(samples: Path):
    """A hex dump or a run of test dots with no separator: the page finishes (AppTest's own timeout would fail a
    stall) and shows the results, with the token itself in the log as sent."""
    unbroken = "0123456789abcdef" * 65_536  # 1 MB, no separator
    write_log(samples, with_token_in_a_tool_result(unbroken))
    at = open_app(samples)
    no_traceback(at)
    assert RESULTS in subheaders(at)



def test_a_log_with_no_llm_calls_says_so(samples: Path):
    talk = Conversation(messages=(system("Be brief."), user("First question?"), user("Anyone there?"),
                                  user("Hello <script>alert(1)</script>")))
    write_log(samples, talk)
    at = open_app(samples)
    no_traceback(at)
    assert any("no LLM call to replay" in w for w in texts(at.warning))
    assert RESULTS not in subheaders(at)


# ------------------------------------------------------------------------------------------------------ counter
@pytest.fixture
def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every tiktoken encoding is unavailable, and no counter or app cache remembers a working one."""
    def unavailable(encoding: str = "o200k_base"):
        raise tiktoken_offline.EncodingUnavailable(f"no BPE file for {encoding} on this machine")

    monkeypatch.setattr(tiktoken_offline, "get_encoding", unavailable)
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    cache.counter.clear()
    yield
    cache.counter.clear()


@pytest.mark.usefixtures("no_tiktoken")
def test_an_unavailable_tiktoken_encoding_falls_back_with_a_notice(app: AppTest):
    app.selectbox(key=settings.COUNTER_KEY).set_value("tiktoken:o200k_base").run()
    no_traceback(app)
    assert not app.error, texts(app.error)
    notices = plain(app.warning)
    assert "Counter 'tiktoken:o200k_base' is unavailable (no BPE file for o200k_base on this machine)" in notices
    assert "using the approximate counter" in notices
    assert RESULTS in subheaders(app) and len(saved_tokens(app)) == 2


# -------------------------------------------------------------------------------------------------------- replay
def exploding(build: Callable) -> Callable:
    """A strategy builder whose runners fail on the third LLM call, as an internal bug would."""
    def build_then_break(values, ctx):
        runner = build(values, ctx)
        real_before_call = runner.before_call
        calls = iter(range(1_000_000))

        def before_call():
            if next(calls) == 2:
                raise KeyError("entry 'call_2' vanished from the history")
            return real_before_call()

        runner.before_call = before_call
        return runner

    return build_then_break


def test_a_replay_that_raises_is_one_error_for_that_setup_only(samples: Path, monkeypatch: pytest.MonkeyPatch):
    name = "haystack.sliding_window"
    info = compaction.get_strategy(name)
    monkeypatch.setitem(strategy_base.STRATEGIES._items, name, dataclasses.replace(info, build=exploding(info.build)))
    cache.run_replay.clear()
    try:
        at = open_app(samples)
        set_strategy(at, "A", "haystack.tool_result_pruning")
        at.selectbox(key=setups.strategy_key("B")).set_value(name).run()
        no_traceback(at)
        assert len(at.error) == 1, texts(at.error)
        assert "Setup B" in plain(at.error) and "KeyError: \"entry 'call_2' vanished from the history\"" in plain(at.error)
        assert RESULTS in subheaders(at) and len(saved_tokens(at)) == 1  # setup A is unaffected
    finally:
        cache.run_replay.clear()
