"""When to compact: Haystack's threshold hook and Agent Framework (.NET) triggers and targets.

The *when* is kept apart from the *how* (strategies), as both frameworks do:

- :class:`ThresholdPolicy` is Haystack ``CompactionHook``: trigger when the estimate ``>= context_window *
  compact_at``; the compactor is asked to reach ``max(int(context_window * compact_to) - overhead, 0)``.
- :class:`Trigger` values are Agent Framework .NET ``CompactionTriggers``: predicates over the included part of a
  message index (tokens, messages, turns, groups, tool calls, and their ``All``/``Any`` combinations). A target is
  a trigger used as a stop condition; when none is given it is the inverse of the trigger.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Protocol

from .errors import ConfigError


# ------------------------------------------------------------------------------------------------- Haystack
@dataclass(frozen=True)
class ThresholdPolicy:
    """Haystack ``CompactionHook(context_window, compact_at=0.7, compact_to=0.4)`` with its own validation."""

    context_window: int
    compact_at: float = 0.7
    compact_to: float = 0.4

    def __post_init__(self) -> None:
        validate_threshold(self.context_window, self.compact_at, self.compact_to)

    @property
    def trigger_tokens(self) -> float:
        """The estimate at or above which compaction starts."""
        return self.context_window * self.compact_at

    @property
    def target_fraction_tokens(self) -> int:
        """``int(context_window * compact_to)``, before subtracting the non-message overhead."""
        return int(self.context_window * self.compact_to)

    def triggered(self, estimated: int) -> bool:
        return estimated >= self.context_window * self.compact_at

    def target(self, overhead: int) -> int:
        """The token goal handed to the compactor."""
        return max(int(self.context_window * self.compact_to) - overhead, 0)

    def to_json(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "compact_at": self.compact_at, "compact_to": self.compact_to}


def validate_threshold(context_window: int, compact_at: float, compact_to: float) -> None:
    """Raise ``ValueError`` exactly where Haystack's ``CompactionHook`` does, with the reason (and, before that, for
    anything but finite numbers: Haystack's comparisons would let an infinite window through)."""
    for name, value in (("context_window", context_window), ("compact_at", compact_at), ("compact_to", compact_to)):
        kind = type(value)  # (an int or a float, mostly: answered without the ABC check of numbers.Real)
        if (kind is not int and kind is not float and (kind is bool or not isinstance(value, numbers.Real))) or \
                not math.isfinite(value):
            raise ConfigError(f"`{name}` must be a finite number, got {value!r}.")
    if context_window < 1:
        raise ConfigError(f"`context_window` must be a positive number of tokens, got {context_window}.")
    if not 0 < compact_to < compact_at <= 1:
        raise ConfigError(
            f"`compact_at` and `compact_to` must satisfy 0 < compact_to < compact_at <= 1, got "
            f"compact_at={compact_at} and compact_to={compact_to}. A target at or above the trigger would leave "
            f"the conversation over the trigger after compacting, so it would be attempted again every step."
        )


# ---------------------------------------------------------------------------------------- Agent Framework .NET
class IndexMetrics(Protocol):
    """What a .NET trigger may look at: the included part of a ``CompactionMessageIndex``."""

    @property
    def included_tokens(self) -> int: ...
    @property
    def included_messages(self) -> int: ...
    @property
    def included_turns(self) -> int: ...
    @property
    def included_groups(self) -> int: ...
    @property
    def has_tool_calls(self) -> bool: ...


#: trigger kind -> (display name, takes a number)
TRIGGER_KINDS: dict[str, tuple[str, bool]] = {
    "tokens_exceed": ("TokensExceed", True),
    "tokens_below": ("TokensBelow", True),
    "messages_exceed": ("MessagesExceed", True),
    "turns_exceed": ("TurnsExceed", True),
    "groups_exceed": ("GroupsExceed", True),
    "has_tool_calls": ("HasToolCalls", False),
    "always": ("Always", False),
    "never": ("Never", False),
    "all": ("All", False),
    "any": ("Any", False),
}
_BY_DISPLAY = {display.lower(): kind for kind, (display, _) in TRIGGER_KINDS.items()}


