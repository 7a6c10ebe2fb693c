"""Distinctive identifiers in text (paths, dotted and snake_case names, CamelCase, hashes, long numbers, #issues).

Used by the extractive summarizer (what to keep) and by the information-loss signals (what a later message quoted).
Linear in the text: the text is first cut into candidate tokens by one simple character class, tokens longer than
:data:`MAX_TOKEN` are skipped (a hex dump or a run of test dots is no identifier), and each remaining token is
classified by anchored patterns — so a 1 MB line with no separators costs one pass, not a backtracking search.
"""

from __future__ import annotations

import re

#: longer candidate tokens are not identifiers
MAX_TOKEN = 200
_CANDIDATE = re.compile(r"[\w./#-]+")
_KINDS = (
    re.compile(r"(?:[\w.-]+/)+[\w.-]+"),  # paths and URL paths
    re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"),  # dotted names (module.func, file.py)
    re.compile(r"[a-z][a-z0-9]*_[a-z0-9_]+"),  # snake_case
    re.compile(r"[A-Z][a-z0-9]+[A-Z]\w*"),  # CamelCase
    re.compile(r"[0-9a-f]{7,40}"),  # hashes
    re.compile(r"\d{4,}"),  # long numbers (ids, line counts)
    re.compile(r"#\d+"),  # issue numbers
)


#: any of the kinds, in one pattern: a token is an identifier when it matches one of them whole
_IDENTIFIER = re.compile("|".join(f"(?:{kind.pattern})" for kind in _KINDS))


def identifier_set(text: str, min_length: int = 4) -> set[str]:
    """``set(identifiers(text, min_length))``, classifying each distinct candidate once (a tool result repeats most
    of its words: this is what the information-loss index asks of every message)."""
    out: set[str] = set()
    for token in set(_CANDIDATE.findall(text)):
        if len(token) > MAX_TOKEN:
            continue
        token = token.strip(".-/")
        if len(token) >= min_length and token not in out and _IDENTIFIER.fullmatch(token) is not None:
            out.add(token)
    return out


def identifiers(text: str, min_length: int = 4) -> list[str]:
    """Distinctive identifiers in ``text``, in order of appearance (duplicates kept)."""
    out: list[str] = []
    known: dict[str, bool] = {}  # a token that repeats is classified once
    for token in _CANDIDATE.findall(text):
        if len(token) > MAX_TOKEN:
            continue
        token = token.strip(".-/")
        if len(token) < min_length:
            continue
        found = known.get(token)
        if found is None:
            found = known[token] = _IDENTIFIER.fullmatch(token) is not None
        if found:
            out.append(token)
    return out
