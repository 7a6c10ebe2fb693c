"""Fuzz every reader with mutated real and fixture logs: only our typed LoadError may escape, naming the file (and
the line or field where it knows one), and whatever loads must replay.

Seeds: every real log in ../shared/real_logs, every fixture in tests/fixtures, the bundled samples (OpenAI and
Haystack), Agent Framework message lists serialized by agent-framework-core itself, and Inspect ``.eval`` archives.
A test fails when a registered format has no seed. Each seed is mutated structurally (keys dropped, values of the
wrong type, items dropped or duplicated, a JSONL line broken) or byte-wise (truncation, flipped bytes), and every
mutated document is read twice: format detected, and with the seed's own format forced (the reader itself runs on
the damaged data instead of detection turning it away).

CI runs a small sample per seed. The dedicated long run (10,000+ cases per format):

    FUZZ_EXAMPLES=10000 python -m pytest tests/test_fuzz_readers.py -p no:cacheprovider
"""

from __future__ import annotations

import io
import json
import os
import random
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REAL_LOGS
from conftest import ROOT
from conftest import SAMPLES
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction.formats import LoadError
from compaction.formats import formats

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "25"))
#: seed documents are cut to this many records/messages so each example stays fast
MAX_RECORDS = 40
SUFFIXES = (".json", ".jsonl", ".traj")
#: plain-text logs (Aider's chat and LLM histories), fuzzed line by line and kept whole up to this many lines
TEXT_SUFFIXES = (".md", ".history")
MAX_TEXT_LINES = 2000


@dataclass(frozen=True)
class Seed:
    """One document to mutate: its display name, format, text (JSON or JSONL) and how it is packaged."""

    name: str
    format: str
    text: str
    kind: str  # "json" | "jsonl" | "text" | "eval" (the text is an Inspect sample, zipped after mutation)


def _shrink(value, depth: int = 0):
    """Keep the shape of a document but at most MAX_RECORDS items per list (at the top levels)."""
    if isinstance(value, list):
        return [_shrink(v, depth + 1) for v in value[:MAX_RECORDS]]
    if isinstance(value, dict) and depth < 3:
        return {k: _shrink(v, depth + 1) for k, v in value.items()}
    return value


def _file_seed(path: Path) -> Seed:
    raw = path.read_text(encoding="utf-8")
    fmt = compaction.load_all_conversations(path)[0].format
    if path.suffix in TEXT_SUFFIXES:
        return Seed(path.name, fmt, "\n".join(raw.splitlines()[:MAX_TEXT_LINES]), "text")
    try:
        return Seed(path.name, fmt, json.dumps(_shrink(json.loads(raw))), "json")
    except json.JSONDecodeError:
        return Seed(path.name, fmt, "\n".join(raw.splitlines()[:MAX_RECORDS]), "jsonl")


def _framework_seeds() -> list[Seed]:
    """Agent Framework and Haystack message lists as the real libraries serialize them (our writer's output when a
    library is not installed), from the coding sample."""
    conversation = compaction.load(SAMPLES / "coding_agent.openai.json")
    seeds = []
    for fmt, module, cls in (("agent-framework", "agent_framework", "Message"),
                             ("haystack", "haystack.dataclasses", "ChatMessage")):
        dicts = compaction.convert(conversation, fmt)
        try:
            library = __import__(module, fromlist=[cls])
            dicts = [getattr(library, cls).from_dict(d).to_dict() for d in dicts]
            name = f"coding_agent.{fmt}.{module}.json"
        except ImportError:
            name = f"coding_agent.{fmt}.ours.json"
        seeds.append(Seed(name, fmt, json.dumps(_shrink(dicts), default=str), "json"))
    return seeds


def _eval_seeds() -> list[Seed]:
    """Inspect samples to be packaged as ``.eval`` archives (the fixture's and the real log's)."""
    seeds = []
    for path in [ROOT / "tests" / "fixtures" / "inspect-ai" / "log.json", *sorted((REAL_LOGS / "inspect-ai").glob("*.json"))]:
        if path.exists():
            for sample in json.loads(path.read_text(encoding="utf-8"))["samples"][:2]:
                seeds.append(Seed(f"{path.stem}-{sample['id']}.eval", "inspect-ai", json.dumps(_shrink(sample)), "eval"))
    return seeds


def _seeds() -> list[Seed]:
    files: list[Path] = []
    suffixes = SUFFIXES + TEXT_SUFFIXES
    if REAL_LOGS.exists():
        files += sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.suffix in suffixes
                        and p.name != "README.md")
    files += sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*") if p.is_file() and p.suffix in suffixes)
    files += sorted(SAMPLES.glob("*.json"))
    return [*(_file_seed(p) for p in files), *_framework_seeds(), *_eval_seeds()]


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


