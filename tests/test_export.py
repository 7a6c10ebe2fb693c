"""``compaction.export``: the generated production code is executed against the real libraries (haystack-ai,
agent-framework-core, anthropic, langchain) and the objects it builds must carry exactly the replayed setup."""

from __future__ import annotations

import ast
import inspect
import json
import re
import typing
import warnings
from typing import Any

import pytest
import typing_extensions

from compaction.export import FILL_IN
from compaction.export import Snippet
from compaction.export import export_setup
from compaction.strategies.base import get_strategy
from compaction.strategies.base import registry

TRICKY = 'say "hi" {tool_name} {x} \\ \'q\' """ end'


def load_toml(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads(text)


def snippet(snippets: list[Snippet], language: str) -> Snippet:
    found = [s for s in snippets if s.language == language]
    assert len(found) == 1, [s.title for s in snippets]
    return found[0]


def run(snip: Snippet, **stubs: Any) -> dict[str, Any]:
    """Execute a generated Python snippet with the lines the user fills in replaced by the test's stubs."""
    assert set(stubs) == set(snip.fill_in), (sorted(stubs), snip.fill_in)
    for name in snip.fill_in:
        assert re.search(rf"^{name} = .*{re.escape(FILL_IN)}", snip.code, re.M), name
    code = "\n".join(line for line in snip.code.splitlines() if FILL_IN not in line)
    ast.parse(snip.code)  # the code as pasted is valid Python too
    namespace: dict[str, Any] = dict(stubs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "<snippet>", "exec"), namespace)  # our own generated code, never log content
    return namespace


# ================================================================================================== registry
def test_every_registered_strategy_yields_code():
    for name in sorted(registry()):
        snippets = export_setup(name, context_window=128_000, compact_at=0.75, compact_to=0.5, counter="approx")
        assert snippets, name
        assert all(s.code.strip() and s.title for s in snippets), name
        for s in snippets:
            if s.language == "python":
                ast.parse(s.code)
            if s.language == "json":
                json.loads(s.code)
            if s.language == "toml":
                load_toml(s.code)


def test_a_strategy_without_an_exporter_gets_one_explaining_snippet(monkeypatch):
    from dataclasses import replace

    from compaction.strategies import base

    info = get_strategy("haystack.tool_result_pruning")
    monkeypatch.setitem(base.STRATEGIES._items, "haystack.not_yet_exported", replace(info, name="haystack.not_yet_exported"))
    (snip,) = export_setup("haystack.not_yet_exported", {"min_keep_steps": 2}, context_window=1000)
    assert snip.language == "text" and "no production library API" in snip.code
    assert "strategy = haystack.not_yet_exported" in snip.code and "min_keep_steps = 2" in snip.code


def test_unknown_parameter_and_counter_are_errors():
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        export_setup("haystack.tool_result_pruning", {"nope": 1})
    with pytest.raises(ValueError, match="unknown counter"):
        export_setup("haystack.tool_result_pruning", counter="words")
    with pytest.raises(ValueError, match="unknown strategy"):
        export_setup("haystack.nothing")
    with pytest.raises(ValueError, match="chars per token"):
        export_setup("haystack.tool_result_pruning", counter="approx:zero")
    with pytest.raises(ValueError, match="unknown counter"):
        export_setup("haystack.tool_result_pruning", counter="maf-python:2")


def test_summarizing_setups_explain_the_simulated_summarizer():
    for name, info in registry().items():
        notes = " ".join(s.note for s in export_setup(name))
        assert ("summarizer settings" in notes) == ("summarizer" in info.defaults()), name


# ================================================================================================== Haystack
@pytest.fixture()
def haystack_stubs(tmp_path):
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.hooks.tool_result_offloading import FileSystemToolResultStore
    from haystack.utils import Secret

    def make(snip: Snippet) -> dict[str, Any]:
        available = {
            "chat_generator": OpenAIChatGenerator(api_key=Secret.from_token("sk-test"), model="gpt-4o"),
            "summary_generator": OpenAIChatGenerator(api_key=Secret.from_token("sk-test"), model="gpt-4o-mini"),
            "tools": [],
            "store": FileSystemToolResultStore(tmp_path),
        }
        return {name: available[name] for name in snip.fill_in}

    return make


def _haystack(strategy: str, params: dict, **policy) -> tuple[dict[str, Any], dict[str, Any]]:
    return export_setup(strategy, params, **policy), get_strategy(strategy).resolve_params(params)


def _check_hook(hook, ns, context_window, compact_at, compact_to):
    from haystack.hooks.compaction import CompactionHook

    assert isinstance(hook, CompactionHook)
    assert (hook.context_window, hook.compact_at, hook.compact_to) == (context_window, compact_at, compact_to)
    assert ns["agent"].hooks == {"before_llm": [hook]} or hook in ns["agent"].hooks["before_llm"]


