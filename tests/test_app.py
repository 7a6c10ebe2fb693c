"""The Streamlit app driven through ``streamlit.testing.v1.AppTest``: widgets, errors, uploads, chart selection.

Most tests point the app at a temporary samples folder (``COMPACTION_LAB_SAMPLES``) holding a small OpenAI log
built from real standard-library source, so they do not depend on which bundled samples exist; one test checks the
real default sample.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT
from conftest import SAMPLES
from conftest import open_parameters
from conftest import real_log
from streamlit.testing.v1 import AppTest

import compaction
from compaction.conversation import Conversation
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user
from compaction.setups import Setup
from compaction.setups import decode_from_url
from compaction.setups import encode_for_url
from compaction.setups import setups_to_json
from compaction.ui import context_view
from compaction.ui import inspect_setup
from compaction.ui import navigation
from compaction.ui import settings
from compaction.ui import setups
from compaction.ui import share
from compaction.ui import source
from compaction.ui import state
from compaction.ui import step_panel
from compaction.ui import tour
from compaction.ui import url_state

APP = str(ROOT / "app.py")
TIMEOUT = 60
#: text that would render as markup if log content ever reached st.markdown
MARKUP = "**LOUD** <img src=x onerror=alert(1)> [click](http://example.invalid) :red[alarm]"


def coding_log() -> Conversation:
    """A 14-call coding session: reads of real standard-library modules, a failing test run, and a fix."""
    import difflib
    import json as json_module
    import shlex
    import textwrap as textwrap_module

    modules = [json_module.decoder, json_module.encoder, shlex, textwrap_module, difflib]
    messages = [
        system("You are a careful coding agent. Use the tools to read files and run tests before editing."),
        user(f"The JSON decoder rejects trailing commas with an unhelpful message; improve it. {MARKUP}"),
    ]
    for i in range(14):
        module = modules[i % len(modules)]
        path = f"Lib/{module.__name__.replace('.', '/')}.py"
        call = ToolCall(id=f"call_{i}", name="read_file", arguments={"path": path})
        messages.append(assistant(f"Reading {path} to see how it is structured.", [call]))
        source_text = inspect.getsource(module)
        messages.append(tool(call, source_text[(i // len(modules)) * 6000: (i // len(modules)) * 6000 + 9000]))
    run = ToolCall(id="call_run", name="run_tests", arguments={"target": "test_json"})
    messages.append(assistant("Running the JSON tests.", [run]))
    messages.append(tool(run, textwrap.dedent("""\
        FAILED Lib/test/test_json/test_fail.py::TestFail::test_extra_data - AssertionError
        1 failed, 212 passed in 3.41s""")))
    messages.append(assistant("The decoder now reports the position of the trailing comma; all tests pass."))
    return Conversation(messages=tuple(messages))


@pytest.fixture
def samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A samples folder with one OpenAI log (the default name) and a file the app must not list."""
    folder = tmp_path / "samples"
    folder.mkdir()
    (folder / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(coding_log(), "openai")))
    (folder / "README.txt").write_text("not a log")
    monkeypatch.setenv("COMPACTION_LAB_SAMPLES", str(folder))
    return folder


