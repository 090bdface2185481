"""``ScriptBatcher`` against a real redis-server: concurrent calls share one round trip."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from pwc_mcp_core.script_batch import ScriptBatcher

INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
FAIL_ON_NEGATIVE = "if tonumber(ARGV[1]) < 0 then return redis.error_reply('negative') end return ARGV[1]"


@pytest.fixture
async def redis(redis_url: str):
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def _evalsha_calls(redis: Redis) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def test_concurrent_calls_each_get_their_own_result(redis: Redis) -> None:
    batcher = ScriptBatcher(redis, INCR)
    results = await asyncio.gather(*[batcher(["counter"], [n]) for n in range(1, 51)])
    assert sorted(results) == sorted(set(results))  # every call ran on its own, atomically
    assert int(await redis.get("counter")) == sum(range(1, 51))


async def test_calls_made_in_one_loop_iteration_travel_in_one_pipeline(redis: Redis) -> None:
    batcher = ScriptBatcher(redis, INCR)
    await batcher(["warm"], [1])  # loads the script
    sent: list[int] = []
    original = redis.pipeline

    def counting_pipeline(*args, **kwargs):
        sent.append(1)
        return original(*args, **kwargs)

    redis.pipeline = counting_pipeline  # type: ignore[method-assign]
    before = await _evalsha_calls(redis)
    await asyncio.gather(*[batcher(["k"], [1]) for _ in range(20)])
    assert sent == [1]
    assert await _evalsha_calls(redis) - before == 20


async def test_an_error_in_one_call_does_not_fail_the_others(redis: Redis) -> None:
    batcher = ScriptBatcher(redis, FAIL_ON_NEGATIVE)
    results = await asyncio.gather(batcher([], [1]), batcher([], [-1]), batcher([], [2]), return_exceptions=True)
    assert results[0] == b"1" and results[2] == b"2"
    assert isinstance(results[1], ResponseError) and "negative" in str(results[1])


async def test_a_script_redis_forgot_is_loaded_again(redis: Redis) -> None:
    batcher = ScriptBatcher(redis, INCR)
    assert await batcher(["c"], [1]) == 1
    await redis.script_flush()
    assert await batcher(["c"], [1]) == 2


async def test_an_unreachable_redis_fails_every_caller_of_the_batch() -> None:
    unreachable = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    batcher = ScriptBatcher(unreachable, INCR)
    results = await asyncio.gather(*[batcher(["k"], [1]) for _ in range(3)], return_exceptions=True)
    assert all(isinstance(result, (RedisError, OSError)) for result in results)
    await unreachable.aclose()
