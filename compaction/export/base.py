"""What every exporter shares: :class:`Snippet`, the :class:`ResolvedSetup` an exporter renders, literal-rendering helpers,
and the registry of exporters by family.

A *setup* is a registered strategy with its resolved params, the policy (``context_window``, ``compact_at``,
``compact_to``) and a counter spec. :func:`export_setup` turns it into :class:`Snippet` objects for the setup's
framework: Haystack ``CompactionHook`` + compactor wired into an ``Agent``, Microsoft Agent Framework strategies
(Python and C#), the Anthropic ``context_management`` request field, LangChain v1 middleware, SWE-agent YAML.

Values that come from params are always rendered as literals (``repr`` for Python, ``json.dumps`` for JSON, YAML and
C# strings), never pasted raw, so a placeholder holding quotes or braces stays valid code. Lines the user must
replace with their own objects (a chat generator, a client, tools) end with :data:`FILL_IN`; the names they define
are listed in :attr:`Snippet.fill_in`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..registry import Registry
from ..strategies.base import StrategyInfo
from ..tokens import check_counter_spec as validate_counter_spec

#: marks a line of example code the user replaces with their own object (chat generator, client, tools…)
FILL_IN = "← fill in"


@dataclass(frozen=True)
class Snippet:
    """One piece of production code: ``language`` is ``python``, ``csharp``, ``json``, ``yaml``, ``toml`` or
    ``text``."""

    language: str
    title: str
    code: str
    note: str = ""
    #: names the user defines on the lines marked :data:`FILL_IN` (their own generator, client, tools…)
    fill_in: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"language": self.language, "title": self.title, "code": self.code, "note": self.note,
                "fill_in": list(self.fill_in)}


@dataclass(frozen=True)
class ResolvedSetup:
    """Everything an exporter needs: the strategy, its resolved params, the policy and the counter spec."""

    info: StrategyInfo
    params: Mapping[str, Any]
    context_window: int
    compact_at: float
    compact_to: float
    counter: str

    def non_default(self, names: Iterable[str], prefix: str = "") -> list[tuple[str, Any]]:
        """``(name without prefix, value)`` for the params among ``names`` whose value differs from the default."""
        defaults = self.info.defaults()
        out = []
        for name in names:
            value = self.params[prefix + name]
            if _normalized(value) != _normalized(defaults[prefix + name]):
                out.append((name, value))
        return out

    @property
    def counter_kind(self) -> str:
        return self.counter.partition(":")[0]

    @property
    def counter_arg(self) -> str:
        return self.counter.partition(":")[2]


def _normalized(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# ------------------------------------------------------------------------------------------------ rendering
def py(value: Any) -> str:
    """A Python literal for a param value (strings, numbers, bools, None, tuples and lists of those)."""
    return repr(value)


def py_call(callee: str, args: Sequence[str]) -> str:
    """``callee(a, b)`` on one line when short, else one argument per line, indented by four spaces (the caller
    re-indents the result when it nests it)."""
    one_line = f"{callee}({', '.join(args)})"
    if len(one_line) <= 88 and "\n" not in one_line:
        return one_line
    inner = ",\n".join("    " + a.replace("\n", "\n    ") for a in args)
    return f"{callee}(\n{inner},\n)"


def py_import(module: str, names: Iterable[str]) -> str:
    """``from module import a, b`` (wrapped in parentheses, one name a line, when long)."""
    ordered = sorted(set(names))
    line = f"from {module} import {', '.join(ordered)}"
    if len(line) <= 100:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in ordered) + ")"


def kwargs(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    return [f"{name}={py(value)}" for name, value in pairs]


def fill_in_line(name: str, example: str, what: str) -> str:
    """``name = example  # ← fill in: what`` (the marker tells the user, and tests, what to replace)."""
    return f"{name} = {example}  # {FILL_IN}: {what}"


def cs_string(text: str) -> str:
    """A C# regular string literal (JSON escapes are all valid C# escapes)."""
    return json.dumps(text)


def py_literal_block(value: Any, indent: int = 0) -> str:
    """A JSON-like value as an indented Python literal (``True``/``None``, not JSON's ``true``/``null``)."""
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, dict) and value:
        items = [f"{inner}{k!r}: {py_literal_block(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    if isinstance(value, (list, tuple)) and value and any(isinstance(v, (dict, list)) for v in value):
        items = [f"{inner}{py_literal_block(v, indent + 4)}," for v in value]
        return "[\n" + "\n".join(items) + f"\n{pad}]"
    return repr(list(value) if isinstance(value, tuple) else value)


def framework_child(name: str, family: str, native: Mapping[str, Any], label: str) -> str:
    """The framework's own child strategy a composite names; a strategy the replay nests from another family has no
    production equivalent (a ``ValueError`` says so)."""
    from ..strategies._nesting import native_name

    short = native_name(name, family, native)
    if short is None:
        raise ConfigError(f"{label} ({name}) is nested by Compaction Lab's adapter; the framework's composite only "
                         f"takes its own strategies, so this setup has no production code")
    return short


def check_counter_spec(counter: str | None) -> str:
    """The counter spec, stripped; a ``ValueError`` names what was expected when it is not one we know."""
    validate_counter_spec(counter)
    return (counter or "approx").strip()


Exporter = Callable[[ResolvedSetup], list[Snippet]]
#: family -> (the strategy kinds its exporter knows, the exporter)
EXPORTERS: Registry[tuple[frozenset[str], Exporter]] = Registry("exporter")


def register_exporter(family: str, kinds: Iterable[str], exporter: Exporter) -> Exporter:
    """Register ``exporter`` for the strategies ``family.<kind>`` of ``family`` (one exporter per family)."""
    EXPORTERS.register(family, (frozenset(kinds), exporter))
    return exporter
