"""Anthropic, LangChain, SWE-agent, Codex, Inspect AI and OpenHands strategies: one test per spec rule
(strategies.md §4, §5, §6, §7, §9.1, §10), properties over the bundled samples and real logs, and differential
checks against langchain-core when it is installed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import REAL_LOGS, sample_paths

import compaction
from compaction.conversation import Conversation, Message, ToolCall, assistant, system, tool, user
from compaction.replay import Replay
from compaction.strategies import registry

FAMILIES = ("anthropic", "langchain", "swe_agent", "codex", "inspect_ai", "openhands")


# ------------------------------------------------------------------------------------------------- builders
def conv(*messages: Message) -> Conversation:
    return Conversation(tuple(messages))


def call(i: int, name: str = "read_file", **args) -> ToolCall:
    return ToolCall(f"c{i}", name, args or {"path": f"src/module_{i}.py"})


def body(i: int, lines: int = 40) -> str:
    return "\n".join(f"line {k} of output {i}: value = compute({k}, {i})" for k in range(lines))


def agent_run(steps: int, names: Sequence[str] = ("read_file",), lines: int = 40, task: str = "Fix the bug in the parser.",
              final: bool = True) -> Conversation:
    """system, task, then ``steps`` tool-calling steps (one call + result each), then a final answer."""
    msgs: list[Message] = [system("You are a coding agent."), user(task)]
    for i in range(steps):
        c = call(i, names[i % len(names)])
        msgs += [assistant(f"Step {i}: looking at module {i}.", [c]), tool(c, body(i, lines))]
    if final:
        msgs.append(assistant("Done: the parser handles empty input now."))
    return conv(*msgs)


def run(c: Conversation, name: str, params: dict | None = None, **kw) -> Replay:
    return compaction.replay(c, name, params or {}, **kw)


def last_context(r: Replay):
    return r.context_at(len(r.steps) - 1)


def texts(items) -> list[str]:
    return [i.message.tool_result.text if i.message.tool_result is not None else i.message.text for i in items]


def result_fates(r: Replay, k: int) -> dict[str, str]:
    """call id -> fate of its tool result in call ``k``'s context."""
    return {i.message.tool_result.call_id: i.fate for i in r.context_at(k) if i.message.tool_result is not None}


