"""Side by side: what each setup sends at one LLM call, one row per message, aligned by original message index.

Every message body comes from the log, so it is shown with ``st.text`` / ``st.code`` only; the markdown around it
(fate badges, indices, roles) is built from our own fixed strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Literal

import streamlit as st

from compaction import explain
from compaction import views
from compaction.conversation import Message
from compaction.replay import ContextItem
from compaction.tokens import Counter

from . import cache
from . import settings
from .text import FATE_HELP
from .text import clip
from .text import fate_badge
from .text import setup_title

FILTER_KEY = "context.filter"
COMPARE_KEY = "context.compare"
DIFF_A_KEY = "diff.a"
DIFF_B_KEY = "diff.b"
DIFF_ROW_KEY = "diff.row"
PAGE_KEY = "context.page"
CHANGED = "Changed messages"
ALL = "All messages"
#: rows per page: few enough that moving the step redraws the panel quickly (each row is a bordered block per setup)
PAGE_SIZE = 8
TOOL_FILTER_KEY = "context.tools"
FATE_FILTER_KEY = "context.fates"
DIFF_TOGGLE_KEY = "context.diff"
PREVIEW_CHARS = 220
#: the most characters of one message sent to the browser (a log may hold megabyte-sized tool results)
FULL_TEXT_CHARS = 20_000
#: the prefix of the full-text expanders' keys
FULL_TEXT_KEY = "context.full"
ROLE_NAMES = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool result"}
INSERTED_NAMES = {"summary": "summary", "digest": "digest", "note": "note", "reinserted": "re-inserted message"}


def show_context(runs: Sequence[views.Run], setup_colors: Mapping[str, str], step: int,
                 runs_key: cache.RunsKey) -> None:
    """The selected step: per-setup headline, a fate map of the whole context, the aligned message rows of the
    setups chosen for side by side, and a diff of two setups."""
    all_labels = [label for label, _ in runs]
    first = runs[0][1].steps[step]
    st.subheader(f"What each setup sends at step {step}", anchor="context")
    chosen = _chosen_setups(all_labels)
    if not chosen:
        st.info("Choose at least one setup to show side by side.", icon=":material/view_column:")
        return
    full_rows = cache.aligned_context(runs_key, step, runs)
    chosen_key = tuple(pair for pair in runs_key if pair[0] in chosen)
    runs = [(label, rep) for label, rep in runs if label in chosen]
    labels = [label for label, _ in runs]
    rows = cache.aligned_context(chosen_key, step, runs) if len(runs) != len(all_labels) else full_rows
    st.caption(
        f"LLM call {step} produced message #{first.message_index}. Uncompacted, its context is "
        f"{first.tokens_uncompacted:,} tokens. Rows line up the same original message across setups; removed "
        "messages stay on their row so you can see what replaced them."
    )
    _setup_headers(runs, setup_colors, rows, step)
    strip = views.context_strip(rows, labels)
    if not strip.empty:
        st.vega_lite_chart(cache.context_strip_spec(runs_key, step, strip, tuple(labels)).ready, width="stretch")
    st.caption(" · ".join(f"**{fate}**: {meaning}" for fate, meaning in FATE_HELP.items()))
    _rows(rows, runs, step)
    if len(all_labels) >= 2 and st.toggle("Diff of two setups at this step", key=DIFF_TOGGLE_KEY,
                                          help="Which messages two setups send differently here, and a text diff."):
        _diff(full_rows, all_labels, step)


def _chosen_setups(labels: Sequence[str]) -> list[str]:
    """Which setups to line up side by side (all by default; stale names are dropped before the widget draws)."""
    state = st.session_state
    if COMPARE_KEY in state:
        state[COMPARE_KEY] = [label for label in state[COMPARE_KEY] if label in labels] or list(labels)
    return st.multiselect("Setups side by side", list(labels), **settings.initial_default(COMPARE_KEY, list(labels)),
                          key=COMPARE_KEY, help="Line up any two, or all, of the setups.")


def _diff(rows: Sequence[views.AlignedRow], labels: Sequence[str], step: int) -> None:
    """Which messages two setups send differently at this step, and a text diff of one of them."""
    for key, default in ((DIFF_A_KEY, labels[0]), (DIFF_B_KEY, labels[1])):
        if st.session_state.get(key) not in labels:
            st.session_state[key] = default
    left, right = st.columns(2)
    a = left.selectbox("Setup", list(labels), key=DIFF_A_KEY)
    b = right.selectbox("against setup", list(labels), key=DIFF_B_KEY)
    if a == b:
        st.caption("Pick two different setups to compare.")
        return
    differing = views.differing_rows(rows, a, b)
    if not differing:
        st.info(f"At step {step} both setups send exactly the same messages.", icon=":material/check:")
        return
    st.caption(f"{len(differing):,} of {len(rows):,} rows differ in fate or in the text sent.")
    described = {_describe(row, a, b): row for row in differing}
    choice = st.selectbox("Message to diff", list(described), key=f"{DIFF_ROW_KEY}.{step}.{a}.{b}",
                          help="The unified diff of what each setup sends for this message (- first setup, + second).")
    row = described.get(choice, differing[0])
    diff, cut = clip(views.text_diff(row, a, b), FULL_TEXT_CHARS)
    if diff:
        st.code(diff, language="diff", wrap_lines=True, height=_code_height(diff))
        if cut:
            st.caption(f"… {cut:,} more characters not shown.")
    else:
        st.caption("Same text, different fate.")


def _describe(row: views.AlignedRow, a: str, b: str) -> str:
    """``#12 tool result: kept → pruned`` (role and fates are fixed words)."""
    item = row.cells.get(a) or row.cells.get(b)
    where = f"#{row.index}" if row.index is not None else f"new after #{row.key[0]} ({row.key[2] + 1})"
    role = _role(item.original or item.message) if item is not None else "message"

    def fate(label: str) -> str:
        cell = row.cells.get(label)
        return cell.fate if cell is not None else "absent"

    return f"{where} {role}: {fate(a)} → {fate(b)}"


