"""Replaying every setup, the headline metric cards, and the summary table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from compaction import explain, views
from compaction.conversation import Conversation
from compaction.replay import Replay

from . import cache
from .guard import log, one_line
from .settings import Policy
from .setups import SetupSpec
from .text import colored, compact_number, escape_markdown

REPLAY_ASSUMPTION = (
    "Replay assumes the agent would have acted the same after compaction: every later message is taken from the "
    "log as it happened. This is the standard offline-replay assumption; it is what makes setups comparable on "
    "the same run, and it means the numbers show what each setup *sends*, not how the agent would have reacted."
)


@dataclass(frozen=True)
class SetupResult:
    """A setup and its replay, or the readable reason it could not be replayed (``error`` stays empty when the
    reason is the shared threshold policy, which is reported once)."""

    setup: SetupSpec
    replay: Replay | None = None
    error: str | None = None
    key: cache.ReplayKey | None = None


def run_setups(conversation: Conversation, source_key: str, setups: Sequence[SetupSpec], policy: Policy,
               counter_spec: str) -> list[SetupResult]:
    """Replay every setup (cached); invalid settings become a per-setup error, never an exception."""
    results = []
    for setup in setups:
        if not policy.valid and setup.info.policy == "threshold":
            results.append(SetupResult(setup))
            continue
        key = cache.ReplayKey(source_key, setup.strategy, setup.params, policy.context_window, policy.compact_at,
                              policy.compact_to, counter_spec)
        try:
            results.append(SetupResult(setup, cache.run_replay(key, conversation), key=key))
        except Exception as exc:  # noqa: BLE001 - one failing setup must not hide the others
            if not isinstance(exc, ValueError):
                log.exception("replaying setup %s failed", setup.label)
            results.append(SetupResult(setup, error=one_line(exc)))
    return results


def runs_of(results: Sequence[SetupResult]) -> list[views.Run]:
    """The replayed setups as ``(label, replay)`` runs, in order."""
    return [(r.setup.label, r.replay) for r in results if r.replay is not None]


def runs_key(results: Sequence[SetupResult]) -> cache.RunsKey:
    """What the replayed setups depend on, as a cache key for their charts."""
    return tuple((r.setup.label, r.key) for r in results if r.replay is not None and r.key is not None)


def show_setup_errors(results: Sequence[SetupResult]) -> None:
    """One readable error per setup that could not be replayed."""
    for r in results:
        if r.error:
            st.error(f"**Setup {r.setup.label}** ({escape_markdown(r.setup.info.title)}): {escape_markdown(r.error)}",
                     icon=":material/tune:")


def show_metric_cards(results: Sequence[SetupResult], context_window: int) -> None:
    """Headline numbers: the uncompacted log, then one card per replayed setup."""
    replayed = [r for r in results if r.replay is not None]
    if not replayed:
        return
    first = replayed[0].replay
    uncompacted = [s.tokens_uncompacted for s in first.steps]
    peak = max(uncompacted, default=0)
    total = sum(uncompacted)
    over = sum(1 for t in uncompacted if t > context_window)
    cols = st.columns(len(replayed) + 1)
    with cols[0].container(border=True):
        st.markdown("**Uncompacted log**")
        left, right = st.columns(2)
        left.metric("Peak context", compact_number(peak),
                    help=f"The largest context any LLM call of the log sent: {peak:,} tokens.")
        right.metric("Total sent", compact_number(total),
                     help=f"Sum over all LLM calls of the tokens each call sent: {total:,} tokens.")
        st.caption(f"{over:,} of {len(uncompacted):,} calls exceed the {context_window:,}-token window"
                   + (": without compaction they would fail or be truncated." if over else "."))
    for col, r in zip(cols[1:], replayed, strict=True):
        s = r.replay.summary()
        saved_pct = 100.0 * s["tokens_saved"] / s["total_tokens_uncompacted"] if s["total_tokens_uncompacted"] else 0.0
        with col.container(border=True):
            st.markdown(f"**{colored('■ Setup ' + r.setup.label, r.setup.color)}** · {r.replay.strategy.title}")
            left, right = st.columns(2)
            left.metric("Peak context", compact_number(s["peak_tokens_sent"]),
                        delta=compact_number(s["peak_tokens_sent"] - peak), delta_color="inverse",
                        help=f"The largest context this setup sent in any LLM call: {s['peak_tokens_sent']:,} tokens "
                        f"({s['peak_tokens_sent'] - peak:+,} against the uncompacted log).")
            right.metric("Tokens saved", compact_number(s["tokens_saved"]), delta=f"{saved_pct:.1f}%",
                         delta_color="normal" if s["tokens_saved"] >= 0 else "inverse",
                         help="Total tokens sent by the uncompacted log minus this setup's total, over all LLM calls: "
                         f"{s['tokens_saved']:,} tokens ({saved_pct:.1f}% of the uncompacted total).")
            declined = s["declined_triggers"]
            st.caption(f"{s['compactions']:,} compaction{'s' if s['compactions'] != 1 else ''}"
                       + (f" · {declined:,} declined trigger{'s' if declined != 1 else ''} (nothing it may compact)"
                          if declined else ""))
            _setup_warnings(r)


def _setup_warnings(result: SetupResult) -> None:
    """Thrashing, a floor at the trigger, a lost task message, split tool pairs… with the calls concerned."""
    found = cache.setup_warnings(result.key, result.replay) if result.key else explain.warnings_for(result.replay)
    if not found:
        return
    with st.expander(f"{len(found)} warning{'s' if len(found) != 1 else ''}", icon=":material/warning:"):
        for w in found:
            calls = ", ".join(str(k) for k in w.steps[:12]) + (" …" if len(w.steps) > 12 else "")
            st.markdown(w.message + (f" :gray[Calls: {calls}.]" if calls else ""))  # fixed wording and numbers


def show_summary_table(results: Sequence[SetupResult]) -> None:
    """The per-strategy table and the replay assumption."""
    runs = runs_of(results)
    if not runs:
        st.info("No setup could be replayed with the current settings.")
        return
    table = views.summary_table(runs)
    counts = [c for c in table.columns if c not in ("Setup", "Strategy", "Saved %")]
    styled = (
        table.style.hide(axis="index")
        .format("{:,}", subset=counts)
        .format("{:.1f}%", subset=["Saved %"])
    )
    st.table(styled)
    st.caption(
        "Peak and total count the tokens each LLM call sent. Tokens saved = the uncompacted total minus the setup's "
        "total, both measured with the chosen counter. A declined trigger fired, but the strategy had nothing it was "
        "allowed to compact."
    )
    st.info(REPLAY_ASSUMPTION, icon=":material/info:")
