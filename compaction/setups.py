"""Setups: a strategy with its parameters, policy and counter — what the app compares, sweeps vary and links share.

A setup serializes to a small JSON object; a list of them round-trips through JSON files (import/export) and
through one URL query parameter (so a link reproduces the view). Both arrive from strangers, so reading them is
bounded and validated:

- a link token is at most :data:`MAX_LINK_CHARS` characters and inflates to at most :data:`MAX_LINK_JSON_BYTES`
  (the decompression stops there); an imported file is at most :data:`MAX_IMPORT_BYTES`; JSON nested too deeply is
  refused as a whole, with one message;
- at most :data:`MAX_SETUPS` setups are read; a message says how many were dropped;
- every field is checked (strategy, parameters by their registered type and range, a finite whole context window,
  finite fractions, a counter spec the library knows, text labels).

:func:`read_setups_link` and :func:`read_setups_json` are lenient, for the app: a setup that cannot be read costs
only itself (one readable message each), and a number outside its parameter's range is moved to the nearest bound
with a notice naming the parameter and the value. :func:`decode_from_url` and :func:`setups_from_json` are strict:
the first problem is a ``ValueError`` naming the setup and the field.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import numbers
import zlib
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import KW_ONLY
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any
from typing import SupportsInt
from typing import cast

from .conversation import Conversation
from .errors import ConfigError
from .replay import Replay
from .replay import replay
from .strategies import StrategyInfo
from .strategies import get_strategy
from .tokens import check_counter_spec as counter_kind
from .tokens import counter_specs

if TYPE_CHECKING:
    from .budget import WorkBudget

POLICY_KEYS = ("context_window", "compact_at", "compact_to")
#: the most setups one link or one imported file brings in
MAX_SETUPS = 12
#: the longest link token read (characters), and the most bytes it may inflate to
MAX_LINK_CHARS = 32 << 10
MAX_LINK_JSON_BYTES = 256 << 10
#: the largest JSON file of setups read
MAX_IMPORT_BYTES = 1 << 20
#: the longest counter spec and label accepted
MAX_COUNTER_CHARS = 64
MAX_LABEL_CHARS = 200


def _frozen(value: Any) -> Any:
    """``value`` as an immutable equivalent: lists and tuples as tuples, mappings as :class:`Params`."""
    if isinstance(value, Params):
        return value
    if isinstance(value, Mapping):
        return Params(value)
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


class Params(Mapping[str, Any]):
    """A setup's parameter values: an immutable, hashable mapping (lists are kept as tuples)."""

    __slots__ = ("_values", "_hash")

    def __init__(self, values: Mapping[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {str(k): _frozen(v) for k, v in (values or {}).items()}
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._values.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if type(other) is Params:  # (the commonest: a cache key's setup against another's, without the ABC check)
            return self._values == other._values
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def __repr__(self) -> str:
        return f"Params({self._values!r})"


@dataclass(frozen=True)
class Setup:
    """One setup: a registered strategy with its parameters, the threshold policy and the counter it runs with.

    Frozen and hashable (``params`` is stored as :class:`Params`), so the same value keys caches, travels in links
    and imports (:meth:`to_json` / :meth:`from_json`), is swept and exported. ``context_window=None`` takes the
    window from the log when it is replayed (:func:`compaction.models.resolve_context_window`). ``label`` is how
    the app and tables name it."""

    strategy: str
    params: Mapping[str, Any] = field(default_factory=Params)
    _: KW_ONLY
    context_window: int | None = None
    compact_at: float = 0.7
    compact_to: float = 0.4
    counter: str = "approx"
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.params, Params):
            object.__setattr__(self, "params", Params(self.params))

    @property
    def name(self) -> str:
        """How the setup is named: its label, else its strategy."""
        return self.label or self.strategy

    @property
    def info(self) -> StrategyInfo:
        """The registered strategy (``ConfigError`` when the name is not one)."""
        return get_strategy(self.strategy)

    def policy(self) -> dict[str, Any]:
        """``context_window``, ``compact_at`` and ``compact_to``, as ``replay --json`` names them."""
        return {"context_window": self.context_window, "compact_at": self.compact_at, "compact_to": self.compact_to}

    def with_values(self, values: Mapping[str, Any]) -> Setup:
        """A copy with policy keys and/or strategy parameters changed."""
        policy = {k: values[k] for k in POLICY_KEYS if k in values}
        params = {**self.params, **{k: v for k, v in values.items() if k not in POLICY_KEYS}}
        return replace(self, params=params, **policy)

    def replace(self, **changes: Any) -> Setup:
        """A copy with fields changed (``Setup.replace(label="B")``)."""
        return replace(self, **changes)

    def resolved_params(self) -> dict[str, Any]:
        """Defaults plus this setup's overrides, coerced (``ValueError`` for unknown names or bad values)."""
        return self.info.resolve_params(self.params)

    def run(self, conv: Conversation, budget: WorkBudget | None = None, *, reference: bool = False) -> Replay:
        """Replay ``conv`` under this setup (within ``budget``, when given: see :mod:`compaction.budget`)."""
        return replay(conv, self, budget=budget, reference=reference)

    def to_json(self) -> dict[str, Any]:
        """Only parameters that differ from the strategy's defaults are written; a window taken from the log is
        written as ``null``."""
        defaults = self.info.defaults()
        params = {k: _jsonable(v) for k, v in self.params.items()
                  if not callable(v) and _frozen(defaults.get(k, object())) != v}
        out: dict[str, Any] = {"strategy": self.strategy, **self.policy(), "counter": self.counter}
        if params:
            out["params"] = params
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "setup", clamped: list[str] | None = None) -> Setup:
        """Read one setup, validating every field (``ValueError`` names ``where`` and the field). With a ``clamped``
        list, a parameter number outside its range is moved to the nearest bound and a notice appended to it."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected an object, got {type(data).__name__}")
        strategy = data.get("strategy")
        if not isinstance(strategy, str):
            raise ConfigError(f"{where}: field 'strategy' must be a strategy name")
        notices: list[str] | None = [] if clamped is not None else None
        try:
            info = get_strategy(strategy[:200])
            params = data.get("params") or {}
            if not isinstance(params, Mapping):
                raise ConfigError("field 'params' must be an object")
            resolved = info.resolve_params(params, notices)
            kept = {k: resolved[k] for k in params}
            window = _window(data.get("context_window"))
            compact_at = _fraction(data.get("compact_at", 0.7), "compact_at")
            compact_to = _fraction(data.get("compact_to", 0.4), "compact_to")
            counter = check_counter_spec(data.get("counter", "approx"))
            label = data.get("label", "")
            if not isinstance(label, str):
                raise ConfigError(f"field 'label' must be text, got {type(label).__name__}")
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if clamped is not None and notices:
            clamped.extend(f"{where}: {notice}" for notice in notices)
        return cls(strategy, kept, context_window=window, compact_at=compact_at, compact_to=compact_to,
                   counter=counter, label=label[:MAX_LABEL_CHARS])


def _window(value: Any) -> int | None:
    """``context_window`` as a setup holds it: a finite whole number, or None (null, absent) to take the log's."""
    return None if value is None else _whole_number(value, "context_window")


