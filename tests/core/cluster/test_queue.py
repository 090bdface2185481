"""The Redis call queue protocol against a real redis-server."""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from pwc_mcp_core.cluster import queue, redis_keys, scripts
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, SyncPipe
from pwc_mcp_core.cluster.replies import decode_reply, encode_reply
from pwc_mcp_core.runtime.dispatch import TOO_LARGE, Answer
from tests.helpers import await_replies


@pytest.fixture
async def redis(redis_url: str):
    client = Redis.from_url(redis_url)
    await queue.ensure_group(client)
    yield client
    await client.aclose()


@pytest.fixture
def sync_pipe(redis_url: str):
    client = SyncPipe(redis_url, timeout_s=5.0)
    yield client
    client.close()


async def _read(client: SyncPipe, **kwargs) -> list[queue.Job]:
    return await asyncio.to_thread(queue.read_jobs_sync, client, **kwargs)


async def _finish(client: SyncPipe, job: queue.Job, body: bytes | None) -> None:
    await asyncio.to_thread(queue.finish_sync, client, job, None if body is None else Answer(body))


@pytest.fixture
async def pipe(redis_url: str):
    pipe = RedisPipe(redis_url)
    yield pipe
    await pipe.close()


async def test_a_call_travels_from_enqueue_to_one_reply(redis: Redis, pipe: RedisPipe, sync_pipe: SyncPipe) -> None:
    await queue.heartbeat(redis, "w1")
    await queue.enqueue(pipe, rid="a" * 32, reply_key=redis_keys.reply_list("g1"), call_json='{"x":1}', max_backlog=10)

    jobs = await _read(sync_pipe, consumer="w1", count=5, block_ms=100)
    assert [(job.rid, job.call_json) for job in jobs] == [("a" * 32, '{"x":1}')]

    await _finish(sync_pipe, jobs[0], b'{"result":{}}')
    raw = await redis.rpop(redis_keys.reply_list("g1"))
    assert decode_reply(raw) == ("a" * 32, Answer(b'{"result":{}}'))
    assert await redis.xlen(redis_keys.calls_stream()) == 0
    assert await redis.ttl(redis_keys.reply_list("g1")) in (-2, redis_keys.REPLY_TTL_S)


async def test_enqueue_refuses_past_the_backlog_limit(redis: Redis, pipe: RedisPipe) -> None:
    for n in range(3):
        await queue.enqueue(pipe, rid=f"{n:032x}", reply_key="r", call_json="{}", max_backlog=3)
    with pytest.raises(queue.QueueFull):
        await queue.enqueue(pipe, rid="f" * 32, reply_key="r", call_json="{}", max_backlog=3)
    assert await redis.xlen(redis_keys.calls_stream()) == 3


async def test_calls_of_a_dead_worker_are_claimed_by_a_live_one(
        redis: Redis, pipe: RedisPipe, sync_pipe: SyncPipe) -> None:
    await queue.heartbeat(redis, "dead")
    await queue.enqueue(pipe, rid="b" * 32, reply_key="r", call_json="{}", max_backlog=10)
    assert len(await _read(sync_pipe, consumer="dead", count=1, block_ms=100)) == 1
    await queue.heartbeat(redis, "live")

    # While "dead" still beats, nothing is claimed.
    assert await queue.claim_orphans(redis, consumer="live", count=10) == []

    stale_ms = int((time.time() - redis_keys.HEARTBEAT_TTL_S - 1) * 1000)
    await redis.zadd(redis_keys.workers_set(), {"dead": stale_ms})
    claimed = await queue.claim_orphans(redis, consumer="live", count=10)
    assert [job.rid for job in claimed] == ["b" * 32]
    # The dead consumer owns nothing now and disappears on the next sweep.
    assert await queue.claim_orphans(redis, consumer="live", count=10) == []
    names = [c["name"] for c in await redis.xinfo_consumers(redis_keys.calls_stream(), queue.GROUP)]
    assert b"dead" not in names


async def test_malformed_entries_are_dropped_whether_read_or_claimed(redis: Redis, sync_pipe: SyncPipe) -> None:
    for n in range(2):
        await redis.xadd(redis_keys.calls_stream(), {"junk": str(n)})
    # One is read by a consumer thread; the other was read (raw) by a worker that then died.
    assert await redis.xreadgroup(queue.GROUP, "dead", {redis_keys.calls_stream(): ">"}, count=1)
    assert await _read(sync_pipe, consumer="live", count=5, block_ms=100) == []
    await redis.zadd(redis_keys.workers_set(), {"dead": int((time.time() - redis_keys.HEARTBEAT_TTL_S - 1) * 1000)})
    await queue.heartbeat(redis, "live")
    assert await queue.claim_orphans(redis, consumer="live", count=10) == []
    assert await redis.xlen(redis_keys.calls_stream()) == 0
    assert (await redis.xpending(redis_keys.calls_stream(), queue.GROUP))["pending"] == 0


