"""What it costs: prompt-cache prices per setup, tokens shed vs dollars saved, calibration and information loss.

:func:`show_costs` is one self-contained component (it owns every session-state key under its ``key``);
:func:`choose_prices` is the price preset selector, shared with the sweep and fleet views.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

import streamlit as st

from compaction import cost_charts
from compaction.analysis import views
from compaction.analysis.calibration import Calibration
from compaction.analysis.costs import TTL_SECONDS
from compaction.analysis.costs import CostComparison
from compaction.analysis.costs import PriceModel
from compaction.analysis.costs import price_model
from compaction.analysis.costs import price_table
from compaction.conversation import Conversation
from compaction.models import Resolved
from compaction.models import resolve_price_model
from compaction.replay import Replay

from . import cache
from . import settings
from .guard import section
from .text import colored
from .text import compact_number
from .text import escape_markdown

COST_MODEL_NOTE = (
    "Fewer tokens is not the same as cheaper. Providers cache the prompt prefix: the next call reads the unchanged "
    "part at a discount and pays full price (at Anthropic, a write surcharge) for everything after the first changed "
    "message. A compaction rewrites an early message, so the call after it re-writes most of the context."
)
CALIBRATION_NOTE = (
    "This log reports the provider's usage per call, so the uncompacted replay is checked against the real run; "
    "the fitted chars/token makes the approximate counter match the reported prompt sizes."
)
LOSS_NOTE = (
    "A heuristic, not a verdict: a removed message counts as *needed* when a later assistant message quotes a "
    "distinctive identifier (path, dotted or snake_case name, hash, long number) that only that message carried, or "
    "when the agent later repeats the same tool call whose result the setup removed (a forced re-fetch)."
)


def choose_prices(key: str, default_model: str = "claude-sonnet-4-6") -> PriceModel:
    """Price preset (models from the bundled price table), cache TTL and editable prices and multipliers."""
    table = price_table()
    models = list(table["models"])
    left, right = st.columns([3, 2])
    if st.session_state.get(f"{key}_model") not in models:  # first drawn, or a preset the table no longer has
        st.session_state[f"{key}_model"] = default_model if default_model in models else models[0]
    model = left.selectbox("Price preset", models, key=f"{key}_model",
                           help="Model prices per million tokens, from the bundled price table.")
    ttl = right.radio("Cache TTL", list(TTL_SECONDS), horizontal=True, key=f"{key}_ttl",
                      help="How long the provider keeps a cached prefix. Anthropic charges 1.25× the input price to "
                           "write a 5-minute entry and 2× for 1 hour; calls further apart than the TTL start cold.")
    preset = price_model(model, ttl)
    with st.expander(f"Prices of {model} (as of {table.get('as_of', 'unknown')}; editable)"):
        # widget keys include the model, so choosing another preset starts from that preset's prices
        prefix = f"{key}_{model}"
        row = st.columns(5)
        input_price = row[0].number_input("Input $/Mtok", min_value=0.0, max_value=10_000.0,
                                          value=float(preset.input_per_mtok), step=0.05, key=f"{prefix}_input")
        output_price = row[1].number_input("Output $/Mtok", min_value=0.0, max_value=10_000.0,
                                           value=float(preset.output_per_mtok), step=0.05, key=f"{prefix}_output")
        read = row[2].number_input("Cache read ×", min_value=0.0, max_value=10.0, value=float(preset.cache_read_multiplier),
                                   step=0.05, key=f"{prefix}_read", help="Multiplier on the input price for cached "
                                                                          "prefix tokens.")
        no_surcharge = not preset.write_surcharge
        write_5m = row[3].number_input("Write 5m ×", min_value=0.0, max_value=10.0,
                                       value=float(preset.cache_write_5m_multiplier), step=0.05, key=f"{prefix}_w5",
                                       disabled=no_surcharge, help="Cache-write multiplier with the 5-minute TTL.")
        write_1h = row[4].number_input("Write 1h ×", min_value=0.0, max_value=10.0,
                                       value=float(preset.cache_write_1h_multiplier), step=0.05, key=f"{prefix}_w1",
                                       disabled=no_surcharge, help="Cache-write multiplier with the 1-hour TTL.")
        if no_surcharge:
            st.caption(f"{preset.provider} does not charge for cache writes: only the read discount applies.")
    return price_model(model, ttl, input_per_mtok=input_price, output_per_mtok=output_price,
                       cache_read_multiplier=read, cache_write_5m_multiplier=write_5m,
                       cache_write_1h_multiplier=write_1h)


def _preset_from_log_key(key: str) -> str:
    return f"{key}_model_from_log"


def _apply_preset(key: str, preset: str) -> None:
    st.session_state[f"{key}_model"] = preset
    st.session_state[_preset_from_log_key(key)] = preset


def follow_log_preset(key: str, resolved: Resolved) -> bool:
    """Seed the price preset of the view under ``key`` from the log's model (call before :func:`choose_prices`),
    unless the user chose another preset: that choice is kept. Returns whether the log's preset is the one shown."""
    state = st.session_state
    current = state.get(f"{key}_model")
    if current is None or current == state.get(_preset_from_log_key(key)):
        _apply_preset(key, str(resolved.value))
        return True
    return bool(current == resolved.value)


