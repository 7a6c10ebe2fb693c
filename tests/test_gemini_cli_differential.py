"""Gemini CLI differential tests against ``@google/gemini-cli-core`` 0.61.0 (``tests/js/gemini_cli``, driven by
``harness.mjs``): the ``gemini-cli`` counter against ``estimateTokenCountSync`` and the split point against
``findCompressSplitPoint`` on every message and every call of every real log and sample, and both strategies
replayed call by call against the CLI's own ``ChatCompressionService`` + ``ToolOutputMaskingService`` (driven the
way ``GeminiClient`` drives them, summary model stubbed with our summarizer's texts): after every call the history
sent must be the same contents, part for part, with the same estimate, and every summary request the same head.

Needs Node and ``npm ci --prefix tests/js/gemini_cli``; skipped (saying so) without them."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_LOGS
from conftest import ROOT
from conftest import sample_paths

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.formats.base import LoadError
from compaction.gemini_contents import contents
from compaction.gemini_contents import is_environment_context
from compaction.gemini_contents import message_parts
from compaction.gemini_contents import spans
from compaction.history import original
from compaction.js_text import js_stringify
from compaction.replay import hidden_from_agent
from compaction.strategies import RunContext
from compaction.strategies import _gemini_passes as passes
from compaction.strategies import gemini_cli
from compaction.strategies._gemini_passes import ChatView
from compaction.strategies._gemini_passes import ContentSizer
from compaction.strategies._gemini_passes import find_compress_split_point
from compaction.summarizers import SummaryCall
from compaction.summarizers import SummaryRequest
from compaction.tokens import make_counter

HARNESS_DIR = ROOT / "tests" / "js" / "gemini_cli"
HARNESS = HARNESS_DIR / "harness.mjs"
GEMINI_LIMIT = 1_048_576  # tokenLimit() of every Gemini model
ESTIMATOR = make_counter("gemini-cli")

if shutil.which("node") is None:
    pytest.skip("node is not installed: the Gemini CLI differential tests need Node 20", allow_module_level=True)
if not (HARNESS_DIR / "node_modules" / "@google" / "gemini-cli-core").is_dir():
    pytest.skip("@google/gemini-cli-core is not installed: run `npm ci --prefix tests/js/gemini_cli`",
                allow_module_level=True)


def run_harness(jobs: list[dict], cwd: Path) -> list[Any]:
    """The harness's results for ``jobs`` (run in ``cwd``: the files Gemini CLI writes land there)."""
    out = cwd / "harness-results.json"
    done = subprocess.run(["node", str(HARNESS), str(out)], input=json.dumps({"jobs": jobs}), capture_output=True,
                          text=True, cwd=cwd, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())["results"]


# ------------------------------------------------------------------------------------------------- inputs
def _every_log() -> list[Path]:
    real = sorted(p for p in REAL_LOGS.rglob("*") if p.is_file() and p.name != "README.md") if REAL_LOGS.is_dir() else []
    fixtures = sorted((ROOT / "tests" / "fixtures" / "gemini-cli").rglob("*.json*"))
    return [*real, *fixtures, *sample_paths("*.openai.json")]


def _conversations() -> list[tuple[str, Conversation]]:
    out = []
    for path in _every_log():
        try:
            conv = compaction.load(path)
        except LoadError:
            continue  # a log no reader of this checkout reads (its reader has its own tests)
        if conv.llm_call_indices:
            out.append((path.name[:50], conv))
    return out


CONVERSATIONS = _conversations()
if not CONVERSATIONS:
    pytest.skip("no real log or sample to replay", allow_module_level=True)


def seen(conv: Conversation) -> list[int]:
    """Indices of the messages a replay feeds its strategy."""
    hidden = hidden_from_agent(conv) | conv.log_summary_indices
    return [i for i in range(len(conv.messages)) if i not in hidden]


def chat(messages: list[Message]) -> list[dict]:
    """What Gemini CLI's chat holds for ``messages`` (contents; system messages are its system instruction)."""
    return contents(messages)