async def test_live_workers_ignores_stale_heartbeats(redis: Redis) -> None:
    await queue.heartbeat(redis, "w-live")
    await redis.zadd(redis_keys.workers_set(), {"w-old": int((time.time() - 60) * 1000)})
    assert await queue.live_workers(redis) == ["w-live"]
    await queue.forget_worker(redis, "w-live")
    assert await queue.live_workers(redis) == []


def test_a_reply_without_request_id_or_tag_is_refused() -> None:
    for raw in (b"no-newline", b"\nA{}", b"rid\n", b"rid\nX{}", b"rid\nLtrailing"):
        with pytest.raises(ValueError):
            decode_reply(raw)


def test_the_reply_format_carries_an_answer_or_too_large() -> None:
    assert decode_reply(encode_reply("r1", Answer(b'{"result":{}}'))) == ("r1", Answer(b'{"result":{}}'))
    assert decode_reply(encode_reply("r2", TOO_LARGE)) == ("r2", TOO_LARGE)
    assert decode_reply(encode_reply("r3", Answer(b""))) == ("r3", Answer(b""))


async def test_waiting_replies_come_oldest_first_in_one_batch(redis: Redis, pipe: RedisPipe) -> None:
    for n in range(5):
        await redis.lpush("replies", encode_reply(f"{n:032x}", Answer(b"{}")))
    await redis.lpush("replies", b"malformed")  # dropped and logged, never delivered
    replies = await await_replies(pipe, "replies", timeout_s=1)
    assert replies == [(f"{n:032x}", Answer(b"{}")) for n in range(5)]
    assert await await_replies(pipe, "replies", timeout_s=0.1) == []


async def _command_calls(redis: Redis) -> dict[str, int]:
    """Commands Redis has run, by name (``INFO commandstats``; a script's commands count too)."""
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def test_finished_jobs_all_leave_the_stream(
        redis: Redis, pipe: RedisPipe, sync_pipe: SyncPipe) -> None:
    for n in range(10):
        await queue.enqueue(pipe, rid=f"{n:032x}", reply_key="replies", call_json="{}", max_backlog=100)
    jobs = await _read(sync_pipe, consumer="w", count=10, block_ms=100)
    await redis.script_load(scripts.load("finish"))  # cached, as in a running deployment
    before = await _command_calls(redis)
    for n, job in enumerate(jobs):
        await _finish(sync_pipe, job, b"{}" if n % 2 == 0 else None)
    after = await _command_calls(redis)
    ran = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    # one finish.lua per job, running 5 × (LPUSH, EXPIRE) + 10 × (XACK, XDEL); no lease, no ZREM
    assert ran.get("evalsha", 0) == 10
    assert {name: ran.get(name, 0) for name in ("lpush", "expire", "xack", "xdel", "zrem")} == {
        "lpush": 5, "expire": 5, "xack": 10, "xdel": 10, "zrem": 0}
    assert await redis.llen("replies") == 5  # acknowledged-only jobs send nothing
    assert await redis.xlen(redis_keys.calls_stream()) == 0
    assert (await redis.xpending(redis_keys.calls_stream(), queue.GROUP))["pending"] == 0


async def test_a_handed_over_lease_is_released_with_the_reply(
        redis: Redis, pipe: RedisPipe, sync_pipe: SyncPipe) -> None:
    await redis.zadd(redis_keys.concurrency_client("c1"), {"lease-1": 9e15, "other": 9e15})
    await redis.zadd(redis_keys.concurrency_global(), {"lease-1": 9e15, "other": 9e15})
    await queue.enqueue(pipe, rid="c" * 32, reply_key="replies", call_json="{}", max_backlog=10,
                        lease=("lease-1", "c1"))
    (job,) = await _read(sync_pipe, consumer="w", count=1, block_ms=100)
    assert job.lease == ("lease-1", "c1")
    await _finish(sync_pipe, job, b"{}")
    assert await redis.zrange(redis_keys.concurrency_client("c1"), 0, -1) == [b"other"]
    assert await redis.zrange(redis_keys.concurrency_global(), 0, -1) == [b"other"]
    assert await redis.llen("replies") == 1


