"""Production configuration for Haystack: ``CompactionHook`` + compactor wired into an ``Agent``."""

from __future__ import annotations

from collections.abc import Sequence

from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import kwargs
from .base import py_call
from .base import py_import
from .base import register_exporter

HAYSTACK_COMPACTORS = {
    "tool_result_pruning": ("ToolResultPruningCompactor", ("min_keep_steps", "min_tokens", "placeholder",
                                                          "skip_meta_keys")),
    "sliding_window": ("SlidingWindowCompactor", ("min_keep_steps", "omission_note")),
    "summarization": ("SummarizationCompactor", ("min_keep_steps", "approximate_summary_tokens",
                                                 "summary_instruction", "raise_on_failure")),
    "tool_result_offloading": ("ToolResultOffloadCompactor", ("min_keep_steps", "min_tokens", "preview_chars")),
}


def haystack_counter(setup: ResolvedSetup) -> tuple[str | None, str, str]:
    """(``token_counter=`` expression or None for the hook's default, its class to import, a note)."""
    kind, arg = setup.counter_kind, setup.counter_arg
    if kind == "approx":
        cpt = float(arg) if arg else 4.0
        if cpt == 4.0:
            return None, "", ""
        return f"ApproximateTokenCounter(chars_per_token={cpt!r})", "ApproximateTokenCounter", ""
    if kind == "tiktoken":
        return f"TiktokenCounter(encoding={(arg or 'o200k_base')!r})", "TiktokenCounter", ""
    return None, "", (f"The replay counted with {setup.counter!r}, which Haystack does not ship; the hook below uses "
                      "its default ApproximateTokenCounter(), so its numbers (and when it fires) will differ.")


def _haystack_compactor(setup: ResolvedSetup, kind: str, prefix: str = "") -> tuple[str, str, list[str], str]:
    """(class name, constructor expression, fill-in names, note) for one compactor of a setup."""
    cls, names = HAYSTACK_COMPACTORS[kind]
    pairs = setup.non_default(names, prefix)
    pairs = [(n, None if n == "omission_note" and v == "" else v) for n, v in pairs]
    args, fill, notes = [], [], []
    if kind == "summarization":
        args.append("chat_generator=summary_generator")
        fill.append("summary_generator")
        if setup.params[prefix + "summary_instruction"] == setup.info.defaults()[prefix + "summary_instruction"]:
            notes.append("summary_instruction is left at Haystack's own default (the replay used a paraphrase of it).")
    if kind == "tool_result_offloading":
        args.append("store")
        fill.append("store")
        notes.append("The replay used an in-memory store that keeps results with image/file parts in context; a "
                     "FileSystemToolResultStore offloads those too.")
    args += kwargs(pairs)
    return cls, py_call(cls, args), fill, " ".join(notes)


def _haystack_fill_ins(setup: ResolvedSetup, fill: Sequence[str]) -> list[str]:
    lines = [
        "from haystack.components.generators.chat import OpenAIChatGenerator  # " + FILL_IN,
        fill_in_line("chat_generator", 'OpenAIChatGenerator(model="gpt-4o")', "the chat generator your agent uses"),
        fill_in_line("tools", "[]", "your agent's tools"),
    ]
    model = setup.params.get("summarizer_model") or "gpt-4o-mini"
    if "summary_generator" in fill:
        lines.append(fill_in_line("summary_generator", f"OpenAIChatGenerator(model={model!r})",
                                  "the chat generator that writes the summaries"))
    if "store" in fill:
        lines.insert(0, "from haystack.hooks.tool_result_offloading import FileSystemToolResultStore  # " + FILL_IN)
        lines.append(fill_in_line("store", 'FileSystemToolResultStore("tool_results")',
                                  "where offloaded tool results are written"))
    return lines


def export_haystack(setup: ResolvedSetup) -> list[Snippet]:
    """``CompactionHook(compactor, …)`` (two hooks for ``haystack.stack``) in an ``Agent(hooks=…)``."""
    kind = setup.info.name.split(".", 1)[1]
    if kind == "stack":
        backup = setup.params["second"]
        first = _haystack_compactor(setup, "tool_result_pruning", "prune_")
        second = _haystack_compactor(setup, backup, "second_")
        compactors = [("pruning", first), ("backup", second)]
    else:
        compactors = [("", _haystack_compactor(setup, kind))]
    counter_expr, counter_cls, counter_note = haystack_counter(setup)
    hook_args_tail = [f"context_window={setup.context_window!r}"]
    if setup.compact_at != 0.7:
        hook_args_tail.append(f"compact_at={setup.compact_at!r}")
    if setup.compact_to != 0.4:
        hook_args_tail.append(f"compact_to={setup.compact_to!r}")
    if counter_expr:
        hook_args_tail.append(f"token_counter={counter_expr}")
    fill = [name for _, (_, _, names, _) in compactors for name in names]
    classes = sorted({"CompactionHook", *(c for _, (c, _, _, _) in compactors)})
    lines = ["from haystack.components.agents import Agent", py_import("haystack.hooks.compaction", classes)]
    if counter_cls:
        lines.append(f"from haystack.token_counters import {counter_cls}")
    lines += ["", *_haystack_fill_ins(setup, fill), ""]
    hook_names = []
    for role, (_, expr, _, _) in compactors:
        compactor_var = f"{role}_compactor" if role else "compactor"
        hook_var = f"{role}_hook" if role else "hook"
        lines.append(f"{compactor_var} = {expr}")
        lines.append(f"{hook_var} = {py_call('CompactionHook', [compactor_var, *hook_args_tail])}")
        hook_names.append(hook_var)
    lines.append("")
    lines.append(f'agent = Agent(chat_generator=chat_generator, tools=tools, hooks={{"before_llm": '
                 f'[{", ".join(hook_names)}]}})')
    notes = [n for n in (counter_note, *(c[3] for _, c in compactors)) if n]
    if kind == "stack":
        notes.insert(0, "Both hooks share the thresholds and counter and run in order before every LLM call; the "
                        "backup only fires if the context is still over the trigger after pruning.")
    return [Snippet("python", "Haystack Agent with CompactionHook", "\n".join(lines) + "\n", " ".join(notes),
                    ("chat_generator", "tools", *fill))]


register_exporter("haystack", frozenset({*HAYSTACK_COMPACTORS, "stack"}), export_haystack)
