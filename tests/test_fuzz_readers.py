"""Fuzz every reader with mutated real and fixture logs: only our typed LoadError may escape, and whatever loads
must replay.

CI runs a small sample per seed file. The dedicated long run (10,000+ cases per format):

    FUZZ_EXAMPLES=10000 python -m pytest tests/test_fuzz_readers.py -p no:cacheprovider
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from conftest import REAL_LOGS, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compaction
from compaction.formats import LoadError

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
#: seed documents are cut to this many records/messages so each example stays fast
MAX_RECORDS = 40


def _seed_files() -> list[Path]:
    files: list[Path] = []
    if REAL_LOGS.exists():
        files += sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj"))
    fixtures = ROOT / "tests" / "fixtures"
    if fixtures.exists():
        files += sorted(p for p in fixtures.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".traj"))
    return files


def _shrink(value, depth: int = 0):
    """Keep the shape of a document but at most MAX_RECORDS items per list (at the top levels)."""
    if isinstance(value, list):
        return [_shrink(v, depth + 1) for v in value[:MAX_RECORDS]]
    if isinstance(value, dict) and depth < 3:
        return {k: _shrink(v, depth + 1) for k, v in value.items()}
    return value


def _seed_text(path: Path) -> tuple[str, bool]:
    """(text, is_jsonl) of a shrunk seed document."""
    raw = path.read_text(encoding="utf-8")
    try:
        return json.dumps(_shrink(json.loads(raw))), False
    except json.JSONDecodeError:
        return "\n".join(raw.splitlines()[:MAX_RECORDS]), True


_REPLACEMENTS = [None, 0, -1, 1.5, "", "x", [], {}, True, "\u0000\ud7ff<script>", 10**20]


def _mutate_value(value, rnd: random.Random, budget: list[int]):
    """Randomly delete keys, change types, drop or duplicate list items."""
    if budget[0] <= 0:
        return value
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            roll = rnd.random()
            if roll < 0.05:
                budget[0] -= 1
                continue  # missing key
            if roll < 0.10:
                budget[0] -= 1
                out[k] = rnd.choice(_REPLACEMENTS)  # wrong type
            else:
                out[k] = _mutate_value(v, rnd, budget)
        return out
    if isinstance(value, list):
        out = [_mutate_value(v, rnd, budget) for v in value]
        if out and rnd.random() < 0.1:
            budget[0] -= 1
            del out[rnd.randrange(len(out))]
        if out and rnd.random() < 0.05:
            budget[0] -= 1
            out.insert(rnd.randrange(len(out)), rnd.choice(out))
        return out
    if rnd.random() < 0.03:
        budget[0] -= 1
        return rnd.choice(_REPLACEMENTS)
    return value


def _mutate(text: str, is_jsonl: bool, rnd: random.Random) -> bytes:
    kind = rnd.random()
    data = text.encode("utf-8")
    if kind < 0.2 and data:  # truncation
        return data[: rnd.randrange(len(data))]
    if kind < 0.3 and data:  # byte flips
        buf = bytearray(data)
        for _ in range(rnd.randint(1, 8)):
            buf[rnd.randrange(len(buf))] = rnd.randrange(256)
        return bytes(buf)
    budget = [rnd.randint(1, 12)]
    if is_jsonl:
        lines = []
        for line in text.splitlines():
            try:
                lines.append(json.dumps(_mutate_value(json.loads(line), rnd, budget)))
            except json.JSONDecodeError:
                lines.append(line)
        if lines and rnd.random() < 0.2:
            lines[rnd.randrange(len(lines))] = "{not json"
        return "\n".join(lines).encode("utf-8")
    return json.dumps(_mutate_value(json.loads(text), rnd, budget)).encode("utf-8")


SEEDS = _seed_files()


@pytest.mark.skipif(not SEEDS, reason="no seed logs")
@pytest.mark.parametrize("seed_path", SEEDS, ids=lambda p: p.name[:60])
def test_only_load_errors_escape_and_loaded_logs_replay(seed_path):
    text, is_jsonl = _seed_text(seed_path)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(min_value=0, max_value=2**32 - 1))
    def check(seed: int) -> None:
        data = _mutate(text, is_jsonl, random.Random(seed))
        try:
            conversations = compaction.load_all_conversations(data, name=seed_path.name)
        except LoadError as exc:
            assert seed_path.name in str(exc)
            assert not exc.internal, f"a reader crashed on unanticipated data: {exc}"
            return
        for conv in conversations[:3]:
            rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=2000)
            assert len(rep.steps) == len(conv.llm_call_indices) - len(
                [i for i in conv.llm_call_indices if i in conv.log_summary_indices])

    check()
