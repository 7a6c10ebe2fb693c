"""Damage the fuzzer found in readers it had not covered (Haystack, Agent Framework, Inspect .eval): each bad part
costs that part, with a warning naming its field, and never the log."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

import compaction

CALL = {"tool_name": "read", "arguments": {"path": "a.py"}, "id": "c1"}


def _haystack(*content) -> bytes:
    return json.dumps([
        {"role": "user", "meta": {}, "name": None, "content": [{"text": "fix the bug"}]},
        {"role": "assistant", "meta": {}, "name": None, "content": list(content)},
    ]).encode()


@pytest.mark.parametrize(("part", "field"), [
    ({"tool_call": "read a.py"}, "content[1].tool_call"),
    ({"tool_call_result": True}, "content[1].tool_call_result"),
    ({"tool_call_result": {"result": 7, "origin": CALL, "error": False}}, "content[1].tool_call_result.result"),
    ({"tool_call_result": {"result": [{"image": "x"}], "origin": CALL, "error": False}},
     "content[1].tool_call_result.result[0].image"),
    ({"reasoning": "thinking"}, "content[1].reasoning"),
    ({"image": ["png"]}, "content[1].image"),
    ({"file": 3}, "content[1].file"),
])
def test_haystack_part_of_the_wrong_type_costs_that_part(part, field):
    conv = compaction.load(_haystack({"text": "looking"}, part), name="run.json", format="haystack")
    assert conv.messages[1].texts == ("looking",)
    assert any(w.field == field and "expected" in w.message for w in conv.warnings), conv.warnings


def test_haystack_odd_ids_names_and_meta_are_tolerated():
    conv = compaction.load(json.dumps([
        {"role": "assistant", "meta": ["not", "a", "dict"], "name": 5, "content": [
            {"tool_call": {"tool_name": "read", "arguments": {}, "id": 12, "extra": "x"}}]},
    ]).encode(), name="run.json", format="haystack")
    call = conv.messages[0].tool_calls[0]
    assert call.id == "12" and call.extra is None and conv.messages[0].name is None


def test_haystack_content_of_the_wrong_type_past_what_detection_samples_costs_that_message_content():
    messages = [{"role": "user", "meta": {}, "content": [{"text": f"turn {i}"}]} for i in range(50)]
    messages.append({"role": "user", "meta": {}, "content": {"text": "a dict instead of a list"}})
    conv = compaction.load(json.dumps(messages).encode(), name="run.json")
    assert len(conv.messages) == 51 and conv.messages[50].texts == ()
    assert any(w.field == "content" and "message 50" in w.message for w in conv.warnings)


@pytest.mark.parametrize("call_id", [["c1"], {"id": "c1"}, 1.5, True])
def test_agent_framework_call_id_of_the_wrong_type_is_no_id(call_id):
    data = json.dumps([
        {"type": "message", "role": "assistant", "contents": [
            {"type": "function_call", "call_id": call_id, "name": "read", "arguments": "{}"}]},
        {"type": "message", "role": "tool", "contents": [
            {"type": "function_result", "call_id": call_id, "result": "ok"}, "not an object"]},
    ]).encode()
    conv = compaction.load(data, name="run.json", format="agent-framework")
    assert conv.messages[0].tool_calls[0].id is None
    assert conv.messages[1].tool_result.call_id is None
    assert any(w.field == "contents[1]" for w in conv.warnings)


def _eval_with_damaged_member(good: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "t"}}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(good))
        archive.writestr("samples/2_epoch_1.json", json.dumps(good) * 20)
    data = bytearray(buffer.getvalue())
    # flip bytes inside the second member's deflate stream (its data starts after its local header)
    second = data.find(b"samples/2_epoch_1.json") + len("samples/2_epoch_1.json")
    for offset in range(second + 10, second + 40):
        data[offset] ^= 0x5A
    return bytes(data)


def test_inspect_eval_member_with_a_damaged_deflate_stream_costs_that_member(tmp_path):
    from conftest import ROOT

    good = json.loads((ROOT / "tests" / "fixtures" / "inspect-ai" / "log.json").read_text())["samples"][0]
    path = tmp_path / "run.eval"
    path.write_bytes(_eval_with_damaged_member(good))
    conversations = compaction.load_all_conversations(path)
    assert len(conversations) == 1
    assert any(w.field == "samples/2_epoch_1.json" for w in conversations[0].warnings)
