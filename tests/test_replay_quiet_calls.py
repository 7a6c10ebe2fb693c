"""A replay takes the calls before its first possible compaction from the uncompacted baseline.

A runner that says up to which measure it surely does nothing (``Runner.quiet_through``) and keeps marks of its
state (``Runner.mark``) is resumed from the baseline's mark at the first call measuring more; the calls before it
are the baseline's. The replays must be the very ones a runner that went through every message makes: steps,
snapshots, every call's context, costs and information loss, cold or with the conversation's memo warm from other
thresholds. Digests of the same tool-call group are one message across the replays of a conversation.
"""

from __future__ import annotations

import pickle

import pytest
from conftest import real_log
from conftest import sample_paths

import compaction
from compaction.analysis.costs import compare_costs
from compaction.analysis.information import information_score
from compaction.formats import load_all_conversations
from compaction.history import Entry
from compaction.replay import Replay
from compaction.strategies import RunContext
from compaction.strategies import Runner
from compaction.strategies.agent_framework import DotnetRunner
from compaction.strategies.agent_framework import ToolResultCompaction
from compaction.strategies.agent_framework import default_tool_call_formatter
from compaction.tokens import make_counter

#: (strategy, parameters, counter)
SETUPS = (
    ("agent_framework.tool_result_compaction", {}, "approx"),
    ("agent_framework.tool_result_compaction", {}, "maf-dotnet"),
    ("agent_framework.tool_result_compaction", {"minimum_preserved_groups": 2, "formatter": "first_line"},
     "maf-python"),
    ("agent_framework.truncation", {"minimum_preserved_groups": 4}, "approx"),
    ("agent_framework.sliding_window", {}, "maf-dotnet"),
    ("agent_framework.summarization", {"minimum_preserved_groups": 2}, "approx"),
)
THRESHOLDS = ((0.95, 0.55), (0.7, 0.4), (0.6, 0.2), (0.3, 0.1))
REAL_LOGS = (
    "openai-plain/openhands-completions__django-10097.json",
    "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "tau2-bench/sierra-research-tau2-bench__pr17__telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json",
)


def fresh(conversation: compaction.Conversation) -> compaction.Conversation:
    """The same log with an empty memo (a pickled copy leaves the memo behind)."""
    return pickle.loads(pickle.dumps(conversation))


def signature(entries: tuple[Entry, ...] | list[Entry]) -> list[tuple]:
    return [(e.origin, e.pruned, e.excluded, e.exclude_reason, e.inserted, e.represents, e.message.role,
             e.message.texts, e.message.tool_result.text if e.message.tool_result else None) for e in entries]


def content(rep: Replay) -> tuple:
    """Everything a replay says, by value: its JSON, every snapshot and change, every call's context."""
    snapshots = [(s.shared, s.next_original, signature(rep.snapshot_entries(k))) for k, s in enumerate(rep.snapshots)]
    changes = [(signature(c.removed), signature(c.added), dict(c.fates), c.common_sent, c.resume)
               for c in rep.changes]
    first = next((s.step for s in rep.steps if s.triggered), 0)
    around = {*range(max(0, first - 2), first + 3), *range(0, len(rep.steps), 9), len(rep.steps) - 1}
    contexts = [[(item.index, item.fate, item.message.role, item.message.texts) for item in
                 rep.context_at(k, include_removed=True)] for k in sorted(around) if 0 <= k < len(rep.steps)]
    return rep.to_json(), snapshots, changes, contexts, information_score(rep), compare_costs(rep).setup.total_dollars


def replays(conversation: compaction.Conversation, name: str, params: dict, counter: str) -> list[Replay]:
    """One replay per threshold pair on one conversation (its memo warming up from one to the next)."""
    return [compaction.replay(conversation, name, params, context_window=12_000, compact_at=at, compact_to=to,
                              counter=counter) for at, to in THRESHOLDS]


def assert_quiet_calls_change_nothing(conversation: compaction.Conversation) -> int:
    """Every setup of :data:`SETUPS` replays alike whether its quiet calls are taken from the baseline or not, cold
    or warm; returns how many calls were taken from it."""
    taken = 0
    for name, params, counter in SETUPS:
        warm = replays(fresh(conversation), name, params, counter)
        cold = [compaction.replay(fresh(conversation), name, params, context_window=12_000, compact_at=at,
                                  compact_to=to, counter=counter) for at, to in THRESHOLDS]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(DotnetRunner, "quiet_through", lambda self: None)
            full = replays(fresh(conversation), name, params, counter)
        for a, b, c in zip(warm, cold, full, strict=True):
            assert content(a) == content(b) == content(c), (name, params, counter, a.compact_at)
            taken += next((s.step for s in c.steps if s.triggered), len(c.steps))
    return taken


@pytest.mark.parametrize("path", sample_paths("*.json"), ids=lambda p: p.name)
def test_samples_replay_alike_with_and_without_the_quiet_calls_taken(path) -> None:
    assert assert_quiet_calls_change_nothing(compaction.load(path))


