"""Serialised catalogue objects kept between requests, dropped whenever the store changes.

A page of models is mostly the same few thousand nested objects every time: building
them is most of a request's work. The cache keeps each model's JSON bytes under a key
naming everything the bytes depend on (id, browsing level, moderator view, file
filter), for as long as the database is unchanged.

"Unchanged" is asked of SQLite's shared WAL-index through :class:`~blockkit.emulator.store.changes.ChangeWatch`:
any commit (this process's request threads, the CLI minting a token, another process)
changes it, and an unchanged one is a memory read, not a statement. Every request
calls :meth:`FragmentCache.sync` before it reads: a commit since the last look clears
the cache, so no request that starts after a commit is served bytes built before it.
A build that began before the clear is not stored (the generation moved on).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

from blockkit.emulator.store.changes import ChangeWatch

if TYPE_CHECKING:
    from blockkit.emulator.store import Store

# Cleared whole when full: a model is about 3 KB, a page of 100 about 300 KB.
MAX_BYTES = 192 * 1024 * 1024


class FragmentCache:
    def __init__(self, path: str) -> None:
        self.watch = ChangeWatch(path)
        self._lock = threading.Lock()
        self._data: dict[Any, bytes] = {}
        self._bytes = 0
        self._data_version: int | None = None
        self.generation = 0

    def sync(self) -> int:
        """Clear the cache if the database changed since the last call; return the generation to put under."""
        version = self.watch.version()
        if version == self._data_version:
            return self.generation
        with self._lock:
            if version != self._data_version:
                self._data.clear()
                self._bytes = 0
                self._data_version = version
                self.generation += 1
            return self.generation

    def get(self, key: Any) -> bytes | None:
        return self._data.get(key)

    def put(self, key: Any, value: bytes, generation: int) -> None:
        with self._lock:
            if generation != self.generation:
                return  # built from data older than the last clear
            if self._bytes + len(value) > MAX_BYTES:
                self._data.clear()
                self._bytes = 0
            previous = self._data.get(key)
            self._bytes += len(value) - (len(previous) if previous is not None else 0)
            self._data[key] = value

    def __len__(self) -> int:
        return len(self._data)


_caches: weakref.WeakKeyDictionary[Store, FragmentCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def cache_for(store: Store) -> tuple[FragmentCache, int]:
    """The store's cache (one per store), synced, and the generation to put under.

    Call it before opening the read transaction the fragments are built in.
    """
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            cache = _caches[store] = FragmentCache(str(store.path))
    return cache, cache.sync()