@pytest.fixture
def app(samples: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> list[str]:
    return [str(e.value) for e in elements]


def subheaders(at: AppTest) -> list[str]:
    return texts(at.subheader)


def tokens_chart_drawn(at: AppTest) -> bool:
    """Whether the tuning view's tokens chart is on the page."""
    return any(str(c.proto.id).endswith(step_panel.CHART_KEY)
               for kind in ("arrow_vega_lite_chart", "vega_lite_chart") for c in at.get(kind))


def open_tab(at: AppTest, name: str) -> AppTest:
    """Open a detail tab as a click would (only the open tab's content runs)."""
    at.session_state[navigation.TAB_KEY] = navigation.TABS[name]
    return at.run()


def context_header(at: AppTest) -> str:
    return next(h for h in subheaders(at) if h.startswith("What each setup sends"))


def assert_clean(at: AppTest) -> None:
    """No exception and no error element."""
    assert not at.exception, at.exception
    assert not at.error, texts(at.error)


def compact_hard(at: AppTest) -> AppTest:
    """A small window so both default setups compact on the test log (its 16 groups are all Agent Framework's
    default minimumPreservedGroups would protect, so setup B preserves 4)."""
    open_parameters(at, "B")
    at.number_input(key=state.widget_key("B", "agent_framework.tool_result_compaction", "minimum_preserved_groups")
                    ).set_value(4)
    return at.number_input(key=settings.WINDOW_KEY).set_value(20_000).run()


# ------------------------------------------------------------------------------------------------------ opening
def test_opens_on_the_bundled_default_sample():
    default = SAMPLES / source.DEFAULT_SAMPLE
    if not default.exists():
        pytest.skip("the bundled samples are not generated yet")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert_clean(at)
    assert at.selectbox(key=source.SAMPLE_KEY).value.name == source.DEFAULT_SAMPLE
    assert tokens_chart_drawn(at) and context_header(at)
    assert any("bundled sample" in c for c in texts(at.sidebar.caption))  # what was read, under the log picker
    open_tab(at, "summary")
    assert "Share and export" in subheaders(at) and at.dataframe  # the summary table and the share panel


def test_every_bundled_sample_replays_cleanly():
    if not (SAMPLES / source.DEFAULT_SAMPLE).exists():
        pytest.skip("the bundled samples are not generated yet")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    for sample in at.selectbox(key=source.SAMPLE_KEY).options:
        at.selectbox(key=source.SAMPLE_KEY).set_value(SAMPLES / sample).run()
        assert_clean(at)
        assert tokens_chart_drawn(at), sample


def test_lists_every_json_and_jsonl_sample_default_first(samples: Path):
    (samples / "a_first.jsonl").write_text((samples / source.DEFAULT_SAMPLE).read_text().replace("\n", " ") + "\n")
    (samples / "b_other.json").write_text((samples / source.DEFAULT_SAMPLE).read_text())
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    options = at.selectbox(key=source.SAMPLE_KEY).options
    assert options[0] == source.DEFAULT_SAMPLE
    assert sorted(options) == sorted([source.DEFAULT_SAMPLE, "a_first.jsonl", "b_other.json"])


def test_shows_what_was_read(app: AppTest):
    assert_clean(app)
    conv = coding_log()
    summary = " ".join(texts(app.markdown))
    assert f"**{len(conv.messages)}** messages" in summary
    assert f"**{len(conv.llm_call_indices)}** LLM calls" in summary
    assert f"**{conv.tool_call_count}** tool calls" in summary
    assert ":blue-badge[openai]" in summary


# ----------------------------------------------------------------------------------------------------- settings
def test_window_and_compact_at_change_the_replay(app: AppTest):
    before = [m.value for m in app.metric if m.label == "Tokens saved"]
    compact_hard(app)
    assert_clean(app)
    after = [m.value for m in app.metric if m.label == "Tokens saved"]
    assert before == ["0", "0"] and all(v != "0" for v in after)
    app.slider(key=settings.AT_KEY).set_value(0.85).run()
    assert_clean(app)
    assert any("Trigger at **17,000** tokens" in c for c in texts(app.caption))
    moved = [m.value for m in app.metric if m.label == "Tokens saved"]
    assert moved != after


def test_invalid_policy_shows_haystacks_reason_not_an_exception(app: AppTest):
    app.slider(key=settings.TO_KEY).set_value(0.8).run()
    assert not app.exception
    errors = " ".join(texts(app.error))
    assert len(app.error) == 2  # once in the sidebar, once above the results; not once more per setup
    assert "0 < compact_to < compact_at <= 1" in errors
    assert "attempted again every step" in errors
    assert not tokens_chart_drawn(app)
    app.slider(key=settings.TO_KEY).set_value(0.3).run()
    assert_clean(app)
    assert tokens_chart_drawn(app)


def test_a_counter_fallback_notice_is_shown(app: AppTest, monkeypatch: pytest.MonkeyPatch):
    from compaction.tokens import CounterChoice
    from compaction.tokens import make_counter
    from compaction.ui import cache

    notice = "Counter 'tiktoken:cl100k_base' is unavailable (no BPE file); using the approximate counter instead."
    monkeypatch.setattr(compaction, "resolve_counter", lambda spec: CounterChoice(make_counter("approx"), spec, notice))
    cache.counter.clear()
    try:
        app.selectbox(key=settings.COUNTER_KEY).set_value("tiktoken:cl100k_base").run()
        assert not app.exception
        assert any("is unavailable" in w and "approximate counter" in w for w in texts(app.warning))
        assert tokens_chart_drawn(app)
    finally:
        cache.counter.clear()


def test_a_log_without_llm_calls_says_so(samples: Path):
    only_user = Conversation(messages=(system("You are terse."), user("Hello?")))
    (samples / source.DEFAULT_SAMPLE).write_text(json.dumps(compaction.convert(only_user, "openai")))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert any("no LLM call to replay" in w for w in texts(at.warning))


def test_every_counter_replays_and_custom_chars_per_token_has_its_own_input(app: AppTest):
    compact_hard(app)
    for spec in settings.COUNTER_OPTIONS:
        app.selectbox(key=settings.COUNTER_KEY).set_value(spec).run()
        assert_clean(app)
        assert tokens_chart_drawn(app), spec
    app.selectbox(key=settings.COUNTER_KEY).set_value("approx:custom").run()
    assert app.number_input(key=settings.CHARS_KEY).value == pytest.approx(settings.DEFAULT_CHARS_PER_TOKEN)
    peak_at_default = [m.value for m in app.metric if m.label == "Peak context"]
    app.number_input(key=settings.CHARS_KEY).set_value(2.0).run()
    assert_clean(app)
    assert [m.value for m in app.metric if m.label == "Peak context"] != peak_at_default


def test_every_strategy_gets_widgets_for_every_parameter_with_help():
    strategies = compaction.strategies()
    at = AppTest.from_function(_setups_script, default_timeout=TIMEOUT).run()
    for name, info in strategies.items():
        at.selectbox(key=setups.strategy_key("A")).set_value(name).run()
        assert not at.exception, name
        widgets = [*at.number_input, *at.slider, *at.selectbox, *at.text_input, *at.text_area, *at.checkbox]
        by_key = {w.key: w for w in widgets}
        for param in info.params:
            widget = by_key.get(setups.widget_key("A", name, param.name))
            assert widget is not None, (name, param.name)
            assert widget.help, (name, param.name)
        assert any(info.summary[:40] in c for c in texts(at.caption)), name


def _setups_script() -> None:
    from compaction.ui.setups import choose_setups

    choose_setups()


def test_switching_strategy_in_the_app_replays_with_the_new_one(app: AppTest):
    compact_hard(app)
    before = [m.value for m in app.metric if m.label == "Tokens saved"]
    app.selectbox(key=setups.strategy_key("A")).set_value("haystack.sliding_window").run()
    assert_clean(app)
    assert any("Haystack" in m and "Sliding" in m for m in texts(app.markdown))
    assert [m.value for m in app.metric if m.label == "Tokens saved"] != before
    app.selectbox(key=setups.strategy_key("A")).set_value("haystack.tool_result_pruning").run()
    open_parameters(app, "A")
    app.slider(key=setups.widget_key("A", "haystack.tool_result_pruning", "min_keep_steps")).set_value(3).run()
    assert_clean(app)


def test_parameter_widgets_follow_the_metadata():
    at = AppTest.from_function(_param_widgets_script, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert at.slider(key="small_int").min == 1 and at.slider(key="small_int").max == 50
    assert at.number_input(key="big_int").max == 100_000
    assert at.checkbox(key="flag").value is True
    assert at.selectbox(key="mode").options == ["one", "two"]
    assert at.text_input(key="keys").value == "a, b"
    assert at.text_input(key="when").placeholder.startswith("empty")
    assert at.text_area(key="prompt").value.startswith("Summarize")
    for key in ("small_int", "big_int", "flag", "mode", "keys", "when", "prompt"):
        assert at.get_by_key(key).help, key


def _param_widgets_script() -> None:
    from compaction.strategies import Param
    from compaction.ui.setups import param_widget

    param_widget(Param("small_int", "int", 2, "help 1", minimum=1, maximum=50), "small_int")
    param_widget(Param("big_int", "int", 200, "help 2", minimum=0, maximum=100_000), "big_int")
    param_widget(Param("flag", "bool", True, "help 3"), "flag")
    param_widget(Param("mode", "choice", "two", "help 4", choices=("one", "two")), "mode")
    param_widget(Param("keys", "str_list", ("a", "b"), "help 5"), "keys")
    param_widget(Param("when", "trigger", "", "help 6"), "when")
    param_widget(Param("prompt", "str", "Summarize the conversation so far, keeping every decision.", "help 7"),
                 "prompt")


def test_an_invalid_parameter_is_a_readable_error_for_that_setup_only(app: AppTest):
    key = setups.widget_key("B", "agent_framework.tool_result_compaction", "trigger")
    open_parameters(app, "B")
    app.text_input(key=key).set_value("TokensExceed(").run()
    assert not app.exception
    errors = texts(app.error)
    assert len(errors) == 1 and "Setup B" in errors[0] and "TokensExceed" in errors[0]
    assert tokens_chart_drawn(app)  # setup A still replays
    assert [m for m in app.metric if m.label == "Tokens saved"]


# ------------------------------------------------------------------------------------------------------- uploads
@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("broken.json", b'{"messages": [{"role": "user", "content": "hi"}', "not valid JSON"),
        ("notes.json", b'{"hello": "world"}', "unknown log format"),
        ("empty.jsonl", b"   \n", "empty"),
    ],
)
def test_a_bad_upload_shows_a_readable_error(app: AppTest, name: str, data: bytes, expected: str):
    app.file_uploader(key=source.UPLOAD_KEY).set_value((name, data, "application/json")).run()
    assert not app.exception
    errors = " ".join(texts(app.error))
    assert "Could not read this log" in errors and expected in errors
    assert name.split(".")[0] in errors
    assert "Traceback" not in errors


