"""Chart builders and the data shaping behind them: valid Vega-Lite, rules and markers present, bounded size."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import compaction
from compaction import anatomy
from compaction import charts
from compaction import views
from compaction.conversation import Conversation
from compaction.conversation import ToolCall
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import tool
from compaction.conversation import user

A, B = "A · Haystack", "B · Agent Framework"


def _layers(spec: dict) -> list[dict]:
    """Every unit spec inside a (nested) layer spec."""
    out = []
    for layer in spec.get("layer", []):
        out.extend(_layers(layer) if "layer" in layer else [layer])
    return out


def _mark(layer: dict) -> str:
    mark = layer["mark"]
    return mark if isinstance(mark, str) else mark["type"]


def _embedded_rows(spec: dict) -> int:
    return sum(len(rows) for rows in spec.get("datasets", {}).values())


def synthetic_frames(steps: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A sawtooth over ``steps`` LLM calls: the baseline grows, A compacts every 50 calls, B declines every 70."""
    rows, events = [], []
    for k in range(steps):
        baseline = 1000 + 40 * k
        rows.append({"step": k, "message_index": 2 * k + 1, "series": views.BASELINE, "tokens": baseline})
        rows.append({"step": k, "message_index": 2 * k + 1, "series": A, "tokens": 1000 + 40 * (k % 50)})
        rows.append({"step": k, "message_index": 2 * k + 1, "series": B, "tokens": baseline - 5 * k})
        if k and k % 50 == 0:
            events.append({"step": k, "series": A, "event": "compacted", "tokens_before": 3000, "tokens_sent": 1000,
                           "note": "pruned 3 tool results", "count": 1})
        if k and k % 70 == 0:
            events.append({"step": k, "series": B, "event": "declined", "tokens_before": baseline, "tokens_sent":
                           baseline, "note": "nothing it may compact", "count": 1})
    rules = pd.DataFrame([
        {"tokens": 100_000.0, "kind": "window", "label": "context window 100,000"},
        {"tokens": 70_000.0, "kind": "trigger", "label": "trigger 70,000"},
        {"tokens": 40_000.0, "kind": "target", "label": "target 40,000"},
    ])
    return pd.DataFrame(rows), pd.DataFrame(events, columns=views.EVENT_COLUMNS), rules


def tiny_conversation() -> Conversation:
    """Five LLM calls with large tool results, enough for both default strategies to compact at a small window."""
    messages = [system("You are a coding agent."), user("Fix the failing test in utils.py.")]
    for i in range(5):
        call = ToolCall(id=f"c{i}", name="read_file", arguments={"path": f"src/mod{i}.py"})
        messages.append(assistant(f"Reading module {i}.", [call]))
        messages.append(tool(call, f"def f{i}():\n" + "    return 1\n" * 200))
    messages.append(assistant("Done: the test passes now."))
    return Conversation(messages=tuple(messages))


@pytest.fixture(scope="module")
def runs() -> list[views.Run]:
    conv = tiny_conversation()
    return [
        ("A", compaction.replay(conv, "haystack.tool_result_pruning", params={"min_tokens": 10},
                                context_window=3000, compact_at=0.7, compact_to=0.3)),
        ("B", compaction.replay(conv, "agent_framework.tool_result_compaction",
                                params={"minimum_preserved_groups": 2}, context_window=3000, compact_at=0.7,
                                compact_to=0.3)),
    ]


def _without_view_names(spec: dict) -> str:
    """The spec as JSON with Altair's generated view names (a hash and a counter per build) made equal."""
    import json
    import re

    return re.sub(r"view_[0-9a-f]+_\d+", "view", json.dumps(spec, sort_keys=True))


