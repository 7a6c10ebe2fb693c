"""Calibration against provider-reported usage: a constructed case with a known answer, and the real logs."""

from __future__ import annotations

import pytest

import compaction
from compaction.analysis.calibration import calibrate
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import Usage
from compaction.tokens import render_haystack


def test_fit_recovers_a_known_ratio_and_overhead():
    messages, usage = [], {}
    chars = -1  # running joined length (separators included)
    for i in range(12):
        call = ToolCall(f"c{i}", "read_file", {"path": f"src/module_{i}.py"})
        for m in (Message("assistant", (f"step {i}",), (call,)),
                  Message("tool", tool_result=ToolResult(call, "x" * (300 * (i + 1))))):
            if m.role == "assistant":
                usage[len(messages)] = Usage(input_tokens=0, cache_read_tokens=int(max(chars, 0) / 3.0) + 1000,
                                             output_tokens=5)
            messages.append(m)
            chars += len(render_haystack(m)) + 1
    conv = Conversation(tuple(messages), source=Source("python"), usage=usage)
    cal = calibrate(conv)
    assert len(cal.rows) == 12
    assert cal.chars_per_token == pytest.approx(3.0, rel=0.01)
    assert cal.overhead_tokens == pytest.approx(1000, abs=5)
    assert cal.prompt_mape < 0.01


def test_no_usage_gives_an_empty_calibration():
    conv = Conversation((Message("user", ("hi",)), Message("assistant", ("hello",))))
    cal = calibrate(conv)
    assert cal.rows == [] and cal.chars_per_token is None


@pytest.mark.parametrize("name", [
    "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl",
    "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
])
def test_real_claude_code_logs_agree_after_fitting(name):
    from conftest import real_log

    conv = compaction.load(real_log(name))
    cal = calibrate(conv)
    assert len(cal.rows) > 30
    assert 1.5 < cal.chars_per_token < 5
    assert cal.prompt_mape < 0.05
    assert 0.9 < cal.cache_read_agreement < 1.1