def test_a_good_upload_replaces_the_sample(app: AppTest):
    conv = Conversation(messages=tuple(coding_log().messages[:12]))
    data = json.dumps(compaction.convert(conv, "openai")).encode()
    app.file_uploader(key=source.UPLOAD_KEY).set_value(("my_run.json", data, "application/json")).run()
    assert_clean(app)
    assert any("uploaded file" in c and "my\\_run" in c for c in texts(app.caption))
    assert "**12** messages" in " ".join(texts(app.markdown))


def test_read_log_raises_load_error_for_bytes_that_are_no_log():
    from compaction.formats import LoadError

    with pytest.raises(LoadError, match="bin.json"):
        source.read_log(source.LogChoice("bin.json", b"\x00\x01\x02 binary", "upload"))


# --------------------------------------------------------------------------------------------- chart selection
def test_a_chart_click_selects_the_step_shown_side_by_side(app: AppTest):
    compact_hard(app)
    default = context_header(app)
    app.session_state[step_panel.CHART_KEY] = {"selection": {"pick": [{"step": 4}]}}
    app.run()
    assert_clean(app)
    assert context_header(app) == "What each setup sends at step 4" != default
    assert app.slider(key=step_panel.STEP_KEY).value == 4
    # the slider still works after a click, and the stale click does not pull the step back
    app.slider(key=step_panel.STEP_KEY).set_value(11).run()
    assert context_header(app) == "What each setup sends at step 11"
    app.run()
    assert context_header(app) == "What each setup sends at step 11"


