"""Invariants every strategy keeps, on every real log: checked over all registered strategies x the real logs in
``../shared/real_logs`` (each capped to its first 60 LLM calls) x two context windows sized to the log so that
compaction happens, and again over a parameter grid: each strategy's numeric parameters at their minimum and its
choices and switches at their other values, one at a time, with two threshold policies.

- the input conversation is never mutated;
- tool-call pairing is preserved where the framework promises it: a sent tool result has its call in the same
  context, and a sent call whose result the log already had keeps its result. Strategies documented not to promise
  it (Haystack sliding window's orphan case, LangChain's fallback cut, Agent Framework Python's sliding window)
  must instead have every split flagged by ``warnings_for`` (split_pair); known violations are strict xfails;
- a compaction never sends more tokens than were measured before it, except for strategies whose framework
  substitutes text without checking its size (listed with the reason in ``GROWTH_ALLOWED``);
- a replay is deterministic (two runs give the same ``to_json()``);
- the replay's snapshots and per-snapshot changes (what analyses follow) agree with a recomputation from the full
  stored history at every compaction.
"""

from __future__ import annotations

from dataclasses import asdict
from functools import cache

import pytest
from corpus import GRID_POLICIES
from corpus import REAL_LOGS
from corpus import parameter_variants
from corpus import real_conversations
from corpus import windows_for
from timeline_checks import assert_timeline_consistent
from timeline_checks import contexts
from timeline_checks import replay_without_hints

import compaction
from compaction.conversation import Conversation
from compaction.explain import warnings_for
from compaction.replay import Replay

#: strategies whose framework does not promise tool-call pairing (see the reference, "Tool-pair integrity")
NO_PAIRING_PROMISE = {
    "haystack.sliding_window": "orphan messages are dropped: a call can lose a result that is not right after it",
    "langchain.summarization": "the fallback cut moves forward without looking at tool pairs",
    "agent_framework_python.sliding_window": "drops whole groups, the user turn included, by count",
    "roo_code.sliding_window": "hides an even number of messages, which keeps pairs only where user and assistant "
                               "messages alternate",
    "roo_code.condense": "its fallback is the sliding window (an even number of messages hidden)",
    "aider.chat_summary": "ChatSummary splits by tokens and role only: the kept tail may start with a tool result "
                          "whose call was summarized away (aider itself makes no tool calls)",
}

#: strategies that break tool pairing and are known to (none: OpenHands' ConversationMemory filter is replayed)
KNOWN_PAIRING_ISSUES: dict[str, str] = {}

#: strategies whose compaction can send more than it measured: the framework inserts or substitutes text without
#: checking that it is shorter than what it replaces (Haystack summarization, by contrast, discards such a round)
_SUMMARY_GROWS = "the summary (simulated at summary_tokens) can outweigh the short stretch it replaces; not checked"
GROWTH_ALLOWED = {
    "agent_framework.summarization": _SUMMARY_GROWS,
    "agent_framework_python.summarization": _SUMMARY_GROWS + " (its trigger counts messages, not tokens)",
    "agent_framework.pipeline": _SUMMARY_GROWS,
    "codex.auto_compact": _SUMMARY_GROWS,
    "claude_code.auto_compact": _SUMMARY_GROWS + " (with the files, todo list and skills Claude Code re-attaches; "
                                "under a window below its output reserve + 13,000 it compacts before every call)",
    "claude_code.microcompact": "a cleared result's pointer (or the time-based rule's `[Old tool result content "
                                "cleared]`) can be longer than a short result; the rule weighs what it clears, not "
                                "what it writes",
    "inspect_ai.summary": _SUMMARY_GROWS,
    "inspect_ai.edit": "a cleared-result placeholder can be longer than a short tool result",
    "swe_agent.last_n_observations": "the 'Old environment output' mask can be longer than a short observation",
    "swe_agent.hybrid": "masks and summaries can be longer than what they replace",
    "haystack.sliding_window": "the omission note can outweigh the few messages it replaces",
    "openhands.recent_events": "when the history is shorter than max_events, head and tail overlap and an event is "
                               "sent twice (OpenHands' own slicing)",
    "cline.context_manager": "the truncation notice replaces the first assistant message's first text block and is "
                             "longer than a short one, when the cut leaves few or no messages out",
    "roo_code.condense": _SUMMARY_GROWS + " (Roo adds the environment details to it)",
    "roo_code.sliding_window": "the truncation marker can outweigh the two short messages it hides",
    "opencode.compaction": _SUMMARY_GROWS + " (with OpenCode's question and continue messages)",
    "gemini_cli.chat_compression": "Gemini CLI checks the compressed history against the last prompt's reported tokens "
                                   "(system prompt and tool declarations included), not against the history it "
                                   "replaces: the summary can outweigh a short head",
}

