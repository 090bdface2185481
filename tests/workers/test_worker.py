"""`workers.worker.Worker` in process, over the session redis-server and the sample catalog.

Calls go in through the gateway's public path (`queue.enqueue` of a serialized `Call`) and
replies come back through it (`queue.wait_replies_then`, which decodes each reply to its outcome), so the tests hold
whatever the entry and reply formats become. The worker runs on its own event loop in a thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis

from pwc_mcp_core.cluster import queue, redis_keys
from pwc_mcp_core.cluster.redis_pipe import RedisPipe
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import Answer
from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import await_replies, free_port
from tests.workers.conftest import result_of, tool_call, worker_env
from workers.runner import Runner
from workers.settings import WorkerSettings
from workers.worker import Worker

REPLIES = redis_keys.reply_list("worker-room-test")


class WorkerThread:
    """A `Worker` running ``run()`` on its own event loop in a thread, as `workers.cli` runs it."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self.thread = threading.Thread(target=asyncio.run, args=(self._main(),), name="worker-under-test")

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready.set()
        await self.worker.run()

    def start(self) -> WorkerThread:
        self.thread.start()
        assert self._ready.wait(10)
        return self

    def stop(self, timeout_s: float = 20.0) -> None:
        """Ask for a drain (as SIGTERM does) and wait until ``run()`` returned."""
        if self.thread.is_alive():
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self.worker.stop)
        self.thread.join(timeout_s)
        assert not self.thread.is_alive(), "the worker did not stop"


@pytest.fixture
def start_worker(redis_url: str, make_runner: Callable[..., Runner]) -> Iterator[Callable[[str], WorkerThread]]:
    """``start_worker(api_url)``: a running worker over that catalog; stopped after the test."""
    started: list[WorkerThread] = []

    def start(api_url: str) -> WorkerThread:
        settings = WorkerSettings.from_env(worker_env(redis_url, api_url))
        started.append(WorkerThread(Worker(settings, make_runner(settings=settings))).start())
        return started[-1]

    yield start
    for running in started:
        running.stop()


def _pipe(redis_url: str, timeout_s: float | None) -> RedisPipe:
    """A pipe to the test's Redis. The worker warms up in this process, and its imports hold the GIL
    for seconds on a loaded machine (longer on a new clone's first run, which compiles them), so a
    connection may take longer than the pipe's 1 s default."""
    return RedisPipe(redis_url, timeout_s=timeout_s, connect_timeout_s=10.0)


async def _ask(redis_url: str, *calls: Call | str, timeout_s: float = 20.0) -> dict[str, bytes]:
    """Enqueue ``calls`` (a `Call`, or raw text as the ``call`` field) and wait for their replies: rid → body."""
    pipe, waiter = _pipe(redis_url, 10.0), _pipe(redis_url, None)
    try:
        rids = []
        for call in calls:
            rid = uuid.uuid4().hex
            raw = call.to_json() if isinstance(call, Call) else call
            await queue.enqueue(pipe, rid=rid, reply_key=REPLIES, call_json=raw, max_backlog=100)
            rids.append(rid)
        answers: dict[str, bytes] = {}
        deadline = time.monotonic() + timeout_s
        while len(answers) < len(calls) and time.monotonic() < deadline:
            for rid, outcome in await await_replies(waiter, REPLIES, timeout_s=1):
                assert isinstance(outcome, Answer), outcome
                answers[rid] = outcome.body
        return {rid: answers[rid] for rid in rids if rid in answers}
    finally:
        await pipe.close()
        await waiter.close()


def _settled(redis_url: str) -> None:
    """Wait until the Stream holds nothing pending or unread (every entry acknowledged and deleted)."""
    client = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            if client.xlen(redis_keys.calls_stream()) == 0:
                return
            time.sleep(0.05)
        raise AssertionError(f"{client.xlen(redis_keys.calls_stream())} entries left in the Stream")
    finally:
        client.close()


