"""Aider: the real chat history, the chat and LLM histories aider 0.86.2 itself wrote for ``tools/aider_fixtures.py``
(a stubbed model), the two read against each other, and hand-made transcripts for each rule of aider's writers."""

from __future__ import annotations

import pytest
from conftest import ROOT
from conftest import real_log

import compaction
from compaction.conversation import Usage
from compaction.formats import LoadError
from compaction.formats import parse_document
from compaction.formats._aider_chat import ADDED_FILES
from compaction.formats._aider_chat import EDITOR_DONE
from compaction.formats._aider_chat import INTERRUPT
from compaction.formats._aider_chat import INTERRUPTED
from compaction.formats._aider_chat import NO_EDITS
from compaction.formats._aider_chat import UPDATED

FIXTURES = ROOT / "tests" / "fixtures" / "aider"
HEADER = "\n# aider chat started at 2025-05-01 10:00:00\n\n"
ANNOUNCE = "> Aider v0.86.2  \n> Main model: gpt-4o with diff edit format  \n> Git repo: .git with 3 files  \n"


def chat(body: str, header: bool = True) -> list[compaction.Conversation]:
    return compaction.load_all_conversations(((HEADER + ANNOUNCE) if header else "") .encode() + body.encode(),
                                             name="x.aider.chat.history.md")


def sent(conv: compaction.Conversation) -> list[tuple[str, str]]:
    """(role, text) of what the model was sent, in order."""
    return [(m.role, m.text) for m in conv.messages if not m.meta.get("hidden_from_agent")]


# ------------------------------------------------------------------------------------------------ real history
def test_real_chat_history_has_its_four_sessions() -> None:
    conversations = compaction.load_all_conversations(
        real_log("aider/BeehiveInnovations-zen-mcp-server__aider.chat.history.md"))
    assert [c.id for c in conversations] == ["session-1", "session-2", "session-3", "session-4"]
    assert all(c.format == "aider" and not c.llm_call_indices for c in conversations)
    last = conversations[-1]
    assert last.source.model == "gemini/gemini-2.5-pro-preview-06-05" and last.source.agent_version == "0.86.1"
    assert last.source.meta == {"started_at": "2025-10-23 17:04:56", "edit_format": "diff-fenced",
                                "aider_output_lines": 41}
    assert not any(c.warnings for c in conversations)
    commands = [m.meta["aider_command"] for m in last.messages]
    assert commands == ["/add", "/copy-context", "/add", "/copy-context", "/copy-context", "/copy-context",
                        "/copy-context"]
    assert all(m.meta["hidden_from_agent"] for m in last.messages)
    assert last.messages[0].text.startswith("/add /home/dragonfsky/git/github/zen-mcp-server/utils/file_utils.py\n  ")
    assert conversations[0].messages == () and conversations[0].source.model is None


# ------------------------------------------------------------------------------------------------ aider's own files
def test_chat_history_written_by_aider() -> None:
    conversations = compaction.load_all_conversations(FIXTURES / "aider.chat.history.md")
    assert [c.id for c in conversations] == ["session-1", "session-2", "session-2.2", "session-3", "session-4",
                                             "session-5"]
    first = conversations[0]
    assert first.source.agent_version == "0.86.2" and first.source.model == "gpt-4o"
    assert first.source.meta["edit_format"] == "diff" and "usage_approximate" in first.source.meta
    assert first.source.meta["aider_output_lines"] == 12
    assert len(first.llm_call_indices) == 6 and len(first.usage) == 6
    assert first.usage[1] == Usage(input_tokens=2100, output_tokens=33)  # "Tokens: 2.1k sent, 33 received."
    assert first.messages[1].meta["cost"] == 0.0055
    texts = [m.text for m in first.messages]
    assert texts[0] == "Fix add() in calc.py,\nit returns the wrong sum."
    assert texts[2].startswith("I committed the changes with git hash ") and texts[2].endswith(
        " & commit msg: fix: add() adds instead of subtracting")
    assert texts[6] == ADDED_FILES.format(fnames="tests_calc.py")
    assert texts[10] == NO_EDITS and texts[12].startswith("# 1 SEARCH/REPLACE block failed to match!\n\n## Search")
    assert texts[12].endswith("indentation, docstrings, etc")
    run = first.messages[15]
    assert run.meta["aider_not_in_log"] == "command output" and "python -c \"print('ok')\"" in run.text
    assert first.messages[14].meta == {"line": 74, "hidden_from_agent": True, "aider_command": "/run"}
    assert [m.meta.get("generated") for m in first.messages if m.role == "assistant"] == [
        None, False, None, None, None, False, None, False, None]
    cleared, after = conversations[1], conversations[2]
    assert [m.text for m in cleared.messages] == ["/tokens", "/clear"] and not cleared.llm_call_indices
    reply = after.messages[1].text
    assert reply.startswith("# A heading the model wrote\n\n> A quoted line the model wrote.\n\nThat is all")
    architect = conversations[4]
    assert [m.meta.get("aider_role") for m in architect.messages[:4]] == [None, None, "editor", "editor"]
    assert architect.messages[3].meta["model"] == "gpt-4o-mini" and architect.messages[6].text == EDITOR_DONE
    for conv in conversations:
        rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=4000)
        assert len(rep.steps) == len(conv.llm_call_indices)


