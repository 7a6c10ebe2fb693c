"""The format registry: an explicit detection order that lists every format once, and text documents."""

from __future__ import annotations

import compaction
from compaction.formats import formats
from compaction.formats import parse_document
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


def test_an_upload_never_reads_files_of_the_server(tmp_path, monkeypatch) -> None:
    """An upload's name is the uploader's: files 'beside' it are not looked up on this machine."""
    (tmp_path / "ui_messages.json").write_text("[]")
    monkeypatch.chdir(tmp_path)
    doc = parse_document(b'{"a": 1}', "ui_messages.json")
    assert doc.folder is None and doc.companion("ui_messages.json") is None
    on_disk = tmp_path / "log.json"
    on_disk.write_text('{"a": 1}')
    from compaction.formats.base import read_path

    doc = parse_document(read_path(on_disk), str(on_disk))
    doc.folder = on_disk.parent
    assert doc.companion("ui_messages.json") == b"[]"
    assert doc.companion("../ui_messages.json") is None and doc.companion(str(tmp_path / "x")) is None
