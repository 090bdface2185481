"""Run calls in this process on a bounded thread pool: the `Dispatcher` of embedded mode and stdio.

The sync ``execution.execute`` runs on a pool thread; the event loop only waits, bounded by
the call's deadline, and gets one `Outcome` back (ARCHITECTURE.md §2). A worker process
runs calls in its own consumer threads with `LocalDispatcher.run_here`. The execution
runtime (catalog client, caches) is built by ``start()`` (or the first call); building it
sends no catalog request.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import (
    TIMED_OUT,
    Answer,
    Deferred,
    Outcome,
    PoolState,
    TimedOut,
    TooLarge,
    Unavailable,
    bounded,
)

if TYPE_CHECKING:  # the tool tables load on first use, not on import
    from pwc_mcp_core.tools.execution import Runtime

__all__ = ["LocalDispatcher"]

_CLOSED = Unavailable("the dispatcher is closed")


class LocalDispatcher:
    """A `Dispatcher` backed by a thread pool in this process.

    Args:
        runtime_factory: builds the ``execution.Runtime`` (called once, on the first call).
        max_workers: pool size, i.e. calls running at once.
        max_response_bytes: the response bound (`dispatch.bounded`).
        run: the sync function run per call; default ``pwc_mcp_core.tools.execution.execute``.
        on_queue_wait: optional hook, seconds a call waited for a free thread.
        on_call: optional hook, seconds from submission to result.
        thread_name_prefix: names the pool's threads (visible in debuggers and py-spy).
        clock: wall clock (unix seconds) the call deadlines are judged by; a worker whose
            host clock is off passes its Redis-corrected clock here.

    A call's catalog requests are bounded by its deadline too (``Client.within``), so a
    thread is free again by then whatever the catalog does. It never runs an admission
    itself (`runs_admission` is False): the embedded edge admits a call before handing it over.
    """

    runs_admission = False

    def __init__(self, runtime_factory: Callable[[], Runtime], *, max_workers: int, max_response_bytes: int,
                 run: Callable[[Call, Runtime], bytes] | None = None,
                 on_queue_wait: Callable[[float], None] | None = None,
                 on_call: Callable[[float], None] | None = None,
                 thread_name_prefix: str = "pwc-mcp-tool",
                 clock: Callable[[], float] = time.time) -> None:
        if run is None:
            from pwc_mcp_core.tools.execution import execute

            run = execute
        self._run_call: Callable[[Call, Runtime], bytes] = run
        self._runtime_factory = runtime_factory
        self._runtime: Runtime | None = None
        self._runtime_lock = threading.Lock()
        self._threads = max_workers
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._max_response_bytes = max_response_bytes
        self._on_queue_wait = on_queue_wait
        self._on_call = on_call
        self._closed = False
        self._clock = clock

    @property
    def live_workers(self) -> int:
        """1 while open: this process itself runs the calls."""
        return 0 if self._closed else 1

    def pool_state(self) -> PoolState:
        """The pool's size; running and waiting calls are not tracked here (``/metrics`` has them)."""
        return PoolState(self._threads, 0, 0)

    def _run(self, call: Call, submitted: float) -> bytes:
        if self._on_queue_wait is not None:
            self._on_queue_wait(time.perf_counter() - submitted)
        runtime = self._get_runtime()
        with runtime.client.within(call.deadline - self._clock()):
            return self._run_call(call, runtime)

    def _get_runtime(self) -> Runtime:
        with self._runtime_lock:
            if self._runtime is None:
                self._runtime = self._runtime_factory()
            return self._runtime

    def warm(self) -> None:
        """Build the runtime and the per-process tables of ``execution.warm`` now (blocking,
        about 0.1 s), so the first calls of many threads do not each build them. No catalog
        request is made.

        Raises:
            whatever the runtime factory raises (e.g. ``ValueError`` without a cursor key).
        """
        from pwc_mcp_core.tools.execution import warm

        warm()
        self._get_runtime()

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        """Run ``call`` on a pool thread before ``call.deadline``.

        ``admission`` is always ``None`` here (`runs_admission` is False). On `TimedOut`
        the thread finishes in the background; its answer is dropped.
        """
        early = self._refuse(call)
        if early is not None:
            return early
        submitted = time.perf_counter()
        future = asyncio.get_running_loop().run_in_executor(self._pool, self._run, call, submitted)
        try:
            body = await asyncio.wait_for(future, timeout=call.deadline - self._clock())
        except TimeoutError:
            return TIMED_OUT
        finally:
            self._observe(submitted)
        return bounded(body, self._max_response_bytes)

    def run_here(self, call: Call) -> Answer | TimedOut | TooLarge | Unavailable:
        """Run ``call`` in the calling thread (a worker's consumer thread), with `dispatch`'s checks.

        `TimedOut` means the deadline had passed before the call started.
        """
        early = self._refuse(call)
        if early is not None:
            return early
        started = time.perf_counter()
        try:
            body = self._run(call, started)
        finally:
            self._observe(started)
        return bounded(body, self._max_response_bytes)

    def _refuse(self, call: Call) -> TimedOut | Unavailable | None:
        """The outcome of a call that cannot start: closed, or already past its deadline."""
        if self._closed:
            return _CLOSED
        return TIMED_OUT if call.deadline - self._clock() <= 0 else None

    def _observe(self, started: float) -> None:
        if self._on_call is not None:
            self._on_call(time.perf_counter() - started)

    async def start(self) -> None:
        """Warm up (:meth:`warm`) on a thread, so the event loop keeps serving meanwhile."""
        await asyncio.to_thread(self.warm)

    async def close(self) -> None:
        """Refuse new calls and stop the pool without waiting for running ones."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
