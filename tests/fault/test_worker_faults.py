"""Workers dying: a SIGKILLed worker's calls are re-run once elsewhere; no worker at all fails fast.

Faults 1 and 2 of issue 7. The queue protocol (``pwc_mcp_core/cluster/queue.py``): a dead
worker's pending entries are XCLAIMed by a live one within ~2 s of its
heartbeat expiring (``HEARTBEAT_TTL_S`` = 6 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

from pwc_mcp_core.cluster import redis_keys
from tests.fault.accounting import tally
from tests.fault.conftest import (
    assert_workers_alive,
    call_tool,
    health,
    pending_by_consumer,
    unique_search,
    wait_until,
)
from tests.fault.faulty_catalog import FaultyCatalog
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

CALL_DEADLINE_S = 30
# Fast-failure bound for "no worker": the spec asks < 2 s; the shared 2-core box gets 3 s.
FAST_S = 3.0


def test_calls_held_by_a_sigkilled_worker_are_rerun_by_another_and_answered_exactly_once(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=2, PWC_MCP_CALL_DEADLINE=str(CALL_DEADLINE_S))
    url = cluster.gateways[0].mcp_url
    faulty_catalog.delay(4.0)
    calls = 4
    with ThreadPoolExecutor(max_workers=calls) as pool:
        futures = [pool.submit(call_tool, url, "search_papers", unique_search(f"kill{i}"), client_id=f"c{i}",
                               timeout_s=CALL_DEADLINE_S + 10) for i in range(calls)]
        holders = wait_until(lambda: {k: v for k, v in pending_by_consumer(redis_url).items() if v},
                             timeout_s=10, what="a worker holding a call")
        victim_id = max(holders, key=holders.get)
        victim = cluster.workers[int(victim_id.removeprefix("w"))]
        victim.proc.kill()
        victim.proc.wait(timeout=10)
        answers = [future.result(timeout=CALL_DEADLINE_S + 15) for future in futures]
    counted = tally("worker SIGKILLed mid-call (2 workers)", answers, deadline_s=CALL_DEADLINE_S)
    assert counted.answered_twice == 0 and counted.hung == 0

    for answer in answers:
        assert answer.status == 200, answer.body
        assert answer.body["id"] == answer.request_id
        assert not answer.is_tool_error, answer.tool_text
        assert answer.elapsed_s < CALL_DEADLINE_S
    # Nothing left behind: no pending entry, no undelivered duplicate reply.
    client = redis.Redis.from_url(redis_url)
    try:
        wait_until(lambda: not any(pending_by_consumer(redis_url).values()), timeout_s=10, what="empty PEL")
        assert client.xlen(redis_keys.calls_stream()) == 0
        assert not list(client.scan_iter(match=redis_keys.reply_list("*"))), "a duplicate reply was left undelivered"
    finally:
        client.close()
    assert_workers_alive(cluster, expected=1)


def test_with_every_worker_dead_calls_fail_fast_and_health_says_so_until_a_worker_returns(
        faulty_cluster: Callable[..., Cluster]) -> None:
    cluster = faulty_cluster(workers=2, PWC_MCP_CALL_DEADLINE=str(CALL_DEADLINE_S))
    gateway = cluster.gateways[0]
    for worker in cluster.workers:
        worker.proc.kill()
        worker.proc.wait(timeout=10)

    def no_workers_reported() -> dict | None:
        status, body = health(gateway.base_url)
        return body if status == 503 and body.get("checks", {}).get("workers") == 0 else None

    body = wait_until(no_workers_reported, timeout_s=20, what="/health 503 with workers 0")
    assert body["status"] == "unavailable"

    answer = call_tool(gateway.mcp_url, "search_papers", unique_search("noworker"), timeout_s=FAST_S)
    assert answer.status == 503, answer.body
    assert answer.body["id"] == answer.request_id
    assert answer.body["error"]["code"] == -32603
    assert "unavailable" in answer.body["error"]["message"].lower()
    assert answer.headers.get("Retry-After") == "1"

    cluster.add_worker(PWC_MCP_WORKER_ID="w-late")
    cluster.wait_ready()
    again = call_tool(gateway.mcp_url, "search_papers", unique_search("back"), timeout_s=30)
    assert again.status == 200 and not again.is_tool_error, again.body


def test_a_worker_killed_before_its_heartbeat_expires_never_leaves_a_call_waiting_past_its_deadline(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog) -> None:
    # The only worker dies while a call is queued for it: nobody can re-run it, so the
    # gateway must still answer by the call deadline (TimedOut), not hang.
    deadline_s = 8
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    faulty_catalog.delay(3.0)
    url = cluster.gateways[0].mcp_url
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(call_tool, url, "search_papers", unique_search("orphan"), timeout_s=deadline_s + 10)
        wait_until(lambda: faulty_catalog.hits >= 1, timeout_s=10, what="the call reaching the catalog")
        cluster.workers[0].proc.kill()
        started = time.monotonic()
        answer = future.result(timeout=deadline_s + 15)
    counted = tally("the only worker SIGKILLed mid-call", [answer], deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert time.monotonic() - started < deadline_s + 5
    assert answer.status in (200, 503), answer.body
    assert answer.body["id"] == answer.request_id
    assert "error" in answer.body, answer.body
