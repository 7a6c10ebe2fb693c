"""Golden cases for the .NET Agent Framework strategies (docs/spec/frameworks.md §3): truncation, sliding window,
summarization, pipeline and context window — exclusion order, minimum-preserved floors, target re-evaluation after
each step, Summary groups, child triggers, thresholds and validation."""

from __future__ import annotations

import pytest
from conftest import real_log

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import original
from compaction.policy import parse_trigger
from compaction.strategies import get_strategy
from compaction.strategies.agent_framework import SUMMARY_FLAG
from compaction.strategies.agent_framework import ContextWindowCompaction
from compaction.strategies.agent_framework import MessageIndex
from compaction.strategies.agent_framework import PipelineCompaction
from compaction.strategies.agent_framework import SlidingWindowCompaction
from compaction.strategies.agent_framework import SummarizationCompaction
from compaction.strategies.agent_framework import ToolResultCompaction
from compaction.strategies.agent_framework import TruncationCompaction
from compaction.strategies.agent_framework import parse_pipeline
from compaction.summarizers import Summarizer
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter

T = parse_trigger


def index_of(messages: list[Message]) -> MessageIndex:
    index = MessageIndex(make_counter("maf-dotnet"))
    for i, m in enumerate(messages):
        index.append(original(m, i))
    return index


def texts(index: MessageIndex) -> list[str]:
    def text(m: Message) -> str:
        if m.tool_result is not None:
            return m.tool_result.text
        return m.text or m.tool_calls[0].name

    return [text(e.message) for g in index.included() for e in g.entries]


def turns(n: int, preface: bool = False) -> list[Message]:
    out = [system("sys")]
    if preface:
        out.append(assistant("preface"))
    for t in range(1, n + 1):
        out += [user(f"u{t}"), assistant(f"a{t}")]
    return out