def _jsonable(value: Any) -> Any:
    """A parameter value as JSON holds it (tuples as lists, :class:`Params` as objects)."""
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    return value


def _whole_number(value: Any, name: str) -> int:
    """A finite whole number (``64000`` or ``64000.0``; not ``true``, not text, not infinite)."""
    # every Real converts with int() (typeshed's numbers.Real does not say so)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or \
            value != int(cast(SupportsInt, value)):
        raise ConfigError(f"field {name!r} must be a finite whole number, got {_short(value)}")
    return int(cast(SupportsInt, value))


def _fraction(value: Any, name: str) -> float:
    """A finite number (the policy then checks it lies between 0 and 1 as Haystack does)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ConfigError(f"field {name!r} must be a finite number, got {_short(value)}")
    return float(value)


def check_counter_spec(spec: Any) -> str:
    """``spec`` when it names a counter the library builds (``approx``, ``approx:3.3``, ``tiktoken:o200k_base``,
    ``maf-dotnet``…) with a finite, positive chars-per-token; ``ValueError`` otherwise."""
    if not isinstance(spec, str) or not spec.strip() or len(spec) > MAX_COUNTER_CHARS:
        raise ConfigError(f"field 'counter' must be a counter spec ({', '.join(counter_specs())}), got {_short(spec)}")
    counter_kind(spec)
    return spec.strip()


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = repr(value)
    except ValueError:  # an integer past the interpreter's digit limit
        return "a number too long to show"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------------------------------------ lists of setups
@dataclass
class SetupsRead:
    """The setups read from a link or a file, with what could not be read (one message per setup, and one for
    setups dropped past :data:`MAX_SETUPS`) and the values moved into their range."""

    setups: list[Setup]
    problems: list[str] = field(default_factory=list)
    clamped: list[str] = field(default_factory=list)


def _read_items(items: Any, source: str, lenient: bool) -> SetupsRead:
    """Setups from a decoded JSON list: lenient (each bad setup one problem, ranges clamped) or strict (the first
    problem raises)."""
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{source}: expected a list of at least one setup")
    if not lenient and len(items) > MAX_SETUPS:
        raise ConfigError(f"{source}: {len(items):,} setups; at most {MAX_SETUPS} are read at once")
    read = SetupsRead([])
    for i, item in enumerate(items[:MAX_SETUPS]):
        try:
            read.setups.append(Setup.from_json(item, f"setup {i + 1}", read.clamped if lenient else None))
        except ValueError as exc:
            if not lenient:
                raise
            read.problems.append(str(exc))
    if len(items) > MAX_SETUPS:
        read.problems.append(f"{source} holds {len(items):,} setups: the first {MAX_SETUPS} were read and "
                             f"{len(items) - MAX_SETUPS:,} dropped (at most {MAX_SETUPS} at once)")
    return read


def _parse_json(text: str | bytes, what: str) -> Any:
    """``json.loads`` with every failure (bad syntax or text, nesting too deep, a number too long) a ``ValueError``
    saying ``what`` could not be read. ``NaN`` and ``Infinity`` parse (as Python does) and are refused field by field,
    so they cost only the setup holding them."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError(f"{what} could not be read (JSON nested too deeply)") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer past the digit limit
        raise ConfigError(f"{what} could not be read ({' '.join(str(exc).split())[:200]})") from None


