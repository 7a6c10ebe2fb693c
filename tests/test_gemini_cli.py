"""Gemini CLI's chat compression, tool-output masking and token estimator, rule by rule (agents.md §1.1–1.2; the
CLI's own code decides where the spec is loose: see tests/test_gemini_cli_differential.py)."""

from __future__ import annotations

import json

import pytest

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Image
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import tool
from compaction.conversation import user as user_message
from compaction.export import export_setup
from compaction.gemini_contents import contents
from compaction.js_text import js_slice
from compaction.js_text import js_stringify
from compaction.js_text import js_trim
from compaction.js_text import utf16_len
from compaction.strategies import RunContext
from compaction.strategies import gemini_cli
from compaction.strategies import get_strategy
from compaction.strategies._gemini_passes import ContentSize
from compaction.strategies._gemini_passes import find_compress_split_point
from compaction.strategies._gemini_passes import format_truncated_tool_output
from compaction.strategies._gemini_passes import shell_preview
from compaction.strategies._gemini_passes import simple_preview
from compaction.summarizers import SummaryCall
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter

COUNTER = make_counter("gemini-cli")
LIMIT = 1_048_576


# ------------------------------------------------------------------------------------------------- building logs
def text_of(tokens: int, letter: str = "x") -> str:
    """ASCII text Gemini CLI estimates at ``tokens`` tokens."""
    return letter * (4 * tokens)


def turn(k: int, output: str, name: str = "read_file", reported: int | None = None) -> list[Message]:
    call = ToolCall(f"{name}-{k}", name, {"path": f"f{k}.py"})
    return [assistant(f"step {k}", [call], **({"reported": reported} if reported else {})), tool(call, output)]


def conversation(*messages: Message, usage_of_calls: dict[int, int] | None = None, **meta) -> Conversation:
    """A Gemini-like log; ``usage_of_calls`` maps a call's number to its reported prompt tokens."""
    usage = {}
    calls = [i for i, m in enumerate(messages) if m.role == "assistant"]
    for k, prompt in (usage_of_calls or {}).items():
        usage[calls[k]] = Usage(input_tokens=prompt)
    return Conversation(tuple(messages), source=Source("gemini-cli", None, "session-1", meta=meta), usage=usage)


def replay(conv: Conversation, strategy: str = "gemini_cli.chat_compression", window: int = LIMIT, **params):
    return compaction.replay(conv, strategy, params=params, context_window=window)


def sent(rep, k: int) -> list[Message]:
    return [item.message for item in rep.context_at(k)]


# ------------------------------------------------------------------------------------------------- JavaScript text
def test_javascript_string_semantics():
    assert utf16_len("a😀é") == 4  # the emoji is a surrogate pair
    assert js_slice("a😀b", 0, 2) == "a\ud83d" and js_slice("abcdef", -2) == "ef" and js_slice("abc", -0) == "abc"
    assert js_trim("\ufeff x \u00a0") == "x" and js_trim("\x1cx") == "\x1cx"  # BOM is JS whitespace, \x1c is not
    assert js_stringify({"a": [1, 2.0, None, True], "b": "é\n\ud800"}) == '{"a":[1,2,null,true],"b":"é\\n\\ud800"}'
    assert js_stringify({"output": "x"}, 2) == '{\n  "output": "x"\n}'
    assert js_stringify({"n": 1e-7, "m": 1e21, "k": 0.000001}) == '{"n":1e-7,"m":1e+21,"k":0.000001}'


# ------------------------------------------------------------------------------------------------- estimator
def test_estimator_quarter_token_per_ascii_unit_and_one_and_a_half_per_other_unit():
    assert COUNTER.count([user_message("abcd" * 10)]) == 10
    assert COUNTER.count([user_message("é")]) == 1  # 1.5 floored
    assert COUNTER.count([user_message("😀")]) == 3  # two UTF-16 units
    assert COUNTER.count([user_message("éé")]) == 3


