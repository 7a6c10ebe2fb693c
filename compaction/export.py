""""Use this in production": a replayed setup as the code a user pastes into their own agent.

A *setup* is a registered strategy with its resolved params, the policy (``context_window``, ``compact_at``,
``compact_to``) and a counter spec. :func:`export_setup` turns it into :class:`Snippet` objects for the setup's
framework: Haystack ``CompactionHook`` + compactor wired into an ``Agent``, Microsoft Agent Framework strategies
(Python and C#), the Anthropic ``context_management`` request field, LangChain v1 middleware, SWE-agent YAML.

Values that come from params are always rendered as literals (``repr`` for Python, ``json.dumps`` for JSON, YAML and
C# strings), never pasted raw, so a placeholder holding quotes or braces stays valid code. Lines the user must
replace with their own objects (a chat generator, a client, tools) end with :data:`FILL_IN`; the names they define
are listed in :attr:`Snippet.fill_in`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .policy import Trigger, parse_trigger
from .strategies.base import StrategyInfo, get_strategy
from .tokens import check_counter_spec as validate_counter_spec

#: marks a line of example code the user replaces with their own object (chat generator, client, tools…)
FILL_IN = "← fill in"


@dataclass(frozen=True)
class Snippet:
    """One piece of production code: ``language`` is ``python``, ``csharp``, ``json``, ``yaml``, ``toml`` or
    ``text``."""

    language: str
    title: str
    code: str
    note: str = ""
    #: names the user defines on the lines marked :data:`FILL_IN` (their own generator, client, tools…)
    fill_in: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"language": self.language, "title": self.title, "code": self.code, "note": self.note,
                "fill_in": list(self.fill_in)}


@dataclass(frozen=True)
class Setup:
    """Everything an exporter needs: the strategy, its resolved params, the policy and the counter spec."""

    info: StrategyInfo
    params: Mapping[str, Any]
    context_window: int
    compact_at: float
    compact_to: float
    counter: str

    def non_default(self, names: Iterable[str], prefix: str = "") -> list[tuple[str, Any]]:
        """``(name without prefix, value)`` for the params among ``names`` whose value differs from the default."""
        defaults = self.info.defaults()
        out = []
        for name in names:
            value = self.params[prefix + name]
            if _normalized(value) != _normalized(defaults[prefix + name]):
                out.append((name, value))
        return out

    @property
    def counter_kind(self) -> str:
        return self.counter.partition(":")[0]

    @property
    def counter_arg(self) -> str:
        return self.counter.partition(":")[2]


def _normalized(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# ------------------------------------------------------------------------------------------------ rendering
def py(value: Any) -> str:
    """A Python literal for a param value (strings, numbers, bools, None, tuples and lists of those)."""
    return repr(value)


def py_call(callee: str, args: Sequence[str]) -> str:
    """``callee(a, b)`` on one line when short, else one argument per line, indented by four spaces (the caller
    re-indents the result when it nests it)."""
    one_line = f"{callee}({', '.join(args)})"
    if len(one_line) <= 88 and "\n" not in one_line:
        return one_line
    inner = ",\n".join("    " + a.replace("\n", "\n    ") for a in args)
    return f"{callee}(\n{inner},\n)"


def py_import(module: str, names: Iterable[str]) -> str:
    """``from module import a, b`` (wrapped in parentheses, one name a line, when long)."""
    ordered = sorted(set(names))
    line = f"from {module} import {', '.join(ordered)}"
    if len(line) <= 100:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in ordered) + ")"


def kwargs(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    return [f"{name}={py(value)}" for name, value in pairs]


def fill_in_line(name: str, example: str, what: str) -> str:
    """``name = example  # ← fill in: what`` (the marker tells the user, and tests, what to replace)."""
    return f"{name} = {example}  # {FILL_IN}: {what}"


def cs_string(text: str) -> str:
    """A C# regular string literal (JSON escapes are all valid C# escapes)."""
    return json.dumps(text)