class TestTokensChart:
    def test_renaming_a_series_keeps_the_spec_and_its_colour(self):
        series, events, rules = synthetic_frames(60)
        colors = {views.BASELINE: "#999999", A: "#123456", B: "#654321"}
        first = charts.tokens_chart_data(series, events, rules, colors=colors)
        renamed = {A: "A · SlidingWindow"}
        second = charts.tokens_chart_data(series.replace({"series": renamed}), events.replace({"series": renamed}),
                                          rules, colors={renamed.get(k, k): v for k, v in colors.items()})
        # the same structure (one template, the spec the browser already has), the names only in the data
        assert first.layout == second.layout
        assert _without_view_names(charts.template(first.layout)) == _without_view_names(
            first.layout.build().to_dict())
        assert "A · SlidingWindow" in set(second.frames["series"]["series"])
        # each name keeps its colour: the range follows the names sorted as Vega sorts the domain
        expected = {"A · SlidingWindow": "#123456", B: "#654321", views.BASELINE: "#999999"}
        assert dict(zip(charts.legend_order(expected), second.layout.palette, strict=True)) == expected
        assert set(second.frames["events"]["colour"]) <= {"#123456", "#654321"}

    def test_legend_order_is_vegas_string_order(self):
        # code units, not code points: U+FF5E sorts after U+1F600 (a surrogate pair, D83D…) in JavaScript
        assert charts.legend_order(["\uff5e", "\U0001f600", "Z", "a", "B · x", "Uncompacted log"]) == [
            "B · x", "Uncompacted log", "Z", "a", "\U0001f600", "\uff5e"]

    def test_the_structure_stays_when_nothing_compacts(self):
        series, events, rules = synthetic_frames(60)
        compacting = charts.tokens_chart_data(series, events, rules)
        quiet = charts.tokens_chart_data(series, events.iloc[0:0], rules)
        assert compacting.layout == quiet.layout and quiet.frames["events"].empty

    def test_is_valid_vega_lite_with_lines_points_rules_markers_and_selection(self):
        series, events, rules = synthetic_frames(200)
        spec = charts.tokens_chart(series, events, rules, selected_step=120).to_dict()
        assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
        marks = [_mark(layer) for layer in _layers(spec)]
        assert {"line", "circle", "rule", "text", "point"} <= set(marks)
        assert [p["name"] for p in spec["params"]] == [charts.SELECTION]
        assert spec["params"][0]["select"]["fields"] == ["step"]

    def test_rules_are_labelled_and_the_selected_step_is_drawn(self):
        series, events, rules = synthetic_frames(30)
        spec = charts.tokens_chart(series, events, rules, selected_step=7).to_dict()
        data = [row for rows in spec["datasets"].values() for row in rows]
        labels = {row.get("label") for row in data}
        assert {"context window 100,000", "trigger 70,000", "target 40,000", "step 7"} <= labels

    def test_compacted_and_declined_triggers_get_distinct_shapes(self):
        series, events, rules = synthetic_frames(200)
        spec = charts.tokens_chart(series, events, rules).to_dict()
        shapes = [layer["encoding"]["shape"] for layer in _layers(spec) if "shape" in layer.get("encoding", {})]
        assert shapes and shapes[0]["scale"]["domain"] == ["compacted", "declined"]
        assert len(set(shapes[0]["scale"]["range"])) == 2

    def test_setup_colours_are_fixed_by_series(self):
        series, events, rules = synthetic_frames(10)
        colors = {views.BASELINE: charts.BASELINE_COLOR, A: "#1c83e1", B: "#d6336c"}
        spec = charts.tokens_chart(series, events, rules, colors=colors).to_dict()
        color = next(layer["encoding"]["color"] for layer in _layers(spec) if _mark(layer) == "line")
        assert color["sort"] == "ascending" and "domain" not in color["scale"]  # the domain: the names in the data
        assert dict(zip(charts.legend_order(set(series["series"])), color["scale"]["range"], strict=True)) == colors

    def test_a_10000_step_log_embeds_at_most_5000_rows(self):
        series, events, rules = synthetic_frames(10_000)
        assert len(series) == 30_000
        spec = charts.tokens_chart(series, events, rules, selected_step=9_999).to_dict()
        assert _embedded_rows(spec) <= views.MAX_CHART_ROWS

    def test_downsampling_keeps_real_steps_and_the_sawtooth_extremes(self):
        series, _, _ = synthetic_frames(10_000)
        small = views.downsample_steps(series, 3000)
        assert len(small) <= 3000
        assert set(small["step"]) <= set(series["step"])
        a = small[small["series"] == A]
        assert a["tokens"].min() == 1000 and a["tokens"].max() == 1000 + 40 * 49  # drops survive
        assert views.downsample_steps(series.head(30), 3000).equals(series.head(30))

    def test_many_events_are_thinned_with_counts(self):
        events = pd.DataFrame([{"step": k, "series": A, "event": "compacted", "tokens_before": 10, "tokens_sent": 5,
                                "note": "", "count": 1} for k in range(10_000)])
        thin = views.thin_events(events, 500)
        assert len(thin) <= 500
        assert thin["count"].sum() == 10_000