@pytest.mark.parametrize("relative", REAL_LOGS, ids=lambda r: r.split("/")[0])
def test_real_logs_replay_alike_with_and_without_the_quiet_calls_taken(relative: str) -> None:
    assert sum(assert_quiet_calls_change_nothing(conversation)
               for conversation in load_all_conversations(real_log(relative)))


def test_the_quiet_calls_are_taken_from_the_baseline(monkeypatch) -> None:
    """A replay at a high threshold appends only what follows its first trigger (the rest is the baseline's)."""
    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    appended: list[int] = []
    append = DotnetRunner.append
    monkeypatch.setattr(DotnetRunner, "append", lambda self, entry: (appended.append(entry.origin), append(self, entry)))
    compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=12_000, compact_at=0.3)
    baseline = len(appended)  # the first replay measures the baseline first: every message once
    appended.clear()
    rep = compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=12_000,
                            compact_at=0.7)
    first = next(s for s in rep.steps if s.triggered)
    assert first.step > 0
    assert appended == [i for i in range(first.message_index, len(conversation.messages))]
    assert baseline >= len(conversation.messages) - 1


def test_a_runner_promising_nothing_goes_through_every_message() -> None:
    class Plain(Runner):
        def append(self, entry):
            pass

        def before_call(self):
            raise NotImplementedError

        def entries(self):
            return []

        def measure(self):
            return 0

    runner = Plain()
    assert runner.quiet_through() is None and runner.mark() is None
    with pytest.raises(TypeError, match="keeps no marks"):
        runner.resume(Plain(), None)


def test_a_runner_resumes_only_from_its_own_kind() -> None:
    conversation = compaction.load(sample_paths("coding_agent.openai.json")[0])
    rep = compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=12_000)
    assert rep.steps
    info = compaction.get_strategy("agent_framework.tool_result_compaction")
    runner = info.make_runner(info.resolve_params({}), RunContext(make_counter("approx")))
    haystack = compaction.get_strategy("haystack.tool_result_pruning")
    other = haystack.make_runner(haystack.resolve_params({}), RunContext(make_counter("approx")))
    with pytest.raises(TypeError, match="DotnetRunner"):
        runner.resume(other, (0, 0, 0, 0))


# ------------------------------------------------------------------------------------------------ shared digests
def digests(rep: Replay, entries: bool = False) -> dict[tuple[int, ...], object]:
    """Each digest message (or its entry) of a replay by the originals it stands for."""
    found = {}
    for k in range(len(rep.snapshots)):
        for e in rep.snapshot_entries(k):
            if e.inserted == "digest":
                found[e.represents] = e if entries else e.message
    return found


def three_replays(conversation: compaction.Conversation) -> tuple[Replay, Replay, Replay]:
    """Agent Framework's tool-result compaction on ``conversation`` under two sets of thresholds, and on a fresh copy
    of it (which shares nothing with the first two) under the first set."""

    def run(conv: compaction.Conversation, at: float, to: float) -> Replay:
        return compaction.replay(conv, "agent_framework.tool_result_compaction", context_window=12_000,
                                 compact_at=at, compact_to=to)

    return run(conversation, 0.6, 0.2), run(conversation, 0.7, 0.5), run(fresh(conversation), 0.6, 0.2)


def test_digests_of_the_same_group_are_one_message_across_a_conversations_replays() -> None:
    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    replays = three_replays(conversation)
    first, second, other = (digests(rep) for rep in replays)
    shared = first.keys() & second.keys()
    assert shared
    assert all(first[k] is second[k] for k in shared)
    assert {k: m.texts for k, m in other.items()} == {k: m.texts for k, m in first.items()}
    assert not any(other[k] is first[k] for k in other)
    # and so are their entries (the same originals covered), while a fresh conversation writes its own alike
    first_entries, second_entries, other_entries = (digests(rep, entries=True) for rep in replays)
    assert all(first_entries[k] is second_entries[k] for k in first_entries.keys() & second_entries.keys())
    assert all(first_entries[k].message is first[k] for k in first_entries)
    assert signature(list(other_entries.values())) == signature(list(first_entries.values()))
    assert not any(other_entries[k] is first_entries[k] for k in other_entries)


def test_an_original_excluded_for_the_same_reason_is_one_entry_across_a_conversations_replays() -> None:
    """The entries an index flags excluded are shared by the replays of a conversation (through its memo), as the
    digests are; a fresh conversation flags its own, alike."""

    def flagged(rep: Replay) -> dict[tuple[int | None, str | None], Entry]:
        return {(e.origin, e.exclude_reason): e for k in range(len(rep.snapshots)) for e in rep.snapshot_entries(k)
                if e.excluded and e.origin is not None}

    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    first, second, other = (flagged(rep) for rep in three_replays(conversation))
    shared = first.keys() & second.keys()
    assert shared
    assert all(first[k] is second[k] for k in shared)
    assert signature(list(other.values())) == signature(list(first.values()))
    assert not any(other[k] is first[k] for k in other)


