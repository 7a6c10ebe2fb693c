"""Write the bundled samples in the other formats the app reads, from the OpenAI chat-completions files.

The ``*.openai.json`` files are the samples themselves (data, edited as data): a coding agent fixing an encoding
bug, a research agent reading the Python reference, a multi-turn support agent. Their file contents, test output
and documentation pages are real (the Python standard library and its docs); the script that first composed them is
in the project's history (before commit "Samples as data"). This script derives the Haystack ``ChatMessage`` copies
with compaction's own writer; ``tests/test_samples.py`` checks they are up to date.

Usage (from the repository root)::

    python sample_conversations/build_samples.py
"""

from __future__ import annotations

import json
from pathlib import Path

import compaction

SAMPLES = Path(__file__).resolve().parent
#: the formats each sample is also offered in, by file suffix
OTHER_FORMATS = {"haystack": ".haystack.json"}


def derived(source: Path, fmt: str) -> str:
    """The text of ``source`` converted to ``fmt``, as this script writes it."""
    value = compaction.convert(compaction.load(source), fmt)
    return json.dumps(value, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    for source in sorted(SAMPLES.glob("*.openai.json")):
        for fmt, suffix in OTHER_FORMATS.items():
            target = source.with_name(source.name.replace(".openai.json", suffix))
            target.write_text(derived(source, fmt), encoding="utf-8")
            print(f"wrote {target.name}")


if __name__ == "__main__":
    main()