def _damage_bytes(data: bytes, rnd: random.Random) -> bytes:
    if rnd.random() < 0.65:  # truncation
        return data[: rnd.randrange(len(data))]
    buf = bytearray(data)  # byte flips
    for _ in range(rnd.randint(1, 8)):
        buf[rnd.randrange(len(buf))] = rnd.randrange(256)
    return bytes(buf)


def _eval_archive(sample_text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "fuzz"}}))
        archive.writestr("samples/1_epoch_1.json", sample_text)
    return buffer.getvalue()


_TEXT_MARKUP = ["> ", "#### ", "####", ">", "-------", "TO LLM 2025-01-01T00:00:00", "LLM RESPONSE 2025-01-01T00:00:01",
                "# aider chat started at 2025-01-01 00:00:00", "USER type: text", "ASSISTANT ",
                "> Tokens: 1.2k sent, 3 received.  ", "> Commit abc1234 x  ",
                "> Add file to the chat? (Y)es/(N)o [Yes]: y  "]


def _mutate_text(text: str, rnd: random.Random) -> str:
    """Lines dropped, repeated, swapped or stripped of their trailing spaces, and stray log markup inserted."""
    lines = text.split("\n")
    for _ in range(rnd.randint(1, 12)):
        if not lines:
            break
        roll, at = rnd.random(), rnd.randrange(len(lines))
        if roll < 0.25:
            del lines[at]
        elif roll < 0.45:
            lines.insert(at, lines[rnd.randrange(len(lines))])
        elif roll < 0.6:
            other = rnd.randrange(len(lines))
            lines[at], lines[other] = lines[other], lines[at]
        elif roll < 0.75:
            lines[at] = lines[at].rstrip()
        else:
            lines.insert(at, rnd.choice(_TEXT_MARKUP))
    return "\n".join(lines)


def _mutate(seed: Seed, rnd: random.Random) -> bytes:
    kind = rnd.random()
    if seed.kind == "eval":
        if kind < 0.3:
            return _damage_bytes(_eval_archive(seed.text), rnd)
        budget = [rnd.randint(1, 12)]
        return _eval_archive(json.dumps(_mutate_value(json.loads(seed.text), rnd, budget)))
    data = seed.text.encode("utf-8")
    if kind < 0.3 and data:
        return _damage_bytes(data, rnd)
    if seed.kind == "text":
        return _mutate_text(seed.text, rnd).encode("utf-8")
    budget = [rnd.randint(1, 12)]
    if seed.kind == "jsonl":
        lines = []
        for line in seed.text.splitlines():
            try:
                lines.append(json.dumps(_mutate_value(json.loads(line), rnd, budget)))
            except json.JSONDecodeError:
                lines.append(line)
        if lines and rnd.random() < 0.2:
            lines[rnd.randrange(len(lines))] = "{not json"
        return "\n".join(lines).encode("utf-8")
    return json.dumps(_mutate_value(json.loads(seed.text), rnd, budget)).encode("utf-8")


SEEDS = _seeds()


def test_every_format_has_a_seed():
    assert {s.format for s in SEEDS} >= set(formats()), "a registered format is never fuzzed"


def _check_error(exc: LoadError, seed: Seed) -> None:
    """Our typed error: names the file, says where when it knows, and is not a reader crash made safe."""
    assert not exc.internal, f"a reader crashed on unanticipated data: {exc}"
    message = str(exc)
    assert message.startswith(seed.name), message
    if exc.line is not None:
        assert f"line {exc.line}" in message
    if exc.field:
        assert repr(exc.field) in message
    assert exc.reason.strip(), "an error must say what was wrong"


def _check_loaded(conversations: list[compaction.Conversation], seed: Seed) -> None:
    """Whatever loads replays; every bad JSONL line is reported with its number."""
    for warning in conversations[0].warnings:
        if warning.message.startswith(("skipped: not valid JSON", "skipped: not UTF-8")):  # a bad JSONL line
            assert warning.line is not None, warning
    for conv in conversations[:3]:
        rep = compaction.replay(conv, "haystack.tool_result_pruning", context_window=2000)
        assert len(rep.steps) == len([i for i in conv.llm_call_indices if i not in conv.log_summary_indices])


@pytest.mark.skipif(not SEEDS, reason="no seed logs")
@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.name[:60])
def test_only_load_errors_escape_and_loaded_logs_replay(seed: Seed):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(min_value=0, max_value=2**32 - 1))
    def check(number: int) -> None:
        data = _mutate(seed, random.Random(number))
        for forced in (None, seed.format):
            try:
                conversations = compaction.load_all_conversations(data, format=forced, name=seed.name)
            except LoadError as exc:
                _check_error(exc, seed)
                continue
            _check_loaded(conversations, seed)

    check()
