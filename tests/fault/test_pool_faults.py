"""Issue 14: no call lost, stuck or over-committed in the worker pool.

Real redis-server, gateway and worker processes; the catalog is the faulty proxy. Each
test tallies what its clients saw (tests/fault/accounting.py): answered twice and hung
past the deadline must be 0. Deadlines and delays are short so the file stays fast.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import redis

from pwc_mcp_core.cluster import queue, redis_keys
from tests.fault.accounting import tally
from tests.fault.conftest import call_tool, health, pending_by_consumer, unique_search, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def send(url: str, count: int, tag: str, *, deadline_s: float) -> list[Any]:
    """Start ``count`` concurrent unique calls; returns a function that collects their outcomes."""
    pool = ThreadPoolExecutor(max_workers=count)
    futures = [pool.submit(call_tool, url, "search_papers", unique_search(f"{tag}{i}"), client_id=f"{tag}{i}",
                           timeout_s=deadline_s + 10) for i in range(count)]

    def collect() -> list[Any]:
        outcomes: list[Any] = []
        for future in futures:
            try:
                outcomes.append(future.result(timeout=deadline_s + 15))
            except Exception as exc:  # noqa: BLE001 - a client timeout is an outcome (hung)
                outcomes.append(exc)
        pool.shutdown(wait=False)
        return outcomes

    return collect  # type: ignore[return-value]


def test_a_worker_restarted_under_its_own_id_recovers_its_in_flight_calls(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    deadline_s = 15
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    faulty_catalog.delay(3.0)
    collect = send(cluster.gateways[0].mcp_url, 4, "restart", deadline_s=deadline_s)
    wait_until(lambda: pending_by_consumer(redis_url).get("w0", 0) >= 4, timeout_s=10, what="w0 holding 4 calls")
    cluster.workers[0].proc.kill()
    cluster.workers[0].proc.wait(timeout=10)
    time.sleep(0.5)
    faulty_catalog.heal()
    cluster.add_worker(PWC_MCP_WORKER_ID="w0")  # systemd's %H-%i: the same name, before the heartbeat expires
    outcomes = collect()
    counted = tally("worker SIGKILLed, restarted under its own id 0.5 s later", outcomes, deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once == 4, outcomes
    assert all(o.elapsed_s < deadline_s - 3 for o in outcomes)  # not the "timed out at the deadline" of old
    wait_until(lambda: not any(pending_by_consumer(redis_url).values()), timeout_s=10, what="empty PEL")


def test_a_trickling_catalog_frees_worker_threads_by_the_call_deadline(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    deadline_s = 4
    threads = 2
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s), PWC_MCP_CATALOG_TIMEOUT="3",
                             PWC_MCP_WORKER_THREADS=str(threads))
    url = cluster.gateways[0].mcp_url
    faulty_catalog.trickle(0.2)
    collect = send(url, 6, "trickle", deadline_s=deadline_s)
    most = 0
    pools = []
    started = time.monotonic()
    while time.monotonic() - started < deadline_s:
        most = max(most, sum(pending_by_consumer(redis_url).values()))
        pools.append(health(cluster.gateways[0].base_url)[1].get("pool"))
        time.sleep(0.1)
    outcomes = collect()
    faulty_catalog.heal()
    counted = tally("catalog trickles one byte per 0.2 s (6 calls, 2 threads)", outcomes, deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once + counted.clear_error == 6, outcomes
    assert most <= threads, f"the worker held {most} calls with {threads} threads"
    # /health shows the saturation: every thread running, calls waiting.
    assert {"threads": threads, "running": threads} in [{k: p[k] for k in ("threads", "running")}
                                                       for p in pools if p], pools
    assert any(p and p["waiting"] > 0 for p in pools), pools
    # The threads are free again: a healthy call is answered at once, not after the trickle.
    answer = wait_until(lambda: (lambda a: a if a.status == 200 and not a.is_tool_error else None)(
        call_tool(url, "search_papers", unique_search("after"), timeout_s=10)), timeout_s=deadline_s * 3,
        interval_s=0.2, what="a healthy call answered")
    assert answer.elapsed_s < 2.0


def test_calls_lost_inside_redis_are_queued_again_within_seconds(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    deadline_s = 20
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s), PWC_MCP_WORKER_THREADS="2")
    faulty_catalog.delay(1.0)
    collect = send(cluster.gateways[0].mcp_url, 8, "flush", deadline_s=deadline_s)
    client = redis.Redis.from_url(redis_url)
    try:
        wait_until(lambda: client.xlen(redis_keys.calls_stream()) >= 6, timeout_s=10, what="a backlog")
        client.flushall()  # = a restart without persistence / a failover to a lagging replica
    finally:
        client.close()
    outcomes = collect()
    counted = tally("FLUSHALL with a backlog (8 calls, 2 threads)", outcomes, deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once + counted.clear_error == 8, outcomes
    assert max(o.elapsed_s for o in outcomes) < 12, "lost calls waited out the deadline"


def _flush_sample(base_url: str, client: redis.Redis) -> tuple[float, int, Any, bool, int]:
    """``(monotonic time, /health status, checks.workers, group present, registered workers)``."""
    status, body = health(base_url)
    at = time.monotonic()
    try:
        groups = {g["name"].decode() if isinstance(g["name"], bytes) else g["name"]
                  for g in client.xinfo_groups(redis_keys.calls_stream())}
    except redis.ResponseError:  # no Stream at all
        groups = set()
    return at, status, body.get("checks", {}).get("workers"), queue.GROUP in groups, client.zcard(redis_keys.workers_set())


def test_health_tells_the_truth_after_redis_loses_its_data(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    """FLUSHALL with a backlog wipes the worker registry, the Stream and its group: /health
    must say 503 while no worker is registered, and 200 again once the worker re-registers."""
    deadline_s = 20
    refresh_s = 1.5  # the gateway's liveness refresh (1 s) plus slack for the shared box
    cluster = faulty_cluster(workers=1, PWC_MCP_CALL_DEADLINE=str(deadline_s), PWC_MCP_WORKER_THREADS="2")
    gateway, worker = cluster.gateways[0], cluster.workers[0]
    faulty_catalog.delay(1.0)
    collect = send(gateway.mcp_url, 8, "truth", deadline_s=deadline_s)
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    samples = []
    try:
        wait_until(lambda: client.xlen(redis_keys.calls_stream()) >= 6, timeout_s=10, what="a backlog")
        # The worker is held still across the flush so that "no worker registered" lasts long
        # enough to be seen (a live worker beats again within 1.5 s).
        worker.proc.send_signal(signal.SIGSTOP)
        try:
            client.flushall()
            flushed = time.monotonic()
            while time.monotonic() - flushed < 4.0:
                samples.append(_flush_sample(gateway.base_url, client))
                time.sleep(0.05)
        finally:
            worker.proc.send_signal(signal.SIGCONT)
        resumed = time.monotonic()
        registered = wait_until(lambda: client.zcard(redis_keys.workers_set()) and time.monotonic(), timeout_s=5,
                                interval_s=0.05, what="the worker registered again")
        while time.monotonic() - resumed < 6.0:
            samples.append(_flush_sample(gateway.base_url, client))
            time.sleep(0.05)
        outcomes = collect()
    finally:
        client.close()
    faulty_catalog.heal()
    # Never 200 without a live worker or without the consumer group (after one refresh).
    for at, status, workers, group, _ in samples:
        if status == 200:
            assert workers and workers >= 1, samples
            assert group or at - flushed < refresh_s, samples
    # While no worker is registered, /health says so.
    gone = [s for s in samples if flushed + refresh_s <= s[0] <= resumed]
    assert gone and all(s[1] == 503 and s[2] == 0 for s in gone), gone
    # Once the worker is registered again, /health is 200 within a refresh, and stays so.
    back = [s for s in samples if s[0] >= registered + refresh_s]
    assert back and all(s[1] == 200 and s[2] == 1 and s[3] for s in back), back
    counted = tally("FLUSHALL with a backlog, the worker registering again 4 s later", outcomes,
                    deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once + counted.clear_error == 8, outcomes


def test_a_redis_pause_does_not_make_every_worker_look_dead(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_server: Any,
        redis_url: str) -> None:
    """The issue's failure: calls sent the moment Redis resumes from a long SIGSTOP were all
    refused 503 "no worker alive", and /health said ``workers: 0``, while every heartbeat the
    workers had tried to write during the pause looked older than the TTL. (On d05cb5f 20 of
    20 such calls got 503; so did the first fix, which zeroed the count on the first command
    timeout and discarded the judgement right after the stall.)"""
    deadline_s = 30  # the 4 calls in flight must outlive the 20 s pause
    cluster = faulty_cluster(workers=2, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    gateway = cluster.gateways[0]
    wait_until(lambda: health(gateway.base_url)[1].get("checks", {}).get("workers") == 2, timeout_s=10,
               what="2 workers")
    faulty_catalog.delay(4.0)
    across = send(gateway.mcp_url, 4, "across", deadline_s=deadline_s)  # running on workers during the pause
    wait_until(lambda: sum(pending_by_consumer(redis_url).values()) == 4, timeout_s=10,
               what="the workers running 4 calls")
    redis_server.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(20)
        faulty_catalog.heal()
    finally:
        redis_server.proc.send_signal(signal.SIGCONT)
    resumed = time.monotonic()
    after = send(gateway.mcp_url, 20, "resume", deadline_s=deadline_s)  # at once, before any refresh
    seen = []  # /health during the first 3 s after the resume
    while time.monotonic() - resumed < 3:
        status, body = health(gateway.base_url)
        seen.append((round(time.monotonic() - resumed, 2), status, body.get("checks", {}).get("workers")))
        time.sleep(0.05)
    outcomes = across() + after()
    counted = tally("Redis SIGSTOPped for 20 s (4 calls across it, 20 at the resume)", outcomes,
                    deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once == 24, [o.status for o in outcomes]
    assert all(workers == 2 for _, _, workers in seen), seen  # never "workers: 0" for live workers
    assert any(status == 200 for _, status, _ in seen), seen  # and ready again within 3 s
    for worker in cluster.workers:  # nobody judged a live peer dead and ran its calls again
        assert "reclaimed calls of a dead worker" not in worker.log_text()


def test_a_worker_whose_clock_is_5_s_off_runs_calls_within_their_deadline(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog) -> None:
    deadline_s = 4  # shorter than the skew: a worker judging by its own clock would drop every call
    cluster = faulty_cluster(workers=0, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    cluster.add_worker(PWC_MCP_WORKER_ID="ahead", PWC_MCP_WORKER_CLOCK_SKEW_S="5")
    cluster.add_worker(PWC_MCP_WORKER_ID="behind", PWC_MCP_WORKER_CLOCK_SKEW_S="-5")
    cluster.add_gateway()
    gateway = cluster.gateways[0]
    cluster.wait_ready(gateway)
    registered = time.monotonic()  # ready means one worker; the other may still be warming up
    while health(gateway.base_url)[1].get("checks", {}).get("workers") != 2 and time.monotonic() - registered < 30:
        time.sleep(0.1)
    seen = set()
    started = time.monotonic()
    while time.monotonic() - started < 4:  # both stay live: liveness is judged by Redis's clock
        seen.add(health(gateway.base_url)[1].get("checks", {}).get("workers"))
        time.sleep(0.25)
    assert seen == {2}, seen
    outcomes = send(gateway.mcp_url, 8, "skew", deadline_s=deadline_s)()
    counted = tally("worker host clocks 5 s ahead / behind", outcomes, deadline_s=deadline_s)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once == 8, outcomes
    assert httpx.get(f"{gateway.base_url}/health", timeout=5).status_code == 200