pytestmark = pytest.mark.skipif(not REAL_LOGS.is_dir(), reason=f"real logs not available at {REAL_LOGS}")


def deep_snapshot(conv: Conversation) -> list[tuple[int, dict]]:
    """Every message's identity and full value (messages compare by identity, so compare their fields)."""
    return [(id(m), asdict(m)) for m in conv.messages]


def pairing_splits(rep: Replay) -> dict[int, str]:
    """Steps whose context splits a call from its result, beyond what the uncompacted log itself does
    (step -> a description of the first split)."""
    messages = rep.conversation.messages
    result_at = {m.tool_result.call_id: i for i, m in enumerate(messages)
                 if m.tool_result is not None and m.tool_result.call_id}

    def split(sent, before: int) -> set[str]:
        calls = {c.id for m in sent for c in m.tool_calls if c.id}
        results = {m.tool_result.call_id for m in sent if m.tool_result is not None and m.tool_result.call_id}
        orphan_results = {f"result {c} without its call" for c in results - calls}
        unanswered = {f"call {c} without its result (log message {result_at[c]})" for c in calls - results
                      if result_at.get(c, before) < before}
        return orphan_results | unanswered

    out: dict[int, str] = {}
    for step in rep.steps:
        baseline = [m for i, m in enumerate(messages[: step.message_index]) if i not in rep.skipped]
        extra = split(rep.messages_at(step.step), step.message_index) - split(baseline, step.message_index)
        if extra:
            out[step.step] = sorted(extra)[0]
    return out


@cache
def replays(strategy: str) -> tuple[tuple[str, int, Replay], ...]:
    """(log name, window, replay) for every real log and window this strategy accepts."""
    out = []
    for name, conv in real_conversations():
        for window in windows_for(conv):
            rep = _run(conv, strategy, window)
            if rep is not None:
                out.append((name, window, rep))
    assert out, f"{strategy}: no replay ran on any real log"
    return tuple(out)


def _run(conv: Conversation, strategy: str, window: int) -> Replay | None:
    try:
        return compaction.replay(conv, strategy, context_window=window, compact_at=0.7, compact_to=0.4)
    except ValueError:  # a setting the framework itself rejects for this window
        return None


STRATEGIES = sorted(compaction.strategies())


def _pairing_params() -> list:
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_PAIRING_ISSUES[name]))
            if name in KNOWN_PAIRING_ISSUES else name for name in STRATEGIES]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_input_not_mutated_and_replay_deterministic(strategy: str) -> None:
    problems = []
    for name, conv in real_conversations():
        before = deep_snapshot(conv)
        window = windows_for(conv)[0]
        first, second = _run(conv, strategy, window), _run(conv, strategy, window)
        if (first is None) != (second is None) or (first is not None and first.to_json() != second.to_json()):
            problems.append(f"{strategy} on {name}, context_window={window}: two replays differ")
        after = deep_snapshot(conv)
        if after != before:
            changed = next(i for i, (a, b) in enumerate(zip(after, before, strict=True)) if a != b)
            problems.append(f"{strategy} on {name}: the input conversation was mutated (message {changed})")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_compaction_never_sends_more_than_it_measured(strategy: str) -> None:
    if strategy in GROWTH_ALLOWED:
        pytest.skip(GROWTH_ALLOWED[strategy])
    problems = [f"{strategy} on {name}, context_window={window}: call {s.step} sent {s.tokens_sent} tokens after "
                f"compacting from {s.tokens_before}"
                for name, window, rep in replays(strategy) for s in rep.steps
                if s.compacted and s.tokens_sent > s.tokens_before]
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("strategy", _pairing_params())
def test_tool_pairs_kept_or_flagged(strategy: str) -> None:
    problems = []
    for name, window, rep in replays(strategy):
        where = f"{strategy} on {name}, context_window={window}"
        splits = pairing_splits(rep)
        if not splits:
            continue
        if strategy in NO_PAIRING_PROMISE:
            flagged = {k for warning in warnings_for(rep) if warning.kind == "split_pair" for k in warning.steps}
            missing = [k for k in sorted(splits)[:50] if k not in flagged]  # warnings list the first 50 steps
            if missing:
                problems.append(f"{where}: calls {missing[:5]} split a tool pair without a split_pair warning")
        else:
            k = min(splits)
            problems.append(f"{where}: call {k} splits a tool pair: {splits[k]} ({len(splits)} calls affected)")
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_timeline_changes_match_a_recomputation(strategy: str, monkeypatch) -> None:
    for name, window, rep in replays(strategy):
        where = f"{strategy} on {name}, context_window={window}"
        assert_timeline_consistent(rep, where)
        unhinted = replay_without_hints(monkeypatch, lambda c=rep.conversation, w=window: _run(c, strategy, w))
        assert contexts(rep) == contexts(unhinted), f"{where}: the runner's first_change() hint changed the replay"