class TestFromReplays:
    def test_frames_from_real_replays(self, runs):
        series = views.step_series(runs)
        assert set(series["series"]) == {views.BASELINE, views.series_name("A", runs[0][1]),
                                         views.series_name("B", runs[1][1])}
        assert len(series) == 3 * len(runs[0][1].steps)
        events = views.compaction_events(runs)
        assert not events.empty and set(events["event"]) <= {"compacted", "declined"}
        rules = views.threshold_rules(runs, 3000)
        assert {"window", "trigger", "target"} <= set(rules["kind"])
        spec = charts.tokens_chart(series, events, rules, selected_step=3).to_dict()
        assert _embedded_rows(spec) < views.MAX_CHART_ROWS

    def test_rules_shared_by_both_setups_are_merged(self, runs):
        rules = views.threshold_rules(runs, 3000)
        triggers = rules[rules["kind"] == "trigger"]
        assert len(triggers) == 1 and triggers.iloc[0]["tokens"] == 2100

    def test_aligned_context_lines_up_originals_and_places_inserted_after_them(self, runs):
        last = len(runs[0][1].steps) - 1
        rows = views.aligned_context(runs, last)
        originals = [r.index for r in rows if r.index is not None]
        assert originals == sorted(originals) and len(set(originals)) == len(originals)
        fates_b = {r.cells["B"].fate for r in rows if r.cells["B"] is not None}
        assert "inserted" in fates_b and "collapsed" in fates_b
        for r in rows:
            if r.index is None:  # an inserted message exists in one setup only, after the originals it follows
                assert sum(item is not None for item in r.cells.values()) >= 1
        pruned = [r for r in rows if r.cells["A"] is not None and r.cells["A"].fate == "pruned"]
        assert pruned and all(r.changed for r in pruned)

    def test_context_strip_chart_covers_every_row_per_setup(self, runs):
        last = len(runs[0][1].steps) - 1
        rows = views.aligned_context(runs, last)
        strip = views.context_strip(rows, ["A", "B"])
        for label in ("A", "B"):
            present = sum(1 for r in rows if r.cells[label] is not None)
            assert strip[strip["setup"] == label]["messages"].sum() == present
        spec = charts.context_strip_chart(strip, ["A", "B"]).to_dict()
        assert spec["encoding"]["color"]["scale"]["domain"] == list(charts.FATE_COLORS)
        # the bands' order is data: B drawn first when the setups are given as B, A — the same spec either way
        flipped = charts.context_strip_data(strip, ["B", "A"])
        assert flipped.layout == charts.context_strip_data(strip, ["A", "B"]).layout
        assert dict(zip(flipped.frames["strip"]["setup"], flipped.frames["strip"]["setup_order"])) == {"B": 0, "A": 1}
        assert spec["encoding"]["y"]["sort"] == {"field": "setup_order", "op": "min"}

    def test_context_strip_is_binned_when_fates_alternate(self):
        from compaction.replay import ContextItem

        msg = user("x")
        rows = [views.AlignedRow((i, 0, 0), i, {"A": ContextItem(i, "pruned" if i % 2 else "kept", msg, msg)})
                for i in range(12_000)]
        strip = views.context_strip(rows, ["A"], max_rows=1000)
        assert len(strip) <= 1000
        assert strip["messages"].sum() == 12_000

    def test_summary_table_saved_tokens_and_percent(self, runs):
        table = views.summary_table(runs)
        assert list(table["Setup"]) == ["—", "A", "B"]
        for (_, rep), row in zip(runs, table.iloc[1:].itertuples(index=False), strict=True):
            s = rep.summary()
            assert row[7] == s["tokens_saved"]
            assert row[8] == pytest.approx(100 * s["tokens_saved"] / s["total_tokens_uncompacted"], abs=0.05)
        assert table.iloc[1]["Tokens saved"] > 0

    def test_default_step_is_the_first_compaction(self, runs):
        first = min(s.step for _, rep in runs for s in rep.steps if s.compacted)
        assert views.default_step(runs) == first
        assert views.neighbour_event(runs, -1, forward=True) == min(
            s.step for _, rep in runs for s in rep.steps if s.triggered)

    def test_message_text_shows_calls_results_and_reasoning(self):
        call = ToolCall(id="1", name="grep", arguments={"pattern": "def main"})
        text = views.message_text(assistant("Searching.", [call]))
        assert "Searching." in text and 'grep({"pattern": "def main"})' in text
        result = views.message_text(tool(call, "main.py:3:def main():", error=True))
        assert result.startswith("[grep result (error)]") and "main.py:3" in result


