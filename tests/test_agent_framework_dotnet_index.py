"""The Agent Framework .NET message index keeps incremental structures; they must agree with recomputing them.

``MessageIndex`` keeps its stored entries as one list, in step with every change, and finds what the strategies act
on (the oldest included groups, the newest ones, the included tool-call groups, the user turns) from cursors and
position hints instead of scanning every group. :class:`RecomputedIndex` answers the same questions by scanning the
groups, as the index once did. A runner on either index must make the same calls with the same outcome and the same
stored history, call by call: on generated logs with generated setups (hypothesis, failing summarizers and nested
foreign children included), on the samples and on the real logs of ../shared/real_logs. Random edits through the
index's own operations (exclude, restore, insert, replace, partial exclusion) keep every view equal to its
recomputation and every position hint a lower bound.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from functools import partial

import pytest
from conftest import real_log
from conftest import sample_paths
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import Entry
from compaction.history import inserted
from compaction.history import original
from compaction.policy import parse_trigger
from compaction.strategies import RunContext
from compaction.strategies import get_strategy
from compaction.strategies._nesting import make_nested
from compaction.strategies.agent_framework import SUMMARY_FLAG
from compaction.strategies.agent_framework import ContextWindowCompaction
from compaction.strategies.agent_framework import DotnetRunner
from compaction.strategies.agent_framework import DotnetStrategy
from compaction.strategies.agent_framework import Group
from compaction.strategies.agent_framework import MessageIndex
from compaction.strategies.agent_framework import NestedDotnetChild
from compaction.strategies.agent_framework import PipelineCompaction
from compaction.strategies.agent_framework import SlidingWindowCompaction
from compaction.strategies.agent_framework import SummarizationCompaction
from compaction.strategies.agent_framework import ToolResultCompaction
from compaction.strategies.agent_framework import TruncationCompaction
from compaction.summarizers import FixedSizeSummarizer
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter


# ------------------------------------------------------------------------------------------------ recomputation
def non_system_included(index: MessageIndex) -> list[Group]:
    return [g for g in index.groups if not g.excluded and g.kind != "System"]


def recomputed_entries(index: MessageIndex) -> list[Entry]:
    return [e for g in index.groups for e in g.stored]


def recomputed_turns(index: MessageIndex) -> list[list[Group]]:
    turns: dict[int, list[Group]] = {}
    for g in non_system_included(index):
        if g.turn:  # turn 0 (before the first user message) and summaries without a turn are left out
            turns.setdefault(g.turn, []).append(g)
    return [turns[t] for t in sorted(turns)]


class RecomputedIndex(MessageIndex):
    """The index with every view computed by scanning all its groups (lists built before any change)."""

    @property
    def included_turns(self) -> int:
        return len(recomputed_turns(self))

    def entries(self) -> list[Entry]:
        return recomputed_entries(self)

    def oldest_included(self) -> Iterator[Group]:
        return iter(non_system_included(self))

    def newest_included(self, count: int) -> list[Group]:
        return non_system_included(self)[::-1][:count]

    def included_tool_calls(self) -> Iterator[Group]:
        return iter([g for g in self.groups if not g.excluded and g.kind == "ToolCall"])

    def included_turns_oldest_first(self) -> Iterator[list[Group]]:
        return iter(recomputed_turns(self))


def assert_index_consistent(index: MessageIndex) -> None:
    """Every incremental view of ``index`` equals its recomputation; every position hint is a lower bound."""
    assert index.entries() == recomputed_entries(index)  # identity: entries compare by identity
    assert list(index.oldest_included()) == non_system_included(index)
    for count in (0, 1, 2, 5, len(index.groups) + 1):
        assert index.newest_included(count) == RecomputedIndex.newest_included(index, count)
    assert list(index.included_tool_calls()) == list(RecomputedIndex.included_tool_calls(index))
    assert list(index.included_turns_oldest_first()) == recomputed_turns(index)
    assert index.included_turns == len(recomputed_turns(index))
    included = [g for g in index.groups if not g.excluded]
    for g in index.groups:  # a group grown a message at a time is counted as the whole list it holds
        assert g.tokens == index.counter.count(g.messages)
    assert index.included_tokens == sum(g.tokens for g in included)
    assert index.included_messages == sum(len(g.live_entries) for g in included)
    assert index.included_non_system_groups == len(non_system_included(index))
    stored = index.entries()
    position = 0
    for at, g in enumerate(index.groups):
        assert g.at <= at and g.stored_at <= position
        assert stored[position] is g.stored[0]
        position += len(g.stored)


def signature(entries: Sequence[Entry]) -> list[tuple]:
    """What a stored history holds, by value (two runners build their own excluded and inserted entries)."""
    return [(e.origin, e.pruned, e.excluded, e.exclude_reason, e.inserted, e.represents, e.message.role,
             e.message.texts, e.message.tool_result.text if e.message.tool_result else None) for e in entries]


def assert_same_replay(build: Callable[[], DotnetRunner], messages: Sequence[Message]) -> int:
    """Drive a runner on the incremental index and one on :class:`RecomputedIndex` through ``messages`` as the
    replay engine does; every call must agree. Returns how many calls compacted."""
    fast, slow = build(), build()
    slow.index = RecomputedIndex(slow.index.counter)
    compacted = 0
    for i, m in enumerate(messages):
        if m.role == "assistant":
            outcome = fast.before_call()
            assert outcome == slow.before_call(), f"call before message {i}"
            assert signature(fast.entries()) == signature(slow.entries()), f"stored history before message {i}"
            assert_index_consistent(fast.index)
            compacted += outcome.compacted
        entry = original(m, i)
        fast.append(entry)
        slow.append(entry)
    return compacted


# ------------------------------------------------------------------------------------------------ generated logs
class FlakySummarizer(FixedSizeSummarizer):
    """Fails on every request of a multiple-of-three size (so exclusions get restored now and then)."""

    def text(self, request: SummaryRequest) -> str:
        if len(request.messages) % 3 == 0:
            raise RuntimeError("summarizer unavailable")
        return super().text(request)


def build_messages(steps: Sequence[tuple[str, int, int]]) -> list[Message]:
    """A log from (kind, calls, size) steps: tool-call assistants come with their results (one of them plain)."""
    messages: list[Message] = []
    for k, (kind, calls, size) in enumerate(steps):
        body = f"{kind} {k} " + "x" * size
        if kind == "system":
            messages.append(system(body))
        elif kind == "user":
            messages.append(user(body))
        elif kind == "text":
            messages.append(assistant(body))
        elif kind == "reasoning":
            messages.append(Message("assistant", reasoning=(body,)))
        elif kind == "summary":
            messages.append(assistant(body, **{SUMMARY_FLAG: True}))
        else:
            made = [ToolCall(f"c{k}_{n}", f"tool{n}", {"arg": size}) for n in range(calls)]
            messages.append(assistant(None, made))
            messages += [tool(c, body) if n or size % 2 else Message("tool", texts=(body,)) for n, c in enumerate(made)]
    return messages


STEPS = st.lists(st.tuples(st.sampled_from(["user", "text", "calls", "calls", "calls", "reasoning", "summary",
                                            "system"]), st.integers(1, 3), st.integers(0, 400)),
                 min_size=8, max_size=80)
TRIGGERS = st.one_of(
    st.integers(50, 2000).map(lambda n: f"TokensExceed({n})"),
    st.integers(3, 40).map(lambda n: f"MessagesExceed({n})"),
    st.integers(2, 20).map(lambda n: f"GroupsExceed({n})"),
    st.integers(1, 5).map(lambda n: f"TurnsExceed({n})"),
    st.sampled_from(["Always()", "HasToolCalls()"]),
)
TARGETS = st.one_of(st.none(), st.integers(50, 2000))
COUNTER = make_counter("maf-dotnet")
#: foreign children that replace content, remove messages (whole groups or part of one) and insert summaries
NESTED = (("haystack.tool_result_pruning", {"min_tokens": "0"}), ("haystack.sliding_window", {}),
          ("anthropic.clear_tool_uses_20250919", {"trigger_value": "300", "keep": "1"}),
          ("swe_agent.last_n_observations", {"n": "2"}), ("haystack.summarization", {"summarizer": "fixed-size"}))


#: a setup as plain data, so that each runner gets its own, equal, strategy: (kind, trigger, target, minimum, extra)
SETUPS = st.tuples(st.sampled_from(["tool_result", "truncation", "sliding", "summarization", "context_window",
                                    "nested"]), TRIGGERS, TARGETS, st.integers(0, 6), st.integers(0, 10_000))
PIPELINES = st.lists(SETUPS, min_size=1, max_size=4)


def make_strategy(setup: tuple) -> DotnetStrategy:
    """The .NET strategy a drawn setup describes (``extra`` picks a window, a child or a turn floor)."""
    kind, trigger_text, target_value, minimum, extra = setup
    trigger = parse_trigger(trigger_text)
    target = None if target_value is None else parse_trigger(f"TokensBelow({target_value})")
    if kind == "tool_result":
        return ToolResultCompaction(trigger, minimum, target)
    if kind == "truncation":
        return TruncationCompaction(trigger, minimum, target)
    if kind == "sliding":
        return SlidingWindowCompaction(trigger, minimum % 4, target)
    if kind == "summarization":
        return SummarizationCompaction(FlakySummarizer(), COUNTER, trigger, minimum, None, target, summary_tokens=20)
    if kind == "context_window":
        window = 600 + extra // 2
        return ContextWindowCompaction(window, extra % (window // 4))
    ctx = RunContext(COUNTER, context_window=400 + extra // 3)
    name, args = NESTED[extra % len(NESTED)]
    return NestedDotnetChild(make_nested(name, args, {}, ctx, "nested"))


@settings(max_examples=200, deadline=None)
@given(STEPS, PIPELINES)
def test_generated_logs_replay_alike_on_both_indexes(steps, setups) -> None:
    def build() -> DotnetRunner:
        strategies = [make_strategy(s) for s in setups]
        return DotnetRunner(strategies[0] if len(strategies) == 1 else PipelineCompaction(strategies),
                            RunContext(COUNTER))

    assert_same_replay(build, build_messages(steps))


# ------------------------------------------------------------------------------------------------ random edits
EDITS = st.lists(st.tuples(st.sampled_from(["append", "append", "append", "batch", "exclude", "restore",
                                            "insert_after", "insert_before", "replace", "exclude_part"]),
                           st.integers(0, 10_000)), max_size=150)


def edit(index: MessageIndex, op: str, k: int) -> None:
    """One of the index's own operations on group ``k`` (modulo the number of groups)."""
    g = index.groups[k % len(index.groups)]
    if op == "exclude":
        index.exclude(g, "test")
    elif op == "restore":
        index.restore(g)
    elif op in ("insert_after", "insert_before"):  # a digest after its group takes its turn; a summary has none
        entry = inserted(assistant(f"summary {k}", **{SUMMARY_FLAG: True}), "summary", g.live_entries)
        turn = g.turn if op == "insert_after" and k % 2 else None
        getattr(index, op)(g, Group("Summary", [entry], turn))
    elif op == "replace" and not g.excluded:
        old = g.entries[k % len(g.entries)]
        index.replace_entry(g, old, old.replaced(assistant(f"replaced {k}")))
    elif op == "exclude_part" and not g.excluded and len(g.live_entries) > 1:
        index.exclude_entries(g, g.live_entries[: 1 + k % (len(g.live_entries) - 1)], "part")


