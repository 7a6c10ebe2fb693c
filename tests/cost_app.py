"""The cost view alone in an ``AppTest`` (shared by the cost and numbers UI tests)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from streamlit.testing.v1 import AppTest

from compaction.setups import Setup
from compaction.setups import setups_to_json


def _costs_script(log_path: str, setups_json: str, colors: dict[str, str]) -> None:
    import streamlit as st

    import compaction
    from compaction.setups import setups_from_json
    from compaction.ui.costs import show_costs

    @st.cache_resource
    def runs_of(path: str, text: str):
        conv = compaction.load(path)
        return conv, [(s.label, s.run(conv)) for s in setups_from_json(text)]

    conversation, runs = runs_of(log_path, setups_json)
    show_costs(conversation, runs, colors)


def costs_app(log_path: str, setups: Sequence[Setup], colors: Mapping[str, str], timeout: float) -> AppTest:
    """The cost view of ``setups`` replayed on the log at ``log_path``, in ``colors`` (by label), run once."""
    return AppTest.from_function(_costs_script, args=(log_path, setups_to_json(list(setups)), dict(colors)),
                                 default_timeout=timeout).run()