def test_the_side_by_side_panel_changes_with_the_step(app: AppTest):
    compact_hard(app)
    app.session_state[step_panel.CHART_KEY] = {"selection": {"pick": [{"step": 1}]}}
    app.run()
    early = texts(app.info)
    assert any("Nothing is compacted at this step yet" in i for i in early)
    last = len(coding_log().llm_call_indices) - 1
    app.session_state[step_panel.CHART_KEY] = {"selection": {"pick": [{"step": last}]}}
    app.run()
    assert_clean(app)
    badges = " ".join(texts(app.markdown))
    assert ":orange-badge[pruned]" in badges and ":violet-badge[collapsed]" in badges
    assert ":green-badge[inserted]" in badges
    assert not any("Nothing is compacted" in i for i in texts(app.info))
    originals = [e for e in app.expander if e.label.startswith(("Original", "Full message"))]
    assert originals
    # filled only when opened: a closed one sends no text to the browser
    assert not any(e.code for e in app.expander if e.label.startswith(("Original", "Full ")))


def test_jump_buttons_move_between_triggers(app: AppTest):
    compact_hard(app)
    start = app.slider(key=step_panel.STEP_KEY).value
    next_button = next(b for b in app.button if b.label == "Next ▶")
    next_button.click().run()
    assert app.slider(key=step_panel.STEP_KEY).value > start
    previous = next(b for b in app.button if b.label == "◀ Previous")
    previous.click().run()
    assert app.slider(key=step_panel.STEP_KEY).value == start


def test_all_messages_filter_shows_the_whole_context(app: AppTest):
    compact_hard(app)
    control = app.button_group(key=context_view.FILTER_KEY)
    control.set_value(context_view.ALL).run()
    assert_clean(app)
    counts = {o.split(" (")[0]: int(o.split("(")[1].rstrip(")").replace(",", "")) for o in control.options}
    assert counts[context_view.ALL] >= counts[context_view.CHANGED] > 0
    rows = [m.value for m in app.markdown if m.value.startswith("**#")]
    assert 0 < len(rows) <= context_view.PAGE_SIZE  # one page (rows of inserted messages read "new")


def test_the_contexts_filter_by_tool_and_fate(app: AppTest):
    compact_hard(app)
    last = len(coding_log().llm_call_indices) - 1
    app.session_state[step_panel.CHART_KEY] = {"selection": {"pick": [{"step": last}]}}
    app.run()
    app.button_group(key=context_view.FILTER_KEY).set_value(context_view.ALL).run()
    tools = app.multiselect(key=context_view.TOOL_FILTER_KEY)
    assert set(tools.options) == {"read_file", "run_tests"}
    tools.set_value(["run_tests"]).run()
    assert_clean(app)
    shown = [m.value for m in app.markdown if m.value.startswith("**#")]
    assert shown == ["**#30**", "**#31**"]  # the run_tests call and its result
    tools.set_value([]).run()
    app.multiselect(key=context_view.FATE_FILTER_KEY).set_value(["collapsed"]).run()
    assert_clean(app)
    rows = [m.value for m in app.markdown if m.value.startswith("**#")]
    assert rows and all("collapsed" in " ".join(texts(app.markdown)) for _ in rows)
    app.multiselect(key=context_view.FATE_FILTER_KEY).set_value(["inserted"]).run()
    assert context_view.filter_rows([], ["x"], []) == []


