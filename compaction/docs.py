"""The strategy and format references (docs/strategies.md, docs/formats.md), generated from the registries so they
can never drift from the code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .formats import FormatInfo
from .formats import formats
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
    by_family: dict[str, list[Any]] = {}
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


#: what the format reference says where a reader has not described itself yet
NOT_DESCRIBED = "*(not described yet)*"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _detection(names: list[str], i: int) -> str:
    """Where format ``names[i]`` stands in the detection order."""
    around = [f"after `{names[i - 1]}`"] if i > 0 else []
    around += [f"before `{names[i + 1]}`"] if i + 1 < len(names) else []
    return f"tried {_ordinal(i + 1)} of {len(names)}" + (f" ({', '.join(around)})" if around else "")


def formats_markdown(known: Mapping[str, FormatInfo] | None = None) -> str:
    """Markdown for every registered format (``known``, default the registry, in detection order): id, title,
    extensions, place in the detection order, whether it reads folders or can be written, where ``discover`` finds
    its logs, and what it reads and leaves out (``FormatInfo.reads`` / ``leaves_out``; marked when empty)."""
    from .discover import AGENTS

    known = formats() if known is None else known
    names = list(known)
    lines = ["# Log format reference", "",
             "Generated from the format registry by `python tools/build_docs.py`; the test suite fails when it is "
             "out of date.", "",
             "When no format is given (`--format`, or the app's *Format* box), the formats are tried in this order "
             "and the first whose detector accepts the log reads it (an unknown log's error names every format tried "
             "and why it did not fit): " + ", ".join(f"`{n}`" for n in names) + ".", "",
             "`python -m compaction discover` lists the sessions of the agents whose *Found by discover* line says "
             "where, newest first.", ""]
    for i, (name, info) in enumerate(known.items()):
        where = AGENTS[name].where if name in AGENTS else "not looked for: give the file"
        facts = [("Extensions", ", ".join(f"`{e}`" for e in info.extensions) or "none"),
                 ("Detection", _detection(names, i)),
                 ("Folders", "also reads a folder of its files" if info.read_folder is not None else "no"),
                 ("Writable", f"yes (`convert --to {name}`)" if info.write is not None else "no"),
                 ("Found by discover", where)]
        lines += [f"## `{name}` — {info.title}", ""]
        if info.description:
            lines += [_prose(info.description), ""]
        lines += [f"- *{label}:* {value}" for label, value in facts]
        lines += ["", f"**Reads.** {_prose(info.reads) or NOT_DESCRIBED}", "",
                  f"**Leaves out.** {_prose(info.leaves_out) or NOT_DESCRIBED}", ""]
    return "\n".join(lines)


def _prose(text: str) -> str:
    """A reader's own sentence as Markdown that shows it literally (``*`` and ``<…>`` are not markup)."""
    return " ".join(text.split()).replace("*", "\\*").replace("<", "&lt;")
