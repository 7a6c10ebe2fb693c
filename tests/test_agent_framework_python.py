"""Differential tests: our Agent Framework (Python) strategies against the installed agent-framework-core 1.23.0.

Each conversation is written as real ``agent_framework.Message`` objects (our agent-framework writer) and driven
call by call exactly as the framework's function loop does: before each assistant message of the log the new
messages join one persistent list and ``apply_compaction`` runs the real strategy on it. Our runner sees the same
messages. After every call the whole list must agree — order, message ids, group ids and kinds, exclusion flags and
reasons, inserted digests and summaries byte for byte — and so must the token counts of what is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_framework import CharacterEstimatorTokenizer
from agent_framework import ChatResponse
from agent_framework import ContextWindowCompactionStrategy
from agent_framework import Message as AFMessage
from agent_framework import SelectiveToolCallCompactionStrategy
from agent_framework import SlidingWindowStrategy
from agent_framework import SummarizationStrategy
from agent_framework import TokenBudgetComposedStrategy
from agent_framework import ToolResultCompactionStrategy
from agent_framework import TruncationStrategy
from agent_framework import apply_compaction
from agent_framework._compaction import annotate_message_groups
from agent_framework._compaction import annotate_token_counts
from agent_framework._compaction import included_token_count
from conftest import REAL_LOGS
from conftest import sample_paths
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.formats.agent_framework import message_to_maf
from compaction.formats.agent_framework import write
from compaction.history import original
from compaction.strategies import RunContext
from compaction.strategies import get_strategy
from compaction.strategies import registry
from compaction.strategies.agent_framework_python import DEFAULT_PYTHON_SUMMARY_PROMPT
from compaction.strategies.agent_framework_python import History
from compaction.strategies.agent_framework_python import PythonRunner
from compaction.summarizers import Summarizer
from compaction.summarizers import SummaryCall
from compaction.summarizers import SummaryRequest
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


def drive(conv, name: str, params: dict, real_strategy, recorder: RecordingSummarizer | None = None,
          check: Callable[[History], None] | None = None) -> int:
    """Run both sides call by call; assert they agree after every call (and ``check`` our history, when given).
    Returns the number of compacting calls."""
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
            if check is not None:
                check(runner.history)
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
    with pytest.raises(ValueError) as ours:  # the strategy's own checks (the registry's ranges are checked before)
        info.build({**info.defaults(), **params}, RunContext(make_counter("maf-python")))
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
    from compaction.conversation import Conversation
    from compaction.conversation import Message
    from compaction.conversation import Source
    from compaction.conversation import ToolCall
    from compaction.conversation import assistant
    from compaction.conversation import system
    from compaction.conversation import tool
    from compaction.conversation import user

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


# ------------------------------------------------------------------ incremental bookkeeping vs recomputation
# History keeps the framework's annotations and its strategies' group views up to date as the list changes, and
# skips re-annotating what a pass would leave unchanged. These checks recompute all of it the straightforward way
# after every call: group views by walking the records, the call scan afresh, and — whenever History counts its
# annotation as the full one (the condition for skipping a pass) — the framework annotating the whole list anew.
def assert_bookkeeping_matches_recomputation(h: History) -> None:
    """Every view History keeps equals the one a walk over its records gives."""
    recs = h.records
    assert all(r.group_id is not None for r in recs)  # right after a call, everything is annotated
    assert all(a.key < b.key for a, b in zip(recs, recs[1:]))
    assert [h.position(r) for r in recs] == list(range(len(recs)))
    grouped: dict[str, list] = {}
    for r in recs:
        grouped.setdefault(r.group_id, []).append(r)
    kinds = {g: rs[0].kind for g, rs in grouped.items()}
    included = [g for g, rs in grouped.items() if any(not r.excluded for r in rs)]
    non_system = [g for g in included if kinds[g] != "system"]
    for gid, members in grouped.items():
        assert (h.members(gid), h.kind(gid), h.start(gid)) == (members, kinds[gid], recs.index(members[0]))
    assert h.included_groups() == included
    assert list(h.included_non_system_groups()) == non_system
    assert list(h.included_non_system_groups(newest_first=True)) == non_system[::-1]
    assert h.included_tool_groups() == [g for g in included if kinds[g] == "tool_call"]
    assert h.system_groups() == [g for g in grouped if kinds[g] == "system"]
    assert h.first_user_group() == next((g for g in grouped if kinds[g] == "user"), None)
    assert h.minimum_retained() == ({(non_system or included)[-1]} if included else set())
    for reason in {r.reason for r in recs if r.reason} | {"never given"}:
        assert list(h.groups_in_order(unless_excluded_as=reason)) == [
            g for g, rs in grouped.items() if not all(r.excluded and r.reason == reason for r in rs)]
    assert h.included_messages() == sum(not r.excluded for r in recs)
    assert h.included_non_system_messages() == sum(not r.excluded for r in recs if kinds[r.group_id] != "system")
    assert h.included_tokens() == sum(h.tokens(r) for r in recs if not r.excluded)
    assert all(a is b for a, b in zip(h.entries(), [r.stored() for r in recs], strict=True))
    unmatched: dict[tuple[str, str], list] = {}
    for r in recs:
        found = []
        for role, call_type, call_id in r.calls:
            if role == "declare":
                unmatched.setdefault((call_type, call_id), []).append(r)
                continue
            candidates = unmatched.get((call_type, call_id))
            if candidates:
                found += candidates
                if len(candidates) == 1:
                    candidates.pop()
        assert r.candidates == tuple(found)


def full_annotation(h: History) -> list[tuple]:
    """The framework annotating our current list from scratch (``force_reannotate``), with our message ids and
    exclusion flags: (message id, group id, kind, index, has_reasoning, excluded) per message."""
    messages = []
    for r in h.records:
        d = message_to_maf(r.message, 0)
        d["message_id"] = r.message_id
        d["additional_properties"]["_excluded"] = r.excluded
        messages.append(AFMessage.from_dict(d))
    annotate_message_groups(messages, force_reannotate=True)
    return [(m.message_id, g["id"], g["kind"], g["index"], g["has_reasoning"], m.additional_properties["_excluded"])
            for m in messages for g in (m.additional_properties["_group"],)]


def check_history(h: History) -> None:
    """The bookkeeping matches a recomputation, and an annotation History counts as the full one is it."""
    assert_bookkeeping_matches_recomputation(h)
    if h._canonical:  # what lets an insert skip its pass (see History._annotate_alone)
        ours = [(r.message_id, r.group_id, r.kind, i, r.has_reasoning, r.excluded)
                for r, i in zip(h.records, h.group_indices(), strict=True)]
        full = full_annotation(h)
        if h._partial:  # a full pass would include a partly excluded linked group whole: compare annotations only
            ours, full = [o[:5] for o in ours], [f[:5] for f in full]
        assert ours == full


def drive_case(conv, case: str, check: Callable[[History], None] = check_history) -> int:
    """Drive one of CASES against the framework (see ``drive``), checking our history after every call."""
    name, params, make_real = CASES[case]
    recorder = RecordingSummarizer(None) if name == "summarization" else None  # type: ignore[arg-type]
    real = make_real(EchoClient(recorder)) if recorder is not None else make_real()
    return drive(conv, name, params, real, recorder, check)


CASES: dict[str, tuple[str, dict, Callable]] = {
    "truncation by messages": ("truncation", {"max_n": 6, "compact_to_n": 3, "metric": "messages"},
                               lambda: TruncationStrategy(max_n=6, compact_to=3)),
    "truncation by tokens": ("truncation", {"max_n": 220, "compact_to_n": 110, "preserve_first_user_group": True},
                             lambda: TruncationStrategy(max_n=220, compact_to=110, tokenizer=TOKENIZER,
                                                        preserve_first_user_group=True)),
    "sliding window": ("sliding_window", {"keep_last_groups": 2}, lambda: SlidingWindowStrategy(keep_last_groups=2)),
    "selective tool call": ("selective_tool_call", {"keep_last_tool_call_groups": 1},
                            lambda: SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)),
    "tool result compaction": ("tool_result_compaction", {"keep_last_tool_call_groups": 0},
                               lambda: ToolResultCompactionStrategy(keep_last_tool_call_groups=0)),
    "summarization": ("summarization", {"target_count": 2, "threshold": 1, "max_summary_input_tokens": 160,
                                        "summary_tokens": 30},
                      lambda client: SummarizationStrategy(client=client, target_count=2, threshold=1,
                                                           prompt=DEFAULT_PYTHON_SUMMARY_PROMPT,
                                                           max_summary_input_tokens=160)),
    "summarization without budget": ("summarization", {"target_count": 3, "threshold": 0,
                                                       "max_summary_input_tokens": 0, "summary_tokens": 30},
                                     lambda client: SummarizationStrategy(client=client, target_count=3,
                                                                          threshold=0,
                                                                          prompt=DEFAULT_PYTHON_SUMMARY_PROMPT,
                                                                          max_summary_input_tokens=None)),
    "token budget": ("token_budget_composed", {"token_budget": 150, "children": "tool_result_compaction("
                                               "keep_last_tool_call_groups=1); sliding_window(keep_last_groups=3)"},
                     lambda: TokenBudgetComposedStrategy(token_budget=150, tokenizer=TOKENIZER, strategies=[
                         ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
                         SlidingWindowStrategy(keep_last_groups=3)])),
    "context window": ("context_window", {"max_context_window_tokens": 700, "max_output_tokens": 100,
                                          "keep_last_tool_call_groups": 1},
                       lambda: ContextWindowCompactionStrategy(max_context_window_tokens=700, max_output_tokens=100,
                                                               keep_last_tool_call_groups=1)),
}

CALL_IDS = ("c1", "c2", "c3")
#: own message ids: mostly none, some repeated, some the framework would generate itself (msg_<position>)
OWN_IDS = (None, None, None, None, None, None, "msg_2", "msg_5", "u1", "u1", "summary_4")


@st.composite
def tangled_conversations(draw) -> Conversation:
    """Messages that stress grouping: reasoning-only steps before or after calls, calls whose results come late,
    twice or never, results with no call, repeated call ids, system messages mid-run, empty assistants, and own
    message ids that are absent, repeated or equal to ids the framework generates."""
    messages: list[Message] = [system("You are terse.")] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(3, 22))):
        own = draw(st.sampled_from(OWN_IDS))
        meta = {"message_id": own} if own else {}
        text = "word " * draw(st.integers(0, 40))
        reasoning = ("because",) if draw(st.integers(0, 3)) == 0 else ()
        kind = draw(st.sampled_from(("user", "text", "reasoning", "calls", "calls", "result", "result", "system")))
        if kind == "user":
            messages.append(user(text or "hi", **meta))
        elif kind == "system":
            messages.append(system("Be brief.", **meta))
        elif kind == "text":
            messages.append(Message("assistant", texts=(text,) if text else (), reasoning=reasoning, meta=meta))
        elif kind == "reasoning":
            messages.append(Message("assistant", reasoning=("thinking " + text,), meta=meta))
        elif kind == "calls":
            calls = tuple(ToolCall(draw(st.sampled_from(CALL_IDS)), "lookup", {"q": text[:12]})
                          for _ in range(draw(st.integers(1, 2))))
            messages.append(Message("assistant", texts=(text,) if text else (), tool_calls=calls,
                                    reasoning=reasoning, meta=meta))
        else:
            messages.append(tool(ToolCall(draw(st.sampled_from(CALL_IDS)), "lookup", {}), text or "ok",
                                 error=draw(st.integers(0, 5)) == 0, **meta))
    messages.append(assistant("Done."))
    return Conversation(tuple(messages), (), Source("synthetic"))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=tangled_conversations(), case=st.sampled_from(sorted(CASES)))
def test_incremental_annotation_matches_recomputation_on_tangled_conversations(conv, case):
    drive_case(conv, case)


def real_log_ids() -> list[Any]:
    paths = sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.suffix != ".md") if REAL_LOGS.exists() else []
    return [pytest.param(p, id=str(p.relative_to(REAL_LOGS))) for p in paths] or [
        pytest.param(None, marks=pytest.mark.skip("no real logs"))]


@pytest.mark.parametrize("path", real_log_ids())
@pytest.mark.parametrize("case", ["summarization", "tool result compaction", "truncation by tokens", "token budget"])
def test_incremental_annotation_matches_recomputation_on_real_logs(path, case):
    drive_case(compaction.load(path), case)


def long_generated_run(rounds: int, seed: int) -> Conversation:
    """A long coding-agent run (deterministic): parallel calls whose results may arrive a step late, reasoning-only
    steps, user interjections, provider ids on some messages (a few repeated)."""
    import random

    rng = random.Random(seed)
    messages: list[Message] = [system("You are a coding agent."), user("Fix the failing test.")]
    pending: list[ToolCall] = []
    for n in range(rounds):
        meta = {"message_id": f"resp_{n // 2}"} if rng.random() < 0.2 else {}
        if rng.random() < 0.15:
            messages.append(Message("assistant", reasoning=(f"step {n}",), meta=meta))
        calls = [ToolCall(f"call_{n}_{k}", rng.choice(("read", "grep", "run")), {"path": f"f{n}.py"})
                 for k in range(rng.randint(1, 3))]
        messages.append(assistant(f"Looking at f{n}." if rng.random() < 0.5 else None, calls, **meta))
        late, pending = pending, [c for c in calls if rng.random() < 0.2]
        for c in [*late, *(c for c in calls if c not in pending)]:
            messages.append(tool(c, f"result of {c.name} " * rng.randint(1, 40)))
        if rng.random() < 0.05:
            messages.append(user("Also keep the public API unchanged."))
    messages.append(assistant("Done."))
    return Conversation(tuple(messages), (), Source("synthetic"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_incremental_annotation_matches_recomputation_on_a_long_generated_run(case):
    drive_case(long_generated_run(60, seed=3), case)


def test_summaries_inserted_after_a_leading_misfit_skip_the_pass(monkeypatch):
    """Summaries stack after a first user message too big for the summarizer's budget (a leading misfit, so
    never summarized): each is inserted mid-list, and annotating it alone must give what the pass gives."""
    alone: list[bool] = []
    annotate_alone = History._annotate_alone

    def spy(self, position, r):
        alone.append(annotate_alone(self, position, r))
        return alone[-1]

    monkeypatch.setattr(History, "_annotate_alone", spy)
    big = user("Please read all of this first. " + "context " * 400)
    conv = long_generated_run(40, seed=5)
    conv = Conversation((conv.messages[0], big, *conv.messages[2:]), (), Source("synthetic"))
    recorder = RecordingSummarizer(None)  # type: ignore[arg-type]
    real = SummarizationStrategy(client=EchoClient(recorder), target_count=2, threshold=1,
                                 prompt=DEFAULT_PYTHON_SUMMARY_PROMPT, max_summary_input_tokens=400)
    assert drive(conv, "summarization", {"target_count": 2, "threshold": 1, "max_summary_input_tokens": 400,
                                         "summary_tokens": 40}, real, recorder, check_history)
    assert alone.count(True) >= 10


def test_inserting_into_a_cut_annotation_takes_the_pass(monkeypatch):
    """Two reasoning-only steps answered by a tool call only later: the framework joins the second one to the call
    (its pass starts at the group before the new message) but not the first, which a single pass would join too.
    The summary inserted at that call must then go through the framework's pass (a pass from the start, after
    which the annotation is the full one again)."""
    attempts: list[tuple[bool, bool]] = []
    annotate_alone = History._annotate_alone

    def spy(self, position, r):
        full = self._canonical
        attempts.append((full, annotate_alone(self, position, r)))
        return attempts[-1][1]

    monkeypatch.setattr(History, "_annotate_alone", spy)
    call = ToolCall("call_1", "lookup", {})
    messages = [system("Be brief."), user("go"), Message("assistant", reasoning=("first",)),
                Message("assistant", reasoning=("second",)), assistant(None, [call]), tool(call, "done " * 30),
                assistant("ok"), user("again"), assistant("sure")]
    recorder = RecordingSummarizer(None)  # type: ignore[arg-type]
    real = SummarizationStrategy(client=EchoClient(recorder), target_count=1, threshold=0,
                                 prompt=DEFAULT_PYTHON_SUMMARY_PROMPT, max_summary_input_tokens=None)
    after: list[bool] = []
    drive(Conversation(tuple(messages), (), Source("synthetic")), "summarization",
          {"target_count": 1, "threshold": 0, "max_summary_input_tokens": 0, "summary_tokens": 20}, real, recorder,
          lambda h: (check_history(h), after.append(h._canonical)))
    assert (False, False) in attempts and (True, True) in attempts and all(after)


@pytest.mark.parametrize("children", [
    "anthropic.clear_tool_uses_20250919(trigger_value=400, keep=1); haystack.summarization(min_keep_steps=2)",
    "haystack.tool_result_pruning(min_keep_steps=1); langchain.summarization; sliding_window(keep_last_groups=5)",
])
def test_nested_children_keep_the_bookkeeping_right(children):
    """Children of other families replace content in place, exclude single messages and insert their own: no
    framework to compare with, but the bookkeeping must match a recomputation after every call."""
    info = get_strategy("agent_framework_python.token_budget_composed")
    conv = long_generated_run(50, seed=11)
    runner = info.build(info.resolve_params({"token_budget": 900, "children": children, "early_stop": False}),
                        RunContext(make_counter("maf-python"), context_window=1_500))
    compactions = 0
    for i, message in enumerate(conv.messages):
        if message.role == "assistant":
            compactions += runner.before_call().compacted
            check_history(runner.history)
        runner.append(original(message, i))
    assert compactions