@pytest.mark.parametrize(
    ("params", "policy"),
    [
        ({}, {"context_window": 200_000}),
        ({"min_keep_steps": 3, "min_tokens": 50, "placeholder": TRICKY, "skip_meta_keys": "a, b"},
         {"context_window": 32_000, "compact_at": 0.65, "compact_to": 0.3, "counter": "approx:3.3"}),
    ],
)
def test_haystack_pruning(haystack_stubs, params, policy):
    from haystack.hooks.compaction import ToolResultPruningCompactor
    from haystack.token_counters import ApproximateTokenCounter

    snippets, p = _haystack("haystack.tool_result_pruning", params, **policy)
    snip = snippet(snippets, "python")
    ns = run(snip, **haystack_stubs(snip))
    hook = ns["hook"]
    _check_hook(hook, ns, policy["context_window"], policy.get("compact_at", 0.7), policy.get("compact_to", 0.4))
    assert ns["agent"].hooks == {"before_llm": [hook]}
    c = hook.compactor
    assert isinstance(c, ToolResultPruningCompactor)
    assert (c.min_keep_steps, c.min_tokens, c.placeholder, tuple(c.skip_meta_keys)) == (
        p["min_keep_steps"], p["min_tokens"], p["placeholder"], tuple(p["skip_meta_keys"]))
    assert isinstance(hook.token_counter, ApproximateTokenCounter)
    assert hook.token_counter.chars_per_token == (3.3 if "counter" in policy else 4.0)
    if not params:
        assert "min_keep_steps" not in snip.code  # defaults are left to the library


@pytest.mark.parametrize(
    ("params", "counter"),
    [({}, "approx"), ({"min_keep_steps": 0, "omission_note": ""}, "tiktoken:cl100k_base"),
     ({"min_keep_steps": 2, "omission_note": TRICKY}, "approx:2.5")],
)
def test_haystack_sliding_window(haystack_stubs, params, counter):
    from haystack.hooks.compaction import SlidingWindowCompactor
    from haystack.token_counters import ApproximateTokenCounter
    from haystack.token_counters import TiktokenCounter

    snippets, p = _haystack("haystack.sliding_window", params, context_window=50_000, counter=counter)
    snip = snippet(snippets, "python")
    ns = run(snip, **haystack_stubs(snip))
    c = ns["hook"].compactor
    assert isinstance(c, SlidingWindowCompactor)
    assert c.min_keep_steps == p["min_keep_steps"]
    assert c.omission_note == (p["omission_note"] or None)
    counter_obj = ns["hook"].token_counter
    if counter.startswith("tiktoken"):
        assert isinstance(counter_obj, TiktokenCounter) and counter_obj.encoding == "cl100k_base"
    else:
        assert isinstance(counter_obj, ApproximateTokenCounter)
        assert counter_obj.chars_per_token == float(counter.partition(":")[2] or 4.0)


def test_haystack_summarization(haystack_stubs):
    from haystack.hooks.compaction import SummarizationCompactor

    default_instruction = inspect.signature(SummarizationCompactor.__init__).parameters["summary_instruction"].default
    for params in ({}, {"min_keep_steps": 0, "approximate_summary_tokens": 300, "summary_instruction": TRICKY,
                        "raise_on_failure": True, "summarizer": "fixed-size", "summary_tokens": 99}):
        snippets, p = _haystack("haystack.summarization", params, context_window=100_000, compact_at=0.9,
                                compact_to=0.2)
        snip = snippet(snippets, "python")
        stubs = haystack_stubs(snip)
        ns = run(snip, **stubs)
        c = ns["hook"].compactor
        assert isinstance(c, SummarizationCompactor)
        assert c.chat_generator is stubs["summary_generator"]
        assert (c.min_keep_steps, c.approximate_summary_tokens, c.raise_on_failure) == (
            p["min_keep_steps"], p["approximate_summary_tokens"], p["raise_on_failure"])
        assert c.summary_instruction == (TRICKY if params else default_instruction)
        _check_hook(ns["hook"], ns, 100_000, 0.9, 0.2)


def test_haystack_offloading(haystack_stubs):
    from haystack.hooks.compaction import ToolResultOffloadCompactor

    for params in ({}, {"min_keep_steps": 4, "min_tokens": 0, "preview_chars": 17}):
        snippets, p = _haystack("haystack.tool_result_offloading", params, context_window=8_000)
        snip = snippet(snippets, "python")
        stubs = haystack_stubs(snip)
        ns = run(snip, **stubs)
        c = ns["hook"].compactor
        assert isinstance(c, ToolResultOffloadCompactor) and c.store is stubs["store"]
        assert (c.min_keep_steps, c.min_tokens, c.preview_chars) == (
            p["min_keep_steps"], p["min_tokens"], p["preview_chars"])


