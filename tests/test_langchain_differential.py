"""LangChain differential tests against langchain 1.5.2 / langchain-core 1.8: the counter against
``count_tokens_approximately``, the summary request against ``get_buffer_string(format="xml")`` and the middleware's
prompt filling, ``trim_last`` against ``trim_messages``, and both middleware replays call by call against the real
``SummarizationMiddleware`` / ``ContextEditingMiddleware`` (the request each model receives, byte for byte, and the
token counts per step) on every real log and sample, and on a real ``create_agent`` run."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths

import compaction
from compaction.conversation import Conversation
from compaction.conversation import File
from compaction.conversation import Image
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user as user_message
from compaction.formats.base import LoadError
from compaction.langchain_prompt import check_summary_prompt
from compaction.langchain_prompt import fill_summary_prompt
from compaction.langchain_prompt import xml_transcript
from compaction.replay import Replay
from compaction.replay import hidden_from_agent
from compaction.strategies import RunContext
from compaction.strategies.langchain import DEFAULT_SUMMARY_PROMPT
from compaction.strategies.langchain import SUMMARY_PREFIX
from compaction.strategies.langchain import TOO_LONG
from compaction.strategies.langchain import trim_last
from compaction.summarizers import SummaryCall
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import ClearToolUsesEdit  # noqa: E402
from langchain.agents.middleware import ContextEditingMiddleware  # noqa: E402
from langchain.agents.middleware import SummarizationMiddleware  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.messages import SystemMessage  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.messages import messages_to_dict  # noqa: E402
from langchain_core.messages.utils import convert_to_messages  # noqa: E402
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402
from langchain_core.messages.utils import get_buffer_string  # noqa: E402
from langchain_core.messages.utils import trim_messages  # noqa: E402
from langchain_core.tools import tool as lc_tool  # noqa: E402

from compaction.interop.langchain import drive_langchain_middleware  # noqa: E402
from compaction.interop.langchain import langchain_view  # noqa: E402
from compaction.interop.langchain import to_langchain_message  # noqa: E402
from compaction.interop.langchain import to_langchain_messages  # noqa: E402

COUNTER = make_counter("langchain")


# ------------------------------------------------------------------------------------------------- inputs
def _every_log() -> list[Path]:
    """Every real log in ../shared/real_logs (whatever its format) and every bundled sample."""
    real = sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.name != "README.md") if REAL_LOGS.is_dir() else []
    return [*real, *sample_paths("*.json")]


LOGS = _every_log()
LOG_IDS = [p.name[:60] for p in LOGS]
_LOADED: dict[Path, Conversation] = {}


def _conversation(path: Path) -> Conversation:
    """The log loaded once; a log no reader of this checkout reads yet is skipped (its reader has its own tests)."""
    if path not in _LOADED:
        try:
            _LOADED[path] = compaction.load(path)
        except LoadError as exc:
            pytest.skip(f"no reader loads {path.name} here: {str(exc)[:120]}")
    return _LOADED[path]


def _seen(conv: Conversation) -> list[Message]:
    """The messages the agent saw, in order (what a replay feeds its strategy)."""
    hidden = hidden_from_agent(conv) | conv.log_summary_indices
    return [m for i, m in enumerate(conv.messages) if i not in hidden]


def _peak(conv: Conversation) -> int:
    """LangChain's count of everything the agent saw but its system prompt: about the state the middleware measures
    at the last call, uncompacted."""
    seen = _seen(conv)
    head = next((k for k, m in enumerate(seen) if m.role != "system"), len(seen))
    return max(COUNTER.count(seen[head:]), 1)


# ------------------------------------------------------------------------------------------------- recording
@dataclass
class Recorded:
    """Our summarizer's requests and texts, in order."""

    calls: list[tuple[SummaryRequest, str]]


