"""``build_dispatcher``: embedded mode gets the in-process pool, Redis mode the worker queue."""

from __future__ import annotations

from gateway.dispatch.executors import build_dispatcher
from gateway.dispatch.redis_executor import RedisExecutor
from pwc_mcp_core.mcp_server.local_executor import LocalExecutor
from tests.gateway.conftest import make_settings


async def test_embedded_mode_builds_the_thread_pool_executor() -> None:
    executor = build_dispatcher(make_settings().core)
    try:
        assert isinstance(executor, LocalExecutor)
    finally:
        await executor.close()


async def test_redis_mode_builds_the_redis_executor(redis_url: str) -> None:
    core = make_settings().core
    from dataclasses import replace

    executor = build_dispatcher(replace(core, redis_url=redis_url))
    try:
        assert isinstance(executor, RedisExecutor)
    finally:
        await executor.close()
