"""``claude_code.auto_compact`` and ``claude_code.microcompact``: one test per rule of ``agents.md §1.3`` (the rules
read release by release in Claude Code's published bundles), on small hand-built sessions whose reported usage is
chosen so each rule's edge is crossed by one token."""

from __future__ import annotations

import json

import pytest
from conftest import real_log

import compaction
from compaction.analysis.claude_code_checks import measured_replay
from compaction.conversation import Conversation
from compaction.conversation import Image
from compaction.conversation import LogEvent
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import tool
from compaction.conversation import user
from compaction.export import export_setup
from compaction.history import original
from compaction.strategies import _claude_code_estimate as est
from compaction.strategies import _claude_code_microcompact as mc
from compaction.strategies._claude_code_reattach import reattach
from compaction.strategies._claude_code_versions import behaviour
from compaction.strategies._claude_code_versions import resolve_version
from compaction.strategies.claude_code import COMPACT_PROMPT
from compaction.strategies.claude_code import SUMMARY_INTRO
from compaction.strategies.claude_code import SUMMARY_SYSTEM
from compaction.tokens import make_counter
from compaction.views import logged_and_replayed_compactions

AUTO = "claude_code.auto_compact"
MICRO = "claude_code.microcompact"


# ------------------------------------------------------------------------------------------------ building sessions
class Session:
    """A Claude Code-like session built call by call, with the usage each call reports."""

    def __init__(self, version: str = "2.1.14", model: str = "claude-sonnet-4-5-20250929", **source) -> None:
        self.messages: list[Message] = [user("Fix the failing test.", timestamp="2026-01-01T10:00:00.000Z")]
        self.usage: dict[int, Usage] = {}
        self.events: list[LogEvent] = []
        self.summaries: set[int] = set()
        self.source = dict(format="claude-code", conversation_id="main", agent_version=version, model=model,
                           meta={"session_id": "s1"}) | source
        self.minute = 0

    def _stamp(self) -> str:
        self.minute += 1
        return f"2026-01-01T{10 + self.minute // 60:02d}:{self.minute % 60:02d}:00.000Z"

    def call(self, prompt: int, output: int = 1, text: str | None = "ok", tools: list[tuple[str, dict, str]] = (),
             reasoning: str | None = None, **meta) -> list[str]:
        """One response reporting ``prompt`` prompt tokens, with its tool calls answered; returns the call ids."""
        calls = [ToolCall(f"toolu_{len(self.messages)}_{n}", name, args) for n, (name, args, _) in enumerate(tools)]
        stamp = meta.pop("timestamp", None) or self._stamp()
        answer = assistant(text, calls, timestamp=stamp, message_id=f"msg_{len(self.messages)}", **meta)
        if reasoning is not None:
            answer = Message("assistant", answer.texts, answer.tool_calls, reasoning=(reasoning,), meta=answer.meta)
        self.messages.append(answer)
        self.usage[len(self.messages) - 1] = Usage(input_tokens=prompt, output_tokens=output)
        for call, (_, _, result) in zip(calls, tools):
            self.messages.append(tool(call, result, timestamp=self._stamp()))
        return [c.id for c in calls]

    def say(self, text: str, **meta) -> None:
        self.messages.append(user(text, timestamp=meta.pop("timestamp", None) or self._stamp(), **meta))

    def boundary(self, summary: str, pre_tokens: int) -> None:
        self.events.append(LogEvent(len(self.messages), "compaction", "auto", pre_tokens, summary=summary))
        self.summaries.add(len(self.messages))
        self.messages.append(user(summary, log_compaction_summary=True))

    def conversation(self) -> Conversation:
        return Conversation(tuple(self.messages), (), Source(**self.source), usage=self.usage,
                            events=tuple(self.events), log_summary_indices=frozenset(self.summaries))


def measured(conv: Conversation, strategy: str = AUTO, **params):
    return measured_replay(conv, strategy, params)


