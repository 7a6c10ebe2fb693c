"""``roo_code.condense`` and ``roo_code.sliding_window`` rule by rule (``agents.md §1.5``). Each test names the line
of Roo Code's source it checks: RooCodeInc/Roo-Code cb836567 ``src/core/context-management/index.ts`` (CM),
``src/core/condense/index.ts`` (CO), and the v3.17–v3.42 condense at cf5d42e1^ (CO-old). Roo Code runs only inside
VS Code, so these are golden cases derived from those lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from reported_usage import with_reported_totals

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import tool
from compaction.conversation import user
from compaction.strategies.roo_code import roo_count_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "roo-code"
ENV = "<environment_details>\n# Current Time\nnow {k}\n</environment_details>"


def _turns(n: int, task: str = "<task>\nfix it\n</task>") -> list[Message]:
    messages = [user(task)]
    for k in range(n):
        call = ToolCall(f"toolu_{k}", "read_file", {"path": f"f{k}.py"})
        messages += [assistant(f"step {k}", [call]), tool(call, f"content {k} " + "y" * 200), user(ENV.format(k=k))]
    messages.append(assistant("done"))
    return messages


def _conversation(messages: list[Message], totals: dict[int, int], others: int = 1_000) -> Conversation:
    """``totals``: the reported total of the k-th LLM call (0-based); every other call reports ``others``."""
    return with_reported_totals(messages, totals, "roo-code", 50, others)


def _last_message_tokens(messages: list[Message], call: int) -> int:
    """Roo's count of the user message sent with LLM call ``call`` (its tool results and environment details)."""
    index = [i for i, m in enumerate(messages) if m.role == "assistant"][call]
    start = index
    while start > 0 and messages[start - 1].role != "assistant":
        start -= 1
    return roo_count_tokens(messages[start:index])


def test_allowed_size_is_ninety_percent_less_the_reserved_output() -> None:
    # CM line 26 (TOKEN_BUFFER_PERCENTAGE 0.1), 270 (reserved = maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS = 8192)
    conv = _conversation(_turns(2), {})
    assert compaction.replay(conv, "roo_code.sliding_window").lines == {"trigger": 200_000 * 0.9 - 8_192}
    lines = compaction.replay(conv, "roo_code.sliding_window", {"max_tokens": 16_000}).lines
    assert lines == {"trigger": 200_000 * 0.9 - 16_000}


def test_sliding_window_fires_only_past_the_allowed_size() -> None:
    # CM line 280 (prevContextTokens = last request's tokens in + out + the last message's count), 334 (strictly >)
    messages = _turns(4)
    allowed = 200_000 * 0.9 - 8_192
    last = _last_message_tokens(messages, 3)
    exact = compaction.replay(_conversation(messages, {2: int(allowed) - last}), "roo_code.sliding_window")
    assert not any(s.triggered for s in exact.steps)
    over = compaction.replay(_conversation(messages, {2: int(allowed) - last + 1}), "roo_code.sliding_window")
    assert [s.step for s in over.steps if s.triggered] == [3]


def test_sliding_window_hides_half_the_visible_messages_after_the_first() -> None:
    # CM lines 83-84 (floor((visible - 1) · 0.5), rounded down to even), 96 (from the second visible message), 112-122
    # (the marker, before the first kept message)
    messages = _turns(6)
    rep = compaction.replay(_conversation(messages, {5: 190_000}), "roo_code.sliding_window")
    step = rep.steps[6]
    assert step.compacted
    context = rep.context_at(6)
    # 13 API messages before the call: floor(12 / 2) = 6 hidden: a0 u0 a1 u1 a2 u2 (messages 1-9)
    assert context[0].index == 0
    assert context[1].fate == "inserted"
    assert context[1].message.texts == ("[Sliding window truncation: 6 messages hidden to reduce context]",)
    assert [i.index for i in context[2:]] == list(range(10, 19))
    assert context[2].message.role == "assistant"  # an even count keeps calls with their results
    fates = rep.fates_at(6) if hasattr(rep, "fates_at") else None
    assert fates is None or all(fates[i] == "dropped" for i in range(1, 10))


def test_markers_stay_and_are_not_counted_again() -> None:
    # CM lines 74-79: visible messages exclude earlier markers (and what they hide)
    messages = _turns(10)
    rep = compaction.replay(_conversation(messages, {5: 190_000, 9: 190_000}), "roo_code.sliding_window")
    assert [s.step for s in rep.steps if s.compacted] == [6, 10]
    context = rep.context_at(10)
    markers = [i for i in context if i.fate == "inserted"]
    assert [m.message.text for m in markers] == ["[Sliding window truncation: 6 messages hidden to reduce context]",
                                                 "[Sliding window truncation: 6 messages hidden to reduce context]"]
    # second time: visible = first + 15 kept -> floor(14/2) = 7 -> 6
    assert [i.index for i in context][:3] == [0, None, None]


def test_condense_fires_at_the_percentage_threshold() -> None:
    # CM line 308: 100 · prev / window >= effective threshold (or prev > allowed)
    messages = _turns(4)
    last = _last_message_tokens(messages, 2)
    below = _conversation(messages, {1: 100_000 - last - 1})
    at = _conversation(messages, {1: 100_000 - last})
    params = {"auto_condense_context_percent": 50}
    assert not any(s.triggered for s in compaction.replay(below, "roo_code.condense", params).steps)
    assert [s.step for s in compaction.replay(at, "roo_code.condense", params).steps if s.compacted] == [2]


def test_the_default_threshold_is_the_allowed_size() -> None:
    # ClineProvider's default autoCondenseContextPercent is 100: only prev > allowed condenses
    messages = _turns(4)
    rep = compaction.replay(_conversation(messages, {2: 175_000}), "roo_code.condense")
    assert [s.step for s in rep.steps if s.compacted] == [3]