@pytest.mark.parametrize("second", ["summarization", "sliding_window"])
def test_haystack_stack_is_two_hooks_in_order(haystack_stubs, second):
    from haystack.hooks.compaction import SlidingWindowCompactor
    from haystack.hooks.compaction import SummarizationCompactor
    from haystack.hooks.compaction import ToolResultPruningCompactor

    params = {"second": second, "prune_min_keep_steps": 2, "prune_min_tokens": 10, "second_min_keep_steps": 0,
              "second_omission_note": TRICKY, "second_approximate_summary_tokens": 77}
    snippets, p = _haystack("haystack.stack", params, context_window=64_000, compact_at=0.8, compact_to=0.5,
                            counter="approx:3.5")
    snip = snippet(snippets, "python")
    ns = run(snip, **haystack_stubs(snip))
    first, backup = ns["agent"].hooks["before_llm"]
    assert first is ns["pruning_hook"] and backup is ns["backup_hook"]
    for hook in (first, backup):
        assert (hook.context_window, hook.compact_at, hook.compact_to) == (64_000, 0.8, 0.5)
        assert hook.token_counter.chars_per_token == 3.5
    assert isinstance(first.compactor, ToolResultPruningCompactor)
    assert (first.compactor.min_keep_steps, first.compactor.min_tokens) == (2, 10)
    if second == "summarization":
        assert isinstance(backup.compactor, SummarizationCompactor)
        assert (backup.compactor.min_keep_steps, backup.compactor.approximate_summary_tokens) == (0, 77)
    else:
        assert isinstance(backup.compactor, SlidingWindowCompactor)
        assert (backup.compactor.min_keep_steps, backup.compactor.omission_note) == (0, TRICKY)


def test_haystack_counter_without_equivalent_is_said():
    snip = snippet(export_setup("haystack.tool_result_pruning", counter="maf-dotnet"), "python")
    assert "maf-dotnet" in snip.note and "token_counter" not in snip.code


# ===================================================================================== Agent Framework (Python)
class StubChatClient:
    """Stands in for the chat client the user fills in (never called here)."""

    async def get_response(self, messages, **kwargs):  # pragma: no cover - construction only
        raise AssertionError("not called")


def _maf(strategy: str, params: dict, **policy) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    snip = snippet(export_setup(strategy, params, **policy), "python")
    stubs = {name: StubChatClient() if "client" in name else [] for name in snip.fill_in}
    ns = run(snip, **stubs)
    assert ns["agent"].compaction_strategy is ns["compaction_strategy"]
    return ns, ns["compaction_strategy"], stubs


@pytest.mark.parametrize(
    ("params", "policy", "expected"),
    [
        ({}, {"context_window": 100_000}, {"max_n": 70_000, "compact_to": 40_000, "tokens": True}),
        ({"max_n": 900, "compact_to_n": 300, "preserve_system": False, "preserve_first_user_group": True},
         {"context_window": 100_000}, {"max_n": 900, "compact_to": 300, "tokens": True}),
        ({"metric": "messages", "max_n": 40, "compact_to_n": 20}, {"context_window": 100_000},
         {"max_n": 40, "compact_to": 20, "tokens": False}),
    ],
)
def test_maf_python_truncation(params, policy, expected):
    from agent_framework import CharacterEstimatorTokenizer
    from agent_framework import TruncationStrategy

    ns, s, _ = _maf("agent_framework_python.truncation", params, **policy)
    p = get_strategy("agent_framework_python.truncation").resolve_params(params)
    assert isinstance(s, TruncationStrategy)
    assert (s.max_n, s.compact_to) == (expected["max_n"], expected["compact_to"])
    assert (s.preserve_system, s.preserve_first_user_group) == (p["preserve_system"], p["preserve_first_user_group"])
    assert isinstance(s.tokenizer, CharacterEstimatorTokenizer) if expected["tokens"] else s.tokenizer is None


