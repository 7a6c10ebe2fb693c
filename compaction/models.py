"""What the log says about its model: the context window and the price preset, resolved once for the app, the CLI
and the API.

:func:`resolve_context_window` takes the window the log states (Codex ``model_context_window``), else the window of
the model the log names, from the dated table in ``models.json`` (the 1M variant when the name carries Claude Code's
``[1m]`` suffix or the reported prompts prove the larger window), else a stated default.
:func:`resolve_price_model` takes the price preset of the model the log names, else the default preset of its
provider. Both answer with a :class:`Resolved`: the value, where it came from (``log:<field>``, ``model:<name>`` or
``default``) and one sentence saying so, for the notices the app and the CLI show. An explicit value always wins;
these are only what is used when none is given.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from .conversation import Conversation

#: the field each format reads its stated window from (``Source.context_window``), for ``log:<field>``
LOG_WINDOW_FIELDS: Mapping[str, str] = {"codex": "model_context_window"}
#: how a log's format tells its provider when the table does not know its model (for the default price preset)
FORMAT_PROVIDERS: Mapping[str, str] = {
    "claude-code": "anthropic", "anthropic": "anthropic", "codex": "openai", "openai-responses": "openai",
    "gemini-cli": "google", "google-adk": "google",
}
#: the longest model name read from a log (a name is text from a stranger's file)
MAX_MODEL_CHARS = 200
LONG_CONTEXT_SUFFIX = "[1m]"

_PREFIXES = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?(?:anthropic|openai|google|meta|amazon)\.")
_SUFFIXES = re.compile(r"(?:-v\d+(?::\d+)?|@\d{8}|@latest|-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


@dataclass(frozen=True)
class Resolved:
    """A value the log (or the model it names, or a default) gave: ``source`` is ``log:<field>``, ``model:<name>``
    or ``default``; ``note`` says so in one sentence (for a notice)."""

    value: Any
    source: str
    note: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source, "note": self.note}


@dataclass(frozen=True)
class ModelInfo:
    """One row of the model table."""

    name: str
    provider: str
    context_window: int
    long_context_window: int | None
    max_output: int | None
    price: str | None
    source: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class ModelMatch:
    """A model name as a log gives it, the row it matched and whether it asked for the long-context variant."""

    given: str
    normalized: str
    info: ModelInfo
    long_context: bool


@lru_cache(maxsize=1)
def model_table() -> dict[str, Any]:
    """The bundled, dated model table (``models.json``) as read."""
    table: dict[str, Any] = json.loads(resources.files(__package__).joinpath("models.json").read_text(encoding="utf-8"))
    return table


@lru_cache(maxsize=1)
def known_models() -> tuple[ModelInfo, ...]:
    """Every row of the model table, in its order."""
    rows = []
    for row in model_table()["models"]:
        rows.append(ModelInfo(
            name=row["name"], provider=row["provider"], context_window=int(row["context_window"]),
            long_context_window=row.get("long_context_window"), max_output=row.get("max_output"),
            price=row.get("price"), source=row["source"],
            pattern=re.compile(row.get("match") or re.escape(row["name"])),
        ))
    return tuple(rows)


def table_date() -> str:
    """The date the model table's figures were read."""
    return str(model_table()["as_of"])


def default_context_window() -> int:
    """The window used when the log states none and names no known model."""
    return int(model_table()["default"]["context_window"])


DEFAULT_CONTEXT_WINDOW = default_context_window()


def normalize_model_name(name: str) -> tuple[str, bool]:
    """``name`` as the table matches it (lower case, without provider prefixes, versions, dates, ``-latest``), and
    whether it carried the ``[1m]`` long-context suffix. ``litellm_proxy/anthropic.claude-3-5-sonnet-20241022-v2:0``
    → ``claude-3-5-sonnet``; ``claude-opus-4-6[1m]`` → ``claude-opus-4-6`` (long)."""
    text = name.strip().lower()[:MAX_MODEL_CHARS]
    long_context = text.endswith(LONG_CONTEXT_SUFFIX)
    if long_context:
        text = text[: -len(LONG_CONTEXT_SUFFIX)]
    text = text.rsplit("/", 1)[-1]
    text = _PREFIXES.sub("", text)
    previous = None
    while previous != text:  # "-20241022-v2:0": a version after a date
        previous, text = text, _SUFFIXES.sub("", text)
    return text, long_context