@pytest.fixture
def recorded(monkeypatch) -> Recorded:
    """Every summarizer a replay builds records its requests and replies into one log."""
    log = Recorded([])
    original = RunContext.summarizer

    class Recording:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def summarize(self, request: SummaryRequest, counter: Any) -> SummaryCall:
            call = self.inner.summarize(request, counter)
            log.calls.append((request, call.text))
            return call

    monkeypatch.setattr(RunContext, "summarizer", lambda self, params: Recording(original(self, params)))
    return log


class ScriptedChatModel(GenericFakeChatModel):
    """A LangChain chat model that answers the given replies in order and records every request it receives."""

    requests: list = []

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.requests.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools, **kwargs):  # create_agent binds the agent's tools; the replies are scripted
        return self


def scripted(replies: list[Any], window: int | None = None) -> ScriptedChatModel:
    model = ScriptedChatModel(messages=iter(replies), requests=[])
    if window is not None:
        model.profile = {"max_input_tokens": window}
    return model


def assert_same_requests(recorded: Recorded, model: ScriptedChatModel) -> None:
    """The summary model received exactly what our replay sent its summarizer: one human message, byte for byte."""
    assert len(model.requests) == len(recorded.calls)
    for k, ((request, _), theirs) in enumerate(zip(recorded.calls, model.requests, strict=True)):
        (ours,) = request.prompt()
        assert [m.type for m in theirs] == ["human"] and ours.role == "user", k
        assert ours.text == theirs[0].content, f"summary request {k} differs"
        assert COUNTER.count([ours]) == count_tokens_approximately(theirs)


def assert_same_calls(rep: Replay, calls: list) -> None:
    """Call by call: the same messages sent (views of ours as LangChain holds them), the same counts, the same
    rewrites."""
    assert len(rep.steps) == len(calls)
    for step, call in zip(rep.steps, calls, strict=True):
        ours = [langchain_view(m) for m in to_langchain_messages(rep.messages_at(step.step))]
        theirs = [langchain_view(m) for m in call.sent]
        assert ours == theirs, f"step {step.step}: messages differ"
        assert (step.tokens_before, step.tokens_sent) == (call.tokens_before, call.tokens_sent), step.step


# ================================================================================================= the counter
def test_a_tool_message_counts_its_tool_name():
    """LangChain's tool node names every ToolMessage after its tool and count_tokens_approximately counts the name:
    one more token here than without it."""
    call = ToolCall("call_1", "grep", {"pattern": "TODO"})
    ours = tool(call, "x" * 106)
    theirs = ToolMessage(content="x" * 106, tool_call_id="call_1", name="grep")
    assert COUNTER.count([ours]) == count_tokens_approximately([theirs]) == 33
    assert count_tokens_approximately([ToolMessage(content="x" * 106, tool_call_id="call_1")]) == 32
    named = Message("tool", tool_result=ToolResult(call, "x" * 106), name="a_longer_name_of_its_own")  # its own wins
    assert COUNTER.count([named]) == count_tokens_approximately([to_langchain_message(named)]) == 38


def _name_tool_messages(messages: list) -> list:
    """ToolMessages named after the tool of the call they answer (the latest call with their id: a log may reuse
    ids), as LangChain's tool node names them."""
    names: dict[str, str] = {}
    for m in messages:
        if isinstance(m, AIMessage):
            names.update((c["id"], c["name"]) for c in m.tool_calls)
        elif isinstance(m, ToolMessage) and not m.name:
            m.name = names.get(m.tool_call_id)
    return messages


def _plain_logs() -> list[Path]:
    plain = REAL_LOGS / "openai-plain"
    return sorted(plain.glob("*.json")) if plain.is_dir() else []