@dataclass(frozen=True)
class Trigger:
    """A .NET ``CompactionTrigger``: ``kind`` from :data:`TRIGGER_KINDS`, a threshold or child triggers."""

    kind: str
    value: int | None = None
    children: tuple[Trigger, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in TRIGGER_KINDS:
            raise ConfigError(f"unknown trigger {self.kind!r}; expected one of {', '.join(TRIGGER_KINDS)}")
        takes_value = TRIGGER_KINDS[self.kind][1]
        if takes_value and self.value is None:
            raise ConfigError(f"{TRIGGER_KINDS[self.kind][0]} needs a number, e.g. {TRIGGER_KINDS[self.kind][0]}(1000)")
        if self.kind in ("all", "any") and not self.children:
            raise ConfigError(f"{TRIGGER_KINDS[self.kind][0]} needs at least one trigger inside it")

    def __call__(self, m: IndexMetrics) -> bool:
        k = self.kind
        if k == "tokens_exceed":
            assert self.value is not None  # __post_init__: a kind that takes a value has one
            return m.included_tokens > self.value
        if k == "tokens_below":
            assert self.value is not None  # __post_init__: a kind that takes a value has one
            return m.included_tokens < self.value
        if k == "messages_exceed":
            assert self.value is not None  # __post_init__: a kind that takes a value has one
            return m.included_messages > self.value
        if k == "turns_exceed":
            assert self.value is not None  # __post_init__: a kind that takes a value has one
            return m.included_turns > self.value
        if k == "groups_exceed":
            assert self.value is not None  # __post_init__: a kind that takes a value has one
            return m.included_groups > self.value
        if k == "has_tool_calls":
            return m.has_tool_calls
        if k == "always":
            return True
        if k == "never":
            return False
        if k == "all":
            return all(child(m) for child in self.children)
        return any(child(m) for child in self.children)  # "any"

    def __str__(self) -> str:
        name, takes_value = TRIGGER_KINDS[self.kind]
        if self.children:
            return f"{name}({', '.join(str(c) for c in self.children)})"
        return f"{name}({self.value})" if takes_value else f"{name}()"

    def token_threshold(self) -> int | None:
        """The token line to draw for a simple token trigger (None for other kinds)."""
        return self.value if self.kind in ("tokens_exceed", "tokens_below") else None


_TOKEN = re.compile(r"\s*([A-Za-z_]+)\s*(\()?")
_SPACES = re.compile(r"\s*")
#: the most levels of All(...) / Any(...) a trigger may nest (the parser recurses once per level)
MAX_TRIGGER_DEPTH = 32


def parse_trigger(text: str) -> Trigger:
    """Parse ``TokensExceed(70000)``, ``All(TokensExceed(5000), HasToolCalls())``, ``Never`` and the like.

    A tiny recursive-descent parser (never ``eval``). Raises ``ValueError`` naming what was expected.
    """
    pos = 0

    def fail(expected: str) -> ValueError:
        return ValueError(f"trigger {text!r}: expected {expected} at position {pos}")

    def parse(depth: int = 1) -> Trigger:
        nonlocal pos
        if depth > MAX_TRIGGER_DEPTH:
            raise ConfigError(f"trigger {text[:80]!r}…: All/Any nest at most {MAX_TRIGGER_DEPTH} levels deep")
        match = _TOKEN.match(text, pos)
        if not match:
            raise fail("a trigger name such as TokensExceed(1000)")
        name = match.group(1).lower().replace("_", "")
        kind = _BY_DISPLAY.get(name) or (name if name in TRIGGER_KINDS else None)
        if kind is None:
            kind = next((k for k in TRIGGER_KINDS if k.replace("_", "") == name), None)
        if kind is None:
            raise fail(f"one of {', '.join(d for d, _ in TRIGGER_KINDS.values())}")
        pos = match.end()
        has_paren = match.group(2) is not None
        takes_value = TRIGGER_KINDS[kind][1]
        if kind in ("all", "any"):
            if not has_paren:
                raise fail("'('")
            children = [parse(depth + 1)]
            while True:
                spaces = _SPACES.match(text, pos)  # not text[pos:]: a copy per child is quadratic in the length
                assert spaces is not None  # \s* matches everywhere
                pos = spaces.end()
                if text.startswith(",", pos):
                    pos += 1
                    children.append(parse(depth + 1))
                elif text.startswith(")", pos):
                    pos += 1
                    return Trigger(kind, children=tuple(children))
                else:
                    raise fail("',' or ')'")
        value = None
        if has_paren:
            close = text.find(")", pos)
            if close < 0:
                raise fail("')'")
            inner = text[pos:close].strip().replace("_", "")
            if takes_value:
                value = whole_number(inner)
                if value is None:
                    raise fail("a whole number")
            elif inner:
                raise fail("'()' (this trigger takes no number)")
            pos = close + 1
        elif takes_value:
            raise fail("'(' and a number")
        return Trigger(kind, value)

    trigger = parse()
    if text[pos:].strip():
        raise fail("end of text")
    return trigger


def whole_number(text: str) -> int | None:
    """``text`` as an integer (``70000``, ``70_000`` after underscores are dropped, ``1e3``), or ``None`` when it is
    not a finite whole number: .NET trigger thresholds are ``int``, so ``12.7`` is refused rather than truncated."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None  # False for inf and nan


def tokens_exceed(n: int) -> Trigger:
    return Trigger("tokens_exceed", int(n))


def tokens_below(n: int) -> Trigger:
    return Trigger("tokens_below", int(n))


def inverse(trigger: Trigger) -> Callable[[IndexMetrics], bool]:
    """The default .NET target: stop as soon as the trigger would no longer fire."""
    return lambda metrics: not trigger(metrics)
