"""mypy stays clean for the modules typed so far (issue 16, "Types and errors").

Runs mypy with the project's ``[tool.mypy]`` configuration and fails on any error in a module of ``compaction``
outside :data:`NOT_YET_CLEAN`. Skipped when mypy is not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parent.parent

#: files whose remaining errors are for later (edited in parallel, or waiting on a behaviour decision)
NOT_YET_CLEAN = (
    "app.py",
    "compaction/ui/",
    "compaction/charts.py",
    "compaction/run_charts.py",
    "compaction/cost_charts.py",
    "compaction/cli.py",
    "compaction/analysis/fleet.py",
    "compaction/analysis/sweep.py",
    "compaction/analysis/costs.py",
    # checked against the frameworks when they are installed: their lazy re-exports (haystack.tracing, haystack.tools)
    # and LangChain's AgentState are not what these drivers pass; clean where they are not installed
    "compaction/interop/",
)

_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ", re.M)


@pytest.mark.slow
def test_typed_modules_are_mypy_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out, err, _ = api.run(["--cache-dir=/dev/null"])
    assert not err.strip(), err
    errors = [line for line in out.splitlines()
              if (m := _ERROR.match(line)) and not m.group("path").startswith(NOT_YET_CLEAN)]
    assert not errors, "\n".join(errors)
