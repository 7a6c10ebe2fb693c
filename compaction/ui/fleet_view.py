"""Fleet: run the setups over many logs (uploaded, or a folder on the server) and read the distribution.

:func:`show_fleet` is a self-contained component; its session-state keys start with its ``key``, except
:data:`OPEN_LOG_KEY`, which it writes for the explorer: ``{"name", "path", "data", "conversation"}`` of the log a
user chose to open (``path`` is None for an uploaded file, whose bytes are in ``data``).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import streamlit as st

from compaction import cost_charts
from compaction.analysis import views
from compaction.analysis.costs import PriceModel
from compaction.analysis.costs import price_model
from compaction.analysis.fleet import FleetResult
from compaction.analysis.fleet import find_logs
from compaction.analysis.fleet import fleet
from compaction.setups import Setup

from . import navigation
from .costs import choose_prices
from .guard import section
from .guard import show_error
from .text import escape_markdown

#: where the chosen log goes for the explorer to open
OPEN_LOG_KEY = "fleet_open_log"
MAX_LOGS = 500
WORKERS = 2
WORST_METRICS = ("dollars", "peak_tokens", "compactions")
SOURCES = ("Upload files", "A folder on the server")
#: offered only where the explorer offers this machine's sessions (see :mod:`.local_sessions`)
DISCOVERED = "Every session on this machine"
DOLLAR_COLUMNS = {name: st.column_config.NumberColumn(name, format="$%.4f") for name in (
    "dollars", "baseline_dollars", "median_dollars", "p90_dollars", "total_dollars", "total_baseline_dollars")}


@dataclass
class FleetLog:
    """One log of a fleet run: its display name and where its bytes come from."""

    name: str
    path: str | None = None  # a server path (folder logs)
    data: bytes | None = field(default=None, repr=False)  # an uploaded file's bytes


@dataclass
class FleetRun:
    """A finished fleet run: the library result and the logs it ran over, by the path it was run under."""

    result: FleetResult
    logs: dict[str, FleetLog]

    @property
    def names(self) -> dict[str, str]:
        return {path: log.name for path, log in self.logs.items()}


def folder_logs(folder: str) -> list[FleetLog]:
    """The logs under a server ``folder``; ``ValueError`` when it is not a readable folder with logs in it."""
    text = folder.strip()
    if not text:
        raise ValueError("enter the path of a folder of logs")
    root = Path(text).expanduser()
    if not root.is_dir():
        raise ValueError(f"{text} is not a folder on the server")
    paths = find_logs(root.resolve())
    if not paths:
        raise ValueError(f"{text} holds no log files (.json, .jsonl, .traj, .eval)")
    if len(paths) > MAX_LOGS:
        raise ValueError(f"{text} holds {len(paths)} logs; choose a folder with at most {MAX_LOGS}")
    return [FleetLog(str(p.relative_to(root.resolve())), path=str(p)) for p in paths]


def _safe_name(position: int, name: str) -> str:
    """A file name for an upload inside the run's temporary folder: numbered, only safe characters, same suffix."""
    base = Path(name).name or "log"
    return f"{position:04d}_{re.sub(r'[^A-Za-z0-9._-]', '_', base)[-120:]}"


def discovered_logs() -> list[FleetLog]:
    """The log files of every session ``discover`` finds, newest first, at most :data:`MAX_LOGS`."""
    from compaction.analysis.corpus import corpus

    return [FleetLog(p.name, path=str(p)) for p in corpus(discovered=True)[:MAX_LOGS]]


def _choose_logs(key: str) -> list[FleetLog]:
    from . import local_sessions

    sources = (*SOURCES, DISCOVERED) if local_sessions.enabled() else SOURCES
    source = st.radio("Logs from", sources, horizontal=True, key=f"{key}_source")
    if source == DISCOVERED:
        try:
            logs = discovered_logs()
        except (ValueError, OSError) as exc:
            show_error("Cannot list this machine's sessions", exc)
            return []
        st.caption(f"{len(logs)} session logs found" + (f" (the newest {MAX_LOGS})" if len(logs) == MAX_LOGS else "")
                   + ".")
        return logs
    if source == SOURCES[0]:
        files = st.file_uploader("Agent logs (any supported format)", accept_multiple_files=True, key=f"{key}_files")
        if files and len(files) > MAX_LOGS:
            st.error(f"**Too many files** — {len(files)} uploaded; at most {MAX_LOGS} per run.", icon=":material/block:")
            return []
        return [FleetLog(f.name, data=f.getvalue()) for f in files or []]
    folder = st.text_input("Folder on the server", key=f"{key}_folder", placeholder="/data/agent-logs")
    if not folder.strip():
        return []
    try:
        logs = folder_logs(folder)
    except (ValueError, OSError) as exc:
        show_error("Cannot use this folder", exc)
        return []
    st.caption(f"{len(logs)} logs found.")
    return logs


