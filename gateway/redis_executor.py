"""Send tool calls to the worker pool over Redis and wait for their replies.

One :class:`RedisExecutor` per gateway process. Each process owns a reply
list (``keys.reply_list(gateway_id)``) read by a single background task that
resolves the waiting request's future by request id, so a thousand waiting
calls cost one blocking Redis connection, not a thousand. Wire format:
:mod:`pwc_mcp_core.queue`.

Failure contract (what the MCP layer turns into JSON-RPC errors / HTTP 503):

* no live worker, or Redis unreachable → :class:`ExecutorUnavailable`, fast;
* the backlog is full → :class:`ExecutorUnavailable` (backpressure);
* no reply before ``call.deadline`` → :class:`ExecutorTimeout`;
* a reply over ``max_response_bytes`` → :class:`ResponseTooLarge`.

The body a worker returns is forwarded as bytes; it is never parsed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from pwc_mcp_core import keys, queue
from pwc_mcp_core.redis_pipe import RedisPipe
from pwc_mcp_core.errors import ExecutorTimeout, ExecutorUnavailable, ResponseTooLarge

from gateway import metrics
from gateway.dispatch_ticket import DispatchTicket
from gateway.limits import decision_from_code

__all__ = ["RedisExecutor"]

logger = logging.getLogger(__name__)

_LIVENESS_REFRESH_S = 1.0
_REPLY_WAIT_S = 1


class RedisExecutor:
    """An executor (``async (Call) -> bytes``) backed by the Redis Stream and the worker pool.

    Args:
        redis_url: ``redis://`` or ``unix://`` URL of the shared Redis.
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
        redis_url: str,
        *,
        max_backlog: int = 1024,
        max_response_bytes: int = 2 * 1024 * 1024,
        observe: Callable[[float], None] | None = None,
    ) -> None:
        # Liveness and backlog probes (once a second) use a plain client; the per-call
        # enqueue and the reply wait use dedicated pipelined connections (RedisPipe).
        self._redis = Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=5, health_check_interval=10)
        self._pipe = RedisPipe(redis_url, timeout_s=5.0, connect_timeout_s=2.0)
        self._reply_pipe = RedisPipe(redis_url, timeout_s=_REPLY_WAIT_S + 5.0, connect_timeout_s=2.0)
        self.gateway_id = uuid.uuid4().hex
        self._reply_key = keys.reply_list(self.gateway_id)
        self._max_backlog = max_backlog
        self._max_response_bytes = max_response_bytes
        self._observe = observe
        self._waiting: dict[str, asyncio.Future[bytes]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._live_workers = 0
        self._redis_ok = False

    @property
    def live_workers(self) -> int:
        """Workers seen alive at the last liveness refresh (cached, never waits)."""
        return self._live_workers

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
        ]

    async def close(self) -> None:
        """Stop background tasks, fail waiting calls and close connections."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ExecutorUnavailable("the gateway is shutting down"))
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
        self._waiting[rid] = future
        started = time.monotonic()
        try:
            try:
                if ticket is not None and ticket.deferred:
                    await self._admit_and_enqueue(ticket, rid, call.to_json())
                else:
                    handed = ticket is not None and ticket.lease_taken
                    await queue.enqueue(
                        self._pipe, rid=rid, reply_key=self._reply_key, call_json=call.to_json(),
                        max_backlog=self._max_backlog,
                        lease=(ticket.lease.lease_id, ticket.lease.client_hash) if handed else None,
                    )
            except queue.QueueFull as exc:
                raise ExecutorUnavailable("the worker queue is full; retry shortly") from exc
            except RedisError as exc:
                raise ExecutorUnavailable("the call queue is unavailable") from exc
            try:
                async with asyncio.timeout(remaining):
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

    async def _admit_and_enqueue(self, ticket: DispatchTicket, rid: str, call_json: bytes | str) -> None:
        """Run the ticket's deferred admission and the enqueue as one script (`gateway.dispatch_ticket`).

        Raises:
            queue.QueueFull: admitted, but the backlog is full.
            ExecutorUnavailable: refused by the limits (``ticket.refusal``) or Redis is
                unreachable (``ticket.limits_unavailable``); the endpoint answers either.
        """
        script, lease = ticket.script, ticket.lease
        try:
            code = await queue.admit_and_enqueue(
                self._pipe, admission_keys=script.keys, admission_args=script.args, rid=rid,
                reply_key=self._reply_key, call_json=call_json, max_backlog=self._max_backlog,
                lease=(lease.lease_id, lease.client_hash))
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

    async def _read_replies(self) -> None:
        while True:
            try:
                raw_replies = await queue.wait_replies(self._reply_pipe, self._reply_key, timeout_s=_REPLY_WAIT_S)
            except RedisError:
                # Redis restarting: keep waiting callers; their deadlines bound them.
                await asyncio.sleep(0.5)
                continue
            for raw in raw_replies:
                self._deliver(raw)

    def _deliver(self, raw: bytes) -> None:
        try:
            rid, body = queue.decode_reply(raw)
        except ValueError:
            logger.warning("dropped a malformed reply")
            return
        future = self._waiting.get(rid)
        if future is not None and not future.done():
            future.set_result(body)
        # else: a duplicate (a reclaimed call answered twice) or a late reply: dropped.

    async def _refresh_liveness(self) -> None:
        try:
            await queue.ensure_group(self._redis)
            self._live_workers = len(await queue.live_workers(self._redis))
            depth, busy = await queue.backlog(self._redis)
            self._redis_ok = True
        except RedisError:
            self._redis_ok = False
            self._live_workers = 0
            depth = busy = 0
        metrics.set_live_workers(self._live_workers)
        metrics.set_queue_depth(depth)
        metrics.set_busy_workers(busy)

    async def _refresh_liveness_forever(self) -> None:
        while True:
            await asyncio.sleep(_LIVENESS_REFRESH_S)
            await self._refresh_liveness()
