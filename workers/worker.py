"""The worker loop: read calls from the Stream, run them, reply; drain on SIGTERM.

Lifecycle: register a heartbeat before reading anything (so no peer mistakes
this consumer for a dead one), then loop: reclaim calls whose worker died,
read as many new calls as there are free threads, run each as a task. On
SIGTERM or SIGINT: stop reading, let running calls finish (at most
``drain_s``), deregister, exit 0. Redis outages are waited out with a
bounded backoff; they never kill the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time

from redis.asyncio import Redis
from redis.exceptions import RedisError

from pwc_mcp_core import keys, queue
from pwc_mcp_core.redis_pipe import RedisPipe
from workers.runner import Runner
from workers.settings import WorkerSettings

__all__ = ["Worker"]

logger = logging.getLogger(__name__)

_BLOCK_MS = 1000
_BACKOFF_MAX_S = 2.0
_RECLAIM_EVERY_S = 2.0


class Worker:
    """One worker process's queue consumer.

    Args:
        settings: the worker settings (Redis URL, id, threads, drain time).
        runner: executes calls on the bounded thread pool.
    """

    def __init__(self, settings: WorkerSettings, runner: Runner) -> None:
        self._settings = settings
        self._runner = runner
        self._redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=None)
        # Replies leave over a dedicated pipelined connection (they are on every call's path).
        self._pipe = RedisPipe(settings.redis_url, timeout_s=5.0, connect_timeout_s=2.0)
        # ...and new calls arrive over another (XREADGROUP blocks its connection).
        self._read_pipe = RedisPipe(settings.redis_url, timeout_s=_BLOCK_MS / 1000 + 5.0, connect_timeout_s=2.0)
        self._finish = queue.ReplySender(self._pipe)
        self._stopping = asyncio.Event()
        self._running: set[asyncio.Task[None]] = set()
        self.completed = 0

    def stop(self) -> None:
        """Ask the loop to stop taking calls and drain (safe from a signal handler)."""
        self._stopping.set()

    async def run(self) -> None:
        """Run until :meth:`stop` is called (or SIGTERM/SIGINT), then drain and return."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self.stop)
        beat = asyncio.create_task(self._beat_forever(), name="pwc-mcp-heartbeat")
        try:
            await self._consume()
        finally:
            await self._drain()
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
            with contextlib.suppress(RedisError):
                await queue.forget_worker(self._redis, self._settings.worker_id)
            await self._redis.aclose()
            await self._pipe.close()
            await self._read_pipe.close()
            await self._runner.close()
            logger.info("worker stopped completed=%d", self.completed)

    async def _consume(self) -> None:
        backoff = 0.1
        last_reclaim = 0.0
        ready = False
        while not self._stopping.is_set():
            try:
                if not ready:
                    await queue.ensure_group(self._redis)
                    await queue.heartbeat(self._redis, self._settings.worker_id)
                    ready = True
                    logger.info("worker ready threads=%d", self._runner.threads)
                await self._wait_for_free_thread()
                free = self._free_threads()
                jobs: list[queue.Job] = []
                if time.monotonic() - last_reclaim > _RECLAIM_EVERY_S:
                    last_reclaim = time.monotonic()
                    jobs = await queue.claim_orphans(self._redis, consumer=self._settings.worker_id, count=free)
                    if jobs:
                        logger.info("reclaimed calls of a dead worker count=%d", len(jobs))
                if not jobs:
                    jobs = await queue.read_jobs(
                        self._read_pipe, consumer=self._settings.worker_id, count=free, block_ms=_BLOCK_MS
                    )
                for job in jobs:
                    self._start(job)
                if jobs:
                    # Let the new calls reach the thread pool before the next XREADGROUP
                    # is sent: it saves that round trip's send on every call's latency.
                    await asyncio.sleep(0)
                backoff = 0.1
            except RedisError:
                ready = False
                logger.warning("redis unavailable; retrying in %.1fs", backoff)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX_S)

    def _free_threads(self) -> int:
        return max(1, self._runner.threads - len(self._running))

    async def _wait_for_free_thread(self) -> None:
        while len(self._running) >= self._runner.threads and not self._stopping.is_set():
            await asyncio.wait(self._running, return_when=asyncio.FIRST_COMPLETED)

    def _start(self, job: queue.Job) -> None:
        task = asyncio.create_task(self._handle(job))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _handle(self, job: queue.Job) -> None:
        started = time.monotonic()
        try:
            body = await self._runner.run(job.call_json)
        except Exception as exc:  # a malformed entry must not kill the worker
            logger.warning("dropped an unreadable call error=%s", type(exc).__name__)
            body = None
        for attempt in range(20):
            try:
                await self._finish(job, body)
                break
            except RedisError:
                # The reply must not be lost to a short Redis blip; the caller's deadline bounds this.
                await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
        self.completed += 1
        logger.debug("call done ms=%d", int((time.monotonic() - started) * 1000))

    async def _drain(self) -> None:
        if self._running:
            logger.info("draining running calls count=%d", len(self._running))
            done, pending = await asyncio.wait(self._running, timeout=self._settings.drain_s)
            for task in pending:
                task.cancel()

    async def _beat_forever(self) -> None:
        while True:
            with contextlib.suppress(RedisError):
                await queue.heartbeat(self._redis, self._settings.worker_id)
            await asyncio.sleep(keys.HEARTBEAT_INTERVAL_S)