@settings(max_examples=300, deadline=None)
@given(STEPS, EDITS)
def test_random_edits_keep_every_view_equal_to_its_recomputation(steps, edits) -> None:
    messages = build_messages(steps)
    index = MessageIndex(COUNTER)
    appended = 0
    for op, k in edits:
        if op == "append" and appended < len(messages):
            index.append(original(messages[appended], appended))
            appended += 1
        elif op == "batch":
            index.end_batch()
        elif op != "append" and index.groups:
            edit(index, op, k)
        assert_index_consistent(index)


# ------------------------------------------------------------------------------------------------ samples, real logs
REGISTERED = (
    ("agent_framework.tool_result_compaction", {}),
    ("agent_framework.tool_result_compaction", {"minimum_preserved_groups": 2, "trigger": "MessagesExceed(20)"}),
    ("agent_framework.truncation", {"minimum_preserved_groups": 4}),
    ("agent_framework.sliding_window", {}),
    ("agent_framework.summarization", {"minimum_preserved_groups": 2}),
    ("agent_framework.context_window", {"max_output_tokens": 1000}),
    ("agent_framework.pipeline", {}),
    ("agent_framework.pipeline", {"children": "haystack.tool_result_pruning; tool_result_compaction("
                                              "minimum_preserved_groups=2); sliding_window; truncation"}),
)
REAL_LOGS = (
    "openai-plain/openhands-completions__django-10097.json",
    "openai-plain/mini-swe-agent__astropy-12907.json",
    "tau-bench/sierra-research-tau-bench__gpt-4o-airline__task2-trial1.json",
    "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
    "swe-agent/SWE-agent__test_data__gpt4__pydicom__pydicom-1458.traj",
    "anthropic-messages/badlogic-lemmy__claude-trace-test-traffic__longest-request-body.json",
    "tau2-bench/sierra-research-tau2-bench__pr17__telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json",
)


