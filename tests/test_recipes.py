"""The recipes of docs/architecture.md work when followed literally: each complete code block (its first line names
the file it goes in) is written into a copy of the package, and the CLI then lists and runs what it adds."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BLOCK = re.compile(r"```python\n(# (compaction/[\w/]+\.py)\n.*?)```", re.S)


def recipe_blocks() -> dict[str, str]:
    """File path -> code, for every block whose first line is a comment naming a file of the package."""
    return {path: code for code, path in BLOCK.findall(DOC.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def followed(tmp_path_factory) -> Path:
    """A copy of the package with every recipe block written where it says."""
    root = tmp_path_factory.mktemp("recipes")
    shutil.copytree(ROOT / "compaction", root / "compaction", ignore=shutil.ignore_patterns("__pycache__"))
    for path, code in recipe_blocks().items():
        target = root / path
        assert not target.exists(), f"the recipe's {path} already exists: pick a name the package does not use"
        target.write_text(code, encoding="utf-8")
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "compaction", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_doc_has_a_strategy_and_a_format_recipe() -> None:
    paths = set(recipe_blocks())
    assert any(p.startswith("compaction/strategies/") for p in paths)
    assert any(p.startswith("compaction/formats/") for p in paths)


def test_the_strategy_recipe_gives_a_listed_working_strategy(followed: Path) -> None:
    listed = cli(followed, "strategies", "--json")
    assert listed.returncode == 0, listed.stderr
    names = {s["name"] for s in json.loads(listed.stdout)}
    assert "mylab.trim_old_results" in names
    sample = ROOT / "sample_conversations" / "coding_agent.openai.json"
    run = cli(followed, "replay", str(sample), "--strategy", "mylab.trim_old_results", "--context-window", "20000",
              "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)["summary"]
    assert summary["compactions"] > 0 and summary["tokens_saved"] > 0


def test_the_format_recipe_gives_a_detected_format(followed: Path, tmp_path: Path) -> None:
    listed = cli(followed, "formats", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "mylab" in {f["name"] for f in json.loads(listed.stdout)}
    log = tmp_path / "run.json"
    log.write_text(json.dumps({"mylab_version": 1, "turns": [
        {"role": "user", "text": "List the files."},
        {"role": "assistant", "text": "Looking.", "tool": "ls", "output": "a.py\nb.py"},
        {"role": "assistant", "text": "Two files: a.py and b.py."}]}), encoding="utf-8")
    info = cli(followed, "info", str(log), "--json")
    assert info.returncode == 0, info.stderr
    read = json.loads(info.stdout)
    assert read["format"] == "mylab"
    assert read["conversations"][0]["llm_calls"] == 2 and read["conversations"][0]["tool_calls"] == 1
