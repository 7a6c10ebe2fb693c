"""The strategy registry and the runner protocol the replay engine drives.

A *strategy* is registered once with its parameter metadata (name, type, default, range, help). The app turns the
metadata into widgets, the CLI into ``--set`` checks and ``strategies --json``, and the docs into tables.

A *runner* is one strategy set up for one replay: it owns the stored history (as :class:`~compaction.history.Entry`
objects), measures it the way its framework does, and decides before each LLM call whether and how to compact.
"""

from __future__ import annotations

import math
import sys
from abc import ABC
from abc import abstractmethod
from collections.abc import Callable
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import overload

from ..conversation import LogEvent
from ..conversation import Source
from ..conversation import ToolSchema
from ..conversation import Usage
from ..errors import CompactionError
from ..errors import ConfigError
from ..history import Entry
from ..registry import Registry
from ..tokens import Counter

if TYPE_CHECKING:
    from ..summarizers import Summarizer


#: what a :class:`Param` holds (and how the CLI, the app and the docs read and show it)
ParamType = Literal["int", "float", "str", "bool", "choice", "trigger", "str_list"]
#: which shared policy settings a strategy uses (see :attr:`StrategyInfo.policy`)
Policy = Literal["threshold", "window", "none"]
#: how a runner's stored history changes when it compacts (see :attr:`Runner.persistence`)
Persistence = Literal["rewrite", "flag", "project"]


@dataclass(frozen=True)
class Param:
    """One strategy parameter as the framework defines it."""

    name: str
    type: ParamType
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    #: None: always shown; otherwise only shown/used when another param has this value ({"name": value})
    advanced: bool = False
    #: the library may also pass a Python callable for this parameter (e.g. a custom formatter function)
    callable_ok: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "default": self.default, "help": self.help}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.choices:
            out["choices"] = list(self.choices)
        return out

    def coerce(self, value: Any) -> Any:
        """Convert a CLI/URL string (or JSON value) to this parameter's type; ``ValueError`` names the param.

        Numbers must be finite and within ``minimum``/``maximum`` (when the parameter has them)."""
        return self._in_range(self._typed(value))

    def clamp(self, value: Any) -> tuple[Any, str | None]:
        """Like :meth:`coerce`, but a finite number outside the range is moved to the nearest bound: the value and a
        notice naming the parameter and the value asked for (None when nothing was moved)."""
        typed = self._typed(value)
        try:
            return self._in_range(typed), None
        except ValueError:
            bound = self.minimum if self.minimum is not None and typed < self.minimum else self.maximum
            assert bound is not None  # _in_range only raises for a value past a bound the parameter has
            bounded = int(bound) if self.type == "int" else float(bound)
            side = "minimum" if bound == self.minimum else "maximum"
            return bounded, f"parameter {self.name!r}: {_shown(typed)} is outside its range; using its {side} {bounded}"

    def _typed(self, value: Any) -> Any:
        if self.callable_ok and callable(value):
            return value
        try:
            if self.type == "int":
                if isinstance(value, bool):
                    raise ValueError
                number = float(value) if isinstance(value, str) and not _is_digits(value) else value
                if isinstance(number, float) and not math.isfinite(number):
                    raise ValueError
                return int(number)
            if self.type == "float":
                if isinstance(value, bool):
                    raise ValueError
                number = float(value)
                if not math.isfinite(number):
                    raise ValueError
                return number
            if self.type == "bool":
                if isinstance(value, bool):
                    return value
                lowered = str(value).strip().lower()
                if lowered in ("1", "true", "yes", "on"):
                    return True
                if lowered in ("0", "false", "no", "off"):
                    return False
                raise ValueError
            if self.type == "str_list":
                if isinstance(value, str):
                    return tuple(v.strip() for v in value.split(",") if v.strip())
                return tuple(str(v) for v in value)
            if self.type == "choice":
                if str(value) not in self.choices:
                    raise ValueError
                return str(value)
            return str(value)
        except (TypeError, ValueError, OverflowError):
            expected = f"one of {', '.join(self.choices)}" if self.choices else \
                f"a finite {'whole number' if self.type == 'int' else 'number'}" if self.type in ("int", "float") \
                else f"a {self.type}"
            raise ConfigError(f"parameter {self.name!r}: expected {expected}, got {_shown(value)}") from None

    def _in_range(self, value: Any) -> Any:
        if self.type not in ("int", "float") or callable(value):
            return value
        low, high = self.minimum, self.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"from {_shown(low)} to {_shown(high)}" if low is not None and high is not None else \
                f"at least {_shown(low)}" if low is not None else f"at most {_shown(high)}"
            raise ConfigError(f"parameter {self.name!r}: expected a value {bounds}, got {_shown(value)}")
        return value


