"""Fleet runs equal per-log runs, locally and on a Dask LocalCluster; work splits by (conversation, setup batch);
rows stream to a resumable CSV or Parquet output that is also the cache; the answer respects the constraints."""

from __future__ import annotations

import shutil

import pytest

from compaction.analysis.corpus import corpus
from compaction.analysis.corpus import file_digest
from compaction.analysis.costs import price_model
from compaction.analysis.fleet import find_logs
from compaction.analysis.fleet import fleet
from compaction.analysis.fleet import run_log
from compaction.analysis.fleet_answer import Constraints
from compaction.analysis.fleet_store import RowStore
from compaction.analysis.fleet_work import NamedSetup
from compaction.analysis.sweep import Setup

SETUPS = [
    ("prune", Setup("haystack.tool_result_pruning", context_window=20000)),
    ("collapse", Setup("agent_framework.tool_result_compaction", context_window=20000,
                       params={"minimum_preserved_groups": 4})),
]
SWEPT = [NamedSetup(f"prune at={a}", Setup("haystack.tool_result_pruning", context_window=20000, compact_at=a),
                    "prune", (("compact_at", a),)) for a in (0.5, 0.7, 0.9)]


def _key(row):
    return row["log"], row.get("conversation_index", -1), str(row.get("setup"))


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


def test_corpus_takes_folders_and_files_once_and_names_a_missing_source(folder, tmp_path):
    logs = find_logs(folder)
    assert corpus([folder, logs[0]]) == logs
    assert corpus([logs[1], logs[0]]) == [logs[1], logs[0]]
    with pytest.raises(ValueError, match="nope: no such file or folder"):
        corpus([tmp_path / "nope"])
    history = tmp_path / "proj" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text("# aider chat started at 2025-01-01 00:00:00\n")
    (tmp_path / "proj" / "README.md").write_text("# not a log")
    assert corpus([tmp_path / "proj"]) == [history]


def test_local_fleet_equals_per_log_runs(folder):
    logs = find_logs(folder)
    result = fleet(logs, SETUPS, workers=2, with_information=False)
    expected = [row for p in logs for row in run_log(str(p), SETUPS, price_model(), False)]
    assert sorted(result.rows, key=_key) == sorted(expected, key=_key)
    assert len(result.errors) == 1 and "broken.json" in result.errors[0]["log"]
    agg = {a["setup"]: a for a in result.aggregate()}
    assert set(agg) == {"prune", "collapse"} and agg["prune"]["conversations"] == len(logs) - 1
    assert agg["prune"]["p90_dollars"] >= agg["prune"]["median_dollars"]
    worst = result.worst("dollars", 2)
    assert worst[0]["dollars"] >= worst[1]["dollars"]


def test_small_tasks_split_by_conversation_and_setup_batch_give_the_same_rows(folder):
    logs = find_logs(folder)
    whole = fleet(logs, SWEPT, workers=1, with_information=True)
    split = fleet(logs, SWEPT, workers=2, with_information=True, task_weight=1)  # every setup its own task
    assert split.rows == whole.rows
    # nested/copy.json has the bytes of another log: its rows are computed once
    assert whole.computed == len({(r["digest"], r.get("conversation_index"), r.get("setup_key")) for r in whole.rows})


def test_output_streams_resumes_and_caches_by_digest(folder, tmp_path):
    shutil.copytree(folder, tmp_path / "logs")
    logs = find_logs(tmp_path / "logs")
    out = tmp_path / "rows.csv"
    first = fleet(logs, SWEPT[:2], workers=1, with_information=False, output=out)
    assert out.exists() and len(RowStore(out).read_index()) == len(logs)
    # interrupted: the last row was half written, and some rows never came
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:-3]) + lines[-3][:20])
    again = fleet(logs, SWEPT[:2], workers=1, with_information=False, output=out)
    assert again.rows == first.rows and again.computed == 3
    # a new setup and a changed file: only their rows are computed
    changed = logs[1]
    changed.write_bytes(changed.read_bytes() + b"\n")
    more = fleet(logs, SWEPT, workers=1, with_information=False, output=out)
    conversations = len([r for r in first.rows if r.get("setup") == SWEPT[0].name])
    assert more.computed == conversations + 2
    without_digest = lambda rows: [{k: v for k, v in r.items() if k != "digest"} for r in rows]  # noqa: E731
    assert without_digest(r for r in more.rows if r.get("setup") != SWEPT[2].name) == without_digest(first.rows)
    assert {r["digest"] for r in more.rows if r["log"] == str(changed)} == {file_digest(changed)}
    assert len(list(RowStore(out).rows())) == first.computed + 3 + more.computed - 3


def test_parquet_output_is_resumable_too(folder, tmp_path):
    pytest.importorskip("pyarrow")
    logs = find_logs(folder)
    out = tmp_path / "rows.parquet"
    first = fleet(logs, SWEPT[:1], workers=1, with_information=False, output=out)
    again = fleet(logs, SWEPT[:1], workers=1, with_information=False, output=out)
    assert again.computed == 0 and again.rows == first.rows