def test_estimator_floors_once_over_the_whole_list():
    three = [user_message("a"), user_message("b"), user_message("c"), user_message("d")]
    assert [COUNTER.count([m]) for m in three] == [0, 0, 0, 0]
    assert COUNTER.count(three) == 1


def test_estimator_long_text_is_length_over_four():
    assert COUNTER.count([user_message("é" * 100_001)]) == 100_001 // 4
    assert COUNTER.count([user_message("é" * 100_000)]) == 150_000


def test_estimator_function_response_is_name_plus_response_json_over_four():
    call = ToolCall("c1", "read_file")
    message = tool(call, "hello")
    # name (9) + {"output":"hello"} (18) = 27 quarters
    assert COUNTER.count([message]) == 27 // 4
    failed = tool(call, "boom", error=True)
    assert contents([failed])[0]["parts"][0]["functionResponse"]["response"] == {"error": "boom"}


def test_estimator_media_and_function_calls():
    assert COUNTER.count([Message("user", images=(Image(mime_type="image/png"),))]) == 3000
    shot = Message("tool", tool_result=ToolResult(ToolCall("c", "screenshot"), ("done", Image(mime_type="image/png"))))
    assert COUNTER.count([shot]) == (len("screenshot") + len('{"output":"done"}')) // 4 + 3000
    call = assistant(None, [ToolCall("c1", "ls", {"dir": "."})])
    part = '{"functionCall":{"id":"c1","name":"ls","args":{"dir":"."}}}'
    assert COUNTER.count([call]) == len(part) // 4


def test_estimator_leaves_out_thoughts_and_counts_the_system_instruction():
    thought = Message("assistant", ("ok",), reasoning=("a long thought " * 50,))
    assert COUNTER.count([thought]) == 0
    assert COUNTER.count([Message("system", ("abcd" * 3,))]) == 3


def test_contents_group_the_tool_results_of_a_turn():
    a, b = ToolCall("a", "ls"), ToolCall("b", "cat")
    made = contents([Message("system", ("sys",)), user_message("go"), assistant(None, [a, b]), tool(a, "1"),
                     tool(b, "2"), assistant("done")])
    assert [c["role"] for c in made] == ["user", "model", "user", "model"]
    assert [p["functionResponse"]["id"] for p in made[2]["parts"]] == ["a", "b"]


# ------------------------------------------------------------------------------------------------- trigger
def _prompted_log(calls: int, reported: int | None, first: str = "start") -> list[Message]:
    messages = [user_message(first)]
    for k in range(calls):
        messages += [user_message(f"question {k} " + text_of(200)), assistant(f"answer {k} " + text_of(200))]
    return messages