def test_maf_python_window_and_tool_strategies():
    from agent_framework import ContextWindowCompactionStrategy
    from agent_framework import SelectiveToolCallCompactionStrategy
    from agent_framework import SlidingWindowStrategy
    from agent_framework import ToolResultCompactionStrategy

    _, s, _ = _maf("agent_framework_python.sliding_window", {"keep_last_groups": 3, "preserve_system": False})
    assert isinstance(s, SlidingWindowStrategy) and (s.keep_last_groups, s.preserve_system) == (3, False)
    _, s, _ = _maf("agent_framework_python.sliding_window", {})
    assert (s.keep_last_groups, s.preserve_system) == (8, True)
    for name, cls in (("selective_tool_call", SelectiveToolCallCompactionStrategy),
                      ("tool_result_compaction", ToolResultCompactionStrategy)):
        for keep in (0, 1, 5):
            _, s, _ = _maf(f"agent_framework_python.{name}", {"keep_last_tool_call_groups": keep})
            assert isinstance(s, cls) and s.keep_last_tool_call_groups == keep
    _, s, _ = _maf("agent_framework_python.context_window", {}, context_window=64_000)
    assert isinstance(s, ContextWindowCompactionStrategy)
    assert (s.max_context_window_tokens, s.max_output_tokens, s.tool_eviction_threshold, s.truncation_threshold) == (
        64_000, 16_384, 0.5, 0.8)
    _, s, _ = _maf("agent_framework_python.context_window",
                   {"max_context_window_tokens": 50_000, "max_output_tokens": 1000, "tool_eviction_threshold": 0.3,
                    "truncation_threshold": 0.6, "keep_last_tool_call_groups": 2, "preserve_first_user_group": True})
    assert (s.max_context_window_tokens, s.max_output_tokens, s.tool_eviction_threshold, s.truncation_threshold) == (
        50_000, 1000, 0.3, 0.6)
    assert s._tool_eviction.keep_last_tool_call_groups == 2 and s._truncation.preserve_first_user_group is True


def test_maf_python_summarization():
    from agent_framework import SummarizationStrategy

    _, s, stubs = _maf("agent_framework_python.summarization", {})
    assert isinstance(s, SummarizationStrategy) and s.client is stubs["summary_client"]
    default_prompt = SummarizationStrategy(client=StubChatClient()).prompt
    assert (s.target_count, s.threshold, s.max_summary_input_tokens, s.prompt) == (4, 2, 8000, default_prompt)
    _, s, _ = _maf("agent_framework_python.summarization",
                   {"target_count": 10, "threshold": 0, "max_summary_input_tokens": 0, "prompt": TRICKY})
    assert (s.target_count, s.threshold, s.max_summary_input_tokens, s.prompt) == (10, 0, None, TRICKY)


def test_maf_python_token_budget_children_and_replay_counter_tokenizer():
    from agent_framework import SelectiveToolCallCompactionStrategy
    from agent_framework import TokenBudgetComposedStrategy
    from agent_framework import TruncationStrategy

    from compaction import tiktoken_offline

    ns, s, _ = _maf("agent_framework_python.token_budget_composed",
                    {"token_budget": 5000, "early_stop": False,
                     "children": "selective_tool_call(keep_last_tool_call_groups=2); truncation(max_n=4000, "
                                 "compact_to_n=1000)"})
    assert isinstance(s, TokenBudgetComposedStrategy) and (s.token_budget, s.early_stop) == (5000, False)
    first, second = s.strategies
    assert isinstance(first, SelectiveToolCallCompactionStrategy) and first.keep_last_tool_call_groups == 2
    assert isinstance(second, TruncationStrategy) and (second.max_n, second.compact_to) == (4000, 1000)
    _, s, _ = _maf("agent_framework_python.token_budget_composed", {}, context_window=10_000, compact_at=0.5)
    assert s.token_budget == 5000 and [type(c).__name__ for c in s.strategies] == [
        "ToolResultCompactionStrategy", "SlidingWindowStrategy"]
    assert s.strategies[0].keep_last_tool_call_groups == 4 and s.strategies[1].keep_last_groups == 24

    # tokenizer=replay_counter: a TokenizerProtocol that counts like the replay's counter
    ns, s, _ = _maf("agent_framework_python.truncation", {"tokenizer": "replay_counter"}, counter="approx:2")
    assert s.tokenizer.count_tokens("x" * 40) == 20
    try:
        tiktoken_offline.get_encoding("o200k_base")
    except tiktoken_offline.EncodingUnavailable:
        pytest.skip("o200k_base cannot be loaded here")
    ns, s, _ = _maf("agent_framework_python.truncation", {"tokenizer": "replay_counter"}, counter="tiktoken:o200k_base")
    assert s.tokenizer.count_tokens("hello world") == 2


# ========================================================================================= Agent Framework (.NET)
CS_CTOR = re.compile(r"new (\w+)\(")
CS_NAMED = re.compile(r"\b([a-z]\w*): ")
CS_PARAMS = {  # docs/spec/frameworks.md §3: the constructors and their parameter names
    "ToolResultCompactionStrategy": {"minimumPreservedGroups", "target"},
    "TruncationCompactionStrategy": {"minimumPreservedGroups", "target"},
    "SlidingWindowCompactionStrategy": {"minimumPreservedTurns", "target"},
    "SummarizationCompactionStrategy": {"minimumPreservedGroups", "summarizationPrompt", "target"},
    "PipelineCompactionStrategy": set(),
    "ContextWindowCompactionStrategy": {"maxContextWindowTokens", "maxOutputTokens", "toolEvictionThreshold",
                                        "truncationThreshold"},
}


def _cs(strategy: str, params: dict, **policy) -> str:
    return snippet(export_setup(strategy, params, **policy), "csharp").code