def _file_items(text: str | bytes) -> list[Any]:
    """The setup list of an exported JSON document (``{"setups": [...]}``, or a bare list)."""
    if len(text) > MAX_IMPORT_BYTES:
        raise ConfigError(f"the file is {len(text):,} bytes; a file of setups is at most {MAX_IMPORT_BYTES:,}")
    data = _parse_json(text, "not a JSON document of setups:")
    items = data.get("setups") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise ConfigError("expected {\"setups\": [...]} with at least one setup")
    return items


def read_setups_json(text: str | bytes) -> SetupsRead:
    """Setups from an exported JSON document (or a bare list), leniently (see the module docstring); ``ValueError``
    only when the document as a whole cannot be read."""
    return _read_items(_file_items(text), "the file", lenient=True)


def setups_to_json(setups: Sequence[Setup]) -> str:
    """A JSON document of setups (for export)."""
    return json.dumps({"setups": [s.to_json() for s in setups]}, ensure_ascii=False, indent=1)


def setups_from_json(text: str | bytes) -> list[Setup]:
    """Setups from an exported JSON document (or a bare list); ``ValueError`` says what is wrong and where."""
    return _read_items(_file_items(text), "the file", lenient=False).setups


# ------------------------------------------------------------------------------------------------ links
def encode_for_url(setups: Sequence[Setup]) -> str:
    """Setups as one compact URL-safe token (deflated JSON, base64url)."""
    raw = json.dumps([s.to_json() for s in setups], separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def inflate(data: bytes, limit: int, what: str) -> bytes:
    """A zlib stream decompressed, stopping as soon as it would exceed ``limit`` bytes (``ValueError``), so a small
    input cannot inflate into a large allocation."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise ConfigError(f"{what} could not be read (damaged: {exc})") from None
    if len(out) > limit:
        raise ConfigError(f"{what} could not be read (it inflates past {limit:,} bytes)")
    if not inflater.eof:
        raise ConfigError(f"{what} could not be read (damaged: the data ends early)")
    return out


def _link_items(token: str) -> Any:
    what = "the link's setups"
    if len(token) > MAX_LINK_CHARS:
        raise ConfigError(f"{what} could not be read (the token is {len(token):,} characters; at most "
                         f"{MAX_LINK_CHARS:,} are read)")
    try:
        packed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"{what} could not be read ({exc})") from None
    items = _parse_json(inflate(packed, MAX_LINK_JSON_BYTES, what), what)
    if not isinstance(items, list):
        raise ConfigError(f"{what} could not be read (expected a list)")
    return items


def read_setups_link(token: str) -> SetupsRead:
    """The setups of a link token, leniently (see the module docstring); ``ValueError`` only when the token as a
    whole cannot be read."""
    return _read_items(_link_items(token), "the link", lenient=True)


def decode_from_url(token: str) -> list[Setup]:
    """The inverse of :func:`encode_for_url`; ``ValueError`` for a damaged link or any setup that is not valid."""
    return _read_items(_link_items(token), "the link", lenient=False).setups
