"""Writes docs/strategies.md from the strategy registry (run from the repository root)."""

from pathlib import Path

from compaction.docs import strategies_markdown

Path("docs/strategies.md").write_text(strategies_markdown() + "\n", encoding="utf-8")
print("wrote docs/strategies.md")
