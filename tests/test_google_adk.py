"""``google_adk.events_compaction``: one test per rule of agents.md §1.10 as google-adk 2.13.0 implements it, and its
production export (executed against the real library in its oracle environment)."""

from __future__ import annotations

import pytest
from conftest import ROOT
from oracle_env import oracle_python
from oracle_env import run_oracle

import compaction
from compaction import summarizers
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.errors import ConfigError
from compaction.export import export_setup
from compaction.strategies._adk_session import PROMPT_TEMPLATE

STRATEGY = "google_adk.events_compaction"
WINDOW = {"compaction_interval": 0, "token_threshold": 0}


def turns(n: int, size: int = 400, tools: bool = False) -> list[Message]:
    """``n`` invocations: a question, (a tool call and its result,) an answer."""
    out: list[Message] = [system("You help.")]
    for k in range(1, n + 1):
        out.append(user(f"question {k} " + "q" * size))
        if tools:
            call = ToolCall(f"c{k}", "lookup", {"item": k})
            out += [assistant(None, [call]), tool(call, f"result {k} " + "r" * size)]
        out.append(assistant(f"answer {k} " + "a" * size))
    return out


def conv(messages: list[Message], usage: dict[int, Usage] | None = None, fmt: str = "python") -> Conversation:
    return Conversation(tuple(messages), usage=usage or {}, source=Source(fmt))


def replay(c: Conversation, **params) -> compaction.Replay:
    return compaction.replay(c, STRATEGY, {**WINDOW, **params})


@pytest.fixture()
def prompts(monkeypatch) -> list[str]:
    """Every summary request our replay makes (the text sent as the one user message)."""
    seen: list[str] = []
    original = summarizers.ExtractiveSummarizer.text

    def text(self, request):
        seen.append(request.transcript)
        return original(self, request)

    monkeypatch.setattr(summarizers.ExtractiveSummarizer, "text", text)
    return seen


def summaries_at(rep: compaction.Replay, step: int) -> list:
    return [i for i in rep.context_at(step) if i.fate == "inserted"]


def texts(items) -> list[str]:
    return [i.message.text for i in items]


# ------------------------------------------------------------------------------------------------ configuration
def test_a_trigger_must_be_configured():
    with pytest.raises(ConfigError, match="at least one compaction trigger"):
        replay(conv(turns(2)))


def test_parameters_are_the_configs():
    info = compaction.strategies()[STRATEGY]
    assert [p.name for p in info.params][:5] == ["compaction_interval", "overlap_size", "token_threshold",
                                                 "event_retention_size", "agent_name"]
    assert info.defaults()["compaction_interval"] == 3 and info.defaults()["overlap_size"] == 1
    assert info.policy == "none"


# ------------------------------------------------------------------------------------------------ sliding window
def test_sliding_window_interval_two_overlap_one(prompts):
    """ADK's own example: invocations 1–2 are summarized after invocation 2, invocation 3 alone triggers nothing,
    and after invocation 4 the summary covers invocations 2–4; both summaries are sent (neither contains the
    other) in place of invocations 1–4."""
    c = conv(turns(5))
    rep = replay(c, compaction_interval=2, overlap_size=1)
    made = [s.step for s in rep.steps if s.model_calls]
    assert made == [2, 4]  # the first call of invocations 3 and 5: post-invocation work replayed there
    first, second = summaries_at(rep, 4)
    assert first.represents == (1, 2, 3, 4) and second.represents == (3, 4, 5, 6, 7, 8)
    sent = rep.context_at(4)
    assert [i.message.role for i in sent] == ["system", "assistant", "assistant", "user"]
    assert sent[-1].index == 9
    asked = [line for line in prompts[1].splitlines() if line.startswith("user: question")]
    assert [line[:16] for line in asked] == ["user: question 2", "user: question 3", "user: question 4"]


def test_post_invocation_summary_leaves_out_the_next_turn():
    c = conv(turns(3))
    rep = replay(c, compaction_interval=1, overlap_size=0)
    (summary,) = summaries_at(rep, 1)
    assert summary.represents == (1, 2)  # not invocation 2's question, which arrived after invocation 1 ended
    assert rep.context_at(1)[-1].index == 3


