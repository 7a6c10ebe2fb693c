"""SWE-agent history processors and the "Complexity Trap" paper setups (Lindenbauer et al., arXiv 2508.21433).

``LastNObservations`` runs over the full trajectory before every query (a projection): observations older than the
last ``n`` are replaced by ``Old environment output: (<L> lines omitted)``; the first observation — SWE-agent's
instance prompt — is never elided; actions and reasoning stay. The paper's LLM-Summary setup summarizes all but the
last M turns every N turns (persisted, like OpenHands condensation), and its Hybrid setup masks on top of that.

Observations are tool results and user messages whose meta has ``message_type == "observation"`` (SWE-agent's own
label, kept by its trajectories). A log without the labels has no instance-prompt observation, so its first user
message (the task) stands in for it; in an unlabelled text-action log (no tool results at all) every user message
is an observation, as SWE-agent feeds environment output back as user turns.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from ..conversation import Image
from ..conversation import Message
from ..history import Entry
from ..history import inserted
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import RunContext
from .base import Runner
from .base import registrar
from .history_runner import Decision
from .history_runner import Follower
from .history_runner import HistoryRunner
from .history_runner import leading_system
from .history_runner import plural
from .history_runner import text_of
from .history_runner import with_text

DOCS = "https://github.com/SWE-agent/SWE-agent/blob/main/sweagent/agent/history_processors.py"
PAPER = "https://arxiv.org/abs/2508.21433"
REMOVE_TAG = "remove_output"
KEEP_TAG = "keep_output"
SUMMARY_INSTRUCTION = (
    "You maintain the memory of a software-engineering agent working on a repository task. Summarize the turns "
    "below (and any previous summary) so the agent can continue: the task, files inspected and edited, commands "
    "run and their outcomes, test status, and the next steps."
)


# ------------------------------------------------------------------------------------------------ observations
def is_labelled(entry: Entry) -> bool:
    """Whether the entry carries SWE-agent's ``message_type`` label."""
    return "message_type" in entry.message.meta


class Observations:
    """The observations of a history (demonstrations and inserted entries excluded), read entry by entry.

    With SWE-agent's ``message_type`` labels, the labels decide (tool results count too). Without them: in a log
    with tool results, those are the observations, led by the first user message (the task); in a text-action log
    (no tool results at all) every user message is one, as SWE-agent feeds environment output back as user turns.
    ``labelled`` and ``text_actions`` are facts about the whole history: a reader over a growing history starts
    again when new entries change them.
    """

    def __init__(self, labelled: bool, text_actions: bool) -> None:
        self.labelled, self.text_actions = labelled, text_actions
        self._task_seen = labelled

    def is_observation(self, entry: Entry) -> bool:
        """Whether the next entry is an observation."""
        m = entry.message
        if entry.inserted is not None or m.meta.get("is_demo"):
            return False
        if m.tool_result is not None or m.meta.get("message_type") == "observation":
            return True
        if m.role == "user" and (self.text_actions or not self._task_seen):
            self._task_seen = True
            return True
        return False


def elided_text(message: Message) -> str:
    """``Old environment output: (<L> lines omitted)`` plus `` (<I> images omitted)`` when it had images."""
    lines = len(text_of(message).splitlines())
    images = len(message.images)
    if message.tool_result is not None and not isinstance(message.tool_result.result, str):
        images += sum(isinstance(p, Image) for p in message.tool_result.result)
    text = f"Old environment output: ({lines} lines omitted)"
    return text + (f" ({images} images omitted)" if images else "")


def _tags(message: Message) -> set[str]:
    tags = message.meta.get("tags") or ()
    return {str(t) for t in tags} if isinstance(tags, (list, tuple, set, frozenset)) else {str(tags)}


