"""Claude Code's replayed compactions against the real sessions' own boundaries, as a table (run from the repository
root): every conversation of every Claude Code log in the folder (default ``../shared/real_logs/claude-code``),
subagents included, replayed with ``claude_code.auto_compact`` (the log's own summaries) and with
``claude_code.microcompact`` forced to the token rule.

    python tools/claude_code_boundaries.py [FOLDER]

For each real ``compact_boundary`` / ``microcompact_boundary``: the call right after it and the replay's nearest
compaction of the same kind, the agent's ``preTokens`` and the replay's measure of Claude Code's count at both calls,
and for a microcompaction the cleared results; then the replayed compactions no real one is near (false alarms).
"""

from __future__ import annotations

import sys
from pathlib import Path

import compaction
from compaction.analysis.claude_code_checks import boundary_rows
from compaction.analysis.claude_code_checks import false_alarms
from compaction.analysis.claude_code_checks import measured_replay

FOLDER = Path(__file__).resolve().parents[1].parent / "shared" / "real_logs" / "claude-code"
RUNS = (("claude_code.auto_compact", {"summarizer": "from-log"}), ("claude_code.microcompact", {"variant": "token"}))


def _n(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def main(folder: Path) -> None:
    header = (f"{'log':<44} {'conversation':<24} {'version':<8} {'kind':<13} {'real call':>9} {'replayed':>9} "
              f"{'preTokens':>10} {'measure@real':>13} {'measure@replay':>15} {'threshold':>10}  cleared (log / replay)")
    print(header)
    alarms = []
    calls = 0
    for path in sorted(folder.glob("*.jsonl")):
        for conv in compaction.load_all_conversations(path):
            for strategy, params in RUNS:
                run = measured_replay(conv, strategy, params)
                calls += len(run.replay.steps) if strategy == RUNS[0][0] else 0
                kind = "compaction" if strategy.endswith("auto_compact") else "microcompact"
                for row in boundary_rows(run):
                    if row.kind != kind:
                        continue
                    cleared = (f"{len(row.cleared_real)} / {len(row.cleared_replayed)}"
                               f"{' same' if set(row.cleared_real) == set(row.cleared_replayed) else ' differ'}"
                               if kind == "microcompact" else "")
                    print(f"{path.stem[:44]:<44} {conv.id[:24]:<24} {row.version:<8} {kind:<13} "
                          f"{_n(row.real_step):>9} {_n(row.replayed_step):>9} {_n(row.pre_tokens):>10} "
                          f"{_n(row.measure_at_real):>13} {_n(row.measure_at_replayed):>15} {_n(row.threshold):>10}  "
                          f"{cleared}")
                if strategy == RUNS[0][0]:
                    alarms += [(path.stem, conv.id, kind, step) for kind, step in false_alarms(run)]
    print(f"\n{calls:,} calls replayed; replayed compactions no real one is near (±2 calls): "
          + (", ".join(f"{log} {conv} {kind} at call {step}" for log, conv, kind, step in alarms) or "none"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER)
