"""``aider.chat_summary``: one test per rule of agents.md §1.8 as aider-chat 0.86.2 implements it, the ``aider``
counter, and the production export (read back by aider's own argument parser in its oracle environment)."""

from __future__ import annotations

import json

import pytest
import yaml
from oracle_env import oracle_python
from oracle_env import run_oracle

import compaction
from compaction import summarizers
from compaction.aider_counter import aider_json
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.errors import ConfigError
from compaction.export import export_setup
from compaction.strategies.aider import SUMMARIZE_PROMPT
from compaction.strategies.aider import SUMMARY_PREFIX
from compaction.strategies.aider import default_history_tokens
from compaction.tiktoken_offline import get_encoding

STRATEGY = "aider.chat_summary"
EVERY = {"moved_to_done": "every_exchange"}


def chat(exchanges: int, size: int = 300, edits: bool = False) -> list[Message]:
    out: list[Message] = [system("Act as an expert software developer.")]
    for k in range(exchanges):
        out.append(user(f"request {k} " + "q" * size))
        out.append(assistant(f"reply {k} " + "a" * size))
        if edits:
            out += [user(f"I committed the changes with git hash {k:07x} & commit msg: change {k}"),
                    assistant("Ok.", generated=False)]
    return out


def replay(messages: list[Message], window: int = 16_000, **params) -> compaction.Replay:
    return compaction.replay(Conversation(tuple(messages), source=Source("python")), STRATEGY, params,
                             context_window=window)


@pytest.fixture()
def requests(monkeypatch) -> list[tuple[str, str]]:
    """(instruction, transcript) of every summary request our replay makes."""
    seen: list[tuple[str, str]] = []
    original = summarizers.ExtractiveSummarizer.text

    def text(self, request):
        seen.append((request.instruction, request.transcript))
        return original(self, request)

    monkeypatch.setattr(summarizers.ExtractiveSummarizer, "text", text)
    return seen


def chat_sent(rep: compaction.Replay, step: int) -> list:
    return [i for i in rep.context_at(step) if i.message.role != "system"]


# ------------------------------------------------------------------------------------------------ budget
@pytest.mark.parametrize(("window", "expected"), [(8_000, 1024), (16_000, 1024), (128_000, 8000.0),
                                                  (200_000, 8192), (1_000_000, 8192)])
def test_default_budget_is_a_sixteenth_of_the_input_within_1024_and_8192(window, expected):
    assert default_history_tokens(window) == expected


def test_explicit_budget_and_bad_values():
    rep = replay(chat(6), max_chat_history_tokens=50_000, **EVERY)
    assert not any(s.compacted for s in rep.steps)
    with pytest.raises(ValueError, match="max_chat_history_tokens"):
        replay(chat(2), max_chat_history_tokens=-1)
    assert isinstance(ConfigError("x"), ValueError)


def test_the_aider_counter_is_cl100k_over_each_messages_json():
    m = user("naïve café — 中文")
    assert aider_json(m) == json.dumps({"role": "user", "content": "naïve café — 中文"})
    counter = compaction.make_counter("aider")
    assert counter.count([m, m]) == 2 * len(get_encoding("cl100k_base").encode_ordinary(aider_json(m)))


# ------------------------------------------------------------------------------------------------ timing
def test_every_exchange_summary_is_used_at_the_next_send(requests):
    rep = replay(chat(6), **EVERY)  # 1,024 tokens: each exchange is about 170
    made = [s for s in rep.steps if s.model_calls]
    assert made and all(s.compacted for s in made)
    first = made[0]
    sent = chat_sent(rep, first.step)
    assert sent[0].message.text.startswith(SUMMARY_PREFIX) and sent[0].fate == "inserted"
    assert "in the background after the exchange" in first.note
    assert requests[0][0] == SUMMARIZE_PROMPT


def test_after_an_edit_the_summary_is_dropped():
    """aider 0.86.2 appends its acknowledgement to the done messages while the summary runs: it is dropped."""
    rep = replay(chat(8, edits=True), max_chat_history_tokens=600)
    made = [s for s in rep.steps if s.model_calls]
    assert made and all(s.declined and not s.compacted for s in made)
    assert "edit acknowledgement" in made[0].note


def test_exchanges_without_edits_stay_current_and_are_never_summarized():
    rep = replay(chat(8), max_chat_history_tokens=600)  # `edits`: no acknowledgement, nothing is moved back
    assert not any(s.model_calls for s in rep.steps)


# ------------------------------------------------------------------------------------------------ ChatSummary
def test_four_messages_or_fewer_are_summarized_whole(requests):
    rep = replay(chat(2, size=2_000), max_chat_history_tokens=500, **EVERY)
    (step,) = [s for s in rep.steps if s.compacted]
    sent = chat_sent(rep, step.step)
    assert [i.message.role for i in sent] == ["user", "assistant", "user"]  # summary, Ok., the new request
    assert sent[1].message.text == "Ok."
    assert requests[0][1].startswith("# USER\nrequest 0 ")