class LastNObservations:
    """``LastNObservations(n, polling, always_remove_output_for_tags, always_keep_output_for_tags)``."""

    def __init__(self, n: int, polling: int = 1, remove_tags: Sequence[str] = (REMOVE_TAG,),
                 keep_tags: Sequence[str] = (KEEP_TAG,)) -> None:
        if n <= 0:
            raise ValueError(f"n must be a positive integer, got {n}")
        if polling < 1:
            raise ValueError(f"polling must be at least 1, got {polling}")
        self.n, self.polling = n, polling
        self.remove_tags, self.keep_tags = set(remove_tags), set(keep_tags)

    def ages_out(self, observations: int) -> int:
        """How many of the first observations are old enough to elide (the very first one excepted) when there
        are ``observations`` of them."""
        return max(0, (observations // self.polling) * self.polling - self.n)

    def elides(self, message: Message, aged: bool) -> bool:
        """Whether an observation's output is replaced, ``aged`` when it is old enough."""
        tags = _tags(message)
        return bool((aged and not tags & self.keep_tags) or tags & self.remove_tags)


class _Elision(Follower):
    """The observations LastNObservations elides in the history so far, kept up to date as it grows (the elided
    range only moves forward; a label or first tool result that changes what an observation is starts it again)."""

    def __init__(self, runner: SweAgentRunner, masking: LastNObservations) -> None:
        super().__init__()
        self.runner, self.masking = runner, masking

    def follow(self, stored: list[Entry]) -> None:
        new = self.unread(stored)
        if new is not None and self._changes_observations(new):
            self.start_over()
        super().follow(stored)

    def _changes_observations(self, new: Sequence[Entry]) -> bool:
        """Whether ``new`` entries change what an observation is (a first label, a first tool result)."""
        now = self.observations
        labelled = now.labelled or any(is_labelled(e) for e in new)
        text_actions = not labelled and now.text_actions and not any(e.message.tool_result is not None for e in new)
        return (labelled, text_actions) != (now.labelled, now.text_actions)

    def restart(self) -> None:
        labelled = any(is_labelled(e) for e in self.stored)
        text_actions = not labelled and not any(e.message.tool_result is not None for e in self.stored)
        self.observations = Observations(labelled, text_actions)
        self.view = self.runner.masked_view(self.stored)
        self._positions: list[int] = []
        self._aged = 1  # observations[1:aged] have been judged as aged (the first one never ages)
        self.elided: set[int] = set()

    def feed(self, position: int, entry: Entry) -> None:
        if not self.observations.is_observation(entry):
            return
        self._positions.append(position)
        if self.masking.elides(entry.message, aged=False):
            self._elide(position)

    def advance(self) -> int:
        """Elide the observations that aged out; how many are elided in all."""
        aged = self.masking.ages_out(len(self._positions))
        for position in self._positions[self._aged:aged]:
            if self.masking.elides(self.stored[position].message, aged=True):
                self._elide(position)
        self._aged = max(self._aged, aged)
        return len(self.elided)

    def _elide(self, position: int) -> None:
        if position in self.elided:
            return
        self.elided.add(position)
        self.view.replace(position, self.runner.edited(self.stored[position], "masked",
                                                       lambda m: with_text(m, elided_text(m)), mark="masked"))


# ------------------------------------------------------------------------------------------------ summary
def turn_starts(entries: Sequence[Entry], start: int) -> list[int]:
    """Positions of the assistant messages from ``start`` on: each opens one turn (action + its observations)."""
    return [i for i in range(start, len(entries)) if entries[i].message.role == "assistant"]


class TurnSummary:
    """The paper's LLM-Summary: once ``every_n_turns`` turns are in the history, all but the last
    ``keep_last_m_turns`` turns (and the previous summary) are replaced by one summary after the task."""

    def __init__(self, every_n_turns: int, keep_last_m_turns: int) -> None:
        if keep_last_m_turns < 0:
            raise ValueError(f"keep_last_m_turns must be at least 0, got {keep_last_m_turns}")
        if every_n_turns <= keep_last_m_turns:
            raise ValueError(f"summarize_every_n_turns ({every_n_turns}) must exceed keep_last_m_turns "
                             f"({keep_last_m_turns}), or nothing would be summarized")
        self.every_n, self.keep_m = every_n_turns, keep_last_m_turns

    def apply(self, runner: HistoryRunner, params: Mapping[str, Any], stored: list[Entry]) -> Decision:
        head = _head_length(stored)
        starts = turn_starts(stored, head)
        if len(starts) < self.every_n:
            return Decision()
        cut = starts[len(starts) - self.keep_m] if self.keep_m else len(stored)
        covered = stored[head:cut]
        call = runner.summarize(params, SUMMARY_INSTRUCTION, [e.message for e in covered])
        summary = inserted(Message("user", (call.text,), meta={"swe_agent": "summary"}), "summary", covered,
                           summarizer=call.backend, simulated=call.simulated)
        return Decision([*stored[:head], summary, *stored[cut:]], True,
                        f"summarized {plural(len(starts) - self.keep_m, 'turn')}, kept the last {self.keep_m}",
                        model_calls=[call.usage()])


def _head_length(entries: Sequence[Entry]) -> int:
    """System prompt plus the task (the first user message), which summaries never cover."""
    head = leading_system(entries)
    while head < len(entries) and entries[head].message.role == "user" and entries[head].inserted is None:
        head += 1
    return head


# ------------------------------------------------------------------------------------------------ runner
class SweAgentRunner(HistoryRunner):
    """Masking as a projection, a persisted turn summary, or both (the paper's hybrid)."""

    def __init__(self, params: Mapping[str, Any], ctx: RunContext, masking: LastNObservations | None,
                 summary: TurnSummary | None) -> None:
        self.projects = masking is not None
        super().__init__(ctx)
        self.params, self.masking, self.summary = params, masking, summary
        self._elision = _Elision(self, masking) if masking is not None else None

    def rewrite(self, stored: list[Entry], tokens: int) -> Decision:
        return self.summary.apply(self, self.params, stored) if self.summary is not None else Decision()

    def project(self, stored: list[Entry], tokens: int) -> Decision:
        assert self._elision is not None  # only a masking runner projects
        self._elision.follow(stored)
        elided = self._elision.advance()
        if not elided:
            return Decision()
        return Decision.sending(self._elision.view, True, f"{plural(elided, 'observation')} elided")


def _masking(p: Mapping[str, Any]) -> LastNObservations:
    return LastNObservations(int(p["n"]), int(p["polling"]), p["always_remove_output_for_tags"],
                             p["always_keep_output_for_tags"])


def _summary(p: Mapping[str, Any]) -> TurnSummary:
    return TurnSummary(int(p["summarize_every_n_turns"]), int(p["keep_last_m_turns"]))


MASKING_PARAMS = (
    Param("n", "int", 10, "`n`: observations kept in full (SWE-agent requires it; 10 is the paper's masking setup).",
          minimum=1, maximum=1000),
    Param("polling", "int", 1, "`polling`: the masked range only advances every `polling` observations (keeps the "
          "prompt prefix stable for caching).", minimum=1, maximum=100),
    Param("always_remove_output_for_tags", "str_list", (REMOVE_TAG,), "`always_remove_output_for_tags`: "
          "observations with one of these meta `tags` are always elided.", advanced=True),
    Param("always_keep_output_for_tags", "str_list", (KEEP_TAG,), "`always_keep_output_for_tags`: observations with "
          "one of these meta `tags` are never elided by age.", advanced=True),
)
SUMMARY_PARAMS = (
    Param("summarize_every_n_turns", "int", 21, "`summarize_every_n_turns` (N): summarize once this many turns are "
          "in the history (paper: 21).", minimum=2, maximum=1000),
    Param("keep_last_m_turns", "int", 10, "`keep_last_m_turns` (M): the most recent turns kept verbatim "
          "(paper: 10).", minimum=0, maximum=1000),
    *SUMMARIZER_PARAMS,
)


def _build(with_masking: bool, with_summary: bool) -> Callable[[Mapping[str, Any], RunContext], Runner]:
    def build(params: Mapping[str, Any], ctx: RunContext) -> Runner:
        return SweAgentRunner(params, ctx, _masking(params) if with_masking else None,
                              _summary(params) if with_summary else None)

    return build


_register = registrar("swe_agent", policy="none", docs_url=PAPER)

_register(
    "last_n_observations",
    title="SWE-agent · LastNObservations (observation masking)",
    summary=(
        "Before every query, observations (tool results) older than the last n are replaced by `Old environment "
        "output: (<L> lines omitted)`; the first observation (the task) is never elided and actions stay. The "
        "paper's masking setup is n=10. Always on; ignores context_window/compact_at/compact_to."
    ),
    params=MASKING_PARAMS,
    build=_build(True, False),
    docs_url=DOCS,
)

_register(
    "llm_summary",
    title="SWE-agent · LLM-Summary (Complexity Trap paper)",
    summary=(
        "The paper's OpenHands-style summarizer in SWE-agent: every N=21 turns, all but the last M=10 turns "
        "(and the previous summary) become one summary placed after the task; persisted. Turn-based; ignores "
        "context_window/compact_at/compact_to."
    ),
    params=SUMMARY_PARAMS,
    build=_build(False, True),
)

_register(
    "hybrid",
    title="SWE-agent · Hybrid: LLM-Summary + masking (Complexity Trap paper)",
    summary=(
        "The paper's hybrid: the LLM-Summary (N=21, M=10) persists, and observation masking (n=10) is applied on "
        "top before every query. Ignores context_window/compact_at/compact_to."
    ),
    params=(*MASKING_PARAMS, *SUMMARY_PARAMS),
    build=_build(True, True),
)
