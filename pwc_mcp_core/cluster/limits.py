"""The cluster-wide request limits in Redis: `RedisLimiter` (the gateway's ``Limiter`` seam,
`gateway.admission.limits`, also has the in-process ``MemoryLimiter``).

``RedisLimiter`` runs ``admit.lua``/``release.lua`` (``pwc_mcp_core/cluster/scripts``) so any
number of gateway processes on any number of hosts share one budget, using the Redis
server's clock. Concurrency is held as *leases* scored by expiry: a gateway that dies
without releasing leaves leases that lapse after ``lease_ttl_s``. When Redis cannot be
reached it raises `LimitsUnavailable`, so the gateway fails closed without waiting on retries.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.cluster import redis_keys as keys
from pwc_mcp_core.cluster import scripts
from pwc_mcp_core.cluster.admission import (
    AdmissionScript,
    Decision,
    Deferred,
    Lease,
    decision_from_code,
)
from pwc_mcp_core.cluster.errors import LimitsUnavailable, StoreUnavailable
from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, ScriptRunner, int_reply

__all__ = ["WINDOW_S", "LimitSettings", "RedisLimiter"]

WINDOW_S: Final = 60
"""The request and semantic-search windows (seconds)."""


@dataclass(frozen=True)
class LimitSettings:
    """The four limits (counts) and the lease time-to-live (seconds)."""

    request_limit: int = 60
    semantic_limit: int = 10
    concurrency_limit: int = 4
    global_concurrency_limit: int = 128
    lease_ttl_s: float = 40.0


class RedisLimiter:
    """Cluster-wide limits in Redis (one instance per gateway process).

    Args:
        target: the shared Redis, a URL or a Sentinel service (`redis_connect`).
        limits: the four limits and the lease TTL.
    """

    def __init__(self, target: RedisTarget, limits: LimitSettings) -> None:
        # One dedicated pipelined connection; a down or hung Redis gives a fast 503, not a stall
        # (with Sentinel, 5 s more: a command waits out a failover unwritten).
        self._pipe = RedisPipe(target, timeout_s=2.0, connect_timeout_s=1.0)
        self._limits = limits
        self._admit = ScriptRunner(self._pipe, scripts.load("admit"))
        self._release = ScriptRunner(self._pipe, scripts.load("release"))
        # Lease ids only need to be unique: a random per-process prefix and a counter
        # cost less than a uuid4 (a getrandom system call) per request.
        self._lease_prefix = uuid.uuid4().hex[:16]
        self._lease_counter = itertools.count()

    def admission_script(self, client_hash: str, *, semantic: bool) -> AdmissionScript:
        """The admission script's KEYS/ARGV for one request of ``client_hash``, with a fresh lease id."""
        lim = self._limits
        lease_id = f"{self._lease_prefix}{next(self._lease_counter):x}"
        return AdmissionScript(
            [keys.rate_window("requests", client_hash), keys.rate_window("semantic", client_hash),
             keys.concurrency_client(client_hash), keys.concurrency_global()],
            [lim.request_limit, lim.semantic_limit, "1" if semantic else "0", lim.concurrency_limit,
             lim.global_concurrency_limit, int(lim.lease_ttl_s * 1000), lease_id, WINDOW_S * 1000],
            Lease(lease_id, client_hash))

    def deferred(self, client_hash: str, *, semantic: bool) -> Deferred:
        """The call's admission for the Redis dispatcher (``admit_enqueue.lua``)."""
        return Deferred(self.admission_script(client_hash, semantic=semantic))

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        script = self.admission_script(client_hash, semantic=semantic)
        try:
            code = await self._admit(script.keys, [*script.args, "1" if lease else "0"])
        except StoreUnavailable as exc:
            raise LimitsUnavailable("redis unreachable") from exc
        return decision_from_code(int_reply(code), script.lease if lease else None)

    async def release(self, lease: Lease) -> None:
        try:
            await self._release([keys.concurrency_client(lease.client_hash), keys.concurrency_global()],
                                [lease.lease_id])
        except StoreUnavailable:
            pass  # the lease expires on its own after lease_ttl_s

    async def ping(self) -> bool:
        """True when Redis answers (health checks)."""
        try:
            return bool(await self._pipe.execute("PING"))
        except StoreUnavailable:
            return False

    async def close(self) -> None:
        await self._pipe.close()