# ------------------------------------------------------------------------------------------------- estimator, split
def test_estimator_matches_estimate_token_count_sync_on_every_message_and_call(tmp_path):
    jobs, ours = [], []
    for _, conv in CONVERSATIONS:
        kept = [conv.messages[i] for i in seen(conv)]
        per_message = [message_parts(m) for m in kept]
        jobs.append({"op": "estimates", "lists": per_message})
        ours.append([ESTIMATOR.count([m]) for m in kept])
        cuts = [k for k, m in enumerate(kept) if m.role == "assistant"] + [len(kept)]
        jobs.append({"op": "prefix_estimates", "parts": per_message, "cuts": cuts})
        ours.append([ESTIMATOR.count(kept[:k]) for k in cuts])
    theirs = run_harness(jobs, tmp_path)
    for (name, _), mine, (each, prefixes) in zip(CONVERSATIONS, zip(ours[::2], ours[1::2], strict=True),
                                                 zip(theirs[::2], theirs[1::2], strict=True), strict=True):
        assert mine[0] == each, f"{name}: per-message estimates differ"
        assert mine[1] == prefixes, f"{name}: estimates before each call differ"


def test_split_point_matches_find_compress_split_point_at_every_call(tmp_path):
    jobs, ours = [], []
    sizer = ContentSizer()
    for _, conv in CONVERSATIONS:
        kept = [original(conv.messages[i], i) for i in seen(conv)]
        cuts, points = [], []
        for k, entry in enumerate(kept):
            if entry.message.role != "assistant":
                continue
            view = ChatView.of(kept[:k])
            sizes = [sizer.size(t.role, view.messages(view.turn_positions(t))) for t in view.turns]
            cuts.append(len(view.turns))
            points.append(find_compress_split_point(sizes, 0.7))
        jobs.append({"op": "prefix_splits", "contents": chat([e.message for e in kept]), "cuts": cuts,
                     "fraction": 0.7})
        ours.append(points)
    theirs = run_harness(jobs, tmp_path)
    for (name, _), mine, found in zip(CONVERSATIONS, ours, theirs, strict=True):
        assert mine == found, f"{name}: split points differ"


def test_content_sizes_are_json_stringify_lengths(tmp_path):
    sizer = ContentSizer()
    for name, conv in CONVERSATIONS:
        messages = [conv.messages[i] for i in seen(conv)]
        view = ChatView.of([original(m, i) for i, m in enumerate(messages)])
        for turn, content in zip(view.turns, chat(messages), strict=False):
            size = sizer.size(turn.role, view.messages(view.turn_positions(turn)))
            assert size == passes.content_size(content), name


# ------------------------------------------------------------------------------------------------- replays
def with_environment(conv: Conversation, text: str) -> Conversation:
    """The conversation opening with Gemini CLI's environment-context turn as the harness writes it (replacing the
    log's own; logs of older versions do not record it, yet the chat holds one), so that the CLI's re-created turn
    after a compression is the same one ours re-inserts."""
    messages = list(conv.messages)
    position = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    if position < len(messages) and is_environment_context(messages[position]):
        messages[position] = replace(messages[position], texts=(text,))
        return replace(conv, messages=tuple(messages))
    env = Message("user", (text,), meta={"id": "environment-context"})
    shift = lambda i: i + (i >= position)  # noqa: E731
    return replace(conv, messages=(*messages[:position], env, *messages[position:]),
                   usage={shift(i): u for i, u in conv.usage.items()},
                   events=tuple(replace(e, message_index=shift(e.message_index)) for e in conv.events),
                   log_summary_indices=frozenset(map(shift, conv.log_summary_indices)))


def temp_dir(conv: Conversation) -> str:
    return f"~/.gemini/tmp/{conv.source.meta.get('projectHash') or 'project'}"


def harness_config(conv: Conversation, params: dict, compression: bool, masking: bool) -> dict:
    return {
        "projectTempDir": temp_dir(conv), "sessionId": conv.source.conversation_id, "model": "gemini-2.5-pro",
        "threshold": params.get("compression_threshold", 0.5),
        "truncateToolOutputThreshold": params.get("truncate_tool_output_threshold", 40_000),
        "protectionThresholdTokens": params.get("protection_threshold_tokens", 50_000),
        "minPrunableThresholdTokens": params.get("min_prunable_threshold_tokens", 30_000),
        "protectLatestTurn": params.get("protect_latest_turn", True),
        "compression": compression, "masking": masking,
    }


@dataclass
class Record:
    """What our replay decided at each call (by the message index of the call)."""

    last_prompt: dict[int, int] = field(default_factory=dict)
    status: dict[int, str] = field(default_factory=dict)
    #: the summary model's answers, as the strategy uses them (the harness's stub answers the same)
    answers: dict[int, list[str]] = field(default_factory=dict)
    requests: dict[int, list[SummaryRequest]] = field(default_factory=dict)


