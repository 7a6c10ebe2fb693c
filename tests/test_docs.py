"""Every registered strategy and parameter is explained, every format says what it reads and leaves out, and the
generated references are current."""

from __future__ import annotations

from conftest import ROOT

import compaction
from compaction.discover import AGENTS
from compaction.docs import NOT_DESCRIBED
from compaction.docs import formats_markdown
from compaction.docs import strategies_markdown
from compaction.formats import FormatInfo

#: formats whose reads / leaves_out this branch wrote (the new readers' authors fill their own)
DESCRIBED = ("agent-framework", "anthropic", "haystack", "langchain", "openai", "openhands", "tau-bench",
             "tau2-bench", "inspect-ai")


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


def test_format_reference_is_generated_from_the_registry_and_current():
    on_disk = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert on_disk.strip() == formats_markdown().strip(), "run: python tools/build_docs.py"
    names = list(compaction.formats())
    for i, (name, info) in enumerate(compaction.formats().items()):
        section = on_disk.split(f"## `{name}` — {info.title}\n", 1)[1].split("\n## ", 1)[0]
        assert f"tried {i + 1}" in section and f"of {len(names)}" in section, name
        for ext in info.extensions:
            assert f"`{ext}`" in section, (name, ext)
        if name in AGENTS:
            assert AGENTS[name].where in section, name
        else:
            assert "not looked for" in section, name


def test_described_formats_say_what_they_read_and_leave_out():
    known = compaction.formats()
    for name in DESCRIBED:
        info = known[name]
        assert len(info.reads.split()) >= 15 and len(info.leaves_out.split()) >= 8, name
        assert info.to_json()["reads"] == info.reads and info.to_json()["leaves_out"] == info.leaves_out


def test_format_reference_tolerates_a_format_without_descriptions():
    def fits(doc):
        return None

    bare = FormatInfo("bare", "A bare format", fits, lambda doc: [], extensions=())
    text = formats_markdown({"bare": bare, "openai": compaction.formats()["openai"]})
    assert "## `bare` — A bare format" in text
    assert f"**Reads.** {NOT_DESCRIBED}" in text and f"**Leaves out.** {NOT_DESCRIBED}" in text
    assert "tried 1st of 2 (before `openai`)" in text and "tried 2nd of 2 (after `bare`)" in text
    assert "*Extensions:* none" in text


def test_format_prose_is_shown_literally():
    def fits(doc):
        return None

    info = FormatInfo("x", "X", fits, lambda doc: [], reads="ids task<id> and files *.json or *.jsonl")
    text = formats_markdown({"x": info})
    assert "ids task&lt;id> and files \\*.json or \\*.jsonl" in text