def test_llm_history_written_by_aider() -> None:
    runs = compaction.load_all_conversations(FIXTURES / "aider.llm.history")
    assert [(r.id, len(r.llm_call_indices)) for r in runs] == [("run-1", 6), ("run-2", 3), ("run-3", 1), ("run-4", 1),
                                                               ("run-5", 3)]
    # the interrupted request was logged with an empty reply, which no later request carries
    assert [w.message for w in runs[4].warnings] == [
        "1 reply(ies) of this run are not in its last request (empty, or dropped by aider): not read"]
    first = runs[0]
    assert first.messages[0].role == "system" and first.messages[0].text.startswith("Act as an expert software")
    assert first.messages[-1].text == "The test passes now." and first.messages[-2].role == "system"
    assert first.messages[2].meta["timestamp"] and first.messages[2].meta["sent_at"]
    assert "I ran this command:\n\npython -c \"print('ok')\"\n\nAnd got this output:\n\nok\n" in [
        m.text for m in first.messages]
    summarized = runs[1]
    (event,) = summarized.events
    assert event.kind == "compaction" and event.summary.startswith("I spoke to you previously about a number")
    assert summarized.log_summary_indices == frozenset({event.message_index, event.message_index + 1})
    assert summarized.messages[event.message_index + 1].text == "Ok."
    rep = compaction.replay(summarized, "haystack.tool_result_pruning", context_window=4000)
    assert len(rep.steps) == 3