def _is_digits(text: str) -> bool:
    """Whether ``text`` is an integer literal (``int()`` reads it exactly; ``float()`` would round it)."""
    body = text.strip().replace("_", "")
    return body.lstrip("+-").isdigit()


def _shown(value: Any, limit: int = 60) -> str:
    """``value`` for a message: whole numbers with thousands separators, anything else as ``repr``, cut to ``limit``
    characters (a 5,000-digit number from a link stays readable)."""
    try:
        text = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
    except ValueError:  # an int past the interpreter's digit limit for str()
        return f"a number of more than {sys.get_int_max_str_digits():,} digits"
    return text if len(text) <= limit else text[: limit - 1] + "…"


SUMMARIZER_PARAMS = (
    Param("summarizer", "choice", "extractive", "Who writes the summary: `extractive` (offline, deterministic, "
          "simulated from the replaced messages), `fixed-size` (a placeholder of summary_tokens tokens), `from-log` "
          "(the real agent's own summaries where the log has them), `openai-compatible` (a real model; needs "
          "OPENAI_API_KEY and optionally OPENAI_BASE_URL).", choices=("extractive", "fixed-size", "from-log",
                                                                      "openai-compatible")),
    Param("summary_tokens", "int", 512, "Size the simulated summary aims for, in tokens (extractive / fixed-size).",
          minimum=16, maximum=20_000),
    Param("summarizer_model", "str", "", "Model name for the openai-compatible summarizer.", advanced=True),
)


