"""Golden cases for ``agent_framework.tool_result_compaction`` (Agent Framework .NET ``ToolResultCompactionStrategy``,
docs/spec/frameworks.md §3): the ``DefaultToolCallFormatter`` output byte for byte, call-id then positional result matching,
first-seen tool order, the digest as an assistant Summary message right after the excluded group, the
``minimumPreservedGroups`` floor, the skip rule, the default target, the trigger language, and the grouping rules of
``CompactionMessageIndex`` (§3.1)."""

from __future__ import annotations

import pytest
from conftest import real_log

import compaction
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.history import original
from compaction.policy import Trigger
from compaction.policy import parse_trigger
from compaction.policy import tokens_below
from compaction.strategies.agent_framework import SUMMARY_FLAG
from compaction.strategies.agent_framework import Group
from compaction.strategies.agent_framework import MessageIndex
from compaction.strategies.agent_framework import ToolResultCompaction
from compaction.strategies.agent_framework import default_tool_call_formatter
from compaction.tokens import make_counter

T = parse_trigger
ALWAYS = T("Always()")


# ------------------------------------------------------------------------------------------------- helpers
def index_of(messages: list[Message], batches: list[int] = ()) -> MessageIndex:
    """A ``CompactionMessageIndex`` of ``messages`` (one ``AppendFromMessages`` batch unless ``batches`` gives the
    positions where a model call, and so a new batch, starts)."""
    index = MessageIndex(make_counter("maf-dotnet"))
    for i, m in enumerate(messages):
        if i in batches:
            index.end_batch()
        index.append(original(m, i))
    return index


def included_texts(index: MessageIndex) -> list[str]:
    return [m.text for g in index.included() for m in g.messages]


def kinds(index: MessageIndex) -> list[str]:
    return [("-" if g.excluded else "") + g.kind for g in index.groups]


def call(call_id: str | None, name: str, **arguments) -> ToolCall:
    return ToolCall(call_id, name, arguments)


def plain_tool(text: str) -> Message:
    """A Tool-role message with text only (no FunctionResultContent): matched positionally."""
    return Message("tool", texts=(text,))


def result(tool_call: ToolCall, text: str) -> Message:
    """A Tool-role message with a FunctionResultContent for ``tool_call`` (matched by call id)."""
    return tool(tool_call, text)


def collapse(messages: list[Message], minimum_preserved_groups: int = 1, trigger: Trigger = ALWAYS,
             target=None) -> tuple[MessageIndex, tuple[bool, bool, str]]:
    index = index_of(messages)
    outcome = ToolResultCompaction(trigger, minimum_preserved_groups, target).compact(index)
    return index, outcome


# ------------------------------------------------------------------------------------------------- formatter
def test_collapses_an_old_tool_group_into_a_digest():
    index, (triggered, changed, _) = collapse(
        [user("Q1"), assistant(None, [call("call1", "get_weather")]), plain_tool("Sunny and 72°F"), user("Q2")]
    )
    assert triggered and changed
    assert included_texts(index) == ["Q1", "[Tool Calls]\nget_weather:\n  - Sunny and 72°F", "Q2"]


def test_several_tools_keep_first_seen_order_positional_results():
    multi = assistant(None, [call("c1", "get_weather"), call("c2", "search_docs")])
    index, _ = collapse([user("Q1"), multi, plain_tool("Sunny"), plain_tool("Found 3 docs"), user("Q2")])
    assert included_texts(index)[1] == "[Tool Calls]\nget_weather:\n  - Sunny\nsearch_docs:\n  - Found 3 docs"


def test_repeated_tool_names_are_listed_once_with_every_result():
    multi = assistant(None, [call("c1", "get_weather"), call("c2", "get_weather")])
    index, _ = collapse([user("Q1"), multi, plain_tool("Sunny"), plain_tool("Rainy"), user("Q2")])
    assert included_texts(index)[1] == "[Tool Calls]\nget_weather:\n  - Sunny\n  - Rainy"