@pytest.mark.parametrize("path", _plain_logs(), ids=lambda p: p.name)
def test_counter_matches_count_tokens_approximately_on_langchains_own_reading(path):
    """LangChain's own ``convert_to_messages`` of the raw file, tool messages named as an agent names them."""
    c = compaction.load(path)
    lc = _name_tool_messages(convert_to_messages(json.loads(path.read_text(encoding="utf-8"))))
    assert COUNTER.count(c.messages) == count_tokens_approximately(lc)
    for ours, theirs in zip(c.messages, lc, strict=True):
        assert COUNTER.count([ours]) == count_tokens_approximately([theirs])


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_counter_matches_count_tokens_approximately_on_every_log(path):
    c = _conversation(path)
    lc = to_langchain_messages(c.messages)
    assert COUNTER.count(c.messages) == count_tokens_approximately(lc)
    for ours, theirs in zip(c.messages, lc, strict=True):
        assert COUNTER.count([ours]) == count_tokens_approximately([theirs])
    for cpt in (3.3, 2.5):
        assert make_counter(f"langchain:{cpt}").count(c.messages) == count_tokens_approximately(lc, chars_per_token=cpt)


# ================================================================================================= the summary request
def _awkward_messages() -> list[Message]:
    """Every content shape the XML rendering treats differently, with characters it must escape."""
    long_id = "toolu_" + "x" * 70
    calls = (ToolCall("call_<1>", 'say "hi" & \'bye\'', {"q": "a < b & c", "ü": ["ö", 1]}), ToolCall(long_id, "ls"),
             ToolCall(None, "noid"))
    return [
        user_message("Is 5 < 10 & 10 > 5? \"quoted\" 'single'\n\nsecond paragraph"),
        Message("user", ("first text", "", "second text"), images=(Image("image/png", source="https://x.org/a.png?q=1&r=2"),
                                                                    Image("image/png", source="base64"),
                                                                    Image("image/png", source="data:image/png;base64,AAA")),
                files=(File("report.pdf", "application/pdf"),), name="alice"),
        Message("user"),
        assistant("I'll look <here>.", calls),
        assistant(None, (ToolCall("c9", "read_file", {}),)),
        Message("assistant", ("answer",), reasoning=("thinking & <weighing>", ""),
                tool_calls=(ToolCall("c8", "grep", {"pattern": "a|b"}),)),
        Message("assistant", ("plain",), reasoning=("only thoughts",)),
        tool(calls[0], "result with <xml> & stuff"),
        Message("tool", tool_result=ToolResult(calls[1], ("part one", Image("image/jpeg", source="https://x.org/b.jpg"),
                                                          "", File("f.txt"), "part two"), error=True)),
        tool(calls[2], ""),
        system("a system message in the middle: <rules>"),
        user_message(SUMMARY_PREFIX + "an earlier summary", lc_source="summarization"),
    ]


def test_xml_transcript_matches_get_buffer_string_on_awkward_messages():
    ours = _awkward_messages()
    for k in range(len(ours)):  # one at a time (the message at fault is named), then all together
        assert xml_transcript(ours[k:k + 1]) == get_buffer_string(to_langchain_messages(ours[k:k + 1]), format="xml")
    assert xml_transcript(ours) == get_buffer_string(to_langchain_messages(ours), format="xml")
    assert xml_transcript([]) == get_buffer_string([], format="xml") == ""


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_xml_transcript_matches_get_buffer_string_on_every_log(path):
    messages = _conversation(path).messages
    assert xml_transcript(messages) == get_buffer_string(to_langchain_messages(messages), format="xml")


@pytest.mark.parametrize("template", [
    DEFAULT_SUMMARY_PROMPT,
    "Summarize:\n{messages}\n\n  \n",
    "{messages}{messages}",
    "literal {{braces}} and }} {{ around {messages} ",
    "{messages!r} / {messages!a} / {messages!s}",
    "[{messages:>300}] [{messages:.20}]",
    "no placeholder at all",
    "",
])
def test_fill_summary_prompt_is_str_format(template):
    transcript = get_buffer_string(to_langchain_messages(_awkward_messages()), format="xml")
    assert fill_summary_prompt(template, transcript) == template.format(messages=transcript).rstrip()


