"""Streamlit app latency: the server time of a re-render after a parameter change, on a 1,000-call log, and the
number of rows each chart embeds.

The app is driven headless with ``streamlit.testing.v1.AppTest``. It reads its samples from
``COMPACTION_LAB_SAMPLES``: the benchmark points that at a temporary folder holding the cached 1,000-call log under
the default sample's name. The first run (parse + replays) is reported on its own; then compact_at is moved to
values never replayed before (each change replays both setups and recomputes their analyses), then back to each of
them (everything cached), then setup A's ``min_tokens`` to new values (one replay), and each ``run()`` is timed.
Targets: re-render < 300 ms; every chart ≤ 5,000 rows.

    python benchmarks/app_latency.py [--dir DIR] [--changes N]
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from figures import ROOT
from figures import Figure
from figures import data_parser
from figures import print_figures
from figures import timed

RERENDER_TARGET_MS = 300.0
CHART_ROWS_TARGET = 5_000
CHART_TYPES = ("arrow_vega_lite_chart", "vega_lite_chart")


def _rows_in_spec(spec: Any) -> int:
    """Rows of inline data in a Vega-Lite spec: every ``values`` list and every named dataset, layers included."""
    if isinstance(spec, dict):
        rows = 0
        for key, value in spec.items():
            if key == "values" and isinstance(value, list):
                rows += len(value)
            elif key == "datasets" and isinstance(value, dict):
                rows += sum(len(v) for v in value.values() if isinstance(v, list))
            else:
                rows += _rows_in_spec(value)
        return rows
    if isinstance(spec, list):
        return sum(_rows_in_spec(v) for v in spec)
    return 0


def _rows_in_arrow(data: bytes) -> int:
    if not data:
        return 0
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_all().num_rows


def chart_rows(at) -> list[tuple[str, int]]:
    """(chart key or position, rows embedded) for every Vega-Lite chart on the page."""
    out = []
    for kind in CHART_TYPES:
        for position, element in enumerate(at.get(kind)):
            proto = element.proto
            rows = _rows_in_spec(json.loads(proto.spec)) if proto.spec else 0
            if proto.HasField("data"):
                rows += _rows_in_arrow(proto.data.data)
            rows += sum(_rows_in_arrow(d.data.data) for d in proto.datasets)
            out.append((getattr(proto, "id", "") or f"{kind}[{position}]", rows))
    return out


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v:.0f}" for v in values) + " ms"


def run(log: Path, changes: int = 8) -> list[Figure]:
    """Measure the app on ``log``."""
    from streamlit.testing.v1 import AppTest

    from compaction.ui import settings
    from compaction.ui import source
    from compaction.ui import state

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / source.DEFAULT_SAMPLE).symlink_to(log.resolve())
        previous = os.environ.get("COMPACTION_LAB_SAMPLES")
        os.environ["COMPACTION_LAB_SAMPLES"] = folder
        try:
            at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
            with timed() as first:
                at.run()
            if at.exception:
                raise RuntimeError(f"the app raised: {at.exception}")

            def rerun(times: list[float], cpu_times: list[float]) -> None:
                with timed() as t:
                    at.run()
                if at.exception:
                    raise RuntimeError(f"the app raised after a change: {at.exception}")
                times.append(t.wall * 1000)
                cpu_times.append(t.cpu * 1000)

            fresh = [round(0.62 + 0.03 * k, 2) for k in range(changes)]  # never replayed before: replays run
            new_times, new_cpu, back_times, back_cpu = [], [], [], []
            for value, times, cpu_times in [*((v, new_times, new_cpu) for v in fresh),
                                            *((v, back_times, back_cpu) for v in fresh)]:  # then back: cached
                at.slider(key=settings.AT_KEY).set_value(value)
                rerun(times, cpu_times)
            # a strategy parameter of setup A: one replay runs, with its uncompacted series measured anew
            param_key = state.widget_key("A", "haystack.tool_result_pruning", "min_tokens")
            param_times, param_cpu = [], []
            for value in (150 + 25 * k for k in range(changes)):
                at.number_input(key=param_key).set_value(value)
                rerun(param_times, param_cpu)
            rows = chart_rows(at)
        finally:
            if previous is None:
                os.environ.pop("COMPACTION_LAB_SAMPLES", None)
            else:
                os.environ["COMPACTION_LAB_SAMPLES"] = previous
    figures = [
        Figure("app first render (parse + replays), 1,000-call log", first.wall * 1000, "ms",
               note=f"CPU {first.cpu * 1000:.0f} ms"),
        Figure("app re-render, compact_at moved to a new value (replays run)", statistics.median(new_times), "ms",
               f"< {RERENDER_TARGET_MS:g}", RERENDER_TARGET_MS,
               note=f"median of {len(new_times)}: {_ms(new_times)}; CPU {_ms(new_cpu)}"),
        Figure("  slowest of those", max(new_times), "ms", note="a full garbage collection or a cold cache shows here"),
        Figure("app re-render, compact_at moved back (replays cached)", statistics.median(back_times), "ms",
               f"< {RERENDER_TARGET_MS:g}", RERENDER_TARGET_MS,
               note=f"median of {len(back_times)}: {_ms(back_times)}; CPU {_ms(back_cpu)}"),
        Figure("app re-render, setup A's min_tokens to a new value (its replay runs)", statistics.median(param_times),
               "ms", f"< {RERENDER_TARGET_MS:g}", RERENDER_TARGET_MS,
               note=f"median of {len(param_times)}: {_ms(param_times)}; CPU {_ms(param_cpu)}"),
    ]
    figures += [Figure(f"chart rows: {key}", n, "rows", f"<= {CHART_ROWS_TARGET:,}", CHART_ROWS_TARGET)
                for key, n in rows]
    if not rows:
        figures.append(Figure("charts on the page", 0, "charts", note="no Vega-Lite chart found"))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = data_parser(__doc__)
    parser.add_argument("--changes", type=int, default=8, help="new compact_at values to time (and as many returns "
                        "to them; at least 3)")
    args = parser.parse_args(argv)
    if args.changes < 3:
        parser.error("--changes must be at least 3")
    from make_logs import calls_log

    print_figures(run(calls_log(1000, args.dir), args.changes), "app latency")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