def test_results_are_matched_by_call_id_whatever_their_order():
    c1, c2, c3 = call("c1", "get_weather"), call("c2", "get_weather"), call("c3", "search_docs")
    index, _ = collapse(
        [user("Q1"), assistant(None, [c1, c2, c3]), result(c3, "Found 3 docs"), result(c2, "Rainy"),
         result(c1, "Sunny"), user("Q2")]
    )
    assert included_texts(index)[1] == "[Tool Calls]\nget_weather:\n  - Sunny\n  - Rainy\nsearch_docs:\n  - Found 3 docs"


def test_call_id_first_then_positional_fallback():
    c1, c2, c3 = call("c1", "get_weather"), call("c2", "search_docs"), call("c3", "get_weather")
    index, _ = collapse(
        [user("Q1"), assistant(None, [c1, c2, c3]), result(c3, "Cloudy"), plain_tool("Sunny"),
         plain_tool("Found 3 docs"), user("Q2")]
    )
    # c1 and c2 have no FunctionResultContent: they take the plain texts in order; c3 is matched by id
    assert included_texts(index)[1] == "[Tool Calls]\nget_weather:\n  - Sunny\n  - Cloudy\nsearch_docs:\n  - Found 3 docs"


def test_empty_and_missing_results_leave_just_the_tool_name():
    c1, c2 = call("c1", "fn"), call("c2", "other")
    group = Group("ToolCall", [original(m, i) for i, m in enumerate([assistant(None, [c1, c2]), result(c1, "")])],
                  turn=1)
    assert default_tool_call_formatter(group) == "[Tool Calls]\nfn:\nother:"


def test_custom_formatter_can_wrap_the_default():
    index = index_of([user("Q1"), assistant(None, [call("c1", "fn")]), plain_tool("result"), user("Q2")])
    strategy = ToolResultCompaction(ALWAYS, 1, formatter=lambda g: "CUSTOM_PREFIX\n" + default_tool_call_formatter(g))
    strategy.compact(index)
    assert included_texts(index)[1] == "CUSTOM_PREFIX\n[Tool Calls]\nfn:\n  - result"


# ------------------------------------------------------------------------------------------------- the digest
def test_digest_is_an_assistant_summary_inserted_right_after_the_excluded_group():
    messages = [system("You are helpful."), user("Q1"), assistant(None, [call("c1", "fn")]), plain_tool("result"),
                user("Q2")]
    index, _ = collapse(messages)
    assert kinds(index) == ["System", "User", "-ToolCall", "Summary", "User"]
    excluded, summary = index.groups[2], index.groups[3]
    assert excluded.reason == "Collapsed by ToolResultCompactionStrategy"
    assert summary.turn == excluded.turn == 1
    (entry,) = summary.entries
    assert entry.message.role == "assistant"
    assert entry.message.meta[SUMMARY_FLAG] is True
    assert entry.inserted == "digest" and entry.represents == (2, 3)
    assert included_texts(index)[0] == "You are helpful."
    # a summary message is grouped as Summary when the history is indexed again
    again = index_of([m for g in index.groups if not g.excluded for m in g.messages])
    assert [g.kind for g in again.groups] == ["System", "User", "Summary", "User"]


def test_included_metrics_follow_the_exclusion_and_the_insertion():
    index, _ = collapse([user("Q1"), assistant(None, [call("c1", "fn")]), plain_tool("x" * 400), user("Q2")])
    assert index.included_messages == 3
    assert index.included_groups == 3
    assert not index.has_tool_calls
    assert index.included_tokens == sum(g.tokens for g in index.included())
    digest_bytes = len("[Tool Calls]\nfn:\n  - " + "x" * 400)
    assert index.groups[2].tokens == digest_bytes // 4


# ------------------------------------------------------------------------------------------------- protection
def test_minimum_preserved_groups_counts_groups_of_any_kind():
    messages = [user("Q1"), assistant(None, [call("c1", "search")]), plain_tool("Results"), user("Q2")]
    _, (triggered, changed, _) = collapse(messages, minimum_preserved_groups=1)
    assert triggered and changed
    # two preserved groups are [ToolCall, User Q2]: the user group counts, so the tool group is protected
    for keep in (2, 3, 16):
        _, (triggered, changed, note) = collapse(messages, minimum_preserved_groups=keep)
        assert triggered and not changed and note.startswith("declined")


