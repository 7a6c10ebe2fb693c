"""Defensive accessors for untrusted JSON fields, shared by the format readers.

Log content is untrusted: a field can be missing, ``null`` or of the wrong type. These helpers return a safe value
instead of raising, so a reader can keep going and report what it repaired with a :class:`LoadWarning`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from ..conversation import LoadWarning

if TYPE_CHECKING:
    from .base import Document


def as_count(value: Any) -> int:
    """A token count: a non-negative integer (integral floats accepted); anything else is 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return 0


def optional_count(value: Any) -> int | None:
    """A count when the field holds one, else ``None`` (for "not reported" vs 0)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return as_count(value)


def as_mapping(value: Any) -> Mapping[str, Any]:
    """The value if it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def as_text(value: Any) -> str | None:
    """The value if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def as_id(value: Any) -> str | None:
    """An identifier (a tool call's id): a string as it is, an integer as its digits, anything else ``None``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


class FieldError(ValueError):
    """A field of one record does not hold what the format expects; the reader skips what it belongs to."""

    def __init__(self, field: str, expected: str, value: Any) -> None:
        self.field = field
        super().__init__(f"{field}: expected {expected}, got {type_name(value)}")


def expect_object(value: Any, field: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object; :class:`FieldError` naming ``field`` otherwise."""
    if not isinstance(value, Mapping):
        raise FieldError(field, "an object", value)
    return value


def first_misfit(items: list[Any], fits: Callable[[Any], bool], sample: int = 50) -> int | None:
    """For detection: the index of the first of the leading ``sample`` items that does not fit, when fewer than
    half of them fit; None when they mostly do (a few malformed records must not make a log unrecognizable)."""
    head = items[:sample]
    misfits = [i for i, item in enumerate(head) if not fits(item)]
    return misfits[0] if len(misfits) * 2 > len(head) else None


def misfit_reason(fits: Callable[[Any], bool], reason: str) -> Callable[[list[Any]], str | None]:
    """For :func:`detect_json_items`: a check that gives ``reason`` formatted with the index :func:`first_misfit`
    finds (``"message {} has no role"``), or None when the items mostly fit."""

    def check(items: list[Any]) -> str | None:
        misfit = first_misfit(items, fits)
        return None if misfit is None else reason.format(misfit)

    return check


def detect_json_items(doc: Document, items_of: Callable[[Any], list[Any] | None], missing: str,
                      check: Callable[[list[Any]], str | None]) -> str | None:
    """For detection of a single JSON document that holds a list of items (messages, task results): None when
    ``items_of`` finds a non-empty list in it and ``check`` finds no fault with its items, else why not (``missing``
    when there is no list or it is empty)."""
    if doc.kind != "json":
        return "not a single JSON document"
    items = items_of(doc.value)
    if not items:
        return missing
    return check(items)


def message_list(value: Any) -> list[Any] | None:
    """The messages of a JSON value that is a list of them or an object with a ``messages`` list; None otherwise."""
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        messages: list[Any] = value["messages"]
        return messages
    return None


#: the warning for a record whose nesting is too deep to walk (it costs only itself)
TOO_DEEP = "skipped: nested too deeply to read"


def type_name(value: Any) -> str:
    """The JSON type name of a decoded value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


class UnknownTypes:
    """Collects the types of records a reader skips (by default: types it does not know), to report each once with a
    count and its first line."""

    def __init__(self, what: str, reason: str = "of unknown type", reason_plural: str | None = None) -> None:
        self._what = what
        self._reason = (reason, reason_plural or reason)  # after one record, after several
        self._seen: dict[str, tuple[int | None, int]] = {}

    def add(self, kind: Any, line: int | None) -> None:
        key = repr(kind)
        key = key if len(key) <= 60 else key[:59] + "…"
        first, count = self._seen.get(key, (line, 0))
        self._seen[key] = (first, count + 1)

    def warnings(self) -> list[LoadWarning]:
        out = []
        for kind, (first, count) in self._seen.items():
            plural = "s" if count > 1 else ""
            reason = self._reason[count > 1]
            out.append(LoadWarning(f"skipped {count} {self._what}{plural} {reason} {kind}", line=first, field="type"))
        return out