def sent_texts(rep, step: int) -> list[str]:
    return [m.tool_result.text if m.tool_result is not None else m.text for m in rep.messages_at(step)]


# ================================================================================================== releases
@pytest.mark.parametrize(("before", "after", "flag", "values"), [
    ((2, 1, 1), (2, 1, 2), "estimates_new_messages", (False, True)),
    ((2, 1, 20), (2, 1, 21), "caps_reserve", (False, True)),
    ((2, 1, 29), (2, 1, 30), "output_unlogged", (False, True)),
    ((2, 1, 58), (2, 1, 59), "output_unlogged", (True, False)),
    ((2, 1, 32), (2, 1, 33), "counts_attachments", (False, True)),
    ((2, 1, 37), (2, 1, 38), "image_tokens", (1334, 2000)),
    ((2, 1, 63), (2, 1, 64), "anchors_first_record", (False, True)),
    ((2, 1, 63), (2, 1, 64), "has_token_microcompact", (True, False)),
    ((2, 1, 20), (2, 1, 21), "token_microcompact_on", (True, False)),
    ((2, 1, 73), (2, 1, 74), "counts_tool_use", (False, True)),
    ((2, 1, 74), (2, 1, 75), "reads_window_env", (False, True)),
    ((2, 1, 88), (2, 1, 89), "reads_window_setting", (False, True)),
    ((2, 1, 80), (2, 1, 81), "has_time_microcompact", (False, True)),
    ((2, 0, 76), (2, 1, 0), "clears_to_pointer", (False, True)),
])
def test_each_rule_starts_at_its_release(before, after, flag, values):
    assert (getattr(behaviour(before), flag), getattr(behaviour(after), flag)) == values


def test_the_release_comes_from_the_parameter_then_the_log():
    assert resolve_version("", "2.1.39") == ((2, 1, 39), "log")
    assert resolve_version("2.1.14", "2.1.39") == ((2, 1, 14), "set")
    assert resolve_version("", None)[1] == "default"
    with pytest.raises(ValueError, match="claude_code_version"):
        resolve_version("latest", "2.1.39")


@pytest.mark.parametrize(("version", "model", "params", "threshold"), [
    ("2.1.14", "claude-sonnet-4-5-20250929", {}, 200_000 - 32_000 - 13_000),
    ("2.1.20", "claude-opus-4-1", {}, 200_000 - 32_000 - 13_000),
    ("2.1.21", "claude-opus-4-5-20251101", {}, 200_000 - 20_000 - 13_000),
    ("2.1.39", "claude-opus-4-6", {}, 167_000),
    ("2.1.14", "claude-3-5-sonnet-20241022", {}, 200_000 - 8192 - 13_000),  # the model's own max output
    ("2.1.14", "claude-sonnet-4-5", {"max_output_tokens": 16_000}, 200_000 - 16_000 - 13_000),
    ("2.1.14", "claude-sonnet-4-5", {"max_output_tokens": 64_000}, 200_000 - 64_000 - 13_000),
    ("2.1.39", "claude-sonnet-4-5", {"max_output_tokens": 64_000}, 167_000),  # at most 20,000 from 2.1.21
    ("2.1.14", "claude-sonnet-4-5", {"autocompact_pct_override": 50}, 84_000),  # floor(168,000 x 50%)
    ("2.1.14", "claude-sonnet-4-5", {"autocompact_pct_override": 95}, 155_000),  # can only lower it
    ("2.1.39", "claude-sonnet-4-5", {"auto_compact_window": 150_000}, 167_000),  # not read before 2.1.75
    ("2.1.75", "claude-sonnet-4-5", {"auto_compact_window": 150_000}, 150_000 - 20_000 - 13_000),
    ("2.1.75", "claude-sonnet-4-5", {"auto_compact_window": 50_000}, 50_000 - 20_000 - 13_000),
    ("2.1.89", "claude-sonnet-4-5", {"auto_compact_window": 50_000}, 100_000 - 20_000 - 13_000),  # clamped
    ("2.1.89", "claude-sonnet-4-5", {"auto_compact_window": 500_000}, 167_000),  # never above the model's
    ("2.1.39", "claude-sonnet-4-5", {"context_1m": "on"}, 1_000_000 - 20_000 - 13_000),
])
def test_threshold_is_effective_window_less_13000(version, model, params, threshold):
    s = Session(version, model)
    s.call(1000)
    assert measured(s.conversation(), **params).strategy.threshold == threshold


