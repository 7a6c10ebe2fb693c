"""Claude Code's strategies checked against the real sessions' own records: up to a real ``compact_boundary`` the
replayed context is the real one, so the replayed auto-compaction must come within two calls of the real one, at a
measure close to the logged ``preTokens``; no stretch without a real compaction may compact (every conversation of
every shared session, subagents included); a microcompaction must clear what ``microcompactMetadata.compactedToolIds``
names (of the calls the log holds)."""

from __future__ import annotations

import pytest
from conftest import real_log

import compaction
from compaction.analysis.claude_code_checks import TOLERANCE
from compaction.analysis.claude_code_checks import boundary_rows
from compaction.analysis.claude_code_checks import false_alarms
from compaction.analysis.claude_code_checks import measured_replay

SESSIONS = [
    "claude-code/entireio-cli__checkpoint-00-c9e2351016-0.jsonl",
    "claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl",
    "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl",
    "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "claude-code/marot-spotter__4d5611e5__subagent-agent-a2898e3.jsonl",
    "claude-code/marot-spotter__4d5611e5__subagent-agent-acompact-e1f845.jsonl",
]
#: the sessions with real auto-compactions: (file, release, real call, preTokens, how far the replay's measure may be
#: from it). 2.1.14 kept the streaming snapshot of the output tokens in memory, as in the log: the measure is exact.
#: 2.1.39 held the final output and counted attachments the transcript does not record: the measure stands in the
#: content's estimate and unlogged_context for them.
BOUNDARIES = [
    ("claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl", "2.1.14", 30, 155_068, 0),
    ("claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "2.1.39", 61, 170_251, 2_250),
]
PARAMS = ({}, {"summarizer": "from-log"})


def conversations(name: str):
    return compaction.load_all_conversations(real_log(name))


@pytest.mark.parametrize(("name", "version", "call", "pre_tokens", "margin"), BOUNDARIES)
@pytest.mark.parametrize("params", PARAMS)
def test_replayed_auto_compaction_is_where_the_real_one_was(name, version, call, pre_tokens, margin, params):
    main = conversations(name)[0]
    run = measured_replay(main, "claude_code.auto_compact", params)
    rows = [r for r in boundary_rows(run) if r.kind == "compaction"]
    assert len(rows) == 1
    row = rows[0]
    assert (row.version, row.real_step, row.pre_tokens) == (version, call, pre_tokens)
    assert row.replayed_step is not None and abs(row.offset) <= TOLERANCE, row
    assert abs(row.measure_at_replayed - pre_tokens) <= margin, row
    assert row.measure_at_replayed >= row.threshold > run.measured[row.replayed_step - 1].measure.tokens


def test_the_2_1_14_boundary_is_measured_exactly():
    """154,764 prompt + 5 output tokens reported by the last call, plus round(1,197 / 4) for its result."""
    main = conversations(BOUNDARIES[0][0])[0]
    measure = measured_replay(main).measured[30].measure
    assert (measure.last_call, measure.estimated, measure.unlogged) == (154_769, 299, 0)


@pytest.mark.parametrize("name", SESSIONS)
@pytest.mark.parametrize("strategy", ["claude_code.auto_compact", "claude_code.microcompact"])
def test_no_replayed_compaction_where_the_log_has_none(name, strategy):
    for conv in conversations(name):
        for params in PARAMS if strategy.endswith("auto_compact") else ({},):
            run = measured_replay(conv, strategy, params)
            assert false_alarms(run) == [], f"{conv.id}: {false_alarms(run)}"
            assert len(run.replay.steps) == len(conv.llm_call_indices)


def test_microcompaction_clears_what_the_log_names():
    """2.1.14's microcompaction cleared 42 results of an earlier part of the session (not in this file) and kept the
    newest: the replay's token rule, over the results this file holds, clears none of them either."""
    main = conversations("claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl")[0]
    run = measured_replay(main, "claude_code.microcompact")
    assert run.strategy.variant == "token"
    (row,) = [r for r in boundary_rows(run) if r.kind == "microcompact"]
    assert row.real_step == 6 and set(row.cleared_real) == set(row.cleared_replayed) == set()
    assert row.measure_at_real < 40_000  # the results this file holds: all among the newest 40,000 tokens


def test_the_logged_microcompaction_fits_the_token_rule():
    """preTokens counts the results considered, tokensSaved those cleared: what stays is within 40,000 tokens, the
    clearing saved at least 20,000, and the context was past the warning threshold (155,000 - 20,000)."""
    main = conversations("claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl")[0]
    (event,) = [e for e in main.events if e.kind == "microcompact"]
    assert event.pre_tokens - event.tokens_saved <= 40_000 and event.tokens_saved >= 20_000
    run = measured_replay(main, "claude_code.microcompact")
    gate = main.usage[main.llm_call_indices[5]]  # the gate measure: the last reported call before the boundary
    assert gate.prompt_tokens + gate.output_tokens >= run.strategy.warning == 135_000


def test_2_1_39_shows_the_token_rule_was_off():
    """Forced on, the token rule would have cleared results in the 2.1.39 session; the log has no microcompaction:
    from 2.1.21 the rule is off by default (the server flag), as the replay's release defaults say."""
    main = conversations(BOUNDARIES[1][0])[0]
    forced = measured_replay(main, "claude_code.microcompact", {"variant": "token"})
    assert any(m.cleared for m in forced.measured)
    assert not any(e.kind == "microcompact" for e in main.events)
    assert measured_replay(main, "claude_code.microcompact").strategy.variant == "off"


@pytest.mark.parametrize(("name", "version", "call", "pre_tokens", "margin"), BOUNDARIES)
def test_from_log_reuses_the_real_summary_and_follows_the_reported_usage(name, version, call, pre_tokens, margin):
    main = conversations(name)[0]
    run = measured_replay(main, "claude_code.auto_compact", {"summarizer": "from-log"})
    (event,) = [e for e in main.events if e.kind == "compaction"]
    assert run.replay.messages_at(call)[0].text == event.summary
    after = run.measured[call + 1]
    usage = main.usage[after.measure.anchor]
    # the same summary and the same rebuilt attachments as the real context: the reported usage, unchanged
    assert after.measure.last_call == usage.prompt_tokens + usage.output_tokens
