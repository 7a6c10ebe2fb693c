"""Differential test: haystack-ai's real ``CompactionHook`` + ``ToolResultPruningCompactor``, driven call by call
over real logs exactly as the Haystack Agent drives its ``before_llm`` hooks, against our replay of
``haystack.tool_result_pruning``: the same estimate, trigger, target and decision at every call, and the same
messages sent (text, tool calls, and the ``context_compaction`` meta of every pruned result)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.conversation import COMPACTION_META_KEY
from compaction.interop.haystack import HookCall
from compaction.interop.haystack import chat_message_view
from compaction.interop.haystack import differences
from compaction.interop.haystack import drive_haystack_hook
from compaction.interop.haystack import from_haystack_message
from compaction.interop.haystack import from_haystack_messages
from compaction.interop.haystack import message_view
from compaction.interop.haystack import to_haystack_messages
from compaction.interop.haystack import to_haystack_tools
from compaction.policy import ThresholdPolicy
from compaction.strategies.haystack import ToolResultPruning
from compaction.tiktoken_offline import EncodingUnavailable
from compaction.tiktoken_offline import get_encoding

hooks = pytest.importorskip("haystack.hooks.compaction")
haystack_counters = pytest.importorskip("haystack.token_counters")

pytestmark = pytest.mark.filterwarnings("ignore::haystack.utils.experimental.ExperimentalWarning")


def openai_logs() -> list[Path]:
    plain = REAL_LOGS / "openai-plain"
    return [*sample_paths("*.openai.json"), *(sorted(plain.glob("*.json")) if plain.is_dir() else [])]


LOGS = openai_logs()


@dataclass(frozen=True)
class Setup:
    """One grid point: the window is the log's uncompacted peak divided by ``peak_ratio``."""

    peak_ratio: float
    compact_at: float
    compact_to: float
    min_keep_steps: int
    min_tokens: int
    #: compactions this setup must produce on every log (so the comparison covers real work)
    at_least: int = 2

    def __str__(self) -> str:
        return (f"peak/{self.peak_ratio}-at{self.compact_at}-to{self.compact_to}-keep{self.min_keep_steps}"
                f"-min{self.min_tokens}")


GRID = (
    Setup(1.2, 0.7, 0.4, 1, 200),
    Setup(2.5, 0.7, 0.4, 1, 200),
    Setup(2.0, 0.9, 0.5, 2, 50),
    Setup(3.0, 0.6, 0.3, 3, 0),
    Setup(4.0, 0.8, 0.2, 1, 100),
    Setup(1.5, 1.0, 0.8, 1, 500, at_least=1),
)
COUNTERS = ("approx", "tiktoken:o200k_base")


def haystack_counter(spec: str) -> Any:
    if spec == "approx":
        return haystack_counters.ApproximateTokenCounter()
    encoding = spec.partition(":")[2]
    try:
        get_encoding(encoding)  # seeds tiktoken's cache from bpe-openai when offline
    except EncodingUnavailable as exc:
        pytest.skip(f"tiktoken encoding {encoding} unavailable: {exc}")
    return haystack_counters.TiktokenCounter(encoding)


_PEAKS: dict[tuple[Path, str], int] = {}


def uncompacted_peak(path: Path, conversation: compaction.Conversation, spec: str) -> int:
    key = (path, spec)
    if key not in _PEAKS:
        baseline = compaction.replay(conversation, "haystack.tool_result_pruning", context_window=10**12, counter=spec)
        _PEAKS[key] = max(s.tokens_uncompacted for s in baseline.steps)
    return _PEAKS[key]


def assert_same_calls(replay: compaction.Replay, calls: list[HookCall]) -> None:
    assert len(replay.steps) == len(calls)
    for step, call in zip(replay.steps, calls, strict=True):
        where = f"call {step.step} (message {step.message_index})"
        assert step.message_index == call.message_index, where
        assert step.tokens_before == call.tokens_before, where
        assert step.triggered == call.triggered, where
        assert step.target == call.target, where
        assert step.compacted == call.compacted, where
        assert step.tokens_sent == call.tokens_sent, where
        ours = [message_view(item.message) for item in replay.context_at(step.step)]
        theirs = [chat_message_view(m) for m in call.messages]
        assert ours == theirs, where
    assert differences(replay, calls) == []


