"""The command-line contract of docs/architecture.md: commands, JSON shapes, and one-line errors with exit status 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from conftest import ROOT

from compaction.cli import main


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_formats_json_lists_readable_and_writable_formats():
    code, text = run("formats", "--json")
    assert code == 0
    names = {f["name"]: f for f in json.loads(text)}
    assert names["openai"]["writable"] and names["haystack"]["writable"]


def test_strategies_json_contract():
    code, text = run("strategies", "--json")
    data = json.loads(text)
    by_name = {s["name"]: s for s in data}
    assert {"haystack.tool_result_pruning", "agent_framework.tool_result_compaction"} <= set(by_name)
    for s in data:
        assert {"name", "family", "title", "params"} <= set(s)
        for p in s["params"]:
            assert {"name", "type", "default", "help"} <= set(p)
            assert p["help"].strip()
    params = {p["name"]: p["default"] for p in by_name["haystack.tool_result_pruning"]["params"]}
    assert params["min_keep_steps"] == 1 and params["min_tokens"] == 200
    assert by_name["agent_framework.tool_result_compaction"]["params"][2]["default"] == 16


def test_info_json_contract(django_log):
    code, text = run("info", str(django_log), "--json")
    assert code == 0
    data = json.loads(text)
    assert data["format"] == "openai"
    conv = data["conversations"][0]
    assert {"id", "messages", "llm_calls", "tool_calls", "tool_results", "reported_usage", "log_compactions"} <= set(conv)
    assert conv["messages"] == 101 and conv["llm_calls"] == 50 and conv["tool_calls"] == 50
    assert any("never answered" in w["message"] for w in data["warnings"])


def test_replay_json_contract_and_context(django_log):
    code, text = run("replay", str(django_log), "--strategy", "haystack.tool_result_pruning", "--context-window",
                     "30000", "--set", "min_keep_steps=2", "--json", "--context-at", "45")
    assert code == 0
    data = json.loads(text)
    assert data["strategy"] == "haystack.tool_result_pruning"
    assert data["params"]["min_keep_steps"] == 2
    assert data["policy"] == {"context_window": 30000, "compact_at": 0.7, "compact_to": 0.4,
                              "context_window_source": "explicit"}
    assert data["counter"] == "approx:4.0"
    assert len(data["steps"]) == data["summary"]["llm_calls"] == 50
    step = data["steps"][0]
    for key in ("step", "message_index", "tokens_uncompacted", "tokens_before", "tokens_sent", "triggered",
                "compacted", "fates", "inserted"):
        assert key in step
    assert set(step["fates"]) == {"pruned", "collapsed", "dropped"}
    compacted = [s for s in data["steps"] if s["compacted"]]
    assert compacted and all(s["tokens_sent"] < s["tokens_before"] for s in compacted)
    assert data["summary"]["compactions"] == len(compacted)
    context = data["context"]
    pruned = [c for c in context if c["fate"] == "pruned"]
    assert pruned and all(c["text"].startswith("[Tool result removed") for c in pruned)
    assert {c["index"] for c in pruned} == set(data["steps"][45]["fates"]["pruned"])
    assert [c["index"] for c in context] == sorted(c["index"] for c in context)


def test_replay_maf_with_custom_trigger(django_log):
    code, text = run("replay", str(django_log), "--strategy", "agent_framework.tool_result_compaction",
                     "--context-window", "30000", "--set", "minimum_preserved_groups=4", "--json",
                     "--context-at", "49")
    data = json.loads(text)
    inserted = [c for c in data["context"] if c["fate"] == "inserted"]
    assert inserted and all(c["text"].startswith("[Tool Calls]\n") for c in inserted)
    assert data["steps"][49]["fates"]["collapsed"]


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["replay", "{log}", "--strategy", "nope"], "unknown strategy 'nope'"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--compact-to", "0.8"], "compact_to"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--set", "min_keep_steps=0"],
         "min_keep_steps"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--set", "bogus=1"], "no parameter"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--set", "min_tokens=abc"],
         "expected a finite whole number"),
        (["replay", "{log}", "--strategy", "agent_framework.tool_result_compaction", "--set",
          "trigger=TokensExceed("], "expected"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--counter", "wat"], "unknown counter"),
        (["replay", "{log}", "--strategy", "haystack.tool_result_pruning", "--context-at", "999"], "LLM calls"),
        (["info", "/nonexistent/file.json"], "cannot read"),
        (["convert", "{log}", "--to", "pdf"], "cannot write format"),
    ],
)
def test_user_errors_are_one_clear_line(django_log, capsys, argv, fragment):
    argv = [a.replace("{log}", str(django_log)) for a in argv]
    code, _ = run(*argv)
    err = capsys.readouterr().err
    assert code == 2
    assert fragment in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_file_errors_name_the_file(tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_bytes(b'{"messages": [ {"role": ')
    code, _ = run("info", str(bad))
    err = capsys.readouterr().err
    assert code == 2 and "broken.json" in err and "line 1" in err


def test_convert_round_trip_haystack_and_openai(django_log, tmp_path):
    from compaction import load

    original = load(django_log)
    for fmt in ("haystack", "openai", "agent-framework"):
        out = tmp_path / f"conv.{fmt}.json"
        code, _ = run("convert", str(django_log), "--to", fmt, "-o", str(out))
        assert code == 0
        again = load(out)
        assert again.format == fmt
        assert len(again.messages) == len(original.messages)
        for a, b in zip(original.messages, again.messages):
            assert a.same_content(b), (fmt, a.preview(), b.preview())


def test_python_dash_m_entry_point(django_log):
    proc = subprocess.run([sys.executable, "-m", "compaction", "info", str(django_log), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["conversations"][0]["llm_calls"] == 50


def test_sweep_writes_csv_and_recommends(django_log, tmp_path):
    out = tmp_path / "sweep.csv"
    code, text = run("sweep", str(django_log), "--strategy", "haystack.tool_result_pruning", "--context-window",
                     "30000", "--axis", "compact_at=0.5:0.9:3", "--axis", "compact_to=0.2,0.4", "--max-compactions",
                     "4", "--no-information", "-o", str(out))
    assert code == 0
    import pandas as pd

    frame = pd.read_csv(out)
    assert len(frame) == 6 and {"compact_at", "compact_to", "dollars", "peak_tokens", "compactions"} <= set(frame)
    assert text.startswith("#1 compact_at=")


def test_sweep_json(django_log):
    code, text = run("sweep", str(django_log), "--strategy", "agent_framework.tool_result_compaction",
                     "--context-window", "30000", "--axis", "minimum_preserved_groups=4,16", "--json")
    data = json.loads(text)
    assert code == 0 and len(data["rows"]) == 2 and "information_loss" in data["rows"][0]


def test_fleet_over_a_folder(tmp_path):
    from conftest import REAL_LOGS

    folder = REAL_LOGS / "openai-plain"
    if not folder.exists():
        pytest.skip("real logs not available")
    out = tmp_path / "fleet.json"
    code, _ = run("fleet", str(folder), "--setup", "prune=haystack.tool_result_pruning:min_keep_steps=2",
                  "--setup", "collapse=agent_framework.tool_result_compaction", "--context-window", "20000",
                  "--no-information", "--workers", "1", "-o", str(out))
    rows = json.loads(out.read_text())
    assert code == 0 and len(rows) == 2 * len(list(folder.glob("*.json")))
    assert {r["setup"] for r in rows} == {"prune", "collapse"}


def test_fleet_with_an_axis_expands_setups(tmp_path):
    from conftest import REAL_LOGS

    folder = REAL_LOGS / "openai-plain"
    if not folder.exists():
        pytest.skip("real logs not available")
    code, text = run("fleet", str(folder), "--strategy", "haystack.tool_result_pruning", "--context-window", "20000",
                     "--axis", "compact_at=0.6,0.8", "--no-information", "--workers", "1", "--json")
    data = json.loads(text)
    assert {a["setup"] for a in data["aggregate"]} == {"haystack.tool_result_pruning compact_at=0.6",
                                                        "haystack.tool_result_pruning compact_at=0.8"}


def test_export_prints_runnable_code():
    code, text = run("export", "--strategy", "haystack.tool_result_pruning", "--set", "min_keep_steps=2",
                     "--context-window", "128000")
    assert code == 0 and "ToolResultPruningCompactor(" in text and "min_keep_steps=2" in text
    code, text = run("export", "--strategy", "anthropic.clear_tool_uses_20250919", "--json")
    assert code == 0 and json.loads(text)[0]["language"]


def test_only_user_errors_exit_2_and_a_bug_exits_1_with_a_short_report(monkeypatch, capsys):
    """The CLI maps the project's own errors (compaction.errors) to status 2; anything else is a bug of ours: status 1
    and one short report, never a traceback."""
    from compaction import cli

    def broken(args, out):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "cmd_formats", broken)
    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda: _with_func(parser(), "formats", broken))
    assert cli.main(["formats"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("compaction: internal error: KeyError") and "Traceback" not in err and err.count("\n") == 1
    assert cli.main(["replay", "nope.json", "--strategy", "haystack.tool_result_pruning"]) == 2
    assert capsys.readouterr().err.startswith("compaction: error: ")


def _with_func(parser, command, func):
    """``parser`` with ``command``'s handler replaced."""
    import argparse

    for action in parser._subparsers._group_actions:
        if isinstance(action, argparse._SubParsersAction):
            action.choices[command].set_defaults(func=func)
    return parser
