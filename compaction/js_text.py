"""JavaScript's string semantics, for re-creating an agent written in TypeScript character for character.

A JavaScript string is a sequence of UTF-16 code units: ``length``, ``slice`` and ``charCodeAt`` count a character
outside the Basic Multilingual Plane (an emoji) as two units, and ``JSON.stringify`` writes numbers and lone
surrogates its own way. Gemini CLI measures and cuts text with these, so its re-creation needs the same arithmetic:

- :func:`utf16_len`, :func:`js_slice` — ``s.length`` and ``s.slice(start, end)``;
- :func:`js_trim` — ``s.trim()`` (JavaScript's whitespace set, not Python's);
- :func:`js_stringify` — ``JSON.stringify(value)`` and ``JSON.stringify(value, null, indent)``;
- :func:`js_locale_int` — ``n.toLocaleString()`` of an integer in the ``en-US`` locale Node uses by default.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

#: what ``String.prototype.trim`` removes: WhiteSpace and LineTerminator of ECMA-262
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                 "\u2028\u2029\u202f\u205f\u3000\ufeff"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: JSON string quoting as ``JSON.stringify`` does it, but for lone surrogates (handled apart)
_quote = json.encoder.encode_basestring


def utf16_len(text: str) -> int:
    """``text.length``: UTF-16 code units (a character above U+FFFF counts twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def ascii_units(text: str) -> int:
    """How many UTF-16 code units of ``text`` are at most 127 (``charCodeAt(i) <= 127``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("ascii", "ignore"))


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def js_slice(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 code units (negative positions count from the end, as in JavaScript;
    a cut through a surrogate pair leaves a lone surrogate, as it does there)."""
    if text.isascii():
        return text[start:end] if end is not None else text[start:]
    units = _units(text)
    count = len(units) // 2
    begin = _position(start, count)
    stop = count if end is None else _position(end, count)
    if stop <= begin:
        return ""
    return units[2 * begin: 2 * stop].decode("utf-16-le", "surrogatepass")


def _position(index: int, count: int) -> int:
    return max(count + index, 0) if index < 0 else min(index, count)


def js_trim(text: str) -> str:
    """``text.trim()``."""
    return text.strip(_JS_WHITESPACE)


def js_locale_int(number: int) -> str:
    """``number.toLocaleString()`` of an integer in ``en-US`` (thousands separated by commas)."""
    return f"{int(number):,}"


def js_number(value: float | int) -> str:
    """A number as ``JSON.stringify`` writes it (ECMAScript ``Number::toString``; NaN and infinities as null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return "null"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    point = int(exponent) + k  # ECMAScript's n: the value is 0.<digits> x 10^n
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if point >= 1 else '-'}{abs(point - 1)}"


def _string(text: str) -> str:
    quoted = _quote(text)
    if _LONE_SURROGATE.search(text) is None:
        return quoted
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def js_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value)`` (``indent``: ``JSON.stringify(value, null, indent)``) for JSON-like values: mappings
    (their keys in order), sequences, strings, numbers, booleans and None."""
    return _stringify(value, " " * indent if indent else "", "")


def _stringify(value: Any, step: str, current: str) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (bool, int, float)):
        return js_number(value)
    inner = current + step
    if isinstance(value, Mapping):
        items = [f"{_string(str(k))}:{' ' if step else ''}{_stringify(v, step, inner)}" for k, v in value.items()]
        return _join(items, "{", "}", step, current, inner)
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        items = [_stringify(v, step, inner) for v in value]
        return _join(items, "[", "]", step, current, inner)
    return _string(str(value))


def _join(items: list[str], opening: str, closing: str, step: str, current: str, inner: str) -> str:
    if not items:
        return opening + closing
    if not step:
        return opening + ",".join(items) + closing
    return f"{opening}\n{inner}" + f",\n{inner}".join(items) + f"\n{current}{closing}"