def test_minimum_preserved_groups_is_a_hard_floor_even_when_the_target_is_unmet():
    groups = []
    for n in range(4):
        groups += [user(f"Q{n}"), assistant(None, [call(f"c{n}", "fn")]), plain_tool("r" * 200)]
    index, (_, changed, _) = collapse(groups, minimum_preserved_groups=4, target=lambda _: False)
    assert changed
    # 8 non-system groups; the newest 4 (Q2 onwards) are protected, so only ToolCall 0 and 1 collapse
    assert kinds(index) == ["User", "-ToolCall", "Summary", "User", "-ToolCall", "Summary", "User", "ToolCall", "User",
                            "ToolCall"]


def test_fewer_included_groups_than_the_minimum_are_all_protected():
    """.NET protects from ``max(0, count - minimumPreservedGroups)`` on: with fewer included non-system groups than
    the minimum, every one of them is protected, however many fewer there are."""
    groups = []
    for n in range(4):
        groups += [user(f"Q{n}"), assistant(None, [call(f"c{n}", "fn")]), plain_tool("r" * 200)]
    for keep in range(8, 17):  # 8 non-system groups
        index, (triggered, changed, note) = collapse(groups, minimum_preserved_groups=keep, target=lambda _: False)
        assert triggered and not changed and note.startswith("declined")
        assert not any(g.excluded for g in index.groups)


def test_negative_minimum_is_clamped_to_zero():
    strategy = ToolResultCompaction(ALWAYS, -3)
    assert strategy.minimum_preserved_groups == 0
    index = index_of([user("Q1"), assistant(None, [call("c1", "fn")]), plain_tool("r")])
    assert strategy.compact(index)[1]
    assert kinds(index) == ["User", "-ToolCall", "Summary"]


def test_pre_excluded_groups_are_skipped_and_system_stays():
    index = index_of([system("System prompt"), user("Q0"), assistant(None, [call("c1", "fn")]), plain_tool("R1"),
                      user("Q1")])
    index.exclude(index.groups[-1], "excluded earlier")
    triggered, changed, _ = ToolResultCompaction(T("Always"), 0).compact(index)
    assert triggered and changed
    assert kinds(index) == ["System", "User", "-ToolCall", "Summary", "-User"]


def test_skipped_while_at_most_one_non_system_group_is_included():
    for messages in ([system("s"), user("hello")],
                     [system("s"), assistant(None, [call("c1", "fn")]), plain_tool("r")]):
        index = index_of(messages)
        triggered, changed, note = ToolResultCompaction(ALWAYS, 0).compact(index)
        assert triggered and not changed and note.startswith("skipped")
        assert not any(g.excluded for g in index.groups)


def test_trigger_not_met_does_nothing():
    index = index_of([user("What's the weather?"), assistant(None, [call("call1", "get_weather")]), plain_tool("Sunny")])
    assert ToolResultCompaction(T("TokensExceed(1000)")).compact(index) == (False, False, "")


def test_no_tool_groups_declines():
    _, (triggered, changed, _) = collapse([user("Hello"), assistant("Hi!")], minimum_preserved_groups=0)
    assert triggered and not changed


def test_compound_trigger_needs_tokens_and_tool_calls():
    messages = [user("Q1"), assistant(None, [call("c1", "fn")]), plain_tool("result"), user("Q2")]
    _, (triggered, changed, _) = collapse(messages, trigger=T("All(TokensExceed(0), HasToolCalls())"))
    assert triggered and changed
    index, (triggered, _, _) = collapse([user("Q1"), assistant("A1"), user("Q2")],
                                        trigger=T("All(TokensExceed(0), HasToolCalls())"))
    assert not triggered


# ------------------------------------------------------------------------------------------------- targets
def three_tool_groups() -> list[Message]:
    """Ten messages: three (user, call, result) turns and a last question. Each collapse turns 2 messages into 1."""
    messages = []
    for n in range(3):
        c = call(f"call_{n}", "read_file", path=f"src/module_{n}.py")
        messages += [user(f"Q{n}"), assistant(None, [c]), result(c, f"contents of module {n}")]
    return messages + [user("Q3")]


