"""Replaying every setup, the headline metric cards, and the summary table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from compaction import explain
from compaction import views
from compaction.budget import WorkBudget
from compaction.conversation import Conversation
from compaction.replay import Replay
from compaction.summarizers import WithheldRequest
from compaction.summarizers import live_enabled

from . import cache
from .guard import log
from .guard import one_line
from .setups import SetupSpec
from .text import compact_number
from .text import escape_markdown
from .text import setup_title

REPLAY_ASSUMPTION = (
    "Replay assumes the agent would have acted the same after compaction: every later message is taken from the "
    "log as it happened. This is the standard offline-replay assumption; it is what makes setups comparable on "
    "the same run, and it means the numbers show what each setup *sends*, not how the agent would have reacted."
)


#: CPU-seconds one replay started from the app may spend, and all the replays of one page run together: enough for
#: every strategy on the 1,000-call benchmark log and on every real log, few enough that a crafted link or
#: imported file cannot keep the server busy (the CLI and the Python API replay without a budget)
REPLAY_CPU_SECONDS = 8.0
PAGE_CPU_SECONDS = 8.0
BUDGET_PURPOSE = ("a limit of this app, so that no link or imported setup can keep the server busy; the command line "
                  "and the Python API replay without one")


@dataclass(frozen=True)
class SetupResult:
    """A setup and its replay, or the readable reason it could not be replayed (``error`` stays empty when the
    reason is the shared threshold policy, which is reported once); ``withheld``: the live-summarizer requests the
    replay did not send."""

    setup: SetupSpec
    replay: Replay | None = None
    error: str | None = None
    key: cache.ReplayKey | None = None
    withheld: tuple[WithheldRequest, ...] = ()


@dataclass(frozen=True)
class ReplayedSetup:
    """A setup that was replayed: its replay and the cache key it was replayed under."""

    setup: SetupSpec
    replay: Replay
    key: cache.ReplayKey


def replayed_setups(results: Sequence[SetupResult]) -> list[ReplayedSetup]:
    """The replayed setups (those with a replay and its key), in order."""
    return [ReplayedSetup(r.setup, r.replay, r.key) for r in results if r.replay is not None and r.key is not None]


def run_setups(conversation: Conversation, source_key: str, setups: Sequence[SetupSpec]) -> list[SetupResult]:
    """Replay every setup with its policy and counter (cached) within the page's work budget; invalid settings and
    a spent budget become a per-setup error, never an exception (an invalid shared policy is reported once, above
    the results). A live summarizer is called only when the operator enabled it and the setup did not arrive by
    link or import unconfirmed."""
    page = WorkBudget(PAGE_CPU_SECONDS, BUDGET_PURPOSE)
    live = live_enabled()
    results = []
    for setup in setups:
        policy = setup.policy
        if not policy.valid and setup.info.policy == "threshold":
            error = f"its threshold policy is invalid — {policy.error}" if setup.own_policy else None
            results.append(SetupResult(setup, error=error))
            continue
        key = cache.ReplayKey(source_key, setup.strategy, setup.params, policy.context_window, policy.compact_at,
                              policy.compact_to, setup.counter, live and setup.live_confirmed)
        try:
            done = cache.run_replay(key, conversation, page.share(REPLAY_CPU_SECONDS))
        except Exception as exc:  # noqa: BLE001 - one failing setup must not hide the others
            if not isinstance(exc, ValueError):
                log.exception("replaying setup %s failed", setup.label)
            results.append(SetupResult(setup, error=one_line(exc)))
            continue
        if done.replay is None:
            results.append(SetupResult(setup, error=done.stopped, withheld=done.withheld))
        else:
            results.append(SetupResult(setup, done.replay, key=key, withheld=done.withheld))
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
            st.error(f"**Setup {escape_markdown(r.setup.label)}** ({escape_markdown(r.setup.info.title)}): {escape_markdown(r.error)}",
                     icon=":material/tune:")


#: a card's width in pixels: its two numbers side by side never truncate, and cards wrap onto a new row when the
#: page is narrower than all of them (4 setups at 1366 px: three cards a row)
CARD_WIDTH = 290


def calls_over(replay: Replay, context_window: int) -> int:
    """LLM calls that still send more than ``context_window`` tokens under this replay."""
    return sum(1 for s in replay.steps if s.tokens_sent > context_window)


def show_metric_cards(results: Sequence[SetupResult], context_window: int) -> None:
    """Headline numbers: the uncompacted log, then one card per replayed setup, each with the calls still over its
    window."""
    replayed = [(r, r.replay) for r in results if r.replay is not None]
    if not replayed:
        return
    first = replayed[0][1]
    uncompacted = [s.tokens_uncompacted for s in first.steps]
    peak = max(uncompacted, default=0)
    total = sum(uncompacted)
    over = sum(1 for t in uncompacted if t > context_window)
    with st.container(horizontal=True, gap="small", key="cards"):
        with st.container(border=True, width=CARD_WIDTH):
            st.markdown("**Uncompacted log**")
            with st.container(horizontal=True, gap="medium"):
                st.metric("Peak context", compact_number(peak), width="content",
                          help=f"The largest context any LLM call of the log sent: {peak:,} tokens.")
                st.metric("Total sent", compact_number(total), width="content",
                          help=f"Sum over all LLM calls of the tokens each call sent: {total:,} tokens.")
            st.caption(f"{over:,} of {len(uncompacted):,} calls exceed the {context_window:,}-token window"
                       + (": without compaction they would fail or be truncated." if over else "."))
        for r, replay in replayed:
            with st.container(border=True, width=CARD_WIDTH):
                _setup_card(r, replay, peak)


def _setup_card(r: SetupResult, replay: Replay, peak: int) -> None:
    """One replayed setup's card (``replay``: ``r.replay``)."""
    s = replay.summary()
    saved_pct = 100.0 * s["tokens_saved"] / s["total_tokens_uncompacted"] if s["total_tokens_uncompacted"] else 0.0
    st.markdown(f"**{setup_title(r.setup.label, r.setup.color)}** · {replay.strategy.title}")
    with st.container(horizontal=True, gap="medium"):
        st.metric("Peak context", compact_number(s["peak_tokens_sent"]), width="content",
                  delta=compact_number(s["peak_tokens_sent"] - peak), delta_color="inverse",
                  help=f"The largest context this setup sent in any LLM call: {s['peak_tokens_sent']:,} tokens "
                  f"({s['peak_tokens_sent'] - peak:+,} against the uncompacted log).")
        st.metric("Tokens saved", compact_number(s["tokens_saved"]), delta=f"{saved_pct:.1f}%", width="content",
                  delta_color="normal" if s["tokens_saved"] >= 0 else "inverse",
                  help="Total tokens sent by the uncompacted log minus this setup's total, over all LLM calls: "
                  f"{s['tokens_saved']:,} tokens ({saved_pct:.1f}% of the uncompacted total).")
    declined = s["declined_triggers"]
    window = replay.context_window
    still = calls_over(replay, window)
    over_text = (f":red[**{still:,} call{'s' if still != 1 else ''} still over the {window:,}-token window**]"
                 if still else f"no call over the {window:,}-token window")
    st.caption(f"{s['compactions']:,} compaction{'s' if s['compactions'] != 1 else ''}"
               + (f" · {declined:,} declined trigger{'s' if declined != 1 else ''} (nothing it may compact)"
                  if declined else "") + f" · {over_text}")
    _loss_badges(r, replay)
    _setup_warnings(r, replay)