@pytest.mark.parametrize("template,reason,langchain_fails", [
    ("Summarize {tool_name}: {messages}", "{tool_name} is not a field LangChain fills", True),
    ("{} {messages}", "{} is not a field", True),
    ("open { brace {messages}", "unexpected '{' in field name", True),
    ("unclosed {messages", "expected '}' before end of string", True),
    ("close } brace {messages}", "Single '}' encountered", True),
    ("{messages!x}", "unknown conversion !x", True),
    ("{messages:>{width}}", "holds a field", True),
    ("{messages:d}", "{messages:d}", True),
    # str.format would read into the transcript string itself: refused too, as certainly not what was meant
    ("{messages.upper}", "{messages.upper} is not a field", False),
    ("{messages[0]}", "{messages[0]} is not a field", False),
])
def test_a_prompt_langchain_cannot_fill_is_refused(template, reason, langchain_fails):
    if langchain_fails:
        with pytest.raises((KeyError, IndexError, ValueError)):
            template.format(messages="<message type=\"human\">x</message>")
    with pytest.raises(ValueError, match="summary_prompt") as error:
        check_summary_prompt(template)
    assert reason in str(error.value)
    with pytest.raises(ValueError, match="summary_prompt"):
        compaction.replay(Conversation((user_message("x"), assistant("y"))), "langchain.summarization",
                          {"summary_prompt": template})


# ================================================================================================= trim_messages
def _multi_block_run() -> list[Message]:
    """A history whose human messages hold several blocks (texts, images, files), so that a partial cut lands inside
    one: LangChain keeps its last blocks, else the last lines of its last block when that block is text."""
    lines = lambda tag, n: "\n".join(f"{tag} line {k}: " + "detail " * 6 for k in range(n))  # noqa: E731
    c1, c2 = ToolCall("c1", "read_file", {"path": "a.py"}), ToolCall("c2", "read_file", {"path": "b.py"})
    return [
        system("You are a coding agent."),
        Message("user", (lines("task", 30), lines("context", 40))),
        assistant("Reading.", [c1]),
        tool(c1, lines("a.py", 30)),
        Message("user", (lines("note", 25),), images=(Image("image/png", source="https://x.org/shot.png"),)),
        assistant("Reading more.", [c2]),
        Message("tool", tool_result=ToolResult(c2, (lines("b.py head", 20), lines("b.py tail", 20)))),
        Message("user", (lines("one", 10), lines("two", 10), lines("three", 30))),
        Message("assistant", ("Done.",), reasoning=(lines("thought", 12),)),
    ]


def _trim_cases() -> list[tuple[str, list[Message]]]:
    cases = [("multi-block", _multi_block_run())]
    for path in LOGS:
        try:
            messages = _seen(_conversation(path))
        except pytest.skip.Exception:
            continue
        for start in range(0, len(messages), 23):
            cases.append((f"{path.name[:40]}@{start}", messages[start:start + 30]))
    return cases


@pytest.mark.parametrize("budget", [40, 150, 400, 1000, 2500, 6000])
def test_trim_last_matches_trim_messages(budget):
    """``trim_messages(strategy="last", allow_partial=True, start_on="human", include_system=True)``, partial copies
    included, on windows of every log and on a history of multi-block human messages."""
    partials = 0
    for name, window in _trim_cases():
        positions, partial = trim_last(window, budget, COUNTER.count)
        ours = [langchain_view(m) for m in to_langchain_messages([partial.get(i, window[i]) for i in positions])]
        theirs = trim_messages(to_langchain_messages(window), max_tokens=budget, token_counter=count_tokens_approximately,
                               strategy="last", start_on="human", allow_partial=True, include_system=True)
        assert ours == [langchain_view(m) for m in theirs], name
        partials += bool(partial)
    assert partials, "no window was cut inside a message"


