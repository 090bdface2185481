"""Executors: where ``tools/call`` and ``resources/read`` run (ARCHITECTURE.md §2–3).

An executor is ``async (Call) -> bytes`` (the JSON-RPC body without ``jsonrpc``/``id``).
Embedded mode uses :class:`EmbeddedExecutor` (a bounded thread pool in the gateway
process); Redis mode uses ``gateway.redis_executor.RedisExecutor`` (workers over Redis),
imported lazily by :func:`build_executor` so embedded mode never needs it.
Both may expose ``start()``, ``close()`` and ``live_workers``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pwc_mcp_core.call import Call
from pwc_mcp_core.errors import ConfigError, ExecutorTimeout, ExecutorUnavailable, ResponseTooLarge

from gateway import metrics

__all__ = ["EmbeddedExecutor", "Executor", "build_executor"]


class Executor(Protocol):
    """``async (Call) -> bytes``; raises the typed ``ExecutorError`` subclasses."""

    async def __call__(self, call: Call) -> bytes: ...


class EmbeddedExecutor:
    """Runs ``execution.execute(call, runtime)`` in a thread pool inside the gateway.

    Args:
        runtime: a ``pwc_mcp_core.execution.Runtime`` (built once per process).
        max_workers: pool size; the global concurrency limit bounds in-flight calls anyway.
        max_response_bytes: larger bodies raise ``ResponseTooLarge``.
        run: the sync function run per call; default ``pwc_mcp_core.execution.execute``.
    """

    def __init__(self, runtime: Any, *, max_workers: int, max_response_bytes: int,
                 run: Callable[[Call, Any], bytes] | None = None) -> None:
        if run is None:
            from pwc_mcp_core.execution import execute as run
        self._run_call = run
        self._runtime = runtime
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="pwc-mcp-tool")
        self._max_response_bytes = max_response_bytes
        self._closed = False

    @classmethod
    def build(cls, core: Any) -> EmbeddedExecutor:
        """Build the runtime with core's in-memory cache; the pool is sized by the global limit."""
        from pwc_mcp_core.cache import MemoryCache
        from pwc_mcp_core.execution import Runtime

        runtime = Runtime.build(core, MemoryCache())
        return cls(runtime, max_workers=max(core.worker_threads, core.global_concurrency_limit),
                   max_response_bytes=core.max_body_bytes)

    @property
    def live_workers(self) -> int:
        """Always 1 while open (the gateway process itself runs the calls)."""
        return 0 if self._closed else 1

    def _run(self, call: Call, queued_at: float) -> bytes:
        metrics.observe_queue_wait(time.perf_counter() - queued_at)
        return self._run_call(call, self._runtime)

    async def __call__(self, call: Call) -> bytes:
        """Run ``call`` in a thread before ``call.deadline``.

        Raises:
            ExecutorUnavailable: the executor is closed.
            ExecutorTimeout: the deadline passed (the thread finishes in the background).
            ResponseTooLarge: the body exceeds the response bound.
        """
        if self._closed:
            raise ExecutorUnavailable("the executor is closed")
        started = time.perf_counter()
        remaining = call.deadline - time.time() if call.deadline else None
        if remaining is not None and remaining <= 0:
            raise ExecutorTimeout("the call deadline passed before it started")
        future = asyncio.get_running_loop().run_in_executor(self._pool, self._run, call, started)
        try:
            body = await asyncio.wait_for(future, timeout=remaining)
        except TimeoutError:
            raise ExecutorTimeout("the call did not finish before its deadline") from None
        finally:
            metrics.observe_call(time.perf_counter() - started)
        if len(body) > self._max_response_bytes:
            raise ResponseTooLarge("the response exceeds the size bound")
        return body

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)


def build_executor(core: Any) -> Any:
    """The executor for the configured mode: Redis when ``core.redis_url`` is set, else embedded.

    Raises:
        ConfigError: Redis mode is configured but the Redis executor is not installed.
    """
    if core.redis_url is None:
        return EmbeddedExecutor.build(core)
    try:
        from gateway.redis_executor import RedisExecutor
    except ImportError:
        raise ConfigError("PWC_MCP_REDIS_URL is set but gateway.redis_executor is not available; "
                          "unset PWC_MCP_REDIS_URL to run embedded") from None
    return RedisExecutor(core.redis_url, max_response_bytes=core.max_body_bytes, observe=metrics.observe_call)
