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

# Cleared whole when full: a model is about 3 KB, a page of 100 about 300 KB. Keys count too
# (security review 2, S07: a padded query made a 60 KB key for a 26-byte page), with an
# allowance per entry for the dict and the objects; a key longer than MAX_KEY_BYTES (a query
# padded with made-up parameters) is not kept at all, so such requests cannot crowd out the rest.
MAX_BYTES = 192 * 1024 * 1024
MAX_KEY_BYTES = 4096
ENTRY_OVERHEAD = 256


def key_bytes(key: Any) -> int:
    """About how many bytes a cache key holds: its strings and bytes, nested tuples included."""
    if isinstance(key, (bytes, bytearray, str)):
        return len(key)
    if isinstance(key, tuple):
        return sum(key_bytes(part) for part in key) + 8 * len(key)
    return 8


class FragmentCache:
    def __init__(self, path: str) -> None:
        self.watch = ChangeWatch(path)
        self._lock = threading.Lock()
        self._data: dict[Any, bytes] = {}
        self._sizes: dict[Any, int] = {}
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
                self._sizes.clear()
                self._bytes = 0
                self._data_version = version
                self.generation += 1
            return self.generation

    def get(self, key: Any) -> bytes | None:
        return self._data.get(key)

    def put(self, key: Any, value: bytes, generation: int) -> None:
        held = key_bytes(key)
        if held > MAX_KEY_BYTES:
            return
        size = len(value) + held + ENTRY_OVERHEAD
        with self._lock:
            if generation != self.generation:
                return  # built from data older than the last clear
            if self._bytes + size > MAX_BYTES:
                self._data.clear()
                self._sizes.clear()
                self._bytes = 0
            self._bytes += size - self._sizes.get(key, 0)
            self._data[key] = value
            self._sizes[key] = size

    @property
    def bytes_held(self) -> int:
        """What the entries hold, keys included (the tests read it)."""
        return self._bytes

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