@pytest.mark.parametrize("budget", range(60, 1400, 20))
def test_trim_last_cuts_multi_block_human_messages_as_langchain_does(budget):
    window = _multi_block_run()
    positions, partial = trim_last(window, budget, COUNTER.count)
    theirs = trim_messages(to_langchain_messages(window), max_tokens=budget, token_counter=count_tokens_approximately,
                           strategy="last", start_on="human", allow_partial=True, include_system=True)
    assert [langchain_view(m) for m in to_langchain_messages([partial.get(i, window[i]) for i in positions])] == \
        [langchain_view(m) for m in theirs]


# ================================================================================================= SummarizationMiddleware
@dataclass(frozen=True)
class SummaryCase:
    """One point of the parameter grid, sized to the log: our params and the middleware's arguments."""

    name: str
    build: Callable[[int, int], tuple[dict[str, Any], dict[str, Any], int | None]]  # (peak, messages) -> ...


def _tokens(peak: int, share: float) -> int:
    return max(int(peak * share), 1)


SUMMARY_GRID = [
    SummaryCase("trigger-tokens_keep-messages", lambda peak, n: (
        {"trigger": f"tokens>={_tokens(peak, 0.3)}", "keep": "messages=6"},
        {"trigger": ("tokens", _tokens(peak, 0.3)), "keep": ("messages", 6)}, None)),
    SummaryCase("trigger-messages_keep-tokens", lambda peak, n: (
        {"trigger": f"messages>={max(n // 4, 3)}", "keep": f"tokens={_tokens(peak, 0.12)}",
         "trim_tokens_to_summarize": 1000},
        {"trigger": ("messages", max(n // 4, 3)), "keep": ("tokens", _tokens(peak, 0.12)),
         "trim_tokens_to_summarize": 1000}, None)),
    SummaryCase("trigger-fraction_keep-messages_no-trim_own-prompt", lambda peak, n: (
        {"trigger": "fraction>=0.4", "keep": "messages=10", "trim_tokens_to_summarize": 0,
         "summary_prompt": "Summarize {{carefully}}:\n<messages>\n{messages}\n</messages>\n\n  "},
        {"trigger": ("fraction", 0.4), "keep": ("messages", 10), "trim_tokens_to_summarize": None,
         "summary_prompt": "Summarize {{carefully}}:\n<messages>\n{messages}\n</messages>\n\n  "}, peak)),
    SummaryCase("trigger-clauses_keep-fraction_small-trim", lambda peak, n: (
        {"trigger": f"tokens>={_tokens(peak, 0.25)}&messages>=8|messages>=60", "keep": "fraction=0.1",
         "trim_tokens_to_summarize": 300, "summarizer": "fixed-size", "summary_tokens": 200},
        {"trigger": [{"tokens": _tokens(peak, 0.25), "messages": 8}, ("messages", 60)], "keep": ("fraction", 0.1),
         "trim_tokens_to_summarize": 300}, peak)),
]


@pytest.mark.parametrize("case", SUMMARY_GRID, ids=lambda c: c.name)
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_summarization_matches_the_middleware_call_by_call(recorded, path, case):
    """The real SummarizationMiddleware, driven before every LLM call as create_agent drives it, with a summary model
    that answers what our summarizer wrote: the same summary requests byte for byte, the same messages sent and the
    same token counts at every call."""
    conv = _conversation(path)
    if not conv.llm_call_indices:
        pytest.skip("no LLM call in this log")
    ours_params, theirs_kwargs, window = case.build(_peak(conv), len(_seen(conv)))
    theirs_kwargs.setdefault("summary_prompt", DEFAULT_SUMMARY_PROMPT)
    rep = compaction.replay(conv, "langchain.summarization", ours_params, context_window=window or 200_000)
    model = scripted([AIMessage(content=text) for _, text in recorded.calls], window)
    calls = drive_langchain_middleware(conv, SummarizationMiddleware(model=model, **theirs_kwargs))
    assert_same_requests(recorded, model)
    assert_same_calls(rep, calls)
    assert [s.compacted for s in rep.steps] == [c.rewritten for c in calls]
    assert sum(len(s.model_calls) for s in rep.steps) == len(recorded.calls)
    if len(conv.llm_call_indices) >= 12:
        assert any(c.rewritten for c in calls), "the grid point never summarized this log: size it differently"


def test_the_summary_message_is_the_middlewares(recorded):
    """Role, prefix and mark of the inserted message; the too-long text when the trim leaves no human message."""
    conv = compaction.load(sample_paths("coding_agent.openai.json")[0])
    for trim in (0, 1):  # no trimming; a trim that leaves no human message
        recorded.calls.clear()
        rep = compaction.replay(conv, "langchain.summarization", {"trigger": "messages>=6", "keep": "messages=2",
                                                                   "trim_tokens_to_summarize": trim})
        model = scripted([AIMessage(content=text) for _, text in recorded.calls])
        calls = drive_langchain_middleware(conv, SummarizationMiddleware(
            model=model, trigger=("messages", 6), keep=("messages", 2), trim_tokens_to_summarize=trim or None,
            summary_prompt=DEFAULT_SUMMARY_PROMPT))
        k = next(s.step for s in rep.steps if s.compacted)
        summary = rep.messages_at(k)[1]
        theirs = calls[k].state[0]
        assert isinstance(theirs, HumanMessage) and theirs.additional_kwargs == {"lc_source": "summarization"}
        assert summary.role == "user" and summary.meta["lc_source"] == "summarization" and summary.text == theirs.content
        assert summary.text.startswith(SUMMARY_PREFIX)
        assert (summary.text == SUMMARY_PREFIX + TOO_LONG) == (trim == 1)
        assert_same_calls(rep, calls)


# ================================================================================================= ContextEditingMiddleware
EDIT_GRID = [
    {"keep": 3},
    {"keep": 0, "clear_at_least": 1500},
    {"keep": 2, "clear_tool_inputs": True},
    {"keep": 1, "exclude_tools": ("Read", "execute_bash", "get_details_by_id"), "placeholder": "<gone & done>"},
]


@pytest.mark.parametrize("settings", EDIT_GRID, ids=lambda s: "-".join(sorted(s)))
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_context_editing_matches_the_middleware_call_by_call(path, settings):
    """The real ContextEditingMiddleware wrapping every model request: the same messages sent (cleared results and
    inputs, their marks) and the same token counts at every call."""
    conv = _conversation(path)
    if not conv.llm_call_indices:
        pytest.skip("no LLM call in this log")
    trigger = _tokens(_peak(conv), 0.3)
    rep = compaction.replay(conv, "langchain.context_editing", {"trigger": trigger, **settings})
    calls = drive_langchain_middleware(conv, ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=trigger,
                                                                                               **settings)]))
    assert_same_calls(rep, calls)
    if conv.tool_result_count >= 8:
        assert any(s.compacted for s in rep.steps)


