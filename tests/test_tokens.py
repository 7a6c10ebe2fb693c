"""Our token counters against the frameworks' own, number for number.

- ``approx``, ``approx:3.3`` and ``tiktoken:{o200k_base,cl100k_base}`` equal haystack-ai's ``ApproximateTokenCounter``
  and ``TiktokenCounter`` on every prefix of every bundled sample and real OpenAI-format log, with and without tool
  schemas, and a running :class:`~compaction.tokens.Tally` equals the full count at every prefix;
- ``maf-python`` equals agent-framework-core's ``CharacterEstimatorTokenizer`` as ``annotate_token_counts`` (and the
  incremental ``append_compaction_message``) apply it to real ``agent_framework.Message`` objects built from ours;
- ``maf-dotnet`` equals hand-computed UTF-8 byte counts;
- an unavailable tiktoken encoding falls back to ``approx`` with a notice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REAL_LOGS
from conftest import sample_paths
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction import tiktoken_offline
from compaction import tokens
from compaction.conversation import File
from compaction.conversation import Image
from compaction.conversation import Message
from compaction.conversation import ToolCall
from compaction.conversation import ToolResult
from compaction.conversation import ToolSchema
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.formats.agent_framework import message_to_maf
from compaction.interop.haystack import to_haystack_messages
from compaction.interop.haystack import to_haystack_tools
from compaction.tiktoken_offline import EncodingUnavailable
from compaction.tokens import ApproxCounter
from compaction.tokens import make_counter
from compaction.tokens import render_haystack
from compaction.tokens import resolve_counter

haystack_counters = pytest.importorskip("haystack.token_counters")
haystack_utils = pytest.importorskip("haystack.token_counters.utils")


# ------------------------------------------------------------------------------------------------- inputs
def openai_logs() -> list[Path]:
    """The bundled ``*.openai.json`` samples and the real plain OpenAI logs (whichever exist)."""
    plain = REAL_LOGS / "openai-plain"
    return [*sample_paths("*.openai.json"), *(sorted(plain.glob("*.json")) if plain.is_dir() else [])]


LOGS = openai_logs()
LOG_IDS = [p.name for p in LOGS]

#: a schema whose description holds non-ASCII text: Haystack renders schemas with ensure_ascii=True
LOCAL_TOOL = ToolSchema(
    "search_docs",
    "Search the docs — returns the best matching pages (ünïcode-safe).",
    {"type": "object", "properties": {"query": {"type": "string", "description": "Suchbegriff"},
                                      "limit": {"type": "integer", "minimum": 1}}, "required": ["query"]},
)


def tool_schemas(conversation: compaction.Conversation) -> tuple[ToolSchema, ...]:
    """The conversation's own schemas, else the real ones of the OpenHands completion log, plus one local schema."""
    if conversation.tools:
        return conversation.tools
    openhands = REAL_LOGS / "openai-chat" / "OpenHands__llm_completions__claude-3-5-sonnet__django-10097.json"
    real = compaction.load(openhands).tools if openhands.exists() else ()
    return (*real, LOCAL_TOOL)


def haystack_counter(spec: str):
    """haystack-ai's counter for one of our specs (skips when the tiktoken encoding cannot be loaded here)."""
    kind, _, arg = spec.partition(":")
    if kind == "approx":
        return haystack_counters.ApproximateTokenCounter(float(arg) if arg else 4.0)
    try:
        tiktoken_offline.get_encoding(arg)  # seeds tiktoken's cache from bpe-openai when offline
    except EncodingUnavailable as exc:
        pytest.skip(f"tiktoken encoding {arg} unavailable: {exc}")
    return haystack_counters.TiktokenCounter(arg)


HAYSTACK_SPECS = ("approx", "approx:3.3", "tiktoken:o200k_base", "tiktoken:cl100k_base")


# ------------------------------------------------------------------------------------------------- spec vectors
SPEC_RENDERING = (
    '[assistant] \n[assistant -> tool_call] t({"a": [1, 2], "b": "\\u00e9"})\n[assistant] <no content>\n'
    "[tool:t (error)] boom\n[user] hi\nthere"
)