def test_a_reported_prompt_over_200k_means_the_1m_window():
    s = Session("2.1.39")
    s.call(250_000)
    # the model's own window (200k) given: `auto` takes the 1M window the reported prompt proves, `off` keeps 200k
    model_window = {"context_window": 200_000}
    assert measured_replay(s.conversation(), AUTO, {}, **model_window).strategy.threshold == 1_000_000 - 20_000 - 13_000
    assert measured_replay(s.conversation(), AUTO, {"context_1m": "off"}, **model_window).strategy.threshold == 167_000


# ================================================================================================== the estimate
def test_rough_estimate_rounds_halves_up_like_javascript():
    assert [est.rough("a" * n) for n in (1, 2, 5, 6, 10)] == [0, 1, 1, 2, 3]
    assert est.rough("a" * 6, 2) == 3


def test_what_the_estimate_counts_by_release():
    call = ToolCall("t1", "Read", {"file_path": "/a.py"})
    answer = assistant("done", [call])
    answer = Message("assistant", ("done",), (call,), reasoning=("thinking it over",))
    old, new = behaviour((2, 1, 14)), behaviour((2, 1, 74))
    assert est.estimate(answer, old) == est.rough("done")  # tool calls and thinking count nothing before 2.1.74
    assert est.estimate(answer, new) == (est.rough("done") + est.rough("thinking it over")
                                         + est.rough('Read{"file_path":"/a.py"}'))
    picture = Message("user", ("look",), images=(Image(mime_type="image/png"),))
    assert est.estimate(picture, behaviour((2, 1, 37))) == est.rough("look") + 1334
    assert est.estimate(picture, behaviour((2, 1, 38))) == est.rough("look") + 2000
    hook = user("<system-reminder>\nhook output\n</system-reminder>", attachment="hook_additional_context")
    assert est.estimate(hook, behaviour((2, 1, 32))) == 0
    assert est.estimate(hook, behaviour((2, 1, 33))) == est.rough(hook.text)
    assert est.estimate(tool(call, "x" * 400), old) == 100


# ================================================================================================== the measure
def test_measure_is_last_reported_call_plus_the_estimate_of_what_followed():
    s = Session("2.1.14")
    s.call(150_000, output=7, tools=[("Bash", {"command": "ls"}, "y" * 1002)])
    s.call(151_000)
    run = measured(s.conversation())
    second = run.measured[1].measure
    assert (second.last_call, second.estimated, second.unlogged) == (150_007, 251, 0)
    assert second.tokens == 150_258


def test_before_2_1_2_the_measure_is_the_last_call_alone():
    s = Session("2.1.1")
    s.call(150_000, output=7, tools=[("Bash", {"command": "ls"}, "y" * 1002)])
    s.call(151_000)
    assert measured(s.conversation()).measured[1].measure.tokens == 150_007


def test_releases_without_the_final_output_in_the_log_estimate_it_from_the_content():
    write = {"file_path": "/w.txt", "content": "z" * 4000}
    s = Session("2.1.39")
    s.call(150_000, output=1, text="writing", tools=[("Write", write, "File created")])
    s.call(151_000)
    last = measured(s.conversation(), unlogged_context=0).measured[1].measure.last_call
    assert last == 150_000 + est.rough("writing") + est.rough("Write" + est.js_json(write))
    s2 = Session("2.1.14")
    s2.call(150_000, output=1, text="writing", tools=[("Write", write, "File created")])
    s2.call(151_000)
    assert measured(s2.conversation()).measured[1].measure.last_call == 150_001  # the snapshot, as Claude Code held


