"""Deferred admission in Redis mode: a tool call is admitted and queued by one script
(``admit_enqueue.lua``) and the answers keep the documented admission order.

The gateway is the real app with the real Redis executor; the worker is an in-process
echo consumer built on the real queue functions, so the wire format, the lease hand-off
and the limits are the production ones (real redis-server).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from gateway.admission import limits
from gateway.dispatch.redis_dispatcher import RedisDispatcher
from gateway.process.app import create_app
from pwc_mcp_core.cluster import queue, redis_keys, scripts
from pwc_mcp_core.cluster.limits import RedisLimiter
from pwc_mcp_core.cluster.redis_pipe import SyncPipe
from pwc_mcp_core.runtime.dispatch import Answer
from tests.gateway.conftest import (
    FAKE_TOOLS,
    JSON_HEADERS,
    TOOL_RESULT,
    make_settings,
    rpc,
    tool_call,
)
from tests.helpers import refusal_error


def me(name: str, **extra: str) -> dict[str, str]:
    return {**JSON_HEADERS, "X-PwC-MCP-Client": name, **extra}


class EchoWorker:
    """Consumes the calls stream and answers every call with ``TOOL_RESULT``.

    While ``gate`` is clear, calls are read but not answered (they hold their leases).
    """

    def __init__(self, redis_url: str) -> None:
        self.redis = aioredis.Redis.from_url(redis_url)
        self.gate = asyncio.Event()
        self.gate.set()
        self.read = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.leases: list[tuple[str, str] | None] = []
        self._task: asyncio.Task[None] | None = None
        self.reader = SyncPipe(redis_url, timeout_s=5.0)
        self.writer = SyncPipe(redis_url, timeout_s=5.0)
        self._write_lock = threading.Lock()  # a SyncPipe serves one thread at a time

    async def __aenter__(self) -> EchoWorker:
        await queue.ensure_group(self.redis)
        await queue.heartbeat(self.redis, "echo-worker")
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.redis.aclose()
        self.reader.close()
        self.writer.close()

    async def _run(self) -> None:
        while True:
            try:
                jobs = await asyncio.to_thread(queue.read_jobs_sync, self.reader, consumer="echo-worker", count=16,
                                               block_ms=100)
            except RedisError:  # a test stopped Redis: come back when it does (fresh and empty)
                await asyncio.sleep(0.1)
                with contextlib.suppress(RedisError):
                    await queue.ensure_group(self.redis)
                    await queue.heartbeat(self.redis, "echo-worker")
                continue
            for job in jobs:
                self.read += 1
                self.leases.append(job.lease)
                task = asyncio.create_task(self._answer(job))
                self.tasks.add(task)  # the loop holds tasks weakly: keep each until it ends
                task.add_done_callback(self.tasks.discard)

    async def _answer(self, job: queue.Job) -> None:
        await self.gate.wait()
        await asyncio.to_thread(self._finish, job)

    def _finish(self, job: queue.Job) -> None:
        with self._write_lock:
            for attempt in range(3):  # as a real worker does: a restarted Redis costs one failed write
                try:
                    queue.finish_sync(self.writer, job, Answer(TOOL_RESULT))
                    return
                except RedisError:
                    if attempt == 2:
                        raise


@pytest.fixture
async def worker(redis_url: str) -> AsyncIterator[EchoWorker]:
    async with EchoWorker(redis_url) as echo:
        yield echo


async def _gateway(aiohttp_client, redis_url: str, *, max_backlog: int | None = None, **limits_: int):
    executor = RedisDispatcher(redis_url, max_backlog=max_backlog) if max_backlog is not None else None
    return await aiohttp_client(create_app(make_settings(redis_url=redis_url, **limits_), dispatcher=executor,
                                           tools=FAKE_TOOLS))


async def _leases(redis_url: str) -> int:
    client = aioredis.Redis.from_url(redis_url)
    try:
        return await client.zcard(redis_keys.concurrency_global())
    finally:
        await client.aclose()


async def test_tool_calls_are_deferred_admitted_and_answered_until_the_budget_is_spent(
        aiohttp_client, redis_url: str, worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=3)
    statuses = [(await client.post("/mcp", data=tool_call(), headers=me("a"))).status for _ in range(3)]
    assert statuses == [200, 200, 200]
    refused = await client.post("/mcp", data=tool_call(), headers=me("a"))
    assert refused.status == 429
    assert refusal_error(await refused.read()) == "rate_limit_exceeded"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    # The script's reply names the limit, and the message is that limit's own.
    assert (await refused.json())["error"]["data"]["limit"] == "requests"
    assert worker.read == 3  # the refused call was never queued
    assert all(lease is not None for lease in worker.leases)  # each call handed its lease over
    assert await _leases(redis_url) == 0  # ...and the worker gave every one back


async def test_the_scripts_semantic_refusal_says_keyword_mode_still_works(aiohttp_client, redis_url: str,
                                                                          worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, semantic_limit=1)
    hybrid = tool_call("search_papers", {"query": "q"})
    assert (await client.post("/mcp", data=hybrid, headers=me("s"))).status == 200
    refused = await client.post("/mcp", data=hybrid, headers=me("s"))
    error = (await refused.json())["error"]
    assert refused.status == 429 and error["data"]["limit"] == "semantic"
    assert "go on now with search_papers mode=keyword" in error["message"]
    keyword = tool_call("search_papers", {"query": "q", "mode": "keyword"})
    assert (await client.post("/mcp", data=keyword, headers=me("s"))).status == 200


async def test_a_call_that_never_reaches_the_executor_is_still_counted_and_refused_in_order(
        aiohttp_client, redis_url: str, worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=2)
    unknown = tool_call("no_such_tool")
    first = await client.post("/mcp", data=unknown, headers=me("b"))
    assert first.status == 200 and (await first.json())["error"]["code"] == -32602
    assert (await client.post("/mcp", data=tool_call(), headers=me("b"))).status == 200
    # Over the limit, the limits answer before the JSON-RPC error would.
    assert (await client.post("/mcp", data=unknown, headers=me("b"))).status == 429
    assert worker.read == 1


async def test_limits_come_before_406_and_415_for_tool_calls(aiohttp_client, redis_url: str,
                                                            worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=1)
    assert (await client.post("/mcp", data=tool_call(), headers=me("c"))).status == 200
    assert (await client.post("/mcp", data=tool_call(), headers=me("c", Accept="text/html"))).status == 429
    other = await client.post("/mcp", data=tool_call(), headers=me("d", Accept="text/html"))
    assert other.status == 406


async def test_concurrent_calls_beyond_the_client_limit_are_refused_by_the_script(
        aiohttp_client, redis_url: str, worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, concurrency_limit=1)
    worker.gate.clear()
    held = asyncio.create_task(client.post("/mcp", data=tool_call(), headers=me("e")))
    async with asyncio.timeout(5):
        while worker.read < 1:
            await asyncio.sleep(0.01)
    refused = await client.post("/mcp", data=tool_call(), headers=me("e"))
    assert refused.status == 429 and refused.headers["Retry-After"] == "1"
    error = (await refused.json())["error"]
    assert error["data"]["limit"] == "concurrency" and "too many requests in progress" in error["message"]
    worker.gate.set()
    assert (await held).status == 200
    assert (await client.post("/mcp", data=tool_call(), headers=me("e"))).status == 200


async def test_a_full_backlog_answers_fast_and_the_call_still_counts(aiohttp_client, redis_url: str,
                                                                   worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=1, max_backlog=0)
    full = await client.post("/mcp", data=tool_call(), headers=me("g"))
    assert full.status == 503 and full.headers["Retry-After"] == "1"
    assert (await full.json())["error"]["code"] == -32603
    assert (await client.post("/mcp", data=tool_call(), headers=me("g"))).status == 429
    assert worker.read == 0
    assert await _leases(redis_url) == 0


async def test_with_redis_down_a_tool_call_fails_closed_then_recovers(aiohttp_client, redis_server, redis_url: str,
                                                                      worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url)
    assert (await client.post("/mcp", data=tool_call(), headers=me("h"))).status == 200
    redis_server.stop()
    try:
        down = await client.post("/mcp", data=tool_call(), headers=me("h"))
        assert down.status == 503
        assert refusal_error(await down.read()) == "limits_unavailable"
        assert down.headers["Retry-After"] == "1"
    finally:
        redis_server.start()
    async with asyncio.timeout(10):
        while (response := await client.post("/mcp", data=tool_call(), headers=me("h"))).status != 200:
            await asyncio.sleep(0.2)
    assert response.status == 200


async def test_static_methods_still_use_the_plain_admission(aiohttp_client, redis_url: str,
                                                           worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=2)
    assert (await client.post("/mcp", data=rpc("tools/list"), headers=me("i"))).status == 200
    assert (await client.post("/mcp", data=tool_call(), headers=me("i"))).status == 200
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("i"))).status == 429


async def test_the_combined_script_gives_the_same_refusals_as_admit(redis_url: str) -> None:
    """admit_enqueue.lua and admit.lua share admission.lua: same codes, and nothing queued when refused."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        limiter = RedisLimiter(redis_url, limits.LimitSettings(request_limit=1))
        try:
            first = limiter.admission_script("k", semantic=False)
            stream = redis_keys.calls_stream()
            code = await client.eval(scripts.load("admit_enqueue"), 5, *first.keys, stream, *first.args, 10,
                                     "rid", "r1", "reply", "x", "call", "{}", "lease", "l:k")
            assert isinstance(code, bytes) and await client.xlen(stream) == 1
            second = limiter.admission_script("k", semantic=False)
            code = await client.eval(scripts.load("admit_enqueue"), 5, *second.keys, stream, *second.args, 10,
                                     "rid", "r2", "reply", "x", "call", "{}")
            decision = limits.decision_from_code(code, None)
            assert (decision.allowed, decision.kind) == (False, "requests") and 1 <= decision.retry_after_s <= 60
            assert await client.xlen(stream) == 1
            refused = await limiter.acquire("k", semantic=False)
            assert (refused.allowed, refused.kind) == (False, "requests")
        finally:
            await limiter.close()
    finally:
        await client.aclose()