def py_literal_block(value: Any, indent: int = 0) -> str:
    """A JSON-like value as an indented Python literal (``True``/``None``, not JSON's ``true``/``null``)."""
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, dict) and value:
        items = [f"{inner}{k!r}: {py_literal_block(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, (dict, list)) for v in value):
        items = [f"{inner}{py_literal_block(v, indent + 4)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    return repr(list(value) if isinstance(value, tuple) else value)


# ================================================================================================== Haystack
HAYSTACK_COMPACTORS = {
    "tool_result_pruning": ("ToolResultPruningCompactor", ("min_keep_steps", "min_tokens", "placeholder",
                                                          "skip_meta_keys")),
    "sliding_window": ("SlidingWindowCompactor", ("min_keep_steps", "omission_note")),
    "summarization": ("SummarizationCompactor", ("min_keep_steps", "approximate_summary_tokens",
                                                 "summary_instruction", "raise_on_failure")),
    "tool_result_offloading": ("ToolResultOffloadCompactor", ("min_keep_steps", "min_tokens", "preview_chars")),
}


def haystack_counter(setup: Setup) -> tuple[str | None, str, str]:
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


def _haystack_compactor(setup: Setup, kind: str, prefix: str = "") -> tuple[str, str, list[str], str]:
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


def _haystack_fill_ins(setup: Setup, fill: Sequence[str]) -> list[str]:
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


def export_haystack(setup: Setup) -> list[Snippet]:
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


# ============================================================================ Microsoft Agent Framework (Python)
MAF_PY_CLASSES = {
    "truncation": "TruncationStrategy",
    "sliding_window": "SlidingWindowStrategy",
    "selective_tool_call": "SelectiveToolCallCompactionStrategy",
    "tool_result_compaction": "ToolResultCompactionStrategy",
    "summarization": "SummarizationStrategy",
    "token_budget_composed": "TokenBudgetComposedStrategy",
    "context_window": "ContextWindowCompactionStrategy",
}


@dataclass
class _PyBuild:
    """What rendering MAF Python strategies collects besides the expression."""

    imports: set[str]
    fill: list[str]
    notes: list[str]
    custom_tokenizer: str | None = None


def _maf_tokenizer(setup: Setup, values: Mapping[str, Any], build: _PyBuild) -> str:
    """The ``tokenizer=`` expression: the framework's estimator, or a TokenizerProtocol for the replay's counter."""
    if values.get("tokenizer", "character_estimator") == "character_estimator" or setup.counter == "maf-python":
        build.imports.add("CharacterEstimatorTokenizer")
        return "CharacterEstimatorTokenizer()"
    kind, arg = setup.counter_kind, setup.counter_arg
    if kind == "tiktoken":
        build.custom_tokenizer = (
            "import tiktoken\n\n\nclass TiktokenTokenizer:\n"
            '    """A TokenizerProtocol counting the serialized message with tiktoken."""\n\n'
            f"    def __init__(self, encoding: str = {(arg or 'o200k_base')!r}) -> None:\n"
            "        self._encoding = tiktoken.get_encoding(encoding)\n\n"
            "    def count_tokens(self, text: str) -> int:\n"
            "        return len(self._encoding.encode(text))\n"
        )
        return "TiktokenTokenizer()"
    if kind in ("approx", "langchain"):
        cpt = float(arg) if arg else 4.0
        build.custom_tokenizer = (
            "class CharsPerTokenTokenizer:\n"
            '    """A TokenizerProtocol: characters of the serialized message / chars_per_token."""\n\n'
            f"    def __init__(self, chars_per_token: float = {cpt!r}) -> None:\n"
            "        self.chars_per_token = chars_per_token\n\n"
            "    def count_tokens(self, text: str) -> int:\n"
            "        return max(1, int(len(text) / self.chars_per_token))\n"
        )
        build.notes.append(f"The replay counted with {setup.counter!r} over its own rendering of each message; the "
                           "framework hands a tokenizer the message JSON, so counts are close, not identical.")
        return "CharsPerTokenTokenizer()"
    build.imports.add("CharacterEstimatorTokenizer")
    build.notes.append(f"The replay counted with {setup.counter!r}, which has no Python TokenizerProtocol; "
                       "CharacterEstimatorTokenizer() is used instead.")
    return "CharacterEstimatorTokenizer()"


def _maf_py_strategy(setup: Setup, name: str, values: Mapping[str, Any], build: _PyBuild) -> str:
    """One agent-framework Python strategy constructor, from the replay's (resolved) params of ``name``."""
    cls = MAF_PY_CLASSES[name]
    build.imports.add(cls)
    w, at, to = setup.context_window, setup.compact_at, setup.compact_to
    args: list[str] = []
    if name == "truncation":
        tokens = values["metric"] == "tokens"
        max_n = values["max_n"] or (int(w * at) if tokens else 0)
        compact_to = values["compact_to_n"] or (int(w * to) if tokens else 0)
        args = [f"max_n={max_n!r}", f"compact_to={compact_to!r}"]
        if tokens:
            args.append(f"tokenizer={_maf_tokenizer(setup, values, build)}")
        args += kwargs((k, values[k]) for k in ("preserve_system", "preserve_first_user_group")
                       if values[k] != (k == "preserve_system"))
    elif name == "sliding_window":
        args = [f"keep_last_groups={values['keep_last_groups']!r}"]
        if not values["preserve_system"]:
            args.append("preserve_system=False")
    elif name in ("selective_tool_call", "tool_result_compaction"):
        args = [f"keep_last_tool_call_groups={values['keep_last_tool_call_groups']!r}"]
    elif name == "summarization":
        args = ["client=summary_client", f"target_count={values['target_count']!r}",
                f"threshold={values['threshold']!r}",
                f"max_summary_input_tokens={values['max_summary_input_tokens'] or None!r}"]
        if values["prompt"]:
            args.append(f"prompt={values['prompt']!r}")
        else:
            build.notes.append("prompt is left at the framework's own default (the replay used a paraphrase of it).")
        if values["tokenizer"] != "character_estimator":
            args.append(f"tokenizer={_maf_tokenizer(setup, values, build)}")
        if "summary_client" not in build.fill:
            build.fill.append("summary_client")
    elif name == "context_window":
        args = [f"max_context_window_tokens={values['max_context_window_tokens'] or w!r}",
                f"max_output_tokens={values['max_output_tokens']!r}",
                f"tool_eviction_threshold={values['tool_eviction_threshold']!r}",
                f"truncation_threshold={values['truncation_threshold']!r}",
                f"keep_last_tool_call_groups={values['keep_last_tool_call_groups']!r}"]
        if values["preserve_first_user_group"]:
            args.append("preserve_first_user_group=True")
        if values["tokenizer"] != "character_estimator":
            args.append(f"tokenizer={_maf_tokenizer(setup, values, build)}")
    elif name == "token_budget_composed":
        args = [f"token_budget={values['token_budget'] or int(w * at)!r}",
                f"tokenizer={_maf_tokenizer(setup, values, build)}"]
        children = [_maf_py_strategy(setup, child, child_values, build)
                    for child, child_values in _maf_py_children(values)]
        listed = "".join("    " + c.replace("\n", "\n    ") + ",\n" for c in children)
        args.append("strategies=[\n" + listed + "]")
        if not values["early_stop"]:
            args.append("early_stop=False")
    return py_call(cls, args)


def _maf_py_children(values: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The children of a TokenBudgetComposedStrategy, resolved as the replay resolves them."""
    from .strategies.agent_framework import parse_pipeline
    from .strategies.base import SUMMARIZER_PARAMS

    out = []
    for position, (nested, args) in enumerate(parse_pipeline(values["children"], MAF_PY_CLASSES), start=1):
        name = _framework_child(nested, "agent_framework_python", MAF_PY_CLASSES, f"strategies child {position}")
        info = get_strategy(f"agent_framework_python.{name}")
        own = {p.name for p in info.params}
        inherited = {k: values[k] for k in ("tokenizer", *(s.name for s in SUMMARIZER_PARAMS)) if k in own
                     and k not in args}
        out.append((name, info.resolve_params({**inherited, **args})))
    return out


def export_maf_python(setup: Setup) -> list[Snippet]:
    """An agent-framework strategy passed as the Agent's in-run ``compaction_strategy``."""
    name = setup.info.name.split(".", 1)[1]
    build = _PyBuild(imports={"Agent"}, fill=[], notes=[])
    expr = _maf_py_strategy(setup, name, setup.params, build)
    lines = [py_import("agent_framework", build.imports)]
    if build.custom_tokenizer:
        head, _, body = build.custom_tokenizer.partition("\n\n\n")
        if body:  # the class needs an import of its own
            lines.insert(0, head)
        lines += ["", "", (body or head).rstrip(), ""]
    lines += [
        "",
        "from agent_framework.openai import OpenAIChatClient  # " + FILL_IN + " (pip install agent-framework-openai)",
        fill_in_line("client", 'OpenAIChatClient(model="gpt-4o")', "the chat client your agent uses"),
        fill_in_line("tools", "[]", "your agent's tools"),
    ]
    if "summary_client" in build.fill:
        model = setup.params.get("summarizer_model") or "gpt-4o-mini"
        lines.append(fill_in_line("summary_client", f"OpenAIChatClient(model={model!r})",
                                  "the chat client that writes the summaries"))
    lines += ["", f"compaction_strategy = {expr}",
              "agent = Agent(client, tools=tools, compaction_strategy=compaction_strategy)"]
    note = ("The strategy runs before every model call inside the agent's tool loop, as the replay does (it can also "
            "go on the client or per run: run(..., compaction_strategy=...)). CompactionProvider(before_strategy=...) "
            "in context_providers would instead compact once per run.")
    return [Snippet("python", "Microsoft Agent Framework (Python) Agent with compaction_strategy",
                    "\n".join(lines) + "\n", " ".join(dict.fromkeys([note, *build.notes])),
                    ("client", "tools", *build.fill))]


# ============================================================================== Microsoft Agent Framework (.NET)
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


def _cs_trigger_args(setup: Setup, values: Mapping[str, Any]) -> tuple[str, str | None]:
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


def _cs_strategy(setup: Setup, name: str, values: Mapping[str, Any], fill: list[str], notes: list[str],
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
    from .strategies.agent_framework import PIPELINE_CHILDREN, parse_pipeline
    from .strategies.base import SUMMARIZER_PARAMS

    out = []
    for position, (nested, args) in enumerate(parse_pipeline(values["children"]), start=1):
        name = _framework_child(nested, "agent_framework", PIPELINE_CHILDREN, f"pipeline child {position}")
        info = get_strategy(PIPELINE_CHILDREN[name][0])
        own = {p.name for p in info.params}
        inherited = {s.name: values[s.name] for s in SUMMARIZER_PARAMS if s.name in own and s.name not in args}
        out.append((name, info.resolve_params({**inherited, **args})))
    return out


def _framework_child(name: str, family: str, native: Mapping[str, Any], label: str) -> str:
    """The framework's own child strategy a composite names; a strategy the replay nests from another family has no
    production equivalent (a ``ValueError`` says so)."""
    from .strategies._nesting import native_name

    short = native_name(name, family, native)
    if short is None:
        raise ValueError(f"{label} ({name}) is nested by Compaction Lab's adapter; the framework's composite only "
                         f"takes its own strategies, so this setup has no production code")
    return short


def export_maf_dotnet(setup: Setup) -> list[Snippet]:
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


# ================================================================================================= Anthropic
BETA_CONTEXT_MANAGEMENT = "context-management-2025-06-27"
BETA_COMPACT = "compact-2026-01-12"


def anthropic_edit(setup: Setup) -> tuple[dict[str, Any], str, list[str]]:
    """(the ``context_management`` edit object, the beta it needs, notes)."""
    from .strategies.anthropic import CLEARED_RESULT_STAND_IN, parse_thinking_keep

    p, kind, notes = setup.params, setup.info.name.split(".", 1)[1], []
    if kind == "clear_tool_uses_20250919":
        edit: dict[str, Any] = {"type": kind,
                                "trigger": {"type": p["trigger_type"], "value": int(p["trigger_value"])},
                                "keep": {"type": "tool_uses", "value": int(p["keep"])}}
        if p["clear_at_least"]:
            edit["clear_at_least"] = {"type": "input_tokens", "value": int(p["clear_at_least"])}
        if p["exclude_tools"]:
            edit["exclude_tools"] = list(p["exclude_tools"])
        inputs = _clear_tool_inputs(p["clear_tool_inputs"])
        if inputs is not False:
            edit["clear_tool_inputs"] = inputs
        if p["placeholder"] != CLEARED_RESULT_STAND_IN:
            notes.append("The placeholder text is not an API setting: the API writes its own text in cleared results.")
        return edit, BETA_CONTEXT_MANAGEMENT, notes
    if kind == "clear_thinking_20251015":
        keep = parse_thinking_keep(p["keep"])
        notes.append("clear_thinking needs extended thinking on in the request, and goes first in `edits` when "
                     "combined with clear_tool_uses.")
        return ({"type": kind, "keep": "all" if keep is None else {"type": "thinking_turns", "value": keep}},
                BETA_CONTEXT_MANAGEMENT, notes)
    edit = {"type": kind, "trigger": {"type": "input_tokens", "value": int(p["trigger"])}}
    if p["instructions"]:
        edit["instructions"] = p["instructions"]
    if p["pause_after_compaction"]:
        edit["pause_after_compaction"] = True
    notes.append("Append each response's content (the compaction block included) to your messages: on later "
                 "requests the API drops everything before the compaction block.")
    return edit, BETA_COMPACT, notes


def _clear_tool_inputs(value: Any) -> bool | list[str]:
    """``clear_tool_inputs`` as the API takes it: a bool, or tool names in the order given."""
    from .strategies.anthropic import parse_clear_tool_inputs

    parsed = parse_clear_tool_inputs(value)
    if isinstance(parsed, bool):
        return parsed
    raw = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return list(dict.fromkeys(str(t).strip() for t in raw if str(t).strip()))


def export_anthropic(setup: Setup) -> list[Snippet]:
    """The ``context_management`` JSON and a ``client.beta.messages.create`` call that sends it."""
    edit, beta, notes = anthropic_edit(setup)
    config = {"edits": [edit]}
    thinking = edit["type"] == "clear_thinking_20251015"
    lines = [
        "import anthropic",
        "",
        fill_in_line("client", "anthropic.Anthropic()", "your client (reads ANTHROPIC_API_KEY)"),
        fill_in_line("messages", '[{"role": "user", "content": "Fix the failing test in tests/test_io.py"}]',
                     "the conversation so far"),
        fill_in_line("tools", "[]", "your tool definitions"),
        "",
        f"context_management = {py_literal_block(config)}",
        "",
        "response = client.beta.messages.create(",
        f"    model={'claude-sonnet-4-6' if beta == BETA_COMPACT else 'claude-sonnet-4-5'!r},",
        f"    max_tokens={16000 if thinking else 4096},",
    ]
    if thinking:
        lines.append('    thinking={"type": "enabled", "budget_tokens": 8000},')
    lines += ["    messages=messages,", "    tools=tools,", f"    betas=[{beta!r}],",
              "    context_management=context_management,", ")"]
    return [
        Snippet("json", "Anthropic request field `context_management`", json.dumps(config, indent=2) + "\n",
                f"Send with the beta header anthropic-beta: {beta}."),
        Snippet("python", "Anthropic Python SDK request", "\n".join(lines) + "\n",
                " ".join(["Context management runs server-side on every request you send, and the API measures "
                          f"input tokens itself (the replay estimated them with the {setup.counter!r} counter).",
                          *notes]),
                ("client", "messages", "tools")),
    ]


# ================================================================================================= LangChain
def langchain_trigger(text: str) -> Any:
    """The replay's trigger text as LangChain's ``trigger``: a ``(kind, value)`` tuple, a ``{kind: value}`` clause
    (all must hold), or a list of those (any may hold); ``None`` when empty."""
    from .strategies.langchain import parse_trigger as parse_langchain_trigger

    clauses = parse_langchain_trigger(text)
    rendered = [next((s.kind, s.value) for s in c.values()) if len(c) == 1 else {k: s.value for k, s in c.items()}
                for c in clauses]
    if not rendered:
        return None
    return rendered[0] if len(rendered) == 1 else rendered


def _langchain_counter(setup: Setup, lines: list[str], notes: list[str]) -> str | None:
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


def export_langchain(setup: Setup) -> list[Snippet]:
    """``create_agent(model, tools, middleware=[…])`` with SummarizationMiddleware or ContextEditingMiddleware."""
    from .strategies.langchain import parse_context_size

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


# ================================================================================================= SWE-agent
def _yaml_processor(p: Mapping[str, Any]) -> str:
    """SWE-agent's ``last_n_observations`` history processor (YAML, values as JSON literals)."""
    return "\n".join([
        "agent:",
        "  history_processors:",
        "    - type: last_n_observations",
        f"      n: {int(p['n'])}",
        f"      polling: {int(p['polling'])}",
        f"      always_remove_output_for_tags: {json.dumps(list(p['always_remove_output_for_tags']))}",
        f"      always_keep_output_for_tags: {json.dumps(list(p['always_keep_output_for_tags']))}",
    ]) + "\n"


def _summary_text(p: Mapping[str, Any]) -> str:
    return (f"Upstream SWE-agent has no LLM-summary history processor. The paper's setup (Lindenbauer et al., "
            f"arXiv 2508.21433) summarizes all but the last {p['keep_last_m_turns']} turns every "
            f"{p['summarize_every_n_turns']} turns with a summarizer model; reproduce it with a custom history "
            "processor, or use a framework that ships one (e.g. OpenHands' LLMSummarizingCondenser).")


def export_swe_agent(setup: Setup) -> list[Snippet]:
    kind, p = setup.info.name.split(".", 1)[1], setup.params
    if kind == "last_n_observations":
        return [Snippet("yaml", "SWE-agent config: history_processors", _yaml_processor(p),
                        "Applied to the whole trajectory before every model query (nothing is persisted).")]
    if kind == "hybrid":
        return [Snippet("yaml", "SWE-agent config: the masking half (last_n_observations)", _yaml_processor(p),
                        "The masking half of the hybrid setup."),
                Snippet("text", "The summary half: no direct equivalent", _summary_text(p) + "\n")]
    return [Snippet("text", "No direct equivalent in SWE-agent", _summary_text(p) + "\n")]


# ================================================================================================ Inspect AI
INSPECT_CLASSES = {"edit": "CompactionEdit", "trim": "CompactionTrim", "summary": "CompactionSummary"}


def _inspect_threshold(value: float) -> float | int:
    """Inspect reads a float in (0, 1] as a share of the window and an int as tokens."""
    return float(value) if value <= 1 else int(value)


def export_inspect(setup: Setup) -> list[Snippet]:
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


# ===================================================================================================== Codex
def export_codex(setup: Setup) -> list[Snippet]:
    """The Codex CLI ``config.toml`` keys that set the auto-compact limit."""
    limit = int(setup.params["auto_compact_token_limit"])
    lines = ["# ~/.codex/config.toml", f"model_context_window = {setup.context_window}"]
    if limit:
        lines.append(f"model_auto_compact_token_limit = {limit}")
    note = (f"Codex compacts at 90% of the context window ({int(setup.context_window * 0.9)} tokens here)"
            + (f" or at model_auto_compact_token_limit = {limit}, whichever is lower." if limit else ".")
            + " model_context_window only needs setting when Codex does not know the model's window.")
    return [Snippet("toml", "Codex CLI config.toml", "\n".join(lines) + "\n", note)]


# ================================================================================================= OpenHands
OPENHANDS_V0 = {  # registered kind -> (condenser config type, params)
    "observation_masking": ("observation_masking", ("attention_window",)),
    "recent_events": ("recent", ("keep_first", "max_events")),
    "amortized_forgetting": ("amortized", ("keep_first", "max_size")),
    "llm_summarizing": ("llm", ("keep_first", "max_size", "max_event_length")),
}


def export_openhands(setup: Setup) -> list[Snippet]:
    """OpenHands V0 ``[condenser]`` TOML, or the V1 SDK ``LLMSummarizingCondenser`` in Python."""
    kind, p = setup.info.name.split(".", 1)[1], setup.params
    if kind == "llm_summarizing_v1":
        args = ["llm=llm.model_copy(update={\"usage_id\": \"condenser\"})", f"max_size={p['max_size']!r}",
                f"keep_first={p['keep_first']!r}"]
        if p["max_tokens"]:
            args.append(f"max_tokens={p['max_tokens']!r}")
        lines = ["from openhands.sdk import LLM, Agent", "from openhands.sdk.context.condenser import LLMSummarizingCondenser",
                 "", fill_in_line("llm", 'LLM(model="anthropic/claude-sonnet-4-5", usage_id="agent")',
                                  "the agent's LLM"),
                 fill_in_line("tools", "[]", "your agent's tools"), "",
                 f"condenser = {py_call('LLMSummarizingCondenser', args)}",
                 "agent = Agent(llm=llm, tools=tools, condenser=condenser)"]
        return [Snippet("python", "OpenHands SDK agent with LLMSummarizingCondenser", "\n".join(lines) + "\n",
                        "The condenser summarizes with a copy of the agent's LLM; pass another LLM to use a cheaper "
                        "model.", ("llm", "tools"))]
    type_name, names = OPENHANDS_V0[kind]
    lines = ["# config.toml", "[condenser]", f"type = {json.dumps(type_name)}"]
    lines += [f"{name} = {int(p[name])}" for name in names]
    note = "OpenHands (V0) reads this from config.toml; the config defaults differ from the class defaults."
    if type_name == "llm":
        lines.insert(3, 'llm_config = "condenser"')
        model = p.get("summarizer_model") or "gpt-4o-mini"
        lines += ["", "[llm.condenser]", f"model = {json.dumps(model)}  # {FILL_IN}: the model that writes summaries"]
    return [Snippet("toml", "OpenHands config.toml: [condenser]", "\n".join(lines) + "\n", note)]


# ================================================================================================== dispatch
#: family -> (the strategy kinds its exporter knows, the exporter)
EXPORTERS: dict[str, tuple[frozenset[str], Callable[[Setup], list[Snippet]]]] = {
    "haystack": (frozenset({*HAYSTACK_COMPACTORS, "stack"}), export_haystack),
    "agent_framework_python": (frozenset(MAF_PY_CLASSES), export_maf_python),
    "agent_framework": (frozenset(MAF_CS_CLASSES), export_maf_dotnet),
    "anthropic": (frozenset({"clear_tool_uses_20250919", "clear_thinking_20251015", "compact_20260112"}),
                  export_anthropic),
    "langchain": (frozenset({"summarization", "context_editing"}), export_langchain),
    "swe_agent": (frozenset({"last_n_observations", "hybrid", "llm_summary"}), export_swe_agent),
    "inspect_ai": (frozenset(INSPECT_CLASSES), export_inspect),
    "codex": (frozenset({"auto_compact"}), export_codex),
    "openhands": (frozenset({*OPENHANDS_V0, "llm_summarizing_v1"}), export_openhands),
}


def no_equivalent(setup: Setup) -> list[Snippet]:
    """The single snippet for a family without a production API we can target."""
    values = "\n".join(f"  {k} = {json.dumps(v, default=list)}" for k, v in setup.params.items())
    text = (f"{setup.info.title} has no production library API that Compaction Lab can generate code for. "
            f"The replayed setup was:\n  strategy = {setup.info.name}\n{values}\n"
            f"  context_window = {setup.context_window}, compact_at = {setup.compact_at}, compact_to = "
            f"{setup.compact_to}, counter = {setup.counter}\n")
    return [Snippet("text", "No direct equivalent", text, f"See {setup.info.docs_url}" if setup.info.docs_url else "")]


def export_setup(strategy: str, params: Mapping[str, Any] | None = None, *, context_window: int = 200_000,
                 compact_at: float = 0.7, compact_to: float = 0.4, counter: str = "approx") -> list[Snippet]:
    """The production code for a replayed setup: ``params`` are resolved against the strategy's defaults (unknown
    names are a ``ValueError``), then rendered for the strategy's framework."""
    info = get_strategy(strategy)
    resolved = info.resolve_params(params)
    spec = check_counter_spec(counter)
    setup = Setup(info, resolved, int(context_window), float(compact_at), float(compact_to), spec)
    kinds, exporter = EXPORTERS.get(info.family, (frozenset(), no_equivalent))
    snippets = (exporter if info.name.split(".", 1)[-1] in kinds else no_equivalent)(setup)
    note = summarizer_note(setup)
    if note:  # on the last snippet: the code that sets the summarizer up comes last
        snippets[-1] = replace(snippets[-1], note=f"{snippets[-1].note} {note}".strip())
    return snippets


def check_counter_spec(counter: str | None) -> str:
    """The counter spec, stripped; a ``ValueError`` names what was expected when it is not one we know."""
    validate_counter_spec(counter)
    return (counter or "approx").strip()


def summarizer_note(setup: Setup) -> str:
    """What the replay's simulated summarizer settings mean in production (nothing for non-summarizing setups)."""
    if "summarizer" not in setup.params or setup.params.get("second") == "sliding_window":
        return ""
    return ("The replay's summarizer settings (summarizer, summary_tokens) only simulated the summaries; in "
            "production the model you fill in writes them.")
