"""Every registered strategy and parameter is explained, and the generated reference is current."""

from __future__ import annotations

from conftest import ROOT

import compaction
from compaction.docs import strategies_markdown


def test_every_strategy_and_parameter_has_help_text():
    for name, info in compaction.strategies().items():
        assert info.title.strip() and len(info.summary.split()) >= 8, name
        assert info.docs_url.startswith("https://"), name
        for p in info.params:
            assert len(p.help.split()) >= 4, f"{name}.{p.name} needs a help sentence"


def test_reference_is_generated_from_the_registry_and_current():
    on_disk = (ROOT / "docs" / "strategies.md").read_text(encoding="utf-8")
    assert on_disk.strip() == strategies_markdown().strip(), "run: python tools/build_docs.py"
    for name, info in compaction.strategies().items():
        assert f"`{name}`" in on_disk
        for p in info.params:
            assert f"`{p.name}`" in on_disk