def _id_less_log(call_id: str | None, result_id: str | None) -> Conversation:
    """Each AI message calls ``read`` with ``call_id`` (None: the log gave none) and ``grep`` with an id; the read
    result carries ``result_id``."""
    messages: list[Message] = [user_message("go")]
    for i in range(6):
        messages.append(assistant(None, (ToolCall(call_id, "read", {"path": f"f{i}.py"}),
                                         ToolCall(f"k{i}", "grep", {"q": i}))))
        messages += [tool(ToolCall(result_id, "read"), "x " * 300), tool(ToolCall(f"k{i}", "grep"), "y " * 300)]
    messages.append(assistant("done"))
    return Conversation(tuple(messages))


@pytest.mark.parametrize("clear_inputs", [False, True])
@pytest.mark.parametrize("ids", [(None, None), ("", None), (None, ""), ("", "")], ids=repr)
def test_context_editing_matches_the_middleware_on_calls_without_ids(ids, clear_inputs):
    """A result the log gave no id is a ToolMessage with tool_call_id "": the edit finds no call with that id among
    the AI message's (None) and leaves it, while the calls with ids next to it are cleared as usual."""
    conv = _id_less_log(*ids)
    settings = {"trigger": 500, "keep": 1, "clear_tool_inputs": clear_inputs}
    rep = compaction.replay(conv, "langchain.context_editing", settings)
    calls = drive_langchain_middleware(conv, ContextEditingMiddleware(edits=[ClearToolUsesEdit(**settings)]))
    assert_same_calls(rep, calls)
    assert any(s.compacted for s in rep.steps)


