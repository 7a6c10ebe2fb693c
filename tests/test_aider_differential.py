"""Differential test: aider-chat 0.86.2's real ``ChatSummary`` with its real weak ``Model`` (only the model call is
stubbed: it returns the summary our replay wrote) and ``Coder``'s own move-back / background-summary / join code,
driven message by message over the real logs, the samples and aider-shaped chats with edit acknowledgements, against
our replay of ``aider.chat_summary``: the same chat sent at every call (done and current messages, summaries, the
``Ok.`` aider appends), the same summary requests byte for byte, and the same token counts per message.

aider-chat pins exact versions of most of its dependencies, so it runs in its own oracle environment
(``tests/oracle_env.py``), built once.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from conftest import sample_paths
from corpus import real_conversations
from oracle_env import oracle_python
from oracle_env import run_oracle
from summary_calls import recorded_summaries

import compaction
from compaction.aider_counter import aider_message
from compaction.conversation import Conversation
from compaction.conversation import Message
from compaction.conversation import Source
from compaction.conversation import assistant
from compaction.conversation import system
from compaction.conversation import user
from compaction.strategies.aider import SUMMARIZE_PROMPT
from compaction.strategies.aider import is_acknowledgement
from compaction.strategies.aider import is_ok

AIDER = ("aider-chat==0.86.2",)
STRATEGY = "aider.chat_summary"


@dataclass(frozen=True)
class Setup:
    moved_to_done: str
    max_chat_history_tokens: int = 0
    weak_model: str = "gpt-4o-mini"
    weak_model_max_input_tokens: int = 0
    #: the main model's input tokens (the run's context window), which the default budget derives from
    context_window: int = 16_000

    def __str__(self) -> str:
        return (f"{self.moved_to_done}-max{self.max_chat_history_tokens}-{self.weak_model}"
                f"-input{self.weak_model_max_input_tokens}")

    @property
    def params(self) -> dict:
        return {"moved_to_done": self.moved_to_done, "max_chat_history_tokens": self.max_chat_history_tokens,
                "weak_model": self.weak_model, "weak_model_max_input_tokens": self.weak_model_max_input_tokens}


GRID = (
    Setup("every_exchange"),  # the default budget: 16,000 / 16 → 1,024
    Setup("every_exchange", 4_000, "gemini/gemini-2.5-flash"),
    Setup("every_exchange", 2_048, weak_model_max_input_tokens=2_000),  # the oldest part of the head only
    Setup("edits", 600),
)


def aider_chat(edits: list[bool]) -> Conversation:
    """An aider-shaped chat: requests and replies with edit blocks, each edit acknowledged as aider does."""
    messages: list[Message] = [system("Act as an expert software developer. Always use best practices.")]
    for n, edited in enumerate(edits):
        messages.append(user(f"Please change `step_{n}()` in src/module_{n}.py so that it validates its input "
                             f"and logs what it rejects ({'x' * (40 + 7 * n)})."))
        body = "\n".join(f"    check(value_{k})  # rule {k} for step {n}" for k in range(6 + n % 4))
        messages.append(assistant(f"src/module_{n}.py\n```python\n<<<<<<< SEARCH\ndef step_{n}(value):\n=======\n"
                                  f"def step_{n}(value):\n{body}\n>>>>>>> REPLACE\n```"))
        if edited:
            messages.append(user(f"I committed the changes with git hash {n:07x} & commit msg: fix: validate "
                                 f"step_{n} input"))
            messages.append(assistant("Ok.", generated=False))
    return Conversation(tuple(messages), source=Source("python", conversation_id=f"aider-{len(edits)}"))


SYNTHETIC = {"aider-all-edits": aider_chat([True] * 9), "aider-some-edits": aider_chat([True, False, True, False,
                                                                                           False, True, True, False])}


def logs() -> list[tuple[str, Conversation]]:
    found = [(p.name, compaction.load(p)) for p in sample_paths("*.openai.json")]
    return [*found, *real_conversations(), *SYNTHETIC.items()]


LOGS = logs()


def sent(conv: Conversation) -> list[tuple[int, Message]]:
    """The messages the replay appends (the agent saw them; not the log's own summaries)."""
    return [(i, m) for i, m in enumerate(conv.messages)
            if not m.meta.get("hidden_from_agent") and i not in conv.log_summary_indices]


def ops_for(conv: Conversation, every_exchange: bool) -> list[list]:
    """What aider's coder does, message by message: exchanges move back after an acknowledged edit (and, with
    every_exchange, when the next exchange starts), each model call is a send."""
    messages = sent(conv)
    start = 0
    while start < len(messages) and messages[start][1].role == "system":
        start += 1
    calls = set(conv.llm_call_indices)
    ops: list[list] = []
    cur = 0
    previous: Message | None = None
    skip_ok = False
    for index, m in messages[start:]:
        if skip_ok and is_ok(m):
            skip_ok = False
            previous = m
            continue
        skip_ok = False
        if is_acknowledgement(m):
            ops.append(["move_back", m.text])
            cur, skip_ok, previous = 0, True, m
            continue
        if every_exchange and m.role == "user" and cur and previous is not None and previous.role in ("assistant",
                                                                                                       "tool"):
            ops.append(["move_back", None])
            cur = 0
        if index in calls:
            ops.append(["call"])
        ops.append(["cur", aider_message(m)])
        cur += 1
        previous = m
    last_call = max((i for i, op in enumerate(ops) if op[0] == "call"), default=-1)
    return ops[: last_call + 1]  # what follows the log's last call no call of the log sees


def chat_of(items) -> list[dict]:
    lead = 0
    while lead < len(items) and items[lead].message.role == "system":
        lead += 1
    return [aider_message(item.message) for item in items[lead:]]


@pytest.fixture(scope="module")
def driven() -> dict[str, list]:
    """Every log under every setup: our replay, the summary requests it made, and what aider's code did."""
    python = oracle_python("aider-chat-0.86.2", AIDER)
    runs = []
    with recorded_summaries() as calls:
        for name, conv in LOGS:
            for setup in GRID:
                calls.clear()
                rep = compaction.replay(conv, STRATEGY, setup.params, context_window=setup.context_window)
                budget = setup.max_chat_history_tokens or min(max(setup.context_window / 16, 1024), 8192)
                runs.append((name, setup, rep, list(calls), {
                    "weak_model": setup.weak_model, "weak_model_max_input_tokens": setup.weak_model_max_input_tokens,
                    "max_chat_history_tokens": budget, "ops": ops_for(conv, setup.moved_to_done == "every_exchange"),
                    "summaries": [t for _, t in calls]}))
    originals = [m for _, conv in LOGS for _, m in sent(conv)]
    messages = [aider_message(m) for m in originals]
    result = run_oracle(python, "aider_chat_summary.py", {"runs": [spec for *_, spec in runs],
                                                          "count": {"model": "gpt-4o-mini", "messages": messages}})
    out: dict[str, list] = {"counts": [originals, result["counts"], result["summary_counts"]]}
    for (name, setup, rep, summaries, _), theirs in zip(runs, result["runs"], strict=True):
        out.setdefault(name, []).append((setup, rep, summaries, theirs))
    return out


def test_every_log_is_driven():
    assert len(LOGS) >= 10 and set(SYNTHETIC) <= {name for name, _ in LOGS}


@pytest.mark.parametrize(("name", "conv"), LOGS, ids=[name for name, _ in LOGS])
def test_real_chat_summary_and_replay_agree_call_by_call(driven, name, conv):
    for setup, rep, ours_summaries, theirs in driven[name]:
        where = str(setup)
        assert theirs["warnings"] == [], where
        assert len(theirs["calls"]) == len(rep.steps), where
        for step, chat in zip(rep.steps, theirs["calls"], strict=True):
            assert chat_of(rep.context_at(step.step)) == chat, f"{where}, call {step.step}"
        expected = [[{"role": "system", "content": SUMMARIZE_PROMPT}, {"role": "user", "content": t}]
                    for t, _ in ours_summaries]
        assert theirs["summary_requests"] == expected, where
        assert sum(len(s.model_calls) for s in rep.steps) == len(ours_summaries), where


def test_the_grid_summarizes_and_drops_summaries(driven):
    """Summaries are used (every_exchange on multi-turn logs) and dropped (aider's race after an edit)."""
    applied = sum(1 for name, _ in LOGS for _, rep, _, _ in driven[name] for s in rep.steps
                  if s.compacted)
    dropped = sum(1 for _, rep, _, _ in driven["aider-all-edits"] for s in rep.steps if s.declined)
    assert applied >= 10 and dropped >= 2
    assert all(not s.compacted for _, rep, _, _ in driven["aider-all-edits"] for s in rep.steps)
    assert any(s.compacted for setup, rep, _, _ in driven["aider-some-edits"] for s in rep.steps
               if setup.moved_to_done == "every_exchange")


def test_token_counts_are_the_weak_models(driven):
    """Each message's count (``token_count`` of its dict) and a summary's (``token_count`` of a one-message list)."""
    from compaction.strategies.aider import ChatSummary
    from compaction.strategies.base import RunContext

    originals, theirs, summary_theirs = driven["counts"]
    counter = compaction.make_counter("aider")
    assert [counter.count_one(m) for m in originals] == theirs
    strategy = ChatSummary(compaction.strategies()[STRATEGY].defaults(), RunContext(counter))
    users = [aider_message(m)["content"] for m in originals if aider_message(m)["role"] == "user"]
    assert [strategy.summary_tokens(Message("user", (text,))) for text in users] == summary_theirs
