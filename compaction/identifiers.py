"""Distinctive identifiers in text (paths, dotted and snake_case names, CamelCase, hashes, long numbers, #issues).

Used by the extractive summarizer (what to keep) and by the information-loss signals (what a later message quoted).
Linear in the text: the text is first cut into candidate tokens by one simple character class, tokens longer than
:data:`MAX_TOKEN` are skipped (a hex dump or a run of test dots is no identifier), and each remaining token is
classified by anchored patterns — so a 1 MB line with no separators costs one pass, not a backtracking search.
A candidate shorter than the minimum length cannot become long enough by stripping its edges, so the cut keeps only
runs of at least that many characters (most words of prose and code are shorter).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Iterator
from functools import lru_cache

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
_EDGES = ".-/"


@lru_cache(maxsize=8)
def _runs(min_length: int) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Two cuts of a text into runs at least ``min_length`` long (shorter candidates cannot be identifiers): of
    :data:`_CANDIDATE` characters, and of those characters widened to every non-ASCII one — a class of ranges the
    regex engine tests faster than ``\\w``. A wide run that is ASCII is a candidate; one that is not holds the
    candidates the first cut finds in it (its edges are ASCII separators, or the text's ends, either way)."""
    least = max(min_length, 1)
    repeat = "{" + str(least) + ",}"
    return re.compile(r"[\w./#-]" + repeat), re.compile(r"[A-Za-z0-9_./#\x80-\U0010ffff-]" + repeat)


def identifier_set(text: str, min_length: int = 4) -> set[str]:
    """``set(identifiers(text, min_length))``, classifying each distinct candidate once (a tool result repeats most
    of its words)."""
    return next(identifier_sets((text,), min_length))


def identifier_sets(texts: Iterable[str], min_length: int = 4) -> Iterator[set[str]]:
    """:func:`identifier_set` of each text in turn, classifying each distinct run once across all of them (the
    messages of one conversation share most of their words): a text costs one scan and a few set operations."""
    narrow, wide = _runs(min_length)
    findall = wide.findall
    seen: set[str] = set()  # every run classified so far
    plain: set[str] = set()  # runs that are identifiers as they are
    other: dict[str, tuple[str, ...]] = {}  # runs that hold other identifiers (stripped, or cut at non-ASCII ones)
    other_keys: set[str] = set()
    for text in texts:
        runs = set(findall(text))
        new = runs - seen
        if new:
            seen |= new
            for run in new:
                if run.isascii():
                    if run.isalpha():  # a word (most runs): only a hash of lowercase a-f or a CamelCase name can be
                        if run.islower():
                            if 7 <= len(run) <= 40 and len(run) >= min_length and not run.strip("abcdef"):
                                plain.add(run)
                            continue
                        if run.istitle() or run.isupper():  # (one capital, or no small letter: no CamelCase)
                            continue
                    found = _identifier(run, min_length)
                    if found is None:
                        continue
                    if len(found) == len(run):
                        plain.add(run)
                        continue
                    held: tuple[str, ...] = (found,)
                else:
                    held = tuple(t for t in (_identifier(c, min_length) for c in narrow.findall(run)) if t is not None)
                    if not held:
                        continue
                other[run] = held
                other_keys.add(run)
        found_here = runs & plain
        if other_keys:
            for run in runs & other_keys:
                found_here.update(other[run])
        yield found_here


def _identifier(token: str, min_length: int) -> str | None:
    """The identifier a candidate token stands for (its edges stripped), or None."""
    if len(token) > MAX_TOKEN:
        return None
    core = token.strip(_EDGES)
    return core if len(core) >= min_length and _IDENTIFIER.fullmatch(core) is not None else None


def identifiers(text: str, min_length: int = 4) -> list[str]:
    """Distinctive identifiers in ``text``, in order of appearance (duplicates kept)."""
    out: list[str] = []
    known: dict[str, bool] = {}  # a token that repeats is classified once
    for token in _runs(min_length)[0].findall(text):
        if len(token) > MAX_TOKEN:
            continue
        token = token.strip(_EDGES)
        if len(token) < min_length:
            continue
        found = known.get(token)
        if found is None:
            found = known[token] = _IDENTIFIER.fullmatch(token) is not None
        if found:
            out.append(token)
    return out