def test_an_output_of_another_kind_is_a_clear_error(folder, tmp_path):
    with pytest.raises(ValueError, match="a .csv file or a .parquet folder"):
        fleet(find_logs(folder), SETUPS, output=tmp_path / "rows.txt")
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="not a fleet output of this version"):
        fleet(find_logs(folder), SETUPS, output=bad)


def test_answer_picks_the_cheapest_setting_meeting_the_constraints(folder):
    result = fleet(find_logs(folder), SWEPT, workers=1, with_information=True)
    found = result.answer(Constraints(max_compactions=12, coverage=0.5))
    ok = [s for s in found.settings if s.coverage >= 0.5]
    assert found.best is ok[0] and found.best.dollars == min(s.dollars for s in ok)
    rows = [r for r in result.rows if r.get("setup") == found.best.setup]
    assert found.best.sessions == len(rows) and found.best.meets == sum(r["compactions"] <= 12 for r in rows)
    hurt = {(h["log"], h["conversation"]) for h in found.best.hurt}
    assert hurt == {(r["log"], r["conversation"]) for r in rows
                    if r["compactions"] > 12 or r["dollars"] > r["baseline_dollars"]}
    assert found.open_next and found.open_next[0]["setup"] == found.best.setup
    assert found.lines()[0].startswith(f"best: {found.best.setup}")
    none = result.answer(Constraints(max_compactions=-1))
    assert none.best is None and none.lines()[0].startswith("no setting meets")


