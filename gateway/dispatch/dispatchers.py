"""Dispatchers: where ``tools/call`` and ``resources/read`` run (ARCHITECTURE.md §2–3).

Both implement `pwc_mcp_core.runtime.dispatch.Dispatcher`. Embedded mode uses core's
``LocalDispatcher`` (a bounded thread pool in the gateway process, feeding the gateway's
metrics); Redis mode uses ``gateway.dispatch.redis_dispatcher.RedisDispatcher`` (workers over Redis),
imported lazily by :func:`build_dispatcher` so embedded mode never needs it.
"""

from __future__ import annotations

from gateway.shared import metrics
from pwc_mcp_core.mcp_server.local_dispatcher import LocalDispatcher
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.runtime.dispatch import Dispatcher

__all__ = ["build_dispatcher", "build_local_dispatcher"]


def build_local_dispatcher(core: CoreSettings) -> LocalDispatcher:
    """A ``LocalDispatcher`` with core's in-memory cache; the pool is sized by the global limit."""
    from pwc_mcp_core.runtime.caches import MemoryCache
    from pwc_mcp_core.tools.execution import Runtime

    return LocalDispatcher(lambda: Runtime.build(core, MemoryCache()),
                         max_workers=max(core.worker_threads, core.global_concurrency_limit),
                         max_response_bytes=core.max_body_bytes,
                         on_queue_wait=metrics.observe_queue_wait, on_call=metrics.observe_call)


def build_dispatcher(core: CoreSettings) -> Dispatcher:
    """The dispatcher for the configured mode: Redis when ``core.redis`` is set, else embedded."""
    if core.redis is None:
        return build_local_dispatcher(core)
    from gateway.dispatch.redis_dispatcher import RedisDispatcher

    return RedisDispatcher(core.redis, max_response_bytes=core.max_body_bytes, observe=metrics.observe_call)
