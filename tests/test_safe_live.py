"""Issue 13, safe to share — a link, an import or a sweep never spends the server's money; crafted links never break
the page and cost a few CPU-seconds; replays started from the app stop cleanly at their work budget.

Every test that could reach a model points ``OPENAI_BASE_URL`` at a local listener (``tests/listener.py``) with a fake
key and counts what it received; ``HOME`` is a temporary folder, so a summary written to the default disk cache
would show.
"""

from __future__ import annotations

import io
import json
import math
import re
import time
from pathlib import Path

import pytest
from conftest import open_parameters
from conftest import real_log
from listener import SUMMARY
from listener import Listener
from listener import listening
from streamlit.testing.v1 import AppTest
from test_app import APP
from test_app import TIMEOUT
from test_app import coding_log

import compaction
from compaction import summarizers
from compaction.analysis.sweep import sweep
from compaction.budget import WorkBudget
from compaction.cli import main
from compaction.setups import Setup
from compaction.setups import encode_for_url
from compaction.setups import setups_to_json
from compaction.summarizers import CACHE_ENV
from compaction.summarizers import GATE_ENV
from compaction.summarizers import LIVE_ENV
from compaction.summarizers import SUMMARY_CACHE
from compaction.summarizers import live_calls
from compaction.ui import cache
from compaction.ui import results
from compaction.ui import settings
from compaction.ui import setups
from compaction.ui import share
from compaction.ui import source
from compaction.ui import state

SUMMARIZE = "haystack.summarization"
PRUNE = "haystack.tool_result_pruning"
MODEL = "linked-model-name"
WINDOW = 8_000
#: a setup whose summaries would come from a real model
LIVE_SETUP = Setup(SUMMARIZE, {"summarizer": "openai-compatible", "summarizer_model": MODEL, "summary_tokens": 300},
                   context_window=WINDOW, label="Live")
#: what a crafted link may cost the server
LINK_CPU_SECONDS = 10


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A local listener as the OpenAI-compatible endpoint, a fake key, a temporary HOME, no opt-in variable, an
    ungated process and empty summary and replay caches."""
    with listening() as listener:
        monkeypatch.setenv("OPENAI_BASE_URL", listener.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key-for-tests")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        for name in (LIVE_ENV, CACHE_ENV, GATE_ENV, "XDG_CACHE_HOME"):
            monkeypatch.delenv(name, raising=False)
        SUMMARY_CACHE.clear()
        cache.run_replay.clear()
        try:
            yield listener
        finally:
            SUMMARY_CACHE.clear()
            cache.run_replay.clear()


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "samples"
    folder.mkdir()
    (folder / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(coding_log(), "openai")))
    monkeypatch.setenv("COMPACTION_LAB_SAMPLES", str(folder))
    return folder


def no_disk_cache(home: Path) -> None:
    assert not (home / ".cache" / "compaction-lab").exists()


def plain(elements) -> str:
    """The elements' markdown as read: escapes, bold and code marks removed, joined by spaces."""
    text = " ".join(re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements)
    return text.replace("**", "").replace("`", "")


