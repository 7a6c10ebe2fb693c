"""Setups round-trip through JSON files and URL tokens; bad input names the setup and the field."""

from __future__ import annotations

import pytest

from compaction.setups import Setup
from compaction.setups import decode_from_url
from compaction.setups import encode_for_url
from compaction.setups import setups_from_json
from compaction.setups import setups_to_json

SETUPS = [
    Setup("haystack.tool_result_pruning", {"min_keep_steps": 3}, context_window=100_000, compact_at=0.75,
          compact_to=0.35, counter="tiktoken:o200k_base", label="A"),
    Setup("agent_framework.tool_result_compaction", {"trigger": "All(TokensExceed(5000), HasToolCalls())",
                                                      "formatter": "first_line"}, label="B"),
]


def test_json_round_trip_keeps_only_non_defaults():
    text = setups_to_json(SETUPS)
    assert "placeholder" not in text  # defaults are not written
    assert setups_from_json(text) == SETUPS


def test_url_token_round_trip_is_compact_and_url_safe():
    token = encode_for_url(SETUPS)
    assert all(c.isalnum() or c in "-_" for c in token)
    assert decode_from_url(token) == SETUPS


@pytest.mark.parametrize("text, fragment", [
    ("nope", "not a JSON document"),
    ('{"setups": []}', "at least one setup"),
    ('{"setups": [{"strategy": "nope"}]}', "setup 1: unknown strategy"),
    ('{"setups": [{"strategy": "haystack.tool_result_pruning", "params": {"bogus": 1}}]}', "no parameter 'bogus'"),
    ('{"setups": [{"strategy": "haystack.tool_result_pruning", "params": {"min_tokens": "many"}}]}', "min_tokens"),
    ('{"setups": [{"strategy": "haystack.tool_result_pruning", "context_window": "big"}]}', "setup 1"),
])
def test_bad_setup_documents_are_clear_errors(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        setups_from_json(text)


def test_damaged_link_is_a_clear_error():
    with pytest.raises(ValueError, match="could not be read"):
        decode_from_url("not-a-real-token")


def test_with_values_moves_policy_keys_and_params():
    s = SETUPS[0].with_values({"compact_at": 0.8, "min_tokens": 50})
    assert s.compact_at == 0.8 and s.params == {"min_keep_steps": 3, "min_tokens": 50}