def test_picked_step_reads_every_selection_shape():
    assert step_panel.picked_step({"selection": {"pick": [{"step": 3}]}}) == 3
    assert step_panel.picked_step({"selection": {"pick": {"step": [5]}}}) == 5
    assert step_panel.picked_step({"selection": {"pick": {}}}) is None
    assert step_panel.picked_step({"selection": {"pick": [{"vgsid_": 2}]}}) is None
    assert step_panel.picked_step(None) is None


# ----------------------------------------------------------------------------------------------------- safety
def test_log_text_is_never_rendered_as_markdown(app: AppTest):
    compact_hard(app)
    app.button_group(key=context_view.FILTER_KEY).set_value(context_view.ALL).run()
    rendered_as_markdown = " ".join(texts(app.markdown) + texts(app.caption) + texts(app.error))
    assert "onerror" not in rendered_as_markdown and "LOUD" not in rendered_as_markdown
    shown_as_text = " ".join(texts(app.text) + texts(app.code))
    assert "<img src=x onerror=alert(1)>" in shown_as_text


def test_unexpected_errors_become_one_line_messages():
    at = AppTest.from_function(_failing_section_script, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert texts(at.error) == ["**Demo failed** — RuntimeError\\: boom \\[1\\]"]
    assert texts(at.text) == ["after"]


def _failing_section_script() -> None:
    import streamlit as st

    from compaction.ui.guard import section

    with section("Demo"):
        raise RuntimeError("boom [1]")
    st.text("after")


def test_a_log_with_several_conversations_offers_a_choice(app: AppTest):
    path = real_log("tau2-bench/sierra-research-tau2-bench__pr17__telecom_llm_agent_gpt-4o_user_simulator_gpt-4o.json")
    app.file_uploader(key=source.UPLOAD_KEY).set_value((path.name, path.read_bytes(), "application/json")).run()
    assert_clean(app)
    choice = app.selectbox(key=source.CONVERSATION_KEY)
    assert len(choice.options) == 20
    choice.set_value(choice.options[1]).run()
    assert_clean(app)
    assert any("of 20" in c for c in texts(app.caption))
    assert tokens_chart_drawn(app)


# ------------------------------------------------------------------------------------------------------ setups
def labels_shown(at: AppTest) -> list[str]:
    return [at.session_state[state.label_key(slot.id)] for slot in at.session_state[state.SLOTS_KEY]]


def saved(at: AppTest) -> list[str]:
    return [m.value for m in at.metric if m.label == "Tokens saved"]


def test_defaults_are_two_setups_at_a_64k_window(app: AppTest):
    assert labels_shown(app) == ["A", "B"]
    assert app.selectbox(key=setups.strategy_key("A")).value == "haystack.tool_result_pruning"
    assert app.selectbox(key=setups.strategy_key("B")).value == "agent_framework.tool_result_compaction"
    assert app.number_input(key=settings.WINDOW_KEY).value == 64_000


def test_add_duplicate_rename_and_remove_setups(app: AppTest):
    compact_hard(app)
    app.button(key=setups.ADD_KEY).click().run()
    assert_clean(app)
    assert labels_shown(app) == ["A", "B", "C"] and len(saved(app)) == 3
    app.text_input(key=state.label_key("C")).set_value("Mine *bold*").run()
    assert_clean(app)
    assert any("Setup Mine \\*bold\\*" in m for m in texts(app.markdown))  # escaped, shown everywhere
    app.selectbox(key=setups.strategy_key("A")).set_value("haystack.sliding_window").run()
    app.button(key="setup.A.duplicate").click().run()
    assert_clean(app)
    assert labels_shown(app) == ["A", "A copy", "B", "Mine *bold*"]
    copy = app.session_state[state.SLOTS_KEY][1]
    assert app.selectbox(key=setups.strategy_key(copy.id)).value == "haystack.sliding_window"
    colors = [slot.color for slot in app.session_state[state.SLOTS_KEY]]
    assert len(set(colors)) == len(colors)  # every setup keeps its own colour
    app.button(key="setup.B.remove").click().run()
    assert_clean(app)
    assert labels_shown(app) == ["A", "A copy", "Mine *bold*"] and len(saved(app)) == 3
    for slot_id in ["A", copy.id]:
        app.button(key=f"setup.{slot_id}.remove").click().run()
    assert labels_shown(app) == ["Mine *bold*"]
    assert app.button(key="setup.C.remove").disabled  # the last setup stays


def test_a_duplicate_name_is_numbered(app: AppTest):
    app.text_input(key=state.label_key("B")).set_value("A").run()
    assert_clean(app)
    assert any("Another setup is called that" in c for c in texts(app.caption))
    assert any("Setup A \\(2\\)" in m for m in texts(app.markdown))


def test_a_setup_can_have_its_own_policy_and_counter(app: AppTest):
    compact_hard(app)
    before = saved(app)
    app.checkbox(key=state.own_policy_key("A")).check().run()
    app.number_input(key=state.policy_keys("A").window).set_value(12_000).run()
    assert_clean(app)
    after = saved(app)
    assert after[0] != before[0] and after[1] == before[1]
    app.checkbox(key=state.own_counter_key("A")).check().run()
    app.selectbox(key=state.counter_keys("A").kind).set_value("maf-dotnet").run()
    assert_clean(app)
    assert saved(app)[0] != after[0]
    # an invalid own policy is that setup's error only
    app.slider(key=state.policy_keys("A").compact_to).set_value(0.9).run()
    assert not app.exception
    errors = texts(app.error)
    assert len(errors) == 2  # under the setup's own policy in the sidebar, and once above the results
    assert "Setup A" in errors[0] and "threshold policy is invalid" in errors[0]
    assert tokens_chart_drawn(app)


def _add_setup_script() -> None:
    import streamlit as st

    from compaction.setups import Setup
    from compaction.ui import state

    if st.button("load", key="load"):
        state.add_setup(Setup("haystack.sliding_window", {"min_keep_steps": 4}, context_window=30_000,
                              compact_at=0.8, compact_to=0.3, counter="approx", label="From elsewhere"))
        st.rerun()
    from compaction.ui.setups import choose_setups

    specs = choose_setups()
    st.text(" | ".join(f"{s.label}:{s.strategy}:{dict(s.params)}:{s.policy.context_window}:{s.own_policy}"
                       for s in specs))
    st.text(f"focus={state.focus()}")


def test_add_setup_loads_a_setup_into_the_explorer_and_selects_it():
    at = AppTest.from_function(_add_setup_script, default_timeout=TIMEOUT).run()
    at.button(key="load").click().run()
    assert not at.exception, at.exception
    shown = texts(at.text)
    assert "From elsewhere:haystack.sliding_window:" in shown[0] and "'min_keep_steps': 4" in shown[0]
    assert ":30000:True" in shown[0]
    assert shown[1] == "focus=C"


def _signature_script() -> None:
    import streamlit as st

    from compaction.ui import state

    st.session_state.setdefault("before", [state.page_signature(), state.page_signature(with_policy=False)])
    if st.button("switch", key="switch"):
        st.session_state[state.strategy_key("A")] = "haystack.sliding_window"
        st.session_state[state.widget_key("A", "haystack.sliding_window", "min_keep_steps")] = 3
    if st.button("rename", key="rename"):
        st.session_state[state.label_key("A")] = "Renamed"
    before_full, before_outer = st.session_state["before"]
    st.text(f"full={state.page_signature() == before_full} outer={state.page_signature(with_policy=False) == before_outer}")


def test_the_tuning_views_signature_leaves_out_the_strategies_and_parameters_it_draws():
    """A strategy switch or a parameter change reruns only the tuning view (it draws them); a new name does not."""
    at = AppTest.from_function(_signature_script, default_timeout=TIMEOUT).run()
    assert texts(at.text) == ["full=True outer=True"]
    at.button(key="switch").click().run()
    assert texts(at.text) == ["full=False outer=True"]
    at.button(key="rename").click().run()
    assert texts(at.text) == ["full=False outer=False"]


def test_strategy_and_parameter_keys_are_told_apart_from_the_sidebars_keys():
    assert all("." in name for name in compaction.strategies())  # a parameter's key has four parts
    assert state.is_strategy_key(state.strategy_key("A"))
    assert state.is_strategy_key(state.widget_key("S27", "agent_framework.tool_result_compaction", "trigger"))
    for key in (state.label_key("A"), state.own_policy_key("A"), state.own_counter_key("B"),
                state.unconfirmed_key("A"), *state.policy_keys("A"), *state.counter_keys("C"),
                state.params_open_key("A")):
        assert not state.is_strategy_key(key), key


def test_a_parameter_keeps_its_value_while_its_popover_is_closed(app: AppTest):
    """The parameters' widgets are drawn only while their popover is open; a value set there stays, runs the setup and
    travels in the link through the runs that do not draw it (a threshold change among them)."""
    key = setups.widget_key("A", "haystack.tool_result_pruning", "min_keep_steps")
    assert not [w for w in app.slider if w.key == key]  # closed: no widget, the default runs
    open_parameters(app, "A").slider(key=key).set_value(3).run()
    app.session_state[state.params_open_key("A")] = False
    app.run()
    assert not [w for w in app.slider if w.key == key]
    for window in (30_000, 20_000):
        app.number_input(key=settings.WINDOW_KEY).set_value(window).run()
        assert_clean(app)
    assert app.session_state[key] == 3
    assert decode_from_url(param(app, "setups"))[0].params["min_keep_steps"] == 3
    assert open_parameters(app, "A").slider(key=key).value == 3


# ---------------------------------------------------------------------------------------------- tour and URL
def test_tour_presets_load_sample_setups_and_step():
    if not (SAMPLES / "support_agent.openai.json").exists():
        pytest.skip("the bundled samples are not generated yet")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    for preset in tour.PRESETS:
        at.button(key=f"tour.{preset.key}").click().run()
        assert_clean(at)
        assert at.selectbox(key=source.SAMPLE_KEY).value.name == preset.sample
        assert labels_shown(at) == [s.label for s in preset.setups]
        assert any(preset.title in m for m in texts(at.markdown))
        expected = tour.lesson_step(preset, SAMPLES / preset.sample)
        if expected is not None:
            assert at.slider(key=step_panel.STEP_KEY).value == expected
    window = next(p for p in tour.PRESETS if p.key == "sliding_window_loses_task")
    at.button(key=f"tour.{window.key}").click().run()
    assert any(":red-badge[first user request lost]" in m for m in texts(at.markdown))


def test_the_url_carries_the_view_and_restores_it(app: AppTest):
    compact_hard(app)
    app.selectbox(key=setups.strategy_key("B")).set_value("haystack.sliding_window").run()
    app.slider(key=step_panel.STEP_KEY).set_value(9).run()
    params = dict(app.query_params)
    assert params["log"] == [source.DEFAULT_SAMPLE] or params["log"] == source.DEFAULT_SAMPLE
    token = params["setups"][0] if isinstance(params["setups"], list) else params["setups"]
    decoded = decode_from_url(token)
    assert [(s.label, s.strategy, s.context_window) for s in decoded] == [
        ("A", "haystack.tool_result_pruning", 20_000), ("B", "haystack.sliding_window", 20_000)]
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params.update({"log": source.DEFAULT_SAMPLE, "setups": token, "step": "9"})
    fresh.run()
    assert_clean(fresh)
    assert fresh.selectbox(key=setups.strategy_key("B")).value == "haystack.sliding_window"
    assert fresh.number_input(key=settings.WINDOW_KEY).value == 20_000
    assert context_header(fresh) == "What each setup sends at step 9"


def param(at: AppTest, name: str) -> str | None:
    value = dict(at.query_params).get(name)
    return value[0] if isinstance(value, list) else value


def test_a_link_made_on_an_upload_names_the_file_instead_of_showing_the_sample(app: AppTest):
    data = json.dumps(compaction.convert(Conversation(messages=tuple(coding_log().messages[:20])), "openai")).encode()
    app.file_uploader(key=source.UPLOAD_KEY).set_value(("my run.json", data, "application/json")).run()
    assert_clean(app)
    token = param(app, url_state.UPLOAD_PARAM)
    digest = hashlib.sha256(data).hexdigest()
    assert token == f"{len(data)}:{digest[:16]}:my run.json" and param(app, "log") is None
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    fresh.query_params.update({url_state.UPLOAD_PARAM: token, "setups": param(app, "setups")})
    fresh.run()
    assert_clean(fresh)
    asked = " ".join(texts(fresh.info)).replace("\\", "")
    assert "upload my run.json" in asked and f"{len(data):,} bytes" in asked and digest[:16] in asked
    assert not tokens_chart_drawn(fresh)  # not the sample in its place
    assert param(fresh, url_state.UPLOAD_PARAM) == token  # a reload still asks for the file
    other = data.replace(b"careful", b"careless")
    fresh.file_uploader(key=source.UPLOAD_KEY).set_value(("my run.json", other, "application/json")).run()
    assert not fresh.exception and tokens_chart_drawn(fresh)
    assert any("not the file the link was made on" in w for w in texts(fresh.warning))
    again = AppTest.from_file(APP, default_timeout=TIMEOUT)
    again.query_params.update({url_state.UPLOAD_PARAM: token})
    again.run()
    again.button(key=url_state.SHOW_SAMPLE_KEY).click().run()
    assert_clean(again)
    assert tokens_chart_drawn(again) and param(again, url_state.UPLOAD_PARAM) is None
    assert url_state.read_upload_token("12:zz:x") is None and url_state.read_upload_token("nonsense") is None


def test_a_lesson_and_an_import_can_be_undone(app: AppTest):
    app.number_input(key=settings.WINDOW_KEY).set_value(30_000).run()
    app.selectbox(key=setups.strategy_key("B")).set_value("haystack.sliding_window").run()
    good = setups_to_json([Setup("haystack.sliding_window", {}, context_window=20_000, label="Window")])
    app.file_uploader(key=share.IMPORT_FILE_KEY).set_value(("good.json", good.encode(), "application/json")).run()
    app.button(key=share.IMPORT_BUTTON_KEY).click().run()
    assert labels_shown(app) == ["Window"]
    assert any("replaced by the setups imported from" in m for m in texts(app.markdown))
    app.button(key=state.UNDO_BUTTON_KEY).click().run()
    assert_clean(app)
    assert labels_shown(app) == ["A", "B"] and app.number_input(key=settings.WINDOW_KEY).value == 30_000
    assert app.selectbox(key=setups.strategy_key("B")).value == "haystack.sliding_window"
    assert state.UNDO_KEY not in app.session_state


def test_a_damaged_link_is_a_readable_warning(samples: Path):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"setups": "not-a-token", "step": "x", "log": "missing.json"})
    at.run()
    assert not at.exception
    warning = " ".join(texts(at.warning))
    assert "could not be applied" in warning and "setups could not be read" in warning
    assert labels_shown(at) == ["A", "B"]