def _setup_headers(runs: Sequence[views.Run], setup_colors: Mapping[str, str], rows: Sequence[views.AlignedRow],
                   step: int) -> None:
    cols = st.columns(len(runs), gap="medium")
    for col, (label, rep) in zip(cols, runs, strict=True):
        s = rep.steps[step]
        with col.container(border=True):
            st.markdown(f"**{setup_title(label, setup_colors[label])}** · {rep.strategy.title}")
            st.metric(
                "Tokens sent",
                f"{s.tokens_sent:,}",
                delta=f"{s.tokens_sent - s.tokens_uncompacted:,} vs uncompacted",
                delta_color="inverse",
                help="What this setup sent in this LLM call, by the chosen counter (after any compaction at it).",
            )
            counts = views.fate_counts(rows, label)
            st.markdown(" ".join(f"{fate_badge(f)} {counts[f]:,}" for f in FATE_HELP if counts.get(f)))
            marker = "▼ " if s.compacted else "✕ " if s.triggered else ""
            st.markdown(marker + explain.what_happened(rep, step))  # built from fixed wording and numbers only


def row_tools(row: views.AlignedRow) -> set[str]:
    """The tools a row is about: the tool of a result, the tools an assistant message calls (any setup's cell)."""
    tools: set[str] = set()
    for item in row.cells.values():
        if item is None:
            continue
        message = item.original or item.message
        if message.tool_result is not None:
            tools.add(message.tool_result.tool_name)
        tools.update(call.name for call in message.tool_calls)
    return tools


def row_fates(row: views.AlignedRow) -> set[str]:
    """The fates a row has in any setup."""
    return {item.fate for item in row.cells.values() if item is not None}


def filter_rows(rows: Sequence[views.AlignedRow], tools: Sequence[str], fates: Sequence[str]
                ) -> list[views.AlignedRow]:
    """The rows about any of ``tools`` and with any of ``fates`` in some setup (an empty choice filters nothing)."""
    return [r for r in rows if (not tools or row_tools(r) & set(tools)) and (not fates or row_fates(r) & set(fates))]


def _rows(rows: Sequence[views.AlignedRow], runs: Sequence[views.Run], step: int) -> None:
    changed = [r for r in rows if r.changed]
    show, by_tool, by_fate = st.columns([1.3, 1, 1], vertical_alignment="bottom")
    choice = show.segmented_control(
        "Show",
        [CHANGED, ALL],
        default=CHANGED,
        required=True,
        format_func=lambda o: f"{o} ({len(changed) if o == CHANGED else len(rows):,})",
        key=FILTER_KEY,
        help="Changed: only rows where some setup does not send the message as logged. All: the whole context.",
    )
    tools = sorted({t for r in rows for t in row_tools(r)})
    chosen_tools = by_tool.multiselect("Tools", tools, key=TOOL_FILTER_KEY, placeholder="every tool",
                                       help="Only the tool results and calls of these tools.")
    chosen_fates = by_fate.multiselect("Fates", list(FATE_HELP), key=FATE_FILTER_KEY, placeholder="every fate",
                                       help="Only rows with one of these fates in some setup.")
    shown = filter_rows(rows if choice == ALL else changed, chosen_tools, chosen_fates)
    if not shown:
        if chosen_tools or chosen_fates:
            st.info("No row at this step matches the filters.", icon=":material/filter_alt_off:")
        else:
            st.info("Nothing is compacted at this step yet: every setup sends the log as it is.",
                    icon=":material/check:")
        return
    page = _page(len(shown), step, f"{choice or CHANGED}.{','.join(chosen_tools)}.{','.join(chosen_fates)}")
    labels = [label for label, _ in runs]
    counters = {label: rep.counter for label, rep in runs}
    for position, row in enumerate(shown[(page - 1) * PAGE_SIZE: page * PAGE_SIZE], start=(page - 1) * PAGE_SIZE):
        with st.container(border=True):
            index_col, *cols = st.columns([0.5, *[5] * len(labels)], gap="small")
            index_col.markdown(f"**#{row.index}**" if row.index is not None else ":gray[new]")
            row_key = f"{step}.{row.index if row.index is not None else f'new{position}'}"
            for col, label in zip(cols, labels, strict=True):
                with col:
                    _cell(row.cells.get(label), counters[label], f"{FULL_TEXT_KEY}.{label}.{row_key}")


