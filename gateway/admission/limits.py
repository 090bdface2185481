"""Per-client and global request limits: the ``Limiter`` seam, Redis (cluster-wide) and memory.

Limits (seed "Safety and operations", docs/tool-contract.md §2.1/§2.3): requests per client per
60 s, semantic-or-hybrid searches per client per 60 s, concurrent requests per client,
concurrent requests in all. A request is admitted only when every limit has room, and
then it is recorded in one atomic step; a rejected request is never recorded.

``RedisLimiter`` (`pwc_mcp_core.cluster.limits`, where the Redis code lives) shares one budget
between every gateway process; when Redis cannot be reached it raises `LimitsUnavailable`
and the gateway fails closed (503 ``limits_unavailable``, ``Retry-After: 1``).

``MemoryLimiter`` gives the same semantics inside one process (embedded mode).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Protocol

from pwc_mcp_core.cluster.admission import (
    AdmissionScript,
    Decision,
    Deferred,
    Lease,
    decision_from_code,
)
from pwc_mcp_core.cluster.errors import LimitsUnavailable
from pwc_mcp_core.cluster.limits import WINDOW_S, LimitSettings

__all__ = [
    "AdmissionScript",
    "Decision",
    "Lease",
    "LimitSettings",
    "Limiter",
    "LimitsUnavailable",
    "MemoryLimiter",
    "decision_from_code",
]


class Limiter(Protocol):
    """What admission needs from a limit store."""

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        """Check and record one request atomically (raises LimitsUnavailable).

        With ``lease=False`` (a method the gateway answers at once) the concurrency
        limits are checked but no slot is taken, so there is nothing to release.
        """

    async def release(self, lease: Lease) -> None:
        """Give back a lease; never raises."""

    def deferred(self, client_hash: str, *, semantic: bool) -> Deferred | None:
        """The admission of one dispatched call as a value a dispatcher can run with its enqueue
        (`pwc_mcp_core.runtime.dispatch.Deferred`), or ``None`` when this store cannot defer."""

    async def ping(self) -> bool:
        """True when the limit store answers (health checks); never raises."""

    async def close(self) -> None:
        """Release connections."""


class MemoryLimiter:
    """The same limits inside one process (embedded mode), under one asyncio lock.

    Expiry is amortized O(1) per request however many identities are tracked (identities
    are cheap to mint with IPv6): leases expire from a heap ordered by expiry, and a
    client's windows are forgotten from an insertion-ordered map of last-request times
    once its newest request is older than the window. Nothing walks every table.
    """

    def __init__(self, limits: LimitSettings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        self._lock = asyncio.Lock()
        self._requests: dict[str, deque[float]] = {}
        self._semantic: dict[str, deque[float]] = {}
        self._client_leases: dict[str, dict[str, float]] = {}
        self._global_leases: dict[str, float] = {}
        self._last_seen: OrderedDict[str, float] = OrderedDict()  # client -> newest request, oldest first
        self._expiries: list[tuple[float, str, str]] = []  # heap of (expiry, lease id, client)
        # Lease ids need only be unique in this process: a counter, not uuid4's urandom syscall per call.
        self._lease_ids = itertools.count()

    @property
    def tracked_identities(self) -> int:
        """Clients whose request windows are still held (for tests and benchmarks)."""
        return len(self._last_seen)

    @staticmethod
    def _trim(window: deque[float], now: float) -> None:
        while window and window[0] <= now - WINDOW_S:
            window.popleft()

    @staticmethod
    def _retry(window: deque[float], now: float) -> int:
        return max(1, min(WINDOW_S, math.ceil(window[0] + WINDOW_S - now))) if window else 1

    def _purge(self, now: float) -> None:
        expiries = self._expiries
        while expiries and expiries[0][0] <= now:
            _, lease_id, client = heapq.heappop(expiries)
            self._drop_lease(lease_id, client)
        seen = self._last_seen
        while seen:
            client, newest = next(iter(seen.items()))
            if newest > now - WINDOW_S:
                break
            del seen[client]
            self._requests.pop(client, None)
            self._semantic.pop(client, None)

    def _drop_lease(self, lease_id: str, client: str) -> None:
        self._global_leases.pop(lease_id, None)
        leases = self._client_leases.get(client)
        if leases is not None:
            leases.pop(lease_id, None)
            if not leases:
                del self._client_leases[client]

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        lim = self._limits
        async with self._lock:
            now = self._clock()
            self._purge(now)
            if len(self._global_leases) >= lim.global_concurrency_limit:
                return Decision(False, "global", 1)
            requests = self._requests.get(client_hash) or deque()
            self._trim(requests, now)
            if len(requests) >= lim.request_limit:
                return Decision(False, "requests", self._retry(requests, now))
            sem = self._semantic.get(client_hash) or deque()
            self._trim(sem, now)
            if semantic and len(sem) >= lim.semantic_limit:
                return Decision(False, "semantic", self._retry(sem, now))
            leases = self._client_leases.get(client_hash, {})
            if len(leases) >= lim.concurrency_limit:
                return Decision(False, "concurrency", 1)
            requests.append(now)
            self._requests[client_hash] = requests
            if semantic:
                sem.append(now)
                self._semantic[client_hash] = sem
            self._last_seen[client_hash] = now
            self._last_seen.move_to_end(client_hash)
            if not lease:
                return Decision(True, "ok", 0)
            lease_id = str(next(self._lease_ids))
            expiry = now + lim.lease_ttl_s
            self._client_leases.setdefault(client_hash, {})[lease_id] = expiry
            self._global_leases[lease_id] = expiry
            heapq.heappush(self._expiries, (expiry, lease_id, client_hash))
            return Decision(True, "ok", 0, Lease(lease_id, client_hash))

    async def release(self, lease: Lease) -> None:
        async with self._lock:
            # Its heap entry stays until its expiry and is then a no-op (bounded by the lease TTL).
            self._drop_lease(lease.lease_id, lease.client_hash)

    def deferred(self, client_hash: str, *, semantic: bool) -> None:
        """Never: an in-process store admits before dispatch."""

    async def ping(self) -> bool:
        """Always reachable."""
        return True

    async def close(self) -> None:
        return None
