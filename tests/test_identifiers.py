"""Identifier extraction: what it finds, and that it stays linear on hostile text."""

from __future__ import annotations

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
