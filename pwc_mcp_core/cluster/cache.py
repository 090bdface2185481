"""The shared cache of the Redis deployment: `RedisCache`, a ``pwc.cache.Cache`` single-flight
across every process that talks to the same Redis (the in-process caches are in
`pwc_mcp_core.runtime.caches`).

Loader errors propagate and are never cached; a Redis failure never makes a call fail
(docs/tool-contract.md §8).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable

import redis
from redis.exceptions import LockError
from redis.lock import Lock

from pwc_mcp_core.cluster import redis_backoff, redis_keys

__all__ = ["RedisCache"]

logger = logging.getLogger(__name__)


class RedisCache:
    """Shared ``pwc.cache.Cache`` in Redis, single-flight across processes.

    Uses a SYNC ``redis.Redis`` client (it runs in worker threads). ``fetch``:

    1. ``GET redis_keys.cache_entry(d)`` (``d`` = sha256 of the transport's key); a hit returns.
    2. Miss: take redis-py's ``redis.lock.Lock`` on ``redis_keys.cache_lock(d)`` without
       blocking (``SET NX PX lock_ttl_s`` with a random token). The winner reads the entry
       once more (a leader may have stored it and unlocked between our GET and our SET),
       then runs the loader, stores the value with ``SET PX ttl_s`` and releases the lock
       (compare-and-delete: an expired lock taken over by someone else is never deleted).
       While the loader runs, a keeper thread re-arms the lock to ``lock_ttl_s`` every
       ``renew_s`` (``Lock.reacquire``), so the lock TTL can be short: if the holder dies
       (a worker killed mid-call), its lock frees within ``lock_ttl_s`` and the call,
       delivered again to another worker, does not wait out the loader's whole timeout.
    3. Losers poll ``GET`` with a short bounded backoff (``poll_s`` doubling up
       to ``max_poll_s``). Polling was chosen over pub/sub: no subscriber
       connection per waiter, and a waiter cannot miss a wake-up. When the lock
       disappears without a value (the leader's loader failed or its process
       died; errors are never cached) a waiter competes for the lock again. After
       ``wait_s`` a waiter calls the loader itself: a wait never hangs.

    Any ``redis.RedisError`` degrades to calling the loader directly with a
    content-free warning: the cache never makes a call fail.
    """

    def __init__(self, redis_client: redis.Redis, *, lock_ttl_s: float = redis_keys.CACHE_LOCK_TTL_S,
                 renew_s: float = redis_keys.CACHE_LOCK_RENEW_S, wait_s: float = redis_keys.CACHE_WAIT_S,
                 poll_s: float = 0.01, max_poll_s: float = 0.1) -> None:
        self._redis = redis_client
        self._lock_ttl_s = max(0.001, float(lock_ttl_s))
        self._wait_s = wait_s
        self._backoff = redis_backoff.backoff(base_s=poll_s, cap_s=max_poll_s)
        self._keeper = _LockKeeper(every_s=renew_s)

    @staticmethod
    def _digest(key: str) -> str:
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        """Return the shared cached bytes for ``key`` or load them once cluster-wide."""
        digest = self._digest(key)
        entry, lock_key = redis_keys.cache_entry(digest), redis_keys.cache_lock(digest)
        try:
            return self._fetch(entry, lock_key, ttl_s, loader)
        except _Degraded:
            return loader()

    def _get(self, entry: str) -> bytes | None:
        try:
            cached: object = self._redis.get(entry)
        except redis.RedisError as exc:
            logger.warning("shared cache unavailable, loading directly type=%s", type(exc).__name__)
            raise _Degraded from exc
        if isinstance(cached, str):  # only if the client was built with decode_responses=True
            return cached.encode("utf-8")
        return bytes(cached) if isinstance(cached, bytes | bytearray | memoryview) else None

    def _try_lock(self, lock_key: str) -> Lock | None:
        # thread_local=False: the keeper thread re-arms the lock with the same token.
        lock = Lock(self._redis, lock_key, timeout=self._lock_ttl_s, blocking=False, thread_local=False)
        try:
            return lock if lock.acquire(blocking=False) else None
        except redis.RedisError as exc:
            logger.warning("shared cache unavailable, loading directly type=%s", type(exc).__name__)
            raise _Degraded from exc

    def _fetch(self, entry: str, lock_key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        deadline = time.monotonic() + self._wait_s
        polls = 0
        while True:
            cached = self._get(entry)
            if cached is not None:
                return cached
            lock = self._try_lock(lock_key)
            if lock is not None:
                # A leader may have stored the entry and unlocked between our GET and our
                # SET NX: read once more before loading, or we would load it a second time.
                try:
                    stored = self._get(entry)
                except _Degraded:
                    _release(lock)
                    raise
                if stored is not None:
                    _release(lock)
                    return stored
                return self._lead(entry, lock, ttl_s, loader)
            if time.monotonic() >= deadline:
                logger.warning("cache single-flight wait expired; loading directly")
                return loader()
            time.sleep(min(self._backoff.compute(polls), max(0.0, deadline - time.monotonic())))
            polls += 1

    def _lead(self, entry: str, lock: Lock, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        self._keeper.hold(lock)
        try:
            value = loader()
        except BaseException:
            self._keeper.drop(lock)
            _release(lock)
            raise
        self._keeper.drop(lock)
        ttl_ms = int(ttl_s * 1000)
        try:
            if ttl_ms > 0:
                self._redis.set(entry, value, px=ttl_ms)
        except redis.RedisError as exc:
            logger.warning("shared cache store failed type=%s", type(exc).__name__)
        _release(lock)
        return value


def _release(lock: Lock) -> None:
    """Delete the lock if it is still ours; an expired or taken-over lock is left alone."""
    try:
        lock.release()
    except LockError:  # expired (and maybe taken by another process): nothing of ours to free
        pass
    except redis.RedisError as exc:  # the lock TTL frees it anyway
        logger.warning("shared cache unlock failed type=%s", type(exc).__name__)


class _LockKeeper:
    """Re-arms the single-flight locks this process holds while their loaders run.

    One daemon thread per cache, started on the first lock and idle while none is held.
    Every ``every_s`` it resets each held lock's TTL to the lock's own timeout
    (``Lock.reacquire``: only while the token is still ours). A Redis error or a lost
    lock only costs a renewal: at worst the lock expires and another process loads the
    same key too.
    """

    def __init__(self, *, every_s: float) -> None:
        self._every_s = every_s
        self._held: dict[int, Lock] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def hold(self, lock: Lock) -> None:
        """Keep ``lock`` alive until :meth:`drop`."""
        with self._changed:
            self._held[id(lock)] = lock
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="pwc-cache-lock-keeper", daemon=True)
                self._thread.start()
            self._changed.notify()

    def drop(self, lock: Lock) -> None:
        """Stop renewing ``lock`` (its holder releases or abandons it)."""
        with self._changed:
            self._held.pop(id(lock), None)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._held:
                    self._changed.wait()
            time.sleep(self._every_s)
            with self._changed:
                held = list(self._held.values())
            for lock in held:
                try:
                    lock.reacquire()
                except LockError:  # expired and maybe taken over: not ours to keep
                    pass
                except redis.RedisError as exc:
                    logger.warning("cache lock renewal failed type=%s", type(exc).__name__)


class _Degraded(Exception):
    """Redis failed before the loader ran: the caller loads directly."""
