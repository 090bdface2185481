"""A gateway SIGKILLed while it holds concurrency leases: peers refuse that client until the leases lapse.

Fault 5 of issue 7. Leases live in Redis sorted sets scored by expiry
(``gateway/admission/limits.py``); their TTL is the call deadline + ``LEASE_MARGIN_S``
(10 s, ``gateway/process/settings.py``), so with ``PWC_MCP_CALL_DEADLINE`` = 3 s a dead
gateway's leases lapse 13 s after they were taken.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis

from gateway.process.settings import LEASE_MARGIN_S
from pwc_mcp_core.cluster import redis_keys
from tests.fault.conftest import RpcAnswer, call_tool, post_rpc, unique_search, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import refusal_error
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

CALL_DEADLINE_S = 3
CONCURRENCY = 4


def _global_leases(redis_url: str) -> int:
    client = redis.Redis.from_url(redis_url)
    try:
        return client.zcard(redis_keys.concurrency_global())
    finally:
        client.close()


def _quiet_call(url: str, client_id: str) -> None:
    try:
        call_tool(url, "search_papers", unique_search("held"), client_id=client_id, timeout_s=30)
    except httpx.HTTPError:
        pass  # the gateway is killed under this request


def test_a_killed_gateways_leases_refuse_its_client_elsewhere_until_they_expire(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=1, gateways=2, PWC_MCP_CALL_DEADLINE=str(CALL_DEADLINE_S),
                             PWC_MCP_CONCURRENCY_LIMIT=str(CONCURRENCY))
    doomed, survivor = cluster.gateways
    faulty_catalog.delay(30.0)  # every call outlives the gateway that admitted it

    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        for _ in range(CONCURRENCY):
            pool.submit(_quiet_call, doomed.mcp_url, "holder")
        wait_until(lambda: _global_leases(redis_url) >= CONCURRENCY, timeout_s=10, what="4 leases held")
        doomed.proc.kill()
        doomed.proc.wait(timeout=10)

    refused = post_rpc(survivor.mcp_url, "tools/list", {}, client_id="holder", timeout_s=5)
    assert refused.status == 429, refused.body
    assert refusal_error(refused.body) == "rate_limit_exceeded"
    assert int(refused.headers["Retry-After"]) >= 1
    other = post_rpc(survivor.mcp_url, "tools/list", {}, client_id="someone-else", timeout_s=5)
    assert other.status == 200, other.body

    lease_ttl_s = CALL_DEADLINE_S + LEASE_MARGIN_S
    def served_again() -> RpcAnswer | None:
        answer = post_rpc(survivor.mcp_url, "tools/list", {}, client_id="holder", timeout_s=5)
        return answer if answer.status == 200 else None

    served = wait_until(served_again, timeout_s=lease_ttl_s + 10, interval_s=0.5,
                        what="the client served again after lease expiry")
    assert served.body["id"] == served.request_id
    assert survivor.proc.poll() is None
    assert cluster.workers[0].proc.poll() is None
