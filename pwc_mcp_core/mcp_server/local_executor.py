"""Run tool calls in this process on a bounded thread pool: the executor of embedded mode and stdio.

An executor is ``async (Call) -> bytes`` (ARCHITECTURE.md §2). The sync
``execution.execute`` runs on a worker thread; the event loop only waits,
bounded by the call's deadline. The execution runtime (catalog client, caches)
is built by ``start()`` (or the first call); building it sends no catalog request.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.errors import ExecutorTimeout, ExecutorUnavailable, ResponseTooLarge

__all__ = ["LocalExecutor"]


class LocalExecutor:
    """``async (Call) -> bytes`` backed by a thread pool in this process.

    Args:
        runtime_factory: builds the ``execution.Runtime`` (called once, on the first call).
        max_workers: pool size, i.e. calls running at once.
        max_response_bytes: larger bodies raise :class:`ResponseTooLarge`.
        run: the sync function run per call; default ``pwc_mcp_core.tools.execution.execute``.
        on_queue_wait: optional hook, seconds a call waited for a free thread.
        on_call: optional hook, seconds from submission to result.
        thread_name_prefix: names the pool's threads (visible in debuggers and py-spy).
        clock: wall clock (unix seconds) the call deadlines are judged by; a worker whose
            host clock is off passes its Redis-corrected clock here.

    A call's catalog requests are bounded by its deadline too (``Client.within``), so a
    thread is free again by then whatever the catalog does.
    """

    def __init__(self, runtime_factory: Callable[[], Any], *, max_workers: int, max_response_bytes: int,
                 run: Callable[[Call, Any], bytes] | None = None,
                 on_queue_wait: Callable[[float], None] | None = None,
                 on_call: Callable[[float], None] | None = None,
                 thread_name_prefix: str = "pwc-mcp-tool",
                 clock: Callable[[], float] = time.time) -> None:
        if run is None:
            from pwc_mcp_core.tools.execution import execute as run
        self._run_call = run
        self._runtime_factory = runtime_factory
        self._runtime: Any = None
        self._runtime_lock = threading.Lock()
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

    def _run(self, call: Call, submitted: float) -> bytes:
        if self._on_queue_wait is not None:
            self._on_queue_wait(time.perf_counter() - submitted)
        runtime = self._get_runtime()
        within = getattr(getattr(runtime, "client", None), "within", None)
        if within is None:  # a test runtime without the catalog client
            return self._run_call(call, runtime)
        with within(call.deadline - self._clock()):
            return self._run_call(call, runtime)

    def _get_runtime(self) -> Any:
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

    async def __call__(self, call: Call, admission: object = None) -> bytes:
        """Run ``call`` on a thread before ``call.deadline``.

        ``admission`` (the `server.Executor` argument) is ignored: the embedded edge
        admits a call fully before handing it over, so there is nothing to carry.

        Raises:
            ExecutorUnavailable: the executor is closed.
            ExecutorTimeout: the deadline passed (the thread finishes in the background).
            ResponseTooLarge: the body exceeds the response bound.
        """
        remaining = self._admit(call)
        submitted = time.perf_counter()
        future = asyncio.get_running_loop().run_in_executor(self._pool, self._run, call, submitted)
        try:
            body = await asyncio.wait_for(future, timeout=remaining)
        except TimeoutError:
            raise ExecutorTimeout("the call did not finish before its deadline") from None
        finally:
            self._observe(submitted)
        return self._bounded(body)

    def run_here(self, call: Call) -> bytes:
        """Run ``call`` in the calling thread (a worker's consumer thread), same checks as ``await``.

        Raises:
            ExecutorUnavailable: the executor is closed.
            ExecutorTimeout: the deadline had passed before the call started.
            ResponseTooLarge: the body exceeds the size bound.
        """
        self._admit(call)
        started = time.perf_counter()
        try:
            body = self._run(call, started)
        finally:
            self._observe(started)
        return self._bounded(body)

    def _admit(self, call: Call) -> float:
        """Seconds left before ``call.deadline``; raises if closed or already past it."""
        if self._closed:
            raise ExecutorUnavailable("the executor is closed")
        remaining = call.deadline - self._clock()
        if remaining <= 0:
            raise ExecutorTimeout("the call deadline passed before it started")
        return remaining

    def _observe(self, started: float) -> None:
        if self._on_call is not None:
            self._on_call(time.perf_counter() - started)

    def _bounded(self, body: bytes) -> bytes:
        if len(body) > self._max_response_bytes:
            raise ResponseTooLarge("the response exceeds the size bound")
        return body

    async def start(self) -> None:
        """Warm up (:meth:`warm`) on a thread, so the event loop keeps serving meanwhile."""
        await asyncio.to_thread(self.warm)

    async def close(self) -> None:
        """Refuse new calls and stop the pool without waiting for running ones."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
