"""Send tool calls to the worker pool over Redis and wait for their replies.

One :class:`RedisExecutor` per gateway process. Each process owns a reply
list (``redis_keys.reply_list(gateway_id)``) read by a single background task that
resolves the waiting request's future by request id, so a thousand waiting
calls cost one blocking Redis connection, not a thousand. Wire format:
:mod:`pwc_mcp_core.cluster.queue`.

Failure contract (what the MCP layer turns into JSON-RPC errors / HTTP 503):

* no live worker, or Redis unreachable → :class:`ExecutorUnavailable`, fast;
* the backlog is full → :class:`ExecutorUnavailable` (backpressure);
* no reply before ``call.deadline`` → :class:`ExecutorTimeout`;
* a reply over ``max_response_bytes`` → :class:`ResponseTooLarge`;
* the call's Stream entry vanished without a reply (Redis lost data: ``FLUSHALL``, a
  restart without persistence, a failover to a lagging replica) → queued again, up to
  ``_MAX_REQUEUES`` times (every tool is read-only and idempotent), then
  :class:`ExecutorUnavailable` ("lost by the queue; retry"). Noticed within about
  ``2 × _ENTRY_CHECK_S`` (ARCHITECTURE.md "Delivery guarantee").

Liveness is judged by Redis's clock, widened after a Redis stall this process saw
(``pwc_mcp_core.cluster.liveness``), so a Redis pause does not make every worker look dead;
while Redis is unreachable the count keeps its last judgement (``redis_ok`` is False).

The body a worker returns is forwarded as bytes; it is never parsed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from redis.asyncio import Redis
from redis.exceptions import RedisError

from pwc_mcp_core.cluster import queue, redis_connect, redis_keys
from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.cluster.liveness import STALL_S, StallWatch
from pwc_mcp_core.cluster.redis_backoff import REDIS_BACKOFF
from pwc_mcp_core.cluster.redis_pipe import RedisPipe
from pwc_mcp_core.errors import ExecutorTimeout, ExecutorUnavailable, ResponseTooLarge

from gateway import metrics
from gateway.background import stop_tasks
from gateway.dispatch_ticket import DispatchTicket
from gateway.limits import decision_from_code

__all__ = ["RedisExecutor"]

logger = logging.getLogger(__name__)

_LIVENESS_REFRESH_S = 1.0
_REPLY_WAIT_S = 1
# How often waiting calls check that their Stream entry still exists; an entry missing at
# two checks in a row (so a reply pushed just before the XDEL is not mistaken) is lost.
_ENTRY_CHECK_S = 1.0
_MAX_REQUEUES = 2


@dataclass
class _InFlight:
    """A call waiting for its reply: what is needed to queue it again if Redis loses it."""

    future: asyncio.Future[bytes]
    call_json: str
    lease: tuple[str, str] | None
    redis_deadline: float | None
    entry_id: str | None = None
    misses: int = 0
    requeues: int = 0
    lost: list[str] = field(default_factory=list)


class RedisExecutor:
    """An executor (``async (Call) -> bytes``) backed by the Redis Stream and the worker pool.

    Args:
        target: the shared Redis, a URL or a Sentinel service (`redis_connect`).
        max_backlog: calls that may wait in the Stream before new ones are refused.
        max_response_bytes: largest reply body forwarded (2 MiB, seed "Safety and operations").
        observe: optional hook ``(seconds from enqueue to reply) -> None`` for metrics.

    The endpoint passes each call's `DispatchTicket` as the executor's ``admission``
    argument. A deferred ticket is admitted against the limits and queued in one script;
    ``runs_deferred_admission`` tells the endpoint it may defer.
    """

    runs_deferred_admission = True

    def __init__(
        self,
        target: RedisTarget,
        *,
        max_backlog: int = 1024,
        max_response_bytes: int = 2 * 1024 * 1024,
        observe: Callable[[float], None] | None = None,
    ) -> None:
        # Liveness and backlog probes (once a second) use a plain client; the per-call
        # enqueue and the reply wait use dedicated pipelined connections (RedisPipe).
        self._redis = redis_connect.async_client(target, socket_timeout=5, connect_timeout=2, health_check_interval=10)
        self._pipe = RedisPipe(target, timeout_s=5.0, connect_timeout_s=2.0)
        self._reply_pipe = RedisPipe(target, timeout_s=_REPLY_WAIT_S + 5.0, connect_timeout_s=2.0)
        self.gateway_id = uuid.uuid4().hex
        self._reply_key = redis_keys.reply_list(self.gateway_id)
        self._max_backlog = max_backlog
        self._max_response_bytes = max_response_bytes
        self._observe = observe
        self._waiting: dict[str, _InFlight] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._live_workers = 0
        self._redis_ok = False
        self._stall = StallWatch()
        self._threads = self._depth = self._running = 0
        self._offset_s: float | None = None  # Redis's clock minus this host's, from the last refresh
        self.requeued = 0

    @property
    def live_workers(self) -> int:
        """Workers seen alive at the last liveness refresh (cached, never waits)."""
        return self._live_workers

    def pool_state(self) -> dict[str, int]:
        """The worker pool at the last refresh (cached): ``threads`` (calls the live workers
        can run at once), ``running`` (calls a worker has taken and not answered),
        ``waiting`` (calls no worker has taken yet). ``running`` reaching ``threads`` with
        ``waiting`` above 0 is saturation."""
        return {"threads": self._threads, "running": self._running, "waiting": self._depth}

    @property
    def redis_ok(self) -> bool:
        """Whether Redis answered at the last liveness refresh."""
        return self._redis_ok

    @property
    def redis(self) -> Redis:
        """The shared (non-blocking) client, for other gateway parts such as the limiter."""
        return self._redis

    async def start(self) -> None:
        """Start the reply reader and the liveness refresher (Redis may still be down)."""
        await self._refresh_liveness()
        self._tasks = [
            asyncio.create_task(self._read_replies(), name="pwc-mcp-replies"),
            asyncio.create_task(self._refresh_liveness_forever(), name="pwc-mcp-liveness"),
            asyncio.create_task(self._check_entries_forever(), name="pwc-mcp-entry-check"),
        ]

    async def close(self) -> None:
        """Stop background tasks, fail waiting calls and close connections."""
        await stop_tasks(self._tasks)
        for waiting in self._waiting.values():
            if not waiting.future.done():
                waiting.future.set_exception(ExecutorUnavailable("the gateway is shutting down"))
        self._waiting.clear()
        await self._redis.aclose()
        await self._pipe.close()
        await self._reply_pipe.close()

    async def __call__(self, call: object, ticket: DispatchTicket | None = None) -> bytes:
        """Run ``call`` on some worker and return its serialized response body.

        Args:
            call: the `Call`.
            ticket: the endpoint's admission state for the call (the `server.Executor`
                ``admission`` argument); updated in place so the endpoint can answer a
                deferred refusal and knows whether the worker released the lease.

        Raises:
            ExecutorUnavailable: no live worker, Redis unreachable, or backlog full.
            ExecutorTimeout: no reply before ``call.deadline``.
            ResponseTooLarge: the reply exceeds the response bound.
        """
        if self._live_workers == 0:
            raise ExecutorUnavailable("no worker is alive to run the call")
        remaining = call.deadline - time.time()
        if remaining <= 0:
            raise ExecutorTimeout("the call deadline passed before it was queued")
        rid = uuid.uuid4().hex
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        call_json = call.to_json()
        redis_deadline = call.deadline + self._offset_s if self._offset_s is not None else None
        handed = ticket is not None and (ticket.deferred or ticket.lease_taken)
        waiting = _InFlight(future, call_json, (ticket.lease.lease_id, ticket.lease.client_hash) if handed else None,
                            redis_deadline)
        self._waiting[rid] = waiting
        started = time.monotonic()
        try:
            try:
                async with asyncio.timeout(remaining):  # a failover may hold the enqueue; not past the deadline
                    if ticket is not None and ticket.deferred:
                        waiting.entry_id = await self._admit_and_enqueue(ticket, rid, call_json, redis_deadline)
                    else:
                        waiting.entry_id = await self._enqueue(rid, waiting)
            except TimeoutError as exc:
                raise ExecutorTimeout("the call queue did not take the call before the call deadline") from exc
            except queue.QueueFull as exc:
                raise ExecutorUnavailable("the worker queue is full; retry shortly") from exc
            except RedisError as exc:
                raise ExecutorUnavailable("the call queue is unavailable") from exc
            try:
                async with asyncio.timeout(call.deadline - time.time()):
                    body = await future
                if ticket is not None and ticket.lease_taken:
                    ticket.released_by_worker = True  # in the same pipeline as the reply
            except TimeoutError as exc:
                raise ExecutorTimeout("no worker answered before the call deadline") from exc
        finally:
            self._waiting.pop(rid, None)
        if self._observe is not None:
            self._observe(time.monotonic() - started)
        if body == queue.TOO_LARGE or len(body) > self._max_response_bytes:
            raise ResponseTooLarge("the serialized response exceeds the response bound")
        return body

    async def _enqueue(self, rid: str, waiting: _InFlight) -> str:
        """Append the call's entry (first time or again); returns its entry id.

        Raises:
            queue.QueueFull, redis.exceptions.RedisError: as `queue.enqueue`.
        """
        return await queue.enqueue(self._pipe, rid=rid, reply_key=self._reply_key, call_json=waiting.call_json,
                                   max_backlog=self._max_backlog, lease=waiting.lease,
                                   redis_deadline=waiting.redis_deadline)

    async def _admit_and_enqueue(self, ticket: DispatchTicket, rid: str, call_json: bytes | str,
                                 redis_deadline: float | None) -> str | None:
        """Run the ticket's deferred admission and the enqueue as one script (`gateway.dispatch_ticket`).

        Raises:
            queue.QueueFull: admitted, but the backlog is full.
            ExecutorUnavailable: refused by the limits (``ticket.refusal``) or Redis is
                unreachable (``ticket.limits_unavailable``); the endpoint answers either.
        """
        script, lease = ticket.script, ticket.lease
        try:
            code, entry_id = await queue.admit_and_enqueue(
                self._pipe, admission_keys=script.keys, admission_args=script.args, rid=rid,
                reply_key=self._reply_key, call_json=call_json, max_backlog=self._max_backlog,
                lease=(lease.lease_id, lease.client_hash), redis_deadline=redis_deadline)
        except (RedisError, OSError) as exc:
            ticket.limits_unavailable = True
            raise ExecutorUnavailable("the limit store is unavailable") from exc
        if code == queue.ADMITTED_BACKLOG_FULL:
            ticket.admitted = True
            raise queue.QueueFull("the worker queue is full")
        if code != 0:
            ticket.refusal = decision_from_code(code, None)
            raise ExecutorUnavailable("refused by the limits")
        ticket.admitted = ticket.lease_taken = True
        return entry_id

    async def _read_replies(self) -> None:
        failures = 0
        while True:
            try:
                raw_replies = await queue.wait_replies(self._reply_pipe, self._reply_key, timeout_s=_REPLY_WAIT_S)
            except RedisError:
                # Redis restarting: keep waiting callers; their deadlines bound them.
                failures += 1
                await asyncio.sleep(REDIS_BACKOFF.compute(failures))
                continue
            failures = 0
            for raw in raw_replies:
                self._deliver(raw)

    def _deliver(self, raw: bytes) -> None:
        try:
            rid, body = queue.decode_reply(raw)
        except ValueError:
            logger.warning("dropped a malformed reply")
            return
        waiting = self._waiting.get(rid)
        if waiting is not None and not waiting.future.done():
            waiting.future.set_result(body)
        # else: a duplicate (a reclaimed call answered twice) or a late reply: dropped.

    async def _refresh_liveness(self) -> None:
        sent = time.monotonic()
        try:
            await queue.ensure_group(self._redis)
            live = await queue.live_workers_at(self._redis, grace_s=self._stall.grace_s())
            depth, running = await queue.backlog(self._redis)
            if self._stall.ok(sent) or time.monotonic() - sent >= STALL_S:
                # This answer waited out a Redis stall, so it was judged without the stall's
                # grace (every heartbeat looks old): judge again now that the grace applies.
                live = await queue.live_workers_at(self._redis, grace_s=self._stall.grace_s())
            self._offset_s = live.redis_ms / 1000 - time.time()
            self._redis_ok = True
            self._live_workers, self._threads = len(live.consumers), live.threads
        except RedisError:
            # Unreachable Redis says nothing about the workers: keep the last judgement
            # (/health is 503 on ``redis`` meanwhile), so that calls sent the moment Redis
            # resumes are not refused as "no worker alive" before the next refresh.
            self._redis_ok = False
            depth = running = 0
        self._depth, self._running = depth, running
        metrics.set_live_workers(self._live_workers)
        metrics.set_queue_depth(depth)
        metrics.set_busy_workers(running)
        metrics.set_worker_threads(self._threads)

    async def _refresh_liveness_forever(self) -> None:
        while True:
            await asyncio.sleep(_LIVENESS_REFRESH_S)
            await self._refresh_liveness()

    async def _check_entries_forever(self) -> None:
        while True:
            await asyncio.sleep(_ENTRY_CHECK_S)
            with contextlib.suppress(RedisError):
                await self._check_entries()

    async def _check_entries(self) -> None:
        """Find waiting calls whose Stream entry is gone without a reply; queue them again or fail them."""
        checked = [(rid, w) for rid, w in self._waiting.items() if w.entry_id is not None and not w.future.done()]
        if not checked:
            return
        exists = await queue.entry_exists(self._redis, [w.entry_id for _, w in checked])
        for (rid, waiting), present in zip(checked, exists):
            waiting.misses = 0 if present else waiting.misses + 1
            if waiting.misses < 2 or waiting.future.done():
                continue
            waiting.misses = 0
            if waiting.requeues >= _MAX_REQUEUES:
                waiting.future.set_exception(ExecutorUnavailable("the call was lost by the queue; retry"))
                continue
            waiting.requeues += 1
            try:
                waiting.entry_id = await self._enqueue(rid, waiting)
                self.requeued += 1
                logger.warning("queued a call again after Redis lost its entry")
            except (queue.QueueFull, RedisError):
                waiting.future.set_exception(ExecutorUnavailable("the call was lost by the queue; retry"))
