"""Differential tests: our Agent Framework (Python) strategies against the installed agent-framework-core 1.23.0.

Each conversation is written as real ``agent_framework.Message`` objects (our agent-framework writer) and driven
call by call exactly as the framework's function loop does: before each assistant message of the log the new
messages join one persistent list and ``apply_compaction`` runs the real strategy on it. Our runner sees the same
messages. After every call the whole list must agree — order, message ids, group ids and kinds, exclusion flags and
reasons, inserted digests and summaries byte for byte — and so must the token counts of what is sent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_framework import (
    CharacterEstimatorTokenizer,
    ChatResponse,
    ContextWindowCompactionStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    apply_compaction,
)
from agent_framework import Message as AFMessage
from agent_framework._compaction import annotate_message_groups, annotate_token_counts, included_token_count
from conftest import REAL_LOGS, sample_paths

import compaction
from compaction.formats.agent_framework import write
from compaction.history import original
from compaction.strategies import RunContext, get_strategy, registry
from compaction.strategies.agent_framework_python import DEFAULT_PYTHON_SUMMARY_PROMPT, PythonRunner
from compaction.summarizers import Summarizer, SummaryCall, SummaryRequest
from compaction.tokens import make_counter

LOGS = sorted((REAL_LOGS / "openai-plain").glob("*.json")) + sample_paths("*.openai.json")
TOKENIZER = CharacterEstimatorTokenizer()


# ------------------------------------------------------------------------------------------------- the drivers
class RecordingSummarizer(Summarizer):
    """Wraps our summarizer and remembers each request and reply, so the real strategy's client can answer the
    same text and the transcripts can be compared."""

    name = "recording"

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.calls: list[tuple[SummaryRequest, str]] = []

    def text(self, request: SummaryRequest) -> str:
        reply = self.inner.text(request)
        self.calls.append((request, reply))
        return reply

    def summarize(self, request: SummaryRequest, counter) -> SummaryCall:
        call = self.inner.summarize(request, counter)
        self.calls.append((request, call.text))
        return call


class EchoClient:
    """A chat client for the real SummarizationStrategy: answers exactly what our summarizer answered."""

    def __init__(self, recorder: RecordingSummarizer) -> None:
        self.recorder = recorder
        self.seen = 0

    async def get_response(self, messages: list[AFMessage], stream: bool = False, **_: Any) -> ChatResponse:
        request, reply = self.recorder.calls[self.seen]
        self.seen += 1
        assert messages[0].text == request.instruction
        assert messages[1].text == request.transcript  # numbered transcript, byte for byte
        return ChatResponse(messages=[AFMessage(role="assistant", contents=[reply])])


def framework_messages(conv) -> list[AFMessage]:
    """The conversation as agent_framework Messages; ids only where the log had its own (else the framework
    assigns ``msg_<index>`` itself, as in a run)."""
    out = []
    for m, d in zip(conv.messages, write(conv), strict=True):
        if not m.meta.get("message_id"):
            d.pop("message_id", None)
        out.append(AFMessage.from_dict(d))
    return out


def real_view(messages: list[AFMessage], origin: dict[int, int]) -> list[tuple]:
    rows = []
    for m in messages:
        group = m.additional_properties.get("_group") or {}
        excluded = bool(m.additional_properties.get("_excluded"))
        o = origin.get(id(m))
        rows.append((o, m.message_id, group.get("id"), group.get("kind"), group.get("index"),
                     group.get("has_reasoning"), excluded,
                     m.additional_properties.get("_exclude_reason") if excluded else None,
                     m.text if o is None else None))
    return rows


def our_view(runner: PythonRunner) -> list[tuple]:
    h = runner.history
    return [(r.entry.origin, r.message_id, r.group_id, r.kind, index, r.has_reasoning, r.excluded,
             r.reason if r.excluded else None, r.message.text if r.entry.origin is None else None)
            for r, index in zip(h.records, h.group_indices(), strict=True)]


def drive(conv, name: str, params: dict, real_strategy, recorder: RecordingSummarizer | None = None) -> int:
    """Run both sides call by call; assert they agree after every call. Returns the number of compacting calls."""
    info = get_strategy(f"agent_framework_python.{name}")
    runner = info.build(info.resolve_params(params), RunContext(make_counter("maf-python")))
    if recorder is not None:
        recorder.inner = runner.strategy.summarizer
        runner.strategy.summarizer = recorder
    real_messages = framework_messages(conv)
    origin = {id(m): i for i, m in enumerate(real_messages)}
    working: list[AFMessage] = []
    compactions = 0

    async def real_call() -> tuple[int, int]:
        annotate_message_groups(working)
        annotate_token_counts(working, tokenizer=TOKENIZER)
        before = included_token_count(working)
        projected = await apply_compaction(working, strategy=real_strategy, tokenizer=TOKENIZER)
        return before, sum(m.additional_properties["_group"]["token_count"] for m in projected)

    for i, message in enumerate(conv.messages):
        if message.role == "assistant":
            outcome = runner.before_call()
            before, sent = asyncio.run(real_call())
            call = f"{name} {params} call before message {i}"
            assert our_view(runner) == real_view(working, origin), call
            assert (outcome.tokens_before, outcome.tokens_sent) == (before, sent), call
            compactions += outcome.compacted
        runner.append(original(message, i))
        working.append(real_messages[i])
    return compactions


def log_ids() -> list[Any]:
    return [pytest.param(p, id=p.stem) for p in LOGS] or [pytest.param(None, marks=pytest.mark.skip("no logs"))]


@pytest.fixture(params=log_ids())
def conv(request):
    """A conversation, and whether the grid is known to make every strategy act on it (the real logs are; the
    bundled samples may be too short for some settings, and then only the agreement is checked)."""
    path = Path(request.param)
    return compaction.load(path), REAL_LOGS in path.parents


def acted(conv_case, count: int) -> bool:
    return count > 0 or not conv_case[1]


# ---------------------------------------------------------------------------------------------------- the grid
@pytest.mark.parametrize("max_n, compact_to, tokens, first_user", [
    (3000, 1500, True, False), (9000, 6000, True, True), (24, 12, False, False), (40, 30, False, True)])
def test_truncation(conv, max_n, compact_to, tokens, first_user):
    real = TruncationStrategy(max_n=max_n, compact_to=compact_to, tokenizer=TOKENIZER if tokens else None,
                              preserve_first_user_group=first_user)
    params = {"max_n": max_n, "compact_to_n": compact_to, "metric": "tokens" if tokens else "messages",
              "preserve_first_user_group": first_user}
    assert acted(conv, drive(conv[0], "truncation", params, real))


@pytest.mark.parametrize("keep", [1, 3, 8])
def test_sliding_window(conv, keep):
    real = SlidingWindowStrategy(keep_last_groups=keep)
    assert acted(conv, drive(conv[0], "sliding_window", {"keep_last_groups": keep}, real))


@pytest.mark.parametrize("keep", [0, 1, 3])
def test_selective_tool_call(conv, keep):
    real = SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=keep)
    assert acted(conv, drive(conv[0], "selective_tool_call", {"keep_last_tool_call_groups": keep}, real))


@pytest.mark.parametrize("keep", [0, 1, 4])
def test_tool_result_compaction(conv, keep):
    real = ToolResultCompactionStrategy(keep_last_tool_call_groups=keep)
    assert acted(conv, drive(conv[0], "tool_result_compaction", {"keep_last_tool_call_groups": keep}, real))


@pytest.mark.parametrize("target, threshold, budget, summarizer", [
    (4, 2, 8000, "extractive"), (10, 0, 1200, "fixed-size"), (6, 3, None, "extractive")])
def test_summarization(conv, target, threshold, budget, summarizer):
    recorder = RecordingSummarizer(None)  # type: ignore[arg-type]
    real = SummarizationStrategy(client=EchoClient(recorder), target_count=target, threshold=threshold,
                                 prompt=DEFAULT_PYTHON_SUMMARY_PROMPT, max_summary_input_tokens=budget)
    params = {"target_count": target, "threshold": threshold, "max_summary_input_tokens": budget or 0,
              "summarizer": summarizer, "summary_tokens": 120}
    assert acted(conv, drive(conv[0], "summarization", params, real, recorder))
    assert acted(conv, len(recorder.calls))


@pytest.mark.parametrize("budget, children, early_stop", [
    (3000, "tool_result_compaction(keep_last_tool_call_groups=2)", True),
    (2500, "selective_tool_call(keep_last_tool_call_groups=3); sliding_window(keep_last_groups=6)", False),
    (1800, "tool_result_compaction(keep_last_tool_call_groups=0)", True)])
def test_token_budget_composed(conv, budget, children, early_stop):
    real_children = {
        "tool_result_compaction(keep_last_tool_call_groups=2)": [ToolResultCompactionStrategy(
            keep_last_tool_call_groups=2)],
        "selective_tool_call(keep_last_tool_call_groups=3); sliding_window(keep_last_groups=6)": [
            SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=3),
            SlidingWindowStrategy(keep_last_groups=6)],
        "tool_result_compaction(keep_last_tool_call_groups=0)": [ToolResultCompactionStrategy(
            keep_last_tool_call_groups=0)],
    }[children]
    real = TokenBudgetComposedStrategy(token_budget=budget, tokenizer=TOKENIZER, strategies=real_children,
                                       early_stop=early_stop)
    params = {"token_budget": budget, "children": children, "early_stop": early_stop}
    assert acted(conv, drive(conv[0], "token_budget_composed", params, real))


@pytest.mark.parametrize("window, output, keep, first_user", [(9000, 1000, 4, False), (6000, 2000, 1, True)])
def test_context_window(conv, window, output, keep, first_user):
    real = ContextWindowCompactionStrategy(max_context_window_tokens=window, max_output_tokens=output,
                                           keep_last_tool_call_groups=keep, preserve_first_user_group=first_user)
    params = {"max_context_window_tokens": window, "max_output_tokens": output, "keep_last_tool_call_groups": keep,
              "preserve_first_user_group": first_user}
    assert acted(conv, drive(conv[0], "context_window", params, real))


# ------------------------------------------------------------------------------------------ validation errors
@pytest.mark.parametrize("name, params, real", [
    ("truncation", {"max_n": 10, "compact_to_n": 20, "metric": "messages"},
     lambda: TruncationStrategy(max_n=10, compact_to=20)),
    ("truncation", {"max_n": 0, "compact_to_n": 5, "metric": "messages"},
     lambda: TruncationStrategy(max_n=0, compact_to=5)),
    ("sliding_window", {"keep_last_groups": 0}, lambda: SlidingWindowStrategy(keep_last_groups=0)),
    ("tool_result_compaction", {"keep_last_tool_call_groups": -1},
     lambda: ToolResultCompactionStrategy(keep_last_tool_call_groups=-1)),
    ("selective_tool_call", {"keep_last_tool_call_groups": -2},
     lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=-2)),
    ("summarization", {"target_count": 0}, lambda: SummarizationStrategy(client=None, target_count=0)),
    ("summarization", {"threshold": -1}, lambda: SummarizationStrategy(client=None, threshold=-1)),
    ("summarization", {"max_summary_input_tokens": -5},
     lambda: SummarizationStrategy(client=None, max_summary_input_tokens=-5)),
    ("context_window", {"max_context_window_tokens": 1000, "max_output_tokens": 1000},
     lambda: ContextWindowCompactionStrategy(max_context_window_tokens=1000, max_output_tokens=1000)),
    ("context_window", {"max_context_window_tokens": 1000, "max_output_tokens": 10, "tool_eviction_threshold": 0.9,
                        "truncation_threshold": 0.5},
     lambda: ContextWindowCompactionStrategy(max_context_window_tokens=1000, max_output_tokens=10,
                                             tool_eviction_threshold=0.9, truncation_threshold=0.5)),
    ("context_window", {"max_context_window_tokens": 1000, "max_output_tokens": 10, "tool_eviction_threshold": 1.5},
     lambda: ContextWindowCompactionStrategy(max_context_window_tokens=1000, max_output_tokens=10,
                                             tool_eviction_threshold=1.5)),
])
def test_validation_errors_match_the_framework(name, params, real):
    with pytest.raises(ValueError) as expected:
        real()
    info = get_strategy(f"agent_framework_python.{name}")
    with pytest.raises(ValueError) as ours:
        info.build(info.resolve_params(params), RunContext(make_counter("maf-python")))
    assert str(ours.value) == str(expected.value)


# --------------------------------------------------------------------------------------------- the registry
def test_registry_metadata_and_replay_integration():
    from conftest import real_log

    names = [n for n in registry() if n.startswith("agent_framework_python.")]
    assert len(names) == 7
    for n in names:
        info = get_strategy(n)
        assert info.summary and info.docs_url.startswith("https://") and info.params
        if info.policy == "none":
            assert "compact_at and compact_to are not used" in info.summary
    conv = compaction.load(real_log("openai-plain/tau-bench__task2-trial1.json"))
    rep = compaction.replay(conv, "agent_framework_python.tool_result_compaction", counter="approx")
    assert rep.persistence == "flag" and rep.counter.spec == "approx:4.0"
    data = rep.to_json()
    last = data["steps"][-1]
    assert last["fates"]["collapsed"] and not last["fates"]["dropped"] and last["inserted"] >= 1
    digests = [i for i in rep.context_at(len(rep.steps) - 1) if i.fate == "inserted"]
    assert all(i.message.text.startswith("[Tool results: ") for i in digests)
    # the digest sits before the group it replaces
    items = rep.context_at(len(rep.steps) - 1, include_removed=True)
    first = next(k for k, i in enumerate(items) if i.fate == "inserted")
    assert items[first + 1].fate == "collapsed"


# ------------------------------------------------------------------------------------------- grouping edge cases
def edge_conversation():
    """Reasoning-only assistants, a result far from its call (union-find linking), an orphan tool result, an
    error result, an empty assistant, and messages with their own ids (one colliding with a generated id)."""
    from compaction.conversation import Conversation, Message, Source, ToolCall, assistant, system, tool, user

    ask = ToolCall("call_a", "lookup", {"q": "alpha"})
    far = ToolCall("call_far", "fetch", {"url": "https://example.org/a"})
    orphan = ToolCall("call_orphan", "ghost", {})
    twice = ToolCall("call_dup", "dup", {})
    messages = [
        system("You are terse."),
        user("find alpha", message_id="msg_5"),
        Message("assistant", reasoning=("I should look it up.",)),
        assistant(None, [ask]),
        Message("assistant", reasoning=("Still thinking.",)),
        tool(ask, "alpha is the first letter " * 8),
        assistant("Alpha found."),
        user("now fetch the page"),
        assistant(None, [far]),
        user("(while that runs) hello?"),
        tool(far, "<html>" + "page body " * 30 + "</html>"),
        assistant(""),
        tool(orphan, "nobody asked"),
        assistant(None, [twice]),
        assistant(None, [twice]),
        tool(twice, "which one?", error=True),
        assistant("Done.", message_id="own-final"),
        user("thanks"),
        assistant("You are welcome."),
    ]
    return Conversation(tuple(messages), (), Source("synthetic"))


@pytest.mark.parametrize("name, params, make_real", [
    ("truncation", {"max_n": 8, "compact_to_n": 5, "metric": "messages"},
     lambda: TruncationStrategy(max_n=8, compact_to=5)),
    ("truncation", {"max_n": 300, "compact_to_n": 150, "preserve_first_user_group": True},
     lambda: TruncationStrategy(max_n=300, compact_to=150, tokenizer=TOKENIZER, preserve_first_user_group=True)),
    ("sliding_window", {"keep_last_groups": 2, "preserve_system": False},
     lambda: SlidingWindowStrategy(keep_last_groups=2, preserve_system=False)),
    ("selective_tool_call", {"keep_last_tool_call_groups": 1},
     lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)),
    ("tool_result_compaction", {"keep_last_tool_call_groups": 0},
     lambda: ToolResultCompactionStrategy(keep_last_tool_call_groups=0)),
    ("token_budget_composed", {"token_budget": 120, "children": "selective_tool_call(keep_last_tool_call_groups=2)"},
     lambda: TokenBudgetComposedStrategy(token_budget=120, tokenizer=TOKENIZER,
                                         strategies=[SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=2)])),
    ("context_window", {"max_context_window_tokens": 700, "max_output_tokens": 100, "keep_last_tool_call_groups": 1},
     lambda: ContextWindowCompactionStrategy(max_context_window_tokens=700, max_output_tokens=100,
                                             keep_last_tool_call_groups=1)),
])
def test_grouping_edge_cases_match_the_framework(name, params, make_real):
    assert drive(edge_conversation(), name, params, make_real())


def test_summarization_on_edge_cases_matches_the_framework():
    recorder = RecordingSummarizer(None)  # type: ignore[arg-type]
    real = SummarizationStrategy(client=EchoClient(recorder), target_count=2, threshold=1,
                                 prompt=DEFAULT_PYTHON_SUMMARY_PROMPT, max_summary_input_tokens=400)
    assert drive(edge_conversation(), "summarization", {"target_count": 2, "threshold": 1,
                                                        "max_summary_input_tokens": 400}, real, recorder)


@pytest.mark.parametrize("relative, has_reasoning", [
    ("claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl", True),
    ("claude-code/marot-spotter__4d5611e5__subagent-agent-a2898e3.jsonl", False),
])
def test_other_formats_with_reasoning_and_provider_ids(relative, has_reasoning):
    """Claude Code runs: reasoning parts, several calls per assistant message, provider message ids."""
    from conftest import real_log

    conv = compaction.load(real_log(relative))
    assert any(m.meta.get("message_id") for m in conv.messages)
    assert any(m.reasoning for m in conv.messages) == has_reasoning
    assert drive(conv, "tool_result_compaction", {"keep_last_tool_call_groups": 2},
                 ToolResultCompactionStrategy(keep_last_tool_call_groups=2))
    assert drive(conv, "context_window", {"max_context_window_tokens": 30000, "max_output_tokens": 2000},
                 ContextWindowCompactionStrategy(max_context_window_tokens=30000, max_output_tokens=2000))
    recorder = RecordingSummarizer(None)  # type: ignore[arg-type]
    real = SummarizationStrategy(client=EchoClient(recorder), prompt=DEFAULT_PYTHON_SUMMARY_PROMPT)
    assert drive(conv, "summarization", {}, real, recorder)
