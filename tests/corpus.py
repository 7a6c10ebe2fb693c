"""The logs and parameter grids that whole-registry tests (invariants, fast paths vs references) replay: the first
conversation of every real log, capped to its first calls, two windows sized to each log, and each strategy's
parameters varied one at a time."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from conftest import REAL_LOGS

import compaction
from compaction.conversation import Conversation
from compaction.formats import LoadError

LOG_SUFFIXES = (".json", ".jsonl", ".traj", ".eval", ".md")
MAX_CALLS = 40
#: windows as fractions of the log's uncompacted size (approx tokens): with compact_at 0.7 the hook triggers at 42%
#: and 21% of the full log
WINDOW_FRACTIONS = (0.6, 0.3)
MIN_WINDOW = 2_000

#: variants of a strategy's parameters the grid tries (besides the defaults), and the policies it alternates
MAX_VARIANTS = 6
GRID_POLICIES = ((0.7, 0.4), (0.9, 0.2))
#: choices the grid leaves out: a real model, never called in tests
OFFLINE_ONLY = {"openai-compatible"}
#: text parameters that hold a count or ``all``: the grid tries both ends
COUNT_OR_ALL = ("0", "all")
#: what the grid sets a count to whose default is already its minimum
SMALL_SETTING = 4_096


def capped(conv: Conversation, calls: int = MAX_CALLS) -> Conversation:
    """The conversation up to (not including) its ``calls + 1``-th LLM call, with usage and events cut to match."""
    assistants = [i for i, m in enumerate(conv.messages) if m.role == "assistant"]
    if len(assistants) <= calls:
        return conv
    cut = assistants[calls]
    return replace(
        conv,
        messages=conv.messages[:cut],
        usage={i: u for i, u in conv.usage.items() if i < cut},
        events=tuple(e for e in conv.events if e.message_index <= cut),
        log_summary_indices=frozenset(i for i in conv.log_summary_indices if i < cut),
    )


@cache
def real_conversations() -> tuple[tuple[str, Conversation], ...]:
    """The first conversation of every real log, capped, with at least one LLM call."""
    out = []
    for path in sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.name.endswith(LOG_SUFFIXES)):
        try:
            conv = compaction.load(path)
        except LoadError:
            continue
        conv = capped(conv)
        if conv.llm_call_indices:
            out.append((str(path.relative_to(REAL_LOGS)), conv))
    return tuple(out)


def windows_for(conv: Conversation) -> list[int]:
    """Two context windows under which compaction happens on ``conv``, largest first."""
    total = compaction.make_counter("approx").count(conv.messages, conv.tools)
    return sorted({max(MIN_WINDOW, int(total * f)) for f in WINDOW_FRACTIONS}, reverse=True)


def parameter_variants(strategy: str) -> list[dict]:
    """The defaults, then one parameter changed at a time: a number to its minimum, a switch flipped, a choice to
    each other value (at most :data:`MAX_VARIANTS` in all); when none of these varies anything, a count whose
    default is its minimum is set to :data:`SMALL_SETTING`."""
    variants: list[dict] = [{}]
    fallback: list[dict] = []  # tried only when nothing else varies
    for p in compaction.strategies()[strategy].params:
        if p.advanced:
            continue
        if p.type in ("int", "float") and p.minimum is not None and p.minimum != p.default:
            variants.append({p.name: int(p.minimum) if p.type == "int" else p.minimum})
        elif p.type == "int" and p.minimum is not None:  # the default is the minimum (e.g. 0 = "the model's own")
            fallback.append({p.name: min(int(p.minimum) + SMALL_SETTING, p.maximum or SMALL_SETTING)})
        elif p.type == "bool":
            variants.append({p.name: not p.default})
        elif p.type == "choice":
            variants += [{p.name: c} for c in p.choices if c != p.default and c not in OFFLINE_ONLY]
        elif p.type == "str" and "`all`" in p.help:
            variants += [{p.name: v} for v in COUNT_OR_ALL if v != p.default]
    return (variants if len(variants) > 1 else variants + fallback)[:MAX_VARIANTS]