# ------------------------------------------------------------------------------------------ anatomy and diff
def long_conversation(calls: int) -> Conversation:
    """``calls`` LLM calls reading files with two tools, long enough that pruning repeats many times."""
    from compaction.conversation import LogEvent
    from compaction.conversation import Usage

    messages = [system("You are a coding agent."), user("Fix the failing test in utils.py.")]
    usage = {}
    for i in range(calls):
        name = "read_file" if i % 3 else "grep"
        call = ToolCall(id=f"c{i}", name=name, arguments={"path": f"src/mod{i}.py"})
        messages.append(assistant(f"Reading module {i}.", [call]))
        usage[len(messages) - 1] = Usage(input_tokens=100 + 10 * i, cache_read_tokens=5)
        messages.append(tool(call, f"def f{i}():\n" + "    return 1\n" * 60))
    messages.append(assistant("Done."))
    events = (LogEvent(40, "compaction", "auto", 5000, 900, "summary"),)
    return Conversation(messages=tuple(messages), usage=usage, events=events)


@pytest.fixture(scope="module")
def long_run() -> views.Run:
    conv = long_conversation(1200)
    return ("A", compaction.replay(conv, "haystack.tool_result_pruning", params={"min_tokens": 10},
                                   context_window=6000, compact_at=0.7, compact_to=0.3))


class TestAnatomy:
    def test_composition_counts_each_kind_and_sums_to_the_messages_sent(self, runs):
        label, rep = runs[0]
        frame = anatomy.composition(rep)
        last = len(rep.steps) - 1
        at_last = frame[frame["step"] == last].set_index("kind")["tokens"]
        sent = rep.context_at(last)
        assert at_last.sum() == sum(rep.counter.count_one(i.message) for i in sent)
        assert {"system", "user", "tool calls", "tool result: read_file"} <= set(at_last.index)
        order = anatomy.kind_order(frame["kind"].unique())
        assert order.index("system") < order.index("tool result: read_file")

    def test_composition_of_a_long_log_is_sampled_and_small(self, long_run):
        frame = anatomy.composition(long_run[1])
        assert frame["step"].nunique() == anatomy.COMPOSITION_STEPS
        assert len(frame) <= views.MAX_CHART_ROWS
        spec = charts.composition_chart(frame, anatomy.kind_order(frame["kind"].unique())).to_dict()
        assert _embedded_rows(spec) <= views.MAX_CHART_ROWS

    def test_lifecycle_follows_each_message_from_kept_to_its_fate(self, runs):
        _, rep = runs[0]
        frame = anatomy.lifecycle(rep)
        pruned = frame[frame["fate"] == "pruned"]
        assert not pruned.empty
        first = pruned.iloc[0]
        earlier = frame[(frame["first_index"] == first["first_index"]) & (frame["end"] <= first["start"])]
        assert list(earlier["fate"]) == ["kept"]  # a result is sent as logged until it is pruned
        assert rep.fates_at(int(first["start"]))[int(first["first_index"])] == "pruned"

    def test_lifecycle_of_a_long_log_is_binned_under_the_row_limit(self, long_run):
        frame = anatomy.lifecycle(long_run[1])
        assert 0 < len(frame) <= views.MAX_CHART_ROWS
        binned = anatomy.lifecycle(long_run[1], max_rows=1000)
        assert 0 < len(binned) <= 1000 and binned["messages"].max() > 1
        assert set(binned["fate"]) == set(frame["fate"])
        spec = charts.lifecycle_chart(frame, selected_step=3).to_dict()
        assert _embedded_rows(spec) <= views.MAX_CHART_ROWS

    def test_floor_usage_and_log_events_feed_the_tokens_chart(self, long_run):
        runs_ = [long_run]
        floor = anatomy.floor_series(runs_)
        usage = anatomy.usage_series(long_run[1])
        events = anatomy.log_compactions(long_run[1])
        assert len(floor) == len(long_run[1].steps) and (floor["floor"] > 0).all()
        assert usage["tokens"].iloc[0] == 105 and len(usage) == 1200
        assert list(events["step"]) == [19] and events["pre_tokens"].iloc[0] == 5000
        spec = charts.tokens_chart(views.step_series(runs_), views.compaction_events(runs_),
                                   views.threshold_rules(runs_), floor=floor, usage=usage, log_events=events).to_dict()
        assert _embedded_rows(spec) <= views.MAX_CHART_ROWS
        marks = [_mark(layer) for layer in _layers(spec)]
        assert {"area", "square"} <= set(marks)

    def test_threshold_rules_use_each_setups_own_window(self):
        conv = tiny_conversation()
        runs_ = [("A", compaction.replay(conv, "haystack.tool_result_pruning", context_window=3000)),
                 ("B", compaction.replay(conv, "haystack.tool_result_pruning", context_window=5000))]
        rules = views.threshold_rules(runs_)
        windows = rules[rules["kind"] == "window"]["label"].tolist()
        assert windows == ["context window (A) 3,000", "context window (B) 5,000"]


