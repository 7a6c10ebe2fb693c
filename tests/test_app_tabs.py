"""The app's analysis tabs: cost, sweep and fleet are wired into the page, and a log opened from the fleet
replaces the sample until closed."""

from __future__ import annotations

from conftest import ROOT
from conftest import real_log
from streamlit.testing.v1 import AppTest

from compaction.ui import navigation

APP = str(ROOT / "app.py")


def labels(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]


def open_tab(at: AppTest, name: str) -> AppTest:
    """Select a tab as a click would (only the open tab's content runs)."""
    at.session_state[navigation.TAB_KEY] = navigation.TABS[name]
    return at.run()


def test_tabs_render_without_errors():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert any("Cost" in label for label in labels(at)) and any("Fleet" in label for label in labels(at))
    open_tab(at, "cost")
    assert not at.exception and not at.error
    assert "cache" in " ".join(m.value for m in at.markdown).lower()
    open_tab(at, "sweep")
    assert not at.exception and not at.error
    assert at.selectbox(key="sweep.setup").options
    open_tab(at, "fleet")
    assert not at.exception and not at.error


def test_only_the_open_tab_runs():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not [k for k in at.session_state if str(k).startswith("sweep.")]  # the sweep tab drew no widget
    open_tab(at, "sweep")
    assert at.selectbox(key="sweep.setup").options
    charts = [str(c.proto.id) for kind in ("arrow_vega_lite_chart", "vega_lite_chart") for c in at.get(kind)]
    assert [c for c in charts if c.endswith("tokens_chart")]  # the tuning view's chart stays on top of every tab
    assert not [s for s in at.subheader if s.value.startswith("What each setup sends")]  # the contexts' tab is not
    assert not [k for k in at.session_state if str(k) == "context.compare"]  # drawn meanwhile


def test_a_log_opened_from_the_fleet_replaces_the_sample_until_closed():
    path = real_log("openai-plain/tau-bench__task2-trial1.json")
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.session_state["fleet_open_log"] = {"name": path.name, "path": str(path), "data": path.read_bytes(),
                                          "conversation": "task2-trial1"}
    at.run()
    assert not at.exception
    notices = " ".join(i.value for i in at.info).replace("\\", "")
    facts = " ".join(c.value for c in at.caption)
    assert path.name in notices and "from the fleet" in notices
    assert "opened from the fleet" in facts
    assert "62 messages" in " ".join(m.value for m in at.markdown).replace("**", "")
    at.button(key="log.close_fleet").click().run()
    assert "fleet_open_log" not in at.session_state
    facts = " ".join(c.value for c in at.caption)
    assert "bundled sample" in facts