def test_invocations_come_from_the_log_when_it_has_them():
    messages = turns(3)
    ids = ["inv-a", "inv-a", "inv-a", "inv-a", "inv-b", "inv-b"]  # two questions in one invocation
    tagged = [messages[0]] + [m.with_meta(invocation_id=i) for m, i in zip(messages[1:], ids)]
    rep = replay(conv(tagged), compaction_interval=1, overlap_size=0)
    assert [s.step for s in rep.steps if s.model_calls] == [2]


def test_summary_is_a_model_message_and_raw_events_stay_stored():
    rep = replay(conv(turns(3)), compaction_interval=1, overlap_size=0)
    (summary,) = summaries_at(rep, 1)
    assert summary.message.role == "assistant" and summary.inserted_kind == "summary"
    assert rep.persistence == "project"
    assert rep.fates_at(1) == {1: "collapsed", 2: "collapsed"}


# ------------------------------------------------------------------------------------------------ token threshold
def usage_for(c: list[Message], prompt: int) -> dict[int, Usage]:
    return {i: Usage(input_tokens=prompt) for i, m in enumerate(c) if m.role == "assistant"}


def test_token_threshold_reads_the_newest_reported_prompt_count():
    messages = turns(4, tools=True)
    usage = usage_for(messages, 100)
    usage[6] = Usage(input_tokens=5_000)  # the answer of invocation 1 reports a large prompt
    rep = replay(conv(messages, usage), token_threshold=5_000, event_retention_size=0)
    (step,) = [s for s in rep.steps if s.model_calls]
    assert step.message_index == 8  # the next call reads it (call at 6 itself read 100)
    assert "reported prompt tokens 5,000" in step.note


def test_retention_keeps_a_response_with_its_call():
    """Keeping the newest event would orphan a function response: the split moves before its call."""
    messages = turns(3, tools=True)
    rep = replay(conv(messages, usage_for(messages, 9_000)), token_threshold=1_000, event_retention_size=1)
    (step, *_) = [s for s in rep.steps if s.model_calls]
    assert step.message_index == 4  # invocation 1's answer: the call and its result are the newest two events
    kept = [i.index for i in rep.context_at(step.step) if i.fate != "inserted" and i.index]
    assert kept == [2, 3]  # the call stays with its result; only the question was summarized


def test_a_new_summary_supersedes_the_previous_one(prompts):
    messages = turns(4, tools=True)
    rep = replay(conv(messages, usage_for(messages, 9_000)), token_threshold=1_000, event_retention_size=2)
    made = [s for s in rep.steps if s.model_calls]
    assert len(made) >= 2
    later = made[1].step
    (summary,) = summaries_at(rep, later)  # the first summary is subsumed: one is sent
    assert summary.represents[0] == 1
    assert prompts[1].split("\n\n", 1)[1].startswith("model: ")  # the previous summary seeds the new one


def test_the_count_is_estimated_until_a_model_event_follows_the_summary():
    messages = turns(3, tools=True)
    rep = replay(conv(messages), token_threshold=150, event_retention_size=0)
    notes = [s.note for s in rep.steps if s.note]
    assert notes and all("estimated prompt tokens" in n for n in notes)


def test_reported_counts_after_a_compaction_lose_what_it_removed():
    """The log reports the uncompacted prompt: the replay's count is that less what its compaction took out."""
    messages = turns(5, tools=True)
    rep = replay(conv(messages, usage_for(messages, 30_000)), token_threshold=2_500, event_retention_size=3)
    first = next(s for s in rep.steps if s.model_calls)
    removed = first.tokens_before - first.tokens_sent
    assert removed > 0
    assert f"reported prompt tokens {30_000 - removed:,}" in rep.steps[first.step + 1].note


def test_pre_request_reads_only_the_calling_agents_counts():
    """Before a call ADK reads the calling agent's own counts; after an invocation, anyone's."""
    messages = turns(3, tools=True)
    messages = [m.with_meta(author="helper" if k < 5 else "root") if m.role == "assistant" else m
                for k, m in enumerate(messages)]
    usage = usage_for(messages, 100)
    usage[8] = Usage(input_tokens=50_000)  # root's answer in invocation 2 (the calls are made by helper, the first)
    rep = replay(conv(messages, usage), token_threshold=10_000, event_retention_size=0)
    (step,) = [s for s in rep.steps if s.model_calls]
    assert step.message_index == 10 and step.note.startswith("after invocation 2: reported prompt tokens 50,000")
    with pytest.raises(ConfigError, match="identifier"):
        replay(conv(messages), token_threshold=10, agent_name="not valid")


