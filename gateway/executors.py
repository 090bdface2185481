"""Executors: where ``tools/call`` and ``resources/read`` run (ARCHITECTURE.md §2–3).

An executor is ``async (Call, admission) -> bytes`` (the JSON-RPC body without
``jsonrpc``/``id``; ``admission`` is the endpoint's `DispatchTicket`, or ``None``).
Embedded mode uses core's ``LocalExecutor`` (a bounded thread pool in the gateway
process, feeding the gateway's metrics); Redis mode uses ``gateway.redis_executor.RedisExecutor`` (workers over Redis),
imported lazily by :func:`build_executor` so embedded mode never needs it.
Both may expose ``start()``, ``close()`` and ``live_workers``.
"""

from __future__ import annotations

from typing import Any, Protocol

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.mcp_server.local_executor import LocalExecutor

from gateway import metrics
from gateway.dispatch_ticket import DispatchTicket

__all__ = ["Executor", "build_embedded_executor", "build_executor"]


class Executor(Protocol):
    """``async (Call, admission) -> bytes``; raises the typed ``ExecutorError`` subclasses.

    ``admission`` is the endpoint's `gateway.dispatch_ticket.DispatchTicket` for the call,
    or ``None`` (a call the endpoint did not admit with a lease, or stdio).
    """

    async def __call__(self, call: Call, admission: DispatchTicket | None = None) -> bytes: ...


def build_embedded_executor(core: Any) -> LocalExecutor:
    """A ``LocalExecutor`` with core's in-memory cache; the pool is sized by the global limit."""
    from pwc_mcp_core.runtime.caches import MemoryCache
    from pwc_mcp_core.tools.execution import Runtime

    return LocalExecutor(lambda: Runtime.build(core, MemoryCache()),
                         max_workers=max(core.worker_threads, core.global_concurrency_limit),
                         max_response_bytes=core.max_body_bytes,
                         on_queue_wait=metrics.observe_queue_wait, on_call=metrics.observe_call)


def build_executor(core: Any) -> Any:
    """The executor for the configured mode: Redis when ``core.redis`` is set, else embedded."""
    if core.redis is None:
        return build_embedded_executor(core)
    from gateway.redis_executor import RedisExecutor

    return RedisExecutor(core.redis, max_response_bytes=core.max_body_bytes, observe=metrics.observe_call)
