"""Parsing log documents: JSON vs JSONL, bad lines, bad bytes, empty and binary files."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import compaction
from compaction.formats import LoadError
from compaction.formats import parse_document
from compaction.formats.base import _blank

LINE = json.dumps({"role": "user", "content": "hi"}).encode()


def test_jsonl_bad_lines_cost_only_themselves():
    data = b"\n".join([LINE, b"{not json", LINE, b'{"a": "\xff\xfe"}', b"", LINE]) + b"\n"
    doc = parse_document(data, "run.jsonl")
    assert doc.kind == "jsonl" and [n for n, _ in doc.records] == [1, 3, 6]
    assert [(w.line, w.message.split(" (")[0]) for w in doc.bad_lines] == [
        (2, "skipped: not valid JSON"), (4, "skipped: not UTF-8 text")]


def test_pretty_printed_json_is_one_document():
    doc = parse_document(json.dumps([{"role": "user", "content": "x"}], indent=2).encode(), "a.json")
    assert doc.kind == "json" and doc.value[0]["content"] == "x"


def test_jsonl_whose_first_line_is_broken_still_loads_the_rest():
    doc = parse_document(b"{oops\n" + LINE + b"\n" + LINE, "b.jsonl")
    assert doc.kind == "jsonl" and len(doc.records) == 2 and doc.bad_lines[0].line == 1


def test_byte_order_mark_is_accepted():
    assert parse_document(b"\xef\xbb\xbf" + LINE + b"\n" + LINE, "c.jsonl").kind == "jsonl"
    assert parse_document(b"\xef\xbb\xbf[1]", "d.json").value == [1]


@pytest.mark.parametrize("data, fragment", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"\x00\x01\x02binary", "binary"),
    (b'{"a": "\xff"}', "not UTF-8"),
    (b"[" * 100_000, "nested too deeply"),
    (b'{"messages": [', "not valid JSON"),
])
def test_unreadable_documents_are_clear_errors(data, fragment):
    with pytest.raises(LoadError, match=fragment) as info:
        parse_document(data, "bad.json")
    assert str(info.value).startswith("bad.json")


def test_text_that_is_not_json_is_a_text_document_and_no_known_log():
    doc = parse_document(b"hello world", "notes.txt")
    assert doc.kind == "text" and doc.text == "hello world"
    with pytest.raises(LoadError, match="^notes.txt: unknown log format. Tried: claude-code: "):
        compaction.load(b"hello world", name="notes.txt")


def test_an_integer_past_the_digit_limit_is_a_load_error_or_a_bad_line():
    with pytest.raises(LoadError, match="not a usable JSON document"):
        parse_document(b'{"a": ' + b"9" * 5000 + b"}", "huge.json")
    doc = parse_document(b'{"a": 1}\n{"b": ' + b"9" * 5000 + b'}\n{"c": 2}\n', "huge.jsonl")
    assert [n for n, _ in doc.records] == [1, 3] and doc.bad_lines[0].line == 2


@given(data=st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x85", b"\xa0", b"\x00",
                                      b"{", b"a"]), max_size=12).map(b"".join), start=st.integers(0, 14))
def test_blank_is_strip_without_the_copy(data: bytes, start: int):
    assert _blank(data, start) == (not data[start:].strip())
