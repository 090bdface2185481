"""Caches behind the ``pwc.cache.Cache`` seam, plus the in-process Markdown chunk cache.

* :class:`MemoryCache` — one process (the embedded server): a thread-safe LRU
  with per-entry TTL, bounded by entry count and total bytes, with in-process
  single-flight (N threads asking for one missing key make one loader call).
* the shared cache of the Redis deployment, single-flight across every process that talks
  to the same Redis, is `pwc_mcp_core.cluster.cache.RedisCache`.
* :class:`ChunkCache` — versioned Markdown chunks for ``read_paper``
  (docs/tool-contract.md §4.5: 256 entries, 16 MiB, 3600 s, LRU).

Rules shared by all (docs/tool-contract.md §8): loader errors propagate and are never
cached; a cache failure never makes a call fail.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pwc.cache import Cache

__all__ = ["Chunk", "ChunkCache", "MemoryCache", "TieredCache"]

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
MiB = 1024 * 1024


class _LruStore(Generic[K, V]):
    """Thread-safe LRU map with a TTL per entry and entry-count / total-size bounds.

    ``clock`` is monotonic seconds. An entry larger than ``max_bytes`` is never stored.
    """

    def __init__(self, max_entries: int, max_bytes: int, clock: Callable[[], float]) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("cache bounds must be positive")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._items: OrderedDict[K, tuple[float, int, V]] = OrderedDict()
        self._bytes = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            expires_at, size, value = item
            if expires_at <= self._clock():
                del self._items[key]
                self._bytes -= size
                return None
            self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V, size: int, ttl_s: float) -> None:
        if size > self.max_bytes or ttl_s <= 0:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (self._clock() + ttl_s, size, value)
            self._bytes += size
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, evicted_size, _) = self._items.popitem(last=False)
                self._bytes -= evicted_size

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return self._bytes


class _Flight:
    """One in-progress load that other threads may wait for."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: bytes | None = None
        self.error: BaseException | None = None


class MemoryCache:
    """In-process ``pwc.cache.Cache``: LRU + TTL + single-flight across threads.

    Args:
        max_entries: most entries kept (LRU eviction beyond it).
        max_bytes: most value bytes kept in total; a larger single value is not stored.
        wait_s: how long a thread waits for another thread's load of the same key
            before loading itself (never hang on a stuck loader).
        clock: monotonic seconds (tests inject a fake clock).

    A waiter receives the leader's value, or the leader's exception (errors are
    shared with the threads already waiting but never stored).
    """

    def __init__(self, max_entries: int = 1024, max_bytes: int = 64 * MiB, *,
                 wait_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._store: _LruStore[str, bytes] = _LruStore(max_entries, max_bytes, clock)
        self._wait_s = wait_s
        self._flights: dict[str, _Flight] = {}
        self._flights_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._store)

    @property
    def total_bytes(self) -> int:
        """Bytes of cached values currently held."""
        return self._store.total_bytes

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        """Return the cached bytes for ``key`` or load, store (``ttl_s`` seconds) and return them."""
        value = self._store.get(key)
        if value is not None:
            return value
        with self._flights_lock:
            value = self._store.get(key)  # a flight may have finished meanwhile
            if value is not None:
                return value
            flight = self._flights.get(key)
            leader = flight is None
            if leader:
                flight = self._flights[key] = _Flight()
        assert flight is not None
        if not leader:
            if flight.done.wait(self._wait_s):
                if flight.error is not None:
                    raise flight.error
                assert flight.value is not None
                return flight.value
            return loader()  # the leader is stuck: do not wait forever
        try:
            value = loader()
        except BaseException as exc:
            flight.error = exc
            raise
        else:
            flight.value = value
            self._store.put(key, value, len(value), ttl_s)
            return value
        finally:
            with self._flights_lock:
                self._flights.pop(key, None)
            flight.done.set()


class TieredCache:
    """A near in-process cache in front of a shared one (``pwc.cache.Cache``).

    A hot key is answered from memory for at most ``near_ttl_s`` seconds, so a
    worker serving the same catalog page many times a second does not pay a Redis
    round trip each time; past that, or on a near miss, the shared cache decides
    (and keeps the seed's TTLs and its cluster-wide single-flight). The cost is that
    one process may serve a value up to ``near_ttl_s`` older than the shared copy.

    Args:
        near: the in-process cache (e.g. ``MemoryCache()``).
        far: the shared cache (e.g. ``cluster.cache.RedisCache``).
        near_ttl_s: the longest a value lives in ``near`` (capped by the entry's own TTL).
    """

    def __init__(self, near: MemoryCache, far: Cache, *, near_ttl_s: float = 5.0) -> None:
        self._near = near
        self._far = far
        self._near_ttl_s = near_ttl_s

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        return self._near.fetch(key, min(ttl_s, self._near_ttl_s), lambda: self._far.fetch(key, ttl_s, loader))


@dataclass(frozen=True)
class Chunk:
    """One Markdown chunk as read from the catalog (docs/tool-contract.md §4.2).

    ``markdown`` is the decoded text; ``next_offset`` the byte offset of the next
    chunk (None when this is the last one); ``truncated`` whether more remains;
    ``total_bytes`` the whole document's UTF-8 size when the catalog states it; ``version`` the
    whole content version it was read at (a format-2 cursor carries only its prefix).
    """

    markdown: str
    truncated: bool
    next_offset: int | None
    total_bytes: int | None = None
    version: str | None = None


class ChunkCache:
    """Versioned Markdown chunks keyed by (paper, content version, offset, limit).

    docs/tool-contract.md §4.5: LRU beyond ``max_entries`` (256) or ``max_bytes`` (16 MiB
    of UTF-8 Markdown); entries live ``ttl_s`` (3600 s); a chunk larger than
    ``max_bytes`` is not stored. Only reads that pin a content version use it,
    so an entry can never be stale.
    """

    def __init__(self, max_entries: int = 256, max_bytes: int = 16 * MiB, *, ttl_s: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._store: _LruStore[tuple[str, str, int, int], Chunk] = _LruStore(max_entries, max_bytes, clock)
        self._ttl_s = ttl_s

    def __len__(self) -> int:
        return len(self._store)

    @property
    def total_bytes(self) -> int:
        """UTF-8 bytes of Markdown currently held."""
        return self._store.total_bytes

    def get(self, paper: str, version: str, offset: int, limit: int) -> Chunk | None:
        """The cached chunk, or None."""
        return self._store.get((paper, version, offset, limit))

    def put(self, paper: str, version: str, offset: int, limit: int, chunk: Chunk) -> None:
        """Store ``chunk`` (its size is the UTF-8 length of its Markdown)."""
        size = len(chunk.markdown.encode("utf-8"))
        self._store.put((paper, version, offset, limit), chunk, size, self._ttl_s)