def spec_vector_messages() -> list[Message]:
    """docs/spec/frameworks.md §1.2: empty text + a call with non-ASCII args, reasoning only, an error result, two text parts."""
    call = ToolCall("call_1", "t", {"b": "é", "a": [1, 2]})
    return [
        Message("assistant", texts=("",), tool_calls=(call,)),
        Message("assistant", reasoning=("I should call t first.",)),
        Message("tool", tool_result=ToolResult(call, "boom", error=True)),
        Message("user", texts=("hi", "there")),
    ]


def test_spec_rendering_vector_renders_exactly_and_counts_33():
    messages = spec_vector_messages()
    assert "\n".join(render_haystack(m) for m in messages) == SPEC_RENDERING
    assert haystack_utils._rendered_conversation(to_haystack_messages(messages)) == SPEC_RENDERING
    assert make_counter("approx").count(messages) == 33
    assert haystack_counters.ApproximateTokenCounter().count(to_haystack_messages(messages)) == 33


def test_spec_single_user_message_counts_2():
    assert make_counter("approx").count([user("abc")]) == 2
    assert haystack_counters.ApproximateTokenCounter().count(to_haystack_messages([user("abc")])) == 2


def test_joined_count_is_not_the_sum_of_message_counts():
    """One floor over the joined text, plus the separators: summing per-message counts would be wrong."""
    messages = [user("abcde"), assistant("fghij"), user("klmno")]
    counter = make_counter("approx")
    assert counter.count(messages) == int((12 + 1 + 17 + 1 + 12) / 4) == 10
    assert sum(counter.count_one(m) for m in messages) == 3 + 4 + 3


def test_images_and_files_cost_flat_tokens_like_haystack():
    shot = ToolCall("c1", "screenshot", {"url": "https://example.org"})
    messages = [
        Message("user", texts=("look",), images=(Image("image/png"),), files=(File("report.pdf", "application/pdf"),)),
        assistant(None, [shot]),
        Message("tool", tool_result=ToolResult(shot, ("before ", Image("image/jpeg"), " after", File("a.csv")))),
        Message("assistant", texts=("done",), images=(Image(),), files=(File(None),)),
    ]
    converted = to_haystack_messages(messages)
    for spec in ("approx", "approx:3.3"):
        ours, theirs = make_counter(spec), haystack_counter(spec)
        assert [ours.count(messages[:k]) for k in range(5)] == [theirs.count(converted[:k]) for k in range(5)]
    assert make_counter("approx").count(messages) >= 3 * 85 + 3 * 1000


def test_approx_rejects_non_positive_chars_per_token_like_haystack():
    with pytest.raises(ValueError) as ours:
        ApproxCounter(0)
    with pytest.raises(ValueError) as theirs:
        haystack_counters.ApproximateTokenCounter(chars_per_token=0)
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------------------------------------- haystack counters
#: prefixes compared one by one; after that every PREFIX_STRIDE-th
EVERY_PREFIX_UP_TO = 40
PREFIX_STRIDE = 7


@pytest.mark.parametrize("with_tools", [False, True], ids=["no-tools", "tools"])
@pytest.mark.parametrize("spec", HAYSTACK_SPECS)
@pytest.mark.parametrize("log", LOGS, ids=LOG_IDS)
def test_haystack_counters_equal_ours_on_prefixes(log: Path, spec: str, with_tools: bool):
    """Every prefix up to :data:`EVERY_PREFIX_UP_TO` messages, then every :data:`PREFIX_STRIDE`-th and the whole log
    (Haystack counts each prefix from scratch, so checking all of a long log costs its square; a wrong correction at
    any join still shows in every later total)."""
    conversation = compaction.load(log)
    messages = conversation.messages
    schemas = tool_schemas(conversation) if with_tools else ()
    theirs = haystack_counter(spec)
    ours = make_counter(spec)
    converted = to_haystack_messages(conversation)
    haystack_tools = to_haystack_tools(schemas) if schemas else None
    tally = ours.tally(tools=schemas)
    for k in range(len(messages) + 1):
        if k <= EVERY_PREFIX_UP_TO or k % PREFIX_STRIDE == 0 or k == len(messages):
            expected = theirs.count(converted[:k], haystack_tools)
            assert ours.count(messages[:k], schemas) == expected, f"prefix of {k} messages"
            assert tally.value(with_tools=True) == expected, f"running tally after {k} messages"
            assert tally.value(with_tools=False) == ours.count(messages[:k]), f"tally without tools, {k} messages"
        if k < len(messages):
            tally.append(messages[k])
    for message, chat_message in zip(messages, converted, strict=True):
        assert ours.count_one(message) == theirs.count([chat_message])


