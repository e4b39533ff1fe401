"""A small bounded memo the planner keeps between plans (remembered answers, worked-out designs)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedMemo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """A dict that forgets everything once it holds `size` entries (a few plans' worth: no eviction order to keep).
    `cache_clear` empties it, as functools' caches are emptied for the benchmarks' cold figures."""

    def __init__(self, size: int) -> None:
        self._items: dict[K, V] = {}
        self._size = size

    def get(self, key: K) -> V | None:
        return self._items.get(key)

    def keep(self, key: K, value: V) -> None:
        if len(self._items) >= self._size:
            self._items.clear()
        self._items[key] = value

    def cache_clear(self) -> None:
        self._items.clear()
