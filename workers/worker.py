"""The worker: consumer threads read calls from the Stream, run them and reply; drain on SIGTERM.

Lifecycle: build the per-process tables and the runtime (``Runner.warm``), then
register a heartbeat before reading anything (so no peer mistakes this
consumer for a dead one), then start ``threads`` consumer threads. Each one blocks in
``XREADGROUP`` on a synchronous connection of its own, runs the call it got right
there and sends the reply from the same thread: no event-loop or thread-pool hand-off
lies on a call's path (each cost a thread wake-up, 137 µs at p50 on the benchmark
machine). The event loop keeps the heartbeat, and every ``_RECLAIM_EVERY_S`` claims the
calls of dead workers and runs them the same way, each on a thread of its own. On SIGTERM or SIGINT: stop
reading, let running calls finish (at most ``drain_s``), deregister, exit 0. Redis
outages are waited out with a bounded backoff; they never kill the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time

from redis.asyncio import Redis
from redis.exceptions import RedisError

from pwc_mcp_core import keys, queue
from pwc_mcp_core.gc_tuning import settle_after_startup
from pwc_mcp_core.redis_pipe import SyncPipe
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
        runner: executes calls in the calling thread (`Runner.run_here`).
    """

    def __init__(self, settings: WorkerSettings, runner: Runner) -> None:
        self._settings = settings
        self._runner = runner
        self._redis = Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=None)
        self._stopping = asyncio.Event()
        self._halt = threading.Event()  # tells consumer threads to stop reading
        self._consumers: list[threading.Thread] = []
        self._running: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        self._busy = 0
        self.completed = 0

    def stop(self) -> None:
        """Ask the worker to stop taking calls and drain (safe from a signal handler)."""
        self._stopping.set()

    async def run(self) -> None:
        """Run until :meth:`stop` is called (or SIGTERM/SIGINT), then drain and return."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self.stop)
        beat = asyncio.create_task(self._beat_forever(), name="pwc-mcp-heartbeat")
        try:
            await self._supervise()
        finally:
            await self._drain()
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
            with contextlib.suppress(RedisError):
                await queue.forget_worker(self._redis, self._settings.worker_id)
            await self._redis.aclose()
            await self._runner.close()
            logger.info("worker stopped completed=%d", self.completed)

    async def _supervise(self) -> None:
        """Warm up, become ready, start the consumer threads, then reclaim dead workers' calls until stopped."""
        await asyncio.to_thread(self._runner.warm)  # before any heartbeat: no call waits on it
        settle_after_startup()
        backoff = 0.1
        ready = False
        while not self._stopping.is_set():
            try:
                if not ready:
                    await queue.ensure_group(self._redis)
                    await queue.heartbeat(self._redis, self._settings.worker_id)
                    ready = True
                    self._start_consumers()
                    logger.info("worker ready threads=%d", self._runner.threads)
                await self._wait_for_free_thread()
                jobs = await queue.claim_orphans(self._redis, consumer=self._settings.worker_id,
                                                 count=self._free_threads())
                if jobs:
                    logger.info("reclaimed calls of a dead worker count=%d", len(jobs))
                for job in jobs:
                    self._start(job)
                backoff = 0.1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), _RECLAIM_EVERY_S)
            except RedisError:
                ready = False
                logger.warning("redis unavailable; retrying in %.1fs", backoff)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX_S)

    def _start_consumers(self) -> None:
        if self._consumers:
            return
        for n in range(self._runner.threads):
            thread = threading.Thread(target=self._consume_in_thread, name=f"pwc-consumer-{n}", daemon=True)
            thread.start()
            self._consumers.append(thread)

    def _consume_in_thread(self) -> None:
        """One consumer thread: read a call, run it here, answer it; until the worker halts."""
        client = SyncPipe(self._settings.redis_url, timeout_s=_BLOCK_MS / 1000 + 5)
        backoff = 0.1
        try:
            while not self._halt.is_set():
                try:
                    jobs = queue.read_jobs_sync(client, consumer=self._settings.worker_id, count=1,
                                                block_ms=_BLOCK_MS)
                except RedisError:  # the loop logs outages; threads just wait them out
                    self._halt.wait(backoff)
                    backoff = min(backoff * 2, _BACKOFF_MAX_S)
                    continue
                backoff = 0.1
                for job in jobs:
                    self._run_here(client, job)
        finally:
            client.close()

    def _run_here(self, client: SyncPipe, job: queue.Job) -> None:
        started = time.monotonic()
        with self._lock:
            self._busy += 1
        try:
            try:
                body = self._runner.run_here(job.call_json)
            except Exception as exc:  # a malformed entry must not kill the thread
                logger.warning("dropped an unreadable call error=%s", type(exc).__name__)
                body = None
            for attempt in range(20):
                try:
                    queue.finish_sync(client, job, body)
                    break
                except RedisError:
                    # The reply must not be lost to a short Redis blip; the caller's deadline bounds this.
                    time.sleep(min(0.05 * 2**attempt, 1.0))
        finally:
            with self._lock:
                self._busy -= 1
                self.completed += 1
        logger.debug("call done ms=%d", int((time.monotonic() - started) * 1000))

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
        """Run a reclaimed call as a consumer thread would, on a thread and connection of its own."""
        await asyncio.to_thread(self._run_reclaimed, job)

    def _run_reclaimed(self, job: queue.Job) -> None:
        client = SyncPipe(self._settings.redis_url, timeout_s=_BLOCK_MS / 1000 + 5)
        try:
            self._run_here(client, job)
        finally:
            client.close()

    async def _drain(self) -> None:
        self._halt.set()
        deadline = time.monotonic() + self._settings.drain_s
        if self._running or self._busy:
            logger.info("draining running calls count=%d", len(self._running) + self._busy)
        if self._running:
            _done, pending = await asyncio.wait(self._running, timeout=self._settings.drain_s)
            for task in pending:
                task.cancel()
        for thread in self._consumers:  # each returns within one XREADGROUP block or its call
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await asyncio.to_thread(thread.join, remaining)

    async def _beat_forever(self) -> None:
        while True:
            with contextlib.suppress(RedisError):
                await queue.heartbeat(self._redis, self._settings.worker_id)
            await asyncio.sleep(keys.HEARTBEAT_INTERVAL_S)
