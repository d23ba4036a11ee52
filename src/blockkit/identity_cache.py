"""Values worked out once per long-lived object (a part of the loaded schema), found by identity.

The schema's nodes and lists are dicts and lists: unhashable, and comparing them by value would
cost what the cache saves. An entry holds its object, so that the object's ``id`` stays its own
while the entry lives; past ``size_max`` entries (throwaway schemas, in tests) the cache starts over.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Generic, TypeVar

V = TypeVar("V")


class IdentityCache(Generic[V]):
    __slots__ = ("_entries", "_size_max", "_lock")

    def __init__(self, size_max: int) -> None:
        self._entries: dict[int, tuple[Any, V]] = {}
        self._size_max = size_max
        self._lock = threading.Lock()

    def get(self, owner: Any, make: Callable[[Any], V]) -> V:
        """``make(owner)``, worked out on the first call for this very object."""
        entry = self._entries.get(id(owner))
        if entry is not None and entry[0] is owner:
            return entry[1]
        value = make(owner)
        with self._lock:
            if len(self._entries) >= self._size_max:
                self._entries.clear()
            self._entries[id(owner)] = (owner, value)
        return value
