"""What changed between Claude Code releases in how it measures its context and compacts it.

Claude Code is closed source; its npm package shipped the bundled ``cli.js`` up to the 2.1.1xx releases. The rules
below were read in those bundles, release by release (bisected on the published versions 2.0.76 and 2.1.0 to
2.1.100), and each is the first release that behaves so (the one before it was checked not to):

====================  ==========================================================================================
2.1.2                 the auto-compact measure adds a rough estimate (characters / 4) of the messages after the
                      last reported call; before, it was that call's usage alone
2.1.21                output reserve ``min(max output, 20,000)``; before, the whole max output (32,000 with the
                      default ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, less for old models)
2.1.30 .. 2.1.58      the last record of a response holds its final usage in memory only (the object is replaced at
                      ``message_delta``); the transcript keeps the streaming snapshot (1–10 output tokens). From 2.1.59
                      the final usage is written in place, so the log has it
2.1.33                the estimate counts attachments (hook output, reminders…: JSON length / 4); before, 0
2.1.38                an image counts 2,000 tokens in the estimate (1,334 before)
2.1.64                the measure anchors on the *first* record of the last response, so the later records and the
                      tool results interleaved with them are estimated too
2.1.74                the estimate counts tool calls (name + JSON input), thinking and documents; before, 0
2.1.75                ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` caps the window
2.1.89                the ``autoCompactWindow`` setting caps the window; both are clamped to 100,000–1,000,000
≤ 2.1.63              the token microcompaction (``DISABLE_MICROCOMPACT``); from 2.1.20 it is switched off by the
                      server flag ``tengu_cache_plum_violet`` (no public log after 2.1.20 shows one); gone in 2.1.64
2.1.81                the time-based microcompaction (server config ``tengu_slate_heron``, off by default)
====================  ==========================================================================================

The microcompaction's gate measure is the last reported call alone from 2.1.0 (2.0.76 used the full estimate, which
was then the same number), and a result it clears becomes a pointer to the file Claude Code saved it to from 2.1.0
(``[Old tool result content cleared]`` in 2.0.x, where saving it was behind a server flag).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from ..formats.claude_code_attachments import parse_version

Version = tuple[int, ...]

#: the newest release these rules were read in: a log without a version is replayed as this one
LATEST_CHECKED: Version = (2, 1, 100)

#: the context window of every model without the 1M option (``[1m]`` model ids, the ``context-1m`` beta)
DEFAULT_WINDOW = 200_000
ONE_MILLION_WINDOW = 1_000_000
#: ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``: its default, and the most it accepts
DEFAULT_MAX_OUTPUT = 32_000
MAX_OUTPUT_CAP = 64_000
#: the output reserve's cap from 2.1.21 (``MAX_OUTPUT_TOKENS_FOR_SUMMARY``)
SUMMARY_RESERVE_CAP = 20_000
#: the window settings' range from 2.1.89
WINDOW_SETTING_RANGE = (100_000, 1_000_000)


@dataclass(frozen=True)
class Behaviour:
    """The rules one Claude Code release follows (see the module docstring for the release of each)."""

    version: Version
    #: the auto-compact measure adds a rough estimate of the messages after the last reported call
    estimates_new_messages: bool
    #: the output reserve is capped at 20,000
    caps_reserve: bool
    #: the transcript lacks the final output tokens that Claude Code held in memory
    output_unlogged: bool
    #: attachments count in the estimate
    counts_attachments: bool
    #: what an image counts in the estimate
    image_tokens: int
    #: tool calls, thinking and documents count in the estimate
    counts_tool_use: bool
    #: the measure anchors on the first record of the last response
    anchors_first_record: bool
    #: ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` / ``autoCompactWindow`` are read, and clamped
    reads_window_env: bool
    reads_window_setting: bool
    #: the token microcompaction exists, and is on unless the server turned it off
    has_token_microcompact: bool
    token_microcompact_on: bool
    #: the time-based microcompaction exists
    has_time_microcompact: bool
    #: a cleared result becomes a pointer to the file the result was saved to
    clears_to_pointer: bool
    #: the microcompaction's gate uses the last reported call alone (not the full estimate)
    gate_on_last_call: bool

    @property
    def label(self) -> str:
        return ".".join(str(p) for p in self.version)


def behaviour(version: Version) -> Behaviour:
    """The rules Claude Code ``version`` follows."""
    v = tuple(version)
    return Behaviour(
        version=v,
        estimates_new_messages=v >= (2, 1, 2),
        caps_reserve=v >= (2, 1, 21),
        output_unlogged=(2, 1, 30) <= v < (2, 1, 59),
        counts_attachments=v >= (2, 1, 33),
        image_tokens=2000 if v >= (2, 1, 38) else 1334,
        counts_tool_use=v >= (2, 1, 74),
        anchors_first_record=v >= (2, 1, 64),
        reads_window_env=v >= (2, 1, 75),
        reads_window_setting=v >= (2, 1, 89),
        has_token_microcompact=v < (2, 1, 64),
        token_microcompact_on=v < (2, 1, 21),
        has_time_microcompact=v >= (2, 1, 81),
        clears_to_pointer=v >= (2, 1, 0),
        gate_on_last_call=v >= (2, 1, 0),
    )


def resolve_version(forced: str, logged: str | None) -> tuple[Version, str]:
    """The version whose rules a replay follows, and where it came from: ``forced`` (a parameter) when set, else the
    log's own ``version``, else :data:`LATEST_CHECKED`. A ``ConfigError`` names a forced value that is no version."""
    if forced.strip():
        parsed = parse_version(forced.strip())
        if parsed is None or len(parsed) < 2:
            raise ConfigError(f"claude_code_version: expected a Claude Code version such as 2.1.39, got {forced!r}")
        return parsed, "set"
    parsed = parse_version(logged) if logged else None
    if parsed is not None and len(parsed) >= 2:
        return parsed, "log"
    return LATEST_CHECKED, "default"


def model_max_output(model: str | None) -> int:
    """The most output tokens Claude Code allows ``model`` (its own table, by model id), 32,000 when unknown."""
    name = (model or "").lower()
    for marker, tokens in (("3-5", 8192), ("claude-3-opus", 4096), ("claude-3-sonnet", 8192),
                           ("claude-3-haiku", 4096), ("opus-4-5", 64_000), ("opus-4", 32_000),
                           ("sonnet-4", 64_000), ("haiku-4", 64_000)):
        if marker in name:
            return tokens
    return DEFAULT_MAX_OUTPUT


def output_reserve(b: Behaviour, model: str | None, max_output_tokens: int) -> int:
    """The tokens Claude Code keeps free for the answer: the model's max output (capped by
    ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``max_output_tokens``; 0 = unset), and from 2.1.21 at most 20,000."""
    configured = DEFAULT_MAX_OUTPUT if max_output_tokens <= 0 else min(max_output_tokens, MAX_OUTPUT_CAP)
    reserve = min(configured, model_max_output(model))
    return min(reserve, SUMMARY_RESERVE_CAP) if b.caps_reserve else reserve


def compact_window(b: Behaviour, model_window: int, auto_compact_window: int) -> int:
    """The window auto-compact measures against: the model's, capped by ``autoCompactWindow`` /
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (``auto_compact_window``; 0 = unset) in the releases that read them."""
    if auto_compact_window <= 0 or not b.reads_window_env:
        return model_window
    if b.reads_window_setting:
        low, high = WINDOW_SETTING_RANGE
        auto_compact_window = min(max(auto_compact_window, low), high)
    return min(model_window, auto_compact_window)