def test_dask_local_cluster_of_two_processes_equals_local(folder):
    distributed = pytest.importorskip("dask.distributed")
    logs = find_logs(folder)
    local = fleet(logs, SWEPT, workers=1, with_information=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask = fleet(logs, SWEPT, engine="dask", scheduler=cluster.scheduler_address, with_information=False,
                     task_weight=1)
    assert dask.rows == local.rows


def test_the_local_cluster_the_engine_starts_gives_its_workers_no_malloc_trim_threshold(monkeypatch):
    pytest.importorskip("dask.distributed")
    import os

    from compaction.analysis.fleet_engines import Engine

    # Dask's nanny would set MALLOC_TRIM_THRESHOLD_=65536 (freed memory returned at once: 15-20 % more CPU)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with Engine("dask", workers=1) as engine:
        assert list(engine.run(["MALLOC_TRIM_THRESHOLD_"], os.getenv)) == [("MALLOC_TRIM_THRESHOLD_", None)]


def test_the_workers_of_the_local_cluster_have_every_strategy_and_reader_imported_before_their_first_task():
    pytest.importorskip("dask.distributed")
    from compaction.analysis.fleet_engines import Engine

    modules = ["compaction.analysis.sweep", "compaction.strategies.haystack", "compaction.formats.claude_code"]
    with Engine("dask", workers=1) as engine:
        loaded = dict(engine.run(modules, lambda name: name in __import__("sys").modules))
    assert loaded == dict.fromkeys(modules, True)


def test_unknown_engine_and_missing_folder_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown engine"):
        fleet([], SETUPS, engine="spark")
    with pytest.raises(ValueError, match="not a folder"):
        find_logs(tmp_path / "nope")


def test_the_cli_sweeps_every_discovered_session_and_resumes(tmp_path, monkeypatch, capsys):
    from conftest import real_log

    from compaction.cli import main

    project = tmp_path / "home" / ".claude" / "projects" / "-work-demo"
    project.mkdir(parents=True)
    shutil.copy(real_log("claude-code/entireio-cli__checkpoint-76-62d755ef9f-2.jsonl"), project / "s1.jsonl")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert corpus(discovered=True) == [project / "s1.jsonl"]
    out = tmp_path / "rows.csv"
    argv = ["fleet", "--discovered", "--setup", "prune=haystack.tool_result_pruning", "--axis",
            "prune:compact_at=0.5,0.9", "--context-window", "60000", "--workers", "1", "--max-compactions", "4",
            "-o", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr()
    assert "best: prune compact_at=" in text.out and "open: " in text.out and "2 rows computed" in text.err
    assert main(argv) == 0 and "0 rows computed, 2 from" in capsys.readouterr().err
    assert main(["fleet", "--strategy", "haystack.tool_result_pruning"]) == 2
    assert "give log files or folders, or --discovered" in capsys.readouterr().err


def test_a_folder_session_is_fingerprinted_by_its_files(tmp_path):
    session = tmp_path / "task"
    (session / "sub").mkdir(parents=True)
    (session / "api_conversation_history.json").write_text("[]")
    (session / "sub" / "ui_messages.json").write_text("[]")
    first = file_digest(session)
    (session / "sub" / "ui_messages.json").write_text("[1]")
    assert file_digest(session) != first
    (session / "sub" / "ui_messages.json").write_text("[]")
    assert file_digest(session) == first


def test_a_fleet_raises_the_collectors_thresholds_while_it_runs_and_restores_them(monkeypatch):
    import gc

    from compaction.analysis import fleet_work
    from compaction.analysis.fleet_work import GC_THRESHOLDS
    from compaction.analysis.fleet_work import fewer_collections

    before = gc.get_threshold()
    seen = []
    run_file = fleet_work.run_file
    monkeypatch.setattr("compaction.analysis.fleet.run_file",
                        lambda task: seen.append(gc.get_threshold()) or run_file(task))
    try:
        gc.set_threshold(500, 10, 30)  # (a higher setting of the caller's stays)
        with fewer_collections():
            with fewer_collections():
                assert gc.get_threshold() == (GC_THRESHOLDS[0], GC_THRESHOLDS[1], 30)
            assert gc.get_threshold() == (GC_THRESHOLDS[0], GC_THRESHOLDS[1], 30)
        assert gc.get_threshold() == (500, 10, 30)
        from conftest import SAMPLES

        fleet([SAMPLES / "coding_agent.haystack.json"], [("a", Setup("haystack.tool_result_pruning"))], workers=1)
        assert seen and all(t[0] == GC_THRESHOLDS[0] for t in seen)
        assert gc.get_threshold() == (500, 10, 30)
        gc.set_threshold(0)  # automatic collection off: left off
        with fewer_collections():
            assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)


def test_small_files_travel_in_groups_larger_first_with_several_workers():
    from compaction.analysis.fleet import GROUP_BYTES
    from compaction.analysis.fleet import GUIDED_MAX_BYTES
    from compaction.analysis.fleet import _grouped

    sizes = sorted([3 << 20] * 4 + [200_000] * 300 + [40_000] * 200, reverse=True)
    files = [(size, f"f{i}") for i, size in enumerate(sizes)]
    size_of = dict((name, size) for size, name in files)
    for slots in (1, 2, 8):
        groups = _grouped(files, slots)
        assert [name for group in groups for name in group] == [name for _, name in files]  # all, in order
        totals = [sum(size_of[name] for name in group) for group in groups]
        limit = GROUP_BYTES if slots == 1 else GUIDED_MAX_BYTES
        assert all(total <= limit or len(group) == 1 for total, group in zip(totals, groups))
        assert totals[-1] <= GROUP_BYTES  # the last tasks are small: the workers finish together
    assert len(_grouped(files, 2)) < len(_grouped(files, 8)) < len(_grouped(files, 1))


def test_the_swept_values_written_are_encoded_once_and_kept_bounded(monkeypatch) -> None:
    import json

    from compaction.analysis import fleet_store

    monkeypatch.setattr(fleet_store, "VALUES_TEXTS_KEPT", 2)
    monkeypatch.setattr(fleet_store, "_values_texts", {})
    for k in range(5):
        assert fleet_store._values_text({"k": k / 4}) == json.dumps({"k": k / 4}, sort_keys=True)
        assert len(fleet_store._values_texts) <= 2
    assert fleet_store._values_text({"k": 1.0}) is fleet_store._values_text({"k": 1.0})
    assert fleet_store._values_text({"k": [1]}) == "{\"k\": [1]}"  # (not plain: encoded, not kept)
    assert all("[" not in text for text in fleet_store._values_texts.values())


def test_row_lines_are_what_the_csv_writer_writes():
    """The store writes each row's line itself, each distinct text quoted by the csv writer once: the same bytes."""
    import csv
    import io
    import json

    import numpy as np

    from compaction.analysis.fleet_store import COLUMNS
    from compaction.analysis.fleet_store import _csv_fields
    from compaction.analysis.fleet_store import _CsvLines

    texts = ["", " ", "plain", "a,b", 'say "hi"', "two\nlines", "cr\r", "tab\tx", "é ü 中", "'quoted'", ",", '"']
    numbers = [0, -3, 10**20, 0.1, -0.0, float("inf"), float("nan"), 1e-300, True, False, np.float64(2.5),
               np.int64(7)]
    rows = [[t, n, None, t * 2, {"k": t}] for t in texts for n in numbers] + [[None], [""], ["", ""], [1.5]]
    expected = io.StringIO()
    csv.writer(expected).writerows(rows)
    lines = _CsvLines()
    assert "".join(lines.line(r) for r in rows) + "".join(lines.line(r) for r in rows) == expected.getvalue() * 2
    swept = [{"b": [1, 2], "a": None}, [], {"x": 1}, {"x": 1.0}, {"x": True}, {"x": "1"}, {"x": 0.0}, {"x": -0.0},
             {"x": float("nan")}, {"x": np.float64(0.5)}, {"x": 0.5}, {"y": 1, "x": 2}, {"x": 2, "y": 1}, {"é": "ü"}]
    for values in [{}, *swept, *swept]:  # (twice: the second time from what was encoded the first)
        assert _csv_fields({"values": values})[COLUMNS.index("values")] == json.dumps(values, sort_keys=True)
