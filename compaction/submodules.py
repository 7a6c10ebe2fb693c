"""Importing every module of a plugin package (strategy families, log formats) once, so each registers itself."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

_imported: set[str] = set()


def import_submodules(package: str, path: Iterable[str]) -> None:
    """Import every public module of ``package`` (found on ``path``, its ``__path__``) except ``base``.

    Done once per package: registries ask before every lookup, and listing a package's modules costs more than
    replaying a short log."""
    if package in _imported:
        return
    for module in pkgutil.iter_modules(list(path)):
        if module.name != "base" and not module.name.startswith("_"):
            importlib.import_module(f"{package}.{module.name}")
    _imported.add(package)