def assert_registered_setups_agree(conv: compaction.Conversation) -> int:
    """Every setup of :data:`REGISTERED`, at two windows and with two counters, replays alike on both indexes."""
    compacted = 0
    for name, params in REGISTERED:
        info = get_strategy(name)
        values = info.resolve_params(params)
        for window in (6_000, 20_000):
            for counter in ("approx", "maf-dotnet"):
                ctx = RunContext(make_counter(counter), conv.tools, window)
                compacted += assert_same_replay(partial(info.build, values, ctx), conv.messages)
    return compacted


@pytest.mark.parametrize("path", sample_paths(), ids=lambda p: p.name)
def test_samples_replay_alike_on_both_indexes(path) -> None:
    assert assert_registered_setups_agree(compaction.load(path))


@pytest.mark.parametrize("relative", REAL_LOGS, ids=lambda r: r.split("/")[0])
def test_real_logs_replay_alike_on_both_indexes(relative: str) -> None:
    assert assert_registered_setups_agree(compaction.load(real_log(relative)))


# ------------------------------------------------------------------------------------------------ group counts
COUNTERS = ("approx", "approx:3.3", "maf-dotnet", "maf-python", "langchain", "gemini-cli")


@pytest.mark.parametrize("spec", COUNTERS)
@settings(max_examples=60, deadline=None)
@given(steps=STEPS, batches=st.lists(st.booleans(), min_size=1, max_size=200))
def test_every_group_counts_its_messages_as_one_list(spec: str, steps, batches) -> None:
    """Whether a counter's tally is grown a message at a time or the group is counted anew, a group's count is the
    counter's count of its messages (groups of several messages: a call with its results, reasoning it absorbed)."""
    counter = make_counter(spec)
    index = MessageIndex(counter)
    for i, m in enumerate(build_messages(steps)):
        if m.role == "assistant" and batches[i % len(batches)]:
            index.end_batch()
        index.append(original(m, i))
    assert any(len(g.entries) > 1 for g in index.groups) or not any(m.role == "tool" for m in build_messages(steps))
    assert_index_consistent(index)


