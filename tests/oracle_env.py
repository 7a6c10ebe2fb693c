"""Oracle environments: the real libraries a differential test drives, each in its own virtual environment built
once under a cache folder, so their pinned dependencies never touch the test environment.

A library whose release pins or downgrades what the suite needs (aider-chat pins everything; google-adk downgrades
opentelemetry, watchdog, websockets) runs there: the test writes the log's messages as JSON to a driver script in
``tests/oracles/`` and reads the library's answer back. The folder is ``$COMPACTION_LAB_ORACLES`` or
``~/.cache/compaction-lab/oracles``; a build that fails (no package index) skips the test with the reason.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ORACLES = Path(os.environ.get("COMPACTION_LAB_ORACLES") or Path.home() / ".cache" / "compaction-lab" / "oracles")
DRIVERS = Path(__file__).resolve().parent / "oracles"
#: a build installs a few hundred packages at most
BUILD_SECONDS = 1200
RUN_SECONDS = 600


def oracle_python(name: str, requirements: tuple[str, ...]) -> Path:
    """The interpreter of the oracle environment ``name`` holding exactly ``requirements`` (built on first use,
    under a lock so parallel test workers build it once)."""
    folder = ORACLES / name
    python = folder / "bin" / "python"
    marker = folder / "ready.json"
    wanted = json.dumps(sorted(requirements))
    if marker.exists() and marker.read_text() == wanted and python.exists():
        return python
    ORACLES.mkdir(parents=True, exist_ok=True)
    with open(ORACLES / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text() == wanted and python.exists():
            return python
        marker.unlink(missing_ok=True)
        steps = ([sys.executable, "-m", "venv", "--clear", str(folder)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements])
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=BUILD_SECONDS)
            except (OSError, subprocess.TimeoutExpired) as exc:
                pytest.skip(f"could not build the {name} oracle environment ({' '.join(requirements)}): {exc}")
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                pytest.skip(f"could not build the {name} oracle environment ({' '.join(requirements)}): "
                            f"{' / '.join(tail)}")
        marker.write_text(wanted)
    return python


def run_oracle(python: Path, driver: str, payload: Any, env: dict[str, str] | None = None) -> Any:
    """Run ``tests/oracles/<driver>`` with ``payload`` as JSON on stdin; its JSON answer."""
    done = subprocess.run([str(python), str(DRIVERS / driver)], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=RUN_SECONDS, env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{driver} failed:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout)