# ------------------------------------------------------------------------------------------ import and export
def test_importing_setups_replaces_them_and_a_bad_file_is_a_readable_error(app: AppTest):
    open_tab(app, "summary")
    uploader = app.file_uploader(key=share.IMPORT_FILE_KEY)
    uploader.set_value(("mine.json", b'{"setups": [{"strategy": "no.such"}]}', "application/json")).run()
    app.button(key=share.IMPORT_BUTTON_KEY).click().run()
    assert not app.exception
    errors = " ".join(texts(app.error))
    assert "Could not import the setups" in errors and "mine" in errors and "unknown strategy" in errors
    assert labels_shown(app) == ["A", "B"]
    good = setups_to_json([Setup("haystack.sliding_window", {}, context_window=20_000, label="Window"),
                           Setup("haystack.tool_result_pruning", {"min_keep_steps": 2}, context_window=20_000,
                                 label="Prune")])
    app.file_uploader(key=share.IMPORT_FILE_KEY).set_value(("good.json", good.encode(), "application/json")).run()
    app.button(key=share.IMPORT_BUTTON_KEY).click().run()
    assert_clean(app)
    assert labels_shown(app) == ["Window", "Prune"]
    assert app.number_input(key=settings.WINDOW_KEY).value == 20_000
    assert any("Loaded 2 setups" in s for s in texts(app.success))


