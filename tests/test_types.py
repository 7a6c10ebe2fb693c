"""mypy stays clean for the whole project (issue 16, "Types and errors").

Runs mypy with the project's ``[tool.mypy]`` configuration (every module of ``compaction``, and ``app.py``) and fails on
any error.
Skipped when mypy is not installed (the ``test`` extra installs it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parent.parent

_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):\d+: error: ", re.M)


@pytest.mark.slow
def test_typed_modules_are_mypy_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out, err, _ = api.run(["--cache-dir=/dev/null"])
    assert not err.strip(), err
    errors = [line for line in out.splitlines() if _ERROR.match(line)]
    assert not errors, "\n".join(errors)
