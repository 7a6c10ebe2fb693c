"""Every strategy's fast runner sends exactly what its reference sends, call by call.

A strategy is registered with its reference semantics (a :class:`compaction.strategies.contract.Strategy`, written
the way the framework documents it) and, optionally, a faster runner. This one test holds every fast runner to its
reference on every real log (capped to its first calls) and the bundled samples, under the smaller of two windows
sized to each log and each strategy's parameter grid (see ``corpus.py``): the same measures, triggers, targets, notes and model calls
at every call, and the same context sent, message by message.
"""

from __future__ import annotations

import pytest
from conftest import sample_paths
from corpus import GRID_POLICIES
from corpus import parameter_variants
from corpus import real_conversations
from corpus import windows_for

import compaction
from compaction.replay import Replay

STRATEGIES = sorted(compaction.strategies())
WITH_FAST_PATH = [name for name in STRATEGIES if compaction.strategies()[name].build is not None
                  and compaction.strategies()[name].reference is not None]


def corpus() -> list[tuple[str, compaction.Conversation]]:
    samples = [(path.name, compaction.load(path)) for path in sample_paths()]
    return [*samples, *real_conversations()]


def outcome(rep: Replay) -> list[tuple]:
    """Everything a call of ``rep`` reports, and what it sent (by value: the two runners build their own entries)."""
    calls = []
    for step in rep.steps:
        sent = tuple((item.index, item.fate, item.inserted_kind, item.represents, _json(item))
                     for item in rep.context_at(step.step))
        calls.append((step.tokens_uncompacted, step.tokens_before, step.tokens_sent, step.triggered,
                      step.compacted, step.target, step.note, step.model_calls, sent))
    return calls


def _json(item) -> str:
    import json

    return json.dumps(item.to_json(), sort_keys=True, default=str)


def _replay(conv, strategy: str, params: dict, window: int, compact_at: float, compact_to: float,
            reference: bool) -> Replay | str:
    try:
        return compaction.replay(conv, strategy, params, context_window=window, compact_at=compact_at,
                                 compact_to=compact_to, reference=reference)
    except ValueError as exc:  # a setting the framework itself rejects: both must reject it alike
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("strategy", WITH_FAST_PATH)
def test_fast_runner_sends_what_the_reference_sends(strategy: str) -> None:
    problems: list[str] = []
    compared = 0
    for name, conv in corpus():
        for w, window in enumerate(windows_for(conv)[-1:]):  # the smaller window: the one that compacts most
            for k, params in enumerate(parameter_variants(strategy)):
                compact_at, compact_to = GRID_POLICIES[(k + w) % len(GRID_POLICIES)]
                where = f"{strategy}{params or ''} on {name}, window {window}, at {compact_at}/{compact_to}"
                fast = _replay(conv, strategy, params, window, compact_at, compact_to, reference=False)
                ref = _replay(conv, strategy, params, window, compact_at, compact_to, reference=True)
                if isinstance(fast, str) or isinstance(ref, str):
                    if fast != ref:
                        problems.append(f"{where}: fast {fast!r} but reference {ref!r}")
                    continue
                compared += 1
                if (fast.lines, fast.persistence) != (ref.lines, ref.persistence):
                    problems.append(f"{where}: lines/persistence {fast.lines, fast.persistence} vs "
                                    f"{ref.lines, ref.persistence}")
                got, want = outcome(fast), outcome(ref)
                if got != want:
                    k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                    problems.append(f"{where}: call {k} differs:\n  fast      {str(got[k:k + 1])[:600]}\n"
                                    f"  reference {str(want[k:k + 1])[:600]}")
    assert compared, f"{strategy}: nothing compared"
    assert not problems, f"{len(problems)} differences; first:\n" + "\n".join(problems[:5])


def test_reference_only_strategies_run_through_the_engine() -> None:
    """A strategy with only a reference replays through the engine's ReferenceRunner."""
    from compaction.strategies.contract import ReferenceRunner

    reference_only = [name for name in STRATEGIES if compaction.strategies()[name].build is None]
    assert reference_only, "no reference-only strategy registered"
    info = compaction.strategies()[reference_only[0]]
    from compaction.strategies import RunContext
    from compaction.tokens import make_counter

    runner = info.make_runner(info.defaults(), RunContext(make_counter("approx")))
    assert isinstance(runner, ReferenceRunner)
