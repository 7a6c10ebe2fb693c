"""Claude Code's own compaction: ``claude_code.auto_compact`` (the summary that replaces the history when the context
is nearly full) and ``claude_code.microcompact`` (old tool results cleared in place), as the agent's released
bundles do it, release by release (``agents.md §1.3``; the release table is in :mod:`._claude_code_versions`).

**When auto-compact fires.** Before every call Claude Code measures its context its own way (:mod:`._claude_code_
context`): the usage the API reported for the last response (prompt + output tokens) plus its characters / 4
estimate of the messages since (:mod:`._claude_code_estimate`). It compacts when that reaches *effective window −
13,000*. The effective window is the model's window (200,000; 1,000,000 for 1M-context sessions), capped by
``autoCompactWindow`` / ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` where the release reads them, less the output reserve —
the model's max output up to 2.1.20 (32,000 with the default ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``), at most 20,000
from 2.1.21. ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=p`` gives ``min(floor(effective × p / 100), effective − 13,000)``: it
can only lower the threshold. Subagents compact the same way; the compaction request itself never does.

**Fitted to the logs.** Up to a real ``compact_boundary`` the replay sends the log's own context, so the measure
uses the log's reported usage unchanged, and ``compactMetadata.preTokens`` is that same measure taken by the agent:

* 2.1.14 (``entireio-cli`` checkpoint 76): the measure before the real boundary is 154,764 + 5 + 299 = 155,068,
  exactly the logged ``preTokens``, against a threshold of 200,000 − 32,000 − 13,000 = 155,000; the call before it
  measured 153,873. The transcript's output tokens are the streaming snapshot, and so was Claude Code's own figure.
* 2.1.39 (``marot/spotter``): ``preTokens`` 170,251 against 200,000 − 20,000 − 13,000 = 167,000. From 2.1.30 to
  2.1.58 Claude Code held the final output tokens in memory while the transcript kept the snapshot (1 token here),
  so the replay stands in the content's characters / 4 for them; and from 2.1.33 Claude Code counts attachments the
  transcript does not record (hook output, reminders: three ``PostToolUse`` hook contexts are visible in this
  session's compaction request). ``unlogged_context`` adds them: 1,000 tokens by default from 2.1.33 (the residual
  at this boundary is 1,165), 0 before (those releases did not count attachments). The replay measures 170,086.
* The log reader merges a response's records into one message. Before 2.1.64 Claude Code anchored on the response's
  last record, so results it ran while the response was still streaming (interleaved between the records, as in the
  2.1.39 session) were not in its estimate; the replay estimates every result after the response: up to those
  results' tokens more.

The checks (``tests/test_claude_code_real_logs.py``, ``tools/claude_code_boundaries.py``): every real boundary is
matched within two calls, at a measure within a few thousand tokens of ``preTokens``, and no stretch of the shared
logs without a real compaction compacts.

**What auto-compact does.** Claude Code first runs its microcompaction (below), then asks the model (system prompt:
an assistant that summarizes conversations) for a detailed summary of everything since the last boundary, by a
long fixed prompt — paraphrased here, :data:`COMPACT_PROMPT`; the log's own request is not in the log, so the
summarizer's input token count is ours — and rebuilds the history as: the summary as one user message (its wording
around the summary paraphrased, :func:`summary_message`; with the ``from-log`` summarizer the log's own message,
verbatim), then what it attaches again (:mod:`._claude_code_reattach`: recently read files, the todo list, the plan,
invoked skills). When the log records Claude Code's own re-attachments right after its boundary, they are kept
instead. Every assistant message and tool result before is gone; the microcompaction's record of cleared results
starts over.

**Microcompact** (:mod:`._claude_code_microcompact`): by the log's release, the token rule (up to 2.1.20: clear the
oldest results of Read, Bash, Grep, Glob, Edit, Write, WebSearch, WebFetch beyond about 40,000 tokens of them, when
that saves at least 20,000 and the context is past the warning threshold) or the time-based rule (2.1.81 on: after
an hour's idle, all but the last 5 become ``[Old tool result content cleared]``, for that turn), or none (2.1.21 to
2.1.80: the server flag ``tengu_cache_plum_violet`` turned the token rule off — the shared 2.1.39 session, where the
rule would have cleared results twice, shows no microcompaction — and 2.1.64 removed it). ``variant`` /
``microcompact`` force either. A time gap is measured from the first record
of the last response (its last record can be up to a minute later).

Not replayed: the session-memory compaction (a server-gated experiment that keeps recent messages verbatim), the
cache-editing microcompaction (server-side ``cache_edits``, internal builds), the memory attachments the token rule
also drops (the log reader has none: those releases wrote no attachment records), ``SessionStart`` hook output and
background-agent status after a compaction (not in the log).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from ..conversation import Message
from ..errors import ConfigError
from ..history import Entry
from ..history import inserted
from ..tokens import Counter
from . import _claude_code_microcompact as mc
from ._claude_code_context import AgentView
from ._claude_code_context import Measure
from ._claude_code_reattach import CLEARED_FLAG
from ._claude_code_reattach import reattach
from ._claude_code_versions import DEFAULT_WINDOW
from ._claude_code_versions import ONE_MILLION_WINDOW
from ._claude_code_versions import Behaviour
from ._claude_code_versions import behaviour
from ._claude_code_versions import compact_window
from ._claude_code_versions import output_reserve
from ._claude_code_versions import resolve_version
from .base import SUMMARIZER_PARAMS
from .base import Param
from .base import Persistence
from .base import RunContext
from .base import registrar
from .contract import Call
from .contract import Strategy
from .history_runner import plural
from .history_runner import with_result_text

DOCS = "https://code.claude.com/docs/en/costs#reduce-token-usage"
#: the auto-compact threshold's distance below the effective window (``AUTOCOMPACT_BUFFER_TOKENS``)
AUTOCOMPACT_BUFFER = 13_000
#: ``unlogged_context`` by default from 2.1.33 (fitted at the 2.1.39 boundary; see the module docstring)
UNLOGGED_DEFAULT = 1000
#: the summary sizes of the shared logs' real compactions: 3,515 and 3,936 tokens (14,060 and 15,743 characters)
SUMMARY_TOKENS_DEFAULT = 4000
SUMMARY_SYSTEM = "You are an assistant whose job is to write summaries of conversations."
#: Claude Code's compaction prompt, in our words (the original is about 2,000 tokens)
COMPACT_PROMPT = (
    "Write a thorough summary of this conversation so far, centred on what the user explicitly asked for and what "
    "you did about it, with the technical detail (code patterns, design decisions) needed to carry on the work "
    "without the conversation itself.\n\n"
    "First think inside <analysis> tags: go through the conversation in order and note, for each part, the user's "
    "requests and intentions, how you went about them, the decisions and concepts involved, concrete details (file "
    "names, complete code snippets, function signatures, edits), the errors you met and how you fixed them, and the "
    "user's feedback, above all where they asked you to do something differently. Then check those notes for "
    "accuracy and completeness.\n\n"
    "Then write the summary inside <summary> tags, in these sections:\n"
    "1. Primary request and intent\n2. Key technical concepts\n"
    "3. Files and code sections (full snippets for the recent ones, and why each matters)\n"
    "4. Errors and fixes (with the user's feedback)\n5. Problem solving\n"
    "6. All user messages that are not tool results\n7. Pending tasks\n"
    "8. Current work: precisely what was under way right before this request\n"
    "9. Optional next step: only one that follows directly from the latest request, quoting it so nothing drifts\n\n"
    "Reply with text only: do not call any tool."
)
SUMMARY_INTRO = ("This conversation continues an earlier one that ran out of context. The summary below covers the "
                 "earlier part of it.")
SUMMARY_TRANSCRIPT = ("The earlier part is recorded in full at {path}; read it if you need exact details from before "
                      "this summary (code, error messages, your own output).")
SUMMARY_CONTINUE = ("Go on from where the conversation stopped, without asking the user anything further: continue "
                    "with the task you were last asked to do.")
VARIANTS = ("by-version", "token", "time", "off")


def summary_message(summary: str, transcript_path: str | None) -> str:
    """The user message that carries a summary after a compaction (our wording of Claude Code's)."""
    parts = [SUMMARY_INTRO, summary.strip()]
    if transcript_path:
        parts.append(SUMMARY_TRANSCRIPT.format(path=transcript_path))
    return "\n\n".join(parts) + "\n" + SUMMARY_CONTINUE


@dataclass(frozen=True)
class Measured:
    """One call as Claude Code measured it (kept for the checks against the log's own records)."""

    step: int
    message_index: int
    measure: Measure
    threshold: int
    auto_compacted: bool
    #: the calls whose results a microcompaction cleared before this call (the token rule's, or the time-based
    #: rule's when it fired here)
    cleared: tuple[str, ...] = ()
    #: the token rule's count of the compactable results not cleared yet (what ``preTokens`` of a logged
    #: microcompaction counts)
    results_tokens: int = 0


@dataclass(frozen=True)
class _TimeClearing:
    turn: int
    ids: frozenset[str]
    step: int


class ClaudeCodeStrategy(Strategy):
    """What both Claude Code strategies share: the release's rules, the window and thresholds, the agent's measure,
    and its microcompactions."""

    persistence: Persistence = "rewrite"
    #: the microcompaction variant's parameter name, and whether this strategy replays the auto-compaction itself
    variant_param = "microcompact"
    summarizes = True

    def __init__(self, params: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(params, ctx)
        source = ctx.source
        version, _ = resolve_version(str(params["claude_code_version"]),
                                     source.agent_version if source is not None else None)
        self.rules: Behaviour = behaviour(version)
        self.model = source.model if source is not None else None
        self.model_window = self._model_window(str(params["context_1m"]))
        window = compact_window(self.rules, self.model_window, int(params["auto_compact_window"]))
        self.reserve = output_reserve(self.rules, self.model, int(params["max_output_tokens"]))
        self.effective = window - self.reserve
        default = self.effective - AUTOCOMPACT_BUFFER
        pct = float(params["autocompact_pct_override"])
        if not 0 <= pct <= 100:
            raise ConfigError(f"autocompact_pct_override: expected a percentage from 0 (unset) to 100, got {pct}")
        self.threshold = min(math.floor(self.effective * pct / 100), default) if pct > 0 else default
        self.warning = (self.threshold if self.auto_compact_on(params) else self.effective) - mc.WARNING_BUFFER
        unlogged = int(params["unlogged_context"])
        self.unlogged = (UNLOGGED_DEFAULT if self.rules.counts_attachments else 0) if unlogged < 0 else unlogged
        self.variant = self._variant(str(params[self.variant_param]))
        self.gap_minutes = float(params["gap_threshold_minutes"])
        self.keep_recent = int(params["keep_recent"])
        self.subagent = source is not None and (source.parent is not None or source.conversation_id.startswith("agent-"))
        agent = str(source.meta.get("agent_id", "")) if source is not None else ""
        #: the compaction request's own conversation (a subagent file ``agent-acompact-…``) never compacts
        self.compaction_request = agent.startswith("acompact") or (
            source is not None and source.conversation_id.startswith("agent-acompact"))
        #: the time-based rule changes what one turn sends, not what is stored: a projection
        self.persistence = "project" if self.variant == "time" and not self.subagent else "rewrite"
        self.view = AgentView(ctx, self.counter, self.rules, lambda m: self._cleared_copy(m, time_based=False))
        self.measured: list[Measured] = []
        self._token_rule_state = mc.TokenRule()
        self._time: _TimeClearing | None = None
        self._due_compact = False
        self._due_clearing: mc.Clearing | None = None
        self._step = 0
        self._turn = -1

    # ------------------------------------------------------------------------------------------ set-up
    def _model_window(self, context_1m: str) -> int:
        if context_1m == "on":
            return ONE_MILLION_WINDOW
        if context_1m == "auto" and (any(u.prompt_tokens > DEFAULT_WINDOW for u in self.ctx.usage.values())
                                     or "[1m]" in (self.model or "")):
            return max(self.ctx.context_window, ONE_MILLION_WINDOW)
        return self.ctx.context_window

    def auto_compact_on(self, params: Mapping[str, Any]) -> bool:
        """Whether Claude Code's auto-compact is on (``autoCompactEnabled``), which sets the warning threshold."""
        return True

    def _variant(self, chosen: str) -> str:
        if chosen != "by-version":
            return chosen
        if self.rules.has_token_microcompact and self.rules.token_microcompact_on:
            return "token"
        return "time" if self.rules.has_time_microcompact else "off"

    def lines(self) -> dict[str, float]:
        return {"trigger": self.threshold}

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return self.threshold

    # ------------------------------------------------------------------------------------------ each call
    def triggered(self, entries: Sequence[Entry], call: Call) -> bool:
        self._step = call.step
        for entry in self.view.begin(entries, call.message_index, call.message_tokens):
            self._token_rule_state.take(entry.message)
            if _is_prompt(entry):
                self._turn = entry.origin  # type: ignore[assignment]
        measure = self.view.measure(entries, self.unlogged)
        self._due_compact = self.summarizes and not self.compaction_request and measure.tokens >= self.threshold
        self._due_clearing = self._token_rule(entries) if self.variant == "token" else None
        self.measured.append(Measured(call.step, call.message_index, measure, self.threshold, self._due_compact,
                                      self._due_clearing.ids if self._due_clearing else (),
                                      self._token_rule_state.total))
        return self._due_compact or self._due_clearing is not None

    def compact(self, entries: list[Entry], target: int | None, counter: Counter) -> Sequence[Entry] | None:
        result: list[Entry] | None = None
        if self._due_clearing is not None:
            result = self._clear(entries, self._due_clearing)
        if self._due_compact:
            compacted = self._auto_compact(result if result is not None else entries)
            result = compacted if compacted is not None else result
        if result is not None:
            self.view.rewritten(result)
            self.view.sent(self._count(result))
        return result

    def project(self, entries: list[Entry], call: Call) -> Sequence[Entry] | None:
        if self.variant != "time" or self.subagent:
            return None
        turn = self._turn
        gap = mc.minutes_since_last_response(entries)
        if gap is not None and gap >= self.gap_minutes:
            fired = self._time_rule(entries, turn, gap)
            if fired is not None:
                return fired
        if self._time is None or self._time.turn != turn:
            self._time = None
            return None
        view = self._time_view(entries, self._time.ids)
        if view is None:
            return None
        self.note(f"results cleared by the time-based microcompaction at call {self._time.step} stay cleared "
                  "for this turn")
        self.view.sent(self._count(view))
        return view

    # ------------------------------------------------------------------------------------------ microcompaction
    def _token_rule(self, entries: Sequence[Entry]) -> mc.Clearing | None:
        """The token rule's clearing when it fires now, else None."""
        clearing = self._token_rule_state.choose()
        if not clearing.ids:
            return None
        gate = (self.view.last_call(entries) if self.rules.gate_on_last_call
                else self.view.measure(entries, self.unlogged).tokens)
        if gate < self.warning or clearing.saved < mc.MIN_SAVINGS:
            return None
        return clearing

    def _clear(self, entries: list[Entry], clearing: mc.Clearing) -> list[Entry]:
        ids = set(clearing.ids)
        out = list(entries)
        cleared = 0
        for position, e in enumerate(out):
            result = e.message.tool_result
            if result is None or result.call_id not in ids or not _has_content(e.message):
                continue
            out[position] = e.replaced(self._cleared_copy(e.message, time_based=False), claude_code="microcompact")
            cleared += 1
        self._token_rule_state.cleared(clearing)
        self.note(f"microcompact: cleared {plural(cleared, 'tool result')} ({clearing.saved:,} of "
                  f"{clearing.considered:,} tokens of compactable results; kept the newest within "
                  f"{mc.KEEP_TOKENS:,})")
        return out

    def _cleared_copy(self, message: Message, time_based: bool) -> Message:
        """A tool result as a microcompaction leaves it: the token rule's saved-file pointer (2.1 on), else the
        cleared text."""
        result = message.tool_result
        if result is None:
            return message
        if self.rules.clears_to_pointer and not time_based:
            text = mc.persisted_pointer(result.call_id or "", self.ctx.source, not isinstance(result.result, str))
        else:
            text = mc.CLEARED_TEXT
        return with_result_text(message, text, **{CLEARED_FLAG: True})

    def _time_rule(self, entries: Sequence[Entry], turn: int, gap: float) -> list[Entry] | None:
        ids = frozenset(mc.time_clearing(entries, self.keep_recent))
        view = self._time_view(entries, ids)
        if view is None:
            return None
        saved = sum(mc.result_tokens(e.message) for e in entries
                    if e.message.tool_result is not None and e.message.tool_result.call_id in ids
                    and _has_content(e.message) and e.message.tool_result.text != mc.CLEARED_TEXT)
        self._time = _TimeClearing(turn, ids, self._step)
        if self.measured:
            self.measured[-1] = replace(self.measured[-1], cleared=tuple(sorted(ids)))
        kept = len(mc.compactable_calls(entries)) - len(ids)
        self.note(f"time-based microcompact after {gap:.0f} min idle: cleared {plural(len(ids), 'tool result')} "
                  f"(~{saved:,} tokens), kept the newest {kept}")
        self.view.sent(self._count(view))
        return view

    def _time_view(self, entries: Sequence[Entry], ids: frozenset[str]) -> list[Entry] | None:
        out = list(entries)
        changed = False
        for position, e in enumerate(out):
            result = e.message.tool_result
            if (result is not None and result.call_id in ids and _has_content(e.message)
                    and result.text != mc.CLEARED_TEXT):
                cleared = self._cleared_copy(e.message, time_based=True)
                out[position] = e.replaced(cleared, claude_code="time-based")
                changed = True
        return out if changed else None

    # ------------------------------------------------------------------------------------------ auto-compaction
    def _auto_compact(self, entries: list[Entry]) -> list[Entry] | None:
        measure = self.measured[-1].measure
        if not entries:
            self.decline("auto-compact due but there is nothing to compact (Claude Code: not enough messages)")
            return None
        own = _logged_reattachments(entries, self.ctx.events)
        history = entries[: len(entries) - len(own)] if own else entries
        messages = [e.message for e in history]
        request = (Message("system", (SUMMARY_SYSTEM,)), *messages, Message("user", (COMPACT_PROMPT,)))
        call = self.summarize(SUMMARY_SYSTEM, messages, sent=request)
        real = call.backend == "from-log" and not call.simulated
        text = call.text if real else summary_message(call.text, self._transcript_path())
        summary = inserted(Message("user", (text,), meta={"claude_code": "compact_summary"}), "summary", history,
                           summarizer=call.backend, simulated=call.simulated)
        if own:
            extra, made = list(own), "kept the log's own re-attachments"
        else:
            again = reattach(messages, self.rules.version, self.counter)
            # re-read files, todo list, skills: new content, standing for nothing (the summary stands for the history;
            # were each also to stand for it, the paths to an original would multiply with every compaction)
            extra = [inserted(m, "reinserted") for m in again.messages]
            made = f"re-attached {plural(len(extra), 'attachment')}"
            if again.unknown_files:
                made += f" ({plural(again.unknown_files, 'recent file')} the log never showed in full left out)"
        self._token_rule_state.start_over()
        self._time = None
        self.note(f"auto-compact at {measure.tokens:,} tokens (threshold {self.threshold:,}; "
                  f"{_describe(measure)}): summarized {plural(len(history), 'message')}; {made}")
        return [summary, *extra]

    def _transcript_path(self) -> str | None:
        source = self.ctx.source
        return source.path if source is not None and source.path else None

    def _count(self, entries: Sequence[Entry]) -> int:
        return self.counter.count([e.message for e in entries if not e.excluded])


def _describe(measure: Measure) -> str:
    if measure.anchor is None:
        return "no reported call since the last compaction: the estimate of the whole history"
    text = f"last call {measure.last_call:,} + estimate {measure.estimated:,}"
    return text + (f" + unlogged {measure.unlogged:,}" if measure.unlogged else "")


def _has_content(message: Message) -> bool:
    result = message.tool_result
    return result is not None and bool(result.result)


def _is_prompt(entry: Entry) -> bool:
    """Whether ``entry`` is a prompt the person typed (it starts a turn: a new request loop)."""
    m = entry.message
    return (m.role == "user" and entry.origin is not None and m.tool_result is None and not m.meta.get("is_meta")
            and "attachment" not in m.meta and not m.meta.get("log_compaction_summary"))


def _logged_reattachments(entries: Sequence[Entry], events: Sequence[Any]) -> list[Entry]:
    """The attachments the log records right after its own compaction boundary when the replay compacts there too:
    the originals at the end of ``entries`` that follow that boundary, all of them attachments."""
    boundaries = [e.message_index for e in events if e.kind == "compaction"]
    tail: list[Entry] = []
    for e in reversed(entries):
        if e.origin is None or "attachment" not in e.message.meta:
            break
        tail.append(e)
    if not tail:
        return []
    first = tail[-1].origin
    before = [b for b in boundaries if b <= first]
    if not before:
        return []
    boundary = max(before)
    return [e for e in reversed(tail) if e.origin >= boundary]


class AutoCompact(ClaudeCodeStrategy):
    """``claude_code.auto_compact``: the microcompaction of the release, then the summary at the threshold."""


class Microcompact(ClaudeCodeStrategy):
    """``claude_code.microcompact``: the microcompaction alone (auto-compact is not replayed; its threshold only
    sets the token rule's warning threshold)."""

    variant_param = "variant"
    summarizes = False

    def auto_compact_on(self, params: Mapping[str, Any]) -> bool:
        return bool(params["auto_compact_enabled"])

    def lines(self) -> dict[str, float]:
        return {"trigger": self.warning} if self.variant == "token" else {}

    def target(self, entries: Sequence[Entry], call: Call) -> int | None:
        return None


# ------------------------------------------------------------------------------------------------ registration
def _window_params() -> tuple[Param, ...]:
    return (
        Param("claude_code_version", "str", "", "Replay the rules of this Claude Code release (e.g. `2.1.39`) instead "
              "of the log's own `version` (empty: the log's; a log without one is replayed as 2.1.100)."),
        Param("context_1m", "choice", "auto", "The 1M context window (`[1m]` models, the `context-1m` beta): `auto` "
              "uses it when the log reports a prompt over 200,000 tokens, `on` always, `off` never (the run's "
              "context_window is the model's window).", choices=("auto", "on", "off")),
        Param("autocompact_pct_override", "float", 0.0, "`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`: compact at this percentage "
              "of the effective window; it can only lower the threshold (0: unset).", minimum=0.0, maximum=100.0),
        Param("auto_compact_window", "int", 0, "`autoCompactWindow` in ~/.claude/settings.json (2.1.89+) or "
              "`CLAUDE_CODE_AUTO_COMPACT_WINDOW` (2.1.75+): caps the window auto-compact measures against; earlier "
              "releases ignore it (0: unset).", minimum=0, maximum=1_000_000),
        Param("max_output_tokens", "int", 0, "`CLAUDE_CODE_MAX_OUTPUT_TOKENS`: the output reserve is the model's max "
              "output capped by it (default 32,000, at most 64,000), and from 2.1.21 at most 20,000 (0: unset).",
              minimum=0, maximum=64_000),
        Param("unlogged_context", "int", -1, "Tokens of context Claude Code counts that the transcript does not "
              "record (hook output, reminders), added to its measure: -1 by release (1,000 from 2.1.33, which counts "
              "attachments; 0 before). Not a Claude Code setting: a replay margin.", minimum=-1, maximum=50_000),
    )


def _microcompact_params(name: str, help_text: str) -> tuple[Param, ...]:
    return (
        Param(name, "choice", "by-version", help_text, choices=VARIANTS),
        Param("gap_threshold_minutes", "float", float(mc.GAP_THRESHOLD_MINUTES), "Time-based microcompaction "
              "(`tengu_slate_heron` gapThresholdMinutes): minutes since the last response after which old results "
              "are cleared.", minimum=1.0, maximum=100_000.0),
        Param("keep_recent", "int", mc.KEEP_RECENT, "Time-based microcompaction (keepRecent): the newest compactable "
              "results kept (at least 1).", minimum=1, maximum=1000),
    )


def _summarizer_params() -> tuple[Param, ...]:
    return tuple(replace(p, default=SUMMARY_TOKENS_DEFAULT, help=p.help + " Claude Code's real summaries in the "
                         "shared logs are 3,500–4,000 tokens.") if p.name == "summary_tokens" else p
                 for p in SUMMARIZER_PARAMS)


_VARIANT_HELP = ("Which microcompaction runs before auto-compact: `by-version` (the token rule up to 2.1.20, none "
                 "from 2.1.21, the time-based rule from 2.1.81), `token`, `time` or `off` (`DISABLE_MICROCOMPACT`).")

_register = registrar("claude_code", policy="window", docs_url=DOCS)

_register(
    "auto_compact",
    title="Claude Code · auto-compact",
    summary=(
        "Before every call, Claude Code's own measure (the last reported prompt + output tokens, plus characters/4 "
        "of the messages since) against effective window − 13,000 (effective window = context_window less the "
        "output reserve of the log's release: 32,000 up to 2.1.20, 20,000 after); when reached, the history is "
        "replaced by a summary user message and the recently read files, todo list and skills it re-attaches. "
        "The release's microcompaction runs first. Uses context_window as the model's window; ignores "
        "compact_at/compact_to."
    ),
    params=(*_window_params(), *_microcompact_params("microcompact", _VARIANT_HELP), *_summarizer_params()),
    reference=AutoCompact,
)

_register(
    "microcompact",
    title="Claude Code · microcompact",
    summary=(
        "Old tool results of Read, Bash, Grep, Glob, Edit, Write, WebSearch, WebFetch cleared in place, by the "
        "log's release: the token rule (up to 2.1.20: keep the newest ~40,000 tokens of them and the last 3, clear "
        "the older when that saves 20,000 and the context is 20,000 short of auto-compact) or the time-based rule "
        "(2.1.81+: after 60 min idle, all but the last 5 become `[Old tool result content cleared]` for that "
        "turn). Uses context_window as the model's window; ignores compact_at/compact_to."
    ),
    params=(*_window_params(),
            Param("auto_compact_enabled", "bool", True, "`autoCompactEnabled` in ~/.claude.json (false: "
                  "`DISABLE_AUTO_COMPACT`): with auto-compact off the token rule's warning threshold is 20,000 "
                  "below the effective window instead of below the auto-compact threshold."),
            *_microcompact_params("variant", "`by-version` (the token rule up to 2.1.20, none from 2.1.21 to "
                                  "2.1.80, the time-based rule from 2.1.81), `token`, `time` or `off`.")),
    reference=Microcompact,
)
