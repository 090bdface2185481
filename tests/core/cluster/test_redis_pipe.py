"""``RedisPipe`` and ``ScriptRunner`` against a real redis-server: ordered replies, one write
per loop iteration, per-command errors, and recovery from lost or hung connections."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pwc_mcp_core.cluster.errors import StoreConnectionLost, StoreReplyLost
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, ScriptRunner, SyncPipe
from tests.helpers import free_port, spawn_redis, stop_process

INCR = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
FAIL_ON_NEGATIVE = "if tonumber(ARGV[1]) < 0 then return redis.error_reply('negative') end return ARGV[1]"


@pytest.fixture
async def redis(redis_url: str):
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
async def pipe(redis_url: str):
    pipe = RedisPipe(redis_url, timeout_s=2.0)
    yield pipe
    await pipe.close()


async def test_concurrent_commands_each_get_their_own_reply_in_order(pipe: RedisPipe, redis: Redis) -> None:
    results = await asyncio.gather(*[pipe.execute("INCRBY", "counter", n) for n in range(1, 101)])
    assert sorted(results) == sorted(set(results))  # every command ran on its own, atomically
    assert int(await redis.get("counter")) == sum(range(1, 101))
    echoed = await asyncio.gather(*[pipe.execute("ECHO", f"v{n}") for n in range(50)])
    assert echoed == [f"v{n}".encode() for n in range(50)]


async def test_commands_of_one_iteration_leave_in_one_write(pipe: RedisPipe) -> None:
    await pipe.execute("PING")  # connects
    writes: list[int] = []
    original = pipe._conn.send_packed_command  # counting the writes is the point

    async def counting(command, check_health=True):
        writes.append(1)
        return await original(command, check_health=check_health)

    pipe._conn.send_packed_command = counting
    await asyncio.gather(*[pipe.execute("INCR", "k") for _ in range(30)], pipe.execute_many([("GET", "k")] * 3))
    assert writes == [1]


async def test_a_refused_command_fails_alone(pipe: RedisPipe) -> None:
    results = await asyncio.gather(pipe.execute("SET", "s", "1"), pipe.execute("INCR", "nope", "extra"),
                                   pipe.execute("GET", "s"), return_exceptions=True)
    assert results[0] == b"OK"
    assert isinstance(results[1], ResponseError)
    assert results[2] == b"1"
    # In a batch, the WRONGTYPE error sits in its place and the others still answer:
    many = await pipe.execute_many([("GET", "s"), ("LPUSH", "s", "x"), ("GET", "s")])
    assert many[0] == b"1" and isinstance(many[1], ResponseError) and many[2] == b"1"


async def test_scripts_run_by_sha_errors_stay_per_call_and_forgotten_scripts_are_reloaded(
        pipe: RedisPipe, redis: Redis) -> None:
    incr, fail = ScriptRunner(pipe, INCR), ScriptRunner(pipe, FAIL_ON_NEGATIVE)
    assert await incr(["c"], [1]) == 1
    results = await asyncio.gather(fail([], [1]), fail([], [-1]), fail([], [2]), return_exceptions=True)
    assert results[0] == b"1" and results[2] == b"2"
    assert isinstance(results[1], ResponseError) and "negative" in str(results[1])
    await redis.script_flush()
    assert await incr(["c"], [1]) == 2


async def test_an_unreachable_redis_fails_fast_and_every_caller() -> None:
    pipe = RedisPipe("redis://127.0.0.1:1", timeout_s=2.0, connect_timeout_s=0.5)
    results = await asyncio.gather(*[pipe.execute("PING") for _ in range(3)], return_exceptions=True)
    assert all(isinstance(result, RedisError) for result in results)
    await pipe.close()


async def test_a_command_lost_after_it_was_written_says_it_may_have_run(redis: Redis, redis_url: str) -> None:
    """`StoreReplyLost` (the gateway sends its enqueue once more) only for a written command;
    one that never reached Redis is a plain `StoreConnectionLost`."""
    pipe = RedisPipe(redis_url, timeout_s=5.0)
    try:
        blocked = asyncio.ensure_future(pipe.execute("BLPOP", "pwc-test:never", 5))
        for _ in range(100):  # until the BLPOP is written and blocked in Redis
            if any(c.get("cmd") == "blpop" for c in await redis.client_list()):
                break
            await asyncio.sleep(0.02)
        await redis.client_kill_filter(_type="normal", skipme=True)
        with pytest.raises(StoreReplyLost):
            await blocked
        assert await pipe.execute("PING") == b"PONG"  # the next command connects again
    finally:
        await pipe.close()
    unreachable = RedisPipe("redis://127.0.0.1:1", timeout_s=2.0, connect_timeout_s=0.5)
    try:
        with pytest.raises(StoreConnectionLost) as raised:
            await unreachable.execute("PING")
        assert not isinstance(raised.value, StoreReplyLost)
    finally:
        await unreachable.close()


async def test_a_restarted_redis_is_reconnected_on_the_next_command(redis_server, redis_url: str) -> None:
    pipe = RedisPipe(redis_url, timeout_s=2.0, connect_timeout_s=0.5)
    try:
        assert await pipe.execute("PING") == b"PONG"
        redis_server.stop()
        with pytest.raises(RedisConnectionError):
            await pipe.execute("PING")
        redis_server.start()
        assert await pipe.execute("PING") == b"PONG"
    finally:
        await pipe.close()


async def test_a_hung_redis_times_out_and_the_pipe_recovers(redis_server, redis_url: str) -> None:
    pipe = RedisPipe(redis_url, timeout_s=0.3)
    try:
        assert await pipe.execute("PING") == b"PONG"
        os.kill(redis_server.proc.pid, signal.SIGSTOP)
        try:
            with pytest.raises(RedisTimeoutError):
                await pipe.execute("PING")
        finally:
            os.kill(redis_server.proc.pid, signal.SIGCONT)
        assert await pipe.execute("PING") == b"PONG"
    finally:
        await pipe.close()


@pytest.mark.slow
async def test_a_hang_after_a_stream_of_answered_commands_fails_every_waiter_in_time(redis_server,
                                                                                    redis_url: str) -> None:
    """One timer watches the oldest unanswered command: answered ones must not hide a later hang.

    The timeout leaves room for a loaded machine (parallel workers on shared cores): at 0.3 s a
    healthy Redis answering late failed the stream before the hang began.
    """
    pipe = RedisPipe(redis_url, timeout_s=1.0)
    try:
        loop = asyncio.get_running_loop()
        until = loop.time() + 2.2  # past two timeouts: the timer has re-armed over answered commands
        while loop.time() < until:
            assert await asyncio.gather(*(pipe.execute("PING") for _ in range(20))) == [b"PONG"] * 20
            await asyncio.sleep(0.02)
        os.kill(redis_server.proc.pid, signal.SIGSTOP)
        try:
            started = loop.time()
            results = await asyncio.gather(*(pipe.execute("PING") for _ in range(5)), return_exceptions=True)
            assert all(isinstance(r, RedisTimeoutError) for r in results), results
            assert loop.time() - started < 5  # bounded by the timeout, not by the hang
        finally:
            os.kill(redis_server.proc.pid, signal.SIGCONT)
        assert await pipe.execute("PING") == b"PONG"
    finally:
        await pipe.close()


async def test_a_closed_pipe_refuses_commands(redis_url: str) -> None:
    pipe = RedisPipe(redis_url)
    await pipe.execute("PING")
    await pipe.close()
    with pytest.raises(RedisConnectionError):
        await pipe.execute("PING")


def test_commands_are_packed_as_redis_py_packs_them() -> None:
    from redis.asyncio.connection import Connection
    from redis.exceptions import DataError

    from pwc_mcp_core.cluster.redis_pipe import pack_command

    reference = Connection()
    for args in [("PING",), ("SET", "k", "välue"), ("EVALSHA", "ab", 2, "k1", b"k2\r\n", 0, -7, 1.5, 10**20)]:
        assert pack_command(args) == b"".join(reference.pack_command(*args))
    for bad in (None, True, object()):
        with pytest.raises(DataError):
            pack_command(("SET", "k", bad))


def test_the_sync_pipe_keeps_order_and_per_command_errors_and_reconnects(redis_server, redis_url: str) -> None:
    pipe = SyncPipe(redis_url, timeout_s=2.0, connect_timeout_s=0.5)
    try:
        replies = pipe.execute_many([("SET", "sp", "1"), ("INCR", "sp", "x"), ("INCR", "sp"), ("GET", "sp")])
        assert replies[0] == b"OK" and isinstance(replies[1], ResponseError) and replies[2:] == [2, b"2"]
        redis_server.stop()
        with pytest.raises(RedisError):
            pipe.execute_many([("PING",)])
        redis_server.start()
        assert pipe.execute_many([("PING",)]) == [b"PONG"]
    finally:
        pipe.close()


async def test_submit_hands_each_outcome_to_its_callback_where_the_reply_is_read(redis: Redis, redis_url: str) -> None:
    """`RedisPipe.submit` (the gateway's reply wait): the reply, a refusal or the lost connection
    reaches the callback with no task in between, and the pipe stays in order around it."""
    pipe = RedisPipe(redis_url, timeout_s=5.0)
    outcomes: list[object] = []
    try:
        pipe.submit(("SET", "pwc-test:submit", "1"), outcomes.append)
        pipe.submit(("INCRBY", "pwc-test:submit", "x"), outcomes.append)  # refused alone
        assert await pipe.execute("GET", "pwc-test:submit") == b"1"  # after both, in order
        assert outcomes[0] == b"OK"
        assert isinstance(outcomes[1], ResponseError)
        pipe.submit(("BLPOP", "pwc-test:never", 5), outcomes.append)
        for _ in range(100):  # until the BLPOP is written and blocked in Redis
            if any(c.get("cmd") == "blpop" for c in await redis.client_list()):
                break
            await asyncio.sleep(0.02)
        await redis.client_kill_filter(_type="normal", skipme=True)
        for _ in range(100):
            if len(outcomes) == 3:
                break
            await asyncio.sleep(0.02)
        assert isinstance(outcomes[2], StoreReplyLost)
        assert await pipe.execute("PING") == b"PONG"  # the next command connects again
    finally:
        await pipe.close()
    with pytest.raises(StoreConnectionLost):
        pipe.submit(("PING",), outcomes.append)
    assert len(outcomes) == 3


def test_both_pipes_read_their_replies_over_tls(tmp_path: Path) -> None:
    """A ``rediss://`` URL: `RedisPipe` takes over reading an SSL transport as it does a plain one
    (its own protocol under asyncio's TLS layer), and `SyncPipe` reads an SSL socket."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    port = free_port()
    proc = spawn_redis(port, tmp_path, tls=(cert, key))
    url = f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=none"
    try:
        async def over_tls() -> list[object]:
            pipe = RedisPipe(url, timeout_s=5.0)
            outcomes: list[object] = []
            try:
                replies = await pipe.execute_many([("SET", "tls", "1"), ("INCRBY", "tls", "x"), ("GET", "tls")])
                pipe.submit(("GET", "tls"), outcomes.append)
                assert await pipe.execute("PING") == b"PONG"
                return [*replies, *outcomes]
            finally:
                await pipe.close()

        ok, refused, value, submitted = asyncio.run(over_tls())
        assert (ok, value, submitted) == (b"OK", b"1", b"1")
        assert isinstance(refused, ResponseError)
        sync = SyncPipe(url, timeout_s=5.0)
        try:
            assert sync.execute_many([("GET", "tls"), ("INCRBY", "tls", "x"), ("PING",)])[::2] == [b"1", b"PONG"]
        finally:
            sync.close()
    finally:
        stop_process(proc)