def test_from_2_1_64_the_records_after_the_first_are_estimated_too():
    s = Session("2.1.64")
    s.call(150_000, output=5, reasoning="hmm", text="a" * 400, tools=[("Bash", {"command": "ls"}, "b" * 40)])
    s.call(151_000)
    later = measured(s.conversation(), unlogged_context=0).measured[1].measure
    assert later.estimated == 10 + 100  # the result, and the text record after the first (the tool call counts 0)
    s2 = Session("2.1.63")
    s2.call(150_000, output=5, reasoning="hmm", text="a" * 400, tools=[("Bash", {"command": "ls"}, "b" * 40)])
    s2.call(151_000)
    assert measured(s2.conversation(), unlogged_context=0).measured[1].measure.estimated == 10


def test_unlogged_context_by_release():
    s = Session("2.1.33")
    s.call(1000)
    s.call(1100)
    assert measured(s.conversation()).measured[1].measure.unlogged == 1000
    assert measured(s.conversation(), claude_code_version="2.1.32").measured[1].measure.unlogged == 0
    assert measured(s.conversation(), unlogged_context=250).measured[1].measure.unlogged == 250


# ================================================================================================== auto-compact
def _to_threshold(version: str, last: int) -> Conversation:
    """A session whose second call's measure is ``last`` (+ a 4-character result: 1 token)."""
    s = Session(version)
    s.call(1000, output=0, tools=[("Read", {"file_path": "/src/app.py"}, "     1→ok")])
    s.call(last - 1, output=0, tools=[("Bash", {"command": "pytest"}, "fail")])
    s.call(2000)
    return s.conversation()


def test_auto_compact_fires_at_the_threshold_not_one_token_below():
    at = measured(_to_threshold("2.1.14", 155_000))
    assert [m.auto_compacted for m in at.measured] == [False, False, True]
    assert at.measured[2].measure.tokens == 155_000
    below = measured(_to_threshold("2.1.14", 154_999))
    assert not any(m.auto_compacted for m in below.measured)


def test_auto_compact_sends_summary_then_reattachments():
    conv = _to_threshold("2.1.14", 155_000)
    run = measured(conv)
    step = run.replay.steps[2]
    assert step.compacted and step.note.startswith("auto-compact at 155,000 tokens (threshold 155,000")
    sent = run.replay.messages_at(2)
    assert sent[0].role == "user" and sent[0].text.startswith(SUMMARY_INTRO)
    assert sent[0].text.rstrip().endswith("continue with the task you were last asked to do.")
    assert "[Simulated extractive summary]" in sent[0].text
    assert sent[1].meta["attachment"] == "file" and "/src/app.py" in sent[1].text and "ok" in sent[1].text
    assert not any(m.role in ("assistant", "tool") for m in sent)
    assert len(step.model_calls) == 1 and step.model_calls[0]["input_tokens"] > 0


