"""Differential test: google-adk 2.13.0's real ``Runner`` with ``EventsCompactionConfig`` on its ``App``, driven
invocation by invocation over the real logs and the samples (a stub model answers each call with the log's response,
each tool returns the log's result, the summarizer's model writes the summary our replay wrote), against our replay
of ``google_adk.events_compaction``: after every model call the same contents sent (summaries in place of the events
they cover, roles, texts, thoughts, calls and responses), the same summary requests byte for byte, and the same
compaction events.

google-adk downgrades packages the suite uses (opentelemetry-api, watchdog, websockets), so it runs in its own
oracle environment (``tests/oracle_env.py``), built once.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace

import pytest
from conftest import sample_paths
from corpus import capped
from corpus import real_conversations
from oracle_env import oracle_python
from oracle_env import run_oracle
from summary_calls import recorded_summaries

import compaction
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.strategies._adk_session import message_parts
from compaction.strategies._adk_session import response_value

ADK = ("google-adk==2.13.0",)
STRATEGY = "google_adk.events_compaction"
AGENT = "support_agent"


@dataclass(frozen=True)
class Setup:
    interval: int = 0
    overlap: int = 0
    #: the token threshold as a fraction of the log's largest estimated prompt (0: not set)
    threshold_ratio: float = 0.0
    retention: int = 0

    def __str__(self) -> str:
        return f"window{self.interval}+{self.overlap}-tokens{self.threshold_ratio}r{self.retention}"


GRID = (
    Setup(interval=2, overlap=1),
    Setup(interval=1, overlap=2),
    Setup(threshold_ratio=0.3, retention=0),
    Setup(threshold_ratio=0.25, retention=5),
    Setup(interval=3, overlap=0, threshold_ratio=0.5, retention=2),
)
#: ADK's runner takes about 0.1 s a model call: each log is driven up to this many calls
MAX_CALLS = 30
#: real logs that are another log reduced to plain messages (the same run twice)
DUPLICATES = ("openai-plain/mini-swe-agent", "openai-plain/openhands-completions", "openai-plain/tau-bench")


def drivable(conv: Conversation) -> Conversation | None:
    """The longest prefix of ``conv`` that ADK's flow produces as it is: after the instruction, invocations of one
    user text message, then responses, each call answered right after by its result (ids given, none used twice), the last response
    of an invocation without calls (the log's last invocation may stop after a result: the oracle's model then
    answers once more, past the log); None when the prefix has fewer than three model calls."""
    messages = conv.messages
    i = 0
    while i < len(messages) and messages[i].role == "system":
        i += 1
    end = i
    seen: set[str | None] = set()
    while i < len(messages):
        m = messages[i]
        if m.role != "user" or not m.texts or m.images or m.files or m.meta.get("hidden_from_agent"):
            break
        j, final = i + 1, False
        while j < len(messages) and messages[j].role == "assistant":
            a = messages[j]
            if a.meta.get("generated") is False or not (a.texts or a.tool_calls) or a.images or a.files:
                break
            ids = [c.id for c in a.tool_calls]
            if any(i in seen for i in ids):
                break
            seen.update(ids)
            if not ids:
                j, final = j + 1, True
                break
            results = messages[j + 1: j + 1 + len(ids)]
            if not all(ids) or len(set(ids)) != len(ids) or [r.tool_result.call_id if r.tool_result else None
                                                              for r in results] != ids:
                break
            j += 1 + len(ids)
            end = j
        if not final:
            break
        end = i = j
    prefix = replace(conv, messages=messages[:end], usage={k: v for k, v in conv.usage.items() if k < end},
                     events=(), log_summary_indices=frozenset())
    if conv.log_summary_indices or len(prefix.llm_call_indices) < 3:
        return None
    return prefix


def logs() -> list[tuple[str, Conversation]]:
    found = [(p.name, compaction.load(p)) for p in sample_paths("*.openai.json")]
    found += [(name, c) for name, c in real_conversations() if not name.startswith(DUPLICATES)]
    return [(name, conv) for name, c in found if (conv := drivable(capped(c, MAX_CALLS))) is not None]


LOGS = logs()


def adk_spec(conv: Conversation, rep: compaction.Replay, summaries: list[str], params: dict) -> dict:
    structured = conv.format == "google-adk"
    steps = {s.message_index: s for s in rep.steps}
    invocations: list[dict] = []
    values: dict[str, object] = {}
    for i, m in enumerate(conv.messages):
        if m.role == "system":
            continue
        if m.role == "user":
            invocations.append({"user": message_parts(m, structured), "responses": []})
        elif m.role == "assistant":
            usage = conv.usage.get(i)
            step = steps[i]
            count = None if usage is None else max(usage.prompt_tokens - (step.tokens_before - step.tokens_sent), 0)
            invocations[-1]["responses"].append({"parts": message_parts(m, structured), "prompt_token_count": count})
        else:
            values[m.tool_result.call_id] = response_value(m, structured)
    config = {"compaction_interval": params["compaction_interval"] or None,
              "overlap_size": params["overlap_size"] if params["compaction_interval"] else None,
              "token_threshold": params["token_threshold"] or None,
              "event_retention_size": params["event_retention_size"] if params["token_threshold"] else None}
    return {"agent_name": AGENT, "config": config, "invocations": invocations, "tool_values": values,
            "summaries": summaries}


def flat(contents: list[dict]) -> list[tuple[str, dict]]:
    return [(c["role"], p) for c in contents for p in c["parts"]]


def ours(items, structured: bool) -> list[tuple[str, dict]]:
    out = []
    for item in items:
        m: Message = item.message
        if m.role == "system":
            continue
        out += [("model" if m.role == "assistant" else "user", p) for p in message_parts(m, structured)]
    return out


@pytest.fixture(scope="module")
def driven() -> dict[str, list[tuple[Setup, compaction.Replay, list[tuple[str, str]], dict]]]:
    """Every log under every setup: our replay, the summaries it asked for (request transcript, text), and what
    the real Runner did (one oracle process for them all)."""
    python = oracle_python("google-adk-2.13.0", ADK)
    runs = []
    with recorded_summaries() as calls:
        for name, conv in LOGS:
            for setup in GRID:
                params = params_for(conv, setup)
                calls.clear()
                rep = compaction.replay(conv, STRATEGY, params)
                runs.append((name, setup, rep, list(calls), adk_spec(conv, rep, [t for _, t in calls], params)))
    results = run_oracle(python, "adk_events_compaction.py", {"runs": [spec for *_, spec in runs]})["runs"]
    out: dict[str, list] = {}
    for (name, setup, rep, summaries, _), theirs in zip(runs, results, strict=True):
        out.setdefault(name, []).append((setup, rep, summaries, theirs))
    return out


def test_there_are_logs_to_drive():
    assert len(LOGS) >= 4, [name for name, _ in LOGS]


def params_for(conv: Conversation, setup: Setup) -> dict:
    params = {"compaction_interval": setup.interval, "overlap_size": setup.overlap, "agent_name": AGENT,
              "token_threshold": 0, "event_retention_size": setup.retention}
    if setup.threshold_ratio:
        baseline = compaction.replay(conv, STRATEGY, {**params, "compaction_interval": 0, "token_threshold": 10**8})
        peak = max(s.tokens_uncompacted for s in baseline.steps)
        params["token_threshold"] = max(int(peak * setup.threshold_ratio), 1)
    return params


@pytest.mark.parametrize(("name", "conv"), LOGS, ids=[name for name, _ in LOGS])
def test_real_runner_and_replay_agree_call_by_call(driven, name, conv):
    structured = conv.format == "google-adk"
    compacted = 0
    for setup, rep, ours_summaries, theirs in driven[name]:
        where = f"{setup}"
        assert theirs["errors"] == [], where
        calls = len(rep.steps)
        assert len(theirs["requests"]) in (calls, calls + 1), where  # one more when the log stops after a result
        for step, request in zip(rep.steps, theirs["requests"]):
            assert ours(rep.context_at(step.step), structured) == flat(request), f"{where}, call {step.step}"
        # what ADK summarized after the log's last call (once the last invocation ended) no call of the log sees
        summaries = [r for r in theirs["summary_requests"] if r["before_call"] < calls]
        assert [flat(r["contents"]) for r in summaries] == [[("user", {"text": t})] for t, _ in ours_summaries], where
        assert [c["text"] for c in theirs["compactions"]][: len(ours_summaries)] == [t for _, t in ours_summaries]
        assert sum(1 for s in rep.steps if s.model_calls) == len({r["before_call"] for r in summaries}), where
        compacted += bool(ours_summaries)
    assert compacted >= 2, "the grid should compact this log under most setups"