def test_default_target_is_the_inverse_of_the_trigger():
    index, (_, changed, note) = collapse(three_tool_groups(), minimum_preserved_groups=0,
                                         trigger=T("MessagesExceed(8)"))
    # stop as soon as MessagesExceed(8) no longer fires: 10 → 9 → 8 messages, two collapses
    assert changed and note.startswith("collapsed 2 ")
    assert index.included_messages == 8
    assert kinds(index) == ["User", "-ToolCall", "Summary", "User", "-ToolCall", "Summary", "User", "ToolCall", "User"]


def test_explicit_target_overrides_the_default():
    _, (_, _, note) = collapse(three_tool_groups(), minimum_preserved_groups=0, trigger=T("MessagesExceed(8)"),
                               target=tokens_below(0))
    assert note.startswith("collapsed 3 ")
    checks = []
    index, _ = collapse(three_tool_groups(), minimum_preserved_groups=0,
                        target=lambda ix: checks.append(ix.included_messages) or True)
    assert checks == [9]  # evaluated after each collapse, on the updated index
    assert sum(g.excluded for g in index.groups) == 1


def test_a_digest_keeps_every_result_so_it_can_outweigh_a_short_group():
    """.NET's digest repeats each result under a header; with short call ids and no arguments it costs more bytes
    than the call + result it replaces (real .NET behaviour: ToolResultCompaction saves little on such groups)."""
    c1 = call("c1", "fn")
    index = index_of([user("Q1"), assistant(None, [c1]), result(c1, "r" * 100), user("Q2")])
    before = index.included_tokens
    ToolResultCompaction(ALWAYS, 1).compact(index)
    assert index.included_tokens > before
    assert index.groups[2].tokens == len("[Tool Calls]\nfn:\n  - " + "r" * 100) // 4


def test_registered_strategy_uses_the_inverse_target_when_only_a_trigger_is_given():
    log = compaction.Conversation((*three_tool_groups(), assistant("done")))
    rep = compaction.replay(log, "agent_framework.tool_result_compaction",
                            {"trigger": "MessagesExceed(8)", "minimum_preserved_groups": 0}, counter="maf-dotnet")
    assert [s.compacted for s in rep.steps] == [False, False, False, True]
    context = rep.context_at(3)
    assert len(context) == 8
    assert [item.fate for item in context].count("inserted") == 2
    assert rep.fates_at(3) == {1: "collapsed", 2: "collapsed", 4: "collapsed", 5: "collapsed"}