@dataclass
class CallOutcome:
    """What a runner did before one LLM call."""

    tokens_before: int
    tokens_sent: int
    triggered: bool
    compacted: bool
    target: int | None = None
    #: a short account of what happened, in the framework's terms ("pruned 6 results, oldest first")
    note: str = ""
    #: summarizer / compaction-model calls made at this step: [{"input_tokens", "output_tokens"}]
    model_calls: list[dict[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class RunContext:
    """Everything a runner is built from, besides its own parameters."""

    counter: Counter
    tools: tuple[ToolSchema, ...] = ()
    context_window: int = 200_000
    compact_at: float = 0.7
    compact_to: float = 0.4
    #: the log's own compaction summaries (for the ``from-log`` summarizer)
    log_summaries: tuple[str, ...] = ()
    #: provider-reported usage of the log's LLM calls, by the index of the message each produced (strategies whose
    #: agent decides on reported usage, as Claude Code and Gemini CLI do, read it)
    usage: Mapping[int, Usage] = field(default_factory=dict)
    #: where the log came from: its model, the agent's version (for version-dependent defaults)
    source: Source | None = None
    #: the log's own compactions (where the log stops being the uncompacted context: usage reported after the first
    #: one describes a context that compaction changed)
    events: tuple[LogEvent, ...] = ()
    #: what the runners of one conversation's replays may share: the conversation's memo (None: nothing is shared)
    memo: dict[tuple[Hashable, ...], Any] | None = field(default=None, compare=False, repr=False)

    def shared(self, name: str) -> dict[Any, Any]:
        """A dict that every runner built for a replay of this conversation gets under ``name`` (a fresh one when
        nothing is shared). What is kept there must be fully determined by its key: another setup reads it."""
        if self.memo is None:
            return {}
        found: dict[Any, Any] = self.memo.setdefault(("runners share", name), {})
        return found

    def summarizer(self, params: Mapping[str, Any]) -> Summarizer:
        """The summarizer backend a summarizing strategy's params select (see :data:`SUMMARIZER_PARAMS`)."""
        from ..summarizers import make_summarizer

        return make_summarizer(params.get("summarizer", "extractive"), log_summaries=self.log_summaries,
                               model=params.get("summarizer_model") or None)


class ChangeMark:
    """The lowest position of a list changed (other than by appends) since the mark was last taken: what a runner
    answers :meth:`Runner.first_change` with."""

    __slots__ = ("_lowest",)

    def __init__(self) -> None:
        self._lowest: int | None = None

    def note(self, position: int) -> None:
        """Entries from ``position`` on may have changed."""
        if self._lowest is None or position < self._lowest:
            self._lowest = position

    @overload
    def take(self, unchanged: int) -> int: ...
    @overload
    def take(self, unchanged: None = None) -> int | None: ...

    def take(self, unchanged: int | None = None) -> int | None:
        """The lowest position noted since the last take (``unchanged`` when none was), and start over."""
        lowest, self._lowest = self._lowest, None
        return unchanged if lowest is None else lowest


class Runner(ABC):
    """One strategy set up for one replay. The engine calls ``append`` for each message of the log and
    ``before_call`` right before each LLM call (each assistant message)."""

    #: "rewrite" (history replaced), "flag" (sticky exclusions), or "project" (recomputed from the raw history)
    persistence: Persistence = "rewrite"
    #: set by the engine before each :meth:`before_call`: the index, in the loaded conversation, of the message the
    #: call produced (the log's usage and timestamps are keyed by it)
    call_index: int = -1

    @abstractmethod
    def append(self, entry: Entry) -> None:
        """A new original message joins the stored history."""

    @abstractmethod
    def before_call(self) -> CallOutcome:
        """Measure, maybe compact; report what happened."""

    @abstractmethod
    def entries(self) -> Sequence[Entry]:
        """The stored history now, in order (excluded entries included for flag persistence)."""

    @abstractmethod
    def measure(self) -> int:
        """The framework's measure of what would be sent now."""

    def first_change(self) -> int | None:
        """Since this was last asked: the lowest position of :meth:`entries` that may hold another entry than it did
        then (the entries appended since aside), or None when the runner does not keep track (the engine then
        compares the whole history). The engine asks once per snapshot; a position past the end means nothing but
        appends. A wrong answer corrupts the replay's snapshots, so answer None when unsure."""
        return None

    def lines(self) -> dict[str, float]:
        """Threshold lines to draw on the tokens chart (``{"trigger": …, "target": …}``)."""
        return {}

    # a replay that skips what nothing happens in ------------------------------------------------------------------
    def quiet_through(self) -> int | None:
        """The highest :meth:`measure` at which :meth:`before_call`, on a runner that has changed nothing yet, is sure
        to do nothing: not trigger, not change the stored history, call no model and report that measure as sent.
        None when the runner cannot promise it (the default).

        The engine then takes every call up to the first one whose uncompacted measure is higher from the replay's
        uncompacted baseline, and :meth:`resume` s this runner there (when the runner also keeps :meth:`mark` s)."""
        return None

    def mark(self) -> Any:
        """A mark of this runner's state now, between calls, that another runner of the same strategy and parameters
        can :meth:`resume` from (None when the runner keeps no marks: the default)."""
        return None

    def resume(self, source: Runner, mark: Any) -> None:
        """Take the state ``source`` was in at ``mark``: ``source`` is a runner of the same strategy, parameters,
        counter and window (its thresholds may differ) that only appended and measured (a replay's uncompacted
        baseline), and ``mark`` one of its :meth:`mark` s; this runner has not been used yet and must not change
        ``source``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no marks to resume from")

    def outcome(self, before: int, *, triggered: bool, compacted: bool, target: int | None = None,
                notes: Iterable[str] = (), model_calls: Iterable[dict[str, int]] = ()) -> CallOutcome:
        """What :meth:`before_call` reports: the measure ``before`` it acted, what :meth:`measure` says is sent now,
        and its non-empty ``notes`` joined by "; "."""
        return CallOutcome(before, self.measure(), triggered, compacted, target, "; ".join(filter(None, notes)),
                           list(model_calls))


@dataclass(frozen=True)
class StrategyInfo:
    """A registered strategy."""

    name: str
    #: the framework family, the module that registers it: the name's prefix unless given ("codex" for
    #: "codex.auto_compact"; keyword-only)
    family: str = field(default="", kw_only=True)
    title: str
    summary: str
    params: tuple[Param, ...]
    #: the fast runner, when the strategy has one: any callable (params, ctx) -> Runner that sends exactly what the
    #: reference sends (``tests/test_fast_paths.py``), often a Runner class itself
    build: Callable[[Mapping[str, Any], RunContext], Runner] | None = None
    #: which shared policy settings it uses: "threshold" (context_window/compact_at/compact_to), "window" (only
    #: context_window, e.g. Agent Framework ContextWindowCompactionStrategy) or "none"
    policy: Policy = "threshold"
    docs_url: str = ""
    #: the reference semantics: a :class:`~compaction.strategies.contract.Strategy` class (or any callable (params,
    #: ctx) -> Strategy), written the way the framework documents the strategy
    reference: Callable[[Mapping[str, Any], RunContext], Any] | None = None

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.name.partition(".")[0])
        if self.build is None and self.reference is None:
            raise ValueError(f"strategy {self.name!r} needs a reference (and optionally a fast runner)")

    def make_runner(self, params: Mapping[str, Any], ctx: RunContext, *, reference: bool = False) -> Runner:
        """The runner for one replay: the fast one when there is one (unless ``reference``), else the reference
        driven by the engine's :class:`~compaction.strategies.contract.ReferenceRunner`. Setting a strategy up is
        where its framework validates its settings: a ``ValueError`` raised there is a :class:`ConfigError`."""
        if self.build is None or (reference and self.reference is not None):
            if self.reference is None:
                raise ConfigError(f"strategy {self.name!r} has no reference implementation")
        try:
            if self.build is not None and not (reference and self.reference is not None):
                return self.build(params, ctx)
            from .contract import ReferenceRunner

            return ReferenceRunner(self.reference(params, ctx))  # type: ignore[misc]
        except CompactionError:
            raise
        except ValueError as exc:
            raise ConfigError(f"{self.name}: {exc}") from exc

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve_params(self, overrides: Mapping[str, Any] | None = None, clamped: list[str] | None = None
                       ) -> dict[str, Any]:
        """Defaults updated with ``overrides`` coerced to each param's type; unknown names are an error, and so is a
        number outside its parameter's range — unless a ``clamped`` list is given: then such a number is moved to
        the nearest bound and a notice naming the parameter and the value is appended to it (what the app does with
        a value from a link or an imported file)."""
        known = {p.name: p for p in self.params}
        values = self.defaults()
        for key, value in (overrides or {}).items():
            if key not in known:
                raise ConfigError(
                    f"strategy {self.name!r} has no parameter {key!r}; its parameters are: {', '.join(known) or 'none'}"
                )
            if clamped is None:
                values[key] = known[key].coerce(value)
            else:
                values[key], notice = known[key].clamp(value)
                if notice:
                    clamped.append(notice)
        return values

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "title": self.title,
            "summary": self.summary,
            "docs_url": self.docs_url,
            "params": [p.to_json() for p in self.params],
        }


def _import_families() -> None:
    from . import load_all

    load_all()


#: every registered strategy by its dotted id (importing the families registers them)
STRATEGIES: Registry[StrategyInfo] = Registry("strategy", _import_families, plural="strategies")


def register(info: StrategyInfo) -> StrategyInfo:
    """Add a strategy to the registry (names are unique, stable dotted ids)."""
    return STRATEGIES.register(info.name, info)


def registrar(family: str, **shared: Any) -> Callable[..., StrategyInfo]:
    """The ``register`` of a module with several strategies: ``add = registrar("openhands", policy="none",
    docs_url=DOCS)``, then ``add("recent_events", title=…, summary=…, params=…, build=…)`` registers
    ``openhands.recent_events`` with the fields ``shared`` gives every strategy of the module (a call may give them
    otherwise)."""

    def add(name: str, **fields: Any) -> StrategyInfo:
        return register(StrategyInfo(name=f"{family}.{name}", **{**shared, **fields}))

    return add


def registry() -> dict[str, StrategyInfo]:
    """All registered strategies by name (importing the families registers them)."""
    return STRATEGIES.all()


def get_strategy(name: str) -> StrategyInfo:
    """A registered strategy by name, or a ``ValueError`` listing the known names."""
    return STRATEGIES.get(name)