def test_the_flagged_entries_kept_start_over_when_full(monkeypatch) -> None:
    from compaction.strategies import agent_framework

    monkeypatch.setattr(agent_framework, "EXCLUDED_KEPT", 2)
    entries = [Entry(compaction.conversation.user(f"m{k}"), k) for k in range(3)]
    memo: agent_framework.ExcludedMemo = {}
    first = agent_framework.excluded_entries(entries, "why", memo)
    assert [e.exclude_reason for e in first] == ["why"] * 3 and all(e.excluded for e in first)
    assert len(memo["why"]) == 3  # (the memo is full after this list: the next one starts over)
    again = agent_framework.excluded_entries([entries[0], first[1]], "why", memo)
    assert again[0] is not first[0] and again[1] is first[1] and len(memo["why"]) == 1
    assert agent_framework.excluded_entries([entries[0]], "why", memo)[0] is again[0]
    assert agent_framework.excluded_entries([entries[0]], "other", memo)[0] is not again[0]


def test_a_conversations_shared_digests_start_over_when_full(monkeypatch) -> None:
    """The digests and digest entries a conversation's replays share are bounded as its flagged entries are (a long
    session of threshold changes must not grow them without end); what the replays send is unchanged."""
    from compaction.strategies import agent_framework

    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    unbounded = [digests(rep) for rep in three_replays(conversation)[:2]]
    monkeypatch.setattr(agent_framework, "EXCLUDED_KEPT", 2)
    bounded_conversation = fresh(conversation)
    bounded = [digests(rep) for rep in three_replays(bounded_conversation)[:2]]
    shared = [v for k, v in bounded_conversation.memo.items() if k[0] == "runners share" and "digest" in k[1]]
    assert shared and all(len(memo) <= 2 for memo in shared)
    assert [{k: m.texts for k, m in d.items()} for d in bounded] == [{k: m.texts for k, m in d.items()}
                                                                      for d in unbounded]


def test_the_quiet_steps_are_the_steps_a_replay_builds() -> None:
    from compaction.replay import Step
    from compaction.replay import _quiet_steps

    steps = list(_quiet_steps([1, 4, 9], [10, 20, 30], 2))
    assert steps == [Step(0, 1, 10, 10, 10, False, False, None, "", 0), Step(1, 4, 20, 20, 20, False, False, None, "", 0)]
    assert all(type(s) is Step and s.model_calls == () for s in steps)


def test_a_custom_formatter_writes_every_digest_anew() -> None:
    """A function of the user's may read more than the group's messages: its digests are never shared."""
    calls: list[int] = []

    def formatter(group):
        calls.append(id(group))
        return default_tool_call_formatter(group)

    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    first = digests(compaction.replay(conversation, "agent_framework.tool_result_compaction", {"formatter": formatter},
                                      context_window=12_000, compact_at=0.6, compact_to=0.2))
    second = digests(compaction.replay(conversation, "agent_framework.tool_result_compaction",
                                       {"formatter": formatter}, context_window=12_000, compact_at=0.6,
                                       compact_to=0.2))
    assert first and not any(first[k] is second[k] for k in first.keys() & second.keys())
    assert len(calls) >= 2 * len(first)
    custom = ToolResultCompaction(compaction.policy.parse_trigger("Always()"), formatter=formatter, digests={},
                                  digest_entries={})
    assert custom.digests is None and custom.digest_entries is None


def test_a_conversation_keeps_the_runners_of_its_few_latest_baselines_only() -> None:
    """A baseline's runner holds a whole message index: the memo keeps a few; older baselines keep their series, and
    a replay that needs an older one's runner again measures it anew, replaying the same."""
    from compaction.replay import _BASELINE_RUNNERS_KEPT

    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    first = compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=12_000,
                              compact_at=0.7)
    for k in range(_BASELINE_RUNNERS_KEPT + 2):  # other parameters: other baselines
        compaction.replay(conversation, "agent_framework.tool_result_compaction",
                          {"minimum_preserved_groups": 3 + k}, context_window=12_000)
    baselines = [v for k, v in conversation.memo.items() if k[0] == "baseline"]
    assert len(baselines) == _BASELINE_RUNNERS_KEPT + 3
    assert sum(b.runner is not None for b in baselines) == _BASELINE_RUNNERS_KEPT
    assert baselines[0].runner is None and baselines[0].series
    again = compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=12_000,
                              compact_at=0.7)
    assert content(again) == content(first)
    assert [v for k, v in conversation.memo.items() if k[0] == "baseline"][-1].runner is not None


@pytest.mark.parametrize("warm", [False, True], ids=["baseline measured by the replay", "baseline known"])
def test_a_spent_budget_stops_a_replay_at_its_first_call_whatever_the_baseline(warm: bool) -> None:
    """The calls taken from the baseline are checked against the replay's budget as the replay would check them."""
    from compaction.budget import ReplayBudgetExceeded
    from compaction.budget import WorkBudget

    conversation = fresh(compaction.load(sample_paths("coding_agent.openai.json")[0]))
    if warm:  # (a window nothing exceeds: every call is quiet)
        compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=10_000_000)
    with pytest.raises(ReplayBudgetExceeded) as stopped:
        compaction.replay(conversation, "agent_framework.tool_result_compaction", context_window=10_000_000,
                          budget=WorkBudget(0.0))
    assert stopped.value.step == 0 and stopped.value.calls == len(conversation.llm_call_indices)