# ------------------------------------------------------------------------------------------------ the summary request
def test_summary_prompt_renders_events_as_adk_does(prompts):
    call = ToolCall("c1", "read_file", {"path": "src/app.py", "blob": "x" * 2_500})
    messages = [user("read it"), Message("assistant", ("reading",), (call,), reasoning=("I should read it",)),
                tool(call, "line 1\nline 2"), assistant("done"), user("next"), assistant("ok")]
    replay(conv(messages), compaction_interval=1, overlap_size=0, agent_name="coder")
    prompt = prompts[0]
    assert prompt.startswith(PROMPT_TEMPLATE.split("{")[0])
    lines = prompt.split("\n\n", 1)[1].splitlines()
    assert lines[0] == "user: read it"
    assert lines[1] == "coder (thought): I should read it"
    assert lines[2] == "coder: reading"
    assert lines[3].startswith("coder called tool: read_file({'path': 'src/app.py', 'blob': 'xxx")
    rendered = str(dict(call.arguments))
    assert lines[3].endswith(f"... [truncated {len(rendered) - 2000} chars])")
    assert lines[4:] == ["Tool response from read_file: {'result': 'line 1\\nline 2'}", "coder: done"]


def test_credential_requests_are_left_out_of_the_summary(prompts):
    call = ToolCall("a1", "adk_request_credential", {"scheme": "oauth2"})
    messages = [user("connect"), assistant(None, [call]), tool(call, "token-123"), assistant("connected"),
                user("next"), assistant("ok")]
    replay(conv(messages), compaction_interval=1, overlap_size=0)
    assert "adk_request_credential" not in prompts[0] and "token-123" not in prompts[0]


def test_a_range_smaller_than_the_last_summary_is_not_compacted():
    rep = replay(conv(turns(4, size=10)), compaction_interval=1, overlap_size=0, summarizer="fixed-size",
                 summary_tokens=2_000)
    assert sum(1 for s in rep.steps if s.model_calls) == 1
    assert any("not worth compacting" in s.note for s in rep.steps)


def test_a_call_still_open_in_the_invocation_cuts_the_window():
    call = ToolCall("lr1", "start_job", {})
    messages = [user("start"), assistant(None, [call]), assistant("started"), user("status?"), assistant("running")]
    rep = replay(conv(messages), compaction_interval=1, overlap_size=0)
    (summary,) = summaries_at(rep, 2)
    assert summary.represents == (0,)  # the call may still be answered: the window stops before it


# ------------------------------------------------------------------------------------------------ ADK logs
def test_an_adk_session_keeps_its_responses_as_objects_and_events_as_stored(prompts):
    c = compaction.load(ROOT / "tests" / "fixtures" / "google-adk" / "support.session.json")
    rep = compaction.replay(c, STRATEGY, {"compaction_interval": 1, "overlap_size": 0})
    assert prompts
    assert "Tool response from get_order: {'order_id': '1042'" in prompts[0]
    assert "support_agent called tool: get_order({'order_id': '1042'})" in prompts[0]
    # the two parallel responses are one event: with retention 1 the token pass keeps that event alone
    assert rep.steps


# ------------------------------------------------------------------------------------------------ export
@pytest.mark.parametrize("params", [{}, {"compaction_interval": 0, "token_threshold": 40_000,
                                         "event_retention_size": 5, "agent_name": "billing_agent"},
                                    {"compaction_interval": 2, "overlap_size": 0, "token_threshold": 9_000}])
def test_export_builds_the_app_the_replay_ran(params):
    (snippet,) = export_setup(STRATEGY, params)
    assert snippet.language == "python" and snippet.fill_in == ("root_agent",)
    resolved = compaction.strategies()[STRATEGY].resolve_params(params)
    python = oracle_python("google-adk-2.13.0", ("google-adk==2.13.0",))
    built = run_oracle(python, "adk_app_snippet.py", {"code": snippet.code})
    assert built["agent"] == (resolved["agent_name"] or "agent")
    config = built["config"]
    window = resolved["compaction_interval"] > 0
    tokens = resolved["token_threshold"] > 0
    assert config["compaction_interval"] == (resolved["compaction_interval"] if window else None)
    assert config["overlap_size"] == (resolved["overlap_size"] if window else None)
    assert config["token_threshold"] == (resolved["token_threshold"] if tokens else None)
    assert config["event_retention_size"] == (resolved["event_retention_size"] if tokens else None)