async def test_malformed_entries_are_acknowledged_and_dropped_and_good_ones_still_read(
        redis: Redis, pipe: RedisPipe, sync_pipe: SyncPipe) -> None:
    await redis.xadd(redis_keys.calls_stream(), {"junk": "1"})
    await redis.xadd(redis_keys.calls_stream(), {"rid": b"\xff\xfe", "reply": "r", "call": "{}"})
    await redis.xadd(redis_keys.calls_stream(), {"rid": "a" * 32, "reply": "r", "call": "{}", "odd": "x"})
    jobs = await _read(sync_pipe, consumer="w", count=10, block_ms=100)
    assert [job.rid for job in jobs] == ["a" * 32]
    assert await redis.xlen(redis_keys.calls_stream()) == 1  # only the good entry remains, pending
    assert (await redis.xpending(redis_keys.calls_stream(), queue.GROUP))["pending"] == 1


async def test_a_reply_carries_the_next_read_in_the_same_write(redis: Redis, pipe: RedisPipe,
                                                               sync_pipe: SyncPipe) -> None:
    for rid in ("a", "b"):
        await queue.enqueue(pipe, rid=rid, reply_key=redis_keys.reply_list("g1"), call_json="{}", max_backlog=10)
    (first,) = await _read(sync_pipe, consumer="w1", count=1, block_ms=100)

    finished, jobs = await asyncio.to_thread(queue.finish_and_read_sync, sync_pipe, first, Answer(b"one"), consumer="w1",
                                             count=1, block_ms=100)
    assert finished and [job.rid for job in jobs] == ["b"]
    assert decode_reply(await redis.rpop(redis_keys.reply_list("g1"))) == ("a", Answer(b"one"))
    assert (await redis.xpending(redis_keys.calls_stream(), queue.GROUP))["pending"] == 1  # only "b", now read

    finished, jobs = await asyncio.to_thread(queue.finish_and_read_sync, sync_pipe, jobs[0], Answer(b"two"), consumer="w1",
                                             count=1, block_ms=50)
    assert finished and jobs == []  # nothing left: the read timed out
    assert await redis.xlen(redis_keys.calls_stream()) == 0


async def test_a_refused_reply_is_reported_and_the_entry_read_with_it_is_kept(redis: Redis, pipe: RedisPipe,
                                                                              sync_pipe: SyncPipe) -> None:
    await redis.set(redis_keys.reply_list("bad"), "not a list")  # LPUSH onto it is refused (WRONGTYPE)
    await queue.enqueue(pipe, rid="a", reply_key=redis_keys.reply_list("bad"), call_json="{}", max_backlog=10)
    await queue.enqueue(pipe, rid="b", reply_key=redis_keys.reply_list("g1"), call_json="{}", max_backlog=10)
    (first,) = await _read(sync_pipe, consumer="w1", count=1, block_ms=100)

    finished, jobs = await asyncio.to_thread(queue.finish_and_read_sync, sync_pipe, first, Answer(b"one"), consumer="w1",
                                             count=1, block_ms=100)
    assert not finished  # the caller finishes again with finish_sync
    assert [job.rid for job in jobs] == ["b"]


async def test_a_worker_finishes_after_redis_forgot_the_finish_script(redis: Redis, pipe: RedisPipe,
                                                                      sync_pipe: SyncPipe) -> None:
    for rid in ("a", "b"):
        await queue.enqueue(pipe, rid=rid, reply_key=redis_keys.reply_list("g1"), call_json="{}", max_backlog=10,
                            lease=(f"lease-{rid}", "c1"))
    await redis.zadd(redis_keys.concurrency_global(), {"lease-a": 1, "lease-b": 1})
    (first,) = await _read(sync_pipe, consumer="w1", count=1, block_ms=100)
    await redis.script_flush()  # as after a Redis restart: the EVALSHA is refused, the EVAL runs it

    finished, jobs = await asyncio.to_thread(queue.finish_and_read_sync, sync_pipe, first, Answer(b"one"), consumer="w1",
                                             count=1, block_ms=100)
    assert finished and [job.rid for job in jobs] == ["b"]
    assert decode_reply(await redis.rpop(redis_keys.reply_list("g1"))) == ("a", Answer(b"one"))
    assert await redis.zrange(redis_keys.concurrency_global(), 0, -1) == [b"lease-b"]  # the lease went back
    await redis.script_flush()
    await asyncio.to_thread(queue.finish_sync, sync_pipe, jobs[0], None)
    assert await redis.xlen(redis_keys.calls_stream()) == 0
    assert (await redis.xpending(redis_keys.calls_stream(), queue.GROUP))["pending"] == 0