def show_preset_origin(key: str, resolved: Resolved, followed: bool) -> None:
    """Where the price preset came from, or the log's preset with a button to use it instead of the user's."""
    note = escape_markdown(resolved.note)
    if followed:
        st.caption(f"Price preset from the log: {note} ({escape_markdown(resolved.source)}).")
        return
    st.info(f"The log suggests **{escape_markdown(str(resolved.value))}** — {note}. Your preset is kept.",
            icon=":material/info:")
    st.button(f"Use {resolved.value}", key=f"{key}_use_log_preset", on_click=_apply_preset,
              args=(key, str(resolved.value)), help="Price with the preset of the model the log names.")


def _label(label: str, color: str | None) -> str:
    text = escape_markdown(label)
    try:
        return f"**{colored(text, color)}**" if color else f"**{text}**"
    except ValueError:
        return f"**{text}**"


def verdict_badges(comparison: CostComparison) -> str:
    """Two badges, kept apart on purpose: fewer tokens sent, and cheaper once cache effects are priced in."""
    fewer = (":green-badge[:material/compress: fewer tokens]" if comparison.tokens_shed > 0
             else ":gray-badge[:material/drag_handle: no fewer tokens]")
    cheaper = (":green-badge[:material/savings: net cheaper after cache effects]" if comparison.net_cheaper
               else ":red-badge[:material/money_off: not cheaper after cache effects]")
    return f"{fewer} {cheaper}"


def show_verdicts(comparisons: Sequence[tuple[str, CostComparison]], colors: Mapping[str, str]) -> None:
    """Per setup: tokens shed, total $ and $ vs the uncompacted log, and the two badges."""
    for column, (label, comparison) in zip(st.columns(max(len(comparisons), 1)), comparisons):
        with column:
            st.markdown(_label(label, colors.get(label)))
            totals = comparison.setup.totals()
            st.metric("Tokens shed", compact_number(comparison.tokens_shed),
                      help="Input tokens the uncompacted log would have sent minus what this setup sends.")
            st.metric("Total $", f"${comparison.setup.total_dollars:,.4f}",
                      delta=f"{-comparison.dollars_saved:+,.4f} $ vs uncompacted", delta_color="inverse",
                      help=f"Uncompacted log: ${comparison.baseline.total_dollars:,.4f}. Includes "
                           f"${totals['summarizer_dollars']:,.4f} of summarizer calls.")
            st.markdown(verdict_badges(comparison))
            if totals["cold_calls"]:
                st.caption(f"{int(totals['cold_calls'])} calls came after a gap longer than the TTL (cold cache).")


def show_cost_charts(comparisons: Sequence[tuple[str, CostComparison]], colors: Mapping[str, str], key: str) -> None:
    """$ per setup, then the bill of every call split into its parts (tokens or $)."""
    summary = views.cost_summary(comparisons)
    st.altair_chart(cost_charts.dollars_chart(summary, colors), key=f"{key}_dollars_chart")
    measure = st.radio("Per-call chart shows", list(cost_charts.MEASURE_TITLES), horizontal=True,
                       format_func=lambda m: cost_charts.MEASURE_TITLES[m], key=f"{key}_measure")
    parts = views.cost_parts([(label, c.setup) for label, c in comparisons])
    y_max = cost_charts.stack_max(parts, measure)
    for position, (column, (label, _)) in enumerate(zip(st.columns(len(comparisons)), comparisons)):
        with column:
            st.altair_chart(cost_charts.cost_stack_chart(parts, label, measure, y_max=y_max), key=f"{key}_parts_chart_{position}")
    st.dataframe(summary, hide_index=True, key=f"{key}_summary", column_config={
        "dollars": st.column_config.NumberColumn("$", format="$%.4f"),
        "baseline_dollars": st.column_config.NumberColumn("uncompacted $", format="$%.4f"),
        "dollars_saved": st.column_config.NumberColumn("$ saved", format="$%.4f"),
        "summarizer_dollars": st.column_config.NumberColumn("summarizer $", format="$%.4f"),
        "fewer_tokens": st.column_config.CheckboxColumn("fewer tokens"),
        "net_cheaper": st.column_config.CheckboxColumn("net cheaper"),
    })


