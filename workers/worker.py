"""The worker: consumer threads read calls from the Stream, run them and reply; drain on SIGTERM.

Lifecycle: build the per-process tables and the runtime (``Runner.warm``), then
register a heartbeat under this start's own consumer name (``<worker id>#<incarnation>``)
before reading anything, claim whatever an earlier start under the same worker id left
pending (a crash restarted by systemd within its heartbeat TTL), then start ``threads``
consumer threads, and one thread that draws a throw-away chart (`charts.preload`) so the first
``get_sota_history`` call does not pay matplotlib's import. Each one blocks in ``XREADGROUP`` on a synchronous connection of its
own, runs the call it got right there and sends the reply from the same thread, with
its next ``XREADGROUP`` in the same write: no event-loop or thread-pool hand-off lies on
a call's path, and a call costs the worker one round trip. The event loop keeps the
heartbeat, and every ``_RECLAIM_EVERY_S`` claims the calls of dead workers, and its own
calls whose read was lost on the way (pending here, held by no thread), at most as
many as there are idle threads, into a local hand-over queue the consumer threads serve
before reading new entries: a worker never runs more calls than it has threads. On
SIGTERM or SIGINT: stop reading, let running calls finish (at most ``drain_s``),
deregister, exit 0. Redis outages are waited out with one jittered backoff
(``pwc_mcp_core.cluster.redis_backoff``); they never kill the worker. Deadlines are judged on this
host's clock corrected by its offset to Redis's clock (ARCHITECTURE.md "Clocks").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
import uuid
from queue import Empty, SimpleQueue

from pwc_mcp_core.cluster import queue, redis_connect, redis_keys
from pwc_mcp_core.cluster.errors import RedisError
from pwc_mcp_core.cluster.liveness import StallWatch
from pwc_mcp_core.cluster.redis_backoff import REDIS_BACKOFF
from pwc_mcp_core.cluster.redis_pipe import SyncPipe
from pwc_mcp_core.cluster.replies import Replied
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.gc_tuning import settle_after_startup
from pwc_mcp_core.tools import charts
from workers.runner import Runner
from workers.settings import WorkerSettings

__all__ = ["Worker"]

logger = logging.getLogger(__name__)

_BLOCK_MS = 1000
_RECLAIM_EVERY_S = 2.0
# An entry pending for this worker this long, held by none of its threads, was lost on its way
# to a read (the connection failed after Redis delivered it); far above delivery-to-noting time.
_STRANDED_IDLE_MS = 3000


class Worker:
    """One worker process's queue consumer.

    Args:
        settings: the worker settings (Redis URL, id, threads, drain time, clock).
        runner: executes calls in the calling thread (`Runner.run_here`).
    """

    def __init__(self, settings: WorkerSettings, runner: Runner) -> None:
        self._settings = settings
        self._runner = runner
        self.consumer = queue.consumer_name(settings.worker_id, uuid.uuid4().hex[:8])
        # Bounded reads: after a network partition heals, a command stuck on a dead TCP
        # connection must fail and reconnect, not wait out TCP's retransmission backoff.
        self._redis = redis_connect.async_client(settings.redis, socket_timeout=5, connect_timeout=2)
        self._stopping = asyncio.Event()
        self._halt = threading.Event()  # tells consumer threads to stop reading
        self._consumers: list[threading.Thread] = []
        self._handover: SimpleQueue[queue.Job] = SimpleQueue()  # claimed calls for the consumer threads
        self._lock = threading.Lock()
        self._busy = 0
        self._held: set[bytes] = set()  # entry ids read, handed over or running here (under _lock)
        self._stall = StallWatch()
        self._offset_s = 0.0  # Redis's clock minus this host's (settings.clock)
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
                await queue.forget_worker(self._redis, self.consumer)
            await self._redis.aclose()
            await self._runner.close()
            logger.info("worker stopped completed=%d", self.completed)

    async def _supervise(self) -> None:
        """Warm up, become ready, start the consumer threads, then reclaim dead workers' calls until stopped."""
        await asyncio.to_thread(self._runner.warm)  # before any heartbeat: no call waits on it
        settle_after_startup()
        failures = 0
        ready = recovered = False
        while not self._stopping.is_set():
            try:
                if not ready:
                    await queue.ensure_group(self._redis)
                    await self._beat()
                    if not recovered:
                        jobs = await queue.recover_previous(self._redis, consumer=self.consumer)
                        if jobs:
                            logger.info("recovered calls of this worker's previous start count=%d", len(jobs))
                        self._hand_over(jobs)
                        recovered = True
                    ready = True
                    self._start_consumers()
                    logger.info("worker ready threads=%d", self._runner.threads)
                idle = self._idle_threads()
                if idle > 0:
                    jobs = await queue.claim_orphans(self._redis, consumer=self.consumer, count=idle,
                                                     grace_s=self._stall.grace_s())
                    if jobs:
                        logger.info("reclaimed calls of a dead worker count=%d", len(jobs))
                    self._hand_over(jobs)
                    if idle > len(jobs):
                        stranded = await queue.claim_stranded(self._redis, consumer=self.consumer,
                                                              held=self._held_now(), count=idle - len(jobs),
                                                              min_idle_ms=_STRANDED_IDLE_MS)
                        if stranded:
                            logger.info("recovered calls whose read was lost count=%d", len(stranded))
                        self._hand_over(stranded)
                failures = 0
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), _RECLAIM_EVERY_S)
            except RedisError:
                ready = False
                failures += 1
                delay = REDIS_BACKOFF.compute(failures)
                logger.warning("redis unavailable; retrying in %.1fs", delay)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)

    def _idle_threads(self) -> int:
        with self._lock:
            return self._runner.threads - self._busy - self._handover.qsize()

    def _held_now(self) -> frozenset[bytes]:
        with self._lock:
            return frozenset(self._held)

    def _hold(self, jobs: list[queue.Job]) -> list[queue.Job]:
        """Note ``jobs`` as this worker's own, so the stranded-entry check leaves them alone."""
        if jobs:
            with self._lock:
                self._held.update(job.entry_id for job in jobs)
        return jobs

    def _hand_over(self, jobs: list[queue.Job]) -> None:
        for job in self._hold(jobs):
            self._handover.put(job)

    def _start_consumers(self) -> None:
        if self._consumers:
            return
        for n in range(self._runner.threads):
            thread = threading.Thread(target=self._consume_in_thread, name=f"pwc-consumer-{n}", daemon=True)
            thread.start()
            self._consumers.append(thread)
        # After ready, not before: readiness stays fast; a chart call that comes first waits on the import lock.
        threading.Thread(target=charts.preload, name="pwc-chart-preload", daemon=True).start()

    def _consume_in_thread(self) -> None:
        """One consumer thread: run a handed-over call, else read one, run it here, answer it; until halted.

        The answer goes out with the thread's next read in one write (`queue.finish_and_read_sync`)
        whenever nothing waits in the hand-over queue, so a call costs one round trip here.
        """
        client = SyncPipe(self._settings.redis, timeout_s=_BLOCK_MS / 1000 + 5)
        failures = 0
        jobs: list[queue.Job] = []
        try:
            while not self._halt.is_set() or jobs:
                if not jobs:
                    try:
                        jobs = [self._handover.get_nowait()]
                    except Empty:
                        try:
                            jobs = self._hold(queue.read_jobs_sync(client, consumer=self.consumer, count=1,
                                                                   block_ms=_BLOCK_MS))
                        except RedisError:  # the loop logs outages; threads just wait them out
                            failures += 1
                            self._halt.wait(REDIS_BACKOFF.compute(failures))
                            continue
                        failures = 0
                        continue
                job = jobs.pop(0)
                jobs += self._run_here(client, job, read_next=not jobs)
        finally:
            client.close()

    def _call_of(self, job: queue.Job) -> Call:
        """The job's call with its deadline on this host's clock (from Redis's, when the gateway sent it)."""
        return Call.from_json(job.call_json, deadline=None if job.redis_deadline is None
                              else job.redis_deadline - self._offset_s)

    def _run_here(self, client: SyncPipe, job: queue.Job, *, read_next: bool = False) -> list[queue.Job]:
        """Run ``job`` and answer it; with ``read_next``, the jobs the answer's write read too."""
        started = time.monotonic()
        with self._lock:
            self._busy += 1
        try:
            deadline = 0.0
            try:
                call = self._call_of(job)
                deadline = call.deadline
                reply = self._runner.run_here(call)
            except Exception as exc:  # noqa: BLE001 - a malformed entry must not kill the thread
                logger.warning("dropped an unreadable call error=%s", type(exc).__name__)
                reply = None
            return self._finish(client, job, reply, deadline, read_next=read_next)
        finally:
            with self._lock:
                self._busy -= 1
                self.completed += 1
                self._held.discard(job.entry_id)
            logger.debug("call done ms=%d", int((time.monotonic() - started) * 1000))

    def _finish(self, client: SyncPipe, job: queue.Job, reply: Replied | None, deadline: float, *,
                read_next: bool = False) -> list[queue.Job]:
        """Reply and acknowledge, retrying through a Redis blip. The call's deadline ends the
        reply (nobody waits after it: the one judgement of the deadline after the run on this
        side of Redis); the acknowledgement is retried until it lands or the worker halts, so
        the entry is not left pending.

        With ``read_next`` (and no hand-over waiting, the worker not halting) the first attempt
        carries the thread's next read; returns the jobs it got (to run next), else ``[]``.
        """
        failures = 0
        jobs: list[queue.Job] = []
        while True:
            if reply is not None and self._settings.clock() >= deadline:
                reply = None
            try:
                if read_next and not self._halt.is_set() and self._handover.empty():
                    read_next = False  # one attempt only: its read may already have taken an entry
                    finished, jobs = queue.finish_and_read_sync(client, job, reply, consumer=self.consumer,
                                                                count=1, block_ms=_BLOCK_MS)
                    self._hold(jobs)
                else:
                    queue.finish_sync(client, job, reply)
                    finished = True
            except RedisError:
                read_next, finished = False, False
            if finished or (self._halt.is_set() and reply is None):
                return jobs
            failures += 1
            time.sleep(REDIS_BACKOFF.compute(failures))

    async def _drain(self) -> None:
        self._halt.set()
        deadline = time.monotonic() + self._settings.drain_s
        if self._busy:
            logger.info("draining running calls count=%d", self._busy)
        for thread in self._consumers:  # each returns within one XREADGROUP block or its call
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await asyncio.to_thread(thread.join, remaining)

    async def _beat(self) -> None:
        """One heartbeat; also measures this host's clock offset to Redis and Redis stalls."""
        sent = time.monotonic()
        redis_ms = await queue.heartbeat(self._redis, self.consumer, self._runner.threads)
        self._stall.ok(sent)
        self._offset_s = redis_ms / 1000 - self._settings.clock()

    async def _beat_forever(self) -> None:
        while True:
            with contextlib.suppress(RedisError):
                await self._beat()
            await asyncio.sleep(redis_keys.HEARTBEAT_INTERVAL_S)