def test_reattachments_stand_for_nothing_so_repeated_compactions_stay_linear():
    """The summary alone stands for the history: were every re-attached file to stand for it too, each compaction
    would multiply the paths from the context to an original (the longest real log took minutes, not 0.2 s)."""
    path = real_log("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    conv = max(compaction.load_all_conversations(path), key=lambda c: len(c.messages))
    rep = compaction.replay(conv, AUTO, context_window=64_000)
    compacted = [s.step for s in rep.steps if s.compacted]
    assert len(compacted) >= 3
    last = rep.context_at(rep.steps[-1].step)
    reattached = [i for i in last if i.inserted_kind == "reinserted"]
    summaries = [i for i in last if i.inserted_kind == "summary"]
    assert reattached and all(i.represents == () for i in reattached)
    assert len(summaries) == 1 and len(summaries[0].represents) > len(compacted)


def test_the_summary_request_is_the_history_and_the_compaction_prompt(monkeypatch):
    conv = _to_threshold("2.1.14", 155_000)
    requests = []
    from compaction.summarizers import ExtractiveSummarizer

    original_text = ExtractiveSummarizer.text

    def spy(self, request):
        requests.append(request)
        return original_text(self, request)

    monkeypatch.setattr(ExtractiveSummarizer, "text", spy)
    compaction.replay(conv, AUTO)
    sent = requests[-1].prompt()
    assert sent[0].role == "system" and sent[0].text == SUMMARY_SYSTEM
    assert sent[-1].role == "user" and sent[-1].text == COMPACT_PROMPT
    assert [m.role for m in sent[1:-1]] == [m.role for m in conv.messages[:5]]


def test_from_log_summary_is_the_logs_own_message_verbatim():
    s = Session("2.1.14")
    s.call(100_000, tools=[("Bash", {"command": "make"}, "built")])
    s.call(154_998, output=1, tools=[("Bash", {"command": "make test"}, "ok")])
    summary = "This session is being continued from a previous conversation. <the agent's own words>"
    s.boundary(summary, 155_000)
    s.call(30_000)
    rep = compaction.replay(s.conversation(), AUTO, {"summarizer": "from-log"})
    assert rep.steps[2].compacted
    assert rep.messages_at(2)[0].text == summary


def test_the_logs_own_reattachments_are_kept_when_the_replay_compacts_at_its_boundary():
    s = Session("2.1.110")
    s.call(100_000, tools=[("Read", {"file_path": "/a.py"}, "     1→x")])
    s.call(166_998, output=1, tools=[("Bash", {"command": "make"}, "ok")])
    s.boundary("summary text", 167_000)
    s.messages.append(user("<system-reminder>\nthe restored file\n</system-reminder>", is_meta=True,
                           attachment="file"))
    s.call(30_000)
    rep = compaction.replay(s.conversation(), AUTO, {"summarizer": "from-log", "unlogged_context": 0})
    assert rep.steps[2].compacted and "kept the log's own re-attachments" in rep.steps[2].note
    assert [m.text for m in rep.messages_at(2)] == ["summary text", s.messages[-2].text]


def test_the_compaction_request_itself_never_compacts():
    s = Session("2.1.39", conversation_id="agent-acompact-e1f845", meta={"agent_id": "acompact-e1f845"})
    s.call(190_000)
    s.call(195_000)
    assert not any(m.auto_compacted for m in measured(s.conversation()).measured)


def test_after_a_replayed_compaction_the_measure_follows_what_the_replay_sends():
    run = measured(_to_threshold("2.1.14", 155_000))
    after = run.measured[2]
    assert after.measure.anchor is not None and after.auto_compacted
    s = Session("2.1.14")
    s.call(1000, output=0, tools=[("Read", {"file_path": "/src/app.py"}, "     1→ok")])
    s.call(154_999, output=0, tools=[("Bash", {"command": "pytest"}, "fail")])
    s.call(2000, output=0)
    s.say("and now?")
    s.call(3000)
    run = measured(s.conversation())
    # call 3's reported prompt is the log's (uncompacted) 2,000, less what the replay's compaction took away
    real = make_counter("approx")
    stored_before = [m for m in s.conversation().messages[:5]]
    removed = real.count(stored_before) - real.count(run.replay.messages_at(2))
    assert run.measured[3].measure.last_call == max(2000 - removed, 0)


# ================================================================================================== microcompaction: tokens
def _results_session(sizes: list[int], version: str = "2.1.14", prompt: int = 140_000, name: str = "Read") -> Session:
    s = Session(version)
    for n, size in enumerate(sizes):
        s.call(prompt + n, output=0, tools=[(name, {"file_path": f"/f{n}.py"}, "r" * (size * 4))])
    s.call(prompt + len(sizes))
    return s


def test_token_rule_clears_the_oldest_beyond_40000_tokens_keeping_the_last_three():
    run = measured(_results_session([15_000, 15_000, 15_000, 12_000, 1000, 1000]).conversation(), MICRO)
    cleared = [m for m in run.measured if m.cleared]
    assert len(cleared) == 1
    last = cleared[0]
    # before call 5: 58,000 considered, the newest three (15,000, 12,000, 1,000) kept; clearing the oldest leaves
    # 43,000 > 40,000, the next 28,000: two cleared, 30,000 saved. Before call 4 the one clearable result saved 15,000.
    assert last.step == 5 and last.results_tokens == 58_000 and len(last.cleared) == 2
    step = run.replay.steps[last.step]
    assert "cleared 2 tool results (30,000 of 58,000 tokens" in step.note
    texts = sent_texts(run.replay, last.step)
    pointers = [t for t in texts if t.startswith("<persisted-output>Tool result saved to: ")]
    assert len(pointers) == 2 and all(t.endswith("\n\nUse Read to view</persisted-output>") for t in pointers)
    assert "/s1/tool-results/" in pointers[0]


def test_token_rule_needs_20000_saved():
    run = measured(_results_session([19_999, 30_000, 1000, 1000]).conversation(), MICRO)
    assert not any(m.cleared for m in run.measured)  # the one clearable result leaves 32,000 but saves 19,999
    run = measured(_results_session([20_000, 30_000, 1000, 1000]).conversation(), MICRO)
    assert [len(m.cleared) for m in run.measured] == [0, 0, 0, 0, 1]


def test_token_rule_waits_for_the_warning_threshold():
    below = _results_session([15_000, 15_000, 15_000, 12_000, 1000, 1000], prompt=134_000 - 7)
    assert not any(m.cleared for m in measured(below.conversation(), MICRO).measured)  # 155,000 - 20,000 = 135,000
    off = measured(below.conversation(), MICRO, auto_compact_enabled=False)
    assert off.strategy.warning == 168_000 - 20_000


def test_token_rule_never_touches_other_tools():
    run = measured(_results_session([15_000, 15_000, 15_000, 12_000, 1000, 1000], name="Skill").conversation(), MICRO)
    assert not any(m.results_tokens or m.cleared for m in run.measured)
    assert mc.COMPACTABLE_TOOLS == {"Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit",
                                    "Write"}


def test_token_rule_clears_to_the_old_text_in_2_0():
    run = measured(_results_session([15_000, 15_000, 15_000, 12_000, 1000, 1000], "2.0.76").conversation(), MICRO)
    step = next(m.step for m in run.measured if m.cleared)
    assert sent_texts(run.replay, step).count(mc.CLEARED_TEXT) == 2


def test_cleared_results_stay_cleared_and_count_no_more():
    s = _results_session([15_000, 15_000, 15_000, 12_000, 1000, 1000])
    s.call(140_100, output=0, tools=[("Read", {"file_path": "/g.py"}, "r" * 4000)])
    s.call(140_200)
    run = measured(s.conversation(), MICRO)
    fired = [m for m in run.measured if m.cleared]
    assert len(fired) == 1
    assert run.measured[-1].results_tokens == 29_000 + 1000
    assert sum(t.startswith("<persisted-output>") for t in sent_texts(run.replay, len(run.replay.steps) - 1)) == 2


# ================================================================================================== microcompaction: time
def _idle_session(version: str = "2.1.81", gap_minutes: int = 61, **source) -> Session:
    """Eight Bash calls, an answer, ``gap_minutes`` of silence, a prompt (two calls), then another prompt."""
    s = Session(version, **source)
    for n in range(8):
        s.call(10_000 + n, output=0, tools=[("Bash", {"command": f"step {n}"}, "o" * 400)])
    s.call(11_000, text="all done")
    s.minute += gap_minutes - 1
    s.say("one more thing")
    s.call(12_000, tools=[("Bash", {"command": "again"}, "o" * 400)])
    s.call(12_500)
    s.say("thanks")
    s.call(13_000)
    return s


def test_time_rule_after_an_idle_hour_keeps_the_last_five_for_that_turn():
    rep = compaction.replay(_idle_session().conversation(), MICRO)
    fired = rep.steps[9]
    assert fired.compacted and fired.note.startswith("time-based microcompact after 61 min idle: cleared 3 tool results")
    assert sent_texts(rep, 9).count(mc.CLEARED_TEXT) == 3
    assert sent_texts(rep, 10).count(mc.CLEARED_TEXT) == 3  # the same turn's next call
    assert sent_texts(rep, 11).count(mc.CLEARED_TEXT) == 0  # a new prompt: the stored results again
    assert not any(s.compacted for s in rep.steps[:9])


def test_time_rule_waits_the_whole_gap():
    rep = compaction.replay(_idle_session(gap_minutes=59).conversation(), MICRO)
    assert not any(s.compacted for s in rep.steps)
    rep = compaction.replay(_idle_session(gap_minutes=59).conversation(), MICRO, {"gap_threshold_minutes": 30})
    assert rep.steps[9].compacted


def test_time_rule_is_for_the_main_conversation_only():
    rep = compaction.replay(_idle_session(conversation_id="agent-a1", parent="main").conversation(), MICRO)
    assert not any(s.compacted for s in rep.steps)


@pytest.mark.parametrize(("version", "variant"), [("2.0.76", "token"), ("2.1.20", "token"), ("2.1.21", "off"),
                                                   ("2.1.80", "off"), ("2.1.81", "time")])
def test_the_microcompaction_by_release(version, variant):
    s = Session(version)
    s.call(1000)
    assert measured(s.conversation(), MICRO).strategy.variant == variant
    assert measured(s.conversation(), AUTO).strategy.variant == variant


# ================================================================================================== re-attachments
def test_reattached_files_are_the_five_most_recent_with_their_latest_content():
    s = Session("2.1.14")
    for n in range(6):
        s.call(1000, tools=[("Read", {"file_path": f"/p/f{n}.py"}, f"     1→v{n}\n     2→end")])
    s.call(1000, tools=[("Edit", {"file_path": "/p/f5.py", "old_string": "v5", "new_string": "v5b"}, "edited")])
    s.call(1000, tools=[("Write", {"file_path": "/p/new.py", "content": "fresh"}, "File created")])
    s.call(1000, tools=[("Read", {"file_path": "/p/CLAUDE.md"}, "     1→memory")])
    s.call(1000, tools=[("Edit", {"file_path": "/p/unseen.py", "old_string": "a", "new_string": "b"}, "edited")])
    s.call(1000, tools=[("Read", {"file_path": "/p/big.py"}, "\n".join(f"{i:>6}→" + "x" * 90 for i in range(300)))])
    again = reattach([m for m in s.messages], (2, 1, 14), make_counter("approx"))
    kinds = [m.meta["attachment"] for m in again.messages]
    # the five most recent: big.py, unseen.py (its content unknown: left out), new.py, f5.py, f4.py
    assert kinds == ["compact_file_reference", "file", "file", "file"]
    texts = [m.text for m in again.messages]
    assert "/p/big.py" in texts[0] and "too large" in texts[0]
    assert '"/p/new.py"' in texts[1] and "fresh" in texts[1]
    assert '"/p/f5.py"' in texts[2] and "v5b\nend" in texts[2] and '"/p/f4.py"' in texts[3]
    assert [t for t in texts if "CLAUDE.md" in t] == []
    assert again.unknown_files == 1  # /p/unseen.py: edited, never read


def test_a_file_whose_reads_were_microcompacted_is_forgotten():
    call = ToolCall("r1", "Read", {"file_path": "/p/a.py"})
    cleared = tool(call, "<persisted-output>…</persisted-output>", claude_code_cleared=True)
    assert reattach([assistant(None, [call]), cleared], (2, 1, 14), make_counter("approx")).messages == []


def test_todo_list_plan_and_skills_are_attached_again():
    s = Session("2.1.14")
    todos = [{"content": "write the test", "status": "in_progress", "activeForm": "Writing the test"}]
    s.call(1000, tools=[("TodoWrite", {"todos": todos}, "Todos updated")])
    s.call(1000, tools=[("Write", {"file_path": "/home/u/.claude/plans/calm-river.md", "content": "# Plan\n1. test"},
                         "File created")])
    s.call(1000, tools=[("Skill", {"skill": "tdd"}, "Launching skill: tdd")])
    s.messages.append(user("Base directory for this skill: /skills/tdd\n\n# TDD\nWrite the test first.", is_meta=True))
    kinds = {m.meta["attachment"]: m.text for m in reattach(s.messages, (2, 1, 14), make_counter("approx")).messages}
    assert set(kinds) == {"todo", "plan_file_reference", "invoked_skills"}
    assert "write the test" in kinds["todo"] and "# Plan" in kinds["plan_file_reference"]
    assert "/skills/tdd/SKILL.md" in kinds["invoked_skills"] and "Write the test first." in kinds["invoked_skills"]
    later = {m.meta["attachment"] for m in reattach(s.messages, (2, 1, 63), make_counter("approx")).messages}
    assert "todo" not in later  # todo attachments are no longer sent from 2.1.63


def test_reattach_keeps_the_entry_order_of_an_original_history():
    entries = [original(m, i) for i, m in enumerate(_to_threshold("2.1.14", 155_000).messages)]
    assert reattach([e.message for e in entries], (2, 1, 14), make_counter("approx")).messages


# ================================================================================================== export, chart data
def test_export_is_settings_json_shell_and_the_global_switch():
    snippets = export_setup(AUTO, {"autocompact_pct_override": 70, "auto_compact_window": 400_000,
                                   "max_output_tokens": 16_000, "microcompact": "off"})
    settings = json.loads(snippets[0].code)
    assert settings == {"autoCompactWindow": 400_000, "env": {
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "400000",
        "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "16000", "DISABLE_MICROCOMPACT": "1"}}
    exports = dict(line.removeprefix("export ").split("=", 1) for line in snippets[1].code.splitlines())
    assert exports == settings["env"]
    assert snippets[2].code.strip() == "claude config set -g autoCompactEnabled true"
    defaults = export_setup(AUTO)
    assert json.loads(defaults[0].code) == {} and "nothing to set" in defaults[0].note
    off = export_setup(MICRO, {"auto_compact_enabled": False})
    assert json.loads(off[0].code) == {"env": {"DISABLE_AUTO_COMPACT": "1"}}
    assert off[-1].code.strip() == "claude config set -g autoCompactEnabled false"
    high = export_setup(AUTO, {"autocompact_pct_override": 95})
    assert "changes nothing" in high[0].note


def test_logged_and_replayed_compactions_side_by_side():
    s = Session("2.1.14")
    s.call(100_000, tools=[("Bash", {"command": "make"}, "built")])
    s.call(154_998, output=1, tools=[("Bash", {"command": "make test"}, "ok")])
    s.boundary("the summary", 155_000)
    s.call(30_000)
    conv = s.conversation()
    runs = [("A", compaction.replay(conv, AUTO, {"summarizer": "from-log"})),
            ("B", compaction.replay(conv, "codex.auto_compact", context_window=1_000_000))]
    frame = logged_and_replayed_compactions(runs)
    a = frame[frame["series"].str.startswith("A")]
    assert list(a["origin"]) == ["log", "replay"] and list(a["step"]) == [2, 2]
    assert a.iloc[0]["agent_tokens"] == 155_000 and a.iloc[0]["kind"] == "compaction"
    assert a.iloc[1]["tokens_before"] == runs[0][1].steps[2].tokens_before
    b = frame[frame["series"].str.startswith("B")]
    assert list(b["origin"]) == ["log"]  # the log's boundary is shown for every setup
    assert list(logged_and_replayed_compactions([]).columns) == list(frame.columns)