def _page(count: int, step: int, choice: str) -> int:
    """Pagination over the rows. The widget is keyed by what it pages over, so a new step, filter or row count
    starts again at page 1."""
    pages = (count + PAGE_SIZE - 1) // PAGE_SIZE
    if pages <= 1:
        return 1
    st.caption(f"{count:,} rows, {PAGE_SIZE} per page.")
    return st.pagination(pages, key=f"{PAGE_KEY}.{step}.{choice}.{count}")


def _role(message: Message) -> str:
    """The role in words (a fixed string: a role the model does not know reads as "message")."""
    return ROLE_NAMES.get(message.role, "message")


def _cell(item: ContextItem | None, counter: Counter, key: str) -> None:
    """One setup's message on one row (``key``: its place, which keys its expander)."""
    if item is None:
        st.caption("—")
        return
    if item.fate == "inserted":
        _inserted(item, counter, key)
        return
    original = item.original or item.message
    if item.fate in ("collapsed", "dropped"):
        tokens = counter.count_one(original)
        where = "→ digest/summary below" if item.fate == "collapsed" else "not sent"
        st.markdown(f"{fate_badge(item.fate)} {_role(original)} · :gray[{where} · was {tokens:,} tokens]")
        st.text(original.preview(PREVIEW_CHARS))
        if _longer_than_preview(original):
            _full_text("Original message", original, key)
        return
    tokens = counter.count_one(item.message)
    st.markdown(f"{fate_badge(item.fate)} {_role(item.message)} · :gray[{tokens:,} tokens]")
    st.text(item.message.preview(PREVIEW_CHARS))
    if item.fate == "pruned":
        was = counter.count_one(original)
        _full_text(f"Original, before pruning ({was:,} tokens)", original, key)
    elif _longer_than_preview(item.message):
        _full_text("Full message", item.message, key)


def _longer_than_preview(message: Message) -> bool:
    """True when the one-line preview hides something (length or line structure) worth expanding."""
    text = views.message_text(message)
    return len(text) > PREVIEW_CHARS or text.count("\n") > 2


def _inserted(item: ContextItem, counter: Counter, key: str) -> None:
    kind = INSERTED_NAMES.get(item.inserted_kind or "", "inserted message")
    tokens = counter.count_one(item.message)
    covers = ""
    if item.represents:
        first, last = min(item.represents), max(item.represents)
        span = f"#{first}" if first == last else f"#{first}–#{last}"
        covers = f" · stands for {len(item.represents):,} message{'s' if len(item.represents) != 1 else ''} ({span})"
    st.markdown(f"{fate_badge('inserted')} **{kind}** · {_role(item.message)} · :gray[{tokens:,} tokens{covers}]")
    st.text(item.message.preview(PREVIEW_CHARS))
    if _longer_than_preview(item.message):
        _full_text(f"Full {kind}", item.message, key)


def _full_text(title: str, message: Message, key: str) -> None:
    """The whole message in an expander that is filled only when opened (a page of long results would otherwise send
    every one of them to the browser on every rerun)."""
    expander = st.expander(title, key=key, on_change="rerun")
    if expander.open:
        with expander:
            _verbatim(message)


def _verbatim(message: Message) -> None:
    """The whole message as plain preformatted text (never markdown), cut at :data:`FULL_TEXT_CHARS`."""
    text, cut = clip(views.message_text(message), FULL_TEXT_CHARS)
    st.code(text, language=None, wrap_lines=True, height=_code_height(text))
    if cut:
        st.caption(f"… {cut:,} more characters not shown.")


def _code_height(text: str) -> int | Literal["content"]:
    """Long texts scroll inside a fixed-height block instead of stretching the row."""
    return 320 if text.count("\n") > 14 or len(text) > 1500 else "content"