class TestDiff:
    def test_rows_that_differ_and_their_text_diff(self, runs):
        last = len(runs[0][1].steps) - 1
        rows = views.aligned_context(runs, last)
        differing = views.differing_rows(rows, "A", "B")
        assert differing and all(r.changed for r in differing)
        pruned = next(r for r in differing if r.cells["A"] is not None and r.cells["A"].fate == "pruned")
        diff = views.text_diff(pruned, "A", "B")
        assert diff.startswith("--- setup A\n+++ setup B")
        assert views.differing_rows(rows, "A", "A") == []

    def test_metrics_table_adds_policy_and_information_loss(self, runs):
        from compaction.analysis.information import information_loss

        losses = {label: information_loss(rep).summary() for label, rep in runs}
        table = views.metrics_table(runs, losses)
        assert list(table["Setup"]) == ["—", "A", "B"]
        assert table.loc[1, "Context window"] == 3000
        assert table.loc[1, "First user request survives"] == losses["A"]["first_user_request_survives"]


# ------------------------------------------------------------------------------------------------ lifecycle binning
def _dense_binned(runs: list[list[tuple[int, int, str]]], steps: int, width: int) -> list[tuple[int, int, int, str]]:
    """The straightforward binning the event sweep must reproduce: a message x call matrix of fate codes, the
    commonest code per bin and call (ties to the more drastic fate), runs of equal code per bin."""
    import numpy as np

    from compaction.history import FATES

    codes = {fate: i for i, fate in enumerate(FATES)}
    bins = -(-len(runs) // width)
    grid = np.full((bins * width, steps), -1, dtype=np.int8)
    for pos, own in enumerate(runs):
        for start, end, fate in own:
            grid[pos, start:end] = codes[fate]
    stacked = grid.reshape(bins, width, steps)
    counts = np.stack([(stacked == code).sum(axis=1) for code in range(len(FATES))], axis=-1)
    commonest = np.where(counts.sum(axis=-1) > 0, len(FATES) - 1 - counts[..., ::-1].argmax(axis=-1), -1)
    out = []
    for b, row in enumerate(commonest):
        bounds = [0, *(np.flatnonzero(np.diff(row)) + 1).tolist(), steps]
        out.extend((b, s, e, FATES[row[s]]) for s, e in zip(bounds, bounds[1:], strict=False) if row[s] >= 0)
    return out


@st.composite
def _message_runs(draw) -> tuple[list[list[tuple[int, int, str]]], int]:
    """Fate runs as a replay gives them: each message from the call it appears at to the last call, in pieces."""
    from compaction.history import FATES

    steps = draw(st.integers(1, 40))
    runs = []
    for _ in range(draw(st.integers(1, 60))):
        start = draw(st.integers(0, steps - 1))
        cuts = sorted(set(draw(st.lists(st.integers(start + 1, steps), max_size=4))) - {steps})
        bounds = [start, *cuts, steps]
        fates = draw(st.lists(st.sampled_from(FATES[:4]), min_size=len(bounds) - 1, max_size=len(bounds) - 1))
        runs.append([(a, b, f) for a, b, f in zip(bounds, bounds[1:], fates, strict=False)])
    return runs, steps


@settings(max_examples=200, deadline=None)
@given(_message_runs(), st.sampled_from([2, 4, 8, 16]))
def test_lifecycle_binning_matches_the_dense_computation(drawn, width):
    from compaction.history import FATES

    runs, steps = drawn
    b, start, end, code = anatomy._RunEvents(runs).binned(width, steps)
    swept = [(int(x), int(s), int(e), FATES[c]) for x, s, e, c in zip(b, start, end, code, strict=True)]
    assert swept == _dense_binned(runs, steps, width)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \n\t\u2003é"), max_size=3000), st.integers(2, 200))
def test_previews_squeeze_only_what_they_show(text, limit):
    from compaction.conversation import squeezed_preview

    whole = " ".join(text.split())
    assert squeezed_preview(text, limit) == (whole if len(whole) <= limit else whole[: limit - 1] + "…")