@pytest.mark.parametrize("session, run", [(0, 0), (5, 4)], ids=["edits-files-errors-run", "lint-interrupt"])
def test_the_chat_history_holds_what_the_llm_history_sent(session: int, run: int) -> None:
    """Aider's two files of the same session agree: the inputs, replies and aider's own messages read from the
    transcript are the request's chat (the LLM history also has the system prompt and the files)."""
    md = compaction.load_all_conversations(FIXTURES / "aider.chat.history.md")[session]
    llm = compaction.load_all_conversations(FIXTURES / "aider.llm.history")[run]
    files = ("I have *added these files to the chat*", "Ok, any changes I propose will be to those files.")
    from_llm = [(m.role, m.text) for m in llm.messages if m.role != "system" and not m.text.startswith(files)]
    stand_in = "[1 line(s) of command output: not kept in .aider.chat.history.md]"
    from_md = [(role, text.replace(stand_in, "ok")) for role, text in sent(md)]

    def unindented(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:  # aider strips the lint lines it logs
        return [(role, "\n".join(line.lstrip() for line in text.split("\n"))) for role, text in pairs]

    assert unindented(from_md) == unindented(from_llm)
    assert from_md != from_llm or run == 0


# ------------------------------------------------------------------------------------------------ rules
def test_usage_with_cache_and_the_cost_on_its_own_line() -> None:
    (conv,) = chat("#### hi  \n\nhello\n\n> Tokens: 12k sent, 2.0k cache write, 1.5k cache hit, 222 received.\n"
                   "Cost: $0.01 message, $0.02 session.  \n")
    assert conv.usage[1] == Usage(input_tokens=12000 - 3500, output_tokens=222, cache_read_tokens=1500,
                                  cache_write_tokens=2000)
    assert conv.messages[1].meta["cost"] == 0.01 and not conv.warnings[1:]


def test_older_comma_counts_and_stripped_line_ends() -> None:
    body = "#### first line\n#### second\n\n> quoted by the model\n\nreply\n\n> Tokens: 1,234 sent, 56 received.\n"
    (conv,) = compaction.load_all_conversations((HEADER + body).encode(), name="h.md")
    # no two-space ends anywhere: every '> ' line that starts a paragraph is aider's, as aider itself reads it
    assert sent(conv) == [("user", "first line\nsecond"), ("assistant", "reply")]
    assert conv.usage[1] == Usage(input_tokens=1234, output_tokens=56)


def test_reply_markup_is_the_replys_own() -> None:
    (conv,) = chat("#### q  \n\nIntro\n#### Step 1\n> note\n\n#### Step 2 without marks\n\n> quote\n\nend\n\n")
    assert sent(conv)[1] == ("assistant", "Intro\n#### Step 1\n> note\n\n#### Step 2 without marks\n\n> quote\n\nend")


def test_interrupted_requests() -> None:
    (partial,) = chat("#### go  \n> ^C again to exit  \n\nhalf a rep\n\n#### next  \n")
    assert sent(partial) == [("user", "go"), ("assistant", "half a rep"), ("user", INTERRUPT),
                             ("assistant", INTERRUPTED), ("user", "next")]
    (silent,) = chat("#### go  \n>  \n>  \n> ^C again to exit  \n")
    assert sent(silent) == [("user", "go\n" + INTERRUPT), ("assistant", INTERRUPTED)]
    assert silent.llm_call_indices == []
    (idle,) = chat("> ^C again to exit  \n")
    assert sent(idle) == []


def test_edits_without_a_commit_and_lint_errors_sent_back() -> None:
    body = ("#### fix  \n\nedit\n\n> Applied edit to a.py  \n>  \n> ## Running: flake8 a.py  \n> a.py:1:1: F401  \n"
            "> Attempt to fix lint errors? (Y)es/(N)o [Yes]: y  \n\nfixed\n\n")
    no_repo = "> Git repo: none  \n"
    (conv,) = chat(no_repo + body)
    assert sent(conv) == [("user", "fix"), ("assistant", "edit"), ("user", UPDATED), ("assistant", "Ok."),
                          ("user", "\n## Running: flake8 a.py\na.py:1:1: F401"), ("assistant", "fixed")]
    (in_repo,) = chat(body)
    assert sent(in_repo)[2] == ("user", NO_EDITS)


def test_shell_commands_web_pages_and_urls() -> None:
    (conv,) = chat("#### read https://x.dev/a  \n> https://x.dev/a  \n"
                   "> Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n"
                   "> Scraping https://x.dev/a...  \n\nok, run `ls`\n\n> Tokens: 10 sent, 5 received.  \n"
                   "> ls  \n> Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n>  \n> Running ls  \n"
                   "> Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n"
                   "> Added 3 lines of output to the chat.  \n\n#### /web https://y.dev  \n"
                   "> Scraping https://y.dev...  \n> ... added to chat.  \n")
    texts = sent(conv)
    assert texts[0][1].startswith("read https://x.dev/a\n\nHere is the content of https://x.dev/a:\n\n[the page")
    assert texts[2] == ("user", "Output from ls\n[the output of ls: not kept in .aider.chat.history.md]\n\n\n")
    assert texts[3] == ("assistant", "Ok")
    assert texts[4][1].startswith("Here is the content of https://y.dev:\n\n[the page's content: not kept")
    assert sum(1 for w in conv.warnings if "a stand-in marks each" in w.message) == 1


def test_questions_answered_for_a_group_are_not_inputs() -> None:
    question = "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a"
    (conv,) = chat(f"#### see a.py and b.py  \n\nThey are in a.py and b.py.\n\n> a.py  \n> {question}  \n"
                   f"> b.py  \n\n#### {question}  \n> {question}  \n\nNow I see both.\n\n")
    assert [t for _, t in sent(conv)] == ["see a.py and b.py", "They are in a.py and b.py.",
                                           ADDED_FILES.format(fnames="a.py, b.py"), "Now I see both."]


def test_sessions_split_and_clear_starts_a_new_conversation() -> None:
    body = ("#### one  \n\nr1\n\n#### /clear  \n> All chat history cleared.  \n\n#### two  \n\nr2\n\n"
            "\n# aider chat started at 2025-05-02 09:00:00\n\n#### three  \n\nr3\n")
    conversations = chat(body)
    assert [(c.id, [t for _, t in sent(c)]) for c in conversations] == [
        ("session-1", ["one", "r1"]), ("session-1.2", ["two", "r2"]), ("session-2", ["three", "r3"])]
    assert conversations[2].source.meta["started_at"] == "2025-05-02 09:00:00"


def test_llm_history_list_content_and_damage() -> None:
    text = ("TO LLM 2025-01-01T00:00:01\n-------\nSYSTEM be brief\n-------\nUSER type: text\nUSER text: look at\n"
            "this picture\nUSER type: image_url\nUSER Image_url URL: data:image/png;base64,AAAA\n"
            "-------\nUSER\nLLM RESPONSE 2025-01-01T00:00:02\nASSISTANT A cat.\nASSISTANT \nASSISTANT Done.\n"
            "LLM RESPONSE 2025-01-01T00:00:03\nASSISTANT orphan\n"
            "TO LLM 2025-01-01T00:00:04\n-------\nNOT A ROLE\n")
    doc = parse_document(text.encode(), "h.history")
    assert doc.kind == "text"
    (conv,) = compaction.load_all_conversations(text.encode(), name="h.history")
    assert [(m.role, m.texts) for m in conv.messages] == [("system", ("be brief",)), ("user", ("look at\nthis picture",)),
                                                          ("user", ("",)), ("assistant", ("A cat.\n\nDone.",))]
    assert conv.messages[1].images[0].source == "base64"
    messages = " | ".join(w.message for w in conv.warnings)
    for fragment in ("'LLM RESPONSE' without the 'TO LLM' request",
                     "does not start with a role", "1 request(s) without a reply"):
        assert fragment in messages, fragment


def test_llm_history_runs_follow_the_replies_they_carry() -> None:
    def request(*lines: str) -> str:
        return "".join(f"-------\n{line}\n" for line in lines)

    text = ("TO LLM 2025-01-01T00:00:01\n" + request("SYSTEM s", "USER q1") +
            "LLM RESPONSE 2025-01-01T00:00:02\nASSISTANT a1\n"
            "TO LLM 2025-01-01T00:00:03\n" + request("SYSTEM s", "USER other") +   # a new run (no a1)
            "LLM RESPONSE 2025-01-01T00:00:04\nASSISTANT b1\n"
            "TO LLM 2025-01-01T00:00:05\n" + request("SYSTEM s", "USER q1", "ASSISTANT a1", "USER q2") +
            "LLM RESPONSE 2025-01-01T00:00:06\nASSISTANT a2\n")
    first, second = compaction.load_all_conversations(text.encode(), name="h.history")
    assert [m.text for m in first.messages] == ["s", "q1", "a1", "q2", "a2"] and first.llm_call_indices == [2, 4]
    assert [m.text for m in second.messages] == ["s", "other", "b1"]


# ------------------------------------------------------------------------------------------------ detection
@pytest.mark.parametrize("text, why", [
    ("# Notes\n\n#### not aider  \n", "neither '# aider chat started at"),
    ("intro\n# aider chat started at 2025-01-01 10:00:00\n", "neither '# aider chat started at"),
    ("TO LLM yesterday\n-------\nUSER hi\n", "neither '# aider chat started at"),
])
def test_detection_is_strict(text: str, why: str) -> None:
    with pytest.raises(LoadError, match="unknown log format") as info:
        compaction.load(text.encode(), name="notes.md")
    assert f"aider: the first line is {why}" in str(info.value)
    with pytest.raises(LoadError, match="does not look like Aider"):
        compaction.load(text.encode(), name="notes.md", format="aider")


def test_a_transcript_with_json_looking_lines_is_still_text() -> None:
    body = "#### print some json  \n\n42\n\"quoted\"\n{\"a\": 1}\n\n> Tokens: 10 sent, 3 received.  \n"
    (conv,) = chat(body)
    assert sent(conv)[1] == ("assistant", "42\n\"quoted\"\n{\"a\": 1}")
