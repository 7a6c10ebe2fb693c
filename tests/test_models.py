"""The model table and the one resolution of a log's context window and price preset (compaction.models)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

import pytest
from conftest import real_log

import compaction
from compaction.analysis.costs import price_model
from compaction.analysis.costs import price_table
from compaction.analysis.costs import prices_for
from compaction.conversation import Conversation
from compaction.conversation import Source
from compaction.conversation import Usage
from compaction.conversation import assistant
from compaction.conversation import user
from compaction.models import DEFAULT_CONTEXT_WINDOW
from compaction.models import known_models
from compaction.models import log_model
from compaction.models import lookup_model
from compaction.models import model_table
from compaction.models import normalize_model_name
from compaction.models import resolve_context_window
from compaction.models import resolve_price_model

CODEX = "codex-cli/AcidicSoil-codex-session-view__rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
#: the largest Claude Code session of the real logs (139 calls, claude-opus-4-6, reported prompts up to 164,831)
LARGEST_CLAUDE_CODE = "claude-code/marot-spotter__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
OPUS_4_5 = "claude-code/entireio-cli__checkpoint-bb-781d6f3a8e-0.jsonl"
SONNET_4_5 = "claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl"


def conv(model: str | None = None, window: int | None = None, fmt: str = "openai",
         peak: int | None = None, meta_model: str | None = None) -> Conversation:
    """Two LLM calls; the second reports a prompt of ``peak`` tokens when given."""
    meta = {"model": meta_model} if meta_model else {}
    messages = (user("hi"), assistant("one", **meta), user("more"), assistant("two", **meta))
    usage = {3: Usage(input_tokens=10, cache_read_tokens=peak - 10)} if peak else {}
    return Conversation(messages, source=Source(fmt, model=model, context_window=window), usage=usage)


# ------------------------------------------------------------------------------------------------ the table
def test_the_table_is_dated_and_every_figure_names_a_source():
    table = model_table()
    date.fromisoformat(table["as_of"])
    sources = set(table["sources"])
    for info in known_models():
        assert info.context_window > 0 and (info.max_output is None or 0 < info.max_output < info.context_window)
        assert info.long_context_window is None or info.long_context_window > info.context_window
        first = re.split(r"[ ;(]", info.source.removeprefix("window: "))[0]
        assert first.startswith(("https://", "litellm:")) or first in sources, (info.name, info.source)
    assert len({i.name for i in known_models()}) == len(known_models())


def test_every_price_preset_the_table_names_exists_and_loads():
    presets = set(price_table()["models"])
    for info in known_models():
        assert info.price is None or info.price in presets, info.name
    for preset in model_table()["default_price"].values():
        assert preset in presets
    for name in presets:  # the sources written next to the figures are not prices
        prices = price_model(name)
        assert prices.input_per_mtok > 0 and prices.output_per_mtok > 0


def test_every_entry_matches_its_own_name():
    for info in known_models():
        match = lookup_model(info.name)
        assert match is not None and match.info is info, info.name


@pytest.mark.parametrize("given, normalized, row, long", [
    ("claude-opus-4-5-20251101", "claude-opus-4-5", "claude-opus-4-5", False),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5", "claude-haiku-4-5", False),
    ("claude-opus-4-6[1m]", "claude-opus-4-6", "claude-opus-4-6", True),
    ("Claude-Sonnet-4-5[1M]", "claude-sonnet-4-5", "claude-sonnet-4-5", True),
    ("litellm_proxy/anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", "claude-3-5-sonnet", False),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", "claude-sonnet-4-5", False),
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5", "claude-sonnet-4-5", False),
    ("claude-3-5-sonnet-latest", "claude-3-5-sonnet", "claude-3-5-sonnet", False),
    ("claude-sonnet-4-20250514", "claude-sonnet-4", "claude-sonnet-4", False),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-4o-mini", False),
    ("openai/gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini", False),
    ("gpt-4o", "gpt-4o", "gpt-4o", False),
    ("gpt-5.1-codex", "gpt-5.1-codex", "gpt-5.1-codex", False),
    ("gpt-5.4", "gpt-5.4", "gpt-5.4", False),
    ("o3-2025-04-16", "o3", "o3", False),
    ("gemini/gemini-2.5-pro-preview-06-05", "gemini-2.5-pro-preview-06-05", "gemini-2.5-pro", False),
    ("gemini-2.5-flash-preview-04-17", "gemini-2.5-flash-preview-04-17", "gemini-2.5-flash", False),
    ("gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite", False),
    ("models/gemini-1.5-pro-002", "gemini-1.5-pro-002", "gemini-1.5-pro", False),
    ("deepseek-v4-flash", "deepseek-v4-flash", "deepseek-v4-flash", False),
])
def test_model_names_as_logs_give_them(given, normalized, row, long):
    assert normalize_model_name(given) == (normalized, long)
    match = lookup_model(given)
    assert match is not None and match.info.name == row and match.long_context is long


@pytest.mark.parametrize("name", ["sonnet", "gpt-5.4-pro", "claude-opus-4-8", "llama-3-70b", "", "[1m]", "gpt-5.9"])
def test_unknown_names_match_nothing(name):
    assert lookup_model(name) is None


def test_a_hostile_model_name_is_clipped_and_matches_nothing():
    name = "claude-opus-4-6" + "x" * 100_000
    assert len(normalize_model_name(name)[0]) <= 200
    assert lookup_model(name) is None
    c = conv(model=name)
    assert len(log_model(c)) <= 200
    window = resolve_context_window(c)
    assert window.source == "default" and len(window.note) < 400


# ------------------------------------------------------------------------------------------------ the window
def test_the_window_the_log_states_wins():
    c = conv(model="claude-opus-4-6", window=258_400, fmt="codex")
    r = resolve_context_window(c)
    assert (r.value, r.source) == (258_400, "log:model_context_window")
    assert resolve_context_window(replace(c, source=replace(c.source, format="openai-responses"))).source == \
        "log:context_window"


def test_the_codex_rollout_takes_its_model_context_window():
    codex = compaction.load(real_log(CODEX))
    r = resolve_context_window(codex)
    assert (r.value, r.source) == (258_400, "log:model_context_window")
    assert "258,400" in r.note


def test_the_largest_claude_code_session_takes_its_model_window():
    session = compaction.load(real_log(LARGEST_CLAUDE_CODE))
    assert log_model(session) == "claude-opus-4-6"
    r = resolve_context_window(session)
    # its prompts stay under 200k (it compacted at 164,831), so the 1M variant is not proven
    assert (r.value, r.source) == (200_000, "model:claude-opus-4-6")
    assert max(u.prompt_tokens for u in session.usage.values()) < 200_000


def test_the_model_comes_from_the_messages_when_the_reader_names_none():
    c = conv(meta_model="claude-sonnet-4-5-20250929")
    assert c.source.model is None
    assert log_model(c) == "claude-sonnet-4-5-20250929"
    assert resolve_context_window(c).source == "model:claude-sonnet-4-5-20250929"
    assert log_model(conv(model="gpt-4o", meta_model="claude-opus-4-6")) == "gpt-4o"  # the reader's model wins


def test_the_1m_suffix_and_reported_prompts_prove_the_long_window():
    assert resolve_context_window(conv(model="claude-opus-4-6[1m]")).value == 1_000_000
    proven = resolve_context_window(conv(model="claude-sonnet-4-5", peak=312_000))
    assert proven.value == 1_000_000 and "312,000" in proven.note and proven.source == "model:claude-sonnet-4-5"
    assert resolve_context_window(conv(model="claude-sonnet-4-5", peak=150_000)).value == 200_000
    # a model without a long variant keeps its window, and the note says the log went past it
    over = resolve_context_window(conv(model="claude-haiku-4-5", peak=250_000))
    assert over.value == 200_000 and "above it" in over.note
    no_long = resolve_context_window(conv(model="claude-haiku-4-5[1m]"))
    assert no_long.value == 200_000 and "no long-context variant" in no_long.note


def test_gemini_windows():
    assert resolve_context_window(conv(model="gemini-1.5-pro")).value == 2_097_152
    assert resolve_context_window(conv(model="gemini-2.5-flash")).value == 1_048_576


def test_unknown_or_missing_models_fall_back_to_a_stated_default():
    unknown = resolve_context_window(conv(model="acme-llm-7"))
    assert (unknown.value, unknown.source) == (DEFAULT_CONTEXT_WINDOW, "default")
    assert "acme-llm-7" in unknown.note and "not in the model table" in unknown.note
    none = resolve_context_window(conv())
    assert none.source == "default" and "names no model" in none.note
    assert resolve_context_window(conv(), default=64_000).value == 64_000
    assert f"{64_000:,}" in resolve_context_window(conv(), default=64_000).note


# ------------------------------------------------------------------------------------------------ the price preset
def test_prices_follow_the_model_not_the_format():
    opus = compaction.load(real_log(OPUS_4_5))
    r = resolve_price_model(opus)
    assert (r.value, r.source) == ("claude-opus-4-5", "model:claude-opus-4-5-20251101")
    assert prices_for(opus).input_per_mtok == 5.0  # not Sonnet's $3
    sonnet = resolve_price_model(compaction.load(real_log(SONNET_4_5)))
    assert sonnet.value == "claude-sonnet-4-5"
    gpt = resolve_price_model(conv(model="gpt-5.4", fmt="codex"))
    assert (gpt.value, gpt.source) == ("gpt-5.4", "model:gpt-5.4")  # not gpt-5.1-codex
    assert resolve_price_model(conv(model="gpt-5.1-codex-max")).value == "gpt-5.1-codex"
    assert "the preset for gpt-5.1-codex-max" in resolve_price_model(conv(model="gpt-5.1-codex-max")).note


def test_the_largest_claude_code_session_is_priced_as_its_model():
    r = resolve_price_model(compaction.load(real_log(LARGEST_CLAUDE_CODE)))
    assert (r.value, r.source) == ("claude-opus-4-6", "model:claude-opus-4-6")


def test_prices_without_a_known_model_take_the_provider_default_with_a_notice():
    codex = resolve_price_model(conv(fmt="codex"))
    assert (codex.value, codex.source) == ("gpt-5.1-codex", "default") and "names no model" in codex.note
    assert resolve_price_model(conv(fmt="claude-code")).value == "claude-sonnet-4-6"
    assert resolve_price_model(conv(fmt="gemini-cli")).value == "gemini-2.5-pro"
    unknown = resolve_price_model(conv(model="acme-llm-7"))
    assert unknown.source == "default" and "acme-llm-7" in unknown.note
    qwen = resolve_price_model(conv(model="qwen3-max"))  # a known window, no preset
    assert qwen.source == "default" and "no price preset for qwen3-max" in qwen.note
    assert qwen.value == "claude-sonnet-4-6" and "unknown provider" in qwen.note
    deepseek = resolve_price_model(conv(model="deepseek-v4-flash"))
    assert deepseek.value == "deepseek-chat" and "deepseek models" in deepseek.note


def test_the_haiku_4_5_preset_caches_from_4096_tokens():
    assert price_model("claude-haiku-4-5").min_cacheable_tokens == 4096
    assert price_model("claude-sonnet-4-6").min_cacheable_tokens == 1024
    assert price_model("gemini-2.5-pro").write_surcharge is False
