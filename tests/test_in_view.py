"""Regions drawn only while on screen (compaction.ui.in_view): what the server decides from the browser's reports.

The browser side (a threshold press at 1366×768 sends nothing of the cards and tabs; scrolling draws them with the
tab that was open; at 1920×1080 the cards are drawn and the tabs are not) is in tests/test_browser_tuning.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from compaction.ui import in_view


def _regions_script() -> None:
    import streamlit as st

    from compaction.ui import in_view

    if in_view.region_in_view("region.a", "A"):
        st.text("a drawn")
    with in_view.whole_page():
        if in_view.region_in_view("region.b", "B"):
            st.text("b drawn")


def test_a_region_is_drawn_until_the_browser_reports_it_out_of_view_and_always_on_a_full_run():
    at = AppTest.from_function(_regions_script).run()
    assert not at.exception
    assert [t.value for t in at.text] == ["a drawn", "b drawn"]  # nothing reported yet: in view
    at.session_state["region.a"] = {"visible": False}
    at.session_state["region.b"] = {"visible": False}
    at.run()
    assert [t.value for t in at.text] == ["b drawn"]  # out of view, except where the whole page is drawn
    at.session_state["region.a"] = {"visible": True}
    at.run()
    assert [t.value for t in at.text] == ["a drawn", "b drawn"]


@pytest.mark.parametrize(("held", "expected"), [(None, True), ({"visible": True}, True), ({"visible": False}, False),
                                                ("not a report", True), ({}, True)])
def test_what_counts_as_in_view(monkeypatch: pytest.MonkeyPatch, held: object, expected: bool):
    monkeypatch.setattr(in_view.st, "session_state", {} if held is None else {"k": held})
    assert in_view.is_in_view("k") is expected


def test_the_markers_script_is_a_valid_module(tmp_path: Path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = tmp_path / "marker.mjs"
    script.write_text(in_view._JS)
    checked = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert f"NEAR = {in_view.NEAR_PX}, FAR = {in_view.FAR_PX}" in in_view._JS
