"""Setups: a strategy with its parameters, policy and counter — what the app compares, sweeps vary and links share.

A setup serializes to a small JSON object; a list of them round-trips through JSON files (import/export) and
through one URL query parameter (so a link reproduces the view). Reading is strict: unknown strategies, parameters
or malformed values give a ``ValueError`` naming the setup and the field.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .conversation import Conversation
from .replay import Replay, replay
from .strategies import get_strategy

POLICY_KEYS = ("context_window", "compact_at", "compact_to")


@dataclass(frozen=True)
class Setup:
    """A strategy with its parameters, policy and counter, under a display ``label``."""

    strategy: str
    params: Mapping[str, Any] = field(default_factory=dict)
    context_window: int = 200_000
    compact_at: float = 0.7
    compact_to: float = 0.4
    counter: str = "approx"
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.strategy

    def policy(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "compact_at": self.compact_at, "compact_to": self.compact_to}

    def with_values(self, values: Mapping[str, Any]) -> Setup:
        """A copy with policy keys and/or strategy parameters changed."""
        policy = {k: values[k] for k in POLICY_KEYS if k in values}
        params = {**self.params, **{k: v for k, v in values.items() if k not in POLICY_KEYS}}
        return replace(self, params=params, **policy)

    def resolved_params(self) -> dict[str, Any]:
        """Defaults plus this setup's overrides, coerced (``ValueError`` for unknown names or bad values)."""
        return get_strategy(self.strategy).resolve_params(self.params)

    def run(self, conv: Conversation) -> Replay:
        """Replay ``conv`` under this setup."""
        return replay(conv, self.strategy, self.params, counter=self.counter, **self.policy())

    def to_json(self) -> dict[str, Any]:
        """Only parameters that differ from the strategy's defaults are written."""
        defaults = get_strategy(self.strategy).defaults()
        params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params.items()
                  if not callable(v) and defaults.get(k, object()) != v}
        out: dict[str, Any] = {"strategy": self.strategy, **self.policy(), "counter": self.counter}
        if params:
            out["params"] = params
        if self.label:
            out["label"] = self.label
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "setup") -> Setup:
        """Read one setup, validating every field."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{where}: expected an object, got {type(data).__name__}")
        strategy = data.get("strategy")
        if not isinstance(strategy, str):
            raise ValueError(f"{where}: field 'strategy' must be a strategy name")
        try:
            info = get_strategy(strategy)
            params = data.get("params") or {}
            if not isinstance(params, Mapping):
                raise ValueError("field 'params' must be an object")
            resolved = info.resolve_params(params)
            kept = {k: resolved[k] for k in params}
            window = int(data.get("context_window", 200_000))
            compact_at = float(data.get("compact_at", 0.7))
            compact_to = float(data.get("compact_to", 0.4))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        counter = data.get("counter", "approx")
        label = data.get("label", "")
        if not isinstance(counter, str) or not isinstance(label, str):
            raise ValueError(f"{where}: fields 'counter' and 'label' must be text")
        return cls(strategy, kept, window, compact_at, compact_to, counter, label)


def setups_to_json(setups: Sequence[Setup]) -> str:
    """A JSON document of setups (for export)."""
    return json.dumps({"setups": [s.to_json() for s in setups]}, ensure_ascii=False, indent=1)


def setups_from_json(text: str | bytes) -> list[Setup]:
    """Setups from an exported JSON document (or a bare list); ``ValueError`` says what is wrong and where."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not a JSON document of setups: {exc}") from None
    items = data.get("setups") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise ValueError("expected {\"setups\": [...]} with at least one setup")
    return [Setup.from_json(item, f"setup {i + 1}") for i, item in enumerate(items)]


def encode_for_url(setups: Sequence[Setup]) -> str:
    """Setups as one compact URL-safe token (deflated JSON, base64url)."""
    raw = json.dumps([s.to_json() for s in setups], separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_from_url(token: str) -> list[Setup]:
    """The inverse of :func:`encode_for_url`; ``ValueError`` for a damaged link."""
    try:
        raw = zlib.decompress(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)), bufsize=1 << 16)
        if len(raw) > 1 << 20:
            raise ValueError("too large")
        items = json.loads(raw)
    except (ValueError, zlib.error, json.JSONDecodeError) as exc:
        raise ValueError(f"the link's setups could not be read ({exc})") from None
    if not isinstance(items, list):
        raise ValueError("the link's setups could not be read (expected a list)")
    return [Setup.from_json(item, f"setup {i + 1}") for i, item in enumerate(items)]
