"""Per-client and global request limits: the ``Limiter`` seam, Redis (cluster-wide) and memory.

Limits (seed "Safety and operations", pwc-mcp.md §2.1/§2.3): requests per client per
60 s, semantic-or-hybrid searches per client per 60 s, concurrent requests per client,
concurrent requests in all. A request is admitted only when every limit has room, and
then it is recorded in one atomic step; a rejected request is never recorded.

``RedisLimiter`` runs ``admit.lua``/``release.lua`` (``pwc_mcp_core/scripts``) so any
number of gateway processes on any number of hosts share one budget, using the Redis
server's clock. Concurrency is held as *leases* scored by expiry: a gateway that dies
without releasing leaves leases that lapse after ``lease_ttl_s``. When Redis cannot be
reached the limiter raises :class:`LimitsUnavailable` and the gateway fails closed
(503 ``limits_unavailable``, ``Retry-After: 1``) without waiting on retries.

``MemoryLimiter`` gives the same semantics inside one process (embedded mode).
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from pwc_mcp_core import keys, scripts
from pwc_mcp_core.script_batch import ScriptBatcher

__all__ = ["Decision", "Lease", "Limiter", "LimitSettings", "LimitsUnavailable", "MemoryLimiter",
           "RedisLimiter"]

WINDOW_S: Final = 60


class LimitsUnavailable(Exception):
    """The shared limit store cannot be reached; the request must be refused (fail closed)."""


@dataclass(frozen=True)
class LimitSettings:
    """The four limits (counts) and the lease time-to-live (seconds)."""

    request_limit: int = 60
    semantic_limit: int = 10
    concurrency_limit: int = 4
    global_concurrency_limit: int = 128
    lease_ttl_s: float = 40.0


@dataclass(frozen=True)
class Lease:
    """One admitted request's hold on the concurrency budget."""

    lease_id: str
    client_hash: str


@dataclass(frozen=True)
class Decision:
    """The outcome of :meth:`Limiter.acquire`.

    ``kind`` is ``"ok"`` or the limit that refused: ``"global"`` (answer 503
    ``server_saturated``), ``"requests"``, ``"semantic"`` or ``"concurrency"`` (429).
    ``retry_after_s`` is whole seconds (1..60), 0 when admitted.
    """

    allowed: bool
    kind: str
    retry_after_s: int
    lease: Lease | None = None


class Limiter(Protocol):
    """What admission needs from a limit store."""

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        """Check and record one request atomically (raises LimitsUnavailable).

        With ``lease=False`` (a method the gateway answers at once) the concurrency
        limits are checked but no slot is taken, so there is nothing to release.
        """

    async def release(self, lease: Lease) -> None:
        """Give back a lease; never raises."""

    async def close(self) -> None:
        """Release connections."""


class RedisLimiter:
    """Cluster-wide limits in Redis (one instance per gateway process).

    Args:
        redis_url: ``redis://`` or ``unix://`` URL.
        limits: the four limits and the lease TTL.
    """

    def __init__(self, redis_url: str, limits: LimitSettings) -> None:
        # No retries and short timeouts: a down Redis must give a fast 503, not a stall.
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=1.0, socket_timeout=2.0,
                                     retry=Retry(NoBackoff(), 0))
        self._limits = limits
        # Concurrent admissions share one pipelined round trip (see ScriptBatcher).
        self._admit = ScriptBatcher(self._redis, scripts.load("admit"))
        self._release = ScriptBatcher(self._redis, scripts.load("release"))

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        lim = self._limits
        lease_id = uuid.uuid4().hex
        try:
            allowed, kind, retry = await self._admit(
                [keys.rate_window("requests", client_hash), keys.rate_window("semantic", client_hash),
                 keys.concurrency_client(client_hash), keys.concurrency_global()],
                [lim.request_limit, lim.semantic_limit, "1" if semantic else "0", lim.concurrency_limit,
                 lim.global_concurrency_limit, int(lim.lease_ttl_s * 1000), lease_id, WINDOW_S * 1000,
                 "1" if lease else "0"],
            )
        except (RedisError, OSError) as exc:
            raise LimitsUnavailable("redis unreachable") from exc
        kind_text = kind.decode("ascii") if isinstance(kind, bytes) else str(kind)
        if int(allowed) == 1:
            return Decision(True, "ok", 0, Lease(lease_id, client_hash) if lease else None)
        return Decision(False, kind_text, int(retry))

    async def release(self, lease: Lease) -> None:
        try:
            await self._release([keys.concurrency_client(lease.client_hash), keys.concurrency_global()],
                                [lease.lease_id])
        except (RedisError, OSError):
            pass  # the lease expires on its own after lease_ttl_s

    async def ping(self) -> bool:
        """True when Redis answers (health checks)."""
        try:
            return bool(await self._redis.ping())
        except (RedisError, OSError):
            return False

    async def close(self) -> None:
        await self._redis.aclose()


class MemoryLimiter:
    """The same limits inside one process (embedded mode), under one asyncio lock."""

    def __init__(self, limits: LimitSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._lock = asyncio.Lock()
        self._requests: dict[str, deque[float]] = {}
        self._semantic: dict[str, deque[float]] = {}
        self._client_leases: dict[str, dict[str, float]] = {}
        self._global_leases: dict[str, float] = {}

    @staticmethod
    def _trim(window: deque[float], now: float) -> None:
        while window and window[0] <= now - WINDOW_S:
            window.popleft()

    @staticmethod
    def _retry(window: deque[float], now: float) -> int:
        return max(1, min(WINDOW_S, math.ceil(window[0] + WINDOW_S - now))) if window else 1

    def _purge(self, now: float) -> None:
        for lease_id in [k for k, exp in self._global_leases.items() if exp <= now]:
            del self._global_leases[lease_id]
        for client in list(self._client_leases):
            leases = self._client_leases[client]
            for lease_id in [k for k, exp in leases.items() if exp <= now]:
                del leases[lease_id]
            if not leases:
                del self._client_leases[client]
        if len(self._requests) > 10_000:  # bound tracked identities: forget idle ones
            for table in (self._requests, self._semantic):
                for client in list(table):
                    self._trim(table[client], now)
                    if not table[client]:
                        del table[client]

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        lim = self._limits
        async with self._lock:
            now = self._clock()
            self._purge(now)
            if len(self._global_leases) >= lim.global_concurrency_limit:
                return Decision(False, "global", 1)
            requests = self._requests.setdefault(client_hash, deque())
            self._trim(requests, now)
            if len(requests) >= lim.request_limit:
                return Decision(False, "requests", self._retry(requests, now))
            sem = self._semantic.setdefault(client_hash, deque())
            self._trim(sem, now)
            if semantic and len(sem) >= lim.semantic_limit:
                return Decision(False, "semantic", self._retry(sem, now))
            leases = self._client_leases.setdefault(client_hash, {})
            if len(leases) >= lim.concurrency_limit:
                return Decision(False, "concurrency", 1)
            requests.append(now)
            if semantic:
                sem.append(now)
            if not lease:
                return Decision(True, "ok", 0)
            lease_id = uuid.uuid4().hex
            leases[lease_id] = now + lim.lease_ttl_s
            self._global_leases[lease_id] = now + lim.lease_ttl_s
            return Decision(True, "ok", 0, Lease(lease_id, client_hash))

    async def release(self, lease: Lease) -> None:
        async with self._lock:
            self._global_leases.pop(lease.lease_id, None)
            self._client_leases.get(lease.client_hash, {}).pop(lease.lease_id, None)

    async def close(self) -> None:
        return None