@pytest.mark.parametrize("spec", ["tiktoken:o200k_base", "tiktoken:cl100k_base"])
def test_tiktoken_join_corrections_hold_on_awkward_boundaries(spec: str):
    """BPE is not additive across the "\\n" joins: whitespace, digits, contractions and CJK at message edges."""
    import random

    rng = random.Random(20260613)
    pieces = ["a", "b", " ", "  ", "\n", "\n\n", "\t", "'s", "'", "1", "23", "456", "é", "日本", "🙂", ".", "!?",
              "::", "—", "\r\n", "x ", " \n", "\n ", "def ", "    return"]

    def text() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))

    theirs, ours = haystack_counter(spec), make_counter(spec)
    for _ in range(150):
        messages: list[Message] = []
        for _ in range(rng.randint(1, 5)):
            roll = rng.random()
            if roll < 0.3:
                messages.append(user(text()))
            elif roll < 0.55:
                messages.append(assistant(text()))
            else:
                call = ToolCall("id", text().strip() or "t", {"k": text()})
                messages += [assistant(None, [call]), tool(call, text())]
        assert ours.count(messages) == theirs.count(to_haystack_messages(messages)), [m.preview() for m in messages]


# ------------------------------------------------------------------------------------------------- tiktoken fast paths
TIKTOKEN_SPECS = ("tiktoken:o200k_base", "tiktoken:cl100k_base")
#: pieces that meet awkwardly at chunk edges: letter case changes, contractions, marks, digits, whitespace runs,
#: newlines before spaces and slashes, punctuation, non-ASCII letters and spaces, a lone surrogate, a special token
AWKWARD_PIECES = ("a", "Ab", "XY", "x'", "'s", "'LL", "'d", "’", "e\u0301", "ß", "Σσ", "1", "234", "5678", " ", "  ",
                  "\t", "\n", "\n\n", "\r\n", "\n/", "/", "\n  /", "\n\tx", ".", "){", "::", '":"', "—", "日本",
                  "🙂", "\x0b", "\x1c", "\xa0", "\u2028", "\ud83d", "<|endoftext|>", "x ", " \n", "\n ", "def ",
                  "    return", "[user] ")
awkward_texts = st.lists(st.sampled_from(AWKWARD_PIECES), max_size=60).map("".join)


def tiktoken_counter(spec: str) -> tokens.TiktokenCounter:
    haystack_counter(spec)  # skip when the encoding cannot be loaded
    return make_counter(spec)


def chunk_ends(counter: tokens.TiktokenCounter, text: str, start: int = 0) -> list[int]:
    """Chunk ends of a plain scan of ``text`` from ``start``."""
    return [match.end() for match in counter._pattern.finditer(text, start)]


def straightforward_edges(counter: tokens.TiktokenCounter, text: str) -> tuple[str, str]:
    """``_split_edges`` from a scan of the whole text: the first k chunks and the last k + 1, or the whole text."""
    k = counter._MARGIN_CHUNKS
    ends = chunk_ends(counter, text)
    if len(ends) <= 2 * k:
        return text, text
    return text[: ends[k - 1]], text[ends[-(k + 2)] :]


