"""Generate the benchmark logs, deterministically, into a cache folder (default ``benchmarks/.data/``).

- ``calls-2000.openai.json`` and ``calls-10000.openai.json``: logs of 2,000 and 10,000 LLM calls;
- ``size-20mb.openai.json`` (and ``size-200mb.openai.json`` with ``--large``): logs of about that many bytes;
- ``calls-1000.openai.json``: the log the sweep and app benchmarks use;
- ``fleet/``: 100 small-to-medium logs of mixed formats (OpenAI ``{messages, tools}``, OpenAI bare message list,
  Haystack ``ChatMessage`` list, Agent Framework message list) for the fleet benchmark.

Every file comes from :mod:`generate_log` with a fixed seed, so the same Python installation gives the same bytes.
A file already in the cache is reused; ``--force`` rebuilds everything.

    python benchmarks/make_logs.py [--large] [--force] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import generate_log  # noqa: E402

import compaction  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent / ".data"
#: the team's real third-party logs (read in place, never copied), next to the project
REAL_LOGS = Path(__file__).resolve().parents[2] / "shared" / "real_logs"
SEED = 7
CALL_SIZES = (1000, 2000, 10000)
MEGABYTES = 1_000_000
FLEET_LOGS = 100
FLEET_FORMATS = ("openai", "openai-list", "haystack", "agent-framework")


def data_dir(folder: str | Path | None = None) -> Path:
    """The cache folder (created if missing): ``folder``, ``$COMPACTION_BENCH_DATA`` or ``benchmarks/.data``."""
    path = Path(folder or os.environ.get("COMPACTION_BENCH_DATA") or DEFAULT_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode("utf-8")


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def calls_log(calls: int, folder: str | Path | None = None, force: bool = False) -> Path:
    """The cached OpenAI-format log of exactly ``calls`` LLM calls (built on first use)."""
    path = data_dir(folder) / f"calls-{calls}.openai.json"
    if force or not path.exists():
        _write_atomic(path, _dump(generate_log.build_log(calls, SEED)))
    return path


def calls_for_bytes(target_bytes: int, seed: int = SEED) -> int:
    """The number of LLM calls whose generated log weighs about ``target_bytes`` (measured on a 500-call sample,
    then corrected once on the full estimate)."""
    sample_calls = 500
    per_call = len(_dump(generate_log.build_log(sample_calls, seed))) / sample_calls
    estimate = max(1, round(target_bytes / per_call))
    actual = len(_dump(generate_log.build_log(estimate, seed)))
    return max(1, round(estimate * target_bytes / actual))


def sized_log(megabytes: int, folder: str | Path | None = None, force: bool = False) -> Path:
    """The cached OpenAI-format log of about ``megabytes`` MB (10^6 bytes)."""
    path = data_dir(folder) / f"size-{megabytes}mb.openai.json"
    if force or not path.exists():
        calls = calls_for_bytes(megabytes * MEGABYTES)
        _write_atomic(path, _dump(generate_log.build_log(calls, SEED)))
    return path


def _fleet_document(index: int) -> tuple[str, bytes]:
    """File name and bytes of fleet log ``index``: 20–400 calls, the format cycling through FLEET_FORMATS."""
    rng = random.Random(1000 + index)
    calls = int(math.exp(rng.uniform(math.log(20), math.log(400))))
    log = generate_log.build_log(calls, seed=1000 + index)
    fmt = FLEET_FORMATS[index % len(FLEET_FORMATS)]
    name = f"run-{index:03d}-{calls}calls"
    if fmt == "openai":
        return f"{name}.openai.json", _dump(log)
    if fmt == "openai-list":
        return f"{name}.openai-list.json", _dump(log["messages"])
    conv = compaction.load(_dump(log), format="openai", name=name)
    return f"{name}.{fmt}.json", _dump(compaction.convert(conv, fmt))


def fleet_folder(folder: str | Path | None = None, force: bool = False) -> Path:
    """The cached folder of :data:`FLEET_LOGS` mixed-format logs."""
    root = data_dir(folder) / "fleet"
    root.mkdir(exist_ok=True)
    marker = root / ".complete"
    if force or not marker.exists():
        for index in range(FLEET_LOGS):
            name, data = _fleet_document(index)
            _write_atomic(root / name, data)
        marker.write_text(str(FLEET_LOGS))
    return root


def longest_real_logs(count: int = 5, folder: Path = REAL_LOGS) -> list[tuple[Path, compaction.Conversation]]:
    """The ``count`` real logs with the most LLM calls (each file's longest conversation), longest first; empty when
    ../shared/real_logs is absent. ``openai-plain/`` is left out: it holds reductions of runs found elsewhere."""
    if not folder.is_dir():
        return []
    found: list[tuple[int, str, Path, compaction.Conversation]] = []
    files = (p for p in folder.rglob("*") if p.is_file() and p.name != "README.md" and p.parent.name != "openai-plain")
    for path in sorted(files):
        try:
            conversations = compaction.load_all_conversations(path)
        except compaction.LoadError:
            continue
        longest = max(conversations, key=lambda c: len(c.llm_call_indices))
        found.append((len(longest.llm_call_indices), path.name, path, longest))
    found.sort(key=lambda f: (-f[0], f[1]))
    return [(path, conversation) for _, _, path, conversation in found[:count]]


def make_all(folder: str | Path | None = None, large: bool = False, force: bool = False) -> dict[str, Path]:
    """Build (or reuse) every benchmark input; returns them by name."""
    out = {f"calls-{n}": calls_log(n, folder, force) for n in CALL_SIZES}
    out["size-20mb"] = sized_log(20, folder, force)
    if large:
        out["size-200mb"] = sized_log(200, folder, force)
    out["fleet"] = fleet_folder(folder, force)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help=f"cache folder (default {DEFAULT_DIR})")
    parser.add_argument("--large", action="store_true", help="also build the ~200 MB log")
    parser.add_argument("--force", action="store_true", help="rebuild files already in the cache")
    args = parser.parse_args(argv)
    for name, path in make_all(args.dir, args.large, args.force).items():
        if path.is_dir():
            files = [p for p in path.iterdir() if p.suffix == ".json"]
            size = sum(p.stat().st_size for p in files)
            print(f"{name:12s} {path}  ({len(files)} logs, {size / MEGABYTES:.1f} MB)")
        else:
            print(f"{name:12s} {path}  ({path.stat().st_size / MEGABYTES:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