def test_the_production_panel_shows_the_code_of_the_setup_in_focus(app: AppTest):
    open_tab(app, "summary")
    code = " ".join(texts(app.code))
    assert "CompactionHook" in code and "ToolResultPruningCompactor" in code
    open_tab(app, "inside")
    app.selectbox(key=inspect_setup.FOCUS_WIDGET_KEY).set_value("B").run()
    assert_clean(app)
    open_tab(app, "summary")
    assert "ToolResultCompactionStrategy" in " ".join(texts(app.code))


def test_the_diff_view_shows_a_text_diff_between_two_setups(app: AppTest):
    compact_hard(app)
    last = len(coding_log().llm_call_indices) - 1
    app.session_state[step_panel.CHART_KEY] = {"selection": {"pick": [{"step": last}]}}
    app.run()
    assert_clean(app)
    assert not [c for c in app.code if c.language == "diff"]  # the diff waits for its toggle
    app.toggle(key=context_view.DIFF_TOGGLE_KEY).set_value(True).run()
    assert_clean(app)
    assert any("rows differ" in c for c in texts(app.caption))
    diffs = [c for c in app.code if c.language == "diff"]
    assert diffs and "--- setup A" in diffs[0].value and "+++ setup B" in diffs[0].value


def test_several_uploaded_files_offer_a_choice(app: AppTest):
    first = Conversation(messages=tuple(coding_log().messages[:12]))
    second = Conversation(messages=tuple(coding_log().messages[:20]))
    files = [(name, json.dumps(compaction.convert(conv, "openai")).encode(), "application/json")
             for name, conv in (("one.json", first), ("two.json", second))]
    app.file_uploader(key=source.UPLOAD_KEY).set_value(files).run()
    assert_clean(app)
    pick = app.selectbox(key=source.UPLOADED_PICK_KEY)
    assert pick.options == ["1. one.json", "2. two.json"]
    assert "**12** messages" in " ".join(texts(app.markdown))
    pick.set_value("2. two.json").run()
    assert_clean(app)
    assert "**20** messages" in " ".join(texts(app.markdown))


def test_metrics_table_has_information_loss_columns(app: AppTest):
    compact_hard(app)
    open_tab(app, "summary")
    table = app.dataframe[0].value
    assert list(table["Setup"]) == ["—", "A", "B"]
    assert {"Information loss score", "First user request survives", "Counter", "Context window"} <= set(table.columns)
    assert any("information loss" in m for m in texts(app.markdown))


def test_url_token_round_trip_keeps_labels():
    setups_list = [Setup("haystack.sliding_window", {"min_keep_steps": 3}, context_window=50_000, label="X")]
    assert decode_from_url(encode_for_url(setups_list))[0].label == "X"