@pytest.mark.parametrize("spec", TIKTOKEN_SPECS)
@settings(max_examples=200, deadline=None)
@given(text=awkward_texts, prefix=awkward_texts)
def test_resync_points_are_chunk_ends_whatever_precedes_them(spec: str, text: str, prefix: str):
    """Every resync point the search finds is a chunk end of the whole-text scan, a scan from it finds the same chunks
    after it, and the character before it ends a chunk after any other prefix too."""
    counter = tiktoken_counter(spec)
    ends = chunk_ends(counter, text)
    points = {found.start() + 1 for limit in range(len(text))
              if (found := counter._find_resync(text, 0, limit + 1)) is not None}
    for point in points:
        after = [end for end in ends if end > point]
        assert point in ends, (text, point)
        assert chunk_ends(counter, text, point) == after, (text, point)
        shift = len(prefix) + 1 - point
        other = chunk_ends(counter, prefix + text[point - 1 :])
        assert point + shift in other, (prefix, text, point)
        assert [end for end in other if end > point + shift] == [end + shift for end in after], (prefix, text, point)


@pytest.mark.parametrize("spec", TIKTOKEN_SPECS)
@settings(max_examples=300, deadline=None)
@given(text=awkward_texts)
def test_split_edges_equals_the_whole_text_scan_on_generated_texts(spec: str, text: str):
    counter = tiktoken_counter(spec)
    assert counter._split_edges(text) == straightforward_edges(counter, text)


@pytest.mark.parametrize("spec", TIKTOKEN_SPECS)
@pytest.mark.parametrize("log", LOGS, ids=LOG_IDS)
def test_split_edges_equals_the_whole_text_scan_on_logs(log: Path, spec: str):
    counter = tiktoken_counter(spec)
    for message in compaction.load(log).messages:
        text = render_haystack(message)
        assert counter._split_edges(text) == straightforward_edges(counter, text), message.preview()


@pytest.mark.parametrize("spec", TIKTOKEN_SPECS)
@settings(max_examples=150, deadline=None)
@given(bodies=st.lists(awkward_texts, min_size=1, max_size=5))
def test_joined_count_equals_tiktoken_on_the_joined_text(spec: str, bodies: list[str]):
    """The per-message counts plus join corrections equal tiktoken's count of the "\\n"-joined rendering (Haystack's
    own count), whatever the texts at the joins."""
    counter = tiktoken_counter(spec)
    messages = [(user if i % 2 else assistant)(body) for i, body in enumerate(bodies)]
    joined = "\n".join(render_haystack(m) for m in messages)
    assert counter.count(messages) == len(counter._enc.encode(joined, disallowed_special=()))