def _cs_strategy_code(code: str) -> str:
    """Just the strategy expression of a C# snippet."""
    return code.split("CompactionStrategy compactionStrategy = ", 1)[1].split(";\n\nAIAgent agent", 1)[0]


def test_dotnet_default_triggers_come_from_the_policy():
    code = _cs("agent_framework.tool_result_compaction", {}, context_window=100_000)
    assert ("new ToolResultCompactionStrategy(\n    CompactionTriggers.TokensExceed(70000),\n"
            "    minimumPreservedGroups: 16,\n    target: CompactionTriggers.TokensBelow(40000))") in code
    assert "new CompactionProvider(compactionStrategy)" in code and ".UseFunctionInvocation()" in code
    assert set(CS_NAMED.findall(_cs_strategy_code(code))) <= CS_PARAMS["ToolResultCompactionStrategy"]


def test_dotnet_explicit_triggers_and_names():
    code = _cs("agent_framework.truncation", {"trigger": "All(TokensExceed(5000), HasToolCalls())",
                                              "minimum_preserved_groups": 4})
    assert "CompactionTriggers.All(CompactionTriggers.TokensExceed(5000), CompactionTriggers.HasToolCalls())" in code
    assert "target:" not in code  # an explicit trigger without target: .NET's default (the inverse)
    code = _cs("agent_framework.sliding_window", {"trigger": "Any(Always, TurnsExceed(3))", "target": "Never()",
                                                  "minimum_preserved_turns": 2})
    assert "CompactionTriggers.Any(CompactionTriggers.Always, CompactionTriggers.TurnsExceed(3))" in code
    assert "target: CompactionTriggers.Never)" in code and "minimumPreservedTurns: 2" in code
    code = _cs("agent_framework.summarization", {"prompt": TRICKY, "minimum_preserved_groups": 3})
    assert f"summarizationPrompt: {json.dumps(TRICKY)}" in code and "summaryClient," in code
    code = _cs("agent_framework.context_window", {"max_output_tokens": 1000, "tool_eviction_threshold": 0.25},
               context_window=32_000)
    assert ("maxContextWindowTokens: 32000,\n    maxOutputTokens: 1000,\n    toolEvictionThreshold: 0.25,\n"
            "    truncationThreshold: 0.8)") in code


def test_dotnet_pipeline_and_names_match_the_spec():
    code = _cs("agent_framework.pipeline",
               {"children": "tool_result_compaction(trigger=TokensExceed(60000), minimum_preserved_groups=4); "
                            "sliding_window; context_window(max_output_tokens=2000)"}, context_window=100_000)
    assert CS_CTOR.findall(_cs_strategy_code(code)) == [
        "PipelineCompactionStrategy", "ToolResultCompactionStrategy", "SlidingWindowCompactionStrategy",
        "ContextWindowCompactionStrategy"]
    assert "CompactionTriggers.TokensExceed(60000),\n        minimumPreservedGroups: 4)" in code
    assert "maxContextWindowTokens: 100000" in code
    for name in ("tool_result_compaction", "truncation", "sliding_window", "summarization", "context_window"):
        strategy_code = _cs_strategy_code(_cs(f"agent_framework.{name}", {}))
        cls = CS_CTOR.findall(strategy_code)[0]
        assert cls in CS_PARAMS
        assert set(CS_NAMED.findall(strategy_code)) <= CS_PARAMS[cls], cls
        assert strategy_code.count("(") == strategy_code.count(")")


def test_dotnet_custom_formatter_is_an_init_property():
    code = _cs("agent_framework.tool_result_compaction", {"formatter": "names_only"})
    assert "ToolCallFormatter = group =>" in code and "using System.Text.Json;" in code
    assert code.count("{") == code.count("}")


