"""Production configuration for LangChain v1: the middleware on ``create_agent``."""

from __future__ import annotations

import json
from typing import Any

from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import kwargs
from .base import py
from .base import py_call
from .base import register_exporter


def langchain_trigger(text: str) -> Any:
    """The replay's trigger text as LangChain's ``trigger``: a ``(kind, value)`` tuple, a ``{kind: value}`` clause
    (all must hold), or a list of those (any may hold); ``None`` when empty."""
    from ..strategies.langchain import parse_trigger as parse_langchain_trigger

    clauses = parse_langchain_trigger(text)
    rendered = [next((s.kind, s.value) for s in c.values()) if len(c) == 1 else {k: s.value for k, s in c.items()}
                for c in clauses]
    if not rendered:
        return None
    return rendered[0] if len(rendered) == 1 else rendered


def _langchain_counter(setup: ResolvedSetup, lines: list[str], notes: list[str]) -> str | None:
    kind, arg = setup.counter_kind, setup.counter_arg
    if kind == "approx" and (not arg or float(arg) == 4.0):  # the replay used LangChain's own counter at 4.0
        notes.append("LangChain's default token counter picks chars_per_token from the model (3.3 for Claude "
                     "models, 4.0 otherwise); the replay counted at 4.0.")
        return None
    if kind == "langchain":
        cpt = float(arg) if arg else 4.0
        lines.append("from functools import partial")
        lines.append("from langchain_core.messages.utils import count_tokens_approximately")
        return f"partial(count_tokens_approximately, chars_per_token={cpt!r})"
    notes.append(f"The replay counted with {setup.counter!r}; LangChain counts with count_tokens_approximately "
                 "unless you pass a token_counter of your own.")
    return None


def export_langchain(setup: ResolvedSetup) -> list[Snippet]:
    """``create_agent(model, tools, middleware=[…])`` with SummarizationMiddleware or ContextEditingMiddleware."""
    from ..strategies.langchain import parse_context_size

    p, kind = setup.params, setup.info.name.split(".", 1)[1]
    imports = ["from langchain.agents import create_agent"]
    extra_imports: list[str] = []
    notes: list[str] = []
    fill = ["model", "tools"]
    if kind == "summarization":
        imports.append("from langchain.agents.middleware import SummarizationMiddleware")
        trigger = langchain_trigger(p["trigger"])
        keep = parse_context_size(p["keep"], "keep")
        args = ["model=summary_model", f"trigger={py(trigger)}", f"keep={(keep.kind, keep.value)!r}"]
        if trigger is None:
            notes.append("trigger=None: this middleware never summarizes (LangChain's default).")
        if p["trim_tokens_to_summarize"] != 4000:
            args.append(f"trim_tokens_to_summarize={p['trim_tokens_to_summarize'] or None!r}")
        newer = [(n, setup.params[n] or None) for n, _ in setup.non_default(
            ("max_consecutive_summary_failures", "hard_token_ceiling"))]
        args += kwargs(newer)
        if newer:
            notes.append(f"{', '.join(n for n, _ in newer)} need a LangChain release that has them (newer than 1.5).")
        if setup.non_default(("summary_prompt",)):
            args.append(f"summary_prompt={p['summary_prompt']!r}")
        else:
            notes.append("summary_prompt is left at LangChain's own default (the replay used a paraphrase of it).")
        counter = _langchain_counter(setup, extra_imports, notes)
        if counter:
            args.append(f"token_counter={counter}")
        if "fraction" in json.dumps(trigger) or keep.kind == "fraction":
            notes.append(f"`fraction` sizes are relative to the model profile's max_input_tokens; the replay used "
                         f"context_window={setup.context_window}.")
        middleware = py_call("SummarizationMiddleware", args)
        fill.append("summary_model")
    else:
        imports.append("from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware")
        edit_args = kwargs([("trigger", p["trigger"]), ("clear_at_least", p["clear_at_least"]), ("keep", p["keep"])])
        edit_args += kwargs(setup.non_default(("clear_tool_inputs", "exclude_tools", "placeholder")))
        edit = py_call("ClearToolUsesEdit", edit_args)
        args = [f"edits=[{edit}]" if "\n" not in edit else "edits=[\n    " + edit.replace("\n", "\n    ") + ",\n]"]
        if p["token_count_method"] != "approximate":
            args.append(f"token_count_method={p['token_count_method']!r}")
        counter = _langchain_counter(setup, extra_imports, notes)
        if counter:
            args.append(f"token_counter={counter}")
        middleware = py_call("ContextEditingMiddleware", args)
    lines = [*sorted([*imports, *extra_imports]), "",
             fill_in_line("model", '"openai:gpt-4o"', "the agent's chat model (a name or a BaseChatModel)"),
             fill_in_line("tools", "[]", "your agent's tools")]
    if "summary_model" in fill:
        model = p.get("summarizer_model") or "openai:gpt-4o-mini"
        lines.append(fill_in_line("summary_model", py(model), "the model that writes the summaries"))
    lines += ["", f"compaction_middleware = {middleware}",
              "agent = create_agent(model, tools, middleware=[compaction_middleware])"]
    return [Snippet("python", "LangChain v1 create_agent with middleware", "\n".join(lines) + "\n",
                    " ".join(notes), tuple(fill))]


register_exporter("langchain", frozenset({"summarization", "context_editing"}), export_langchain)