# ================================================================================================ Anthropic
class TestAnthropicClearToolUses:
    NAME = "anthropic.clear_tool_uses_20250919"

    def test_not_triggered_at_or_below_trigger(self):
        c = agent_run(6)
        r0 = run(c, self.NAME)
        final_tokens = r0.steps[-1].tokens_before
        r = run(c, self.NAME, {"trigger_value": final_tokens})  # "exceeds": equal is not enough
        assert not r.steps[-1].triggered and not r.steps[-1].compacted
        r = run(c, self.NAME, {"trigger_value": final_tokens - 1})
        assert r.steps[-1].triggered and r.steps[-1].compacted

    def test_keeps_last_three_tool_uses_and_clears_older_with_stand_in(self):
        from compaction.strategies.anthropic import CLEARED_RESULT_STAND_IN

        r = run(agent_run(6), self.NAME, {"trigger_value": 100})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates == {"c0": "pruned", "c1": "pruned", "c2": "pruned", "c3": "kept", "c4": "kept", "c5": "kept"}
        cleared = [i for i in last_context(r) if i.fate == "pruned"]
        assert {i.message.tool_result.text for i in cleared} == {CLEARED_RESULT_STAND_IN}
        assert "stand-in" in CLEARED_RESULT_STAND_IN

    def test_clear_at_least_gate_skips_the_whole_edit(self):
        c = agent_run(6)
        applied = run(c, self.NAME, {"trigger_value": 100})
        freed = applied.steps[-1].tokens_before - applied.steps[-1].tokens_sent
        gated = run(c, self.NAME, {"trigger_value": 100, "clear_at_least": freed + 1})
        last = gated.steps[-1]
        assert last.triggered and not last.compacted and last.tokens_sent == last.tokens_before
        assert "not applied" in last.note
        exact = run(c, self.NAME, {"trigger_value": 100, "clear_at_least": freed})
        assert exact.steps[-1].compacted and exact.steps[-1].tokens_sent == applied.steps[-1].tokens_sent

    def test_keep_counts_excluded_tools_and_excluded_results_stay(self):
        c = agent_run(6, names=("read_file", "grep"))  # c1, c3, c5 are grep
        r = run(c, self.NAME, {"trigger_value": 100, "exclude_tools": "grep"})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates == {"c0": "pruned", "c1": "kept", "c2": "pruned", "c3": "kept", "c4": "kept", "c5": "kept"}

    def test_clear_tool_inputs_list_only_clears_named_tools(self):
        c = agent_run(6, names=("read_file", "grep"))
        r = run(c, self.NAME, {"trigger_value": 100, "clear_tool_inputs": "grep"})
        calls = {tc.id: tc for i in last_context(r) for tc in i.message.tool_calls}
        assert calls["c1"].arguments == {} and calls["c0"].arguments != {} and calls["c3"].arguments != {}
        r = run(c, self.NAME, {"trigger_value": 100, "clear_tool_inputs": "true"})
        calls = {tc.id: tc for i in last_context(r) for tc in i.message.tool_calls}
        assert [k for k, v in calls.items() if v.arguments == {}] == ["c0", "c1", "c2"]

    def test_tool_uses_trigger(self):
        c = agent_run(6)
        r = run(c, self.NAME, {"trigger_type": "tool_uses", "trigger_value": 4})
        assert [s.triggered for s in r.steps] == [False] * 5 + [True, True]

    def test_projection_recomputed_from_raw_history(self):
        r = run(agent_run(8), self.NAME, {"trigger_value": 100})
        assert r.persistence == "project"
        for k in range(len(r.steps)):
            results = [i for i in r.context_at(k) if i.message.tool_result is not None]
            assert [i.fate for i in results] == ["pruned"] * max(len(results) - 3, 0) + ["kept"] * min(len(results), 3)

    def test_invalid_trigger_type(self):
        with pytest.raises(ValueError, match="trigger"):
            run(agent_run(2), self.NAME, {"trigger_type": "turns"})


class TestAnthropicClearThinking:
    NAME = "anthropic.clear_thinking_20251015"

    def _thinking_run(self) -> Conversation:
        from dataclasses import replace

        msgs = list(agent_run(4).messages)
        return conv(*(replace(m, reasoning=(f"thinking about step {i} " * 20,)) if m.role == "assistant" else m
                      for i, m in enumerate(msgs)))

    def test_keeps_thinking_of_last_n_turns_only(self):
        r = run(self._thinking_run(), self.NAME, {"keep": "2"}, counter="maf-dotnet")
        ctx = last_context(r)
        with_thinking = [i.index for i in ctx if i.message.role == "assistant" and i.message.reasoning]
        assistants = [i.index for i in ctx if i.message.role == "assistant"]
        assert with_thinking == assistants[-2:]
        assert all(i.fate == "pruned" for i in ctx if i.index in assistants[:-2])
        assert r.steps[-1].tokens_sent < r.steps[-1].tokens_before

    def test_all_keeps_everything_and_bad_keep_is_rejected(self):
        r = run(self._thinking_run(), self.NAME, {"keep": "all"})
        assert not any(s.compacted for s in r.steps)
        with pytest.raises(ValueError, match="thinking turns or 'all'"):
            run(self._thinking_run(), self.NAME, {"keep": "some"})


def big_run(steps: int = 40, lines: int = 200) -> Conversation:
    """A run that passes 50,000 approx tokens (about 2,300 tokens per result)."""
    return agent_run(steps, lines=lines)


class TestAnthropicCompaction:
    NAME = "anthropic.compact_20260112"

    def test_trigger_below_minimum_is_rejected(self):
        with pytest.raises(ValueError, match="at least 50,000"):
            run(agent_run(2), self.NAME, {"trigger": 49_999})

    def test_compaction_block_replaces_everything_before_it(self):
        r = run(big_run(), self.NAME, {"trigger": 50_000})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert [i.fate for i in ctx] == ["kept", "inserted"]  # system prompt + the compaction block
        assert ctx[1].message.role == "assistant" and ctx[1].message.meta["anthropic_block"] == "compaction"
        assert r.steps[k].model_calls and r.steps[k].tokens_sent < r.steps[k].tokens_before
        assert set(r.fates_at(k).values()) == {"collapsed"}
        later = r.context_at(k + 1)
        assert later[1].fate == "inserted" and later[2].index == r.steps[k].message_index  # persisted

    def test_pause_after_compaction_changes_only_the_note(self):
        a = run(big_run(), self.NAME, {"trigger": 50_000})
        b = run(big_run(), self.NAME, {"trigger": 50_000, "pause_after_compaction": True})
        assert [s.tokens_sent for s in a.steps] == [s.tokens_sent for s in b.steps]
        assert any("paused" in s.note for s in b.steps) and not any("paused" in s.note for s in a.steps)


