"""Send tool calls to the worker pool over Redis and wait for their replies.

One :class:`RedisDispatcher` per gateway process. Each process owns a reply
list (``redis_keys.reply_list(gateway_id)``) read by one blocking ``BLMPOP`` at a time,
whose replies resolve the waiting requests' futures by request id right where the pipe
parses them (`queue.wait_replies_then`: no reader task between a reply and its call), so a
thousand waiting calls cost one blocking Redis connection, not a thousand. Wire format:
:mod:`pwc_mcp_core.cluster.queue`.

Outcomes (`pwc_mcp_core.runtime.dispatch`; each surface maps them to its wire shape):

* a `Deferred` admission is decided here, in the same script that queues the call
  (``admit_enqueue.lua``): refused → `Refused`; Redis unreachable → `Refused` with
  ``limits_unavailable`` (fail closed). A call that cannot be queued at all (no live
  worker, its deadline passed, shutting down) is still counted against the limits
  (``admit.lua`` without a lease), so a refusal wins over `Unavailable`/`TimedOut`
  exactly as the documented admission order says;
* no live worker while some are registered (they died: their heartbeats expired), the queue
  unreachable or the backlog full → `Unavailable`, fast;
* no worker registered at all (Redis lost its data: a restart, ``FLUSHALL``; or no worker has
  started yet) → the call waits for one to register, up to its deadline (live workers beat
  again within ``HEARTBEAT_INTERVAL_S``), then `Unavailable`; at most ``max_backlog`` calls
  wait so;
* no reply before ``call.deadline`` → `TimedOut` (the deadline is read once, into one timer on
  the event loop's clock that covers the wait for a worker, the enqueue and the reply);
* the worker's reply, decoded from the queue's one reply format (`pwc_mcp_core.cluster.replies`):
  an `Answer` (bounded here by ``max_response_bytes``, the one check on this side of Redis; the
  worker checked its own bound) or `TooLarge`;
* the call's Stream entry vanished without a reply (Redis lost data: ``FLUSHALL``, a
  restart without persistence, a failover to a lagging replica) → queued again, up to
  ``_MAX_REQUEUES`` times (every tool is read-only and idempotent), then `Unavailable`
  ("lost by the queue; retry"). Noticed within about ``2 × _ENTRY_CHECK_S``
  (ARCHITECTURE.md "Delivery guarantee").

The lease a `Deferred` admission takes travels with the entry and is released by the
worker in the same round trip as its reply; whenever no reply arrives, this dispatcher
releases it (`RedisDispatcher._settle`, the one place that rule is written).

Every Redis command goes through `pwc_mcp_core.cluster` (``queue``, ``redis_connect``).

Liveness is judged by Redis's clock, widened after a Redis stall this process saw
(``pwc_mcp_core.cluster.liveness``), so a Redis pause does not make every worker look dead;
while Redis is unreachable the count keeps its last judgement (``redis_ok`` is False).

The body a worker returns is forwarded as bytes; it is never parsed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from gateway.shared import metrics
from gateway.shared.background import stop_tasks
from pwc_mcp_core.cluster import queue, redis_connect, redis_keys
from pwc_mcp_core.cluster.admission import LIMITS_UNAVAILABLE, Lease, decision_from_code
from pwc_mcp_core.cluster.errors import StoreReplyLost, StoreUnavailable
from pwc_mcp_core.cluster.liveness import STALL_S, StallWatch
from pwc_mcp_core.cluster.redis_backoff import REDIS_BACKOFF
from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.cluster.redis_pipe import RedisPipe
from pwc_mcp_core.cluster.replies import Replied
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import DEFAULT_MAX_BODY_BYTES
from pwc_mcp_core.runtime.dispatch import (
    TIMED_OUT,
    Answer,
    Deferred,
    Outcome,
    PoolState,
    Refused,
    Unavailable,
    bounded,
)

__all__ = ["RedisDispatcher"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_LIVENESS_REFRESH_S = 1.0
# While calls wait for a worker to register, the count is refreshed this often instead.
_LIVENESS_REFRESH_WAITING_S = 0.2
_REPLY_WAIT_S = 1
# How often waiting calls check that their Stream entry still exists; an entry missing at
# two checks in a row (so a reply pushed just before the XDEL is not mistaken) is lost.
_ENTRY_CHECK_S = 1.0
_MAX_REQUEUES = 2


@dataclass
class _InFlight:
    """A call waiting for its reply: what is needed to queue it again if Redis loses it."""

    future: asyncio.Future[Replied | Unavailable]
    call_json: bytes
    lease: tuple[str, str] | None
    redis_deadline: float | None
    entry_id: str | None = None
    misses: int = 0
    requeues: int = 0
    lost: list[str] = field(default_factory=list)


_NO_WORKER = Unavailable("no worker is alive")
_QUEUE_FULL = Unavailable("the worker queue is full")
_QUEUE_DOWN = Unavailable("the call queue is unreachable")
_LOST = Unavailable("the call was lost by the queue")
_SHUTTING_DOWN = Unavailable("the gateway is shutting down")


async def _once_more_if_lost(send: Callable[[], Awaitable[_T]]) -> _T:
    """``send()``, sent once more when the connection was lost under it (`StoreReplyLost`: a
    master that died, or a Redis restart): the next connection waits for the new master.

    Safe for the enqueue alone: the same request id and lease id, so if the first one did run
    and replicate, the call has two entries, may run twice (every tool is read-only and
    idempotent) and is answered once, and its lease is one. At worst a rate window counts the
    call twice.
    """
    try:
        return await send()
    except StoreReplyLost:
        return await send()


class RedisDispatcher:
    """A `Dispatcher` backed by the Redis Stream and the worker pool.

    Args:
        target: the shared Redis, a URL or a Sentinel service (`redis_connect`).
        max_backlog: calls that may wait in the Stream before new ones are refused.
        max_response_bytes: largest reply body forwarded (2 MiB, seed "Safety and operations").
        observe: optional hook ``(seconds from enqueue to reply) -> None`` for metrics.

    It runs `Deferred` admissions (`runs_admission`): the limits are checked and the call
    queued in one script.
    """

    runs_admission = True

    def __init__(
        self,
        target: RedisTarget,
        *,
        max_backlog: int = 1024,
        max_response_bytes: int = DEFAULT_MAX_BODY_BYTES,
        observe: Callable[[float], None] | None = None,
    ) -> None:
        # Liveness and backlog probes (once a second) use a plain client; the per-call
        # enqueue and the reply wait use dedicated pipelined connections (RedisPipe).
        self._redis = redis_connect.async_client(target, socket_timeout=5, connect_timeout=2, health_check_interval=10)
        self._pipe = RedisPipe(target, timeout_s=5.0, connect_timeout_s=2.0)
        self._reply_pipe = RedisPipe(target, timeout_s=_REPLY_WAIT_S + 5.0, connect_timeout_s=2.0)
        self.gateway_id = uuid.uuid4().hex
        self._reply_key = redis_keys.reply_list(self.gateway_id)
        # Request ids are matched only against this process's own reply list: a counter is
        # unique enough and costs no random bytes (uuid4, a system call) per call.
        self._rids = itertools.count()
        self._max_backlog = max_backlog
        self._max_response_bytes = max_response_bytes
        self._observe = observe
        self._waiting: dict[str, _InFlight] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        self._reply_failures = 0
        self._reply_retry: asyncio.TimerHandle | None = None
        self._live_workers = 0
        self._registered_workers = 0
        self._worker_live = asyncio.Event()  # set while the last refresh saw a live worker
        self._awaiting_worker = 0  # calls waiting in `_wait_for_worker`
        self._redis_ok = False
        self._stall = StallWatch()
        self._threads = self._depth = self._running = 0
        self._offset_s: float | None = None  # Redis's clock minus this host's, from the last refresh
        self.requeued = 0

    @property
    def live_workers(self) -> int:
        """Workers seen alive at the last liveness refresh (cached, never waits)."""
        return self._live_workers

    def pool_state(self) -> PoolState:
        """The worker pool at the last refresh (cached)."""
        return PoolState(self._threads, self._running, self._depth)

    @property
    def redis_ok(self) -> bool:
        """Whether Redis answered at the last liveness refresh."""
        return self._redis_ok

    async def start(self) -> None:
        """Start the reply reader and the liveness refresher (Redis may still be down)."""
        await self._refresh_liveness()
        self._wait_for_replies()
        self._tasks = [
            asyncio.create_task(self._refresh_liveness_forever(), name="pwc-mcp-liveness"),
            asyncio.create_task(self._check_entries_forever(), name="pwc-mcp-entry-check"),
        ]

    async def close(self) -> None:
        """Stop background tasks, fail waiting calls and close connections."""
        self._closed = True
        if self._reply_retry is not None:
            self._reply_retry.cancel()
        await stop_tasks(self._tasks)
        for waiting in self._waiting.values():
            if not waiting.future.done():
                waiting.future.set_result(_SHUTTING_DOWN)
        self._waiting.clear()
        await self._redis.aclose()
        await self._pipe.close()
        await self._reply_pipe.close()

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        """Run ``call`` on some worker; see the module docstring for the outcomes."""
        loop = asyncio.get_running_loop()
        expires = loop.time() + (call.deadline - time.time())  # the call's deadline, read once, on the loop's clock
        if self._live_workers == 0 and not await self._wait_for_worker(expires):
            return await self._not_queued(admission, _NO_WORKER)
        if loop.time() >= expires:
            return await self._not_queued(admission, TIMED_OUT)
        rid = format(next(self._rids), "x")
        future: asyncio.Future[Replied | Unavailable] = loop.create_future()
        lease = admission.script.lease if admission is not None else None
        redis_deadline = call.deadline + self._offset_s if self._offset_s is not None else None
        waiting = _InFlight(future, call.to_json(), (lease.lease_id, lease.client_hash) if lease else None,
                            redis_deadline)
        self._waiting[rid] = waiting
        started = time.monotonic()
        try:
            # One timer for the enqueue (a failover may hold it) and the reply: the call's deadline.
            async with asyncio.timeout_at(expires):
                queued = await (self._enqueue(rid, waiting) if admission is None
                                else self._admit_and_enqueue(admission, rid, waiting))
                if not isinstance(queued, str):
                    return queued
                waiting.entry_id = queued
                answered = await future
        except TimeoutError:
            await self._settle(lease)
            return TIMED_OUT
        finally:
            self._waiting.pop(rid, None)
        if isinstance(answered, Unavailable):  # lost by the queue, or shutting down
            await self._settle(lease)
            return answered
        # A reply: the worker released the lease in the same round trip.
        if self._observe is not None:
            self._observe(time.monotonic() - started)
        return bounded(answered.body, self._max_response_bytes) if isinstance(answered, Answer) else answered

    async def _wait_for_worker(self, expires: float) -> bool:
        """Whether a worker is live, waiting up to ``expires`` (the event loop's clock) for one
        to register when none is registered at all.

        Workers that are registered but silent died (their heartbeats expired): the call fails
        fast. An empty registry means Redis lost its data (a restart, ``FLUSHALL``) or no worker
        has started yet: live workers register again within a heartbeat, so the call waits.
        """
        if self._registered_workers > 0 or self._awaiting_worker >= self._max_backlog:
            return False
        self._awaiting_worker += 1
        try:
            async with asyncio.timeout_at(expires):
                await self._worker_live.wait()
        except TimeoutError:
            return False
        finally:
            self._awaiting_worker -= 1
        return True

    async def _settle(self, lease: Lease | None) -> None:
        """Release the lease of a call no worker answered (a worker that answers releases it
        itself); idempotent, so a late worker release is harmless. Never raises."""
        if lease is not None:
            await queue.release_lease(self._pipe, lease)

    async def _not_queued(self, admission: Deferred | None, outcome: Outcome) -> Outcome:
        """``outcome`` for a call that is not queued, unless the limits refuse it first: the
        call is counted (no lease) like any request the gateway answers itself."""
        if admission is None:
            return outcome
        try:
            decision = await queue.count_admission(self._pipe, admission.script)
        except StoreUnavailable:
            return Refused(LIMITS_UNAVAILABLE)
        return outcome if decision.allowed else Refused(decision)

    async def _enqueue(self, rid: str, waiting: _InFlight) -> str | Unavailable:
        """Append the call's entry (first time or again); returns its entry id."""
        try:
            return await _once_more_if_lost(lambda: queue.enqueue(
                self._pipe, rid=rid, reply_key=self._reply_key, call_json=waiting.call_json,
                max_backlog=self._max_backlog, lease=waiting.lease, redis_deadline=waiting.redis_deadline))
        except queue.QueueFull:
            return _QUEUE_FULL
        except StoreUnavailable:
            return _QUEUE_DOWN

    async def _admit_and_enqueue(self, admission: Deferred, rid: str, waiting: _InFlight) -> str | Outcome:
        """Decide the admission and queue the call in one script; the entry id, or the outcome."""
        script = admission.script
        try:
            code, entry_id = await _once_more_if_lost(lambda: queue.admit_and_enqueue(
                self._pipe, admission_keys=script.keys, admission_args=script.args, rid=rid,
                reply_key=self._reply_key, call_json=waiting.call_json, max_backlog=self._max_backlog,
                lease=(script.lease.lease_id, script.lease.client_hash), redis_deadline=waiting.redis_deadline))
        except StoreUnavailable:
            return Refused(LIMITS_UNAVAILABLE)
        if code == queue.ADMITTED_BACKLOG_FULL:  # counted, no lease taken, not queued
            return _QUEUE_FULL
        if code != 0 or entry_id is None:
            return Refused(decision_from_code(code, None))
        return entry_id

    def _wait_for_replies(self) -> None:
        """Send the next ``BLMPOP`` of this process's reply list; `_on_replies` gets its outcome."""
        self._reply_retry = None
        if self._closed:
            return
        try:
            queue.wait_replies_then(self._reply_pipe, self._reply_key, timeout_s=_REPLY_WAIT_S,
                                    then=self._on_replies)
        except StoreUnavailable as exc:  # the pipe closed under us: only on shutdown
            self._on_replies(exc)

    def _on_replies(self, replies: list[tuple[str, Replied]] | StoreUnavailable) -> None:
        """Resolve the waiting calls of ``replies``, then wait for more; runs where the pipe reads them."""
        loop = asyncio.get_running_loop()
        if isinstance(replies, StoreUnavailable):
            # Redis restarting: keep waiting callers; their deadlines bound them.
            self._reply_failures += 1
            if not self._closed:
                self._reply_retry = loop.call_later(REDIS_BACKOFF.compute(self._reply_failures), self._wait_for_replies)
            return
        self._reply_failures = 0
        for rid, replied in replies:
            waiting = self._waiting.get(rid)
            if waiting is not None and not waiting.future.done():
                waiting.future.set_result(replied)
            # else: a duplicate (a reclaimed call answered twice) or a late reply: dropped.
        if replies:
            # The answered calls run first (their wake-ups are queued already); the next
            # BLMPOP's write is not on their path.
            loop.call_soon(self._wait_for_replies)
        else:
            self._wait_for_replies()

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
            self._registered_workers = live.registered
            if self._live_workers:
                self._worker_live.set()
            else:
                self._worker_live.clear()
        except StoreUnavailable:
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
            await asyncio.sleep(_LIVENESS_REFRESH_WAITING_S if self._awaiting_worker else _LIVENESS_REFRESH_S)
            await self._refresh_liveness()

    async def _check_entries_forever(self) -> None:
        while True:
            await asyncio.sleep(_ENTRY_CHECK_S)
            with contextlib.suppress(StoreUnavailable):
                await self._check_entries()

    async def _check_entries(self) -> None:
        """Find waiting calls whose Stream entry is gone without a reply; queue them again or fail them."""
        checked = [(rid, w, entry_id) for rid, w in self._waiting.items()
                   if (entry_id := w.entry_id) is not None and not w.future.done()]
        if not checked:
            return
        exists = await queue.entry_exists(self._redis, [entry_id for _, _, entry_id in checked])
        for (rid, waiting, _), present in zip(checked, exists, strict=True):
            waiting.misses = 0 if present else waiting.misses + 1
            if waiting.misses < 2 or waiting.future.done():
                continue
            waiting.misses = 0
            if waiting.requeues >= _MAX_REQUEUES:
                waiting.future.set_result(_LOST)
                continue
            waiting.requeues += 1
            queued = await self._enqueue(rid, waiting)
            if isinstance(queued, Unavailable):
                waiting.future.set_result(_LOST)
                continue
            waiting.entry_id = queued
            self.requeued += 1
            logger.warning("queued a call again after Redis lost its entry")