class CannedSummarizer(Summarizer):
    """Returns a fixed text (or raises) and records the requests it got."""

    name = "canned"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.requests: list[SummaryRequest] = []

    def text(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


# ------------------------------------------------------------------------------------------------- truncation
def test_truncation_removes_oldest_groups_until_the_inverse_trigger_holds():
    index = index_of(turns(6))  # system + 12 groups
    changed = TruncationCompaction(T("GroupsExceed(8)"), minimum_preserved_groups=2).compact(index)
    assert changed[:2] == (True, True)
    # target = not GroupsExceed(8) (the system group counts): stops as soon as 8 groups remain
    assert index.included_groups == 8
    assert texts(index) == ["sys", "a3", "u4", "a4", "u5", "a5", "u6", "a6"]
    excluded = [g for g in index.groups if g.excluded]
    assert [g.entries[0].message.text for g in excluded] == ["u1", "a1", "u2", "a2", "u3"]
    assert {g.reason for g in excluded} == {"Truncated by TruncationCompactionStrategy"}


def test_truncation_minimum_preserved_floor_and_skip_rule():
    index = index_of(turns(3))
    triggered, changed, _ = TruncationCompaction(T("Always()"), 4, target=T("Never()")).compact(index)
    assert triggered and changed
    assert texts(index) == ["sys", "u2", "a2", "u3", "a3"]  # the floor wins over a target that never holds
    # nothing left to remove: declined, not changed
    assert TruncationCompaction(T("Always()"), 4, target=T("Never()")).compact(index)[1] is False
    # at most one included non-system group: skipped before the strategy runs
    single = index_of([system("s"), user("only")])
    assert TruncationCompaction(T("Always()"), 0).compact(single) == (True, False, single_note(single))


def single_note(index: MessageIndex) -> str:
    return "skipped: at most one non-system group is included"


def test_truncation_negative_minimum_is_clamped_and_summary_groups_are_removable():
    msgs = [user("u1"), assistant("[Summary]\nearlier", **{SUMMARY_FLAG: True}), user("u2"), assistant("a2")]
    index = index_of(msgs)
    assert [g.kind for g in index.groups] == ["User", "Summary", "User", "AssistantText"]
    TruncationCompaction(T("GroupsExceed(2)"), minimum_preserved_groups=-5).compact(index)
    assert texts(index) == ["u2", "a2"]


def test_truncation_re_evaluates_a_token_target_after_each_group():
    big = "x" * 400  # 100 tokens per message with the .NET byte estimate
    index = index_of([user(big), assistant(big), user(big), assistant(big), user("end")])
    assert index.included_tokens == 400
    TruncationCompaction(T("TokensExceed(300)"), 1, target=T("TokensBelow(250)")).compact(index)
    assert index.included_tokens == 200  # after 1 group: 300 (not < 250), after 2: 200 → stop
    assert sum(g.excluded for g in index.groups) == 2


# --------------------------------------------------------------------------------------------- sliding window
def test_sliding_window_excludes_whole_turns_and_protects_turn_zero():
    msgs = turns(3, preface=True)
    call = ToolCall("c1", "search", {"q": "x"})
    msgs[5:5] = [assistant(None, [call]), tool(call, "hit")]  # turn 2 gets a tool-call group
    index = index_of(msgs)
    assert [g.turn for g in index.groups] == [None, 0, 1, 1, 2, 2, 2, 3, 3]
    SlidingWindowCompaction(T("TurnsExceed(1)"), 1).compact(index)
    assert texts(index) == ["sys", "preface", "u3", "a3"]
    assert {g.reason for g in index.groups if g.excluded} == {"Excluded by SlidingWindowCompactionStrategy"}


def test_sliding_window_checks_the_target_after_each_turn_and_keeps_minimum_turns():
    index = index_of(turns(5))
    SlidingWindowCompaction(T("TurnsExceed(3)"), 1).compact(index)
    assert index.included_turns == 3 and texts(index)[1] == "u3"
    index = index_of(turns(5))
    SlidingWindowCompaction(T("Always()"), 2, target=T("Never()")).compact(index)
    assert texts(index) == ["sys", "u4", "a4", "u5", "a5"]
    index = index_of(turns(2))
    assert SlidingWindowCompaction(T("Always()"), 2).compact(index)[1] is False  # every turn protected


def test_sliding_window_never_touches_summary_groups_with_no_turn():
    index = index_of(turns(4))
    summarizer = CannedSummarizer("the gist")
    SummarizationCompaction(summarizer, make_counter("maf-dotnet"), T("Always()"), 4, target=T("Never()")).compact(
        index)
    summary = next(g for g in index.groups if g.kind == "Summary")
    assert summary.turn is None
    SlidingWindowCompaction(T("Always()"), 1, target=T("Never()")).compact(index)
    assert not summary.excluded and texts(index) == ["sys", "[Summary]\nthe gist", "u4", "a4"]


# ---------------------------------------------------------------------------------------------- summarization
def test_summarization_replaces_the_oldest_groups_with_one_summary_group():
    index = index_of(turns(6))
    summarizer = CannedSummarizer("  user asked six things  ")
    strategy = SummarizationCompaction(summarizer, make_counter("maf-dotnet"), T("GroupsExceed(6)"), 2)
    triggered, changed, note = strategy.compact(index)
    assert triggered and changed and "summarized 7 groups" in note
    kinds = [g.kind for g in index.groups if not g.excluded]
    assert kinds == ["System", "Summary", "AssistantText", "User", "AssistantText", "User", "AssistantText"]
    summary = index.included()[1]
    assert summary.entries[0].message.text == "[Summary]\n  user asked six things  "
    assert summary.entries[0].message.meta[SUMMARY_FLAG] is True and summary.turn is None
    assert summary.entries[0].represents == tuple(range(1, 8))
    # raw messages went to the summarizer, after a system prompt
    request = summarizer.requests[0]
    assert [m.text for m in request.messages] == ["u1", "a1", "u2", "a2", "u3", "a3", "u4"]
    assert request.instruction
    assert strategy.drain_model_calls() and strategy.drain_model_calls() == []
    # the summary sits where the first summarized group was
    assert index.groups.index(summary) == 1


def test_summarization_blank_text_and_failure_restore():
    index = index_of(turns(4))
    SummarizationCompaction(CannedSummarizer("   "), make_counter("maf-dotnet"), T("Always()"), 2,
                            target=T("Never()")).compact(index)
    assert texts(index)[1] == "[Summary unavailable]"

    index = index_of(turns(4))
    before = index.included_tokens
    triggered, changed, note = SummarizationCompaction(
        CannedSummarizer(RuntimeError("model down")), make_counter("maf-dotnet"), T("Always()"), 2
    ).compact(index)
    assert triggered and not changed and "model down" in note
    assert not any(g.excluded for g in index.groups) and index.included_tokens == before


def test_summarization_folds_an_earlier_summary_into_the_next():
    index = index_of(turns(6))
    counter = make_counter("maf-dotnet")
    SummarizationCompaction(CannedSummarizer("first"), counter, T("GroupsExceed(10)"), 2).compact(index)
    first = next(g for g in index.groups if g.kind == "Summary")
    second_summarizer = CannedSummarizer("second")
    SummarizationCompaction(second_summarizer, counter, T("GroupsExceed(3)"), 2).compact(index)
    assert first.excluded and first.reason == "Summarized by SummarizationCompactionStrategy"
    assert second_summarizer.requests[0].messages[0].text == "[Summary]\nfirst"
    second = next(g for g in index.groups if g.kind == "Summary" and not g.excluded)
    assert set(first.entries[0].represents) <= set(second.entries[0].represents)


# --------------------------------------------------------------------------------------------------- pipeline
def test_pipeline_runs_each_child_on_its_own_trigger():
    call = ToolCall("c1", "read", {"path": "a.py"})
    msgs = [system("s"), user("go"), assistant(None, [call]), tool(call, "code " * 50), user("next"), assistant("ok")]
    index = index_of(msgs)
    never = ToolResultCompaction(T("Never()"), 0)
    truncate = TruncationCompaction(T("GroupsExceed(3)"), 1)
    triggered, changed, note = PipelineCompaction([never, truncate]).compact(index)
    assert triggered and changed and "TruncationCompaction" in note and "ToolResultCompaction" not in note
    assert texts(index) == ["s", "next", "ok"]
    # the pipeline's own Always trigger is not reported: only a child's trigger counts
    assert PipelineCompaction([ToolResultCompaction(T("Never()"), 0)]).compact(index_of(msgs)) == (False, False, "")

    index = index_of(msgs)
    PipelineCompaction([ToolResultCompaction(T("HasToolCalls()"), 0), TruncationCompaction(T("Never()"), 0)]).compact(
        index)
    assert texts(index)[2] == "[Tool Calls]\nread:\n  - " + ("code " * 50)


def test_pipeline_parameter_encoding():
    assert parse_pipeline("tool_result_compaction(trigger=All(TokensExceed(5), HasToolCalls()), "
                          "minimum_preserved_groups=4); truncation") == [
        ("tool_result_compaction", {"trigger": "All(TokensExceed(5), HasToolCalls())", "minimum_preserved_groups": "4"}),
        ("truncation", {}),
    ]
    for bad, message in (("bogus", "expected one of"), ("truncation(min=1", "missing '\\)'"),
                         ("truncation(x)", "PARAM=VALUE"), ("", "at least one child")):
        with pytest.raises(ValueError, match=message):
            parse_pipeline(bad)  # noqa: PT012
    info = get_strategy("agent_framework.pipeline")
    conv = Conversation(tuple(turns(4)), (), Source("test"))
    with pytest.raises(ValueError, match=r"pipeline child 1 \(truncation\).*no parameter 'nope'"):
        compaction.replay(conv, info, {"children": "truncation(nope=1)"})
    rep = compaction.replay(conv, info, {"children": "sliding_window(trigger=TurnsExceed(2)); "
                                                     "truncation(trigger=GroupsExceed(2), minimum_preserved_groups=1)"})
    last = rep.context_at(len(rep.steps) - 1)
    assert [i.message.text for i in last] == ["sys", "u4"]


# --------------------------------------------------------------------------------------------- context window
def tool_round(i: int) -> list[Message]:
    """One tool-call group of 204 .NET tokens whose [Tool Calls] digest is 6 tokens (big arguments, tiny result)."""
    call = ToolCall(f"c{i}", "write", {"content": "y" * 800})
    return [assistant(None, [call]), tool(call, "ok")]


def test_context_window_thresholds_and_tool_eviction_phase():
    strategy = ContextWindowCompaction(1000, 200)
    assert (strategy.input_budget, strategy.tool_eviction_tokens, strategy.truncation_tokens) == (800, 400, 640)
    msgs = [system("s"), user("start")] + [m for i in range(4) for m in tool_round(i)]
    index = index_of(msgs)
    assert index.included_tokens == 1 + 4 * 204
    triggered, changed, note = strategy.compact(index)
    assert changed and "TruncationCompaction" not in note
    # both unprotected tool groups collapse (still over 400 after the first); the newest 2 groups are preserved
    assert [g.kind for g in index.included()] == ["System", "User", "Summary", "Summary", "ToolCall", "ToolCall"]
    assert index.included_tokens == 1 + 2 * 6 + 2 * 204
    assert texts(index)[2] == "[Tool Calls]\nwrite:\n  - ok"


def test_context_window_truncation_phase_stops_at_the_truncation_threshold():
    msgs = [system("s"), user("z" * 1000)] + [m for i in range(4) for m in tool_round(i)]
    index = index_of(msgs)
    triggered, changed, note = ContextWindowCompaction(1000, 200).compact(index)
    assert "1. ToolResultCompaction" in note and "2. TruncationCompaction" in note
    # after eviction 250 + 12 + 408 = 670 > 640: the user group goes, then 420 ≤ 640 stops it
    assert [g.kind for g in index.included()] == ["System", "Summary", "Summary", "ToolCall", "ToolCall"]
    assert index.included_tokens == 420


def test_context_window_validation_messages():
    cases = [
        ((0, 0), "Argument less or equal than minimum value 0 (Parameter 'maxContextWindowTokens') Actual value was 0."),
        ((100, -1), "Argument less than minimum value 0 (Parameter 'maxOutputTokens') Actual value was -1."),
        ((100, 100), "Argument greater or equal than maximum value 100 (Parameter 'maxOutputTokens') Actual value was "
                     "100."),
        ((100, 10, 0.0), "Threshold must be in the range (0.0, 1.0]. (Parameter 'toolEvictionThreshold') Actual value "
                         "was 0."),
        ((100, 10, 0.5, 1.5), "Threshold must be in the range (0.0, 1.0]. (Parameter 'truncationThreshold') Actual "
                              "value was 1.5."),
        ((100, 10, 0.6, 0.5), "Truncation threshold (0.5) must be greater than or equal to tool eviction threshold "
                              "(0.6). (Parameter 'truncationThreshold') Actual value was 0.5."),
    ]
    for args, message in cases:
        with pytest.raises(ValueError) as err:
            ContextWindowCompaction(*args)
        assert str(err.value) == message


def test_context_window_registration_uses_the_replay_window(django_log):
    conv = compaction.load(django_log)
    rep = compaction.replay(conv, "agent_framework.context_window", {"max_output_tokens": 4000},
                            context_window=30000, counter="maf-dotnet")
    assert rep.lines == {"trigger": 13000, "truncation": 20800, "input_budget": 26000}
    assert max(s.tokens_sent for s in rep.steps) <= 26000
    assert get_strategy("agent_framework.context_window").policy == "window"


# ------------------------------------------------------------------------------------------------- real logs
REAL_SETTINGS = {
    "truncation": {"trigger": "TokensExceed(4000)", "minimum_preserved_groups": 2},
    "sliding_window": {"trigger": "MessagesExceed(20)"},
    "summarization": {"trigger": "TokensExceed(4000)", "minimum_preserved_groups": 2},
    "pipeline": {"children": "tool_result_compaction(trigger=TokensExceed(4000), minimum_preserved_groups=2); "
                             "truncation(trigger=TokensExceed(4000), minimum_preserved_groups=2)"},
}


@pytest.mark.parametrize("name", sorted(REAL_SETTINGS))
def test_registered_strategies_on_a_real_log(name):
    conv = compaction.load(real_log("openai-plain/tau-bench__task2-trial1.json"))
    rep = compaction.replay(conv, f"agent_framework.{name}", REAL_SETTINGS[name], counter="maf-dotnet")
    assert any(s.compacted for s in rep.steps)
    for s in rep.steps:
        if s.compacted and name in ("truncation", "pipeline"):
            assert s.tokens_sent <= 4000  # the inverse-trigger target is met (the newest 2 groups are small here)
    fates = rep.to_json()["steps"][-1]["fates"]
    if name in ("truncation", "sliding_window"):
        assert fates["dropped"] and not fates["collapsed"]
    else:
        assert fates["collapsed"]
    if name == "sliding_window":  # one user turn in this log besides the first: nothing to slide past turn 1
        assert all(i.message.role != "user" or i.index is not None for i in rep.context_at(len(rep.steps) - 1))