# ------------------------------------------------------------------------------------------------- the grid
@pytest.mark.parametrize("spec", COUNTERS)
@pytest.mark.parametrize("setup", GRID, ids=str)
@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_real_hook_and_replay_agree_call_by_call(log: Path, setup: Setup, spec: str):
    conversation = compaction.load(log)
    window = int(uncompacted_peak(log, conversation, spec) / setup.peak_ratio)
    params = {"min_keep_steps": setup.min_keep_steps, "min_tokens": setup.min_tokens}
    ours = compaction.replay(conversation, "haystack.tool_result_pruning", params, context_window=window,
                             compact_at=setup.compact_at, compact_to=setup.compact_to, counter=spec)
    theirs = drive_haystack_hook(
        conversation,
        hooks.ToolResultPruningCompactor(**params),
        context_window=window,
        compact_at=setup.compact_at,
        compact_to=setup.compact_to,
        token_counter=haystack_counter(spec),
    )
    compactions = sum(call.compacted for call in theirs)
    assert compactions >= setup.at_least, f"window {window} compacted only {compactions} times; pick a smaller one"
    assert_same_calls(ours, theirs)
    pruned = sum(item.fate == "pruned" for item in ours.context_at(len(ours.steps) - 1))
    last_sent = theirs[-1].messages
    assert pruned == sum(COMPACTION_META_KEY in m.meta for m in last_sent) > 0


def every_real_log() -> list[Path]:
    """Every real log in ../shared/real_logs, whatever its format (empty when the folder is absent)."""
    if not REAL_LOGS.is_dir():
        return []
    return sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.name != "README.md")


ALL_REAL = every_real_log()


@pytest.mark.parametrize("spec", COUNTERS)
@pytest.mark.parametrize("peak_ratio", (1.5, 3.0))
@pytest.mark.parametrize("log", ALL_REAL, ids=[p.name[:60] for p in ALL_REAL])
def test_every_real_log_agrees_call_by_call(log: Path, peak_ratio: float, spec: str):
    """Whatever the reader made of the log (Claude Code results with several text blocks, Codex, SWE-agent, …),
    the real hook and our replay send the same thing at every call."""
    conversation = compaction.load(log)
    if not conversation.llm_call_indices:
        pytest.skip("no LLM call in this log")
    window = max(1, int(uncompacted_peak(log, conversation, spec) / peak_ratio))
    ours = compaction.replay(conversation, "haystack.tool_result_pruning", {"min_tokens": 50}, context_window=window,
                             counter=spec)
    theirs = drive_haystack_hook(conversation, hooks.ToolResultPruningCompactor(min_tokens=50),
                                 context_window=window, token_counter=haystack_counter(spec))
    assert_same_calls(ours, theirs)
    assert sum(call.triggered for call in theirs) >= 1


def test_tool_schemas_are_counted_by_both():
    """With tool schemas the estimate includes them and the target subtracts them, in both implementations."""
    path = REAL_LOGS / "openai-chat" / "OpenHands__llm_completions__claude-3-5-sonnet__django-10097.json"
    if not path.exists():
        pytest.skip("the OpenHands completion log (with tool schemas) is not available")
    conversation = compaction.load(path)
    assert conversation.tools
    window = int(uncompacted_peak(path, conversation, "approx") / 2)
    ours = compaction.replay(conversation, "haystack.tool_result_pruning", context_window=window)
    theirs = drive_haystack_hook(conversation, hooks.ToolResultPruningCompactor(), context_window=window,
                                 token_counter=haystack_counter("approx"))
    assert sum(c.compacted for c in theirs) >= 2
    assert_same_calls(ours, theirs)
    without = drive_haystack_hook(conversation, hooks.ToolResultPruningCompactor(), context_window=window,
                                  token_counter=haystack_counter("approx"), tools=())
    assert theirs[0].tokens_before > without[0].tokens_before


def test_driver_uses_the_hooks_default_counter():
    """``token_counter=None`` is the hook's own default, ``ApproximateTokenCounter()`` (our ``approx``)."""
    path = REAL_LOGS / "openai-plain" / "tau-bench__task2-trial1.json"
    if not path.exists():
        pytest.skip("tau-bench log not available")
    conversation = compaction.load(path)
    calls = drive_haystack_hook(conversation, hooks.ToolResultPruningCompactor(min_tokens=20), context_window=4000)
    ours = compaction.replay(conversation, "haystack.tool_result_pruning", {"min_tokens": 20}, context_window=4000)
    assert sum(c.compacted for c in calls) >= 2
    assert_same_calls(ours, calls)


# ------------------------------------------------------------------------------------------------- validation
THRESHOLDS = [
    (0, 0.7, 0.4), (-10, 0.7, 0.4), (1000, 0.4, 0.4), (1000, 0.3, 0.4), (1000, 1.1, 0.4), (1000, 0.7, 0.0),
    (1000, 0.7, -0.1), (1000, 1.0, 0.99), (1, 0.7, 0.4), (200_000, 0.7, 0.4), (1000, 0.0, 0.0),
]


