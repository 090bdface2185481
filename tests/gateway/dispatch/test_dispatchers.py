"""``build_dispatcher``: embedded mode gets the in-process pool, Redis mode the worker queue."""

from __future__ import annotations

from gateway.dispatch.dispatchers import build_dispatcher
from gateway.dispatch.redis_dispatcher import RedisDispatcher
from pwc_mcp_core.mcp_server.local_dispatcher import LocalDispatcher
from tests.gateway.conftest import make_settings


async def test_embedded_mode_builds_the_thread_pool_executor() -> None:
    executor = build_dispatcher(make_settings().core)
    try:
        assert isinstance(executor, LocalDispatcher)
    finally:
        await executor.close()


async def test_redis_mode_builds_the_redis_dispatcher(redis_url: str) -> None:
    core = make_settings().core
    from dataclasses import replace

    executor = build_dispatcher(replace(core, redis_url=redis_url))
    try:
        assert isinstance(executor, RedisDispatcher)
    finally:
        await executor.close()
