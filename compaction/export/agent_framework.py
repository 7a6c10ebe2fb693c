"""Production configuration for Microsoft Agent Framework (.NET): a strategy behind a ``CompactionProvider`` (C#)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..policy import Trigger
from ..policy import parse_trigger
from ..strategies.base import get_strategy
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import cs_string
from .base import framework_child
from .base import register_exporter

MAF_CS_CLASSES = {
    "tool_result_compaction": "ToolResultCompactionStrategy",
    "truncation": "TruncationCompactionStrategy",
    "sliding_window": "SlidingWindowCompactionStrategy",
    "summarization": "SummarizationCompactionStrategy",
    "pipeline": "PipelineCompactionStrategy",
    "context_window": "ContextWindowCompactionStrategy",
}


def cs_trigger(trigger: Trigger) -> str:
    """A policy :class:`Trigger` as C# ``CompactionTriggers`` code (``Always``/``Never`` are fields)."""
    display = str(trigger).split("(", 1)[0]
    if trigger.kind in ("always", "never"):
        return f"CompactionTriggers.{display}"
    if trigger.children:
        return f"CompactionTriggers.{display}({', '.join(cs_trigger(c) for c in trigger.children)})"
    if trigger.value is not None:
        return f"CompactionTriggers.{display}({int(trigger.value)})"
    return f"CompactionTriggers.{display}()"


def _cs_trigger_args(setup: ResolvedSetup, values: Mapping[str, Any]) -> tuple[str, str | None]:
    """(trigger code, target code or None) as the replay resolves them (see ``trigger_and_target``)."""
    w = setup.context_window
    trigger = parse_trigger(values["trigger"]) if values["trigger"] else Trigger("tokens_exceed",
                                                                                int(w * setup.compact_at))
    if values["target"]:
        target: Trigger | None = parse_trigger(values["target"])
    elif values["trigger"]:
        target = None
    else:
        target = Trigger("tokens_below", int(w * setup.compact_to))
    return cs_trigger(trigger), (cs_trigger(target) if target is not None else None)


CS_FORMATTERS = {
    "first_line": (
        "// Compaction Lab's `first_line` formatter: the [Tool Calls] digest, each result cut to its first line.\n"
        "ToolCallFormatter = group =>\n"
        "{\n"
        "    var results = new Dictionary<string, string>();\n"
        "    var positional = new Queue<string>();\n"
        "    var calls = new List<(string? CallId, string Name)>();\n"
        "    foreach (ChatMessage message in group.Messages)\n"
        "    {\n"
        "        foreach (AIContent content in message.Contents)\n"
        "        {\n"
        "            if (content is FunctionCallContent call) calls.Add((call.CallId, call.Name));\n"
        "            else if (content is FunctionResultContent result) results[result.CallId] = "
        "result.Result?.ToString() ?? \"\";\n"
        "        }\n"
        "        if (message.Role == ChatRole.Tool && !message.Contents.OfType<FunctionResultContent>().Any())\n"
        "            positional.Enqueue(message.Text);\n"
        "    }\n"
        "    var byName = new Dictionary<string, List<string>>();\n"
        "    var order = new List<string>();\n"
        "    foreach (var (callId, name) in calls)\n"
        "    {\n"
        "        string text = callId is not null && results.TryGetValue(callId, out var r) ? r\n"
        "            : positional.Count > 0 ? positional.Dequeue() : \"\";\n"
        "        string line = text.Trim().Split('\\n')[0];\n"
        "        if (line.Length > 200) line = line[..199] + \"\u2026\";\n"
        "        if (!byName.ContainsKey(name)) { byName[name] = new List<string>(); order.Add(name); }\n"
        "        byName[name].Add(line);\n"
        "    }\n"
        "    var lines = new List<string> { \"[Tool Calls]\" };\n"
        "    foreach (string name in order)\n"
        "    {\n"
        "        lines.Add($\"{name}:\");\n"
        "        lines.AddRange(byName[name].Where(t => t.Length > 0).Select(t => $\"  - {t}\"));\n"
        "    }\n"
        "    return string.Join(\"\\n\", lines);\n"
        "},"
    ),
    "names_only": (
        "// Compaction Lab's `names_only` formatter: which tools were called, with their arguments.\n"
        "ToolCallFormatter = group => \"[Tool Calls] \" + string.Join(\"; \", group.Messages\n"
        "    .SelectMany(message => message.Contents.OfType<FunctionCallContent>())\n"
        "    .Select(call => $\"{call.Name}({JsonSerializer.Serialize(call.Arguments)})\")),"
    ),
}


