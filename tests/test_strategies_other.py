"""Anthropic, LangChain, SWE-agent, Codex, Inspect AI and OpenHands strategies: one test per spec rule
(docs/spec/frameworks.md §4, §5, §6, §7, §9.1, §10) and properties over the bundled samples and real logs. The
LangChain differential tests (against the installed langchain) are in test_langchain_differential.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
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
        with pytest.raises(ValueError, match="'trigger': expected a value from 50,000 to"):
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


    def test_unlabelled_text_action_log_treats_user_turns_as_observations(self):
        c = conv(system("s"), user("task"), *[m for i in range(5) for m in (assistant(f"```\nls {i}\n```"),
                                                                         user(f"out {i}\nline"))], assistant("x"))
        r = run(c, self.NAME, {"n": 2})
        users = [i for i in last_context(r) if i.message.role == "user"]
        assert [i.fate for i in users] == ["kept", "pruned", "pruned", "pruned", "kept", "kept"]

    def test_real_swe_agent_trajectories(self):
        from conftest import real_log

        labelled = compaction.load(real_log(
            "swe-agent/SWE-agent__demonstrations__function_calling_replace_from_source__marshmallow-1867.traj"))
        r = run(labelled, self.NAME, {"n": 3})
        ctx = last_context(r)
        observations = [i for i in ctx if i.message.meta.get("message_type") == "observation"]
        assert observations[0].fate == "kept" and [i.fate for i in observations[-3:]] == ["kept"] * 3
        assert all(i.fate == "pruned" for i in observations[1:-3])
        text_actions = compaction.load(real_log("swe-agent/SWE-agent__test_data__gpt4__pydicom__pydicom-1458.traj"))
        r = run(text_actions, self.NAME, {"n": 3})
        ctx = last_context(r)
        demo = next(i for i in ctx if i.message.meta.get("is_demo"))
        assert demo.fate == "kept"
        masked = [i for i in ctx if i.fate == "pruned"]  # text actions are read as tool calls: results are masked
        assert masked and all(i.message.role == "tool" and i.message.tool_result.text.startswith(
            "Old environment output: (") for i in masked)
        assert [i.fate for i in ctx if i.message.role == "tool"][-3:] == ["kept"] * 3


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
        from compaction.strategies.langchain import ContextSize
        from compaction.strategies.langchain import parse_trigger

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
        from compaction.strategies.langchain import SUMMARY_PREFIX
        from compaction.strategies.langchain import TOO_LONG

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


    def test_failed_summaries_skip_then_stop_the_run(self, monkeypatch, tmp_path):
        from compaction.summarizers import GATE_ENV

        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))  # no cached summaries
        monkeypatch.delenv(GATE_ENV, raising=False)  # ungated (running the app gates the worker for good)
        params = {"trigger": "messages>=10", "keep": "messages=4", "summarizer": "openai-compatible",
                  "summarizer_model": "test-model-without-cache"}
        with pytest.raises(RuntimeError, match="SummarizationFailedError after 3"):
            run(agent_run(12), self.NAME, params)
        r = run(agent_run(6), self.NAME, params)  # only two triggered calls: both skipped
        assert [s.note.startswith("summary failed") for s in r.steps if s.triggered] == [True, True]
        assert not any(s.compacted for s in r.steps)
        with pytest.raises(RuntimeError, match="SummarizationFailedError after 1"):
            run(agent_run(12), self.NAME, {**params, "hard_token_ceiling": 10})


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

    def test_already_cleared_results_are_skipped_and_edits_are_a_projection(self):
        msgs = list(agent_run(6).messages)
        msgs[3] = msgs[3].with_meta(context_editing={"cleared": True, "strategy": "clear_tool_uses"})
        r = run(conv(*msgs), self.NAME, {"trigger": 100})
        assert r.persistence == "project"
        fates = result_fates(r, len(r.steps) - 1)
        assert fates["c0"] == "kept" and fates["c1"] == "pruned"
        assert r.steps[-1].note.startswith("cleared 2 tool results")

    def test_clear_tool_inputs_empties_args(self):
        r = run(agent_run(5), self.NAME, {"trigger": 100, "clear_tool_inputs": True})
        ctx = last_context(r)
        a = next(i for i in ctx if any(tc.id == "c0" for tc in i.message.tool_calls))
        assert a.fate == "pruned" and a.message.tool_calls[0].arguments == {}
        assert a.message.meta["context_editing"]["cleared_tool_inputs"] == ["c0"]


# ================================================================================================ Codex
class TestCodexAutoCompact:
    NAME = "codex.auto_compact"

    def test_trigger_at_90_percent_of_the_window_or_a_lower_limit(self):
        c = agent_run(10)
        r = run(c, self.NAME, context_window=4_000)
        k = next(s.step for s in r.steps if s.compacted)
        assert r.steps[k].tokens_before >= 3_600 and r.steps[k - 1].tokens_before < 3_600
        assert r.lines == {"trigger": 3_600}
        lower = run(c, self.NAME, {"auto_compact_token_limit": 3_000}, context_window=4_000)
        assert lower.lines == {"trigger": 3_000}
        assert next(s.step for s in lower.steps if s.compacted) < k
        higher = run(c, self.NAME, {"auto_compact_token_limit": 50_000}, context_window=4_000)
        assert higher.lines == {"trigger": 3_600}  # a configured limit can only lower it

    def test_rebuilt_history_layout(self):
        from compaction.strategies.codex import SUMMARY_PREFIX

        msgs = list(agent_run(10, final=False).messages)
        msgs.insert(1, user("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"))
        msgs.insert(8, user("Please also keep the public API unchanged."))
        r = run(conv(*msgs, assistant("done")), self.NAME, context_window=4_000)
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert [(i.fate, i.inserted_kind) for i in ctx] == [
            ("kept", None), ("kept", None), ("inserted", "reinserted"), ("inserted", "reinserted"),
            ("inserted", "summary")]
        assert [i.message.text for i in ctx[2:4]] == ["Fix the bug in the parser.",
                                                    "Please also keep the public API unchanged."]
        assert ctx[4].message.role == "user" and ctx[4].message.text.startswith(SUMMARY_PREFIX + "\n")
        assert not any(i.message.tool_calls or i.message.tool_result for i in ctx)
        fates = r.fates_at(k)
        assert fates[2] == "collapsed" and all(f == "collapsed" for f in fates.values())

    def test_first_misfit_user_message_is_truncated_with_marker(self):
        long_request = "Refactor the tokenizer. " + "Details of the grammar follow. " * 4000  # ~30,000 tokens
        msgs = [system("codex"), user(long_request), assistant("Understood."), user("Now run the tests."),
                *agent_run(8, task="x").messages[2:]]
        r = run(conv(*msgs), self.NAME, context_window=36_000)
        k = next(s.step for s in r.steps if s.compacted)
        reinserted = [i for i in r.context_at(k) if i.inserted_kind == "reinserted"]
        assert len(reinserted) == 2 and reinserted[1].message.text == "Now run the tests."
        cut = reinserted[0].message.text
        assert "tokens truncated…" in cut and cut.startswith("Refactor the tokenizer.")
        from compaction.strategies.codex import approx_tokens

        head, tail = cut.split("…")[0], cut.split("…")[-1]
        assert len((head + tail).encode()) <= (20_000 - approx_tokens("Now run the tests.")) * 4

    def test_truncate_to_tokens_marker(self):
        from compaction.strategies.codex import truncate_to_tokens

        assert truncate_to_tokens("short", 10) == "short"
        out = truncate_to_tokens("a" * 100, 10)
        assert out == "a" * 20 + "…15 tokens truncated…" + "a" * 20

    def test_overflowing_compaction_request_drops_oldest_items_unseen(self):
        msgs = list(agent_run(6, final=False).messages)
        big = call(99)
        msgs += [assistant("reading the whole log", [big]), tool(big, body(99, lines=600)), assistant("done")]
        r = run(conv(*msgs), self.NAME, context_window=8_000)
        k = next(s.step for s in r.steps if s.compacted)
        assert r.steps[k].tokens_before > 8_000 and "Trimmed" in r.steps[k].note
        summary = next(e for e in r.entries_at(k) if e.inserted == "summary")
        assert summary.info["unseen"][:2] == [1, 2]  # the oldest items (the task first) never reached the summarizer

    def test_previous_summary_is_not_reselected(self):
        r = run(agent_run(30), self.NAME, context_window=4_000)
        compacted = [s.step for s in r.steps if s.compacted]
        assert len(compacted) >= 2
        ctx = r.context_at(compacted[1])
        assert [i.inserted_kind for i in ctx if i.fate == "inserted"] == ["reinserted", "summary"]


def test_codex_real_rollout_keeps_environment_context_as_initial_context():
    from conftest import REAL_LOGS

    paths = sorted((REAL_LOGS / "codex-cli").glob("*.jsonl")) if (REAL_LOGS / "codex-cli").is_dir() else []
    if not paths:
        pytest.skip("codex-cli real log not available")
    c = compaction.load(paths[0])
    r = run(c, "codex.auto_compact", context_window=10_000)
    k = next(s.step for s in r.steps if s.compacted)
    ctx = r.context_at(k)
    assert ctx[0].fate == "kept" and ctx[0].message.text.startswith("<environment_context>")
    assert [i.inserted_kind for i in ctx[1:]] == ["reinserted", "summary"]
    assert ctx[1].represents == (1,)


# ================================================================================================ Inspect AI
class TestInspect:
    def test_threshold_fraction_or_tokens(self):
        from compaction.strategies.inspect_ai import threshold_tokens

        assert threshold_tokens(0.9, 200_000) == 180_000 and threshold_tokens(1.0, 1000) == 1000
        assert threshold_tokens(5000, 200_000) == 5000
        with pytest.raises(ValueError, match="threshold"):
            threshold_tokens(0, 1000)

    def test_summary_wrapper_text(self):
        r = run(agent_run(12), "inspect_ai.summary", {"threshold": 3000})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert [i.fate for i in ctx] == ["kept", "kept", "inserted"]  # system + input + summary
        text = ctx[2].message.text
        assert text.startswith("[CONTEXT COMPACTION SUMMARY]\n\nThe following is a summary of work completed on "
                               "this task so far:\n\n<previous_summary>\n")
        assert text.endswith("\n</previous_summary>\n\nPlease continue working on this task from where you left off.")
        assert ctx[2].message.role == "user" and ctx[2].message.meta == {"summary": True}

    def test_summary_extracts_summary_tags(self):
        from compaction.strategies.inspect_ai import extract_summary

        assert extract_summary("analysis...\n<summary>\nthe body\n</summary>") == "the body"
        assert extract_summary("no tags") == "no tags"

    def test_edit_clears_all_but_last_tool_uses(self):
        r = run(agent_run(6), "inspect_ai.edit", {"threshold": 1000})
        fates = result_fates(r, len(r.steps) - 1)
        assert fates == {"c0": "pruned", "c1": "pruned", "c2": "pruned", "c3": "kept", "c4": "kept", "c5": "kept"}
        cleared = [i for i in last_context(r) if i.fate == "pruned"]
        assert {i.message.tool_result.text for i in cleared} == {"(Tool result removed)"}

    def test_edit_without_tool_inputs_removes_call_and_result(self):
        r = run(agent_run(6), "inspect_ai.edit", {"threshold": 1000, "keep_tool_inputs": False, "keep_tool_uses": 2})
        ctx = last_context(r)
        assert sum(1 for i in ctx if i.message.tool_result is not None) == 2
        first = next(i for i in ctx if i.index == 2)
        assert first.fate == "pruned" and not first.message.tool_calls
        assert first.message.texts[-1] == "[Tool call: read_file (parameters and results removed from history)]"
        assert "dropped" in set(r.fates_at(len(r.steps) - 1).values())
        assert_pairs_intact(ctx)

    def test_trim_preserves_input_and_share_of_the_rest(self):
        r = run(agent_run(10), "inspect_ai.trim", {"threshold": 2500, "preserve": 0.5})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert [i.index for i in ctx[:2]] == [0, 1]
        assert ctx[-1].message.role != "assistant"
        assert_pairs_intact(ctx)
        with pytest.raises(ValueError, match="preserve"):
            run(agent_run(2), "inspect_ai.trim", {"preserve": 1.5})


class TestInspectMemoryAndThinking:
    def test_memory_tool_content_cleared_from_kept_messages(self):
        from compaction.strategies.inspect_ai import MEMORY_CLEARED

        c = agent_run(6, names=("memory", "read_file"))
        r = run(c, "inspect_ai.edit", {"threshold": 1000, "keep_tool_uses": 6})
        memory = [i for i in last_context(r) if i.message.tool_result is not None
                  and i.message.tool_result.tool_name == "memory"]
        assert memory and all(i.message.tool_result.text == MEMORY_CLEARED for i in memory)
        r = run(c, "inspect_ai.edit", {"threshold": 1000, "keep_tool_uses": 6, "memory": False})
        assert not any(s.compacted for s in r.steps)

    def test_edit_keeps_thinking_of_last_assistant_messages(self):
        from dataclasses import replace

        c = conv(*(replace(m, reasoning=("pondering " * 50,)) if m.role == "assistant" else m
                   for m in agent_run(6).messages))
        r = run(c, "inspect_ai.edit", {"threshold": 1000, "keep_thinking_turns": "2", "keep_tool_uses": 10})
        ctx = last_context(r)
        thinking = [bool(i.message.reasoning) for i in ctx if i.message.role == "assistant"]
        assert thinking == [False] * (len(thinking) - 2) + [True, True]


# ================================================================================================ OpenHands
class TestOpenHands:
    def test_masking_window_counts_all_events(self):
        r = run(agent_run(6), "openhands.observation_masking", {"attention_window": 4})
        ctx = last_context(r)
        # 14 events before the final call; the window is the last 4 events, actions included
        masked = [i.index for i in ctx if i.fate == "pruned"]
        assert masked == [3, 5, 7, 9] and all(i.message.tool_result.text == "<MASKED>" for i in ctx if i.fate == "pruned")

    def test_recent_events_overlap_edge(self):
        r = run(agent_run(6), "openhands.recent_events", {"keep_first": 1, "max_events": 10})
        first = r.context_at(0)  # 2 events (< max_events): the first event is sent twice
        assert [(i.index, i.fate) for i in first] == [(0, "kept"), (None, "inserted"), (1, "kept")]
        assert first[1].inserted_kind == "reinserted" and first[1].represents == (0,)
        last = last_context(r)
        # the condenser keeps events 0 and 5-13; event 5 is a tool result whose call (4) was cut, so
        # ConversationMemory leaves it out before sending
        assert [i.index for i in last] == [0, *range(6, 14)]
        assert "unmatched tool message" in r.steps[-1].note

    def test_amortized_forgetting(self):
        r = run(agent_run(12), "openhands.amortized_forgetting", {"max_size": 10, "keep_first": 1})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert len(ctx) == 1 + (10 // 2 - 1) and ctx[0].index == 0
        assert set(r.fates_at(k).values()) == {"dropped"}
        with pytest.raises(ValueError, match="less than half"):
            run(agent_run(2), "openhands.amortized_forgetting", {"max_size": 10, "keep_first": 5})

    def test_llm_summarizing_places_summary_at_keep_first(self):
        r = run(agent_run(30), "openhands.llm_summarizing", {"max_size": 20, "keep_first": 2})
        k = next(s.step for s in r.steps if s.compacted)
        ctx = r.context_at(k)
        assert [i.index for i in ctx[:2]] == [0, 1] and ctx[2].fate == "inserted"
        # head + summary + tail; a tail that starts on a result whose call was forgotten loses that result
        tail = 20 // 2 - 2 - 1
        assert len(ctx) in (2 + 1 + tail, 2 + 1 + tail - 1)
        sent_calls = {c.id for i in ctx for c in i.message.tool_calls}
        assert all(i.message.tool_result.call_id in sent_calls for i in ctx if i.message.tool_result is not None)
        later = [s.step for s in r.steps if s.compacted][1]
        summaries = [e for e in r.entries_at(later) if e.inserted]
        assert len(summaries) == 1 and 2 in summaries[0].represents  # the previous summary folded in

    def test_llm_summarizing_v1_defaults_and_validation(self):
        from compaction.strategies import get_strategy

        assert get_strategy("openhands.llm_summarizing_v1").defaults()["max_size"] == 120
        assert get_strategy("openhands.llm_summarizing_v1").defaults()["keep_first"] == 4
        with pytest.raises(ValueError, match="must be positive"):
            run(agent_run(2), "openhands.llm_summarizing_v1", {"max_size": 10, "keep_first": 4})
        r = run(agent_run(12), "openhands.llm_summarizing_v1", {"max_tokens": 3000, "max_size": 40, "keep_first": 2})
        assert any(s.compacted and "max_tokens" in s.note for s in r.steps)


# ------------------------------------------------------------------------------------------------ differential
def _plain_logs() -> list[Path]:
    plain = REAL_LOGS / "openai-plain"
    return sorted(plain.glob("*.json")) if plain.is_dir() else []


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
#: RecentEventsCondenser's head/tail overlap sends the first events twice while the history is short (quirk kept)
#: LangChain re-summarizes an earlier summary like any human message: when the cut holds only that summary, the new
#: one can be a little longer (the trigger keeps firing while the kept messages alone exceed it)
MAY_GROW = MASKING | {"openhands.recent_events", "langchain.summarization"}
#: strategies that promise every tool call and result they send stay paired
PAIRING = {"anthropic.clear_tool_uses_20250919", "anthropic.clear_thinking_20251015", "anthropic.compact_20260112",
           "langchain.summarization", "langchain.context_editing", "swe_agent.last_n_observations",
           "swe_agent.llm_summary", "swe_agent.hybrid",
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
    # compaction never sends more than before (except the documented growth of MAY_GROW)
    for s in r.steps:
        if s.compacted and name not in MAY_GROW:
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


def test_langchain_never_clears_the_results_of_calls_the_log_gave_no_id():
    """Logs without call ids (text formats, some SDK traces) pair each result with its call by position. LangChain's
    ToolMessage must have a string tool_call_id (``""`` here) and ClearToolUsesEdit matches it against the AI
    message's call ids (None): an id-less result is never cleared, nor its call's inputs; the calls with ids next to
    it are, and nothing fails."""
    from compaction.conversation import Source

    messages: list[Message] = [user("go")]
    for i in range(6):
        calls = [ToolCall(None, "read", {"path": f"f{i}.py"}), ToolCall(f"c{i}", "read", {"path": f"g{i}.py"})]
        messages += [assistant(None, calls), *(tool(c, "x " * 3000) for c in calls)]
    messages.append(assistant("done"))
    conv = Conversation(tuple(messages), (), Source("synthetic"))
    rep = compaction.replay(conv, "langchain.context_editing", context_window=8000,
                            params={"clear_tool_inputs": True, "trigger": 4000})
    last = rep.context_at(len(rep.steps) - 1)
    calls = [c for i in last for c in i.message.tool_calls]
    results = [i.message.tool_result for i in last if i.message.tool_result is not None]
    assert rep.summary()["compactions"] > 0
    assert all(c.arguments for c in calls if c.id is None), "an id-less call had its inputs cleared"
    assert all(r.text != "[cleared]" for r in results if r.call_id is None), "an id-less result was cleared"
    assert any(c.id is not None and c.arguments == {} for c in calls), "no call with an id had its inputs cleared"
