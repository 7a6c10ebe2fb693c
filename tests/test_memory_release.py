"""A log the user has moved on from is freed, whatever ran on it.

Counters are shared process-wide (``make_counter`` reuses one per spec) and cache per message; analyses keep what
they derive from a conversation. None of them may keep a conversation alive: in the app every upload would stay in
memory for good (the long fuzz run reached 12 GB per worker before this was fixed).
"""

from __future__ import annotations

import gc
import weakref

import pytest
from conftest import SAMPLES

import compaction
from compaction.analysis.calibration import calibrate
from compaction.analysis.costs import compare_costs
from compaction.analysis.information import information_loss
from compaction.analysis.sweep import sweep
from compaction.setups import Setup
from compaction.tokens import _IdCache

COUNTERS = ("approx", "tiktoken:o200k_base", "maf-dotnet", "maf-python", "langchain")


def _load() -> compaction.Conversation:
    path = SAMPLES / "coding_agent.openai.json"
    return compaction.load_all_conversations(path.read_bytes(), name=path.name)[0]


def _analyse(conv: compaction.Conversation, counter: str, strategy: str) -> None:
    rep = compaction.replay(conv, strategy, context_window=20_000, counter=counter)
    compare_costs(rep)
    information_loss(rep)
    calibrate(conv)
    sweep(conv, Setup("haystack.tool_result_pruning", context_window=20_000), {"compact_at": [0.6, 0.8]})


def _assert_freed(counter: str, strategy: str) -> None:
    conv = _load()
    messages = [weakref.ref(m) for m in conv.messages]
    _analyse(conv, counter, strategy)
    del conv
    gc.collect()
    alive = sum(ref() is not None for ref in messages)
    assert alive == 0, f"{alive} of {len(messages)} messages still held after {strategy} with {counter}"


@pytest.mark.parametrize("counter", COUNTERS)
def test_a_conversation_is_freed_whatever_counted_it(counter: str) -> None:
    _assert_freed(counter, "haystack.tool_result_pruning")


@pytest.mark.parametrize("strategy", sorted(compaction.registry()))
def test_a_conversation_is_freed_whatever_replayed_it(strategy: str) -> None:
    _assert_freed("approx", strategy)


def test_counter_caches_still_hit_for_live_messages() -> None:
    """Weak entries are still entries: the second count of a live message is a cache hit, not a new measurement."""
    conv = _load()
    counter = compaction.make_counter("tiktoken:o200k_base")
    first = counter.count(conv.messages)
    measured = []
    original = counter._compute_parts
    counter._compute_parts = lambda m: measured.append(m) or original(m)
    try:
        assert counter.count(conv.messages) == first
    finally:
        del counter._compute_parts
    assert measured == []


def test_a_cache_sweeps_out_the_entries_of_freed_messages() -> None:
    """Entries of freed messages do not pile up: the cache sweeps them out once it has doubled since its last sweep."""
    cache = _IdCache()
    for _ in range(5):
        batch = [compaction.Message("user", (f"text {i}",)) for i in range(3000)]
        for m in batch:
            cache.get(m, lambda m: len(m.texts[0]))
        assert all(cache.get(m, lambda m: -1) >= 0 for m in batch), "live messages still hit"
        del batch
    assert len(cache._data) <= 2 * 3000 + 4096
