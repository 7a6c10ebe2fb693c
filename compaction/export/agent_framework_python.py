"""Production configuration for Microsoft Agent Framework (Python): a strategy as the Agent's in-run ``compaction_strategy``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..strategies.base import get_strategy
from .base import FILL_IN
from .base import ResolvedSetup
from .base import Snippet
from .base import fill_in_line
from .base import framework_child
from .base import kwargs
from .base import py_call
from .base import py_import
from .base import register_exporter

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


def _maf_tokenizer(setup: ResolvedSetup, values: Mapping[str, Any], build: _PyBuild) -> str:
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


def _maf_py_strategy(setup: ResolvedSetup, name: str, values: Mapping[str, Any], build: _PyBuild) -> str:
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
    from ..strategies.agent_framework import parse_pipeline
    from ..strategies.base import SUMMARIZER_PARAMS

    out = []
    for position, (nested, args) in enumerate(parse_pipeline(values["children"], MAF_PY_CLASSES), start=1):
        name = framework_child(nested, "agent_framework_python", MAF_PY_CLASSES, f"strategies child {position}")
        info = get_strategy(f"agent_framework_python.{name}")
        own = {p.name for p in info.params}
        inherited = {k: values[k] for k in ("tokenizer", *(s.name for s in SUMMARIZER_PARAMS)) if k in own
                     and k not in args}
        out.append((name, info.resolve_params({**inherited, **args})))
    return out


def export_maf_python(setup: ResolvedSetup) -> list[Snippet]:
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


register_exporter("agent_framework_python", frozenset(MAF_PY_CLASSES), export_maf_python)
