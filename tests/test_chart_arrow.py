"""The Arrow bytes the app sends for each chart hold what Altair's own sanitizing would have sent."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from altair.utils.core import sanitize_pandas_dataframe
from conftest import sample_paths
from streamlit import dataframe_util

import compaction
from compaction import anatomy
from compaction import charts
from compaction import views
from compaction.ui.cache import arrow_bytes


def _decoded(data: bytes) -> tuple[list[str], list[dict]]:
    table = pa.ipc.open_stream(data).read_all()
    return [str(t) for t in table.schema.types], table.to_pylist()


def _reference(frame: pd.DataFrame) -> tuple[list[str], list[dict]]:
    """What the app sent before: sanitize, then Streamlit's own conversion."""
    return _decoded(dataframe_util.convert_anything_to_arrow_bytes(sanitize_pandas_dataframe(frame)))


def _chart_frames() -> list[tuple[str, pd.DataFrame]]:
    conversation = compaction.load(sample_paths("coding_agent.openai.json")[0])
    runs = [(name, compaction.replay(conversation, name, context_window=30_000))
            for name in ("haystack.tool_result_pruning", "agent_framework.tool_result_compaction")]
    data = [
        charts.tokens_chart_data(views.step_series(runs), views.compaction_events(runs),
                                 views.threshold_rules(runs, 30_000), floor=anatomy.floor_series(runs),
                                 selected_step=3),
        charts.lifecycle_chart_data(anatomy.lifecycle(runs[0][1])),
    ]
    composition = anatomy.composition(runs[1][1])
    data.append(charts.composition_chart_data(composition, anatomy.kind_order(composition["kind"].unique())))
    labels = [label for label, _ in runs]
    step = len(runs[0][1].steps) - 1
    data.append(charts.context_strip_data(views.context_strip(views.aligned_context(runs, step), labels), labels))
    return [(name, frame) for d in data for name, frame in d.frames.items()]


FRAMES = _chart_frames()


@pytest.mark.parametrize(("name", "frame"), FRAMES, ids=[name for name, _ in FRAMES])
def test_chart_frames_carry_the_same_values(name: str, frame: pd.DataFrame):
    assert len(frame) > 0
    types, rows = _decoded(arrow_bytes(frame))
    reference_types, reference_rows = _reference(frame)
    assert rows == reference_rows
    assert types == reference_types


def test_missing_and_infinite_numbers_become_nulls_and_strings_stay_utf8():
    frame = pd.DataFrame({"tokens": [1.5, np.nan, math.inf, -math.inf], "label": ["a", None, "c", "d"],
                          "step": [1, 2, 3, 4]})
    types, rows = _decoded(arrow_bytes(frame))
    assert types == ["double", "string", "int64"]
    assert [r["tokens"] for r in rows] == [1.5, None, None, None]
    assert [r["label"] for r in rows] == ["a", None, "c", "d"]
    assert _reference(frame)[1] == rows
