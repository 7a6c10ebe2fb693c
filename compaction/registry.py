"""One small registry type for everything the project looks up by name: strategies, log formats, counters and
summarizers. Each kind has one :class:`Registry`; the modules that define the items register them, and a registry
whose items live in a plugin package imports that package's modules the first time it is asked."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from typing import Generic
from typing import TypeVar

from .errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named items of one ``kind``, in registration order (or in the order ``order`` gives)."""

    def __init__(self, kind: str, load: Callable[[], None] | None = None,
                 order: Callable[[str], tuple[float, str]] | None = None, plural: str | None = None) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self._load = load
        self._order = order
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name`` (names are unique, stable ids)."""
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self._items[name] = item
        return item

    def all(self) -> dict[str, T]:
        """Every registered item by name (plugin modules imported first)."""
        if self._load is not None:
            self._load()
        if self._order is None:
            return dict(self._items)
        return {name: self._items[name] for name in sorted(self._items, key=self._order)}

    def get(self, name: str) -> T:
        """The item registered as ``name``; a :class:`ConfigError` lists the known names when there is none."""
        if self._load is not None:
            self._load()
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items))
            raise ConfigError(f"unknown {self.kind} {name!r}; known {self.plural}: {known}") from None

    def __contains__(self, name: object) -> bool:
        if self._load is not None:
            self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.all())

    def __len__(self) -> int:
        return len(self.all())
