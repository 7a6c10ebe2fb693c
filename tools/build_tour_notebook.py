"""Builds notebooks/tour.ipynb (run from the repository root: python tools/build_tour_notebook.py)."""

import nbformat as nbf

nb = nbf.v4.new_notebook()
md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell
nb.cells = [
    md("""# A tour of Compaction Lab

This notebook replays a bundled coding-agent run under two compaction strategies and looks at what each one does:
tokens per LLM call against the thresholds, which tool results get pruned or collapsed and when, what a call
actually sent, and what it would cost with prompt caching.

Replay assumes the agent would have acted the same after compaction — the standard offline-replay assumption that
makes runs comparable."""),
    code("""import compaction

conv = compaction.load("../sample_conversations/coding_agent.openai.json")
conv.summary()"""),
    md("""## Two strategies side by side

`haystack.tool_result_pruning` is Haystack's `CompactionHook` + `ToolResultPruningCompactor`: when the context
reaches `compact_at × context_window`, old large tool results are replaced by a placeholder, oldest first, until
it is under `compact_to × context_window`. `agent_framework.tool_result_compaction` is Microsoft Agent Framework's
.NET `ToolResultCompactionStrategy`: old tool-call groups are collapsed into one `[Tool Calls]` digest each, but the
newest 16 groups are never touched."""),
    code("""cmp = compaction.compare(
    conv,
    ["haystack.tool_result_pruning", "agent_framework.tool_result_compaction"],
    context_window=64_000, compact_at=0.7, compact_to=0.4,
)
cmp"""),
    md("""The table and the chart are the same ones the app draws (`cmp.frame()`, `cmp.chart()`).
Setup B peaks above the window: with 16 preserved groups of large file reads, there is not enough it may collapse."""),
    code("""pruning = cmp["A"]
pruning.frame().query("compacted")[["step", "message_index", "tokens_before", "tokens_sent", "note"]]"""),
    md("## What happened at a step"),
    code("""from compaction.explain import warnings_for, what_happened

first = next(s.step for s in pruning.steps if s.compacted)
print(what_happened(pruning, first))
for w in warnings_for(cmp["B"]):
    print("-", w.message)"""),
    md("## What call k actually sent"),
    code("""for item in pruning.context_at(first)[:12]:
    print(f"{item.index!s:>4} {item.fate:<9} {item.message.role:<9} {item.message.preview(90)}")"""),
    md("""## Tokens saved is not money saved

Every compaction rewrites an early part of the context, so the next call pays a cache write for everything after the
first changed message instead of a cheap cache read."""),
    code("""from compaction.analysis import compare_costs, price_model

prices = price_model("claude-sonnet-4-6")
for label, rep in cmp.runs:
    print(label, compare_costs(rep, prices).summary())"""),
    md("## Which thresholds work best?"),
    code("""from compaction.analysis.sweep import linspace, sweep

result = sweep(conv, compaction.Setup("haystack.tool_result_pruning", context_window=64_000),
               {"compact_at": linspace(0.5, 0.9, 5), "compact_to": linspace(0.2, 0.45, 4)}, with_information=False)
for row in result.best(safety=0.95, max_compactions=6):
    print(row["why"])"""),
]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbf.write(nb, "notebooks/tour.ipynb")
