"""Cline and Roo Code tasks (formats ``cline`` and ``roo-code``): the generated task folders in
``tests/fixtures/{cline,roo-code}/`` (``tools/make_cline_fixtures.py``) and variations of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

import compaction
from compaction.conversation import Image
from compaction.conversation import Usage
from compaction.formats import LoadError
from compaction.formats import formats
from compaction.formats import parse_document
from compaction.formats._cline_text import XML_TOOL_NAMES
from compaction.formats._cline_text import not_run_notice
from compaction.formats._cline_text import result_header
from compaction.formats._cline_text import split_xml_calls

FIXTURES = ROOT / "tests" / "fixtures"
CLINE_XML = FIXTURES / "cline" / "xml-task"
CLINE_NATIVE = FIXTURES / "cline" / "native-task"
ROO_XML = FIXTURES / "roo-code" / "xml-task"
ROO_NATIVE = FIXTURES / "roo-code" / "native-task"
HISTORY = "api_conversation_history.json"


def load(folder: Path) -> compaction.Conversation:
    return compaction.load(folder / HISTORY)


def copy_task(folder: Path, tmp_path: Path, name: str | None = None) -> Path:
    target = tmp_path / (name or folder.name)
    shutil.copytree(folder, target)
    return target


def edit_json(path: Path, change) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    value = change(value) or value
    path.write_text(json.dumps(value), encoding="utf-8")


def messages_warnings(conv: compaction.Conversation) -> list[str]:
    return [w.message for w in conv.warnings]


def unanswered(conv: compaction.Conversation) -> list[str]:
    return [w.message for w in conv.warnings if "never answered" in w.message or "no earlier call" in w.message]


# ------------------------------------------------------------------------------------------------ text grammar
@pytest.mark.parametrize("text, name, rest", [
    ("[read_file for 'src/x.ts'] Result:\nbody", "read_file", "body"),
    ("[read_file for 'src/x.ts'] Result:", "read_file", ""),
    ("[attempt_completion] Result: Done", "attempt_completion", "Done"),
    ("[search_files for 'a]b' in '*.ts'] Result:\nx", "search_files", "x"),
    ("[switch_mode to 'code' because: tests] Result:\nok", "switch_mode", "ok"),
    ("[new_task in 💻 Code mode: 'write docs'] Result:\nok", "new_task", "ok"),
    ("[read_file for 'a'. Reading multiple files at once is more efficient for the LLM.] Result:", "read_file", ""),
    ("[read_file for 'a', 'b'] Result:\n", "read_file", ""),
    ("[subagent: reviewer] Result:\nfine", None, "fine"),
])
def test_result_headers(text: str, name: str | None, rest: str) -> None:
    header = result_header(text)
    assert header is not None and header.name == name and header.rest == rest


@pytest.mark.parametrize("text", ["[NOTE] Some previous conversation history", "[x] Resultant", "no [x] Result:",
                                  "[TASK RESUMPTION] This task was interrupted"])
def test_texts_that_are_not_headers(text: str) -> None:
    assert result_header(text) is None


@pytest.mark.parametrize("text, name", [
    ("Tool [list_files] was not executed because a tool has already been used in this message. Only one…", "list_files"),
    ("Skipping tool [write_to_file for 'a.md'] due to user rejecting a previous tool.", "write_to_file"),
    ("Tool [execute_command for 'ls'] was interrupted and not executed due to user rejecting a previous tool.",
     "execute_command"),
    ("Skipping tool due to user rejecting a previous tool. [execute_command for 'npm test']", "execute_command"),
    ("Tool was interrupted and not executed due to user rejecting a previous tool. [read_file for 'a']", "read_file"),
])
def test_not_run_notices(text: str, name: str) -> None:
    assert not_run_notice(text) == name


def test_xml_calls_follow_clines_parser() -> None:
    text = ("Let me look.\n<thinking>plan</thinking>\n<read_file>\n<path> a.py </path>\n<br>\n</read_file>\nthen\n"
            "<write_to_file>\n<path>n.md</path>\n<content>\nuse <content>x</content> here\n</content>\n</write_to_file>"
            "\n<execute_command>\n<command>ls")
    segments, calls = split_xml_calls(text, XML_TOOL_NAMES)
    assert [(c.name, c.params) for c in calls] == [
        ("read_file", {"path": "a.py"}),
        ("write_to_file", {"path": "n.md", "content": "use <content>x</content> here"}),
    ]
    # the unclosed call at the end was never run: it stays text, as the text around the calls does
    assert segments == ["Let me look.\n<thinking>plan</thinking>", "then", "<execute_command>\n<command>ls"]
    assert split_xml_calls("<unknown_tool><a>1</a></unknown_tool>", XML_TOOL_NAMES)[1] == []


# ------------------------------------------------------------------------------------------------ Cline, XML tools
def test_cline_xml_task_messages_and_tool_results() -> None:
    conv = load(CLINE_XML)
    assert conv.format == "cline" and conv.id == "xml-task"
    assert conv.source.model == "claude-3-7-sonnet-20250219" and conv.source.agent_version == "3.17.9"
    assert conv.source.meta["provider"] == "anthropic" and conv.source.meta["host"] == "Visual Studio Code 1.96.4"
    assert len(conv.llm_call_indices) == 13 and conv.tool_call_count == 14 and conv.tool_result_count == 13
    first = conv.messages[1]
    assert first.texts == ("<thinking>\nThe command lives in cli.py; I need to see how it prints the summary.\n"
                           "</thinking>",)
    assert [(c.id, c.name, dict(c.arguments)) for c in first.tool_calls] == [("xml-1-0", "read_file",
                                                                              {"path": "cli.py"})]
    # two-block results: the header block and the content block are one result
    result = conv.messages[2].tool_result
    assert result.origin is first.tool_calls[0]
    assert result.text.startswith("[read_file for 'cli.py'] Result:\nimport argparse")
    # the second call of a message is answered by the not-run notice (an error result)
    second = conv.messages[4].tool_calls[1]
    notice = conv.messages[6].tool_result
    assert second.name == "list_files" and notice.origin is second and notice.error
    errors = {conv.messages[i].tool_result.origin.name: conv.messages[i].tool_result.error for i in (9, 24)}
    assert errors == {"replace_in_file": True}  # the denied edit and the failed one
    assert conv.messages[9].tool_result.error and conv.messages[24].tool_result.error
    assert not conv.messages[12].tool_result.error
    # write_to_file's content ends at its last </content>
    readme = conv.messages[35].tool_calls[0].arguments["content"]
    assert readme.endswith("write the flag as <content>--json</content>.")
    # environment details stay user text after the results of their message
    assert [m.role for m in conv.messages[4:8]] == ["assistant", "tool", "tool", "user"]
    assert conv.messages[7].text.startswith("<environment_details>")
    assert unanswered(conv) == ["message 38: tool call 'xml-25-0' is never answered"]


def test_cline_usage_by_history_index() -> None:
    conv = load(CLINE_XML)
    assert sorted(conv.usage) == conv.llm_call_indices
    assert conv.usage[1] == Usage(input_tokens=4, output_tokens=96, cache_read_tokens=0, cache_write_tokens=9210,
                                  cache_write_5m_tokens=9210)
    assert conv.usage[26] == Usage(3, 160, 161200, 420, 420, 0)
    ui = json.loads((CLINE_XML / "ui_messages.json").read_text(encoding="utf-8"))
    costs = [json.loads(m["text"])["cost"] for m in ui if m.get("say") == "api_req_started"]
    assert len(costs) == 13 and conv.source.meta["reported_cost"] == pytest.approx(sum(costs))


def test_cline_truncation_and_duplicate_read_masking() -> None:
    conv = load(CLINE_XML)
    events = {e.kind: e for e in conv.events}
    assert set(events) == {"truncation", "masking"}
    truncation, masking = events["truncation"], events["masking"]
    # the request after the one that used 161,783 tokens (>= 160,000) was sent truncated: before call 29
    assert truncation.message_index == 29 and conv.messages[29].role == "assistant"
    assert (truncation.trigger, truncation.pre_tokens, truncation.post_tokens) == ("auto", 161_783, 2950 + 2100 + 9180)
    # context_history.json replaced both earlier reads of stats.py
    assert masking.message_index == 29 and masking.cleared == ("xml-3-0", "xml-13-0")
    assert [conv.messages[i].tool_calls[0].arguments for i in (4, 20)] == [{"path": "stats.py"}] * 2
    assert conv.log_summary_indices == frozenset()


def test_cline_truncation_notice_alone_marks_the_truncation(tmp_path: Path) -> None:
    folder = copy_task(CLINE_XML, tmp_path)

    def drop_ranges(ui: list) -> None:
        for message in ui:
            message.pop("conversationHistoryDeletedRange", None)
    edit_json(folder / "ui_messages.json", drop_ranges)
    conv = load(folder)
    assert {(e.kind, e.message_index) for e in conv.events} == {("truncation", 29), ("masking", 29)}


# ------------------------------------------------------------------------------------------------ Cline, native tools
def test_cline_native_task() -> None:
    conv = load(CLINE_NATIVE)
    assert conv.format == "cline" and conv.source.agent_version == "3.51.0"
    assert conv.source.model == "claude-sonnet-4-5-20250929"
    assert conv.messages[1].reasoning == ("Start with the component, then the styles.",)
    # a header in one block answers the first call, the notice the second
    assert conv.messages[2].tool_result.text.startswith("[read_file for 'src/Signup.tsx'] Result:\nexport")
    assert conv.messages[3].tool_result.origin is conv.messages[1].tool_calls[1]
    # a tool_result block (id mapped) and the call skipped after the user rejected the first
    denied, skipped = conv.messages[9].tool_result, conv.messages[10].tool_result
    assert denied.origin.name == "replace_in_file" and denied.error
    assert skipped.origin.name == "execute_command" and skipped.error
    # Cline pushes the screenshot of an id-less call without a header: still that call's result
    screenshot = conv.messages[16].tool_result
    assert screenshot.origin.name == "browser_action" and isinstance(screenshot.result, tuple)
    assert isinstance(screenshot.result[1], Image) and screenshot.text.startswith("The browser action has been")
    assert unanswered(conv) == ["message 30: tool call 'toolu_0112Fx084' is never answered"]


def test_cline_summarize_task_is_a_condense_event() -> None:
    conv = load(CLINE_NATIVE)
    [event] = conv.events  # the deleted range it set is the condense, not a second truncation
    call = conv.messages[21].tool_calls[0]
    assert call.name == "summarize_task"
    assert event.kind == "condense" and event.trigger == "auto" and event.message_index == 22
    assert conv.messages[22].tool_result.origin is call
    assert event.summary == call.arguments["context"]
    assert (event.pre_tokens, event.post_tokens) == (10 + 980 + 151_300, 2400 + 3100)
    # the summarize call is an LLM call of the run: it stays, and replays keep it
    assert 21 in conv.llm_call_indices and not conv.log_summary_indices


def test_cline_usage_alignment_by_time_and_by_order(tmp_path: Path) -> None:
    expected = load(CLINE_NATIVE).usage
    folder = copy_task(CLINE_NATIVE, tmp_path)

    def drop(key: str):
        def change(items: list) -> None:
            for item in items:
                item.pop(key, None)
        return change
    edit_json(folder / "ui_messages.json", drop("conversationHistoryIndex"))
    assert load(folder).usage == expected  # by timestamps
    edit_json(folder / HISTORY, drop("ts"))
    assert load(folder).usage == expected  # by order: as many records as responses
    edit_json(folder / "ui_messages.json", lambda ui: [m for m in ui if m.get("say") != "api_req_started"][:1] +
              [m for m in ui if m.get("say") == "api_req_started"][1:])
    conv = load(folder)  # one record fewer and nothing to match them by: Cline's own metrics instead
    assert any("9 api_req_started records for 10 LLM responses" in w for w in messages_warnings(conv))
    assert any("cache reads and writes are not split" in w for w in messages_warnings(conv))
    assert conv.usage[1] == Usage(input_tokens=10, output_tokens=180, cache_read_tokens=8820)


# ------------------------------------------------------------------------------------------------ Roo Code
def test_roo_xml_task() -> None:
    conv = load(ROO_XML)
    assert conv.format == "roo-code" and conv.source.model == "claude-sonnet-4-5"
    assert conv.source.meta["api_protocol"] == "anthropic"
    read = conv.messages[4].tool_calls[0]
    assert read.name == "read_file" and read.arguments == {"args": "<file>\n    <path>src/api.ts</path>\n  </file>"}
    assert conv.messages[5].tool_result.origin is read
    assert conv.messages[5].tool_result.text.startswith("[read_file for 'src/api.ts'. Reading multiple files")
    assert conv.messages[10].tool_result.error  # the second apply_diff of a message was not run
    # the summary and the marker Roo inserted are the log's own compaction messages
    marker, summary = conv.messages[7], conv.messages[19]
    assert marker.meta["log_truncation_marker"] and marker.text == "[Sliding window truncation: 4 messages hidden to " \
                                                                     "reduce context]"
    assert summary.role == "assistant" and summary.meta["generated"] is False
    assert conv.log_summary_indices == frozenset({7, 19}) and 19 not in conv.llm_call_indices
    # the summary sits between the type check call and its result, which still answer each other
    assert conv.messages[20].tool_result.origin is conv.messages[18].tool_calls[0]
    assert unanswered(conv) == ["message 28: tool call 'xml-19-0' is never answered"]
    # what they replaced stays in the conversation, tagged
    assert conv.messages[1].meta["truncation_parent"] == "9e0b7c52-0d7e-4f0e-8d43-55c0f1a7d6a2"
    assert conv.messages[8].meta["condense_parent"] == "5c1d1f0a-8a0e-4c67-9a55-1f3f5f0e2b11"
    assert "truncation_parent" not in conv.messages[8].meta


def test_roo_usage_counts_total_input() -> None:
    conv = load(ROO_XML)
    assert len(conv.usage) == len(conv.llm_call_indices) == 9
    # Roo >= 3.30 reports tokensIn as total input (9050 with 9046 cache writes): uncached is the rest
    assert conv.usage[1] == Usage(input_tokens=4, output_tokens=80, cache_read_tokens=0, cache_write_tokens=9046,
                                  cache_write_5m_tokens=9046)
    assert conv.usage[4].prompt_tokens == 9420


def test_roo_old_token_convention(tmp_path: Path) -> None:
    folder = copy_task(ROO_XML, tmp_path)

    def uncached(ui: list) -> None:  # Roo before 3.30: tokensIn without the cache tokens
        for message in ui:
            if message.get("say") == "api_req_started":
                info = json.loads(message["text"])
                info["tokensIn"] = max(info["tokensIn"] - info["cacheReads"] - info["cacheWrites"], 0)
                message["text"] = json.dumps(info)
    edit_json(folder / "ui_messages.json", uncached)
    assert load(folder).usage == load(ROO_XML).usage


def test_roo_events_from_tags_and_ui_records() -> None:
    conv = load(ROO_XML)
    truncation, condense = conv.events
    assert (truncation.kind, truncation.message_index, truncation.pre_tokens, truncation.post_tokens) == (
        "truncation", 18, 10_930, 6_150)
    assert conv.messages[18].role == "assistant"  # the first call sent after it
    # an older summary kept the last 3 messages after it: it applied from the call after them
    assert (condense.kind, condense.message_index, condense.pre_tokens, condense.post_tokens) == (
        "condense", 25, 6_920, 2_480)
    assert condense.summary == conv.messages[19].text and condense.summary.startswith("## Conversation Summary")


def test_roo_events_without_ui_messages() -> None:
    exact = load(ROO_XML)
    conv = compaction.load((ROO_XML / HISTORY).read_bytes())
    assert not conv.usage
    truncation, condense = conv.events
    assert condense.message_index == 25 and condense.pre_tokens is None
    # from how many messages it hid: at most one call early, never late
    calls = conv.llm_call_indices
    exact_at = exact.events[0].message_index
    assert truncation.message_index in calls and calls.index(exact_at) - 1 <= calls.index(
        truncation.message_index) <= calls.index(exact_at)
    assert any("when it ran is inferred" in w for w in messages_warnings(conv))


def test_roo_native_task() -> None:
    conv = load(ROO_NATIVE)
    assert conv.format == "roo-code" and conv.id == "0196f3a2-7b1c-7c3e-b0d4-2c5e8f9a1b3d"
    assert conv.source.parent == "0196f3a0-1111-7aaa-8bbb-0c0c0c0c0c0c"
    assert conv.source.meta["mode"] == "code" and conv.source.meta["workspace"] == "/home/ana/web"
    assert conv.messages[1].reasoning == ("I need the function's cases before writing tests.",)
    error = conv.messages[5].tool_result
    assert error.origin.name == "write_to_file" and error.text.startswith('{"status":"error"')
    # the image that came with the answer is the user's, after the result
    assert conv.messages[8].tool_result.origin.name == "ask_followup_question"
    assert conv.messages[9].role == "user" and len(conv.messages[9].images) == 1
    # a summary appended as a user message is where the condense happened
    [event] = conv.events
    summary_index = min(conv.log_summary_indices)
    assert conv.log_summary_indices == frozenset({summary_index}) and event.message_index == summary_index
    assert conv.messages[summary_index].meta["log_compaction_summary"] is True
    assert (event.pre_tokens, event.post_tokens) == (14_500, 2_900)
    # the completion's result came after the summary, so Roo stored it as text: a user message
    after = conv.messages[summary_index + 1]
    assert after.role == "user" and after.text.startswith("Tool result:\nThe user has provided feedback")
    assert all(m.meta.get("condense_parent") == "c0ffee00-1234-4abc-9def-0123456789ab"
               for m in conv.messages[:summary_index])


def test_replays_leave_the_log_compaction_messages_out() -> None:
    for folder in (CLINE_XML, CLINE_NATIVE, ROO_XML, ROO_NATIVE):
        conv = load(folder)
        rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=20_000)
        assert len(rep.steps) == len(conv.llm_call_indices)
        sent = {item.index for item in rep.context_at(len(rep.steps) - 1)}
        assert not sent & conv.log_summary_indices
        assert set(range(rep.steps[-1].message_index)) - conv.log_summary_indices <= sent
    conv = load(ROO_NATIVE)
    with_summaries = compaction.replay(conv, "haystack.tool_result_pruning", include_log_summaries=True)
    assert conv.log_summary_indices <= {item.index for item in with_summaries.context_at(len(with_summaries.steps) - 1)}


# ------------------------------------------------------------------------------------------------ files and folders
@pytest.mark.parametrize("folder, name", [(CLINE_XML, "ui_messages.json"), (CLINE_XML, "task_metadata.json"),
                                          (CLINE_XML, "context_history.json"), (ROO_NATIVE, "history_item.json"),
                                          (ROO_NATIVE, "ui_messages.json")])
def test_any_file_of_a_task_loads_the_task(folder: Path, name: str) -> None:
    conv = compaction.load(folder / name)
    whole = load(folder)
    assert conv.format == whole.format and conv.source.path == str(folder / HISTORY)
    assert len(conv.messages) == len(whole.messages) and conv.usage == whole.usage and conv.events == whole.events


def test_a_task_file_without_its_history_names_the_missing_file(tmp_path: Path) -> None:
    lone = tmp_path / "ui_messages.json"
    shutil.copy(CLINE_XML / "ui_messages.json", lone)
    with pytest.raises(LoadError, match="its conversation is the api_conversation_history.json beside it, which is not "
                                        "there") as caught:
        compaction.load(lone)
    assert str(caught.value).startswith(str(lone))


def test_read_folder_reads_its_own_agents_tasks_only(tmp_path: Path) -> None:
    cline, roo = formats()["cline"], formats()["roo-code"]
    [conv] = cline.read_folder(CLINE_NATIVE)
    assert conv.format == "cline" and len(conv.usage) == 10
    assert roo.read_folder(CLINE_NATIVE) is None and cline.read_folder(ROO_XML) is None
    assert roo.read_folder(ROO_XML)[0].events == load(ROO_XML).events
    assert cline.read_folder(tmp_path) is None


def test_the_agents_folder_names_the_agent(tmp_path: Path) -> None:
    # a task with no mark of either agent in its files is Roo Code's when it lives in Roo Code's storage
    tasks = tmp_path / "rooveterinaryinc.roo-cline" / "tasks"
    tasks.mkdir(parents=True)
    history = [{"role": "user", "content": [{"type": "text", "text": "<task>\nhi\n</task>"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]
    (tasks / "t1").mkdir()
    (tasks / "t1" / HISTORY).write_text(json.dumps(history), encoding="utf-8")
    assert compaction.load(tasks / "t1" / HISTORY).format == "roo-code"
    assert compaction.load(json.dumps(history).encode()).format == "cline"


def test_damaged_companions_cost_only_what_they_hold(tmp_path: Path) -> None:
    folder = copy_task(CLINE_XML, tmp_path)
    (folder / "ui_messages.json").write_bytes(b'[{"ts": 1, "type": "say"')
    (folder / "context_history.json").write_text('{"not": "edits"}', encoding="utf-8")
    conv = load(folder)
    warnings = messages_warnings(conv)
    assert any(w.startswith("ui_messages.json beside the log is not read: not valid JSON") for w in warnings)
    assert any(w.startswith("context_history.json beside the log is not read: expected a JSON list") for w in warnings)
    assert not conv.usage and not conv.events and len(conv.messages) == 39


def test_malformed_records_and_entries_cost_only_themselves(tmp_path: Path) -> None:
    folder = copy_task(CLINE_XML, tmp_path)

    def break_records(ui: list) -> None:
        requests = [m for m in ui if m.get("say") == "api_req_started"]
        requests[0]["text"] = "not json"
        requests[2]["text"] = json.dumps({"tokensIn": "many", "tokensOut": None, "cacheReads": -5})

    def break_history(history: list) -> None:
        history[3]["content"] = 42
        history[6] = "not a message"
    edit_json(folder / "ui_messages.json", break_records)
    edit_json(folder / HISTORY, break_history)
    conv = load(folder)
    warnings = messages_warnings(conv)
    assert "ui_messages.json: 1 api_req_started records without a JSON object text skipped (first: message 1)" in warnings
    assert any(w.startswith("message 3: content is number") for w in warnings)
    assert any(w.startswith("message 6: skipped, expected a message object, got string") for w in warnings)
    assert conv.format == "cline" and len(conv.messages) > 30
    # the other records still give their calls' usage; the one with bad counts reports none
    edit = next(i for i, m in enumerate(conv.messages) if m.text.startswith("I'll add the flag"))
    following = next(i for i in conv.llm_call_indices if i > edit)
    assert len(conv.usage) == 10 and edit not in conv.usage and following in conv.usage


# ------------------------------------------------------------------------------------------------ detection
def test_detection_tells_the_agents_and_plain_anthropic_lists_apart() -> None:
    for folder, expected in ((CLINE_XML, "cline"), (CLINE_NATIVE, "cline"), (ROO_XML, "roo-code"),
                             (ROO_NATIVE, "roo-code")):
        data = (folder / HISTORY).read_bytes()
        assert compaction.load(data).format == expected  # by content alone
    for name in ("messages-list.json", "request.json", "capture.jsonl"):
        assert compaction.load(FIXTURES / "anthropic" / name).format == "anthropic"
    with pytest.raises(LoadError, match="a Roo Code task, not a Cline task"):
        compaction.load(ROO_XML / HISTORY, format="cline")
    with pytest.raises(LoadError, match="a Cline task, not a Roo Code task"):
        compaction.load(CLINE_XML / HISTORY, format="roo-code")


def test_an_anthropic_list_with_only_text_blocks_is_not_claimed() -> None:
    plain: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Summarize this."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Sure."}]},
    ]
    doc = parse_document(json.dumps(plain).encode(), "chat.json")
    assert formats()["cline"].detect(doc) is not None and formats()["roo-code"].detect(doc) is not None
    marked = [{**plain[0], "ts": 1_700_000_000_000}, {**plain[1], "ts": 1_700_000_001_000}]
    assert compaction.load(json.dumps(marked).encode()).format == "cline"  # per-message ts: a stored task


def test_formats_document_what_they_read() -> None:
    for name in ("cline", "roo-code"):
        info = formats()[name]
        assert info.reads and info.leaves_out and info.read_folder is not None


# ------------------------------------------------------------------------------------------------ smaller shapes
def _text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


ENV = _text("<environment_details>\n# VSCode Visible Files\na.py\n\n# Current Mode\nACT MODE\n</environment_details>")
SCREENSHOT = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}


def test_a_two_block_result_takes_its_images_and_ends_at_user_text() -> None:
    history = [
        {"role": "user", "content": [_text("<task>\nlook at the page\n</task>"), ENV]},
        {"role": "assistant", "content": [_text("<browser_action>\n<action>launch</action>\n<url>http://localhost"
                                                "</url>\n</browser_action>")]},
        {"role": "user", "content": [_text("[browser_action for 'launch'] Result:"), _text("The browser action has "
                                     "been executed."), SCREENSHOT, _text("Console logs:\n(No new logs)"),
                                     _text("The user provided the following feedback:\n<feedback>\nzoom in\n"
                                           "</feedback>"), ENV]},
        {"role": "assistant", "content": "Zooming in."},
    ]
    conv = compaction.load(json.dumps(history).encode())
    result = conv.messages[2].tool_result
    assert result.origin is conv.messages[1].tool_calls[0]
    assert result.result[0] == "[browser_action for 'launch'] Result:\nThe browser action has been executed."
    assert isinstance(result.result[1], Image) and result.result[2] == "Console logs:\n(No new logs)"
    user = conv.messages[3]
    assert user.role == "user" and user.texts[0].startswith("The user provided the following feedback")


def test_roo_reasoning_blocks_entries_and_signatures() -> None:
    history = [
        {"role": "user", "content": "<task>\nadd docs\n</task>", "ts": 1},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan the docs."}],
         "encrypted_content": "gAAAA", "ts": 2},
        {"role": "assistant", "content": [{"type": "reasoning", "encrypted_content": "gAAAB", "summary": []},
                                          _text("Writing them."), {"type": "thoughtSignature",
                                                                   "thoughtSignature": "c2ln"}], "ts": 3},
    ]
    conv = compaction.load(json.dumps(history).encode())
    assert conv.format == "roo-code"
    assert conv.messages[1].reasoning == ("Plan the docs.", "[encrypted reasoning]")
    assert conv.messages[1].texts == ("Writing them.",) and not conv.warnings


def test_a_request_without_a_response_is_reported(tmp_path: Path) -> None:
    folder = copy_task(ROO_NATIVE, tmp_path)

    def failed_request(ui: list) -> list:
        first = next(i for i, m in enumerate(ui) if m.get("say") == "api_req_started")
        failed = {**ui[first], "text": json.dumps({"apiProtocol": "anthropic", "tokensIn": 12100, "tokensOut": 0,
                                                   "cacheWrites": 0, "cacheReads": 0, "cost": 0.03,
                                                   "cancelReason": "streaming_failed"})}
        return [*ui[:first], failed, *ui[first:]]
    edit_json(folder / "ui_messages.json", failed_request)
    conv = load(folder)
    assert conv.usage == load(ROO_NATIVE).usage  # the retry's record produced the response
    assert any("1 api_req_started records with usage match no response" in w for w in messages_warnings(conv))


def test_files_uploaded_together_are_read_together() -> None:
    doc = parse_document((CLINE_XML / HISTORY).read_bytes(), HISTORY)
    doc.companions = {name: (CLINE_XML / name).read_bytes()
                      for name in ("ui_messages.json", "task_metadata.json", "context_history.json")}
    [conv] = formats()["cline"].read(doc)
    assert conv.usage == load(CLINE_XML).usage and conv.events == load(CLINE_XML).events
    assert conv.source.agent_version == "3.17.9"