def lookup_model(name: str) -> ModelMatch | None:
    """The table's row for a model name as a log gives it, or None when the table does not know it."""
    normalized, long_context = normalize_model_name(name)
    for info in known_models():
        if info.pattern.fullmatch(normalized):
            return ModelMatch(name, normalized, info, long_context)
    return None


def log_model(conversation: Conversation) -> str | None:
    """The model the log names: ``Source.model`` when its reader set it, else the one most of its LLM calls name
    (``meta["model"]`` of the assistant messages)."""
    if conversation.source.model:
        return str(conversation.source.model)[:MAX_MODEL_CHARS]
    names = Counter(m.meta["model"] for m in conversation.messages
                    if m.role == "assistant" and isinstance(m.meta.get("model"), str) and m.meta["model"].strip())
    return names.most_common(1)[0][0][:MAX_MODEL_CHARS] if names else None


def peak_reported_prompt(conversation: Conversation) -> int:
    """The largest prompt a call of the log reported (uncached input + cache reads + cache writes; 0 without usage)."""
    return max((u.prompt_tokens for u in conversation.usage.values()), default=0)


def resolve_context_window(conversation: Conversation, default: int | None = None) -> Resolved:
    """The context window to replay ``conversation`` with when none is given: the log's own, else its model's, else
    ``default`` (the table's default when None). Kept in the conversation's memo (the app asks on every rerun)."""
    fallback = default_context_window() if default is None else int(default)
    return conversation.memoized(("resolved context window", fallback),
                                 lambda: _resolve_window(conversation, fallback))


def _resolve_window(conversation: Conversation, fallback: int) -> Resolved:
    stated = conversation.source.context_window
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > 0:
        field = LOG_WINDOW_FIELDS.get(conversation.format, "context_window")
        return Resolved(stated, f"log:{field}", f"the log states a context window of {stated:,} ({field})")
    name = log_model(conversation)
    match = lookup_model(name) if name else None
    if match is None:
        why = (f"the model {name!r} is not in the model table (as of {table_date()})" if name
               else "the log states no context window and names no model")
        return Resolved(fallback, "default", f"{why}: using the default window of {fallback:,}")
    return _window_of(match, peak_reported_prompt(conversation))


def _window_of(match: ModelMatch, peak: int) -> Resolved:
    info, long_window = match.info, match.info.long_context_window
    source = f"model:{match.given}"
    if match.long_context and long_window:
        return Resolved(long_window, source, f"{match.given} asks for the long-context window of {long_window:,}")
    if long_window and info.context_window < peak <= long_window:
        return Resolved(long_window, source,
                        f"{info.name}'s window is {info.context_window:,}, but the log reports prompts of up to "
                        f"{peak:,} tokens: the run used its {long_window:,}-token variant")
    note = f"{info.name}'s context window is {info.context_window:,} (model table, as of {table_date()})"
    if match.long_context:
        note += f"; the table knows no long-context variant for the {LONG_CONTEXT_SUFFIX} suffix"
    if peak > info.context_window:
        note += f"; the log reports prompts of up to {peak:,} tokens, above it"
    return Resolved(info.context_window, source, note)


def price_presets() -> frozenset[str]:
    """The names of the bundled price presets."""
    from .analysis.costs import price_table

    return frozenset(price_table()["models"])


def resolve_price_model(conversation: Conversation) -> Resolved:
    """The price preset (a name in ``analysis/prices.json``) for ``conversation``: its model's, else the default
    preset of its provider (from the table, else from its format). Kept in the conversation's memo."""
    return conversation.memoized(("resolved price preset",), lambda: _resolve_prices(conversation))


def _resolve_prices(conversation: Conversation) -> Resolved:
    name = log_model(conversation)
    match = lookup_model(name) if name else None
    presets = price_presets()
    if match is not None and match.info.price in presets:
        preset = match.info.price
        same = preset == match.info.name
        return Resolved(preset, f"model:{match.given}",
                        f"priced as {preset}, the model the log names" if same
                        else f"priced as {preset}, the preset for {match.info.name}, the model the log names")
    provider = match.info.provider if match is not None else FORMAT_PROVIDERS.get(conversation.format, "other")
    defaults = model_table()["default_price"]
    if provider not in defaults:
        provider = "other"
    preset = defaults[provider]
    if match is not None:
        why = f"no price preset for {match.info.name}"
    elif name:
        why = f"the model {name!r} is not in the model table (as of {table_date()})"
    else:
        why = "the log names no model"
    whose = f"{provider} models" if provider != "other" else "logs of unknown provider"
    return Resolved(preset, "default", f"{why}: priced as {preset}, the default for {whose}")