class Recorder:
    """Records what ``ChatCompression`` decides, call by call, into :attr:`record` (one per replay)."""

    def __init__(self, monkeypatch) -> None:
        self.record = Record()
        self.call: int | None = None
        recorder = self
        strategy_class = gemini_cli.ChatCompression
        triggered, compact, snapshot = strategy_class.triggered, strategy_class.compact, strategy_class.snapshot

        def on_triggered(strategy, entries, call):
            result = triggered(strategy, entries, call)
            recorder.call = call.message_index
            recorder.record.last_prompt[call.message_index] = strategy.last_prompt
            recorder.record.status[call.message_index] = strategy.status
            return result

        def on_compact(strategy, entries, target, counter):
            result = compact(strategy, entries, target, counter)
            recorder.record.status[recorder.call] = strategy.status
            return result

        def on_snapshot(strategy, text, simulated):
            result = snapshot(strategy, text, simulated)
            recorder.record.answers.setdefault(recorder.call, []).append(result)
            return result

        monkeypatch.setattr(strategy_class, "triggered", on_triggered)
        monkeypatch.setattr(strategy_class, "compact", on_compact)
        monkeypatch.setattr(strategy_class, "snapshot", on_snapshot)
        summarizer = RunContext.summarizer

        class Recording:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def summarize(self, request: SummaryRequest, counter: Any) -> SummaryCall:
                recorder.record.requests.setdefault(recorder.call, []).append(request)
                return self.inner.summarize(request, counter)

        monkeypatch.setattr(RunContext, "summarizer", lambda ctx, params: Recording(summarizer(ctx, params)))

    def start(self) -> Record:
        """A new record for the next replay."""
        self.record, self.call = Record(), None
        return self.record


def digest(value: Any) -> str:
    """The harness's fingerprint of a JSON value: sha256 of its ``JSON.stringify``."""
    return hashlib.sha256(js_stringify(value).encode("utf-8")).hexdigest()


_CONTENT_JSON: dict[tuple[int, ...], tuple[list[Message], str]] = {}


def history_digest(messages: list[Message]) -> str:
    """``digest(chat(messages))``, each content's JSON kept by the identities of its messages (a replay sends the
    same contents call after call)."""
    texts = []
    for span in spans(messages):
        group = messages[span.start:span.end]
        key = tuple(map(id, group))
        hit = _CONTENT_JSON.get(key)
        if hit is None or any(a is not b for a, b in zip(hit[0], group, strict=True)):
            hit = _CONTENT_JSON[key] = (group, js_stringify(chat(group)[0]))
        texts.append(hit[1])
    return hashlib.sha256(("[" + ",".join(texts) + "]").encode("utf-8")).hexdigest()


def _calls(conv: Conversation, rep, record: Record | None) -> list[dict]:
    """For each call: the contents the log added since the previous one, the last prompt token count and the
    summary model's answers."""
    order = seen(conv)
    position = {index: k for k, index in enumerate(order)}
    calls, start = [], 0
    for step in rep.steps:
        end = position[step.message_index]
        call: dict[str, Any] = {"added": chat([conv.messages[i] for i in order[start:end]]), "lastPrompt": 0,
                                "summaries": []}
        start = end
        if record is not None:
            call["lastPrompt"] = record.last_prompt[step.message_index]
            call["summaries"] = record.answers.get(step.message_index, [])
        calls.append(call)
    return calls


def _compare(name: str, rep, steps: list[dict], record: Record | None) -> Counter:
    """Call by call: the same history sent, the same estimate, the same compression outcome and summary requests.
    Returns the outcomes seen (compression statuses, masked outputs)."""
    seen_outcomes: Counter = Counter()
    for step, theirs in zip(rep.steps, steps, strict=True):
        sent = [item.message for item in rep.context_at(step.step) if item.message.role != "system"]
        where = f"{name}, call {step.step}"
        assert history_digest(sent) == theirs["sent"], f"{where}: the history sent differs"
        assert ESTIMATOR.count(sent) == theirs["tokens"], f"{where}: estimates differ"
        seen_outcomes["masked outputs"] += theirs["masked"]
        seen_outcomes["calls sending truncated outputs"] += any(m.meta.get("gemini_truncated") for m in sent)
        if record is None:
            continue
        status = record.status.get(step.message_index, "NOOP")
        assert status == theirs["status"], where
        seen_outcomes[status] += 1
        ours = record.requests.get(step.message_index, [])
        assert len(ours) == len(theirs["requests"]), f"{where}: number of summary requests"
        for request, (head, last_role) in zip(ours, theirs["requests"], strict=True):
            mine = chat([m for m in request.prompt() if m.role != "system"])
            # the head (and, for the verification, the summary) byte for byte; the instruction is ours, in our words
            assert digest(mine[:-1]) == head, f"{where}: summary request differs"
            assert mine[-1]["role"] == last_role == "user", where
    return seen_outcomes