# ------------------------------------------------------------------------------------------------- triggers
CANONICAL = [
    "TokensExceed(70000)", "TokensBelow(100)", "MessagesExceed(40)", "TurnsExceed(3)", "GroupsExceed(12)",
    "HasToolCalls()", "Always()", "Never()", "All(TokensExceed(5000), HasToolCalls())",
    "Any(All(TurnsExceed(3), Always()), MessagesExceed(10), Never())",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_trigger_round_trips(text: str):
    trigger = parse_trigger(text)
    assert str(trigger) == text
    assert parse_trigger(str(trigger)) == trigger


@pytest.mark.parametrize(("text", "canonical"), [
    ("tokens_exceed(5)", "TokensExceed(5)"), ("Never", "Never()"), ("  tokensexceed ( 70_000 ) ", "TokensExceed(70000)"),
    ("TokensExceed(1e3)", "TokensExceed(1000)"), ("any(never,always)", "Any(Never(), Always())"),
])
def test_trigger_spellings(text: str, canonical: str):
    assert str(parse_trigger(text)) == canonical


@pytest.mark.parametrize(("text", "expected"), [
    ("", "expected a trigger name"), ("TokensExceed", "expected '(' and a number"),
    ("TokensExceed()", "expected a whole number"), ("TokensExceed(abc)", "expected a whole number"),
    ("TokensExceed(12.7)", "expected a whole number"), ("TokensExceed(inf)", "expected a whole number"),
    ("TokensExceed(5", "expected ')'"), ("HasToolCalls(1)", "takes no number"), ("Bogus(1)", "expected one of"),
    ("All()", "expected a trigger name"), ("All", "expected '('"), ("All(Never() Never())", "expected ',' or ')'"),
    ("TokensExceed(5) x", "expected end of text"), ("__import__('os')", "expected"),
])
def test_trigger_errors_say_what_was_expected(text: str, expected: str):
    with pytest.raises(ValueError) as error:
        parse_trigger(text)
    assert expected in str(error.value)
    assert repr(text) in str(error.value)


def test_trigger_semantics_on_an_index():
    index = index_of([system("s"), user("Q1"), assistant(None, [call("c", "fn")]), plain_tool("abcd" * 10),
                      user("Q2"), assistant("A2")])
    tokens = index.included_tokens
    assert T(f"TokensExceed({tokens - 1})")(index) and not T(f"TokensExceed({tokens})")(index)
    assert T(f"TokensBelow({tokens + 1})")(index) and not T(f"TokensBelow({tokens})")(index)
    assert T("MessagesExceed(5)")(index) and not T("MessagesExceed(6)")(index)
    assert T("TurnsExceed(1)")(index) and not T("TurnsExceed(2)")(index)
    assert T("GroupsExceed(4)")(index) and not T("GroupsExceed(5)")(index)
    assert T("HasToolCalls()")(index)
    assert T("Any(Never(), HasToolCalls())")(index) and not T("All(Always(), Never())")(index)
    index.exclude(index.groups[2], "test")
    assert not T("HasToolCalls()")(index)
    index.exclude(index.groups[1], "test")
    assert index.included_turns == 1  # turn 1 has no included group left


def test_trigger_requires_its_arguments():
    with pytest.raises(ValueError):
        Trigger("tokens_exceed")
    with pytest.raises(ValueError):
        Trigger("all")
    with pytest.raises(ValueError):
        Trigger("sometimes", 3)


# ------------------------------------------------------------------------------------------------- grouping
def test_grouping_kinds_and_turns():
    c1 = call("c1", "fn")
    index = index_of([
        system("sys"),
        assistant("greeting before any user message"),
        user("Q1"),
        assistant(None, [c1]),
        result(c1, "r1"),
        Message("assistant", reasoning=("thinking between results",)),
        plain_tool("r2"),
        assistant("A1"),
        user("Q2"),
        Message("assistant", texts=("earlier digest",), meta={SUMMARY_FLAG: True}),
        system("a system reminder"),
        plain_tool("a tool message with no call"),
    ])
    assert [(g.kind, g.turn, len(g.entries)) for g in index.groups] == [
        ("System", None, 1), ("AssistantText", 0, 1), ("User", 1, 1), ("ToolCall", 1, 4), ("AssistantText", 1, 1),
        ("User", 2, 1), ("Summary", 2, 1), ("System", None, 1), ("AssistantText", 2, 1),
    ]
    assert index.included_turns == 2 and index.included_non_system_groups == 7


def test_reasoning_only_assistants_before_a_call_join_its_group_within_one_batch():
    c1 = call("c1", "fn")
    messages = [user("Q1"), Message("assistant", reasoning=("plan",)), Message("assistant"), assistant(None, [c1]),
                result(c1, "r")]
    index = index_of(messages)
    # an assistant with no content at all counts as reasoning-only in .NET
    assert [(g.kind, len(g.entries)) for g in index.groups] == [("User", 1), ("ToolCall", 4)]
    lone = index_of([user("Q1"), Message("assistant", reasoning=("plan",)), user("Q2")])
    assert [g.kind for g in lone.groups] == ["User", "AssistantText", "User"]


def test_groups_never_grow_across_batches():
    """Each model call's ``Update`` groups only the new messages: what an earlier call grouped stays as it was."""
    c1, c2 = call("c1", "fn"), call("c2", "fn")
    messages = [user("Q1"), Message("assistant", reasoning=("plan",)), assistant(None, [c1]), result(c1, "r1"),
                assistant(None, [c2]), result(c2, "r2")]
    # a model call before each assistant message, as in a replay
    index = index_of(messages, batches=[1, 2, 4])
    assert [(g.kind, len(g.entries)) for g in index.groups] == [("User", 1), ("AssistantText", 1), ("ToolCall", 2),
                                                                 ("ToolCall", 2)]
    stray = index_of([user("Q"), assistant(None, [c1]), result(c1, "r1"), plain_tool("late")], batches=[1, 3])
    assert [(g.kind, len(g.entries)) for g in stray.groups] == [("User", 1), ("ToolCall", 2), ("AssistantText", 1)]


def test_only_a_true_summary_flag_makes_a_summary_group():
    flagged = [Message("assistant", texts=("s",), meta={SUMMARY_FLAG: value}) for value in (True, "true", 1, False)]
    index = index_of([user("Q"), *flagged])
    assert [g.kind for g in index.groups] == ["User", "Summary", "AssistantText", "AssistantText", "AssistantText"]


def test_group_tokens_are_content_bytes_over_four_per_group():
    c1 = call("call_1", "get_weather", city="Zürich")
    index = index_of([user("héllo wörld"), assistant(None, [c1]), result(c1, "Sunny, 22°C")])
    assert [g.tokens for g in index.groups] == [13 // 4, (6 + 11 + 4 + 7 + 6 + 12) // 4]


# ------------------------------------------------------------------------------------------------- on a real log
def test_replay_on_a_real_log_collapses_whole_groups_into_faithful_digests():
    conversation = compaction.load(real_log("openai-plain/openhands-completions__django-10097.json"))
    baseline = compaction.replay(conversation, "agent_framework.tool_result_compaction", {"trigger": "Never()"},
                                 counter="maf-dotnet")
    peak = max(s.tokens_before for s in baseline.steps)
    rep = compaction.replay(conversation, "agent_framework.tool_result_compaction",
                            {"trigger": f"TokensExceed({peak // 2})", "minimum_preserved_groups": 4},
                            counter="maf-dotnet")
    assert sum(s.compacted for s in rep.steps) >= 2
    assert [s.tokens_uncompacted for s in rep.steps] == [s.tokens_before for s in baseline.steps]
    messages = conversation.messages
    for step in rep.steps:
        items = rep.context_at(step.step)
        for position, item in enumerate(items):
            if item.fate != "inserted":
                continue
            covered = [original(messages[i], i) for i in item.represents]
            assert item.message.text == default_tool_call_formatter(Group("ToolCall", covered, None))
            assert messages[item.represents[0]].tool_calls  # a digest stands for a whole tool-call group
            before = [i.index for i in items[:position] if i.index is not None]
            after = [i.index for i in items[position + 1:] if i.index is not None]
            assert all(i < min(item.represents) for i in before) and all(i > max(item.represents) for i in after)
        sent_calls = {c.id for i in items for c in i.message.tool_calls}
        assert all(i.message.tool_result.call_id in sent_calls for i in items if i.message.tool_result is not None)


def test_tool_result_with_parts_is_formatted_as_text():
    c1 = call("c1", "screenshot")
    parts = Message("tool", tool_result=ToolResult(c1, ("page ", "loaded")))
    index, _ = collapse([user("Q1"), assistant(None, [c1]), parts, user("Q2")])
    assert included_texts(index)[1] == "[Tool Calls]\nscreenshot:\n  - page loaded"


def test_a_python_callable_can_be_the_formatter():
    import compaction
    from compaction.conversation import Conversation
    from compaction.conversation import Message
    from compaction.conversation import ToolCall
    from compaction.conversation import ToolResult

    messages = [Message("system", ("s",)), Message("user", ("go",))]
    for i in range(6):
        call = ToolCall(f"c{i}", "read_file", {"path": f"f{i}.py"})
        messages += [Message("assistant", (), (call,)), Message("tool", tool_result=ToolResult(call, "x" * 400))]
    messages.append(Message("assistant", ("done",)))

    def formatter(group) -> str:
        return "digest of " + ",".join(c.id for m in group.messages for c in m.tool_calls)

    rep = compaction.replay(Conversation(tuple(messages)), "agent_framework.tool_result_compaction",
                            {"formatter": formatter, "minimum_preserved_groups": 2}, context_window=600,
                            counter="maf-dotnet")
    digests = [i.message.text for i in rep.context_at(len(rep.steps) - 1) if i.fate == "inserted"]
    assert digests and all(d.startswith("digest of c") for d in digests)
    assert "formatter" not in rep.to_json()["params"]  # a function is not data
