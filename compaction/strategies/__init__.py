"""Compaction strategies, one module per framework family, all registered in :mod:`.base`'s registry."""

from __future__ import annotations

import importlib
import pkgutil

from .base import CallOutcome, Param, RunContext, Runner, StrategyInfo, get_strategy, register, registry


def load_all() -> None:
    """Import every strategy module of this package (each registers its strategies; idempotent)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base" and not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


__all__ = [
    "CallOutcome", "Param", "RunContext", "Runner", "StrategyInfo", "get_strategy", "load_all", "register", "registry",
]