def open_link(token: str) -> tuple[AppTest, float]:
    """The app opened on a link carrying ``token``, and the CPU-seconds the page run cost this process."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["setups"] = token
    started = time.process_time()
    at.run()
    return at, time.process_time() - started


def assert_page_intact(at: AppTest) -> None:
    assert not at.exception, [str(e.value) for e in at.exception]
    shown = plain(at.error) + plain(at.warning) + plain(at.info)
    assert "Traceback" not in shown and 'File "' not in shown


# ------------------------------------------------------------------------------------------------ the library
def test_the_cli_calls_the_model_it_is_told_to_and_keeps_nothing_on_disk(endpoint: Listener, tmp_path: Path):
    log = Path(compaction.__file__).parents[1] / "sample_conversations" / "support_agent.openai.json"
    code = main(["replay", str(log), "--strategy", SUMMARIZE, "--set", "summarizer=openai-compatible",
                 "--set", f"summarizer_model={MODEL}", "--context-window", "8000", "--json"], out=io.StringIO())
    assert code == 0 and endpoint.requests
    first = endpoint.requests[0]
    assert first.path == "/v1/chat/completions" and first.headers["Authorization"] == "Bearer fake-key-for-tests"
    assert first.json()["model"] == MODEL and first.json()["messages"][0]["role"] == "system"
    no_disk_cache(tmp_path / "home")


def test_the_disk_cache_is_used_only_when_opted_in(endpoint: Listener, monkeypatch, tmp_path: Path):
    conv = compaction.Conversation(messages=coding_log().messages)
    folder = tmp_path / "summaries"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    live = LIVE_SETUP.run(conv)
    sent = len(endpoint.requests)
    assert sent and len(list(folder.glob("*.json"))) == len(SUMMARY_CACHE) > 0
    assert any(SUMMARY in item.message.text for item in live.context_at(len(live.steps) - 1))
    SUMMARY_CACHE.clear()
    again = LIVE_SETUP.run(conv)  # from the disk cache: nothing sent
    assert len(endpoint.requests) == sent and again.summary() == live.summary()
    monkeypatch.setenv(CACHE_ENV, "1")
    assert summarizers.summary_cache_dir() == tmp_path / "home" / ".cache" / "compaction-lab" / "summaries"
    monkeypatch.setenv(CACHE_ENV, "0")
    assert summarizers.summary_cache_dir() is None


def test_the_memory_cache_is_bounded():
    memory = summarizers._MemoryCache(entries=3, chars=100)
    for i in range(5):
        memory.put(f"k{i}", "x" * 10)
    assert len(memory) == 3 and memory.get("k0") is None and memory.get("k4") == "x" * 10
    memory.put("big", "y" * 101)  # larger than the whole cache: not kept
    assert memory.get("big") is None
    memory.put("half", "z" * 60)
    memory.put("half2", "z" * 60)  # the characters bound evicts the least recently used
    assert memory.get("half") is None and memory.get("half2") and len(memory) <= 3


def test_a_gated_process_calls_only_inside_an_allowed_block_with_the_variable(endpoint: Listener, monkeypatch):
    conv = compaction.Conversation(messages=coding_log().messages)
    monkeypatch.setenv(GATE_ENV, "1")
    rep = LIVE_SETUP.run(conv)  # gated, outside any decision: withheld
    assert not endpoint.requests and rep.summary()["summarizer_calls"] > 0
    with live_calls(True) as withheld:  # allowed by the page, but the operator did not enable live summaries
        LIVE_SETUP.run(conv)
    assert not endpoint.requests and withheld and {w.model for w in withheld} == {MODEL}
    assert {w.host for w in withheld} == {"127.0.0.1"} and all(w.max_output_tokens == 600 for w in withheld)
    monkeypatch.setenv(LIVE_ENV, "1")
    with live_calls(False) as withheld:  # enabled, but not confirmed
        LIVE_SETUP.run(conv)
    assert not endpoint.requests and withheld
    with live_calls(True) as withheld:
        LIVE_SETUP.run(conv)
    assert endpoint.requests and not withheld


def test_a_sweep_in_a_gated_process_sends_nothing_from_its_workers(endpoint: Listener, monkeypatch):
    monkeypatch.setenv(GATE_ENV, "1")
    monkeypatch.setenv(LIVE_ENV, "1")
    conv = compaction.Conversation(messages=coding_log().messages)
    result = sweep(conv, LIVE_SETUP, {"compact_at": [0.6, 0.7, 0.8, 0.9]}, workers=2, with_information=False)
    assert len(result.rows) == 4 and not endpoint.requests


# ------------------------------------------------------------------------------------------------ the app
def test_a_linked_live_summarizer_sends_nothing_and_says_so(endpoint: Listener, samples: Path, tmp_path: Path):
    at, seconds = open_link(encode_for_url([LIVE_SETUP]))
    assert_page_intact(at)
    notice = plain(at.info)
    assert f"Setup Live asks for a live summarizer (model {MODEL} at 127.0.0.1: about " in notice
    assert f"This server does not enable live summaries ({LIVE_ENV}=1 when it starts)" in notice
    assert not [b for b in at.button if b.key == state.confirm_button_key("A")]
    assert not endpoint.requests and seconds < LINK_CPU_SECONDS
    no_disk_cache(tmp_path / "home")


def test_with_live_summaries_enabled_a_linked_setup_waits_for_confirmation(endpoint: Listener, samples: Path,
                                                                         monkeypatch, tmp_path: Path):
    monkeypatch.setenv(LIVE_ENV, "1")
    at, _ = open_link(encode_for_url([LIVE_SETUP]))
    assert_page_intact(at)
    warning = plain(at.warning)
    estimate = re.search(r"about (\d+) requests?, ([\d,]+) input tokens and up to ([\d,]+) output tokens", warning)
    assert f"model {MODEL} at 127.0.0.1" in warning and estimate, warning
    assert not endpoint.requests
    at.run()  # another run of the page (any interaction) sends nothing either
    assert not endpoint.requests
    at.button(key=state.confirm_button_key("A")).click().run()
    assert_page_intact(at)
    assert endpoint.requests and {r.json()["model"] for r in endpoint.requests} == {MODEL}
    assert all(r.json()["max_tokens"] == 600 for r in endpoint.requests)
    assert "asks for a live summarizer" not in plain(at.warning)
    no_disk_cache(tmp_path / "home")


def test_an_imported_setup_waits_for_confirmation_and_a_bad_one_costs_only_itself(endpoint: Listener, samples: Path,
                                                                                 monkeypatch):
    monkeypatch.setenv(LIVE_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    document = json.loads(setups_to_json([LIVE_SETUP]))
    document["setups"].append({"strategy": PRUNE, "context_window": math.inf, "label": "infinite"})
    document["setups"].append({"strategy": PRUNE, "params": {"min_keep_steps": -5}, "label": "moved"})
    upload = ("setups.json", json.dumps(document).encode(), "application/json")
    at.file_uploader(key=share.IMPORT_FILE_KEY).set_value(upload).run()
    at.button(key=share.IMPORT_BUTTON_KEY).click().run()
    assert_page_intact(at)
    assert "Some setups could not be imported" in plain(at.error)
    assert "setup 2: field 'context_window' must be a finite whole number, got inf" in plain(at.error)
    assert "setup 3: parameter 'min_keep_steps': -5 is outside its range; using its minimum 1" in plain(at.info)
    assert "Loaded 2 setups" in plain(at.success)
    assert f"model {MODEL} at 127.0.0.1" in plain(at.warning) and not endpoint.requests


@pytest.mark.parametrize("enabled", [False, True], ids=["not enabled", "enabled"])
def test_a_setup_made_on_the_page_calls_the_model_only_when_enabled(endpoint: Listener, samples: Path, monkeypatch,
                                                                  enabled: bool):
    if enabled:
        monkeypatch.setenv(LIVE_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.number_input(key=settings.WINDOW_KEY).set_value(WINDOW)
    at.selectbox(key=setups.strategy_key("A")).set_value(SUMMARIZE).run()
    open_parameters(at, "A")
    at.selectbox(key=setups.widget_key("A", SUMMARIZE, "summarizer")).set_value("openai-compatible").run()
    assert_page_intact(at)
    assert bool(endpoint.requests) is enabled
    assert ("This server does not enable live summaries" in plain(at.info)) is not enabled


LINKS = {
    "pipelines 150 deep": ([{"strategy": "agent_framework.pipeline", "params": {"children": (
        "agent_framework.pipeline(children=" * 150 + "truncation" + ")" * 150)}}],
        "strategies nest at most 3 levels deep"),
    "infinite context window": ([{"strategy": PRUNE, "context_window": math.inf}, {"strategy": PRUNE, "label": "ok"}],
                                "field 'context_window' must be a finite whole number, got inf"),
    "100,000-deep brackets": (b"[" * 100_000 + b"]" * 100_000, "JSON nested too deeply"),
    "min_keep_steps -5 and 10**300": ([{"strategy": PRUNE, "params": {"min_keep_steps": -5}},
                                       {"strategy": PRUNE, "params": {"min_keep_steps": 10**300}}],
                                      "-5 is outside its range; using its minimum 1"),
    "1,000 setups": ([{"strategy": PRUNE}] * 1000, "the first 12 were read and 988 dropped"),
}


def link_token(value) -> str:
    import base64
    import zlib

    raw = value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


@pytest.mark.parametrize("value, fragment", LINKS.values(), ids=LINKS.keys())
def test_a_crafted_link_never_breaks_the_page(endpoint: Listener, samples: Path, value, fragment):
    token = link_token(value)
    at, seconds = open_link(token)
    assert_page_intact(at)
    shown = plain(at.warning) + plain(at.info) + plain(at.error)
    assert fragment in shown, shown
    assert at.subheader, "the page below the link's messages is drawn"
    assert seconds < LINK_CPU_SECONDS and not endpoint.requests
    print(f"{len(token):,}-character link: {seconds:.2f} CPU-seconds")


def test_values_from_a_link_reach_the_widgets_within_their_range(endpoint: Listener, samples: Path):
    at, _ = open_link(link_token([
        {"strategy": PRUNE, "params": {"min_keep_steps": -5}, "context_window": 0, "compact_at": 7, "compact_to": 0.4},
        {"strategy": PRUNE, "params": {"min_keep_steps": 10**300}, "counter": "approx:1000"}]))
    assert_page_intact(at)
    notices = plain(at.info)  # shown once, on the run the link opened
    for fragment in ("setup 1: parameter 'min_keep_steps': -5 is outside its range; using its minimum 1",
                     "shared policy: context_window 0 is outside the app's range (1 to 10,000,000); using 1",
                     "shared policy: compact_at 7 is outside the app's range (0.05 to 1); using 1",
                     "setup 2: chars per token 1,000 is outside the app's range (0.5 to 20); using 20"):
        assert fragment in notices, notices
    for slot in ("A", "B"):
        open_parameters(at, slot)
    widget = setups.widget_key
    assert at.slider(key=widget("A", PRUNE, "min_keep_steps")).value == 1
    assert at.slider(key=widget("B", PRUNE, "min_keep_steps")).value == 50
    assert at.number_input(key=settings.WINDOW_KEY).value == 1 and at.slider(key=settings.AT_KEY).value == 1.0
    assert at.number_input(key=state.counter_keys("B").chars).value == 20.0


def test_the_uploader_takes_a_gzipped_log(samples: Path):
    import gzip

    data = next(real_log("codex-cli").glob("*.jsonl")).read_bytes()
    expected = compaction.load(data, name="rollout.jsonl")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key=source.UPLOAD_KEY).set_value(("rollout.jsonl.gz", gzip.compress(data), "application/gzip"))
    at.run()
    assert_page_intact(at)
    assert not at.error, plain(at.error)
    assert f"**{len(expected.messages)}** messages" in " ".join(str(m.value) for m in at.markdown)


# ------------------------------------------------------------------------------------------------ work budget
def test_a_replay_over_its_budget_stops_with_a_message_and_stays_stopped(endpoint: Listener, samples: Path,
                                                                        monkeypatch):
    monkeypatch.setattr(results, "REPLAY_CPU_SECONDS", 0.0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert_page_intact(at)
    calls = len(coding_log().llm_call_indices)
    errors = plain(at.error)
    for label in ("A", "B"):
        assert re.search(rf"Setup {label} \(.*?\): stopped at LLM call 0 of {calls} after [\d.]+ CPU-seconds: it used "
                         r"its budget of 0 CPU-seconds \(a limit of this app", errors), errors
    monkeypatch.setattr(results, "REPLAY_CPU_SECONDS", 1000.0)
    at.run()  # kept as stopped: the same replay is not tried again at every run of the page
    assert "stopped at LLM call 0" in plain(at.error)


def test_a_replay_the_page_had_no_budget_left_for_runs_again_next_time(endpoint: Listener, samples: Path,
                                                                      monkeypatch):
    monkeypatch.setattr(results, "PAGE_CPU_SECONDS", 0.0)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert_page_intact(at)
    assert "the 0 CPU-seconds this page may spend were used up by the replays before it" in plain(at.error)
    monkeypatch.setattr(results, "PAGE_CPU_SECONDS", 1000.0)
    at.run()
    assert_page_intact(at)
    assert not at.error and "Results" in [str(s.value) for s in at.subheader]


def test_the_app_budget_leaves_room_for_every_strategy_on_the_longest_real_log():
    """The budget is chosen from the 1,000-call benchmark log (every strategy at most 1.0 CPU-second with the default
    counter, 6.5 with maf-python, on the machine it was chosen on); here the longest real log, every strategy."""
    path = real_log("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    conv = max(compaction.load_all_conversations(path), key=lambda c: len(c.messages))
    slowest = 0.0
    for name in compaction.strategies():
        started = time.thread_time()
        rep = compaction.replay(conv, name, context_window=settings.DEFAULT_WINDOW,
                                budget=WorkBudget(results.REPLAY_CPU_SECONDS))
        assert len(rep.steps) == len(conv.llm_call_indices)
        slowest = max(slowest, time.thread_time() - started)
    assert slowest < results.REPLAY_CPU_SECONDS / 4, slowest
