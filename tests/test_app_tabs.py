"""The app's analysis tabs: cost, sweep and fleet are wired into the page, and a log opened from the fleet
replaces the sample until closed."""

from __future__ import annotations

from conftest import ROOT, real_log
from streamlit.testing.v1 import AppTest

APP = str(ROOT / "app.py")


def labels(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]


def test_tabs_render_without_errors():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert any("Cost" in label for label in labels(at)) and any("Fleet" in label for label in labels(at))
    text = " ".join(m.value for m in at.markdown)
    assert "cache" in text.lower()
    assert at.selectbox(key="sweep.setup").options


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