async def test_rest_calls_are_admitted_by_the_same_script_and_hand_their_lease_over(
        aiohttp_client, redis_url: str, worker: EchoWorker) -> None:
    client = await _gateway(aiohttp_client, redis_url, request_limit=2)
    rest = {"X-PwC-MCP-Client": "r"}
    assert [(await client.post("/v1/tools/list_tasks", json={}, headers=rest)).status for _ in range(2)] == [200, 200]
    refused = await client.get("/v1/tools/list_tasks", headers=rest)
    assert refused.status == 429 and (await refused.json())["error"].startswith("rate_limited: ")
    assert worker.read == 2 and all(lease is not None for lease in worker.leases)
    assert await _leases(redis_url) == 0


async def test_with_no_live_worker_the_limits_still_answer_first(aiohttp_client, redis_url: str) -> None:
    executor = RedisDispatcher(redis_url)
    client = await aiohttp_client(create_app(make_settings(redis_url=redis_url, request_limit=1, call_deadline_s=1.0),
                                             dispatcher=executor, tools=FAKE_TOOLS))
    assert executor.live_workers == 0
    first = await client.post("/mcp", data=tool_call(), headers=me("n"))  # no worker registers within the deadline
    assert first.status == 503 and (await first.json())["error"]["code"] == -32603  # no worker: retry shortly
    second = await client.post("/mcp", data=tool_call(), headers=me("n"))
    assert second.status == 429 and refusal_error(await second.read()) == "rate_limit_exceeded"
    assert await _leases(redis_url) == 0  # a call that was never queued took no lease


async def test_a_call_no_worker_answers_in_time_gives_its_lease_back(aiohttp_client, redis_url: str,
                                                                    worker: EchoWorker) -> None:
    client = await aiohttp_client(create_app(make_settings(redis_url=redis_url, call_deadline_s=1.0),
                                             tools=FAKE_TOOLS))
    worker.gate.clear()  # read, never answered
    timed_out = await client.post("/mcp", data=tool_call(), headers=me("t"))
    assert timed_out.status == 200 and (await timed_out.json())["error"]["message"] == "the tool call timed out"
    assert worker.read == 1 and worker.leases[0] is not None
    assert await _leases(redis_url) == 0  # released by the dispatcher, not left to its TTL
    worker.gate.set()
