"""Fleet runs equal per-log runs, locally and on a Dask LocalCluster; a bad log costs only itself."""

from __future__ import annotations

import shutil

import pytest

from compaction.analysis.costs import price_model
from compaction.analysis.fleet import find_logs, fleet, run_log
from compaction.analysis.sweep import Setup

SETUPS = [
    ("prune", Setup("haystack.tool_result_pruning", context_window=20000)),
    ("collapse", Setup("agent_framework.tool_result_compaction", context_window=20000,
                       params={"minimum_preserved_groups": 4})),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from conftest import REAL_LOGS

    src = REAL_LOGS / "openai-plain"
    if not src.exists():
        pytest.skip("real logs not available")
    root = tmp_path_factory.mktemp("fleet")
    for p in sorted(src.glob("*.json")):
        shutil.copy(p, root / p.name)
    (root / "nested").mkdir()
    shutil.copy(sorted(src.glob("*.json"))[0], root / "nested" / "copy.json")
    (root / "broken.json").write_text('{"messages": [')
    (root / "notes.txt").write_text("not a log")
    return root


def test_find_logs_recurses_and_filters(folder):
    names = [p.name for p in find_logs(folder)]
    assert "notes.txt" not in names and "copy.json" in names and "broken.json" in names


def test_local_fleet_equals_per_log_runs(folder):
    logs = find_logs(folder)
    result = fleet(logs, SETUPS, workers=2, with_information=False)
    expected = [row for p in logs for row in run_log(str(p), SETUPS, price_model(), False)]
    key = lambda r: (r["log"], str(r.get("conversation")), str(r.get("setup")))  # noqa: E731
    assert sorted(result.rows, key=key) == sorted(expected, key=key)
    assert len(result.errors) == 1 and "broken.json" in result.errors[0]["log"]
    agg = {a["setup"]: a for a in result.aggregate()}
    assert set(agg) == {"prune", "collapse"} and agg["prune"]["conversations"] == len(logs) - 1
    assert agg["prune"]["p90_dollars"] >= agg["prune"]["median_dollars"]
    worst = result.worst("dollars", 2)
    assert worst[0]["dollars"] >= worst[1]["dollars"]


def test_dask_cluster_equals_local(folder):
    distributed = pytest.importorskip("dask.distributed")
    logs = find_logs(folder)[:2]
    local = fleet(logs, SETUPS[:1], workers=1, with_information=False)
    # a cluster at a scheduler address, as `--engine dask --scheduler ADDRESS` uses one (threads: quick to start)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        dask = fleet(logs, SETUPS[:1], engine="dask", scheduler=cluster.scheduler_address, with_information=False)
    assert dask.rows == local.rows


def test_unknown_engine_and_missing_folder_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown engine"):
        fleet([], SETUPS, engine="spark")
    with pytest.raises(ValueError, match="not a folder"):
        find_logs(tmp_path / "nope")
