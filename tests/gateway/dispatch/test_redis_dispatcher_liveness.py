"""The gateway's cached worker count across a Redis outage (real redis-server, no workers).

An unreachable Redis says nothing about the workers: the count keeps its last judgement
while ``redis_ok`` is False (``/health`` is 503 on ``redis`` meanwhile), so calls sent the
moment Redis is back are not refused as "no worker alive". When Redis comes back empty (a
restart without persistence), the first refresh counts what is really registered: none.
"""

from __future__ import annotations

import asyncio
from typing import Any

from redis.asyncio import Redis

from gateway.dispatch.redis_dispatcher import RedisDispatcher
from pwc_mcp_core.cluster import queue


async def _until(predicate: Any, timeout_s: float = 10.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.05)


async def test_an_outage_keeps_the_last_count_and_an_empty_restart_is_counted_as_empty(
        redis_server: Any, redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    await queue.heartbeat(client, "w0#a", threads=4)
    await client.aclose()
    executor = RedisDispatcher(redis_url)
    await executor.start()
    try:
        assert (executor.redis_ok, executor.live_workers, executor.pool_state().threads) == (True, 1, 4)
        redis_server.stop()
        try:
            await _until(lambda: not executor.redis_ok)
            await asyncio.sleep(1.5)  # more refreshes fail meanwhile
            assert executor.live_workers == 1  # not "0 workers": unknown, and /health says redis is down
        finally:
            redis_server.start()  # empty: the heartbeat is gone
        await _until(lambda: executor.redis_ok)
        assert executor.live_workers == 0 and executor.pool_state().threads == 0
    finally:
        await executor.close()
