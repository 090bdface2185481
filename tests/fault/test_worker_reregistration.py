"""Calls that arrive while workers register again after Redis lost its data wait for them.

Issue 33 item 17. A Redis restart without persistence, or ``FLUSHALL``, empties the worker
registry; live workers register again with their next heartbeat (within 1.5 s). A call the
gateway receives meanwhile waits for a worker, within its own deadline, instead of an
immediate 503 "no worker is alive". Only with no worker appearing before the deadline does it
get that 503. (Workers that are registered but silent died: that still fails fast,
``tests/fault/test_worker_faults.py``.)

The workers are held still (SIGSTOP) across the loss so the "no worker registered" window
is seconds long and the calls surely land in it.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
import redis

from tests.conftest import RedisServer
from tests.fault.accounting import tally
from tests.fault.conftest import call_tool, health, unique_search, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.fault.test_pool_faults import send
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

DEADLINE_S = 20


@contextmanager
def _workers_held(cluster: Cluster) -> Iterator[None]:
    for worker in cluster.workers:
        worker.proc.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        for worker in cluster.workers:
            worker.proc.send_signal(signal.SIGCONT)


def _gateway_sees_no_worker(cluster: Cluster) -> None:
    wait_until(lambda: health(cluster.gateways[0].base_url)[1].get("checks", {}).get("workers") == 0,
               timeout_s=10, interval_s=0.05, what="the gateway judging the empty registry")


def _calls_across_a_loss(cluster: Cluster, lose_data: Callable[[], None], fault: str) -> None:
    url = cluster.gateways[0].mcp_url
    before = send(url, 8, "before", deadline_s=DEADLINE_S)  # in flight when the data goes
    time.sleep(0.5)
    with _workers_held(cluster):
        lose_data()
        _gateway_sees_no_worker(cluster)
        during = send(url, 16, "during", deadline_s=DEADLINE_S)  # sent while no worker is registered
        time.sleep(1.5)
    outcomes = before() + during()
    counted = tally(fault, outcomes, deadline_s=DEADLINE_S)
    assert counted.answered_twice == 0 and counted.hung == 0
    assert counted.answered_once == 24, [(o.status, o.body) for o in outcomes if not isinstance(o, Exception)]


def test_calls_sent_while_workers_register_again_after_a_redis_restart_are_all_answered(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_server: RedisServer) -> None:
    cluster = faulty_cluster(workers=2, PWC_MCP_CALL_DEADLINE=str(DEADLINE_S))
    faulty_catalog.delay(0.5)

    def restart() -> None:
        redis_server.stop()
        redis_server.start()  # empty: no persistence

    _calls_across_a_loss(cluster, restart, "Redis restarted empty, 8 calls in flight, 16 sent before workers re-register")


def test_calls_sent_while_workers_register_again_after_flushall_are_all_answered(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=2, PWC_MCP_CALL_DEADLINE=str(DEADLINE_S))
    faulty_catalog.delay(0.5)

    def flush() -> None:
        client = redis.Redis.from_url(redis_url)
        try:
            client.flushall()
        finally:
            client.close()

    _calls_across_a_loss(cluster, flush, "FLUSHALL, 8 calls in flight, 16 sent before workers re-register")


def test_a_call_waits_for_the_first_worker_and_with_none_gets_a_clear_503_at_its_deadline(
        faulty_cluster: Callable[..., Cluster]) -> None:
    deadline_s = 4
    cluster = faulty_cluster(workers=0, PWC_MCP_CALL_DEADLINE=str(deadline_s))
    gateway = cluster.gateways[0]
    wait_until(lambda: health(gateway.base_url)[1].get("checks", {}).get("workers") == 0, timeout_s=30,
               what="the gateway up, no worker")
    answer = call_tool(gateway.mcp_url, "search_papers", unique_search("nobody"), timeout_s=deadline_s + 10)
    counted = tally("no worker at all: the call waits its deadline", [answer], deadline_s=deadline_s)
    assert counted.hung == 0 and counted.clear_error == 1
    assert answer.status == 503 and answer.headers.get("Retry-After") == "1", answer.body
    assert answer.body["id"] == answer.request_id and answer.body["error"]["code"] == -32603
    assert "unavailable" in answer.body["error"]["message"].lower()
    assert deadline_s - 1 <= answer.elapsed_s <= deadline_s + 2, answer.elapsed_s