def show_calibration(conversation: Conversation, prices: PriceModel, key: str) -> None:
    """Agreement of the simulated uncompacted run with the usage the provider reported."""
    calibration = cache.calibration_of(conversation, prices)
    st.caption(CALIBRATION_NOTE)
    if not calibration.rows:
        st.info("The log reports usage, but no call before the agent's own first compaction could be compared.",
                icon=":material/info:")
        return
    row = st.columns(4)
    row[0].metric("Calls compared", len(calibration.rows))
    row[1].metric("Fitted chars/token", "—" if calibration.chars_per_token is None
                  else f"{calibration.chars_per_token:.2f}",
                  help=None if calibration.overhead_tokens is None
                  else f"plus a constant {calibration.overhead_tokens:,.0f} tokens the log does not show")
    row[2].metric("Prompt size error", "—" if calibration.prompt_mape is None else f"{calibration.prompt_mape:.1%}",
                  help="Mean absolute percentage error of the prompt size with the fitted counter.")
    row[3].metric("Cache-read agreement", "—" if calibration.cache_read_agreement is None
                  else f"{calibration.cache_read_agreement:.2f}×",
                  help="Simulated cache reads / reported cache reads over the compared calls (1.00× = exact).")
    show_calibrated_counter(calibration, key)
    st.altair_chart(cost_charts.calibration_chart(views.calibration_series(calibration)), key=f"{key}_calibration")


def _use_calibrated(chars_per_token: float) -> None:
    settings.seed_counter(settings.SHARED_COUNTER_KEYS, "approx:custom", chars_per_token)


def show_calibrated_counter(calibration: Calibration, key: str) -> None:
    """One button that makes the fitted counter (``approx:<fitted chars/token>``) the shared counter."""
    if calibration.chars_per_token is None:
        return
    spec = calibration.counter_spec()
    chars = float(spec.partition(":")[2])
    low, high = settings.CHARS_RANGE
    if settings.shared_values().counter == spec:
        st.caption(f"The shared counter is the calibrated one ({spec}).")
        return
    st.button(f"Use the calibrated counter ({spec})", key=f"{key}_use_calibrated", on_click=_use_calibrated,
              args=(chars,), disabled=not low <= chars <= high,
              help=f"Sets the shared token counter to Haystack's approximate counter at {chars:g} characters per "
                   "token, the ratio that best matches the prompt sizes this log reports (setups with their own "
                   "counter keep it; the constant overhead the fit found is not added)."
                   + ("" if low <= chars <= high else f" Outside the counter's range ({low:g}–{high:g})."))


def survival_badges(first_ok: bool, latest_ok: bool) -> str:
    """Whether the first and the latest user request stayed in the context at every call."""
    first = (":green-badge[first user request survives]" if first_ok
             else ":red-badge[first user request lost]")
    latest = (":green-badge[latest user request survives]" if latest_ok
              else ":red-badge[latest user request lost]")
    return f"{first} {latest}"


def show_information_loss(conversation: Conversation, runs: Sequence[tuple[str, Replay]], key: str) -> None:
    """Per setup: the information-loss score, the two survival badges and the removed messages with evidence."""
    st.caption(LOSS_NOTE)
    for tab, (label, rep) in zip(st.tabs([escape_markdown(label) for label, _ in runs]), runs):
        with tab:
            loss = cache.loss_of(rep)
            row = st.columns(3)
            row[0].metric("Information-loss score", loss.score,
                          help="Removed messages that look needed later (quoted or re-fetched).")
            row[1].metric("Removed messages", len(loss.evidence))
            row[2].metric("Forced re-fetches", loss.refetches)
            st.markdown(survival_badges(loss.first_user_survives, loss.latest_user_survives))
            table = views.loss_table(conversation, loss)
            if table.empty:
                st.caption("This setup removed nothing.")
                continue
            st.dataframe(table, hide_index=True, key=f"{key}_loss_{label}", column_config={
                "removed_at_step": st.column_config.NumberColumn("removed at step"),
                "needed": st.column_config.CheckboxColumn("looks needed"),
            })


def show_costs(conversation: Conversation, runs: Sequence[tuple[str, Replay]], colors: Mapping[str, str],
               key: str = "costs") -> None:
    """The "What it costs" component: prices, per-setup verdicts, per-call bill charts, calibration (when the
    log reports usage) and information loss. ``runs`` are labelled replays of ``conversation``; ``colors`` maps a
    label to its ``#rrggbb`` setup colour."""
    if not runs:
        st.info("Replay at least one setup to see what it costs.", icon=":material/tune:")
        return
    st.caption(COST_MODEL_NOTE)
    with section("Prices"):
        suggested = resolve_price_model(conversation)
        followed = follow_log_preset(key, suggested)
        prices = choose_prices(key, str(suggested.value))
        show_preset_origin(key, suggested, followed)
    comparisons: list[tuple[str, CostComparison]] = []
    with section("Pricing the setups"):
        comparisons = [(label, cache.costs_of(rep, prices)) for label, rep in runs]
    if comparisons:
        with section("Costs per setup"):
            show_verdicts(comparisons, colors)
            show_cost_charts(comparisons, colors, key)
    if conversation.usage:
        with section("Calibration"):
            st.subheader("Calibration against the reported usage")
            show_calibration(conversation, prices, key)
    with section("Information loss"):
        st.subheader("Information loss")
        show_information_loss(conversation, runs, key)