# ================================================================================================ SWE-agent
class TestSweAgentMasking:
    NAME = "swe_agent.last_n_observations"

    def test_masks_all_but_first_and_last_n_observations(self):
        r = run(agent_run(8), self.NAME, {"n": 3})
        ctx = last_context(r)
        fates = result_fates(r, len(r.steps) - 1)
        # the task (first user message) is the first observation; 8 results + task = 9 observations
        assert [fates[f"c{i}"] for i in range(8)] == ["pruned"] * 5 + ["kept"] * 3
        assert ctx[1].fate == "kept"
        masked = next(i for i in ctx if i.fate == "pruned")
        assert masked.message.tool_result.text == "Old environment output: (40 lines omitted)"

    def test_first_observation_never_elided(self):
        labelled = conv(
            system("SWE-agent system prompt"),
            user("<issue>the parser crashes</issue>\nline 2", message_type="observation"),
            *[m for i in range(6) for m in (assistant(f"action {i}", message_type="action"),
                                          user(f"output {i}\nmore", message_type="observation"))],
            assistant("submit"),
        )
        r = run(labelled, self.NAME, {"n": 1})
        ctx = last_context(r)
        assert ctx[1].fate == "kept" and "<issue>" in ctx[1].message.text
        observations = [i for i in ctx if i.message.role == "user"]
        assert [i.fate for i in observations] == ["kept"] + ["pruned"] * 5 + ["kept"]
        assert observations[1].message.text == "Old environment output: (2 lines omitted)"

    def test_polling_moves_the_mask_in_steps(self):
        r = run(agent_run(12), self.NAME, {"n": 2, "polling": 4})
        masked = [sum(1 for f in r.fates_at(k).values() if f == "pruned") for k in range(len(r.steps))]
        # k observations before call k (+ the task): last_removed = (obs // 4) * 4 - 2, minus the first
        expected = [max(0, max(0, ((k + 1) // 4) * 4 - 2) - 1) for k in range(len(r.steps))]
        assert masked == expected
        assert set(masked) == {0, 1, 5, 9}

    def test_tags_override_age(self):
        c = agent_run(6)
        msgs = list(c.messages)
        msgs[3] = msgs[3].with_meta(tags=["keep_output"])  # result c0 (old)
        msgs[13] = msgs[13].with_meta(tags=["remove_output"])  # result c5 (newest)
        r = run(conv(*msgs), self.NAME, {"n": 2})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates["c0"] == "kept" and fates["c5"] == "pruned" and fates["c1"] == "pruned"

    def test_n_must_be_positive(self):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            from compaction.strategies.swe_agent import LastNObservations

            LastNObservations(0)


class TestSweAgentPaperSetups:
    def test_llm_summary_every_21_turns_keeps_last_10(self):
        r = run(agent_run(30), "swe_agent.llm_summary")
        compacted = [s.step for s in r.steps if s.compacted]
        assert compacted == [21]  # 21 turns in the history before call 21; then 10 kept + 11 new at call 32
        ctx = r.context_at(21)
        assert [i.fate for i in ctx[:3]] == ["kept", "kept", "inserted"]
        assistants = [i for i in ctx if i.message.role == "assistant"]
        assert len(assistants) == 10 and r.steps[21].model_calls

    def test_llm_summary_validation(self):
        with pytest.raises(ValueError, match="must exceed keep_last_m_turns"):
            run(agent_run(2), "swe_agent.llm_summary", {"summarize_every_n_turns": 5, "keep_last_m_turns": 5})

    def test_hybrid_masks_on_top_of_the_summary(self):
        r = run(agent_run(30), "swe_agent.hybrid", {"n": 3})
        ctx = r.context_at(25)
        kinds = [i.fate for i in ctx]
        assert "inserted" in kinds and "pruned" in kinds
        results = [i for i in ctx if i.message.tool_result is not None]
        assert [i.fate for i in results][-3:] == ["kept"] * 3


# ================================================================================================ LangChain
class TestLangchainTriggerEncoding:
    def test_parse_clauses(self):
        from compaction.strategies.langchain import ContextSize, parse_trigger

        assert parse_trigger("") == ()
        assert parse_trigger("tokens>=4000") == ({"tokens": ContextSize("tokens", 4000)},)
        parsed = parse_trigger("messages>=50&tokens>=100 | fraction>=0.8")
        assert [sorted(c) for c in parsed] == [["messages", "tokens"], ["fraction"]]

    @pytest.mark.parametrize("text,message", [
        ("fraction>=1.5", "Fractional trigger values must be between 0 and 1, got 1.5."),
        ("tokens>=0", "trigger thresholds must be greater than 0, got 0."),
        ("turns>=3", "Unsupported context size type turns for trigger."),
        ("messages>=2.5", "whole number"),
        ("tokens", "expected"),
    ])
    def test_validation(self, text, message):
        from compaction.strategies.langchain import parse_trigger

        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
            parse_trigger(text)

    def test_keep_validation(self):
        with pytest.raises(ValueError, match="Fractional keep values"):
            run(agent_run(2), "langchain.summarization", {"keep": "fraction=0"})


class TestLangchainSummarization:
    NAME = "langchain.summarization"

    def test_no_trigger_never_summarizes(self):
        r = run(agent_run(30), self.NAME)
        assert not any(s.triggered for s in r.steps)

    def test_messages_trigger_and_summary_message(self):
        from compaction.strategies.langchain import SUMMARY_PREFIX

        r = run(agent_run(12), self.NAME, {"trigger": "messages>=20", "keep": "messages=6",
                                           "trim_tokens_to_summarize": 0})
        k = next(s.step for s in r.steps if s.compacted)
        # state = messages without the system prompt: 1 task + 2 per step; >= 20 first holds before call 10
        assert k == 10
        ctx = r.context_at(k)
        assert ctx[0].message.role == "system" and ctx[1].fate == "inserted"
        summary = ctx[1].message
        assert summary.role == "user" and summary.text.startswith(SUMMARY_PREFIX)
        assert summary.meta["lc_source"] == "summarization"
        assert len(ctx) == 2 + 6

    def test_safe_cutoff_moves_back_to_the_calling_ai_message(self):
        from compaction.strategies.langchain import safe_cutoff

        a = assistant("two calls", [call(1), call(2)])
        msgs = [user("task"), a, tool(call(1), "r1"), tool(call(2), "r2"), assistant("done")]
        assert safe_cutoff(msgs, 3) == 1 and safe_cutoff(msgs, 2) == 1 and safe_cutoff(msgs, 4) == 4
        orphan = [user("task"), tool(call(9), "r9"), tool(call(8), "r8"), assistant("x")]
        assert safe_cutoff(orphan, 1) == 3  # no AI message made the calls: forward past the tool messages

    def test_cutoff_never_splits_pairs_on_real_keep(self):
        r = run(agent_run(12), self.NAME, {"trigger": "messages>=20", "keep": "messages=5"})
        for k in range(len(r.steps)):
            assert_pairs_intact(r.context_at(k))

    def test_trim_marks_unseen_originals(self):
        msgs = list(agent_run(12, final=False).messages)
        for at in (20, 14, 8):  # follow-up requests from the user between steps
            msgs.insert(at, user(f"Also check the case at position {at}."))
        r = run(conv(*msgs, assistant("done")), self.NAME, {"trigger": "messages>=20", "keep": "messages=6",
                                           "trim_tokens_to_summarize": 1500})
        k = next(s.step for s in r.steps if s.compacted)
        snap = next(e for e in r.entries_at(k) if e.inserted)
        unseen = set(snap.info["unseen"])
        assert unseen and unseen < set(snap.represents)
        assert 1 in unseen  # the task is oldest: trimmed away first
        assert "never saw" in r.steps[k].note

    def test_trim_without_a_human_message_gives_too_long_text_without_a_model_call(self):
        from compaction.strategies.langchain import SUMMARY_PREFIX, TOO_LONG

        r = run(agent_run(12), self.NAME, {"trigger": "messages>=20", "keep": "messages=6",
                                           "trim_tokens_to_summarize": 400})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert ctx[1].message.text == SUMMARY_PREFIX + TOO_LONG and not r.steps[k].model_calls
        snap = next(e for e in r.entries_at(k) if e.inserted)
        assert set(snap.info["unseen"]) == set(snap.represents)

    def test_earlier_summary_is_resummarized(self):
        r = run(agent_run(30), self.NAME, {"trigger": "messages>=20", "keep": "messages=6"})
        compacted = [s.step for s in r.steps if s.compacted]
        assert len(compacted) >= 2
        later = [e for e in r.entries_at(compacted[1]) if e.inserted]
        assert len(later) == 1 and 1 in later[0].represents  # covers the first summary's originals

    def test_tokens_keep_binary_search(self):
        r = run(agent_run(12), self.NAME, {"trigger": "tokens>=3000", "keep": "tokens=1000"})
        k = next(s.step for s in r.steps if s.compacted)
        kept = [i.message for i in r.context_at(k) if i.fate == "kept" and i.message.role != "system"]
        from compaction.tokens import make_counter

        assert make_counter("langchain").count(kept) <= 1000 or kept[0].role == "assistant"

    def test_langchain_counter_is_the_default(self):
        c = agent_run(6)
        r = run(c, self.NAME, {"trigger": "tokens>=100"})
        from compaction.tokens import make_counter

        assert r.steps[0].tokens_before == make_counter("langchain").count(c.messages[:2])
        r2 = run(c, self.NAME, {"trigger": "tokens>=100"}, counter="maf-dotnet")
        assert r2.steps[0].tokens_before == make_counter("maf-dotnet").count(c.messages[:2])


def assert_pairs_intact(items) -> None:
    """Every tool result sent has its call sent before it, and every call sent has its result (if the log has it)."""
    calls_seen: set[str] = set()
    results_seen: set[str] = set()
    for i in items:
        for c in i.message.tool_calls:
            calls_seen.add(c.id)
        if i.message.tool_result is not None:
            assert i.message.tool_result.call_id in calls_seen, f"result {i.message.tool_result.call_id} without call"
            results_seen.add(i.message.tool_result.call_id)
    answered_later = calls_seen - results_seen
    last_calls = {c.id for i in items[-1:] for c in i.message.tool_calls}
    assert answered_later <= last_calls, f"calls without results: {sorted(answered_later - last_calls)}"


class TestLangchainClearToolUses:
    NAME = "langchain.context_editing"

    def test_strict_trigger_and_placeholder(self):
        c = agent_run(6)
        r0 = run(c, self.NAME, {"trigger": 10**6})
        final = r0.steps[-1].tokens_before - 0
        system_tokens = compaction.make_counter("langchain").count(c.messages[:1])
        state_tokens = final - system_tokens
        r = run(c, self.NAME, {"trigger": state_tokens})
        assert not r.steps[-1].triggered
        r = run(c, self.NAME, {"trigger": state_tokens - 1})
        assert r.steps[-1].compacted
        cleared = [i for i in last_context(r) if i.fate == "pruned"]
        assert [i.message.tool_result.text for i in cleared] == ["[cleared]"] * 3
        assert cleared[0].message.meta["context_editing"] == {"cleared": True, "strategy": "clear_tool_uses"}

    def test_clear_at_least_zero_clears_all_candidates_and_positive_stops_early(self):
        c = agent_run(8)
        r = run(c, self.NAME, {"trigger": 100})
        assert list(result_fates(r, len(r.steps) - 1).values()).count("pruned") == 5
        r = run(c, self.NAME, {"trigger": 100, "clear_at_least": 1})
        assert list(result_fates(r, len(r.steps) - 1).values()).count("pruned") == 1
        fates = result_fates(r, len(r.steps) - 1)
        assert fates["c0"] == "pruned"  # oldest first

    def test_result_separated_from_its_call_by_another_ai_message_is_never_cleared(self):
        a = assistant("calling", [call(99)])
        msgs = [system("s"), user("task"), a, assistant("an interleaved AI message"), tool(call(99), body(99)),
                *agent_run(5, task="x").messages[2:]]
        r = run(conv(*msgs), self.NAME, {"trigger": 100, "keep": 0})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates["c99"] == "kept" and fates["c0"] == "pruned"

    def test_keep_counts_excluded_tools(self):
        c = agent_run(6, names=("read_file", "grep"))
        r = run(c, self.NAME, {"trigger": 100, "exclude_tools": "grep"})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates == {"c0": "pruned", "c1": "kept", "c2": "pruned", "c3": "kept", "c4": "kept", "c5": "kept"}

    def test_clear_tool_inputs_empties_args(self):
        r = run(agent_run(5), self.NAME, {"trigger": 100, "clear_tool_inputs": True})
        ctx = last_context(r)
        a = next(i for i in ctx if any(tc.id == "c0" for tc in i.message.tool_calls))
        assert a.fate == "pruned" and a.message.tool_calls[0].arguments == {}
        assert a.message.meta["context_editing"]["cleared_tool_inputs"] == ["c0"]


# ------------------------------------------------------------------------------------------------ differential
def _plain_logs() -> list[Path]:
    plain = REAL_LOGS / "openai-plain"
    return sorted(plain.glob("*.json")) if plain.is_dir() else []


def _lc_messages(path: Path):
    from langchain_core.messages.utils import convert_to_messages

    return convert_to_messages(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", _plain_logs(), ids=lambda p: p.name)
def test_count_tokens_approximately_matches_langchain_core(path):
    pytest.importorskip("langchain_core")
    from langchain_core.messages.utils import count_tokens_approximately

    c = compaction.load(path)
    lc = _lc_messages(path)
    counter = compaction.make_counter("langchain")
    assert counter.count(c.messages) == count_tokens_approximately(lc)
    for ours, theirs in zip(c.messages, lc, strict=True):
        assert counter.count([ours]) == count_tokens_approximately([theirs])


@pytest.mark.parametrize("path", _plain_logs(), ids=lambda p: p.name)
@pytest.mark.parametrize("settings", [{"keep": 3}, {"keep": 0, "clear_at_least": 1500}, {"keep": 2, "clear_tool_inputs": True}])
def test_clear_tool_uses_matches_langchain(path, settings):
    pytest.importorskip("langchain")
    from langchain.agents.middleware.context_editing import ClearToolUsesEdit
    from langchain_core.messages import ToolMessage
    from langchain_core.messages.utils import count_tokens_approximately

    c = compaction.load(path)
    head = 1 if c.messages[0].role == "system" else 0
    r0 = run(c, "langchain.context_editing", {"trigger": 10**9})
    last_call = r0.steps[-1].message_index  # the last call sent messages[:last_call]
    state_lc = _lc_messages(path)[head:last_call]
    trigger = count_tokens_approximately(state_lc) // 2
    theirs = list(state_lc)
    ClearToolUsesEdit(trigger=trigger, **settings).apply(theirs, count_tokens=count_tokens_approximately)
    r = run(c, "langchain.context_editing", {"trigger": trigger, **settings})
    ours = [i.message for i in last_context(r)][head:]
    assert len(ours) == len(theirs)
    assert sum(isinstance(t, ToolMessage) and t.content == "[cleared]" for t in theirs) > 0
    for mine, their in zip(ours, theirs, strict=True):
        if isinstance(their, ToolMessage):
            assert mine.tool_result.text == their.content
        for mc, tc in zip(mine.tool_calls, getattr(their, "tool_calls", []), strict=True):
            assert dict(mc.arguments) == tc["args"]


# ================================================================================================ properties
def _property_logs() -> list[Path]:
    return [*sample_paths("*.openai.json"), *_plain_logs()]


PROPERTY_LOGS = _property_logs()
_LOADED: dict[Path, Conversation] = {}


def _load(path: Path) -> Conversation:
    if path not in _LOADED:
        _LOADED[path] = compaction.load(path)
    return _LOADED[path]


def _our_strategies() -> list[str]:
    return sorted(n for n, info in registry().items() if info.family in FAMILIES)


#: settings that make each strategy act on logs of a few tens of thousands of tokens
ACTIVE = {
    "anthropic.clear_tool_uses_20250919": {"trigger_value": 5000},
    "anthropic.compact_20260112": {"trigger": 50_000},
    "langchain.summarization": {"trigger": "tokens>=6000", "keep": "messages=10"},
    "langchain.context_editing": {"trigger": 5000},
}
#: strategies that replace old observations by a fixed text whatever their size: a tiny observation can grow
MASKING = {"swe_agent.last_n_observations", "swe_agent.hybrid", "openhands.observation_masking"}
#: strategies that promise every tool call and result they send stay paired
PAIRING = {"anthropic.clear_tool_uses_20250919", "anthropic.clear_thinking_20251015", "anthropic.compact_20260112",
           "langchain.summarization", "langchain.context_editing", "swe_agent.last_n_observations",
           "codex.auto_compact", "inspect_ai.edit", "inspect_ai.trim", "inspect_ai.summary"}


def _replay(path: Path, name: str) -> Replay:
    return compaction.replay(_load(path), name, ACTIVE.get(name, {}), context_window=20_000)


@pytest.mark.parametrize("path", PROPERTY_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("name", _our_strategies())
def test_properties(path, name):
    c = _load(path)
    snapshot = [(m, m.role, m.texts, m.tool_calls, m.tool_result, dict(m.meta)) for m in c.messages]
    r = _replay(path, name)
    # input not mutated
    assert [(m, m.role, m.texts, m.tool_calls, m.tool_result, dict(m.meta)) for m in c.messages] == snapshot
    # deterministic
    assert _replay(path, name).to_json(context_at=len(r.steps) - 1) == r.to_json(context_at=len(r.steps) - 1)
    # compaction never sends more than before (masking may grow observations smaller than its placeholder)
    for s in r.steps:
        if s.compacted and name not in MASKING:
            assert s.tokens_sent <= s.tokens_before, (s.step, s.note)
    if name in PAIRING:
        for k in range(len(r.steps)):
            assert_pairs_intact(r.context_at(k))
    # fates consistent: every non-kept original is reported with one fate
    for k in range(0, len(r.steps), max(1, len(r.steps) // 5)):
        fates = r.fates_at(k)
        sent = {i.index for i in r.context_at(k) if i.index is not None}
        assert all((f == "pruned") == (i in sent) for i, f in fates.items())


@pytest.mark.parametrize("path", [p for p in _plain_logs() if "mini-swe" in p.name or "openhands" in p.name],
                         ids=lambda p: p.name)
def test_masking_reduces_tokens_on_swe_logs(path):
    for name in sorted(MASKING & set(_our_strategies())):
        r = _replay(path, name)
        assert all(s.tokens_sent <= s.tokens_before for s in r.steps if s.compacted), name


def test_registration_metadata():
    for name in _our_strategies():
        info = registry()[name]
        assert info.docs_url.startswith("https://") and info.summary
        for p in info.params:
            assert p.help and p.coerce(p.default) == p.default or p.type == "str_list"
        assert info.policy == "none"


@pytest.mark.parametrize("path", _plain_logs(), ids=lambda p: p.name)
@pytest.mark.parametrize("budget", [300, 1500, 4000, 12000])
def test_trim_last_matches_langchain_trim_messages(path, budget):
    pytest.importorskip("langchain_core")
    from langchain_core.messages.utils import count_tokens_approximately, trim_messages

    from compaction.strategies.langchain import trim_last

    c = compaction.load(path)
    head = 1 if c.messages[0].role == "system" else 0
    prefix = c.messages[head: head + 40]
    counter = compaction.make_counter("langchain")
    positions, partial = trim_last(prefix, budget, counter.count)
    theirs = trim_messages(_lc_messages(path)[head: head + 40], max_tokens=budget,
                           token_counter=count_tokens_approximately, strategy="last", start_on="human",
                           allow_partial=True, include_system=True)
    assert len(positions) == len(theirs)
    for pos, their in zip(positions, theirs, strict=True):
        mine = partial.get(pos, prefix[pos])
        mine_text = mine.tool_result.text if mine.tool_result is not None else mine.text
        assert mine_text == their.content
