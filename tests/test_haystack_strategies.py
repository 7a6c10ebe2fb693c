"""Haystack family (sliding window, summarization, offloading, stack): differential tests against haystack-ai 3.4.1
and one test per spec rule and quirk (docs/spec/frameworks.md §1.4–1.9)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.conversation import COMPACTION_META_KEY
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.formats.haystack import message_to_haystack
from compaction.history import Entry
from compaction.history import original
from compaction.strategies import RunContext
from compaction.strategies import get_strategy
from compaction.strategies.haystack import SUMMARY_INSTRUCTION
from compaction.strategies.haystack import InMemoryToolResultStore
from compaction.strategies.haystack import Summarization
from compaction.strategies.haystack import ToolResultOffload
from compaction.summarizers import ExtractiveSummarizer
from compaction.summarizers import Summarizer
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter

pytest.importorskip("haystack")
pytestmark = pytest.mark.filterwarnings("ignore::haystack.utils.experimental.ExperimentalWarning")

from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.hooks.compaction import SlidingWindowCompactor  # noqa: E402
from haystack.hooks.compaction import SummarizationCompactor  # noqa: E402
from haystack.hooks.compaction import ToolResultOffloadCompactor  # noqa: E402
from haystack.hooks.compaction import ToolResultPruningCompactor  # noqa: E402

from compaction.interop.haystack import drive_haystack_hook  # noqa: E402
from compaction.interop.haystack import to_haystack_messages  # noqa: E402


# ------------------------------------------------------------------------------------------------- inputs
def _logs() -> list[Path]:
    plain = REAL_LOGS / "openai-plain"
    real = sorted(plain.glob("*.json")) if plain.is_dir() else []
    return [*sample_paths("*.openai.json"), *real]


LOGS = _logs()
LOG_IDS = [p.name for p in LOGS]
_CONVERSATIONS: dict[Path, Conversation] = {}


def _conversation(path: Path) -> Conversation:
    if path not in _CONVERSATIONS:
        _CONVERSATIONS[path] = compaction.load(path)
    return _CONVERSATIONS[path]


def _window(conv: Conversation, fraction: float) -> int:
    """A context window that makes the whole log ``1/fraction`` windows long, so compaction fires repeatedly."""
    total = make_counter("approx").count(conv.messages, conv.tools)
    return max(int(total * fraction), 200)


def _dicts(messages: Sequence[Message]) -> list[dict]:
    return [message_to_haystack(m) for m in messages]


def _assert_same_calls(rep, calls, normalize=lambda d: d) -> None:
    """Call by call: the same messages sent, the same trigger/compaction/target and the same counts."""
    assert len(rep.steps) == len(calls)
    for step, call in zip(rep.steps, calls, strict=True):
        ours = [normalize(d) for d in _dicts([e.message for e in rep.entries_at(step.step) if not e.excluded])]
        theirs = [normalize(m.to_dict()) for m in call.messages]
        assert ours == theirs, f"step {step.step}: messages differ"
        assert (step.triggered, step.compacted, step.target) == (call.triggered, call.compacted, call.target), step
        assert (step.tokens_before, step.tokens_sent) == (call.tokens_before, call.tokens_sent), step


def _entries(messages: Sequence[Message]) -> list[Entry]:
    return [original(m, i) for i, m in enumerate(messages)]


def _call(name: str, call_id: str, **arguments) -> ToolCall:
    return ToolCall(call_id, name, arguments)


def _big(label: str, size: int = 2000) -> str:
    return (label + " ") * (size // (len(label) + 1))


# ------------------------------------------------------------------------------------------------- sliding window
SLIDING_GRID = [(0.5, 1, True), (0.25, 1, True), (0.25, 0, True), (0.35, 2, False)]


@pytest.mark.skipif(not LOGS, reason="no bundled samples or real logs")
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
@pytest.mark.parametrize(("fraction", "min_keep_steps", "with_note"), SLIDING_GRID)
def test_sliding_window_matches_haystack_call_by_call(path, fraction, min_keep_steps, with_note):
    conv = _conversation(path)
    window = _window(conv, fraction)
    note = "[{num_removed} earlier messages were removed from this conversation to free up context and cannot be " \
           "recovered.]" if with_note else ""
    rep = compaction.replay(conv, "haystack.sliding_window", {"min_keep_steps": min_keep_steps, "omission_note": note},
                            context_window=window)
    calls = drive_haystack_hook(conv, SlidingWindowCompactor(min_keep_steps=min_keep_steps, omission_note=note or None),
                                context_window=window)
    _assert_same_calls(rep, calls)
    assert any(s.compacted for s in rep.steps)


def _sliding(entries, target, **kwargs):
    from compaction.strategies.haystack import SlidingWindow

    compactor = SlidingWindow(**kwargs)
    compactor.start_report()
    return compactor.compact(entries, target, make_counter("approx"))


def _theirs_sliding(messages, target, **kwargs):
    from haystack.token_counters import ApproximateTokenCounter

    out = SlidingWindowCompactor(**kwargs).compact(to_haystack_messages(messages), target, ApproximateTokenCounter())
    return None if out is None else [m.to_dict() for m in out]


def _ours_dicts(entries):
    return None if entries is None else _dicts([e.message for e in entries])


def test_sliding_window_drops_orphans_and_leaves_a_dangling_call():
    """§1.9.1: a greeting before the first user message, a mid-task system message and a result separated from its
    call by a system reminder all go; the assistant whose result went keeps its call (dangling)."""
    c1, c2 = _call("search", "c1", q="x"), _call("read", "c2", path="a.py")
    messages = [
        system("You are helpful."),
        assistant("Hello! How can I help?"),
        user("first question"), assistant("first answer"),
        user("Do the task"),
        assistant(None, [c1]), tool(c1, _big("result one")),
        system("reminder: be brief"),
        assistant(None, [c2]), system("interrupt"), tool(c2, _big("result two")),
        assistant("done"),
    ]
    ours = _sliding(_entries(messages), 700)
    assert _ours_dicts(ours) == _theirs_sliding(messages, 700)
    kept = [e.origin for e in ours if e.origin is not None]
    assert 1 not in kept and 7 not in kept and 9 not in kept and 10 not in kept  # orphans removed
    assert 8 in kept  # assistant with call c2 kept, its result dropped: a dangling tool call


def test_sliding_window_num_removed_counts_this_pass_including_superseded_note():
    """§1.9.2: the second note says how many went in that pass, counting the superseded first note."""
    turns = []
    for i in range(6):
        turns += [user(f"question {i} " + _big("q", 400)), assistant(f"answer {i} " + _big("a", 400))]
    messages = [system("sys"), *turns, user("current task")]
    counter = make_counter("approx")
    first = _sliding(_entries(messages), counter.count(messages) // 2)
    note = next(e for e in first if e.inserted == "note")
    n_first = note.message.meta[COMPACTION_META_KEY]["removed_messages"]
    assert note.message.text.startswith(f"[{n_first} earlier messages")
    again = [e.message for e in first]
    second = _sliding(_entries(again), counter.count(again) // 2)
    note2 = next(e for e in second if e.inserted == "note")
    removed_now = sum(1 for e in _entries(again) if e.message not in [x.message for x in second])
    assert note2.message.meta[COMPACTION_META_KEY]["removed_messages"] == removed_now
    assert note2.message.text.startswith(f"[{removed_now} earlier")
    assert _ours_dicts(second) == _theirs_sliding(again, counter.count(again) // 2)


def test_sliding_window_stops_at_first_group_that_does_not_fit():
    """§1.9.6: a big newer turn stops the walk; smaller older turns are not considered."""
    messages = [system("sys"), user("small old"), assistant("ok"), user("big " + _big("x", 3000)), assistant("ok"),
                user("small recent"), assistant("ok"), user("task")]
    ours = _sliding(_entries(messages), 200)
    kept = [e.origin for e in ours if e.origin is not None]
    assert kept == [0, 5, 6, 7]
    assert _ours_dicts(ours) == _theirs_sliding(messages, 200)


def test_sliding_window_note_position():
    """§1.7.7: after the system block when only turns went; after the task anchor when steps went."""
    c = [_call("t", f"c{i}") for i in range(4)]
    turns_only = [system("sys"), user("old " + _big("o", 2000)), assistant("ok"), user("task"),
                  assistant(None, [c[0]]), tool(c[0], "small")]
    ours = _sliding(_entries(turns_only), 100)
    assert ours[1].inserted == "note" and ours[2].origin == 3
    steps = [system("sys"), user("task"), *[m for cc in c for m in (assistant(None, [cc]), tool(cc, _big("r")))]]
    ours = _sliding(_entries(steps), 700)
    assert [e.origin for e in ours[:2]] == [0, 1] and ours[2].inserted == "note"
    assert _ours_dicts(ours) == _theirs_sliding(steps, 700)


def test_sliding_window_declines_when_only_an_old_note_would_go_and_silent_mode():
    messages = [system("sys"), user("old " + _big("o", 2000)), assistant("ok"), user("task")]
    first = _sliding(_entries(messages), 100)
    again = [e.message for e in first]
    assert _sliding(_entries(again), 5) is None
    assert _theirs_sliding(again, 5) is None
    silent = _sliding(_entries(messages), 100, omission_note=None)
    assert all(e.inserted is None for e in silent) and [e.origin for e in silent] == [0, 3]
    assert _sliding(_entries(messages), 10_000) is None  # already under target


def test_sliding_window_validation_matches_haystack():
    from compaction.strategies.haystack import SlidingWindow

    with pytest.raises(ValueError) as theirs:
        SlidingWindowCompactor(min_keep_steps=-1)
    with pytest.raises(ValueError) as ours:
        SlidingWindow(min_keep_steps=-1)
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------------------------- summarization
class _Recording(Summarizer):
    """Our backend, recording each request and the text it returned (the stub generator replays them)."""

    name = "recording"

    def __init__(self, inner: Summarizer, log: list) -> None:
        self.inner, self.log = inner, log

    def text(self, request: SummaryRequest) -> str:
        text = self.inner.text(request)
        self.log.append((request, text))
        return text


class _StubGenerator:
    """A chat generator for haystack's SummarizationCompactor returning our summarizer's texts, in order, and noting
    any prompt that differs from ours byte for byte."""

    def __init__(self, log: list) -> None:
        self.log, self.calls, self.problems = log, 0, []

    def run(self, messages):
        if self.calls >= len(self.log):
            self.problems.append(f"unexpected call {self.calls}")
            return {"replies": [ChatMessage.from_assistant("x")]}
        request, text = self.log[self.calls]
        self.calls += 1
        if [m.role.value for m in messages] != ["system", "user"]:
            self.problems.append(f"call {self.calls}: roles {[m.role.value for m in messages]}")
        if messages[0].text != request.instruction or messages[1].text != request.transcript:
            self.problems.append(f"call {self.calls}: prompt differs")
        return {"replies": [ChatMessage.from_assistant(text)]}


@pytest.fixture
def recorded(monkeypatch):
    """Every summarizer a replay builds records into one shared log."""
    log: list = []
    original_summarizer = RunContext.summarizer

    def recording(self, params):
        return _Recording(original_summarizer(self, params), log)

    monkeypatch.setattr(RunContext, "summarizer", recording)
    return log


SUMMARY_GRID = [
    (0.5, 1, 1024, "extractive"),
    (0.25, 1, 256, "extractive"),
    (0.3, 0, 512, "fixed-size"),
]


@pytest.mark.skipif(not LOGS, reason="no bundled samples or real logs")
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
@pytest.mark.parametrize(("fraction", "min_keep_steps", "approx_tokens", "backend"), SUMMARY_GRID)
def test_summarization_matches_haystack_call_by_call(recorded, path, fraction, min_keep_steps, approx_tokens, backend):
    conv = _conversation(path)
    window = _window(conv, fraction)
    params = {"min_keep_steps": min_keep_steps, "approximate_summary_tokens": approx_tokens, "summarizer": backend}
    rep = compaction.replay(conv, "haystack.summarization", params, context_window=window)
    assert sum(len(s.model_calls) for s in rep.steps) == len(recorded) > 0
    generator = _StubGenerator(recorded)
    theirs = SummarizationCompactor(generator, min_keep_steps=min_keep_steps, approximate_summary_tokens=approx_tokens,
                                    summary_instruction=SUMMARY_INSTRUCTION)
    calls = drive_haystack_hook(conv, theirs, context_window=window)
    assert generator.problems == []
    assert generator.calls == len(recorded)
    _assert_same_calls(rep, calls)


class _FixedText(Summarizer):
    name = "fixed-text"

    def __init__(self, text: str) -> None:
        self.value = text

    def text(self, request: SummaryRequest) -> str:
        return self.value


def _summarize(messages, target, summarizer=None, **kwargs):
    compactor = Summarization(summarizer or ExtractiveSummarizer(), **kwargs)
    report = compactor.start_report()
    return compactor.compact(_entries(messages), target, make_counter("approx")), report


def _theirs_summarize(messages, target, text, **kwargs):
    from haystack.token_counters import ApproximateTokenCounter

    class Generator:
        prompts: list = []

        def run(self, messages):
            self.prompts.append(messages)
            return {"replies": [ChatMessage.from_assistant(text)]}

    generator = Generator()
    out = SummarizationCompactor(generator, summary_instruction=SUMMARY_INSTRUCTION, **kwargs).compact(
        to_haystack_messages(messages), target, ApproximateTokenCounter())
    return (None if out is None else [m.to_dict() for m in out]), generator.prompts


def _history_conversation(turns: int = 4) -> list[Message]:
    out = [system("sys")]
    for i in range(turns):
        c = _call("grep", f"call_{i}", pattern=f"p{i}")
        out += [user(f"request {i}"), assistant(None, [c]), tool(c, _big(f"match{i}", 1600)), assistant(f"done {i}")]
    c = _call("read", "call_now", path="now.py")
    return [*out, user("current task"), assistant(None, [c]), tool(c, _big("now", 1600))]


def test_summarization_tiers_and_quirks():
    """Tier 1 summarizes the fewest oldest turns; summaries sit at the old turn start and belong to no turn (§1.9.4);
    once no raw turn is left, tier 2 merges them and counts summaries, not messages (§1.9.3)."""
    messages = _history_conversation()
    counter = make_counter("approx")
    small = _FixedText("- short")
    out, report = _summarize(messages, counter.count(messages) - 300, small, approximate_summary_tokens=10)
    assert report.notes == ["historical_turns: summarized 4 messages"]
    assert out[1].inserted == "summary" and out[1].represents == (1, 2, 3, 4)
    assert out[1].message.meta[COMPACTION_META_KEY] == {"strategy": "summarization", "summarized_messages": 4}
    assert out[1].message.text == "<conversation_summary>\n- short\n</conversation_summary>"
    assert out[1].message.role == "user"
    # one turn per compaction: history ends up holding several summaries, then tier 2 merges two of them
    current = messages
    tiers = []
    for _ in range(5):
        target = counter.count(current) - 300
        out, report = _summarize(current, target, small, approximate_summary_tokens=10)
        theirs, _ = _theirs_summarize(current, target, "- short", approximate_summary_tokens=10)
        assert _ours_dicts(out) == theirs
        tiers += [n.split(":")[0] for n in report.notes]
        current = [e.message for e in out]
    assert tiers == ["historical_turns"] * 4 + ["historical_summaries"]
    # the merged summary counts the 4 summaries it combined, not the 16 messages behind them
    assert [m.meta[COMPACTION_META_KEY]["summarized_messages"] for m in current if COMPACTION_META_KEY in m.meta] \
        == [4]
    assert [m.role for m in current[:3]] == ["system", "user", "user"] and current[2].text == "current task"


def test_summarization_prompt_layout_with_ids_summaries_and_attachments():
    """The transcript renders tool-call ids, folds earlier summaries as [conversation_summary] and describes
    images and files with their type and identifying details."""
    from compaction.conversation import File
    from compaction.conversation import Image
    from compaction.conversation import ToolResult

    c = _call("screenshot", "call_img", url="https://example.org")
    shot = Message("tool", tool_result=ToolResult(c, ("page:", Image("image/png", meta={"url": "https://x.org/a.png",
                                                                                       "nested": {"a": 1}}))))
    doc = Message("user", texts=("see file",), files=(File("report.pdf", "application/pdf",
                                                            extra={"path": "/tmp/report.pdf", "pages": 3}),))
    earlier = user("<conversation_summary>\n- old facts\n</conversation_summary>",
                   context_compaction={"strategy": "summarization", "summarized_messages": 3})
    messages = [system("sys"), earlier, doc, assistant(None, [c]), shot, assistant("ok " + _big("x", 800)),
                user("task")]
    compactor = Summarization(ExtractiveSummarizer())
    request = compactor.request(messages, [1, 2, 3, 4, 5])
    assert request.transcript.startswith("<conversation_to_summarize>\n[conversation_summary]\n- old facts\n[user] see")
    assert "[user] <file: report.pdf, application/pdf, pages=3, path=/tmp/report.pdf>" in request.transcript
    assert "[assistant -> tool_call id=call_img] screenshot(" in request.transcript
    assert "[tool:screenshot id=call_img] page:<image: image/png, url=https://x.org/a.png>" in request.transcript
    assert request.transcript.endswith("\n</conversation_to_summarize>")
    theirs, prompts = _theirs_summarize(messages, 10, "- merged", approximate_summary_tokens=10)
    log: list = []
    ours, _ = _summarize(messages, 10, _Recording(_FixedText("- merged"), log), approximate_summary_tokens=10)
    assert _ours_dicts(ours) == theirs
    assert [(m[0].text, m[1].text) for m in prompts] == [(r.instruction, r.transcript) for r, _ in log]
    assert len(log) == 2 and "<image: image/png, url=https://x.org/a.png>" in log[0][0].transcript
    assert log[1][0].transcript.startswith("<conversation_to_summarize>\n[conversation_summary]\n- old facts\n")


def test_summarization_failures_did_not_reduce_and_empty_text():
    messages = _history_conversation(2)
    huge = _FixedText(_big("summary", 40_000))
    out, report = _summarize(messages, 100, huge)
    assert out is None and "did not reduce" in report.notes[0] and len(report.model_calls) == 1
    theirs, _ = _theirs_summarize(messages, 100, _big("summary", 40_000))
    assert theirs is None
    with pytest.raises(RuntimeError, match="did not reduce the conversation size"):
        _summarize(messages, 100, huge, raise_on_failure=True)
    out, report = _summarize(messages, 100, _FixedText("   "))
    assert out is None and "no usable text" in report.notes[0]
    assert _summarize(messages, 10**6)[0] is None  # under target: declines without a call


def test_summarization_floor_returns_none():
    """At the floor (system, anchor, the newest min_keep_steps steps) nothing may be given up."""
    c = _call("t", "c0")
    messages = [system("sys"), user("task " + _big("t", 2000)), assistant(None, [c]), tool(c, _big("r", 2000))]
    out, report = _summarize(messages, 10)
    assert out is None and report.model_calls == []
    assert _theirs_summarize(messages, 10, "- x")[0] is None


def test_summarization_validation_matches_haystack():
    for kwargs in ({"min_keep_steps": -1}, {"approximate_summary_tokens": 0}):
        with pytest.raises(ValueError) as theirs:
            SummarizationCompactor(object(), **kwargs)
        with pytest.raises(ValueError) as ours:
            Summarization(ExtractiveSummarizer(), **kwargs)
        assert str(ours.value) == str(theirs.value)


def test_summarization_summary_tokens_defaults_to_the_planning_estimate():
    info = get_strategy("haystack.summarization")
    ctx = RunContext(make_counter("approx"))
    runner = info.build(info.resolve_params({"approximate_summary_tokens": 300}), ctx)
    assert runner.compactors[0].summary_tokens == 300
    runner = info.build(info.resolve_params({"approximate_summary_tokens": 300, "summary_tokens": 64}), ctx)
    assert runner.compactors[0].summary_tokens == 64


# ------------------------------------------------------------------------------------------------- offloading
class _KeyStore:
    """A text-only ToolResultStore for haystack's compactor: the reference is the key, as in our in-memory store."""

    supports_binary_content = False

    def __init__(self) -> None:
        self.contents: dict[str, str] = {}

    def write(self, *, key: str, content):
        self.contents[key] = content
        return key

    def read(self, reference: str):
        return self.contents[reference]


