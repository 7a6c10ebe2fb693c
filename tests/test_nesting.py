"""Any registered strategy nested in a composite host (.NET PipelineCompactionStrategy, Python
TokenBudgetComposedStrategy) through ``compaction.strategies._nesting``: the child acts on the host's included
messages with its own trigger, and its edits come back in the host's terms (pruned / dropped with the child's name /
inserted with collapsed originals)."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest
from conftest import SAMPLES

import compaction
from compaction.cli import main
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import original
from compaction.strategies import RunContext
from compaction.strategies import get_strategy
from compaction.strategies._nesting import FED_POSITION
from compaction.strategies._nesting import NestedStrategy
from compaction.strategies._nesting import make_nested
from compaction.strategies.agent_framework import SUMMARY_FLAG
from compaction.strategies.agent_framework import MessageIndex
from compaction.strategies.agent_framework import NestedDotnetChild
from compaction.strategies.anthropic import CLEARED_RESULT_STAND_IN
from compaction.strategies.haystack import PRUNING_PLACEHOLDER
from compaction.tokens import make_counter

DOTNET = "agent_framework.pipeline"
PYTHON = "agent_framework_python.token_budget_composed"
DOTNET_CHILDREN = "haystack.tool_result_pruning(min_keep_steps=2); agent_framework.truncation(minimum_preserved_groups=4)"
PYTHON_CHILDREN = "anthropic.clear_tool_uses_20250919(trigger_value=15000, keep=2); sliding_window(keep_last_groups=12)"


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def sample() -> Conversation:
    return compaction.load(SAMPLES / "coding_agent.openai.json")


def session(steps: int = 8) -> Conversation:
    """A hand-built coding session: the agent reads textwrap.py in chunks, then answers."""
    source = Path(textwrap.__file__).read_text(encoding="utf-8")
    messages = [system("You are a coding agent. Read files with read_file before answering."),
                user("Where does textwrap expand tabs, and what does it do with them? Quote the code.")]
    for i in range(steps):
        call = ToolCall(id=f"call_{i}", name="read_file", arguments={"path": "textwrap.py", "offset": i * 2400})
        messages += [assistant(f"Reading textwrap.py from offset {i * 2400}.", [call]),
                     tool(call, source[i * 2400:(i + 1) * 2400])]
    messages.append(assistant("TextWrapper._munge_whitespace calls text.expandtabs(self.tabsize) when expand_tabs."))
    return Conversation(tuple(messages), (), Source("test"))


def before_compaction(rep, k: int) -> list[Message]:
    """What the host held right before call ``k`` compacted: what call k-1 sent, plus the messages appended since."""
    messages = rep.conversation.messages
    if k == 0:
        return list(messages[: rep.steps[0].message_index])
    return [*rep.messages_at(k - 1), *messages[rep.steps[k - 1].message_index: rep.steps[k].message_index]]


def newly(rep, k: int, fate: str) -> set[int]:
    now = {i for i, f in rep.fates_at(k).items() if f == fate}
    return now - ({i for i, f in rep.fates_at(k - 1).items() if f == fate} if k else set())


def assert_tool_pairs_together(rep) -> None:
    """Every sent tool result has its call sent before it, and every sent call its results (those logged so far)."""
    messages = rep.conversation.messages
    for k, step in enumerate(rep.steps):
        sent = rep.messages_at(k)
        calls_sent = {c.id for m in sent for c in m.tool_calls}
        results_sent = {m.tool_result.call_id for m in sent if m.tool_result is not None}
        logged = {m.tool_result.call_id for m in messages[: step.message_index] if m.tool_result is not None}
        assert results_sent <= calls_sent, f"call {k}: a result without its call"
        assert (calls_sent & logged) <= results_sent, f"call {k}: a call without its result"


# ------------------------------------------------------------------------------------------------ .NET host
def test_dotnet_pipeline_prunes_with_haystack_only_when_its_threshold_fires(sample):
    rep = compaction.replay(sample, DOTNET, {"children": DOTNET_CHILDREN}, context_window=20_000)
    counter, trigger = make_counter("approx"), 20_000 * 0.7
    acted = 0
    for k, step in enumerate(rep.steps):
        fires = counter.count(before_compaction(rep, k), sample.tools) >= trigger  # Haystack's own CompactionHook
        assert ("1. haystack.tool_result_pruning:" in step.note) == fires, (k, step.note)
        pruned = newly(rep, k, "pruned")
        if not fires:
            assert not pruned
            continue
        acted += bool(pruned)
        items = {item.index: item for item in rep.context_at(k)}
        for i in pruned:
            item = items[i]
            assert item.fate == "pruned"
            assert item.message.tool_result.text == PRUNING_PLACEHOLDER.replace("{tool_name}", item.message.tool_result.tool_name)
    assert acted >= 3
    # the host's own child still does its own thing: truncation drops whole groups with the .NET reason
    dropped = [item for item in rep.context_at(len(rep.steps) - 1, include_removed=True) if item.fate == "dropped"]
    assert dropped and {item.excluded_reason for item in dropped} == {"Truncated by TruncationCompactionStrategy"}
    assert_tool_pairs_together(rep)


def test_dotnet_pipeline_leaves_everything_when_no_trigger_fires(sample):
    rep = compaction.replay(sample, DOTNET, {"children": DOTNET_CHILDREN}, context_window=1_000_000)
    assert not any(s.triggered or s.compacted for s in rep.steps)
    assert all(not rep.fates_at(k) for k in range(len(rep.steps)))


def test_dotnet_own_family_dotted_names_are_the_native_children(sample):
    dotted = compaction.replay(sample, DOTNET, {"children": "agent_framework.tool_result_compaction("
                                                "minimum_preserved_groups=4); agent_framework.truncation"},
                               context_window=20_000)
    short = compaction.replay(sample, DOTNET, {"children": "tool_result_compaction(minimum_preserved_groups=4); "
                                               "truncation"}, context_window=20_000)
    assert any(s.compacted for s in short.steps)
    assert [dotted.step_json(s) for s in dotted.steps] == [short.step_json(s) for s in short.steps]


def test_dotnet_removals_are_excluded_with_the_childs_name_and_notes_become_summary_groups():
    conv = session()
    rep = compaction.replay(conv, DOTNET, {"children": "haystack.sliding_window(min_keep_steps=2); "
                                           "truncation(trigger=Never())"}, context_window=4_000)
    k = next(k for k, s in enumerate(rep.steps) if s.compacted)
    assert rep.steps[k].note.startswith("1. haystack.sliding_window:")
    items = rep.context_at(k, include_removed=True)
    dropped = [i for i in items if i.fate == "dropped"]
    assert dropped and all(i.excluded_reason == "haystack.sliding_window" for i in dropped)
    notes = [i for i in items if i.fate == "inserted"]
    assert len(notes) == 1 and "earlier messages were removed" in notes[0].message.text
    assert notes[0].message.meta[SUMMARY_FLAG] is True and notes[0].message.role == "user"
    assert_tool_pairs_together(rep)


def test_dotnet_nested_summary_is_inserted_and_its_originals_collapsed():
    conv = session()
    rep = compaction.replay(conv, DOTNET, {"children": "haystack.summarization(min_keep_steps=2); "
                                           "truncation(trigger=Never())"}, context_window=4_000)
    k = next(k for k, s in enumerate(rep.steps) if s.compacted)
    summaries = [i for i in rep.context_at(k) if i.fate == "inserted"]
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary.message.text.startswith("<conversation_summary>") and summary.message.meta[SUMMARY_FLAG] is True
    assert summary.represents and {rep.fates_at(k)[i] for i in summary.represents} == {"collapsed"}
    assert rep.steps[k].model_calls  # the child's summarizer call is reported by the host
    assert_tool_pairs_together(rep)


def test_dotnet_index_excludes_part_of_a_group_when_a_child_removes_only_some_of_it():
    conv = session(4)
    counter = make_counter("maf-dotnet")
    index = MessageIndex(counter)
    for i, m in enumerate(conv.messages[:-1]):
        index.append(original(m, i))
    index.end_batch()
    group = next(g for g in index.included() if g.kind == "ToolCall")
    call_entry = group.live_entries[0]
    index.exclude_entries(group, [call_entry], "child")  # what a child that removed only the call leads to
    assert [e.message.role for e in group.live_entries] == ["tool"]  # its call went, its result stayed
    sent = [e for e in index.entries() if not e.excluded]
    assert index.included_messages == len(sent) == len(conv.messages) - 2
    assert index.included_tokens == sum(counter.count(g.messages) for g in index.included())
    assert {e.exclude_reason for e in index.entries() if e.excluded} == {"child"}


def test_dotnet_child_removals_are_excluded_with_the_child_name():
    conv = session(4)
    ctx = RunContext(make_counter("maf-dotnet"), context_window=3_000)
    index = MessageIndex(ctx.counter)
    for i, m in enumerate(conv.messages[:-1]):
        index.append(original(m, i))
    index.end_batch()
    child = NestedDotnetChild(make_nested("openhands.recent_events", {"keep_first": "2", "max_events": "3"}, {}, ctx,
                                          "child"))
    triggered, changed, note = child.compact(index)
    assert triggered and changed and note.startswith("kept 3 of")
    # the tail's lone tool result lost its call, so OpenHands' ConversationMemory leaves it out too
    sent = [e for e in index.entries() if not e.excluded]
    assert [e.message.role for e in sent] == ["system", "user"]
    assert index.included_tokens == sum(ctx.counter.count(g.messages) for g in index.included())
    gone = [e for e in index.entries() if e.excluded]
    assert gone and {e.exclude_reason for e in gone} == {"openhands.recent_events"}


@pytest.mark.parametrize("name", sorted(compaction.strategies()))
@pytest.mark.parametrize("host, extra", [(DOTNET, {}), (PYTHON, {"token_budget": 2_000})])
def test_every_registered_strategy_can_be_nested(host, extra, name):
    conv = session()
    child = f"{name}(max_output_tokens=1000)" if name.endswith(".context_window") else name  # window < default
    rep = compaction.replay(conv, host, {**extra, "children": f"{child}; truncation"}, context_window=3_000)
    host_reasons = {"Truncated by TruncationCompactionStrategy", "truncation", "token_budget_fallback",
                    "token_budget_fallback_strict"}
    for k in range(len(rep.steps)):
        items = rep.context_at(k, include_removed=True)
        indices = [i.index for i in items if i.index is not None]
        assert indices == sorted(set(indices))  # each original once, in order
        for item in items:
            if item.fate == "dropped" and item.excluded_reason not in host_reasons:
                assert item.excluded_reason in (name, None) or item.excluded_reason.startswith(
                    ("Collapsed by", "Summarized by", "Excluded by", "tool_", "summarized", "sliding_window"))


# ------------------------------------------------------------------------------------------------ Python host
def test_python_token_budget_clears_with_anthropic_only_when_both_fire(sample):
    rep = compaction.replay(sample, PYTHON, {"token_budget": 15_000, "children": PYTHON_CHILDREN},
                            context_window=20_000)
    counter = make_counter("approx")
    acted = skipped_by_child = 0  # calls where the budget was exceeded but the child's own trigger was not
    for k, step in enumerate(rep.steps):
        host_fires = step.tokens_before > 15_000
        child_fires = counter.count(before_compaction(rep, k), sample.tools) > 15_000
        assert ("1. anthropic.clear_tool_uses_20250919:" in step.note) == (host_fires and child_fires), (k, step.note)
        pruned = newly(rep, k, "pruned")
        if not (host_fires and child_fires):
            assert not pruned
            skipped_by_child += host_fires
            continue
        acted += bool(pruned)
        items = {item.index: item for item in rep.context_at(k)}
        assert all(items[i].message.tool_result.text == CLEARED_RESULT_STAND_IN for i in pruned)
        # the newest 2 tool uses the child saw are never cleared by it
        newest = [m.tool_result.call_id for m in before_compaction(rep, k) if m.tool_result is not None][-2:]
        assert not {sample.messages[i].tool_result.call_id for i in pruned} & set(newest)
    assert acted >= 3 and skipped_by_child >= 1
    assert_tool_pairs_together(rep)


def test_python_nested_summary_is_a_linked_message_and_removals_carry_the_childs_name():
    conv = session()
    rep = compaction.replay(conv, PYTHON, {"token_budget": 2_500, "children": "haystack.summarization("
                                           "min_keep_steps=2); sliding_window(keep_last_groups=50)",
                                           "early_stop": False}, context_window=3_000)
    k = next(k for k, s in enumerate(rep.steps) if s.compacted)
    assert rep.steps[k].note.startswith("1. haystack.summarization:")
    summary = next(i for i in rep.context_at(k) if i.fate == "inserted")
    meta = summary.message.meta
    assert summary.message.role == "user" and meta["message_id"].startswith("nested_summary_")
    links = meta["_group"]["_summary_of_message_ids"]
    assert links == [f"msg_{i}" for i in sorted(summary.represents)]
    assert {rep.fates_at(k)[i] for i in summary.represents} == {"collapsed"}

    trimmed = compaction.replay(conv, PYTHON, {"token_budget": 2_500, "children": "haystack.sliding_window("
                                               "min_keep_steps=2, omission_note=)"}, context_window=3_000)
    k = next(k for k, s in enumerate(trimmed.steps) if s.compacted)
    dropped = [i for i in trimmed.context_at(k, include_removed=True) if i.fate == "dropped"]
    assert dropped and {i.excluded_reason for i in dropped} == {"haystack.sliding_window"}
    assert_tool_pairs_together(trimmed)


def test_python_host_under_budget_never_runs_the_child(sample):
    rep = compaction.replay(sample, PYTHON, {"token_budget": 10_000_000, "children": PYTHON_CHILDREN})
    assert not any(s.triggered or s.compacted or s.note for s in rep.steps)


# ------------------------------------------------------------------------------------------------ determinism
@pytest.mark.parametrize("host, params", [
    (DOTNET, {"children": DOTNET_CHILDREN}),
    (PYTHON, {"token_budget": 15_000, "children": PYTHON_CHILDREN}),
    (DOTNET, {"children": "haystack.summarization(min_keep_steps=2); truncation"}),
])
def test_replays_are_deterministic_and_leave_the_input_alone(sample, host, params):
    before = [(m, dict(m.meta), m.text, m.tool_result.text if m.tool_result else None) for m in sample.messages]
    first = compaction.replay(sample, host, params, context_window=20_000).to_json(context_at=30)
    second = compaction.replay(sample, host, params, context_window=20_000).to_json(context_at=30)
    assert first == second
    after = [(m, dict(m.meta), m.text, m.tool_result.text if m.tool_result else None) for m in sample.messages]
    assert all(a[0] is b[0] and a[1:] == b[1:] for a, b in zip(before, after, strict=True))


# ------------------------------------------------------------------------------------------------ the adapter
def test_adapter_reports_replacements_removals_and_insertions_by_fed_position():
    conv = session(4)
    ctx = RunContext(make_counter("approx"), context_window=2_000, compact_at=0.5, compact_to=0.3)
    entries = [original(m, i) for i, m in enumerate(conv.messages[:-1])]
    snapshot = [(e, e.message, dict(e.info)) for e in entries]
    pruning = make_nested("haystack.tool_result_pruning", {"min_tokens": "0"}, {}, ctx, "child")
    result = pruning.run(entries)
    assert result.triggered and result.changed and not result.removed and not result.inserted
    assert sorted(result.replaced) == [3, 5, 7]  # every tool result but the newest step's
    assert all(entries[k].message.role == "tool" for k in result.replaced)
    window = make_nested("haystack.sliding_window", {}, {}, ctx, "child")
    result = window.run(entries)
    assert result.removed and len(result.inserted) == 1
    previous, note = result.inserted[0]
    assert previous == 1 and FED_POSITION not in note.info  # right after the task anchor, a new entry
    assert [(e, e.message, dict(e.info)) for e in entries] == snapshot  # the host's entries are untouched


def test_adapter_respects_a_child_that_does_not_fire():
    conv = session(4)
    ctx = RunContext(make_counter("approx"), context_window=1_000_000)
    nested = NestedStrategy(get_strategy("haystack.tool_result_pruning"),
                            get_strategy("haystack.tool_result_pruning").defaults(), ctx)
    result = nested.run([original(m, i) for i, m in enumerate(conv.messages)])
    assert not result.triggered and not result.changed


# ------------------------------------------------------------------------------------------------ bad specs
@pytest.mark.parametrize("host, extra, children, fragment", [
    (DOTNET, {}, "haystack.nope; truncation", "pipeline child 'haystack.nope': unknown strategy"),
    (DOTNET, {}, "bogus; truncation", "or any registered strategy name"),
    (DOTNET, {}, "haystack.tool_result_pruning(nope=1)",
     "pipeline child 1 (haystack.tool_result_pruning): strategy 'haystack.tool_result_pruning' has no parameter "
     "'nope'"),
    (DOTNET, {}, "truncation; haystack.tool_result_pruning(min_keep_steps=abc)",
     "pipeline child 2 (haystack.tool_result_pruning): parameter 'min_keep_steps': expected a finite whole number, "
     "got 'abc'"),
    (DOTNET, {}, "anthropic.clear_tool_uses_20250919(keep=-1)",
     "pipeline child 1 (anthropic.clear_tool_uses_20250919): parameter 'keep': expected a value from 0 to 1,000, got -1"),
    (PYTHON, {"token_budget": 100}, "anthropic.clear_tool_uses_20250919(trigger_type=words)",
     "strategies child 1 (anthropic.clear_tool_uses_20250919): parameter 'trigger_type': expected one of"),
    (PYTHON, {"token_budget": 100}, "sliding_window; langchain.nope", "'langchain.nope': unknown strategy"),
    (PYTHON, {"token_budget": 100}, "sliding_window; haystack.summarization(foo=2)",
     "strategies child 2 (haystack.summarization): strategy 'haystack.summarization' has no parameter 'foo'"),
])
def test_bad_child_specs_name_the_child(host, extra, children, fragment):
    conv = session(2)
    with pytest.raises(ValueError) as error:
        compaction.replay(conv, host, {**extra, "children": children})
    assert fragment in str(error.value)


@pytest.mark.parametrize("children, fragment", [
    ("haystack.tool_result_pruning(min_keep_steps=0)", "min_keep_steps"),
    ("haystack.nope", "unknown strategy"),
    ("openhands.observation_masking(window=3)", "openhands.observation_masking"),
])
def test_cli_reports_bad_child_specs_in_one_line(tmp_path, capsys, children, fragment):
    log = SAMPLES / "coding_agent.openai.json"
    code = main(["replay", str(log), "--strategy", DOTNET, "--set", f"children={children}"], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_replays_a_nested_pipeline(capsys):
    import json

    out = io.StringIO()
    log = SAMPLES / "coding_agent.openai.json"
    code = main(["replay", str(log), "--strategy", DOTNET, "--set", f"children={DOTNET_CHILDREN}",
                 "--context-window", "20000", "--json"], out=out)
    assert code == 0
    result = json.loads(out.getvalue())
    assert result["params"]["children"] == DOTNET_CHILDREN
    assert any("haystack.tool_result_pruning" in s["note"] and s["fates"]["pruned"] for s in result["steps"])


def test_production_export_keeps_native_children_and_refuses_nested_ones():
    from compaction.export import export_setup

    code = export_setup(DOTNET, {"children": "agent_framework.truncation; tool_result_compaction"})[0].code
    assert "new TruncationCompactionStrategy(" in code and "new ToolResultCompactionStrategy(" in code
    for host, children, fragment in ((DOTNET, DOTNET_CHILDREN, "pipeline child 1 (haystack.tool_result_pruning)"),
                                     (PYTHON, PYTHON_CHILDREN, "strategies child 1 (anthropic.clear_tool_uses")):
        with pytest.raises(ValueError, match="no production code") as error:
            export_setup(host, {"children": children})
        assert fragment in str(error.value)