# ------------------------------------------------------------------------------------------------- every counter
@pytest.mark.parametrize("spec", ["approx", "approx:3.3", "tiktoken:o200k_base", "maf-dotnet", "maf-python"])
@pytest.mark.parametrize("log", LOGS, ids=LOG_IDS)
def test_running_tally_equals_full_count_for_every_counter(log: Path, spec: str):
    if spec.startswith("tiktoken"):
        haystack_counter(spec)  # skip when the encoding cannot be loaded
    messages = compaction.load(log).messages
    counter = make_counter(spec)
    tally = counter.tally()
    for k, message in enumerate(messages, start=1):
        tally.append(message)
        assert tally.value() == counter.count(messages[:k]), f"after {k} messages"
    rebuilt = counter.tally(messages[: len(messages) // 2])
    assert rebuilt.value() == counter.count(messages[: len(messages) // 2])


GROWING_SPECS = ("approx", "approx:3.3", "tiktoken:o200k_base", "maf-dotnet")


@pytest.mark.parametrize("spec", GROWING_SPECS)
@pytest.mark.parametrize("log", LOGS, ids=LOG_IDS)
def test_a_tally_grown_from_any_message_reads_the_count_of_the_list(log: Path, spec: str):
    """What ``tally_grows_as_count`` promises (a message index grows each group's tally instead of counting it
    anew): a tally started empty at any message and grown one message at a time reads ``count`` of the list."""
    if spec.startswith("tiktoken"):
        haystack_counter(spec)  # skip when the encoding cannot be loaded
    counter = make_counter(spec)
    assert counter.tally_grows_as_count
    messages = compaction.load(log).messages
    for start in range(0, len(messages), 5):
        tally = counter.tally()
        for k, message in enumerate(messages[start:start + 6], start=start + 1):
            tally.append(message)
            assert tally.value() == counter.count(messages[start:k]), f"messages {start}..{k - 1}"


def test_maf_python_does_not_promise_that_a_grown_tally_reads_the_count():
    """Its tally numbers the ids it assigns as messages come (the framework's ``append_compaction_message``), its
    count as a whole list does: a message whose own id is another's position sets them apart."""
    counter = make_counter("maf-python")
    assert not counter.tally_grows_as_count
    messages = [user("xxx"), user("y", message_id="msg_0"), *(user("z") for _ in range(9))]
    assert counter.tally(messages).value() != counter.count(messages)


# ------------------------------------------------------------------------------------------------- maf-python
def maf_edge_messages() -> list[Message]:
    """Own ids (one colliding with a position), an empty id, errors, reasoning, names, non-ASCII, empty assistant."""
    call = ToolCall("call_7", "get_weather", {"city": "Zürich", "days": 3, "metric": True})
    return [
        system("You are a careful assistant."),
        user("Wie wird das Wetter?", message_id="msg_3"),
        assistant("Let me check.", message_id="chatcmpl-9a8b7c"),
        Message("assistant", reasoning=("The user wants a forecast.",), tool_calls=(call,)),
        tool(call, "Service unavailable", error=True),
        Message("user", texts=("日本語で", "お願いします"), name="kenji"),
        Message("assistant", reasoning=("translate",)),
        assistant("", message_id=""),
        Message("tool", tool_result=ToolResult(ToolCall(None, "orphan"), "a result nobody asked for")),
    ]


def framework_messages(messages, keep_writer_ids: bool):
    """Real ``agent_framework.Message`` objects built by our writer; optionally leave id-less ones for the framework."""
    from agent_framework import Message as AfMessage

    out = []
    for index, m in enumerate(messages):
        data = message_to_maf(m, index)
        if not keep_writer_ids and not m.meta.get("message_id"):
            data.pop("message_id")
        out.append(AfMessage.from_dict(data))
    return out


def annotated_counts(af_messages) -> list[int]:
    return [m.additional_properties["_group"]["token_count"] for m in af_messages]


def maf_cases() -> list:
    cases = [pytest.param(maf_edge_messages, False, id="edge-cases-framework-ids")]
    for path in LOGS:
        cases += [pytest.param(path, True, id=f"{path.name}-writer-ids"),
                  pytest.param(path, False, id=f"{path.name}-framework-ids")]
    return cases


@pytest.mark.parametrize(("source", "keep_writer_ids"), maf_cases())
def test_maf_python_equals_annotate_token_counts(source, keep_writer_ids: bool):
    pytest.importorskip("agent_framework")
    from agent_framework._compaction import CharacterEstimatorTokenizer
    from agent_framework._compaction import annotate_token_counts

    messages = source() if callable(source) else compaction.load(source).messages
    real = framework_messages(messages, keep_writer_ids)
    annotate_token_counts(real, tokenizer=CharacterEstimatorTokenizer())
    theirs = annotated_counts(real)
    counter = make_counter("maf-python")
    assert counter.count(messages) == sum(theirs)
    per_message = [counter.count(messages[: k + 1]) - counter.count(messages[:k]) for k in range(len(messages))]
    assert per_message == theirs


def test_maf_python_tally_equals_incremental_annotation():
    """``append_compaction_message`` annotates one message at a time (ids from the running position)."""
    pytest.importorskip("agent_framework")
    from agent_framework._compaction import CharacterEstimatorTokenizer
    from agent_framework._compaction import append_compaction_message

    messages = maf_edge_messages()
    real = framework_messages(messages, keep_writer_ids=False)
    tokenizer = CharacterEstimatorTokenizer()
    grown: list = []
    tally = make_counter("maf-python").tally()
    for message, af_message in zip(messages, real, strict=True):
        append_compaction_message(grown, af_message, tokenizer=tokenizer)
        tally.append(message)
        assert tally.value() == sum(annotated_counts(grown))


def test_maf_python_counts_the_json_the_framework_serializes():
    """The documented example: user "What's the weather?" with id msg_1 is 32 tokens."""
    counter = make_counter("maf-python")
    assert counter.count([user("What's the weather?", message_id="msg_1")]) == 32
    assert counter.count_one(user("x")) == counter.count([user("x", message_id="msg_0")])


# ------------------------------------------------------------------------------------------------- maf-dotnet
def test_maf_dotnet_counts_utf8_content_bytes_per_group():
    counter = make_counter("maf-dotnet")
    # "héllo wörld": 11 characters, é and ö are 2 bytes each → 13 bytes → 3 tokens
    assert counter.count([user("héllo wörld")]) == 13 // 4 == 3
    call = ToolCall("call_1", "get_weather", {"city": "Zürich", "days": 3, "metric": True, "opts": {"a": 1},
                                               "note": None})
    # call_1 (6) + get_weather (11) + city+Zürich (4+7) + days+"3" (4+1) + metric+"True" (6+4)
    # + opts+'{"a":1}' (4+7) + note+"" (4+0) = 58 bytes
    assert tokens.maf_content_bytes(assistant(None, [call])) == 58
    # call id (6) + "Sunny, 22°C" (12) = 18 bytes; the error flag and the tool name are not counted
    result = tool(call, "Sunny, 22°C", error=True)
    assert tokens.maf_content_bytes(result) == 18
    # a group is floored once: (58 + 18) // 4 = 19, not 58 // 4 + 18 // 4 = 18
    assert counter.count([assistant(None, [call]), result]) == 19
    tally = counter.tally([assistant(None, [call])])
    tally.append(result)
    assert tally.value() == 19
    # text and reasoning both count; the role does not
    assert tokens.maf_content_bytes(Message("assistant", texts=("ok",), reasoning=("plan",))) == 6
    assert counter.count([Message("assistant", reasoning=("plan",), texts=("ok",))]) == 1
    # .NET JsonElement.ToString(): False for booleans, raw JSON for arrays and numbers
    assert tokens.maf_content_bytes(assistant(None, [ToolCall("c", "f", {"flag": False, "xs": [1, 2]})])) == (
        1 + 1 + 4 + 5 + 2 + 5
    )


# ------------------------------------------------------------------------------------------------- fallback
def test_tiktoken_unavailable_falls_back_to_approx_with_a_notice(monkeypatch):
    def unavailable(encoding: str = "o200k_base"):
        raise EncodingUnavailable(f"no network and no bpe-openai copy of {encoding}")

    monkeypatch.setattr(tiktoken_offline, "get_encoding", unavailable)
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    with pytest.raises(EncodingUnavailable):
        make_counter("tiktoken:o200k_base")
    choice = resolve_counter("tiktoken:o200k_base")
    assert isinstance(choice.counter, ApproxCounter)
    assert choice.counter.spec == "approx:4.0"
    assert choice.requested == "tiktoken:o200k_base"
    assert choice.notice is not None
    assert "'tiktoken:o200k_base' is unavailable" in choice.notice
    assert "no network and no bpe-openai copy of o200k_base" in choice.notice
    assert "approx:4.0" in choice.notice


def test_unknown_tiktoken_encoding_falls_back_too():
    choice = resolve_counter("tiktoken:no_such_encoding")
    assert isinstance(choice.counter, ApproxCounter)
    assert "no_such_encoding" in (choice.notice or "")


def test_available_counter_has_no_notice():
    choice = resolve_counter("approx:3.3")
    assert choice.notice is None and choice.counter.spec == "approx:3.3"


def test_malformed_counter_specs_are_rejected():
    for bad in ("approx:fast", "maf-dotnet:2", "bpe"):
        with pytest.raises(ValueError):
            make_counter(bad)
