"""The real libraries accept what our writers produce, and read it back as the same conversation."""

from __future__ import annotations

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.interop.haystack import from_haystack_message

LOGS = [*sample_paths(), *sorted((REAL_LOGS / "openai-plain").glob("*.json"))] if REAL_LOGS.exists() else sample_paths()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_haystack_chatmessage_from_dict_accepts_our_writer(path):
    from haystack.dataclasses import ChatMessage

    conv = compaction.load(path)
    dicts = compaction.convert(conv, "haystack")
    loaded = [ChatMessage.from_dict(d) for d in dicts]
    assert len(loaded) == len(conv.messages)
    for ours, theirs in zip(conv.messages, loaded):
        assert ours.same_content(from_haystack_message(theirs)), ours.preview()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_agent_framework_message_from_dict_accepts_our_writer(path):
    from agent_framework import Message

    conv = compaction.load(path)
    dicts = compaction.convert(conv, "agent-framework")
    loaded = [Message.from_dict(d) for d in dicts]
    assert len(loaded) == len(conv.messages)
    for ours, theirs, data in zip(conv.messages, loaded, dicts):
        assert theirs.role == ours.role
        assert theirs.to_dict()["contents"] == data["contents"]