LOSS_HELP = (
    "A heuristic, not a verdict: a removed message counts as needed when a later assistant message or tool call in "
    "the real run quotes a distinctive identifier (path, name, hash, long number) found only in it, or repeats the "
    "tool call whose result was removed (a re-fetch)."
)


def losses_of(results: Sequence[SetupResult]) -> dict[str, dict[str, int | bool]]:
    """Information-loss summaries by setup label (cached per replay)."""
    return {r.setup.label: cache.loss(r.key, r.replay).summary() for r in results if r.replay is not None and r.key}


def _loss_badges(result: SetupResult, replay: Replay) -> None:
    """Does the task survive, and how much removed content looks needed later (badges from fixed strings)."""
    if result.key is None:
        return
    summary = cache.loss(result.key, replay).summary()
    first = summary["first_user_request_survives"]
    latest = summary["latest_user_request_survives"]
    score = summary["information_loss_score"]
    badges = [
        ":green-badge[first user request survives]" if first else ":red-badge[first user request lost]",
        ":green-badge[latest user request survives]" if latest else ":red-badge[latest user request lost]",
        f":{'gray' if score == 0 else 'orange'}-badge[information loss {score}]",
    ]
    st.markdown(" ".join(badges), help=LOSS_HELP + f" {summary['removed_messages']:,} messages removed at some point, "
                f"{summary['refetches']:,} re-fetches.")
    st.caption("Information loss: removed messages the run later seems to need (a heuristic).")


def _setup_warnings(result: SetupResult, replay: Replay) -> None:
    """Thrashing, a floor at the trigger, a lost task message, split tool pairs… with the calls concerned."""
    found = cache.setup_warnings(result.key, replay) if result.key else explain.warnings_for(replay)
    if not found:
        return
    with st.expander(f"{len(found)} warning{'s' if len(found) != 1 else ''}", icon=":material/warning:"):
        for w in found:
            calls = ", ".join(str(k) for k in w.steps[:12]) + (" …" if len(w.steps) > 12 else "")
            st.markdown(w.message + (f" :gray[Calls: {calls}.]" if calls else ""))  # fixed wording and numbers


METRICS_CSV_KEY = "metrics.csv"
COUNT_COLUMNS = ("LLM calls", "Compactions", "Declined triggers", "Peak tokens sent", "Total tokens sent", "Tokens saved",
                 "Context window")


def show_summary_table(results: Sequence[SetupResult]) -> None:
    """The metrics table per setup (with a CSV download) and the replay assumption."""
    runs = runs_of(results)
    if not runs:
        st.info("No setup could be replayed with the current settings.")
        return
    table = views.metrics_table(runs, losses_of(results))
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        column_config={
            **{c: st.column_config.NumberColumn(format="localized") for c in COUNT_COLUMNS},
            "Saved %": st.column_config.NumberColumn(format="%.1f%%"),
            "Information loss score": st.column_config.NumberColumn(help=LOSS_HELP),
            "First user request survives": st.column_config.CheckboxColumn(),
            "Latest user request survives": st.column_config.CheckboxColumn(),
        },
    )
    st.download_button("Download the metrics (CSV)", table.to_csv(index=False).encode(), file_name="metrics.csv",
                       mime="text/csv", key=METRICS_CSV_KEY, icon=":material/download:")
    st.caption(
        "Peak and total count the tokens each LLM call sent. Tokens saved = the uncompacted total minus the setup's "
        "total, both measured with the chosen counter. A declined trigger fired, but the strategy had nothing it was "
        "allowed to compact."
    )
    st.info(REPLAY_ASSUMPTION, icon=":material/info:")