@pytest.mark.parametrize(("window", "at", "to"), THRESHOLDS)
def test_threshold_validation_matches_the_hook(window: int, at: float, to: float):
    theirs = ours = None
    try:
        hooks.CompactionHook(hooks.ToolResultPruningCompactor(), context_window=window, compact_at=at, compact_to=to)
    except ValueError as exc:
        theirs = str(exc)
    try:
        ThresholdPolicy(window, at, to)
    except ValueError as exc:
        ours = str(exc)
    assert ours == theirs


PRUNING = [(0, 200), (-1, 200), (1, -1), (0, -1), (1, 0), (3, 0), (1, 200), (50, 100_000)]


@pytest.mark.parametrize(("keep", "min_tokens"), PRUNING)
def test_pruning_validation_matches_the_compactor(keep: int, min_tokens: int):
    theirs = ours = None
    try:
        hooks.ToolResultPruningCompactor(min_keep_steps=keep, min_tokens=min_tokens)
    except ValueError as exc:
        theirs = str(exc)
    try:
        ToolResultPruning(keep, min_tokens)
    except ValueError as exc:
        ours = str(exc)
    assert ours == theirs


def test_some_settings_are_rejected_by_both():
    """The validation grids above include both accepted and rejected settings."""
    rejected = 0
    for window, at, to in THRESHOLDS:
        try:
            ThresholdPolicy(window, at, to)
        except ValueError:
            rejected += 1
    assert 0 < rejected < len(THRESHOLDS)


# ------------------------------------------------------------------------------------------------- interop
def test_differences_reports_a_real_disagreement():
    """The comparison helper the benchmark relies on is not blind: different settings show up call by call."""
    path = REAL_LOGS / "openai-plain" / "mini-swe-agent__astropy-12907.json"
    if not path.exists():
        pytest.skip("mini-swe-agent log not available")
    conversation = compaction.load(path)
    window = int(uncompacted_peak(path, conversation, "approx") / 2.5)
    ours = compaction.replay(conversation, "haystack.tool_result_pruning", {"min_tokens": 100}, context_window=window)
    theirs = drive_haystack_hook(conversation, hooks.ToolResultPruningCompactor(min_tokens=200), context_window=window)
    found = differences(ours, theirs)
    assert any("tokens_sent" in line for line in found)
    assert any("messages sent differ" in line for line in found)
    assert differences(ours, theirs[:-1]) == [f"{len(ours.steps)} LLM calls replayed, {len(theirs) - 1} driven "
                                              f"through the hook"]


@pytest.mark.parametrize("log", LOGS, ids=[p.name for p in LOGS])
def test_conversion_round_trips_through_chat_message(log: Path):
    conversation = compaction.load(log)
    converted = to_haystack_messages(conversation)
    assert len(converted) == len(conversation.messages)
    back = from_haystack_messages(converted)
    assert all(a.same_content(b) for a, b in zip(conversation.messages, back, strict=True))
    assert [message_view(m) for m in conversation.messages] == [chat_message_view(c) for c in converted]


def test_a_chat_message_with_several_results_becomes_several_tool_messages():
    from haystack.dataclasses import ChatMessage
    from haystack.dataclasses import ToolCall
    from haystack.dataclasses import ToolCallResult

    first, second = ToolCall("read", {"path": "a.py"}, id="c1"), ToolCall("read", {"path": "b.py"}, id="c2")
    both = ChatMessage.from_dict({"role": "tool", "meta": {}, "name": None, "content": [
        {"tool_call_result": ToolCallResult("A", first, False).to_dict()},
        {"tool_call_result": ToolCallResult("B", second, True).to_dict()},
    ]})
    split = from_haystack_messages([both])
    assert [(m.role, m.tool_result.result, m.tool_result.call_id, m.tool_result.error) for m in split] == [
        ("tool", "A", "c1", False), ("tool", "B", "c2", True)]
    with pytest.raises(ValueError, match="2 tool results"):
        from_haystack_message(both)
    assert from_haystack_message(ChatMessage.from_user("hi")).texts == ("hi",)


def test_tool_schemas_become_haystack_tools_with_the_same_spec():
    path = REAL_LOGS / "openai-chat" / "OpenHands__llm_completions__claude-3-5-sonnet__django-10097.json"
    if not path.exists():
        pytest.skip("the OpenHands completion log (with tool schemas) is not available")
    schemas = compaction.load(path).tools
    tools = to_haystack_tools(schemas)
    assert [t.tool_spec for t in tools] == [s.spec() for s in schemas]
    assert tools[0].invoke() == ""  # the replay never runs tools: a no-op stands behind each schema


def test_interop_imports_no_framework_until_used():
    import subprocess
    import sys

    code = ("import sys, compaction, compaction.interop, compaction.interop.haystack; "
            "assert 'haystack' not in sys.modules and 'agent_framework' not in sys.modules, sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
