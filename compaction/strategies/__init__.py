"""Compaction strategies, one module per framework family, all registered in :mod:`.base`'s registry."""

from __future__ import annotations

from ..submodules import import_submodules
from .base import CallOutcome
from .base import Param
from .base import RunContext
from .base import Runner
from .base import StrategyInfo
from .base import get_strategy
from .base import register
from .base import registry


def load_all() -> None:
    """Import every strategy module of this package (each registers its strategies; idempotent)."""
    import_submodules(__name__, __path__)


__all__ = [
    "CallOutcome", "Param", "RunContext", "Runner", "StrategyInfo", "get_strategy", "load_all", "register", "registry",
]