#: parameter values under which a strategy's compaction may send more than it measured (see GROWTH_ALLOWED)
GROWTH_ALLOWED_WITH = {
    ("haystack.stack", "second", "sliding_window"): GROWTH_ALLOWED["haystack.sliding_window"],
}


def growth_allowed(strategy: str, params: dict) -> bool:
    """Whether ``strategy`` with ``params`` may send more than it measured (documented above)."""
    return strategy in GROWTH_ALLOWED or any(params.get(name) == value
                                             for (s, name, value) in GROWTH_ALLOWED_WITH if s == strategy)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_invariants_over_a_parameter_grid(strategy: str) -> None:
    """Input untouched, deterministic, never more sent than measured (unless documented), pairs kept or flagged."""
    problems: list[str] = []
    ran = 0
    for name, conv in real_conversations():
        before = deep_snapshot(conv)
        window = windows_for(conv)[-1]
        for k, params in enumerate(parameter_variants(strategy)):
            compact_at, compact_to = GRID_POLICIES[k % len(GRID_POLICIES)]
            where = f"{strategy}{params or ''} on {name}, window {window}, at {compact_at}/{compact_to}"

            def run(conv=conv, window=window, params=params, compact_at=compact_at,
                    compact_to=compact_to) -> Replay | None:
                try:
                    return compaction.replay(conv, strategy, params, context_window=window, compact_at=compact_at,
                                             compact_to=compact_to)
                except ValueError:  # a combination the framework itself rejects
                    return None

            rep = run()
            if rep is None:
                continue
            ran += 1
            again = run()
            if again is None or again.to_json() != rep.to_json():
                problems.append(f"{where}: two replays differ")
            if not growth_allowed(strategy, params):
                grew = [s.step for s in rep.steps if s.compacted and s.tokens_sent > s.tokens_before]
                if grew:
                    problems.append(f"{where}: calls {grew[:5]} sent more than they measured")
            splits = pairing_splits(rep)
            if splits and strategy not in NO_PAIRING_PROMISE:
                problems.append(f"{where}: call {min(splits)} splits a tool pair: {splits[min(splits)]}")
            elif splits:
                flagged = {k for w in warnings_for(rep) if w.kind == "split_pair" for k in w.steps}
                if any(k not in flagged for k in sorted(splits)[:50]):
                    problems.append(f"{where}: a tool pair split without a split_pair warning")
        if deep_snapshot(conv) != before:
            problems.append(f"{strategy} on {name}: the input conversation was mutated")
    assert ran, f"{strategy}: no grid point ran"
    assert not problems, "\n".join(problems[:20])


def test_the_grid_varies_every_strategy() -> None:
    assert all(len(parameter_variants(s)) >= 2 for s in STRATEGIES if compaction.strategies()[s].params)


def test_documented_exceptions_are_registered_strategies() -> None:
    unknown = (set(NO_PAIRING_PROMISE) | set(KNOWN_PAIRING_ISSUES) | set(GROWTH_ALLOWED)
               | {s for s, _, _ in GROWTH_ALLOWED_WITH}) - set(STRATEGIES)
    assert not unknown, f"exceptions name strategies that do not exist: {sorted(unknown)}"