def test_tail_under_half_the_budget_head_ending_with_the_assistant():
    rep = replay(chat(8, size=200), max_chat_history_tokens=1_000, summarizer="fixed-size", summary_tokens=64,
                 **EVERY)
    step = next(s for s in rep.steps if s.compacted)
    sent = chat_sent(rep, step.step)
    summary, tail = sent[0], sent[1:-1]  # the last one is the new request (current)
    assert summary.message.text.startswith(SUMMARY_PREFIX)
    counter = compaction.make_counter("aider")
    assert counter.count([i.message for i in tail]) < 500
    assert tail[0].message.role == "user"  # the head ends with an assistant message
    assert summary.represents == tuple(range(1, 9)) and [i.index for i in tail] == list(range(9, 15))


def test_only_the_oldest_head_within_the_weak_models_input_is_summarized(requests):
    rep = replay(chat(10, size=400), max_chat_history_tokens=1_200, weak_model_max_input_tokens=900, **EVERY)
    step = next(s for s in rep.steps if s.compacted)
    fates = rep.fates_at(step.step)
    assert "dropped" in fates.values() and "collapsed" in fates.values()
    dropped = [i for i, f in fates.items() if f == "dropped"]
    collapsed = [i for i, f in fates.items() if f == "collapsed"]
    assert max(collapsed) < min(dropped)  # the oldest part is kept for the summary, the newer head dropped


def test_tool_messages_count_but_are_left_out_of_the_transcript(requests):
    messages: list[Message] = [system("sys")]
    for k in range(6):
        call = ToolCall(f"c{k}", "run", {"cmd": f"ls {k}"})
        messages += [user(f"do {k} " + "q" * 200), assistant(f"running {k}", [call]),
                     tool(call, f"out {k} " + "o" * 400), assistant(f"done {k}")]
    rep = replay(messages, max_chat_history_tokens=600, **EVERY)
    assert any(s.compacted for s in rep.steps)
    assert "out 0" not in requests[0][1] and "# ASSISTANT\nrunning 0" in requests[0][1]


def test_the_tail_may_start_with_a_result_whose_call_was_summarized():
    messages: list[Message] = [system("sys")]
    for k in range(8):
        call = ToolCall(f"c{k}", "run", {})
        messages += [user(f"do {k}"), assistant(f"run {k}", [call]), tool(call, "o" * (60 + 90 * (k % 3)))]
    messages += [assistant("finished"), user("next"), assistant("ok")]
    found = False
    for budget in range(300, 1_400, 50):
        rep = replay(messages, max_chat_history_tokens=budget, **EVERY)
        for s in rep.steps:
            if s.compacted:
                sent = chat_sent(rep, s.step)
                found = found or sent[1].message.role == "tool"
    assert found


def test_summary_and_tail_over_budget_are_summarized_again():
    rep = replay(chat(12, size=300), max_chat_history_tokens=1_100, summarizer="fixed-size", summary_tokens=2_500,
                 **EVERY)
    step = next(s for s in rep.steps if s.compacted)
    assert len(step.model_calls) >= 2  # the first summary plus the tail did not fit


# ------------------------------------------------------------------------------------------------ export
@pytest.mark.parametrize("params", [{}, {"max_chat_history_tokens": 3_000, "weak_model": "gemini/gemini-2.5-flash"},
                                    {"weak_model_max_input_tokens": 50_000, "moved_to_done": "every_exchange"}])
def test_export_is_the_config_aider_reads(params):
    snippets = export_setup(STRATEGY, params)
    conf = snippets[0]
    assert conf.language == "yaml"
    resolved = compaction.strategies()[STRATEGY].resolve_params(params)
    values = yaml.safe_load(conf.code)
    assert values.get("max-chat-history-tokens") == (resolved["max_chat_history_tokens"] or None)
    assert values["weak-model"] == resolved["weak_model"]
    if resolved["weak_model_max_input_tokens"]:
        metadata = json.loads(snippets[1].code)
        assert metadata == {resolved["weak_model"]: {"max_input_tokens": resolved["weak_model_max_input_tokens"]}}
    if resolved["moved_to_done"] == "every_exchange":
        assert "no setting changes it" in conf.note
    python = oracle_python("aider-chat-0.86.2", ("aider-chat==0.86.2",))
    parsed = run_oracle(python, "aider_conf_snippet.py", {"yaml": conf.code})
    assert parsed == {"max_chat_history_tokens": resolved["max_chat_history_tokens"] or None,
                      "weak_model": resolved["weak_model"]}