_UUID_HEX = re.compile(r"(compacted_.+?_)[0-9a-f]{32}")


def _without_uuid(value):
    """Store keys with their uuid4 part blanked (the one thing that may differ between two correct runs)."""
    if isinstance(value, str):
        return _UUID_HEX.sub(r"\1<uuid>", value)
    if isinstance(value, list):
        return [_without_uuid(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_uuid(v) for k, v in value.items()}
    return value


OFFLOAD_GRID = [(0.5, 1, 200, 200), (0.3, 2, 50, 40), (0.25, 1, 0, 0)]


@pytest.mark.skipif(not LOGS, reason="no bundled samples or real logs")
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
@pytest.mark.parametrize(("fraction", "min_keep_steps", "min_tokens", "preview_chars"), OFFLOAD_GRID)
def test_offloading_matches_haystack_call_by_call(path, fraction, min_keep_steps, min_tokens, preview_chars):
    conv = _conversation(path)
    window = _window(conv, fraction)
    params = {"min_keep_steps": min_keep_steps, "min_tokens": min_tokens, "preview_chars": preview_chars}
    rep = compaction.replay(conv, "haystack.tool_result_offloading", params, context_window=window)
    store = _KeyStore()
    theirs = ToolResultOffloadCompactor(store, min_keep_steps=min_keep_steps, min_tokens=min_tokens,
                                        preview_chars=preview_chars)
    calls = drive_haystack_hook(conv, theirs, context_window=window)
    _assert_same_calls(rep, calls, normalize=_without_uuid)
    assert any(s.compacted for s in rep.steps) and store.contents


def _offload(messages, target, **kwargs):
    compactor = ToolResultOffload(InMemoryToolResultStore(), **kwargs)
    compactor.start_report()
    return compactor.compact(_entries(messages), target, make_counter("approx")), compactor.store


def _theirs_offload(messages, target, **kwargs):
    from haystack.token_counters import ApproximateTokenCounter

    out = ToolResultOffloadCompactor(_KeyStore(), **kwargs).compact(to_haystack_messages(messages), target,
                                                                    ApproximateTokenCounter())
    return None if out is None else [_without_uuid(m.to_dict()) for m in out]


def test_offloading_skip_rules_pointer_texts_and_meta():
    """Errors, already-offloaded results, results another compactor rewrote and empty results stay; the pointer
    names the reference, the length and a preview; several text blocks get numbered lines and suffixed keys."""
    from compaction.conversation import ToolResult

    calls = [_call("fetch", f"c{i}", n=i) for i in range(7)]
    results = [
        tool(calls[0], _big("error", 2000), error=True),
        tool(calls[1], _big("was", 2000), tool_result_offloaded=["compacted_fetch_x.txt"]),
        tool(calls[2], _big("pruned", 2000), context_compaction={"strategy": "tool_result_pruning"}),
        Message("tool", tool_result=ToolResult(calls[3], ("", ""))),
        tool(calls[4], "A" * 1500),
        Message("tool", tool_result=ToolResult(calls[5], ("B" * 900, "C" * 900))),
        tool(calls[6], "newest " * 300),
    ]
    messages = [system("sys"), user("task")]
    for c, r in zip(calls, results, strict=True):
        messages += [assistant(None, [c]), r]
    out, store = _offload(messages, 10, preview_chars=5)
    assert _ours_dicts(out) is not None
    assert _without_uuid(_ours_dicts(out)) == _theirs_offload(messages, 10, preview_chars=5)
    changed = {e.origin for e in out if e.pruned}
    assert changed == {11, 13}  # the plain and the two-block result; the newest step is protected
    single = out[11].message
    key = single.meta["tool_result_offloaded"][0]
    assert re.fullmatch(r"compacted_fetch_[0-9a-f]{32}\.txt", key) and store.read(key) == "A" * 1500
    assert single.tool_result.result == f"Tool result offloaded to text (1500 characters) at '{key}'. Preview: AAAAA..."
    assert single.meta[COMPACTION_META_KEY] == {"strategy": "tool_result_offloading",
                                                "original_tokens": make_counter("approx").count_one(messages[11])}
    multi = out[13].message
    refs = multi.meta["tool_result_offloaded"]
    assert [r[-6:] for r in refs] == ["_0.txt", "_1.txt"] and refs[0][:-6] == refs[1][:-6]
    assert multi.tool_result.result.splitlines() == [
        "Tool result offloaded to 2 files:",
        f"1. text (900 characters) at '{refs[0]}'. Preview: BBBBB...",
        f"2. text (900 characters) at '{refs[1]}'. Preview: CCCCC...",
    ]


def test_offloading_keys_are_reproducible_per_replay():
    log = _history_conversation(3)
    conv = Conversation(tuple(log))
    first = compaction.replay(conv, "haystack.tool_result_offloading", context_window=1500)
    second = compaction.replay(conv, "haystack.tool_result_offloading", context_window=1500)
    keys = [[e.message.meta.get("tool_result_offloaded") for e in r.entries_at(len(r.steps) - 1)] for r in (first,
                                                                                                            second)]
    assert keys[0] == keys[1] and any(keys[0])


def test_offloading_validation_matches_haystack():
    for kwargs in ({"min_keep_steps": 0}, {"min_tokens": -1}, {"preview_chars": -1}):
        with pytest.raises(ValueError) as theirs:
            ToolResultOffloadCompactor(_KeyStore(), **kwargs)
        with pytest.raises(ValueError) as ours:
            ToolResultOffload(InMemoryToolResultStore(), **kwargs)
        assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------------------------- stack
class _AgentState:
    """The part of the Agent's ``State`` the compaction hooks use (``data`` and ``set``)."""

    def __init__(self, tools) -> None:
        self.data = {"messages": [], "context_tokens": 0, "tools": tools}

    def set(self, key, value, handler_override=None) -> None:
        self.data[key] = value


def _drive_stack(conv: Conversation, compactors, window: int) -> list[tuple[list, int]]:
    """Run one real CompactionHook per compactor, registered in order under before_llm, before each LLM call."""
    from haystack.hooks.compaction import CompactionHook
    from haystack.hooks.invocation import _run_hooks
    from haystack.hooks.protocol import BEFORE_LLM

    from compaction.interop.haystack import to_haystack_message
    from compaction.interop.haystack import to_haystack_tools

    hooks = [CompactionHook(c, context_window=window) for c in compactors]
    tools = to_haystack_tools(conv.tools)
    state = _AgentState(tools)
    sent = []
    for message in conv.messages:
        if message.role == "assistant":
            _run_hooks({BEFORE_LLM: hooks}, BEFORE_LLM, state)
            messages = list(state.data["messages"])
            sent.append((messages, hooks[0].token_counter.count(messages=messages, tools=tools or None)))
        state.data["messages"] = [*state.data["messages"], to_haystack_message(message)]
    return sent


@pytest.mark.skipif(not LOGS, reason="no bundled samples or real logs")
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
@pytest.mark.parametrize("second", ["sliding_window", "summarization"])
def test_stack_matches_two_real_hooks_in_order(recorded, path, second):
    conv = _conversation(path)
    window = _window(conv, 0.3)
    params = {"second": second, "prune_min_tokens": 100, "second_approximate_summary_tokens": 256}
    rep = compaction.replay(conv, "haystack.stack", params, context_window=window)
    generator = _StubGenerator(recorded)
    backup = (SlidingWindowCompactor() if second == "sliding_window" else
              SummarizationCompactor(generator, approximate_summary_tokens=256, summary_instruction=SUMMARY_INSTRUCTION))
    sent = _drive_stack(conv, [ToolResultPruningCompactor(min_tokens=100), backup], window)
    assert generator.problems == [] and generator.calls == len(recorded)
    assert len(sent) == len(rep.steps)
    for step, (messages, tokens) in zip(rep.steps, sent, strict=True):
        assert _dicts([e.message for e in rep.entries_at(step.step)]) == [m.to_dict() for m in messages], step
        assert step.tokens_sent == tokens
    assert any(s.compacted for s in rep.steps)


def _stack_runner(window: int = 4000, **params):
    info = get_strategy("haystack.stack")
    return info.build(info.resolve_params(params), RunContext(make_counter("approx"), context_window=window))


def test_stack_runs_pruning_first_and_the_backup_only_when_still_over_the_trigger():
    from compaction.strategies.haystack import SlidingWindow
    from compaction.strategies.haystack import ToolResultPruning

    runner = _stack_runner(2000, second="sliding_window")
    assert [type(c) for c in runner.compactors] == [ToolResultPruning, SlidingWindow]
    # large old results: pruning alone brings the context under the trigger, the backup hook does not fire
    for i, m in enumerate(_history_conversation(3)):
        runner.append(original(m, i))
    outcome = runner.before_call()
    assert outcome.compacted and outcome.note.startswith("pruned ") and "removed" not in outcome.note
    # small results only: pruning declines, the sliding window (measuring the same state) removes turns
    runner = _stack_runner(second="sliding_window")
    messages = [system("sys")]
    for i in range(12):
        messages += [user(f"question {i} " + _big("q", 1200)), assistant(f"answer {i}")]
    for i, m in enumerate([*messages, user("task")]):
        runner.append(original(m, i))
    outcome = runner.before_call()
    assert outcome.note.startswith("tool_result_pruning declined") and "omission note inserted" in outcome.note
    assert outcome.tokens_sent < 0.7 * 4000


def test_stack_params_are_prefixed_and_validated_like_the_parts():
    info = get_strategy("haystack.stack")
    names = [p.name for p in info.params]
    assert names[:4] == ["prune_min_keep_steps", "prune_min_tokens", "prune_placeholder", "prune_skip_meta_keys"]
    assert {"second", "second_min_keep_steps", "second_approximate_summary_tokens", "second_omission_note"} <= set(names)
    with pytest.raises(ValueError, match="parameter 'prune_min_keep_steps': expected a value from 1 to 50, got 0"):
        _stack_runner(prune_min_keep_steps=0)  # the registry's range, the part's own (below) behind it
    from compaction.strategies.haystack import ToolResultPruning

    with pytest.raises(ValueError, match="`min_keep_steps` must be at least 1"):
        ToolResultPruning(min_keep_steps=0)
    assert _stack_runner(second="sliding_window", second_min_keep_steps=0).compactors[1].min_keep_steps == 0
    with pytest.raises(ValueError, match="expected one of summarization, sliding_window"):
        info.resolve_params({"second": "pruning"})


def test_registered_haystack_strategies_have_documented_params():
    for name in ("haystack.sliding_window", "haystack.summarization", "haystack.tool_result_offloading",
                 "haystack.stack"):
        info = get_strategy(name)
        assert info.summary and info.docs_url.startswith("https://")
        for p in info.params:
            assert p.help.strip() and p.coerce(p.default) == p.default, (name, p.name)
    defaults = get_strategy("haystack.summarization").defaults()
    assert (defaults["min_keep_steps"], defaults["approximate_summary_tokens"], defaults["raise_on_failure"]) == (
        1, 1024, False)
    assert get_strategy("haystack.tool_result_offloading").defaults() == {
        "min_keep_steps": 1, "min_tokens": 200, "preview_chars": 200}


def test_offloading_min_keep_steps_counts_steps_of_the_whole_conversation():
    """§1.9.5: the protected tool-calling step may belong to an earlier turn when the current task has none."""
    old, newer = _call("fetch", "c_old", n=1), _call("fetch", "c_new", n=2)
    messages = [system("sys"), user("first"), assistant(None, [old]), tool(old, _big("old", 2000)),
                user("second"), assistant(None, [newer]), tool(newer, _big("newer", 2000)), assistant("done"),
                user("current task, no tools yet")]
    out, _ = _offload(messages, 10)
    assert [e.origin for e in out if e.pruned] == [3]  # index 6 is protected though it is in a historical turn
    assert _without_uuid(_ours_dicts(out)) == _theirs_offload(messages, 10)


def test_fates_dropped_for_the_sliding_window_collapsed_for_summaries():
    conv = Conversation(tuple(_history_conversation(4)))
    window = 1800
    slide = compaction.replay(conv, "haystack.sliding_window", context_window=window)
    step = next(s for s in slide.steps if s.compacted)
    fates = slide.fates_at(step.step)
    assert fates and set(fates.values()) == {"dropped"}
    assert any(item.inserted_kind == "note" for item in slide.context_at(step.step))
    summ = compaction.replay(conv, "haystack.summarization", {"approximate_summary_tokens": 64},
                             context_window=window)
    step = next(s for s in summ.steps if s.compacted)
    assert set(summ.fates_at(step.step).values()) == {"collapsed"}
    assert step.model_calls and "historical_turns" in step.note


def test_raise_on_failure_stops_the_replay_with_a_clear_error():
    conv = Conversation(tuple(_history_conversation(4)))
    params = {"raise_on_failure": True, "summarizer": "fixed-size", "summary_tokens": 5000}
    with pytest.raises(ValueError, match="raise_on_failure is set.*did not reduce"):
        compaction.replay(conv, "haystack.summarization", params, context_window=1800)
    rep = compaction.replay(conv, "haystack.summarization", {**params, "raise_on_failure": False}, context_window=1800)
    declined = next(s for s in rep.steps if s.triggered)
    assert not declined.compacted and "did not reduce" in declined.note and declined.model_calls