def _replies_left(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return int(client.llen(REPLIES))
    finally:
        client.close()


async def test_a_queued_call_is_answered_once_under_its_request_id(start_worker, redis_url: str,
                                                                   catalog_url: str) -> None:
    start_worker(catalog_url)
    call = tool_call("search_papers")
    answers = await _ask(redis_url, call, call)
    assert len(answers) == 2
    for body in answers.values():
        assert "papers" in result_of(body)["content"][0]["text"]  # type: ignore[index]
    _settled(redis_url)
    assert _replies_left(redis_url) == 0  # no second reply


async def test_a_bad_call_gets_an_error_reply_and_the_worker_answers_the_next(start_worker, redis_url: str,
                                                                            catalog_url: str) -> None:
    running = start_worker(catalog_url)
    unknown, invalid, good = tool_call("no_such_tool", {}), tool_call("search_papers", {"query": 5}), tool_call(
        "search_papers")
    answers = list((await _ask(redis_url, unknown, invalid, good)).values())
    assert len(answers) == 3
    assert json.loads(answers[0])["error"]["message"] == "Unknown tool: no_such_tool"
    assert result_of(answers[1])["isError"] is True
    assert "papers" in result_of(answers[2])["content"][0]["text"]  # type: ignore[index]
    assert running.thread.is_alive()


async def _enqueue(redis_url: str, raw: bytes | str) -> None:
    """Enqueue one ``call`` field as is, without waiting for a reply."""
    pipe = _pipe(redis_url, 10.0)
    try:
        await queue.enqueue(pipe, rid=uuid.uuid4().hex, reply_key=REPLIES, call_json=raw, max_backlog=100)
    finally:
        await pipe.close()


async def test_an_unreadable_call_is_dropped_and_the_worker_lives(start_worker, redis_url: str,
                                                                  catalog_url: str) -> None:
    running = start_worker(catalog_url)
    await _enqueue(redis_url, "not a call")
    _settled(redis_url)  # acknowledged and deleted
    assert _replies_left(redis_url) == 0
    answers = await _ask(redis_url, tool_call("search_papers"))
    assert len(answers) == 1 and running.thread.is_alive()


async def test_a_call_past_its_deadline_is_acknowledged_without_a_reply(start_worker, redis_url: str,
                                                                        catalog_url: str) -> None:
    start_worker(catalog_url)
    await _enqueue(redis_url, tool_call("search_papers", seconds=-1).to_json())
    _settled(redis_url)
    assert _replies_left(redis_url) == 0


async def test_a_running_worker_is_live_and_a_stopped_one_is_gone(start_worker, redis_url: str,
                                                                  catalog_url: str) -> None:
    running = start_worker(catalog_url)
    await _ask(redis_url, tool_call("search_papers"))  # answered: registered and reading
    client = redis.Redis.from_url(redis_url)
    assert client.zscore(redis_keys.workers_set(), running.worker.consumer) is not None
    running.stop()
    assert client.zscore(redis_keys.workers_set(), running.worker.consumer) is None
    client.close()


async def test_stop_lets_the_running_call_finish_and_reply(start_worker, redis_url: str,
                                                           catalog_url: str) -> None:
    slow = FaultyCatalog(catalog_url, free_port())
    slow.start()
    try:
        running = start_worker(slow.api_url)
        slow.delay(1.5)
        asking = asyncio.create_task(_ask(redis_url, tool_call("search_papers")))
        deadline = time.monotonic() + 10
        while slow.hits < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert slow.hits >= 1, "the call never reached the catalog"
        await asyncio.to_thread(running.stop)  # returns once run() has drained
        answers = await asyncio.wait_for(asking, 10)
        assert len(answers) == 1 and "papers" in result_of(next(iter(answers.values())))["content"][0]["text"]  # type: ignore[index]
        assert running.worker.completed == 1
    finally:
        slow.close()
