"""The real libraries accept what our writers produce, and read it back as the same conversation."""

from __future__ import annotations

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.interop.haystack import from_haystack_message

LOGS = [*sample_paths(), *sorted((REAL_LOGS / "openai-plain").glob("*.json"))] if REAL_LOGS.exists() else sample_paths()


def read_back(path, writer: str, from_dict) -> tuple[compaction.Conversation, list, list]:
    """The log at ``path``, our ``writer``'s dicts of its messages, and the library's ``from_dict`` of each (one
    object per message)."""
    conv = compaction.load(path)
    dicts = compaction.convert(conv, writer)
    loaded = [from_dict(d) for d in dicts]
    assert len(loaded) == len(conv.messages)
    return conv, dicts, loaded


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_haystack_chatmessage_from_dict_accepts_our_writer(path):
    from haystack.dataclasses import ChatMessage

    conv, _, loaded = read_back(path, "haystack", ChatMessage.from_dict)
    for ours, theirs in zip(conv.messages, loaded):
        assert ours.same_content(from_haystack_message(theirs)), ours.preview()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_agent_framework_message_from_dict_accepts_our_writer(path):
    from agent_framework import Message

    conv, dicts, loaded = read_back(path, "agent-framework", Message.from_dict)
    for ours, theirs, data in zip(conv.messages, loaded, dicts):
        assert theirs.role == ours.role
        assert theirs.to_dict()["contents"] == data["contents"]
