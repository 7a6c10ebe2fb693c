"""Share and export: the link, setups as JSON (download and import), production code for the setup in focus, and
downloads of the charts (PNG/SVG) and replays (CSV/JSON).

Chart images are rendered only when their button is pressed (``st.download_button`` with a callable).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Sequence

import streamlit as st

from compaction.export import export_setup
from compaction.setups import read_setups_json
from compaction.setups import setups_to_json

from . import cache
from . import state
from .guard import log
from .guard import one_line
from .results import ReplayedSetup
from .results import SetupResult
from .results import replayed_setups
from .text import escape_markdown
from .text import listed

IMPORT_FILE_KEY = "share.import_file"
IMPORT_BUTTON_KEY = "share.import"
IMPORT_ERROR_KEY = "share.import_error"
IMPORT_DONE_KEY = "share.import_done"
IMPORT_NOTICES_KEY = "share.import_notices"
EXPORT_WIDTH = 1000


def _import_setups() -> None:
    """Callback: replace the explorer's setups with the uploaded JSON file's, leniently: a setup that cannot be read
    costs only itself, values outside the widgets' ranges are moved into them; each problem and notice is kept for
    the panel to show (the file's setups make no live summarizer call until confirmed)."""
    upload = st.session_state.get(IMPORT_FILE_KEY)
    for key in (IMPORT_DONE_KEY, IMPORT_ERROR_KEY, IMPORT_NOTICES_KEY):
        st.session_state.pop(key, None)
    if upload is None:
        st.session_state[IMPORT_ERROR_KEY] = ["choose a JSON file of setups first"]
        return
    try:
        read = read_setups_json(upload.getvalue())
        if read.setups:
            state.remember(f"the setups imported from *{escape_markdown(upload.name)}*")
        notices = [*read.clamped, *(state.replace_setups(read.setups, untrusted=True) if read.setups else ())]
    except Exception as exc:  # noqa: BLE001 - an imported file must never break the page; a bug here is logged
        if not isinstance(exc, ValueError):
            log.exception("importing setups failed")
        st.session_state.pop(state.UNDO_KEY, None)  # nothing was replaced
        st.session_state[IMPORT_ERROR_KEY] = [f"{upload.name}: {one_line(exc)}"]
        return
    if read.problems:
        st.session_state[IMPORT_ERROR_KEY] = [f"{upload.name}: {problem}" for problem in read.problems]
    if notices:
        st.session_state[IMPORT_NOTICES_KEY] = notices
    if read.setups:
        st.session_state[IMPORT_DONE_KEY] = len(read.setups)


def image_of(chart: cache.ChartSpec, fmt: str) -> Callable[[], bytes | str]:
    """A deferred PNG or SVG rendering of a chart (its plain Vega-Lite spec is built, and rendered, only when
    downloaded)."""
    def render() -> bytes | str:
        import vl_convert

        sized = {**chart.spec, "width": EXPORT_WIDTH}
        image: bytes | str = (vl_convert.vegalite_to_png(sized, scale=2) if fmt == "png"
                              else vl_convert.vegalite_to_svg(sized))
        return image
    return render


def show_share(results: Sequence[SetupResult], tokens_chart: cache.ChartSpec | None, from_upload: bool) -> None:
    """The share and export panel (``results``: the :class:`~.results.SetupResult` list)."""
    st.subheader("Share and export", anchor="share")
    link, production, downloads = st.tabs(["Link and setups", "Use this in production", "Downloads"])
    with link:
        _link_and_setups(results, from_upload)
    focus = _focus_result(results)
    with production:
        _production(focus)
    with downloads:
        _downloads(focus, tokens_chart)


def _focus_result(results: Sequence[SetupResult]) -> ReplayedSetup | None:
    replayed = replayed_setups(results)
    chosen = state.focus()
    return next((r for r in replayed if r.setup.id == chosen), replayed[0] if replayed else None)


def _link_and_setups(results: Sequence[SetupResult], from_upload: bool) -> None:
    st.markdown("**Link to this view.** The address bar holds the log, every setup and the selected step: copy it "
                "to share this view, or reload the page to come back to it.")
    if from_upload:
        st.caption("An uploaded log cannot travel in a link: the link names the file (its name, size and digest), "
                   "and whoever opens it is asked to upload the same file.")
    st.markdown("**Setups as a file.** Every setup with its strategy, parameters, policy and counter, to import "
                "again (*Import setups* in the sidebar) or to run with the CLI.")
    st.download_button("Download the setups (JSON)", setups_to_json([r.setup.setup() for r in results]),
                       file_name="setups.json", mime="application/json", icon=":material/download:",
                       key="share.setups_json", help="The setups as this view runs them, thresholds included.")


def show_setups_file() -> None:
    """Sidebar: a JSON file of setups to import (replacing the current ones; one click undoes it). The download is in
    *Summary & share*, drawn with the thresholds it holds."""
    state_ = st.session_state
    reported = any(state_.get(k) for k in (IMPORT_DONE_KEY, IMPORT_ERROR_KEY, IMPORT_NOTICES_KEY))
    with st.expander("Import setups", icon=":material/data_object:", expanded=reported):
        st.file_uploader("Import setups (JSON)", type=["json"], key=IMPORT_FILE_KEY,
                         help="A file downloaded from *Summary & share* (or {\"setups\": [...]}); it replaces the "
                         "current setups.")
        st.button("Load the setups from the file", key=IMPORT_BUTTON_KEY, on_click=_import_setups,
                  icon=":material/upload:", width="stretch")
        done = st.session_state.get(IMPORT_DONE_KEY)
        errors = st.session_state.get(IMPORT_ERROR_KEY)
        if errors:
            title = "Some setups could not be imported" if done else "Could not import the setups"
            st.error(f"**{title}** — " + listed(errors), icon=":material/error:")
        notices = st.session_state.get(IMPORT_NOTICES_KEY)
        if notices:
            st.info("**Some imported values were moved into range** — " + listed(notices), icon=":material/tune:")
        if done:
            st.success(f"Loaded {done} setup{'s' if done != 1 else ''}.", icon=":material/check:")


def _production(focus: ReplayedSetup | None) -> None:
    if focus is None:
        st.info("No setup is replayed yet.")
        return
    setup = focus.setup.setup()
    st.markdown(f"The code for **setup {escape_markdown(focus.setup.label)}** "
                f"({escape_markdown(focus.replay.strategy.title)}) in its own framework, with these exact settings. "
                "Lines marked ← fill in take your own objects. Choose another setup under *Inside one setup*.")
    try:
        snippets = export_setup(setup.strategy, dict(setup.params), context_window=setup.context_window,
                                compact_at=setup.compact_at, compact_to=setup.compact_to, counter=setup.counter)
    except ValueError as exc:
        st.error(f"**No production code for this setup** — {escape_markdown(one_line(exc))}", icon=":material/error:")
        return
    for snippet in snippets:
        st.markdown(f"**{escape_markdown(snippet.title)}**")
        st.code(snippet.code, language=snippet.language if snippet.language != "text" else None)
        if snippet.note:
            st.caption(escape_markdown(snippet.note))


def _downloads(focus: ReplayedSetup | None, tokens_chart: cache.ChartSpec | None) -> None:
    if tokens_chart is not None:
        st.markdown("**Tokens chart**")
        left, right = st.columns(2)
        left.download_button("PNG", image_of(tokens_chart, "png"), file_name="tokens.png", mime="image/png",
                             key="share.tokens_png", icon=":material/image:")
        right.download_button("SVG", image_of(tokens_chart, "svg"), file_name="tokens.svg", mime="image/svg+xml",
                              key="share.tokens_svg", icon=":material/image:")
    if focus is None:
        return
    label = focus.setup.label
    stem = "".join(c if c.isalnum() or c in "-_" else "_" for c in label) or "setup"
    st.markdown(f"**Setup {escape_markdown(label)}**")
    cols = st.columns(4)
    cols[0].download_button("Replay (CSV)", lambda: focus.replay.frame().to_csv(index=False), file_name=f"{stem}.csv",
                            mime="text/csv", key="share.replay_csv", icon=":material/table:",
                            help="One row per LLM call: tokens before and sent, trigger, compaction, note.")
    cols[1].download_button("Replay (JSON)", lambda: json.dumps(focus.replay.to_json(), ensure_ascii=False, indent=1),
                            file_name=f"{stem}.json", mime="application/json", key="share.replay_json",
                            icon=":material/data_object:", help="What `python -m compaction replay --json` prints.")
    composition = cache.composition_spec(focus.key, focus.replay)
    cols[2].download_button("Composition (PNG)", image_of(composition, "png"), file_name=f"{stem}_composition.png",
                            mime="image/png", key="share.composition_png", icon=":material/image:")
    lifecycle = cache.lifecycle_spec(focus.key, focus.replay)
    cols[3].download_button("Lifecycle (PNG)", image_of(lifecycle, "png"), file_name=f"{stem}_lifecycle.png",
                            mime="image/png", key="share.lifecycle_png", icon=":material/image:")
