"""Production configuration for Inspect AI: the compaction strategy of a ``react()`` agent."""

from __future__ import annotations

from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import py
from .base import py_call
from .base import register_exporter

INSPECT_CLASSES = {"edit": "CompactionEdit", "trim": "CompactionTrim", "summary": "CompactionSummary"}


def _inspect_threshold(value: float) -> float | int:
    """Inspect reads a float in (0, 1] as a share of the window and an int as tokens."""
    return float(value) if value <= 1 else int(value)


def export_inspect(setup: ResolvedSetup) -> list[Snippet]:
    """``react(tools=…, compaction=Compaction…(…))`` for inspect_ai."""
    kind, p = setup.info.name.split(".", 1)[1], setup.params
    cls = INSPECT_CLASSES[kind]
    args = [f"threshold={_inspect_threshold(p['threshold'])!r}"]
    if not p["memory"]:
        args.append("memory=False")
    if kind == "edit":
        keep = str(p["keep_thinking_turns"]).strip().lower()
        args += [f"keep_thinking_turns={('all' if keep == 'all' else int(keep))!r}",
                 f"keep_tool_uses={p['keep_tool_uses']!r}", f"keep_tool_inputs={p['keep_tool_inputs']!r}"]
        if p["exclude_tools"]:
            args.append(f"exclude_tools={list(p['exclude_tools'])!r}")
    elif kind == "trim":
        args.append(f"preserve={float(p['preserve'])!r}")
    else:
        if p["instructions"]:
            args.append(f"instructions={p['instructions']!r}")
        if p.get("summarizer_model"):
            args.append("model=summary_model")
    fill = ["tools", *(["summary_model"] if "model=summary_model" in args else [])]
    lines = ["from inspect_ai.agent import react", f"from inspect_ai.model import {cls}", "",
             fill_in_line("tools", "[]", "your agent's tools (e.g. [bash(), text_editor()])")]
    if "summary_model" in fill:
        lines.append(fill_in_line("summary_model", py(p["summarizer_model"]), "the model that writes summaries"))
    lines += ["",
             f"compaction = {py_call(cls, args)}",
             "agent = react(tools=tools, compaction=compaction)"]
    note = ("A fractional threshold is a share of the model's own context window (the replay used context_window="
            f"{setup.context_window}).")
    return [Snippet("python", f"Inspect AI react() agent with {cls}", "\n".join(lines) + "\n", note, tuple(fill))]


register_exporter("inspect_ai", frozenset(INSPECT_CLASSES), export_inspect)
