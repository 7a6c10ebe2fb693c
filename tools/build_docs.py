"""Writes docs/strategies.md and docs/formats.md from the strategy and format registries of this checkout."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed copy of another one

from compaction.docs import formats_markdown  # noqa: E402
from compaction.docs import strategies_markdown  # noqa: E402

for name, text in (("strategies.md", strategies_markdown()), ("formats.md", formats_markdown())):
    (ROOT / "docs" / name).write_text(text + "\n", encoding="utf-8")
    print(f"wrote docs/{name}")