def test_compression_triggers_on_the_previous_calls_reported_prompt_tokens():
    messages = _prompted_log(8, None)
    below = conversation(*messages, usage_of_calls={k: 400_000 for k in range(8)})
    assert replay(below, compression_threshold=0.5, tool_output_masking=False).summary()["compactions"] == 0
    at = conversation(*messages, usage_of_calls={3: LIMIT // 2})
    rep = replay(at, compression_threshold=0.5, tool_output_masking=False)
    compacted = [s.step for s in rep.steps if s.compacted]
    assert compacted and compacted[0] == 4  # the report of call 3 is read before call 4
    assert "reported" in rep.steps[4].note


def test_compression_falls_back_to_the_estimator_when_the_log_has_no_usage():
    conv = conversation(*_prompted_log(8, None))
    rep = replay(conv, window=4000, compression_threshold=0.5, tool_output_masking=False)
    first = next(s for s in rep.steps if s.triggered)
    assert "the log reports no usage" in first.note
    # the estimate of what the previous call sent reached 2,000
    assert rep.steps[first.step - 1].tokens_sent >= 2000 > rep.steps[first.step - 2].tokens_sent


def test_compression_ignores_compact_at_and_compact_to():
    conv = conversation(*_prompted_log(8, None))
    a = compaction.replay(conv, "gemini_cli.chat_compression", context_window=4000, compact_at=0.1, compact_to=0.05)
    b = compaction.replay(conv, "gemini_cli.chat_compression", context_window=4000, compact_at=0.9, compact_to=0.8)
    assert [s.tokens_sent for s in a.steps] == [s.tokens_sent for s in b.steps]


# ------------------------------------------------------------------------------------------------- split point
def _size(role: str, chars: int, response: bool = False, call: bool = False) -> ContentSize:
    return ContentSize(role, chars, response, call)


def test_split_point_is_the_first_plain_user_message_past_seventy_percent():
    sizes = [_size("user", 10), _size("model", 40), _size("user", 10), _size("model", 10), _size("user", 20),
             _size("model", 10)]
    # total 100, target 70: the user content at index 4 has 70 before it
    assert find_compress_split_point(sizes, 0.7) == 4


def test_function_responses_are_never_split_points():
    sizes = [_size("user", 10), _size("model", 10, call=True), _size("user", 70, response=True),
             _size("model", 10, call=True)]
    assert find_compress_split_point(sizes, 0.7) == 0  # only the first content is a candidate: nothing to compress


def test_everything_is_compressed_when_the_last_content_is_a_plain_answer():
    sizes = [_size("user", 10), _size("model", 90)]
    assert find_compress_split_point(sizes, 0.7) == 2
    with pytest.raises(ValueError):
        find_compress_split_point(sizes, 1.0)


def test_a_single_prompt_agent_run_cannot_be_compressed():
    messages = [user_message("fix the bug")]
    for k in range(10):
        messages += turn(k, text_of(500))
    rep = replay(conversation(*messages), window=4000, tool_output_masking=False)
    assert rep.summary()["compactions"] == 0
    assert any("nothing to compress" in s.note and s.declined for s in rep.steps)


# ------------------------------------------------------------------------------------------------- summary
def test_compressed_history_is_summary_and_acknowledgement_then_the_newest_part():
    env = user_message("<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
                       "</session_context>")
    conv = conversation(env, *_prompted_log(8, None))
    rep = replay(conv, window=4000, tool_output_masking=False)
    k = next(s.step for s in rep.steps if s.compacted)
    now = rep.context_at(k)
    assert now[0].message.texts == env.texts and now[0].inserted_kind == "reinserted"
    assert now[1].inserted_kind == "summary" and now[1].message.role == "user"
    assert now[1].message.text.startswith("<state_snapshot>")
    assert now[2].message.role == "assistant" and now[2].message.text == "Got it. Thanks for the additional context!"
    assert now[3].message.role == "user" and now[3].index is not None  # the kept part starts at a user message
    assert len(rep.steps[k].model_calls) == 2  # the summary and the verification "probe"


def _recording(monkeypatch, answer=None) -> list[SummaryRequest]:
    requests: list[SummaryRequest] = []
    original = RunContext.summarizer

    class Recording:
        def __init__(self, inner):
            self.inner = inner

        def summarize(self, request, counter):
            requests.append(request)
            call = self.inner.summarize(request, counter)
            return call if answer is None else SummaryCall(answer, 1, 1, "extractive")

    monkeypatch.setattr(RunContext, "summarizer", lambda self, p: Recording(original(self, p)))
    return requests


def test_summary_request_and_verification_request(monkeypatch):
    requests = _recording(monkeypatch)
    rep = replay(conversation(*_prompted_log(14, None)), window=4000, tool_output_masking=False)
    k = next(s.step for s in rep.steps if s.compacted)
    first, verify = requests[:2]
    assert first.prompt()[0].role == "system" and "<state_snapshot>" in first.prompt()[0].text
    assert first.prompt()[-1].text.startswith(gemini_cli.ANCHOR_NEW)
    assert first.prompt()[-1].text.endswith(gemini_cli.ANCHOR_TAIL)
    assert [m.role for m in verify.prompt()[-2:]] == ["assistant", "user"]
    assert verify.prompt()[-1].text == gemini_cli.VERIFY_PROMPT
    assert verify.prompt()[1:-2] == first.prompt()[1:-1]  # the same head
    assert rep.context_at(k)[0].message.text == verify.prompt()[-2].text  # the verified snapshot is kept
    # a later compression sees the earlier snapshot in its head and asks to integrate it
    later = [r for r in requests[2:] if r.prompt()[-1].role == "user" and r.prompt()[-1].text != gemini_cli.VERIFY_PROMPT]
    assert later and later[0].prompt()[-1].text.startswith(gemini_cli.ANCHOR_UPDATE)


def test_an_empty_summary_is_a_failed_compression(monkeypatch):
    _recording(monkeypatch, answer="  ")
    rep = replay(conversation(*_prompted_log(8, None)), window=4000, tool_output_masking=False)
    assert rep.summary()["compactions"] == 0
    assert any("COMPRESSION_FAILED_EMPTY_SUMMARY" in s.note and s.declined for s in rep.steps)


def test_an_inflating_compression_is_discarded_and_never_retried():
    conv = conversation(*_prompted_log(8, None))
    rep = replay(conv, window=4000, tool_output_masking=False, summarizer="fixed-size", summary_tokens=20_000)
    failed = [s for s in rep.steps if "INFLATED" in s.note]
    assert len(failed) == 1 and failed[0].declined and len(failed[0].model_calls) == 2
    later = [s for s in rep.steps if s.step > failed[0].step and s.triggered]
    assert later and all(not s.model_calls for s in later)  # truncation only from then on
    assert all("truncation" in s.note for s in later)
    assert rep.summary()["compactions"] == 0


# ------------------------------------------------------------------------------------------------- budget
def test_function_responses_past_the_50000_token_budget_are_truncated():
    messages = [user_message("first"), assistant("ok"), user_message("read them")]
    for k in range(4):
        messages += turn(k, text_of(20_000, "abcd"[k]))
    messages += [assistant("read all four"), user_message("now summarize"), assistant("done")]
    conv = conversation(*messages, usage_of_calls={5: 600_000})
    rep = replay(conv, compression_threshold=0.5, tool_output_masking=False)
    k = next(s.step for s in rep.steps if s.triggered)
    results = [m for m in sent(rep, k) if m.tool_result is not None]
    # newest first: 20k + 20k fit, the third crosses 50k and is cut (its placeholder then counts), the oldest too
    assert "truncated 2 older function responses" in rep.steps[k].note
    assert not results or all(len(m.tool_result.text) <= 40_200 for m in results)


def test_truncated_output_keeps_its_head_and_tail():
    text = "".join(f"line {i}\n" for i in range(10_000))
    cut = format_truncated_tool_output(text, "~/.gemini/tmp/p/tool-outputs/read_file_1.txt", 1000)
    assert cut.startswith("Output too large. Showing first 200 and last 800 characters. For full output see: "
                          "~/.gemini/tmp/p/tool-outputs/read_file_1.txt\n" + text[:200] + "\n\n... [")
    assert cut.endswith(" characters omitted] ...\n\n" + text[-800:])
    assert format_truncated_tool_output("short", "f", 1000) == "short"


# ------------------------------------------------------------------------------------------------- masking
def _tool_log(outputs: list[str], name: str = "read_file") -> Conversation:
    messages = [user_message("go")]
    for k, output in enumerate(outputs):
        messages += turn(k, output, name)
    messages.append(assistant("done"))
    return conversation(*messages, projectHash="abc")


def test_masking_protects_the_newest_50000_tool_tokens_and_masks_the_rest_once_30000():
    # each output is 20,000 tokens (plus its name and JSON); the newest two stay under 50,000, the third crosses it
    few = _tool_log([text_of(20_000)] * 4)
    rep = replay(few, "gemini_cli.tool_output_masking")
    assert rep.summary()["compactions"] == 0  # at most one older output beyond them: 20,000 prunable < 30,000
    more = _tool_log([text_of(20_000)] * 6)
    rep = replay(more, "gemini_cli.tool_output_masking")
    step = next(s for s in rep.steps if s.compacted)
    masked = [m for m in sent(rep, step.step) if m.tool_result is not None and "<tool_output_masked>" in m.tool_result.text]
    assert len(masked) >= 2 and "masked" in step.note


def test_masked_text_is_a_preview_and_the_file_path():
    rep = replay(_tool_log([text_of(20_000)] * 6), "gemini_cli.tool_output_masking")
    step = next(s for s in rep.steps if s.compacted)
    message = next(m for m in sent(rep, step.step) if m.tool_result is not None
                   and "<tool_output_masked>" in m.tool_result.text)
    text = message.tool_result.text
    content = js_stringify({"output": text_of(20_000)}, 2)
    assert text.startswith("<tool_output_masked>\n" + content[:250] + "\n... [TRUNCATED] ...\n" + content[-250:])
    assert "\n\nOutput too large. Full output available at: ~/.gemini/tmp/abc/tool-outputs/session-session-1/" \
           "read_file_read_file-0_" in text
    assert text.endswith(".txt\n</tool_output_masked>")


def test_masking_persists_and_skips_what_is_masked_already():
    rep = replay(_tool_log([text_of(20_000)] * 8), "gemini_cli.tool_output_masking")
    assert get_strategy("gemini_cli.tool_output_masking").reference.persistence == "rewrite"
    first = next(s.step for s in rep.steps if s.compacted)
    masked_first = {m.tool_result.call_id for m in sent(rep, first) if m.meta.get("gemini_masked")}
    later = {m.tool_result.call_id for m in sent(rep, rep.steps[-1].step) if m.meta.get("gemini_masked")}
    assert masked_first and masked_first <= later


def test_exempt_tools_are_never_masked():
    rep = replay(_tool_log([text_of(20_000)] * 6, name="ask_user"), "gemini_cli.tool_output_masking")
    assert rep.summary()["compactions"] == 0


def test_the_pending_request_and_the_latest_turn_are_not_scanned():
    rep = replay(_tool_log([text_of(20_000)] * 6), "gemini_cli.tool_output_masking",
                 protection_threshold_tokens=0, min_prunable_threshold_tokens=0)
    for step in rep.steps:
        messages = sent(rep, step.step)
        last_results = [m for m in messages[-1:] if m.tool_result is not None]
        assert all("<tool_output_masked>" not in m.tool_result.text for m in last_results)


def test_shell_preview_keeps_other_sections_whole():
    output = "Command: ls\nDirectory: .\nOutput: " + "\n".join(f"f{i}" for i in range(40)) + "\nExit Code: 1"
    preview = shell_preview({"output": output})
    assert preview.startswith("Command: ls\nDirectory: .\nOutput: f0\n")
    assert "... [20 lines omitted] ..." in preview and preview.endswith("\nExit Code: 1")
    assert simple_preview("a\nb") == "a\nb"


# ------------------------------------------------------------------------------------------------- export
def test_settings_json_names_the_cli_settings():
    (snippet,) = export_setup("gemini_cli.chat_compression", {"compression_threshold": 0.3}, context_window=LIMIT)
    settings = json.loads(snippet.code)
    assert settings["model"] == {"compressionThreshold": 0.3}
    assert settings["tools"] == {"truncateToolOutputThreshold": 40_000}
    assert settings["contextManagement"]["tools"]["outputMasking"] == {
        "protectionThresholdTokens": 50_000, "minPrunableThresholdTokens": 30_000, "protectLatestTurn": True}
    (snippet,) = export_setup("gemini_cli.chat_compression", {"tool_output_masking": False}, context_window=262_144)
    settings = json.loads(snippet.code)
    assert settings["model"] == {"compressionThreshold": 0.125} and "contextManagement" not in settings
    (snippet,) = export_setup("gemini_cli.tool_output_masking", {"min_prunable_threshold_tokens": 10_000})
    assert json.loads(snippet.code)["contextManagement"]["tools"]["outputMasking"]["minPrunableThresholdTokens"] == 10_000
