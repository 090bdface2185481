"""A full queue and poison entries: refuse fast, stay bounded, never kill a worker.

Fault 6 of issue 7. Two bounds stand between a flood and unbounded waiting:
the global concurrency limit (503 ``server_saturated`` at admission, shared by
every gateway through Redis) and the ``RedisDispatcher``'s ``max_backlog`` (the
enqueue script refuses once the Stream holds that many entries → 503 JSON-RPC
-32603). ``gateway.dispatch.dispatchers.build_dispatcher`` leaves ``max_backlog`` at its
default (1024), so the Stream can only reach it when something else fills it:
the second test fills it directly.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from gateway.dispatch.redis_dispatcher import RedisDispatcher
from pwc_mcp_core.cluster import queue, redis_keys
from pwc_mcp_core.cluster.replies import decode_reply
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import Answer
from tests.fault.accounting import tally
from tests.fault.conftest import assert_workers_alive, call_tool, unique_search, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import refusal_error
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

CALL_DEADLINE_S = 6
GLOBAL_LIMIT = 8
FLOOD = 40
FAST_S = 3.0
MEMORY_BOUND_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_BACKLOG = RedisDispatcher.__init__.__kwdefaults__["max_backlog"]


def _used_memory(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


def test_a_flood_from_many_clients_is_refused_fast_beyond_the_global_limit_and_memory_stays_bounded(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=1, PWC_MCP_WORKER_THREADS="1", PWC_MCP_WORKER_DRAIN_S="1",
                             PWC_MCP_CALL_DEADLINE=str(CALL_DEADLINE_S),
                             PWC_MCP_GLOBAL_CONCURRENCY_LIMIT=str(GLOBAL_LIMIT))
    url = cluster.gateways[0].mcp_url
    client = redis.Redis.from_url(redis_url)
    before = _used_memory(client)
    faulty_catalog.delay(2.0)
    max_stream = 0
    with ThreadPoolExecutor(max_workers=FLOOD) as pool:
        futures = [pool.submit(call_tool, url, "search_papers", unique_search(f"flood{i}"), client_id=f"flood-{i}",
                               timeout_s=CALL_DEADLINE_S + 10) for i in range(FLOOD)]
        while not all(f.done() for f in futures):
            max_stream = max(max_stream, client.xlen(redis_keys.calls_stream()))
            time.sleep(0.1)
        answers = [f.result() for f in futures]
    counted = tally("flood: 40 clients, 1 worker thread, global limit 8", answers, deadline_s=CALL_DEADLINE_S)
    assert counted.answered_twice == 0 and counted.hung == 0

    saturated = [a for a in answers if a.status == 503]
    served = [a for a in answers if a.status == 200]
    assert len(saturated) + len(served) == FLOOD, [a.status for a in answers]
    assert saturated, "no request was refused although the flood exceeded the global limit"
    for answer in saturated:
        assert refusal_error(answer.body) == "server_saturated"
        assert answer.headers.get("Retry-After") == "1"
        assert answer.elapsed_s < FAST_S
    for answer in served:  # admitted: a result, or the deadline's clear error, never a hang
        assert answer.body["id"] == answer.request_id
        assert answer.elapsed_s < CALL_DEADLINE_S + 5
    assert max_stream <= GLOBAL_LIMIT
    assert _used_memory(client) - before < MEMORY_BOUND_BYTES
    client.close()
    assert_workers_alive(cluster, expected=1)


def _fill_backlog(client: redis.Redis, count: int) -> None:
    """Queue ``count`` slow, valid calls whose replies go to a list nobody reads."""
    call = Call(kind="tools/call", name="search_papers",
                arguments={"query": "attention backlog", "mode": "keyword", "limit": 1},
                deadline=time.time() + 120).to_json()
    with client.pipeline(transaction=False) as pipe:
        for _ in range(count):
            pipe.xadd(redis_keys.calls_stream(), {"rid": uuid.uuid4().hex, "reply": redis_keys.reply_list("nobody"),
                                            "call": call})
        pipe.execute()


def test_a_full_backlog_refuses_new_calls_fast_with_a_clear_error(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=1, PWC_MCP_WORKER_THREADS="1", PWC_MCP_WORKER_DRAIN_S="1")
    url = cluster.gateways[0].mcp_url
    faulty_catalog.delay(5.0)
    client = redis.Redis.from_url(redis_url)
    before = _used_memory(client)
    _fill_backlog(client, DEFAULT_MAX_BACKLOG)

    answers = [call_tool(url, "search_papers", unique_search("full"), timeout_s=FAST_S) for _ in range(3)]

    for answer in answers:
        assert answer.status == 503, answer.body
        assert answer.body["id"] == answer.request_id
        assert answer.body["error"]["code"] == -32603
        assert answer.headers.get("Retry-After") == "1"
    assert client.xlen(redis_keys.calls_stream()) <= DEFAULT_MAX_BACKLOG
    assert _used_memory(client) - before < MEMORY_BOUND_BYTES
    client.delete(redis_keys.calls_stream())  # let the worker go idle before teardown
    client.close()
    assert cluster.workers[0].proc.poll() is None


@pytest.mark.parametrize("fields", [
    pytest.param({"rid": "r1", "reply": redis_keys.reply_list("nobody"), "call": "not json"}, id="unreadable-call"),
    pytest.param({"rid": "r2", "reply": redis_keys.reply_list("nobody"),
                  "call": json.dumps({"v": 99, "kind": "tools/call"})}, id="foreign-schema-version"),
    pytest.param({"rid": "r3", "reply": redis_keys.reply_list("nobody"), "call": b"\xed\xb3\xbf"},
                 id="invalid-utf8-call"),
    pytest.param({"garbage": "x"}, id="entry-without-fields"),
])
def test_a_poison_entry_in_the_stream_is_dropped_and_the_worker_keeps_serving(
        faulty_cluster: Callable[..., Cluster], redis_url: str, fields: dict) -> None:
    cluster = faulty_cluster(workers=1)
    client = redis.Redis.from_url(redis_url)
    try:
        client.xadd(redis_keys.calls_stream(), fields)
        wait_until(lambda: client.xlen(redis_keys.calls_stream()) == 0 or cluster.workers[0].proc.poll() is not None,
                   timeout_s=15, what="the poison entry consumed")
        assert cluster.workers[0].proc.poll() is None, "the worker died on a poison entry"
        assert not any(v for v in _pending(client).values())
    finally:
        client.close()
    answer = call_tool(cluster.gateways[0].mcp_url, "search_papers", unique_search("after-poison"), timeout_s=30)
    assert answer.status == 200 and not answer.is_tool_error, answer.body


def _pending(client: redis.Redis) -> dict[str, int]:
    summary = client.xpending(redis_keys.calls_stream(), queue.GROUP)
    return {str(c["name"]): int(c["pending"]) for c in summary.get("consumers") or []}


def test_a_call_whose_read_was_lost_on_its_way_to_a_live_worker_is_still_answered(
        faulty_cluster: Callable[..., Cluster], redis_url: str) -> None:
    """Redis delivered the entry to the worker's consumer, but the read's reply never reached a
    thread (simulated: this test reads it under the worker's consumer name, in the same
    transaction as the XADD, so no blocked reader of the worker gets it). The worker still
    runs it and answers, well inside the call's deadline."""
    cluster = faulty_cluster(workers=1, gateways=0)
    client = redis.Redis.from_url(redis_url)
    try:
        wait_until(lambda: _consumer_of(client, "w0") is not None, timeout_s=30, what="the worker's heartbeat")
        consumer = _consumer_of(client, "w0")
        call = Call(kind="tools/call", name="list_conferences", arguments={}, deadline=time.time() + 30).to_json()
        reply_key = redis_keys.reply_list("lost-read-test")
        with client.pipeline(transaction=True) as pipe:
            pipe.xadd(redis_keys.calls_stream(), {"rid": "lost-read", "reply": reply_key, "call": call})
            pipe.xreadgroup(queue.GROUP, consumer, {redis_keys.calls_stream(): ">"}, count=1)
            _, delivered = pipe.execute()
        assert delivered and delivered[0][1], "the entry was not delivered to the worker's consumer"
        started = time.monotonic()
        popped = client.blpop([reply_key], timeout=20)
        assert popped is not None, "the stranded call was never answered"
        rid, answer = decode_reply(popped[1])
        assert rid == "lost-read" and isinstance(answer, Answer) and json.loads(answer.body)["result"]
        assert time.monotonic() - started < 15
        wait_until(lambda: not any(_pending(client).values()), timeout_s=10, what="the entry acknowledged")
        assert cluster.workers[0].proc.poll() is None
    finally:
        client.close()


def _consumer_of(client: redis.Redis, worker_id: str) -> str | None:
    """The consumer name of worker ``worker_id`` (``<id>#<incarnation>``) from the heartbeat set,
    once the worker has made the consumer group too."""
    try:
        client.xinfo_groups(redis_keys.calls_stream())
    except redis.ResponseError:  # no stream, so no group yet
        return None
    names = [name.decode() for name in client.zrange(redis_keys.workers_set(), 0, -1)]
    return next((name for name in names if name.startswith(f"{worker_id}#")), None)
