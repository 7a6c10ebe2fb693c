"""The strategy reference (docs/strategies.md), generated from the registry so it can never drift from the code."""

from __future__ import annotations

from .strategies import registry

POLICY_NOTE = {
    "threshold": "uses the shared policy: context_window, compact_at, compact_to",
    "window": "uses context_window only (its own thresholds are fractions of it)",
    "none": "has its own trigger; compact_at / compact_to do not apply",
}


def _cell(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else (f"`{value}`" if value else "*(empty)*")
    return text.replace("|", "\\|").replace("\n", "\\n")


def strategies_markdown() -> str:
    """Markdown for every registered strategy: title, summary, policy, docs link, and a parameter table."""
    lines = ["# Strategy reference", "",
             "Generated from the strategy registry by `python tools/build_docs.py`; the test suite fails when it is "
             "out of date.", ""]
    by_family: dict[str, list] = {}
    for info in registry().values():
        by_family.setdefault(info.family, []).append(info)
    for family in sorted(by_family):
        lines += [f"## {family}", ""]
        for info in sorted(by_family[family], key=lambda s: s.name):
            lines += [f"### `{info.name}` — {info.title}", "", info.summary, "",
                      f"*Policy:* {POLICY_NOTE.get(info.policy, info.policy)}. *Framework docs:* {info.docs_url}", ""]
            if info.params:
                lines += ["| parameter | type | default | what it does |", "|---|---|---|---|"]
                lines += [f"| `{p.name}` | {p.type} | {_cell(p.default)} | {p.help.replace('|', '/')} |"
                          for p in info.params]
                lines.append("")
    return "\n".join(lines)
