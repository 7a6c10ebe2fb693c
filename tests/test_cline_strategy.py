"""``cline.context_manager`` rule by rule (``agents.md §1.4``). Each test names the line of Cline's source it checks:
cline/cline at 791d2389^, ``src/core/context/context-management/ContextManager.ts`` (CM) and
``context-window-utils.ts`` (CWU). Cline's TypeScript cannot run here (it needs the extension's host), so these are
golden cases derived from those lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from reported_usage import with_reported_totals

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import tool
from compaction.conversation import user
from compaction.strategies.cline import DUPLICATE_READ_NOTICE
from compaction.strategies.cline import TRUNCATION_NOTICE
from compaction.strategies.cline import max_allowed_size
from compaction.strategies.cline import truncation_size

FIXTURES = Path(__file__).parent / "fixtures" / "cline"
BIG = "x" * 400


def _turns(n: int, results: list[str] | None = None, xml: bool = False) -> list[Message]:
    """A task message, then ``n`` assistant calls each answered by a tool result and environment details."""
    messages = [user("<task>\nfix it\n</task>")]
    for k in range(n):
        call = ToolCall(f"xml-{2 * k + 1}-0" if xml else f"toolu_{k}", "execute_command", {"command": f"c{k}"})
        messages.append(assistant(f"step {k}", [call]))
        text = results[k] if results and k < len(results) else f"[execute_command for 'c{k}'] Result:\n{BIG}"
        messages.append(tool(call, text))
        messages.append(user("<environment_details>\n# Current Time\nnow\n</environment_details>"))
    messages.append(assistant("done"))
    return messages


def _conversation(messages: list[Message], totals: dict[int, int], others: int = 1_000) -> Conversation:
    """``totals``: the reported total of the k-th LLM call (0-based); every other call reports ``others``."""
    return with_reported_totals(messages, totals, "cline", 100, others)


def _replay(conv: Conversation, window: int = 200_000):
    return compaction.replay(conv, "cline.context_manager", context_window=window)


@pytest.mark.parametrize(("window", "allowed"), [(64_000, 37_000), (128_000, 98_000), (200_000, 160_000),
                                                 (100_000, 80_000), (1_000_000, 960_000), (32_000, 25_600)])
def test_max_allowed_size_by_window(window: int, allowed: int) -> None:
    # CWU lines 20-31: 64k − 27k, 128k − 30k, 200k − 40k, else max(window − 40k, 0.8 · window)
    assert max_allowed_size(window) == allowed


def test_truncation_sizes_keep_an_even_number() -> None:
    # CM lines 315-328: half = floor(n/4)·2, quarter = floor(n·3/4/2)·2
    assert [truncation_size(n, "half") for n in (0, 3, 4, 7, 8, 17)] == [0, 0, 2, 2, 4, 8]
    assert [truncation_size(n, "quarter") for n in (0, 3, 4, 7, 8, 17)] == [0, 2, 2, 4, 6, 12]


def test_it_acts_on_the_previous_requests_total_only() -> None:
    # CM line 249: totalTokens (tokensIn + tokensOut + cacheWrites + cacheReads of the previous request) >= max
    messages = _turns(6)
    conv = _conversation(messages, {1: 159_999, 2: 160_000})
    steps = _replay(conv).steps
    assert [s.step for s in steps if s.triggered] == [3]  # the call after the one that reported 160,000


def test_cache_reads_and_writes_count_toward_the_total() -> None:
    messages = _turns(3)
    calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
    usage = {i: Usage(input_tokens=900, output_tokens=100) for i in calls}
    usage[calls[0]] = Usage(input_tokens=10, output_tokens=10, cache_read_tokens=150_000, cache_write_tokens=9_980)
    conv = Conversation(tuple(messages), source=Source("cline"), usage=usage)
    assert [s.step for s in _replay(conv).steps if s.triggered] == [1]


def test_half_truncation_keeps_the_first_pair_and_writes_the_notice() -> None:
    # CM lines 303-338 (the range from index 2, its end an assistant message), 744-753 (the notice replaces the first
    # assistant message's first block)
    messages = _turns(6)
    conv = _conversation(messages, {0: 170_000})
    rep = _replay(conv)
    step = rep.steps[1]
    assert step.compacted
    context = rep.context_at(1)
    # API messages before the call: task, a0, u0 -> 1 after the first pair: floor(1/4)*2 = 0 left out
    assert [i.index for i in context] == [0, 1, 2, 3]
    assert context[1].message.texts == (TRUNCATION_NOTICE,)
    assert context[1].message.tool_calls == messages[1].tool_calls  # a tool_use block is not the first block's text


def test_truncation_of_a_longer_history_and_its_pairing() -> None:
    messages = _turns(6)
    conv = _conversation(messages, {5: 170_000})
    rep = _replay(conv)
    context = rep.context_at(6)
    sent = [i.index for i in context]
    # API messages: 0 task, 1 a0, then u0 a1 … a5 u5: 11 after the first pair -> floor(11/4)*2 = 4 left out (API 2-5:
    # u0 a1 u1 a2, the last one an assistant message); API 6 (u2: a2's result, message 8, and its environment
    # details, message 9) is the first kept. CM lines 366-470 (ensureToolResultsFollowToolUse): a0's call, whose
    # result went with u0, is answered "result missing" at the start of the next message
    assert sent[:4] == [0, 1, None, 9]
    assert context[2].message.tool_result.call_id == "toolu_0"
    assert context[2].message.tool_result.text == "result missing"
    assert sent[4:] == list(range(10, 19))


def test_orphaned_native_results_after_the_cut_are_dropped() -> None:
    # CM lines 490-505: tool_result blocks of the first message after the cut go with their tool_use
    messages = _turns(6)
    conv = _conversation(messages, {5: 170_000})
    context = _replay(conv).context_at(6)
    first_kept = context[3]
    assert first_kept.message.role == "user"  # the result of a2's call (left out) was dropped, its user text stays
    assert all(i.message.tool_result is None or i.message.tool_result.call_id != "toolu_2" for i in context)


def test_text_results_of_xml_calls_stay_after_the_cut() -> None:
    messages = _turns(6, xml=True)
    conv = _conversation(messages, {5: 170_000})
    context = _replay(conv).context_at(6)
    assert [i.index for i in context][:3] == [0, 1, 8]
    assert context[2].message.tool_result is not None  # Cline wrote XML results as text: no tool_result to filter
    assert context[1].message.texts == (TRUNCATION_NOTICE,) and not context[1].message.tool_calls


def test_three_quarters_when_the_total_is_twice_the_limit() -> None:
    # CM line 252: keep = totalTokens / 2 > maxAllowedSize ? "quarter" : "half"
    messages = _turns(8)
    conv = _conversation(messages, {7: 330_000})
    rep = _replay(conv)
    assert "three quarters" in rep.steps[8].note
    # 15 API messages after the pair (u0 a1 … a7 u7): floor(15*3/4/2)*2 = 10 left out (API 2-11, the last one a5)
    assert "left out 10 messages" in rep.steps[8].note


def test_a_second_truncation_continues_after_the_first_and_the_notice_is_written_once() -> None:
    # CM lines 307-308: the next range starts after the previous one's end; 746: the notice only if index 1 is unset
    messages = _turns(12)
    conv = _conversation(messages, {5: 170_000, 10: 170_000})
    rep = _replay(conv)
    compacted = [s for s in rep.steps if s.compacted]
    assert [s.step for s in compacted] == [6, 11]
    assert "notice" in compacted[0].note and "notice" not in compacted[1].note
    assert rep.context_at(11)[1].message.texts == (TRUNCATION_NOTICE,)


def test_repeated_reads_become_the_notice_and_enough_savings_skip_truncation() -> None:
    # CM lines 991-1008 (the result header), 1011-1036 (read_file: header + "\n" + notice), 1076-1086 (all reads but
    # the latest), 654 (percentSaved < 0.3 -> truncate)
    body = "line\n" * 2_000
    results = [f"[read_file for 'a.py'] Result:\n{body}", "[execute_command for 'ls'] Result:\nok",
               f"[read_file for 'a.py'] Result:\n{body}", "[execute_command for 'ls'] Result:\nok"]
    messages = _turns(4, results)
    conv = _conversation(messages, {3: 170_000})
    rep = _replay(conv)
    step = rep.steps[4]
    assert step.compacted and "repeated file read" in step.note and "truncat" not in step.note.split(")")[-1]
    context = rep.context_at(4)
    first_read = next(i for i in context if i.index == 2)
    assert first_read.fate == "pruned"
    assert first_read.message.tool_result.text == f"[read_file for 'a.py'] Result:\n{DUPLICATE_READ_NOTICE}"
    latest = next(i for i in context if i.index == 8)
    assert latest.fate == "kept"
    assert len(context) == len(messages) - 1  # nothing left out


def test_small_savings_truncate_as_well() -> None:
    results = ["[read_file for 'a.py'] Result:\nshort", f"[execute_command for 'x'] Result:\n{BIG * 20}",
               "[read_file for 'a.py'] Result:\nshort", f"[execute_command for 'y'] Result:\n{BIG * 20}",
               f"[execute_command for 'z'] Result:\n{BIG}"]
    conv = _conversation(_turns(5, results), {4: 170_000})
    note = _replay(conv).steps[5].note
    assert "repeated file read" in note and "under 30%: truncating" in note and "truncated half" in note


def test_file_changes_and_mentions_are_reads_too() -> None:
    # CM lines 1047-1058 (<final_file_content> of write_to_file / replace_in_file), 953-981 (<file_content> mentions)
    change = ('[replace_in_file for \'a.py\'] Result:\nsaved\n\n<final_file_content path="a.py">\n' + BIG * 30
              + "\n</final_file_content>\n\nnext")
    results = [change, "[execute_command for 'x'] Result:\nok", f"[read_file for 'a.py'] Result:\n{BIG}"]
    messages = _turns(3, results)
    # a mention counts only in a message whose first block is no read_file / file change result (CM 904-912)
    messages[-1:] = [assistant("ok"), user(f'<feedback>see <file_content path="b.md">{BIG * 30}</file_content>'
                                           '</feedback>'),
                     assistant("ok"), user(f'again <file_content path="b.md">{BIG}</file_content>'), assistant("done")]
    conv = _conversation(messages, {4: 170_000})
    rep = _replay(conv)
    assert rep.steps[5].compacted and "truncated" not in rep.steps[5].note
    context = {i.index: i for i in rep.context_at(5)}
    assert context[2].message.tool_result.text == (
        f'[replace_in_file for \'a.py\'] Result:\nsaved\n\n<final_file_content path="a.py"> {DUPLICATE_READ_NOTICE} '
        "</final_file_content>\n\nnext")
    mention = next(i for i in context.values() if i.message.role == "user" and "b.md" in i.message.text)
    assert mention.message.texts[0] == f'<feedback>see <file_content path="b.md">{DUPLICATE_READ_NOTICE}</file_content>'\
        '</feedback>'


def test_replay_truncates_where_the_cline_log_did() -> None:
    # the xml-task log: the previous request reported 161,783 tokens (claude-3-7-sonnet, 200k window -> 160,000
    # allowed) and the ui messages record conversationHistoryDeletedRange [2, 9] from the next request on
    conv = compaction.load(FIXTURES / "xml-task" / "api_conversation_history.json")
    truncation = next(e for e in conv.events if e.kind == "truncation")
    rep = _replay(conv)
    first = next(s for s in rep.steps if s.compacted)
    assert first.message_index == truncation.message_index
    assert "left out 8 messages" in first.note  # API messages 2..9, the log's range
    # Cline's code replaces the read of cli.py (API 2: read again by the final content of the replace_in_file at
    # API 8) and the first read of stats.py (API 4); the fixture's context_history.json names API 4 and 14.
    pruned = [i.index for i in rep.context_at(first.step) if i.fate == "pruned"]
    assert pruned == [1]  # API 2 and 4 were left out by the truncation; only the notice is still sent


def test_export_is_clines_setting() -> None:
    import json

    from compaction.export import export_setup

    (snippet,) = export_setup("cline.context_manager", {}, context_window=128_000)
    assert snippet.language == "json" and json.loads(snippet.code) == {"useAutoCondense": False}
    assert "98,000" in snippet.note  # the 128k window's maxAllowedSize