# ------------------------------------------------------------------------------------------------ marks
def grown(messages: Sequence[Message], upto: int, counter_spec: str = "maf-dotnet") -> MessageIndex:
    """An index of ``messages[:upto]`` as a replay grows it: a batch closed before every assistant message."""
    index = MessageIndex(make_counter(counter_spec))
    for i, m in enumerate(messages[:upto]):
        if m.role == "assistant":
            index.end_batch()
        index.append(original(m, i))
    return index


def state(index: MessageIndex) -> tuple:
    """What an index holds, by value, with its running totals."""
    return (signature(index.entries()), [(g.kind, g.turn, g.tokens, g.excluded, g.open, len(g.entries))
                                         for g in index.groups],
            index.included_tokens, index.included_messages, index.included_groups,
            index.included_non_system_groups, index.included_turns, index.has_tool_calls, index.mark())


@settings(max_examples=100, deadline=None)
@given(STEPS, st.integers(0, 10_000))
def test_an_index_resumed_from_a_mark_is_the_index_grown_to_it(steps, k) -> None:
    """An index resumed from a later index's mark (taken before a call) holds what an index grown to that point
    holds, and the source is left as it was; the two then compact alike."""
    messages = build_messages(steps)
    source = MessageIndex(COUNTER)
    marks: list[tuple[int, tuple[int, int, int, int]]] = []
    for i, m in enumerate(messages):
        if m.role == "assistant":
            marks.append((i, source.mark()))
            source.end_batch()
        source.append(original(m, i))
    marks.append((len(messages), source.mark()))
    upto, mark = marks[k % len(marks)]
    before = state(source)
    resumed = MessageIndex(COUNTER)
    resumed.resume_from(source, mark)
    expected = grown(messages, upto)
    assert state(resumed) == state(expected)
    assert state(source) == before
    assert_index_consistent(resumed)
    for index in (resumed, expected):  # the same compaction, then the rest of the log
        ToolResultCompaction(parse_trigger("Always()"), k % 4).compact(index)
        for i, m in enumerate(messages[upto:], start=upto):
            if m.role == "assistant":
                index.end_batch()
            index.append(original(m, i))
    assert signature(resumed.entries()) == signature(expected.entries())
    assert state(source) == before
    assert_index_consistent(resumed)


def test_only_a_new_index_resumes() -> None:
    source = grown(build_messages([("user", 1, 10), ("calls", 2, 10)]), 3)
    index = grown(build_messages([("user", 1, 10)]), 1)
    with pytest.raises(AssertionError, match="new"):
        index.resume_from(source, source.mark())
