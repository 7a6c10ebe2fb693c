"""The format registry: an explicit detection order that lists every format once, and text documents."""

from __future__ import annotations

import compaction
from compaction.formats import formats, parse_document
from compaction.formats.base import DETECTION_ORDER


def test_every_registered_format_has_one_place_in_the_detection_order() -> None:
    assert len(DETECTION_ORDER) == len(set(DETECTION_ORDER))
    missing = [name for name in formats() if name not in DETECTION_ORDER]
    assert not missing, f"add {missing} to DETECTION_ORDER in compaction/formats/base.py"


def test_formats_are_tried_in_the_listed_order() -> None:
    listed = [name for name in DETECTION_ORDER if name in formats()]
    assert list(formats()) == listed


def test_plain_text_is_a_text_document_and_the_error_names_every_format_tried() -> None:
    doc = parse_document(b"# a markdown file\n\nnot a log at all\n", "notes.md")
    assert doc.kind == "text" and doc.text.startswith("# a markdown")
    try:
        compaction.load(b"# a markdown file\n\nnot a log at all\n", name="notes.md")
    except compaction.LoadError as exc:
        message = str(exc)
    else:  # pragma: no cover - the assertion below reports it
        message = ""
    assert message.startswith("notes.md: unknown log format. Tried: ")
    for name in formats():
        assert f"{name}: " in message


def test_broken_json_still_reports_the_json_error() -> None:
    try:
        compaction.load(b'{"messages": [1, 2', name="cut.json")
    except compaction.LoadError as exc:
        assert "not valid JSON" in str(exc)