def _replay_all(tmp_path, monkeypatch, strategy: str, grid, compression: bool) -> Counter:
    """Replay every log under each setting ``grid(conversation)`` gives, ours and Gemini CLI's; the outcomes."""
    constants = run_harness([{"op": "constants", "config": harness_config(c, {}, True, True)}
                             for _, c in CONVERSATIONS], tmp_path)
    suffix = constants[0]["suffix"]
    monkeypatch.setattr(passes, "masked_file_suffix", lambda key: suffix)
    recorder = Recorder(monkeypatch) if compression else None
    runs, jobs = [], []
    for (name, conv), const in zip(CONVERSATIONS, constants, strict=True):
        prepared = with_environment(conv, const["environment"]) if compression else conv
        for params in grid(prepared):
            record = recorder.start() if recorder is not None else None
            rep = compaction.replay(prepared, strategy, params=params, context_window=GEMINI_LIMIT)
            masking = bool(params.get("tool_output_masking", True))
            jobs.append({"op": "replay", "config": harness_config(prepared, params, compression, masking),
                         "calls": _calls(prepared, rep, record)})
            runs.append((f"{name} {params}", rep, record))
    results = run_harness(jobs, tmp_path)
    outcomes: Counter = Counter()
    for (name, rep, record), steps in zip(runs, results, strict=True):
        outcomes += _compare(name, rep, steps, record)
    return outcomes


def tool_tokens(conv: Conversation) -> int:
    return ESTIMATOR.count([conv.messages[i] for i in seen(conv) if conv.messages[i].tool_result is not None])


def peak_prompt(conv: Conversation) -> int:
    """The largest last-prompt count a replay of the log can see: its reports, or the estimate of all of it."""
    reported = max((u.prompt_tokens for u in conv.usage.values()), default=0)
    return max(reported, ESTIMATOR.count([conv.messages[i] for i in seen(conv)]))


def masking_grid(conv: Conversation) -> list[dict]:
    tools = max(tool_tokens(conv), 10)
    small = {"protection_threshold_tokens": tools // 4, "min_prunable_threshold_tokens": tools // 5}
    return [{}, small, {**small, "protect_latest_turn": False}, {"protection_threshold_tokens": 0,
                                                                  "min_prunable_threshold_tokens": 0}]


def compression_grid(conv: Conversation) -> list[dict]:
    threshold = max(round(0.35 * peak_prompt(conv) / GEMINI_LIMIT, 6), 0.001)
    tools = max(tool_tokens(conv), 10)
    base = {"compression_threshold": threshold}
    late = {"compression_threshold": max(round(0.8 * peak_prompt(conv) / GEMINI_LIMIT, 6), 0.001)}
    return [
        base,
        late,  # more than 50,000 tokens of function responses by then: the budget truncates
        {**base, "tool_output_masking": False},
        {**base, "summarizer": "fixed-size", "summary_tokens": 20_000},  # inflates: then truncation only
        {**base, "truncate_tool_output_threshold": 600, "protection_threshold_tokens": tools // 4,
         "min_prunable_threshold_tokens": tools // 5},
    ]


def test_tool_output_masking_matches_gemini_cli_call_by_call(tmp_path, monkeypatch):
    outcomes = _replay_all(tmp_path, monkeypatch, "gemini_cli.tool_output_masking", masking_grid, compression=False)
    assert outcomes["masked outputs"] > 0, "no replay masked anything: the comparison proved nothing"


def test_chat_compression_matches_gemini_cli_call_by_call(tmp_path, monkeypatch):
    outcomes = _replay_all(tmp_path, monkeypatch, "gemini_cli.chat_compression", compression_grid, compression=True)
    for outcome in ("COMPRESSED", "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT", "CONTENT_TRUNCATED", "masked outputs",
                    "calls sending truncated outputs"):
        assert outcomes[outcome] > 0, f"no replay reached {outcome}: the comparison did not cover it"