# ================================================================================================= a real agent run
@lc_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return "\n".join(f"{path}:{k}: def handler_{k}(request): return respond(request, status={200 + k})"
                     for k in range(25))


@lc_tool
def run_tests(selection: str) -> str:
    """Run the test suite."""
    return f"collected 40 items ({selection})\n" + "\n".join(f"test_{k} PASSED" for k in range(40))


def _agent_replies() -> list[AIMessage]:
    replies = []
    for k in range(9):
        name, args = ("read_file", {"path": f"src/module_{k}.py"}) if k % 3 else ("run_tests", {"selection": f"-k t{k}"})
        replies.append(AIMessage(content=f"Step {k}: checking.", tool_calls=[{"name": name, "args": args,
                                                                             "id": f"call_{k}"}]))
    return [*replies, AIMessage(content="All fixed.")]


def test_a_real_create_agent_run_replays_exactly(recorded, tmp_path):
    """A real ``create_agent`` run (its tool node names the ToolMessages) saved as LangChain messages and loaded by our
    reader: the replay sends what the agent's model received at every call, with the same counts, and the summary
    model receives what our replay sent."""
    system_prompt = "You are a careful coding agent."
    task = HumanMessage(content="The handlers return the wrong status; fix them and run the tests.")
    plain = create_agent(scripted(_agent_replies()), [read_file, run_tests], system_prompt=system_prompt)
    history = [SystemMessage(content=system_prompt), *plain.invoke({"messages": [task]})["messages"]]
    assert [m.name for m in history if isinstance(m, ToolMessage)] == [c["name"] for m in history
                                                                        if isinstance(m, AIMessage) for c in m.tool_calls]
    log = tmp_path / "agent_run.langchain.json"
    log.write_text(json.dumps(messages_to_dict(history)), encoding="utf-8")
    conv = compaction.load(log)
    assert conv.format == "langchain" and len(conv.messages) == len(history)

    trigger = COUNTER.count(conv.messages[1:]) // 3
    rep = compaction.replay(conv, "langchain.summarization", {"trigger": f"tokens>={trigger}", "keep": "messages=4"})
    assert sum(s.compacted for s in rep.steps) >= 2
    agent_model = scripted(_agent_replies())
    summary_model = scripted([AIMessage(content=text) for _, text in recorded.calls])
    middleware = SummarizationMiddleware(model=summary_model, trigger=("tokens", trigger), keep=("messages", 4),
                                         summary_prompt=DEFAULT_SUMMARY_PROMPT)
    create_agent(agent_model, [read_file, run_tests], system_prompt=system_prompt,
                 middleware=[middleware]).invoke({"messages": [task]})
    assert_same_requests(recorded, summary_model)
    assert len(agent_model.requests) == len(rep.steps)
    for step, received in zip(rep.steps, agent_model.requests, strict=True):
        ours = rep.messages_at(step.step)
        assert [langchain_view(m) for m in to_langchain_messages(ours)] == [langchain_view(m) for m in received]
        assert step.tokens_sent == count_tokens_approximately(received), step.step


def test_the_bridge_imports_no_langchain_until_used():
    import subprocess
    import sys

    code = ("import sys, compaction, compaction.interop, compaction.interop.langchain, compaction.langchain_prompt; "
            "compaction.interop.to_langchain_messages; "
            "assert not any(m.split('.')[0] in ('langchain', 'langchain_core', 'langgraph') for m in sys.modules), "
            "sorted(sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
