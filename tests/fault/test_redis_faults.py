"""Redis stopped and started again: fast, clear 503s meanwhile, recovery without restarting anything.

Fault 3 of issue 7. The session redis-server is stopped with SIGTERM and started
again on the same port, empty (no persistence): the gateway must re-create the
consumer group, workers must re-register their heartbeats, and the limiter must
fail closed (503 ``limits_unavailable``) while Redis is away.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.conftest import RedisServer
from tests.fault.accounting import tally
from tests.fault.conftest import (
    assert_workers_alive,
    call_tool,
    health,
    post_rpc,
    unique_search,
    wait_until,
)
from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import refusal_error
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

FAST_S = 3.0  # "fast": spec < 2 s, plus slack for the shared 2-core box
RECOVERY_S = 30.0


def _succeeds(url: str) -> bool:
    try:
        answer = call_tool(url, "search_papers", unique_search("recover"), timeout_s=10)
    except httpx.HTTPError:
        return False
    return answer.status == 200 and not answer.is_tool_error


def test_while_redis_is_down_requests_get_fast_503s_and_everything_recovers_when_it_returns(
        faulty_cluster: Callable[..., Cluster], redis_server: RedisServer) -> None:
    cluster = faulty_cluster(workers=2)
    gateway = cluster.gateways[0]
    assert _succeeds(gateway.mcp_url)

    redis_server.stop()
    try:
        answers = [call_tool(gateway.mcp_url, "search_papers", unique_search("down"), timeout_s=FAST_S)
                   for _ in range(3)]
        listing = post_rpc(gateway.mcp_url, "tools/list", {}, timeout_s=FAST_S)
        for answer in [*answers, listing]:
            assert answer.status == 503, answer.body
            assert answer.headers.get("Retry-After") == "1"
            assert refusal_error(answer.body) == "limits_unavailable"
        wait_until(lambda: health(gateway.base_url)[1].get("checks", {}).get("redis") == "unavailable",
                   timeout_s=10, what="/health reporting redis unavailable")
        assert health(gateway.base_url)[0] == 503
    finally:
        redis_server.start()

    wait_until(lambda: _succeeds(gateway.mcp_url), timeout_s=RECOVERY_S, interval_s=0.5,
               what="a successful call after Redis returned")
    wait_until(lambda: health(gateway.base_url)[0] == 200, timeout_s=RECOVERY_S, what="/health 200 again")
    assert all(process.proc.poll() is None for process in [*cluster.workers, *cluster.gateways])
    assert_workers_alive(cluster, expected=2)


def test_a_call_in_flight_across_a_short_redis_restart_is_answered_once_within_its_deadline(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_server: RedisServer) -> None:
    deadline_s = 20
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    url = cluster.gateways[0].mcp_url
    faulty_catalog.delay(3.0)
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(call_tool, url, "search_papers", unique_search("inflight"), timeout_s=deadline_s + 10)
        wait_until(lambda: faulty_catalog.hits >= 1, timeout_s=10, what="the call reaching the catalog")
        redis_server.stop()
        redis_server.start()
        answer = future.result(timeout=deadline_s + 15)
    counted = tally("Redis restarted (empty) while a call runs", [answer], deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    # Either the worker's retried reply got through, or the deadline answered: never a hang, one answer.
    assert answer.status == 200, answer.body
    assert answer.body["id"] == answer.request_id
    assert ("result" in answer.body) != ("error" in answer.body)
    faulty_catalog.heal()
    wait_until(lambda: _succeeds(url), timeout_s=RECOVERY_S, interval_s=0.5, what="recovery")
    assert_workers_alive(cluster, expected=1)
