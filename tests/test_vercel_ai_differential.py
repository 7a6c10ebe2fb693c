"""Differential test: the ``ai`` package's own ``pruneMessages`` (npm ``ai`` 7.0.173, installed by
``npm ci --prefix tests/js``), driven as ``prepareStep`` drives it, against our replay of
``vercel_ai.prune_messages`` on every real log and the bundled samples.

Each log is read as the AI SDK's ``ModelMessage`` list (``model_messages``) and handed to Node in the chunks the
agent appends between two LLM calls. The harness (``tests/js/prune_messages.mjs``) keeps the step loop's message
state: before each call it appends the chunk, checks the cookbook's trigger (``JSON.stringify(messages).length /
4``) when one is set, and continues from what ``pruneMessages`` returned. After every call the test compares the
estimate, the trigger and the exact JSON text sent (its SHA-256 and length) with what our replay sends.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from conftest import sample_paths
from corpus import real_conversations

import compaction
from compaction.conversation import Conversation
from compaction.history import Entry
from compaction.history import original
from compaction.replay import hidden_from_agent
from compaction.strategies.vercel_ai import js_json
from compaction.strategies.vercel_ai import js_length
from compaction.strategies.vercel_ai import model_messages
from compaction.strategies.vercel_ai import parse_tool_calls
from compaction.strategies.vercel_ai import to_json
from compaction.strategies.vercel_ai import tool_calls_option

JS = Path(__file__).parent / "js"
NAME = "vercel_ai.prune_messages"

if shutil.which("node") is None:
    pytest.skip("node is not installed (Node 20 runs the ai package)", allow_module_level=True)
if not (JS / "node_modules" / "ai" / "package.json").exists():
    pytest.skip("the ai package is not installed: run `npm ci --prefix tests/js`", allow_module_level=True)


def conversations() -> list[tuple[str, Conversation]]:
    samples = [(p.name, compaction.load(p)) for p in sample_paths("*.openai.json")]
    return [*real_conversations(), *samples]


#: (reasoning, tool_calls, empty_messages, compact_after as a fraction of the log's final JSON estimate)
SETUPS = (
    ("none", "before-last-2-messages", "remove", 0.0),
    ("all", "before-last-message", "keep", 0.0),
    ("before-last-message", "all", "remove", 0.0),
    ("none", "before-last-0-messages", "keep", 0.0),
    ("all", '[{"type": "before-last-2-messages", "tools": ["Bash", "bash", "execute_bash", "read_file"]},'
            ' {"type": "before-last-8-messages"}]', "remove", 0.0),
    ("all", "before-last-3-messages", "remove", 0.3),
    ("none", '[{"type": "all", "tools": ["Read", "str_replace_editor", "run_tests"]}]', "keep", 0.5),
)


def appended(conv: Conversation) -> list[int]:
    """The originals a replay appends, in order (hidden messages and the log's own summaries are left out)."""
    skipped = hidden_from_agent(conv) | conv.log_summary_indices
    return [i for i in range(len(conv.messages)) if i not in skipped]


def tool_runs(conv: Conversation) -> dict[int, int]:
    """Each tool result's run: results appended next to each other answer one step (one tool message)."""
    runs: dict[int, int] = {}
    previous: int | None = None
    for i in appended(conv):
        m = conv.messages[i]
        if m.tool_result is not None or m.role == "tool":
            runs[i] = runs[previous] if previous in runs else i
        previous = i
    return runs


def chunks(conv: Conversation) -> list[list[dict]]:
    """The ModelMessages appended before each LLM call (the first chunk: everything before the first call)."""
    runs, calls = tool_runs(conv), set(conv.llm_call_indices)
    out: list[list[dict]] = []
    pending: list[Entry] = []
    for i in appended(conv):
        if i in calls:
            out.append(to_json(model_messages(pending, runs), pending))
            pending = []
        pending.append(original(conv.messages[i], i))
    return out


def sent_json(replay: compaction.Replay, k: int, runs: dict[int, int]) -> str:
    entries = [Entry(item.message, item.index) for item in replay.context_at(k)]
    return js_json(to_json(model_messages(entries, runs), entries))


@cache
def estimate_of(name: str) -> float:
    conv = dict(conversations())[name]
    return js_length(js_json([m for chunk in chunks(conv) for m in chunk])) / 4


def drive_node(runs: list[dict]) -> list[list[dict]]:
    proc = subprocess.run(["node", str(JS / "prune_messages.mjs")], input=json.dumps({"runs": runs}),
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def options(reasoning: str, tool_calls: str, empty: str) -> dict:
    return {"reasoning": reasoning, "toolCalls": tool_calls_option(parse_tool_calls(tool_calls)),
            "emptyMessages": empty}


@pytest.mark.parametrize("setup", SETUPS, ids=[f"{s[0]}|{s[1][:30]}|{s[2]}|{s[3]}" for s in SETUPS])
def test_the_package_and_our_replay_send_the_same_json_at_every_call(setup):
    reasoning, tool_calls, empty, fraction = setup
    convs = conversations()
    thresholds = [int(estimate_of(name) * fraction) for name, _ in convs]
    results = drive_node([{"chunks": chunks(conv), "options": options(reasoning, tool_calls, empty),
                           "compactAfterTokens": threshold} for (_, conv), threshold in zip(convs, thresholds)])
    pruned_somewhere = 0
    for (name, conv), threshold, theirs in zip(convs, thresholds, results):
        params = {"reasoning": reasoning, "tool_calls": tool_calls, "empty_messages": empty,
                  "compact_after_tokens": threshold}
        ours = compaction.replay(conv, NAME, params)
        runs = tool_runs(conv)
        assert len(ours.steps) == len(theirs), name
        for step, call in zip(ours.steps, theirs):
            where = f"{name}, call {step.step} (message {step.message_index})"
            text = sent_json(ours, step.step, runs)
            assert js_length(text) == call["length"], where
            assert hashlib.sha256(text.encode("utf-8")).hexdigest() == call["sent"], where
            assert step.compacted == call["pruned"], where
            if threshold:
                assert step.triggered == call["triggered"], where
            pruned_somewhere += step.compacted
    assert pruned_somewhere > 0


def unique_call_ids(conv: Conversation) -> bool:
    ids = [c.id for m in conv.messages for c in m.tool_calls]
    return len(ids) == len(set(ids))


def test_one_rule_before_every_step_is_one_prune_of_the_whole_history():
    """The persistent prepareStep list equals pruneMessages over the whole history when one rule runs before every
    step and no tool call id repeats (a repeated id protects an older pair in the whole history that an earlier
    step had already removed: tau-bench reuses ids). The package says so for every real log."""
    convs = [(name, conv) for name, conv in conversations() if unique_call_ids(conv)]
    assert len(convs) >= 10
    for reasoning, tool_calls, empty in (("all", "before-last-2-messages", "remove"),
                                         ("before-last-message", "before-last-5-messages", "keep")):
        results = drive_node([{"chunks": chunks(conv), "options": options(reasoning, tool_calls, empty),
                               "compactAfterTokens": 0} for _, conv in convs])
        for (name, _), theirs in zip(convs, results):
            assert [c["sent"] for c in theirs] == [c["projection"] for c in theirs], name


# ------------------------------------------------------------------------------------------------ the export
@pytest.mark.parametrize("params", [
    {"tool_calls": "before-last-2-messages", "reasoning": "all"},
    {"tool_calls": '[{"type": "all", "tools": ["read_file"]}]', "empty_messages": "keep", "compact_after_tokens": 50},
    {"tool_calls": "all", "compact_after_tokens": 10**7},
])
def test_the_exported_prepare_step_prunes_as_the_replay_does(params, tmp_path):
    """The snippet, run by Node against the installed package (its two fill-in names stubbed), returns from
    prepareStep exactly the messages our pruneMessages keeps (nothing, below the trigger)."""
    from compaction.export import export_setup
    from compaction.strategies.vercel_ai import prune_messages

    (snippet,) = export_setup(NAME, params)
    conv = compaction.load(sample_paths("*.openai.json")[0])
    entries = [original(m, i) for i, m in enumerate(conv.messages[:40])]
    messages = model_messages(entries)
    info = compaction.strategies()[NAME]
    values = info.resolve_params(params)
    estimate = js_length(js_json(to_json(messages, entries))) / 4
    pruned = prune_messages(messages, values["reasoning"], parse_tool_calls(values["tool_calls"]),
                            values["empty_messages"])
    expected = (None if values["compact_after_tokens"] and estimate <= values["compact_after_tokens"]
                else {"messages": to_json(pruned, entries)})
    stubs = ("const yourModel = { specificationVersion: 'v3', provider: 'stub', modelId: 'stub',\n"
             "  doGenerate: async () => { throw new Error('not called'); } };\nconst yourTools = {};\n")
    driver = ("\nconst input = JSON.parse(await new Promise((resolve) => { let t = ''; process.stdin.on('data', "
              "(c) => { t += c; }); process.stdin.on('end', () => resolve(t)); }));\n"
              "process.stdout.write(JSON.stringify(prepareStep({ messages: input }) ?? null));\n")
    script = JS / f"_snippet_{tmp_path.name}.mjs"  # beside node_modules, so that 'ai' resolves
    script.write_text(stubs + snippet.code + driver, encoding="utf-8")
    try:
        proc = subprocess.run(["node", str(script)], input=json.dumps(to_json(messages, entries)), capture_output=True,
                              text=True, timeout=120, check=False)
    finally:
        script.unlink()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == expected
