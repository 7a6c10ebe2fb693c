"""Identifier extraction: what it finds, and that it stays linear on hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from compaction.identifiers import identifier_set
from compaction.identifiers import identifiers


def test_kinds_of_identifiers():
    found = identifiers("see src/compaction/replay.py:12, json.decoder, my_var, FooBar, abc1234def, 12345 and #4242.")
    assert found == ["src/compaction/replay.py", "json.decoder", "my_var", "FooBar", "abc1234def", "12345", "#4242"]


def test_plain_words_are_not_identifiers():
    assert identifiers("The quick brown fox jumps over the lazy dog.") == []


def test_tokens_longer_than_the_limit_are_skipped_whole():
    # a hex dump or a run of test dots is one candidate token: skipped in one pass, never searched within
    assert identifiers("0123456789abcdef" * 65_536) == []
    assert identifiers("a/" * 500_000) == []
    assert identifiers("x" * 150 + "/y_z.py") == ["x" * 150 + "/y_z.py"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("aAfF09_./#- \nzZé"), max_size=300))
def test_one_combined_pattern_classifies_as_the_kinds_one_by_one(text):
    from compaction.identifiers import _CANDIDATE
    from compaction.identifiers import _KINDS
    from compaction.identifiers import MAX_TOKEN

    expected = []
    for token in _CANDIDATE.findall(text):
        token = token.strip(".-/") if len(token) <= MAX_TOKEN else ""
        if len(token) >= 4 and any(kind.fullmatch(token) for kind in _KINDS):
            expected.append(token)
    assert identifiers(text) == expected


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("aAfF09_./#- \nzZé"), max_size=300), st.integers(1, 6))
def test_the_set_form_is_the_set_of_the_list(text, min_length):
    assert identifier_set(text, min_length) == set(identifiers(text, min_length))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("aAfF09_./#- \nzZé→"), max_size=120), max_size=6),
       st.integers(1, 6))
def test_the_sets_of_many_texts_are_each_texts_set(texts, min_length):
    from compaction.identifiers import identifier_sets

    # the texts share a classification: what one text taught it must not leak into another text's set
    assert list(identifier_sets(texts, min_length)) == [set(identifiers(t, min_length)) for t in texts]


def test_non_ascii_characters_cut_candidates_as_word_characters_or_separators():
    from compaction.identifiers import identifier_sets

    # "→" is no word character (Claude Code's line numbers are glued to the line by it); "é" and "名" are (a path may
    # hold them; snake_case may not)
    texts = ["    12→import os.path", "café_au_lait 名前_snake", "12→import os.path and src/名前/x.py→12"]
    expected = [{"os.path"}, set(), {"os.path", "src/名前/x.py"}]
    assert list(identifier_sets(texts)) == expected
    assert [set(identifiers(t)) for t in texts] == expected


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("abcdefgzABFZ"), min_size=1, max_size=45), max_size=8),
       st.integers(1, 10))
def test_words_of_letters_are_classified_as_the_patterns_classify_them(words, min_length):
    from compaction.identifiers import identifier_sets

    # plain words skip the patterns: only a hash (lowercase a-f, 7-40 letters) or a CamelCase name can be one
    text = " ".join(words)
    assert list(identifier_sets([text], min_length)) == [set(identifiers(text, min_length))]


@pytest.mark.parametrize("length", [6, 7, 8, 40, 41])
@pytest.mark.parametrize("min_length", [4, 8])
def test_a_word_of_hex_letters_is_a_hash_from_7_to_40_letters(length, min_length):
    from compaction.identifiers import identifier_sets

    word = ("deadbeef" * 6)[:length]
    expected = {word} if 7 <= length <= 40 and length >= min_length else set()
    assert set(identifiers(word, min_length)) == expected
    assert list(identifier_sets([word, f"{word}g {word.upper()} {word.title()}"], min_length)) == [expected, set()]