def test_fresh_start_condense_sends_the_summary_alone() -> None:
    # CO lines 400-446 (the summary's blocks: "## Conversation Summary\n" + summary, the task's <command> blocks in a
    # <system-reminder>, the environment details on automatic triggers), 457-483 (a user message; every earlier
    # message tagged condenseParent: the effective history is the summary)
    messages = _turns(4, task='<task>\nfix it\n</task>\n<command name="review">check style</command>')
    rep = compaction.replay(_conversation(messages, {2: 175_000}), "roo_code.condense")
    context = rep.context_at(3)
    assert len(context) == 1 and context[0].fate == "inserted"
    summary = context[0].message
    assert summary.role == "user"
    assert summary.texts[0].startswith("## Conversation Summary\n")
    assert summary.texts[1] == ('<system-reminder>\n## Active Workflows\nThe following directives must be maintained '
                                'across all future condensings:\n<command name="review">check style</command>\n'
                                '</system-reminder>')
    assert summary.texts[2] == ENV.format(k=2)
    assert set(context[0].represents) == set(range(10))
    assert len(rep.steps[3].model_calls) == 1


def test_condensing_again_after_a_summary_needs_new_messages() -> None:
    # CO line 292: a summary and at most 2 messages since it is "condensed recently": no condense; CM line 334: the
    # sliding window then runs when over the allowed size, and has nothing to hide in [summary, answer]
    messages = _turns(4)
    messages[-1:] = [assistant("thinking aloud"), assistant("done")]  # two answers with no user message between
    rep = compaction.replay(_conversation(messages, {2: 175_000, 3: 175_000, 4: 175_000}), "roo_code.condense")
    # step 3 condenses; step 4 sees [summary, a3, u3] and condenses again; step 5 sees [summary, "thinking aloud"]
    assert rep.steps[3].compacted and rep.steps[4].compacted and "fresh start" in rep.steps[4].note
    assert rep.steps[5].triggered and not rep.steps[5].compacted
    assert "condensed recently" in rep.steps[5].note and "nothing to hide" in rep.steps[5].note


def test_condense_of_roo_3_42_keeps_the_first_and_last_three() -> None:
    # CO-old lines 153 (N_MESSAGES_TO_KEEP = 3), 206-214 (what is summarized), 315-321 (an assistant summary with a
    # synthetic reasoning block), 334-353 (first message, summary, last 3)
    messages = _turns(5)
    rep = compaction.replay(_conversation(messages, {3: 175_000}), "roo_code.condense", {"roo_version": "3.17-3.42"})
    context = rep.context_at(4)
    assert context[0].index == 0
    summary = context[1]
    assert summary.fate == "inserted" and summary.message.role == "assistant"
    assert summary.message.reasoning == ("Condensing conversation context. The summary below captures the key "
                                         "information from the prior conversation.",)
    # API messages before call 4: task, a0, u0, a1, u1, a2, u2, a3, u3 -> the last 3: u2 (its result answers a2's
    # call, which the summary carries), a3, u3
    assert [i.index for i in context[2:]] == [8, 9, 10, 11, 12]
    assert [c.id for c in summary.message.tool_calls] == ["toolu_2"]


def test_version_choice_follows_the_log() -> None:
    messages = _turns(5)
    conv = _conversation(messages, {3: 175_000})
    old = Conversation(conv.messages, source=Source("roo-code", agent_version="3.30.1"), usage=conv.usage)
    assert compaction.replay(old, "roo_code.condense").context_at(4)[1].message.role == "assistant"
    assert len(compaction.replay(conv, "roo_code.condense").context_at(4)) == 1


def test_threshold_out_of_range_is_refused() -> None:
    conv = _conversation(_turns(2), {})
    with pytest.raises(ValueError, match="auto_condense_context_percent"):
        compaction.replay(conv, "roo_code.condense", {"auto_condense_context_percent": 2})


def test_sliding_window_hides_what_the_roo_log_hid_at_its_call() -> None:
    # the xml-task log: a sliding_window_truncation record (prevContextTokens 10,930, messagesRemoved 4) before the
    # call at message 18. The replay measures prevContextTokens there from the same reported usage (the last
    # message counted with Roo's tokenizer), and with the allowed size just under the log's figure it hides the
    # same number of messages at the same call, and nothing before it
    conv = compaction.load(FIXTURES / "xml-task" / "api_conversation_history.json")
    truncation = next(e for e in conv.events if e.kind == "truncation")
    window = (0.98 * truncation.pre_tokens + 8_192) / 0.9
    rep = compaction.replay(conv, "roo_code.sliding_window", context_window=int(window))
    first = next(s for s in rep.steps if s.compacted)
    assert first.message_index == truncation.message_index
    assert "hid 4 messages" in first.note
    measured = int(first.note.split("prevContextTokens ")[1].split(":")[0].replace(",", ""))
    assert abs(measured - truncation.pre_tokens) <= 0.02 * truncation.pre_tokens


def test_export_is_roos_settings_file() -> None:
    import json

    from compaction.export import export_setup

    (snippet,) = export_setup("roo_code.condense", {"auto_condense_context_percent": 75,
                                                     "custom_condensing_prompt": 'Summarize "briefly" {x}'})
    assert json.loads(snippet.code) == {"globalSettings": {
        "autoCondenseContext": True, "autoCondenseContextPercent": 75,
        "customSupportPrompts": {"CONDENSE": 'Summarize "briefly" {x}'}}}
    (snippet,) = export_setup("roo_code.sliding_window", {"max_tokens": 16_000})
    assert json.loads(snippet.code) == {"globalSettings": {"autoCondenseContext": False}}
    assert "16,000" in snippet.note