def _cs_strategy(setup: ResolvedSetup, name: str, values: Mapping[str, Any], fill: list[str], notes: list[str],
                 indent: int) -> str:
    """One .NET strategy constructor expression (``new …(…)``), named arguments as in the .NET API."""
    cls = MAF_CS_CLASSES[name]
    pad = " " * (indent + 4)
    args: list[str] = []
    if name in ("tool_result_compaction", "truncation", "sliding_window", "summarization"):
        trigger, target = _cs_trigger_args(setup, values)
        if name == "summarization":
            args.append("summaryClient")
            if "summaryClient" not in fill:
                fill.append("summaryClient")
        args.append(trigger)
        if name == "sliding_window":
            args.append(f"minimumPreservedTurns: {values['minimum_preserved_turns']}")
        else:
            args.append(f"minimumPreservedGroups: {values['minimum_preserved_groups']}")
        if name == "summarization" and values["prompt"]:
            args.append(f"summarizationPrompt: {cs_string(values['prompt'])}")
        elif name == "summarization":
            notes.append("summarizationPrompt is left at .NET's own default (the replay used a paraphrase of it).")
        if target is not None:
            args.append(f"target: {target}")
    elif name == "context_window":
        args = [f"maxContextWindowTokens: {values['max_context_window_tokens'] or setup.context_window}",
                f"maxOutputTokens: {values['max_output_tokens']}",
                f"toolEvictionThreshold: {float(values['tool_eviction_threshold'])!r}",
                f"truncationThreshold: {float(values['truncation_threshold'])!r}"]
    elif name == "pipeline":
        args = [_cs_strategy(setup, child, child_values, fill, notes, indent + 4)
                for child, child_values in _cs_pipeline_children(values)]
    body = ",\n".join(pad + a for a in args)
    expr = f"new {cls}(\n{body})"
    formatter = values.get("formatter", "default") if name == "tool_result_compaction" else "default"
    if formatter != "default":
        inner = "\n".join(pad + line for line in CS_FORMATTERS[formatter].split("\n"))
        expr += "\n" + " " * indent + "{\n" + inner + "\n" + " " * indent + "}"
    return expr


def _cs_pipeline_children(values: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    from ..strategies.agent_framework import PIPELINE_CHILDREN
    from ..strategies.agent_framework import parse_pipeline
    from ..strategies.base import SUMMARIZER_PARAMS

    out = []
    for position, (nested, args) in enumerate(parse_pipeline(values["children"]), start=1):
        name = framework_child(nested, "agent_framework", PIPELINE_CHILDREN, f"pipeline child {position}")
        info = get_strategy(PIPELINE_CHILDREN[name][0])
        own = {p.name for p in info.params}
        inherited = {s.name: values[s.name] for s in SUMMARIZER_PARAMS if s.name in own and s.name not in args}
        out.append((name, info.resolve_params({**inherited, **args})))
    return out



def export_maf_dotnet(setup: ResolvedSetup) -> list[Snippet]:
    """A .NET strategy behind a ``CompactionProvider`` in the chat client pipeline (runs before every model call)."""
    name = setup.info.name.split(".", 1)[1]
    fill: list[str] = []
    strategy_notes: list[str] = []
    expr = _cs_strategy(setup, name, setup.params, fill, strategy_notes, 0)
    usings = ["#pragma warning disable MAAI001 // the compaction API is experimental", "using Microsoft.Agents.AI;",
              "using Microsoft.Agents.AI.Compaction;", "using Microsoft.Extensions.AI;"]
    if "ToolCallFormatter" in expr:
        usings[1:1] = ["using System.Collections.Generic;", "using System.Linq;"]
    if "JsonSerializer" in expr:
        usings.append("using System.Text.Json;")
    lines = [*usings, "",
             f"IChatClient chatClient = null!; // {FILL_IN}: your IChatClient, e.g. "
             'new OpenAIClient(key).GetChatClient("gpt-4o").AsIChatClient()']
    if "summaryClient" in fill:
        lines.append(f"IChatClient summaryClient = null!; // {FILL_IN}: the IChatClient that writes the summaries")
    lines += ["", f"CompactionStrategy compactionStrategy = {expr};", "",
              "AIAgent agent = chatClient",
              "    .AsBuilder()",
              "    .UseFunctionInvocation()",
              "    .UseAIContextProviders(new CompactionProvider(compactionStrategy))",
              "    .BuildAIAgent(new ChatClientAgentOptions",
              "    {",
              "        UseProvidedChatClientAsIs = true,",
              f"        ChatOptions = new ChatOptions {{ Tools = [/* your tools */] }}, // {FILL_IN}",
              "    });"]
    notes = ["The CompactionProvider sits inside the function-invocation loop, so it compacts before every model call "
             "(as the replay does); in ChatClientAgentOptions.AIContextProviders it would run once per agent run."]
    notes += list(dict.fromkeys(strategy_notes))
    if setup.counter != "maf-dotnet":
        notes.append(f"The replay counted with {setup.counter!r}; without a tokenizer the .NET framework estimates "
                     "UTF-8 bytes / 4 (the maf-dotnet counter), so token triggers may fire at different points.")
    if name == "tool_result_compaction" and setup.params["formatter"] != "default":
        notes.append(f"formatter={setup.params['formatter']!r} is a Compaction Lab custom formatter, written out as a "
                     "ToolCallFormatter lambda.")
    return [Snippet("csharp", "Microsoft Agent Framework (.NET) CompactionProvider", "\n".join(lines) + "\n",
                    " ".join(notes), ("chatClient", *fill))]


register_exporter("agent_framework", frozenset(MAF_CS_CLASSES), export_maf_dotnet)