def _run(logs: Sequence[FleetLog], setups: Sequence[tuple[str, Setup]], prices: PriceModel, with_information: bool
         ) -> FleetRun:
    bar = st.progress(0.0, text=f"Running {len(setups)} setups over {len(logs)} logs…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(done / max(total, 1), 1.0), text=f"{done:,} of {total:,} rows (conversation × setup)")

    workdir = tempfile.mkdtemp(prefix="compaction-fleet-")
    try:
        by_path: dict[str, FleetLog] = {}
        for position, log in enumerate(logs):
            if log.data is not None:
                path = Path(workdir) / _safe_name(position, log.name)
                path.write_bytes(log.data)
                by_path[str(path)] = log
            else:
                by_path[str(log.path)] = log
        result = fleet(list(by_path), setups, prices=prices, workers=WORKERS, with_information=with_information,
                       progress=progress)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    bar.empty()
    return FleetRun(result, by_path)


def worst_conversations(result: FleetResult, metric: str, n: int = 5) -> list[dict[str, Any]]:
    """The ``n`` conversations with the highest ``metric`` under any setup, each once (its worst setup's row)."""
    seen: set[tuple[str, Any]] = set()
    out = []
    for row in result.worst(metric, len(result.rows)):
        if (row["log"], row["conversation"]) not in seen:
            seen.add((row["log"], row["conversation"]))
            out.append(row)
    return out[:n]


def _show_errors(run: FleetRun) -> None:
    for row in run.result.errors:
        name = run.names.get(row["log"], row["log"])
        what = (f"Setup {escape_markdown(str(row['setup']))} could not run on {escape_markdown(name)}"
                if row.get("setup") else f"Could not read {escape_markdown(name)}")
        st.error(f"**{what}** — {escape_markdown(str(row['error']))}", icon=":material/error:")


def _open_button(run: FleetRun, row: Mapping[str, Any], metric: str, key: str) -> None:
    log = run.logs[row["log"]]
    title = cost_charts.METRIC_TITLES.get(metric, metric)
    value = f"${row[metric]:,.4f}" if metric == "dollars" else f"{row[metric]:,}"
    left, right = st.columns([4, 1])
    left.markdown(f"**{escape_markdown(log.name)}** · conversation {escape_markdown(str(row['conversation']))} · "
                  f"setup {escape_markdown(str(row['setup']))} · {title}: {escape_markdown(value)}")
    right.button("Open in the explorer", key=key, on_click=_open_in_explorer, args=(log, row["conversation"]),
                 help="Replaces the log in the explorer with this one (until you close it there) and opens it.")


def _open_in_explorer(log: FleetLog, conversation: str) -> None:
    try:
        data = log.data if log.data is not None else Path(str(log.path)).read_bytes()
    except OSError as exc:
        show_error(f"Could not open {escape_markdown(log.name)}", exc)
        return
    st.session_state[OPEN_LOG_KEY] = {"name": log.name, "path": log.path, "data": data, "conversation": conversation}
    navigation.go_to("explore")


def _show_result(run: FleetRun, setups: Sequence[tuple[str, Setup]], colors: Mapping[str, str], key: str) -> None:
    _show_errors(run)
    aggregate = run.result.aggregate()
    if not aggregate:
        st.error("**No log could be run** — see the errors above.", icon=":material/block:")
        return
    found = run.result.answer()
    st.subheader("Best setting")
    st.markdown("\n".join(f"- {escape_markdown(line)}" for line in found.lines()))
    st.subheader("Aggregate per setup")
    st.dataframe(aggregate, hide_index=True, key=f"{key}_aggregate", column_config=DOLLAR_COLUMNS)
    frame = views.fleet_display(run.result.rows, run.names)
    metric = st.selectbox("Distribution of", WORST_METRICS, format_func=lambda m: cost_charts.METRIC_TITLES[m],
                          key=f"{key}_metric")
    st.altair_chart(cost_charts.fleet_distribution_chart(frame, metric, colors), key=f"{key}_distribution")
    st.subheader("Per log")
    st.dataframe(frame, hide_index=True, key=f"{key}_rows", column_config=DOLLAR_COLUMNS)
    st.subheader(f"Worst logs by {cost_charts.METRIC_TITLES[metric].lower()}")
    for position, row in enumerate(worst_conversations(run.result, metric)):
        _open_button(run, row, metric, f"{key}_open_{position}")
    document = {"rows": json.loads(frame.to_json(orient="records")), "aggregate": aggregate,
                "setups": [{"name": name, **setup.to_json()} for name, setup in setups]}
    left, right = st.columns(2)
    left.download_button("Download per-log CSV", frame.to_csv(index=False), file_name="fleet.csv",
                         mime="text/csv", key=f"{key}_csv")
    right.download_button("Download JSON", json.dumps(document, indent=1, default=str), file_name="fleet.json",
                          mime="application/json", key=f"{key}_json")


def show_fleet(setups: Sequence[tuple[str, Setup]], key: str = "fleet",
               colors: Mapping[str, str] | None = None) -> None:
    """The fleet component: choose logs, run the named ``setups`` over every conversation in them (local
    processes), and show aggregate and per-log tables, distributions, the worst logs and downloads."""
    if not setups:
        st.info("Add at least one valid setup to run it over a fleet of logs.", icon=":material/tune:")
        return
    logs = _choose_logs(key)
    with_information = st.checkbox("Score information loss too (slower)", value=False, key=f"{key}_information")
    prices = price_model()
    with section("Prices"):
        prices = choose_prices(f"{key}_prices", prices.model)
    if st.button(f"Run {len(setups)} setups over {len(logs)} logs", key=f"{key}_run", type="primary",
                 disabled=not logs):
        with section("Fleet run"):
            st.session_state[f"{key}_result"] = _run(logs, setups, prices, with_information)
    run = st.session_state.get(f"{key}_result")
    if run is None:
        st.info("Choose the logs and run the setups over them.", icon=":material/folder_open:")
        return
    with section("Fleet results"):
        _show_result(run, setups, colors or {}, key)