# ================================================================================================== Anthropic
def _anthropic_request(snip: Snippet) -> tuple[dict[str, Any], dict[str, str]]:
    """Run the SDK snippet against a client whose transport records the request instead of sending it."""
    anthropic = pytest.importorskip("anthropic")
    import httpx2 as httpx  # the HTTP client the anthropic SDK is built on

    seen: dict[str, Any] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen["body"] = json.loads(request.content)
        seen["headers"] = dict(request.headers)
        return httpx.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": seen["body"]["model"],
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}})

    client = anthropic.Anthropic(api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    run(snip, client=client, messages=[{"role": "user", "content": "hi"}], tools=[])
    return seen["body"], seen["headers"]


def _validate_typed_dict(value: Any, annotation: Any, path: str = "context_management") -> None:
    """Check ``value`` against an SDK TypedDict annotation: no unknown keys, required keys present, literal and
    scalar types right, unions matched by one member."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is typing.Any:
        return
    if origin is typing.Union:
        errors = []
        for member in args:
            try:
                _validate_typed_dict(value, member, path)
                return
            except AssertionError as exc:
                errors.append(str(exc))
        raise AssertionError(f"{path}: {value!r} matches none of {args}: {errors}")
    if origin is typing.Literal:
        assert value in args, f"{path}: {value!r} not in {args}"
        return
    if typing_extensions.is_typeddict(annotation):
        assert isinstance(value, dict), path
        hints = typing.get_type_hints(annotation)
        assert set(value) <= set(hints), f"{path}: unknown keys {set(value) - set(hints)}"
        assert annotation.__required_keys__ <= set(value), f"{path}: missing {annotation.__required_keys__}"
        for key, item in value.items():
            _validate_typed_dict(item, hints[key], f"{path}.{key}")
        return
    if annotation in (int, str, bool, float, type(None)):
        assert type(value) is annotation or (annotation is float and type(value) is int), f"{path}: {value!r}"
        return
    if origin is not None and args:  # Iterable[...] / Sequence[...] / SequenceNotStr[...]
        assert isinstance(value, list), f"{path}: expected a list, got {value!r}"
        for i, item in enumerate(value):
            _validate_typed_dict(item, args[0], f"{path}[{i}]")
        return
    raise AssertionError(f"{path}: unhandled annotation {annotation!r}")


@pytest.mark.parametrize(
    ("strategy", "params", "edit", "beta"),
    [
        ("anthropic.clear_tool_uses_20250919", {},
         {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100000},
          "keep": {"type": "tool_uses", "value": 3}}, "context-management-2025-06-27"),
        ("anthropic.clear_tool_uses_20250919",
         {"trigger_type": "tool_uses", "trigger_value": 30, "keep": 0, "clear_at_least": 5000,
          "exclude_tools": "web_search, \"odd\"{name}", "clear_tool_inputs": "bash, read_file"},
         {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 30},
          "keep": {"type": "tool_uses", "value": 0}, "clear_at_least": {"type": "input_tokens", "value": 5000},
          "exclude_tools": ["web_search", "\"odd\"{name}"], "clear_tool_inputs": ["bash", "read_file"]},
         "context-management-2025-06-27"),
        ("anthropic.clear_tool_uses_20250919", {"clear_tool_inputs": "true"},
         {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 100000},
          "keep": {"type": "tool_uses", "value": 3}, "clear_tool_inputs": True}, "context-management-2025-06-27"),
        ("anthropic.clear_thinking_20251015", {},
         {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
         "context-management-2025-06-27"),
        ("anthropic.clear_thinking_20251015", {"keep": "all"}, {"type": "clear_thinking_20251015", "keep": "all"},
         "context-management-2025-06-27"),
        ("anthropic.compact_20260112", {}, {"type": "compact_20260112",
                                            "trigger": {"type": "input_tokens", "value": 150000}}, "compact-2026-01-12"),
        ("anthropic.compact_20260112", {"trigger": 60000, "instructions": TRICKY, "pause_after_compaction": True},
         {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60000}, "instructions": TRICKY,
          "pause_after_compaction": True}, "compact-2026-01-12"),
    ],
)
def test_anthropic_context_management(strategy, params, edit, beta):
    pytest.importorskip("anthropic")
    from anthropic.types.anthropic_beta_param import AnthropicBetaParam
    from anthropic.types.beta.beta_context_management_config_param import BetaContextManagementConfigParam

    snippets = export_setup(strategy, params)
    config = json.loads(snippet(snippets, "json").code)
    assert config == {"edits": [edit]}
    _validate_typed_dict(config, BetaContextManagementConfigParam)
    assert beta in typing.get_args(typing.get_args(AnthropicBetaParam)[1])
    body, headers = _anthropic_request(snippet(snippets, "python"))
    assert body["context_management"] == config
    assert headers["anthropic-beta"] == beta


def test_anthropic_validator_catches_bad_edits():
    pytest.importorskip("anthropic")
    from anthropic.types.beta.beta_context_management_config_param import BetaContextManagementConfigParam

    for bad in ({"edits": [{"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": "3"}}]},
                {"edits": [{"type": "clear_tool_uses_20250919", "placeholder": "x"}]},
                {"edits": [{"type": "compact_20260112", "trigger": {"type": "tool_uses", "value": 1}}]}):
        with pytest.raises(AssertionError):
            _validate_typed_dict(bad, BetaContextManagementConfigParam)


# ================================================================================================== LangChain
@pytest.fixture()
def fake_model():
    pytest.importorskip("langchain_core")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    def make():
        model = GenericFakeChatModel(messages=iter([AIMessage(content="summary")]))
        model.profile = {"max_input_tokens": 100_000}
        return model

    return make


@pytest.fixture()
def created_agents(monkeypatch):
    """Records what the snippets pass to ``langchain.agents.create_agent`` (and still builds the real agent)."""
    pytest.importorskip("langchain.agents")
    import langchain.agents

    calls: list[dict[str, Any]] = []
    real = langchain.agents.create_agent

    def recording(*args, **kwargs):
        calls.append({"args": args, "kwargs": kwargs})
        return real(*args, **kwargs)

    monkeypatch.setattr(langchain.agents, "create_agent", recording)
    return calls


def _langchain(strategy: str, params: dict, make_model, calls, **policy) -> tuple[Any, dict[str, Any]]:
    """Run a LangChain snippet; return its single middleware and the stubs."""
    from langgraph.graph.state import CompiledStateGraph

    snip = snippet(export_setup(strategy, params, **policy), "python")
    stubs = {name: make_model() if "model" in name else [] for name in snip.fill_in}
    calls.clear()
    ns = run(snip, **stubs)
    assert isinstance(ns["agent"], CompiledStateGraph)
    (call,) = calls
    assert call["args"] == (stubs["model"], stubs["tools"])
    (middleware,) = call["kwargs"]["middleware"]
    return middleware, stubs


def test_langchain_summarization(fake_model, created_agents):
    from langchain.agents.middleware import SummarizationMiddleware

    m, stubs = _langchain("langchain.summarization", {}, fake_model, created_agents)
    assert isinstance(m, SummarizationMiddleware)
    assert m.model is stubs["summary_model"]
    assert (m.trigger, m.keep, m.trim_tokens_to_summarize) == (None, ("messages", 20), 4000)
    params = {"trigger": "tokens>=4000&messages>=10|fraction>=0.8", "keep": "tokens=1500",
              "trim_tokens_to_summarize": 0, "summary_prompt": TRICKY + " {messages}"}
    m, stubs = _langchain("langchain.summarization", params, fake_model, created_agents, counter="langchain:3.3")
    assert m.trigger == [{"tokens": 4000, "messages": 10}, ("fraction", 0.8)]
    assert (m.keep, m.trim_tokens_to_summarize, m.summary_prompt) == (("tokens", 1500), None, TRICKY + " {messages}")
    assert m.token_counter.keywords == {"chars_per_token": 3.3}
    m, _ = _langchain("langchain.summarization", {"trigger": "messages>=50"}, fake_model, created_agents)
    assert m.trigger == ("messages", 50)


def test_langchain_summarization_newer_options_are_spelled_out():
    snip = snippet(export_setup("langchain.summarization", {"max_consecutive_summary_failures": 5,
                                                            "hard_token_ceiling": 90_000}), "python")
    assert "max_consecutive_summary_failures=5" in snip.code and "hard_token_ceiling=90000" in snip.code
    assert "newer than 1.5" in snip.note
    ast.parse(snip.code)


def test_langchain_context_editing(fake_model, created_agents):
    from langchain.agents.middleware import ClearToolUsesEdit
    from langchain.agents.middleware import ContextEditingMiddleware

    for params in ({}, {"trigger": 5000, "clear_at_least": 200, "keep": 1, "clear_tool_inputs": True,
                        "exclude_tools": "search,read", "placeholder": TRICKY, "token_count_method": "model"}):
        m, _ = _langchain("langchain.context_editing", params, fake_model, created_agents)
        p = get_strategy("langchain.context_editing").resolve_params(params)
        assert isinstance(m, ContextEditingMiddleware)
        assert m.token_count_method == p["token_count_method"]
        (edit,) = m.edits
        assert isinstance(edit, ClearToolUsesEdit)
        assert (edit.trigger, edit.clear_at_least, edit.keep, edit.clear_tool_inputs, tuple(edit.exclude_tools),
                edit.placeholder) == (p["trigger"], p["clear_at_least"], p["keep"], p["clear_tool_inputs"],
                                      tuple(p["exclude_tools"]), p["placeholder"])


# ================================================================================================== SWE-agent
def test_swe_agent_yaml_and_no_equivalent():
    yaml = pytest.importorskip("yaml")

    snip = snippet(export_setup("swe_agent.last_n_observations", {"n": 5, "polling": 3,
                                                                  "always_keep_output_for_tags": "keep: me, \"x\""}),
                   "yaml")
    (processor,) = yaml.safe_load(snip.code)["agent"]["history_processors"]
    assert processor == {"type": "last_n_observations", "n": 5, "polling": 3,
                         "always_remove_output_for_tags": ["remove_output"],
                         "always_keep_output_for_tags": ["keep: me", "\"x\""]}
    hybrid = export_setup("swe_agent.hybrid", {"n": 7, "keep_last_m_turns": 4})
    assert [s.language for s in hybrid] == ["yaml", "text"] and "last 4 turns" in hybrid[1].code
    (summary,) = export_setup("swe_agent.llm_summary", {"summarize_every_n_turns": 43})
    assert summary.language == "text" and "every 43 turns" in summary.code


# ================================================================================================= Inspect AI
@pytest.fixture()
def react_calls(monkeypatch):
    """Records what the snippets pass to ``inspect_ai.agent.react`` (and still builds the real agent)."""
    pytest.importorskip("inspect_ai")
    import inspect_ai.agent

    calls: list[dict[str, Any]] = []
    real = inspect_ai.agent.react

    def recording(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(inspect_ai.agent, "react", recording)
    return calls


@pytest.mark.parametrize(
    ("strategy", "params", "expected"),
    [
        ("inspect_ai.edit", {}, {"type": "edit", "threshold": 0.9, "keep_thinking_turns": 1, "keep_tool_uses": 3,
                                 "keep_tool_inputs": True, "exclude_tools": None}),
        ("inspect_ai.edit", {"threshold": 120000, "memory": False, "keep_thinking_turns": "all", "keep_tool_uses": 0,
                             "keep_tool_inputs": False, "exclude_tools": "bash, \"q\""},
         {"threshold": 120000, "keep_thinking_turns": "all", "keep_tool_uses": 0, "keep_tool_inputs": False,
          "exclude_tools": ["bash", "\"q\""]}),
        ("inspect_ai.trim", {"threshold": 0.75, "preserve": 0.5}, {"type": "trim", "threshold": 0.75,
                                                                   "preserve": 0.5}),
        ("inspect_ai.summary", {"instructions": TRICKY, "summarizer_model": "openai/gpt-4o-mini"},
         {"type": "summary", "threshold": 0.9, "instructions": TRICKY}),
    ],
)
def test_inspect_compaction(react_calls, strategy, params, expected):
    snip = snippet(export_setup(strategy, params), "python")
    stubs = {"tools": [], "summary_model": "mockllm/model"}
    ns = run(snip, **{k: v for k, v in stubs.items() if k in snip.fill_in})
    (call,) = react_calls
    compaction = call["compaction"]
    assert compaction is ns["compaction"] and call["tools"] == []
    assert type(compaction).__name__ == {"edit": "CompactionEdit", "trim": "CompactionTrim",
                                         "summary": "CompactionSummary"}[strategy.split(".")[1]]
    for key, value in expected.items():
        assert getattr(compaction, key) == value, key
    assert type(compaction.threshold) is type(expected["threshold"])  # float = share of the window, int = tokens
    p = get_strategy(strategy).resolve_params(params)
    assert compaction._memory == p["memory"]
    if strategy == "inspect_ai.summary":
        assert "summary_model = 'openai/gpt-4o-mini'" in snip.code
        assert str(compaction.model) == "mockllm/model"


# ====================================================================================== Codex and OpenHands
def test_codex_toml():

    (snip,) = export_setup("codex.auto_compact", {}, context_window=400_000)
    assert load_toml(snip.code) == {"model_context_window": 400_000} and "360000" in snip.note
    (snip,) = export_setup("codex.auto_compact", {"auto_compact_token_limit": 150_000}, context_window=400_000)
    assert load_toml(snip.code) == {"model_context_window": 400_000, "model_auto_compact_token_limit": 150_000}


@pytest.mark.parametrize(
    ("strategy", "params", "expected"),
    [
        ("openhands.observation_masking", {"attention_window": 100},
         {"type": "observation_masking", "attention_window": 100}),
        ("openhands.recent_events", {}, {"type": "recent", "keep_first": 1, "max_events": 10}),
        ("openhands.amortized_forgetting", {"max_size": 80, "keep_first": 1},
         {"type": "amortized", "max_size": 80, "keep_first": 1}),
        ("openhands.llm_summarizing", {"summarizer_model": 'm"x'},
         {"type": "llm", "llm_config": "condenser", "keep_first": 1, "max_size": 100, "max_event_length": 10000}),
    ],
)
def test_openhands_v0_toml(strategy, params, expected):

    (snip,) = export_setup(strategy, params)
    config = load_toml(snip.code)
    assert config["condenser"] == expected
    if expected["type"] == "llm":
        assert config["llm"]["condenser"] == {"model": 'm"x'}


def test_openhands_sdk_condenser_names():
    """openhands-sdk is not installed here: check the generated call against the spec's names (§6.2)."""
    (snip,) = export_setup("openhands.llm_summarizing_v1", {"max_size": 60, "keep_first": 2, "max_tokens": 90_000})
    tree = ast.parse(snip.code)
    calls = {node.func.id: {k.arg: k.value for k in node.keywords} for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    condenser = calls["LLMSummarizingCondenser"]
    assert set(condenser) == {"llm", "max_size", "keep_first", "max_tokens"}
    assert [ast.literal_eval(condenser[k]) for k in ("max_size", "keep_first", "max_tokens")] == [60, 2, 90_000]
    assert set(calls["Agent"]) == {"llm", "tools", "condenser"}
    (snip,) = export_setup("openhands.llm_summarizing_v1", {})
    assert "max_tokens" not in snip.code
