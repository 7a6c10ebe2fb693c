"""The information-loss index, built in one pass of set operations, says what its definition says on every
conversation of every real log: a removed message is quoted by the first other message holding one of its terms,
when that message comes later and is an assistant message."""

from __future__ import annotations

import pytest
from conftest import REAL_LOGS

import compaction
from compaction.analysis.information import _build_index
from compaction.analysis.information import _message_text
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.identifiers import identifier_set

LOGS = sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.suffix != ".md") if REAL_LOGS.exists() else []


def by_definition(conv: Conversation) -> dict[int, set[tuple[int, str]]]:
    """message -> (later assistant message, term) pairs, from each term's list of holders."""
    terms = [identifier_set(_message_text(m)) for m in conv.messages]
    holders: dict[str, list[int]] = {}
    for i, held in enumerate(terms):
        for term in held:
            holders.setdefault(term, []).append(i)
    out: dict[int, set[tuple[int, str]]] = {}
    for i, held in enumerate(terms):
        for term in held:
            others = [h for h in holders[term] if h != i]
            if others and others[0] > i and conv.messages[others[0]].role == "assistant":
                out.setdefault(i, set()).add((others[0], term))
    return out


def quotes(conv: Conversation) -> dict[int, set[tuple[int, str]]]:
    index = _build_index(conv)
    found = {i: set(index.quote_candidates(i)) for i in range(len(conv.messages))}
    return {i: pairs for i, pairs in found.items() if pairs}


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:60])
def test_the_index_says_what_its_definition_says_on_real_logs(path):
    for conv in compaction.load_all_conversations(path):
        assert quotes(conv) == by_definition(conv)


def test_a_term_counts_for_its_first_holder_only_and_only_when_an_assistant_quotes_it_next():
    call = ToolCall("c1", "read", {"path": "src/app_main.py"})
    conv = Conversation((
        Message("user", ("look at src/app_main.py and fix_the_bug",)),
        Message("assistant", tool_calls=(call,)),
        Message("tool", tool_result=ToolResult(call, "def handle_request(): ... see issue #4242")),
        Message("user", ("also handle_request please",)),
        Message("assistant", ("I changed handle_request and #4242 is fixed; fix_the_bug done",)),
    ))
    # src/app_main.py: first held by message 0, next by the call at 1 (an assistant) -> quotes 0; handle_request:
    # first held by 2, next by the user at 3 -> no quote; #4242: first held by 2, next by the assistant at 4 -> quotes 2
    assert quotes(conv) == {0: {(1, "src/app_main.py"), (4, "fix_the_bug")}, 2: {(4, "#4242")}}
    assert quotes(conv) == by_definition(conv)
