"""Writes docs/strategies.md and docs/formats.md from the strategy and format registries (run from the repository
root)."""

from pathlib import Path

from compaction.docs import formats_markdown, strategies_markdown

for name, text in (("strategies.md", strategies_markdown()), ("formats.md", formats_markdown())):
    Path("docs", name).write_text(text + "\n", encoding="utf-8")
    print(f"wrote docs/{name}")
