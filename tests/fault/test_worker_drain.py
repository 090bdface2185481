"""A worker given SIGTERM drains: it finishes the call it is running, deregisters and exits 0."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import pytest
import redis

from pwc_mcp_core.cluster import redis_keys
from tests.fault.conftest import call_tool, unique_search, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_sigterm_lets_the_running_call_finish_then_the_worker_exits_cleanly(
        faulty_cluster: Callable[..., Cluster], faulty_catalog: FaultyCatalog, redis_url: str) -> None:
    cluster = faulty_cluster(workers=1)
    worker = cluster.workers[0]
    client = redis.Redis.from_url(redis_url)
    faulty_catalog.delay(3.0)
    answers = []
    caller = threading.Thread(
        target=lambda: answers.append(call_tool(cluster.gateways[0].mcp_url, "search_papers", unique_search("drain"))))
    caller.start()
    wait_until(lambda: faulty_catalog.hits >= 1, timeout_s=10, what="the call reaching the catalog")

    worker.proc.send_signal(signal.SIGTERM)
    caller.join(timeout=30)

    assert answers and answers[0].status == 200 and not answers[0].is_tool_error, answers
    assert worker.proc.wait(timeout=30) == 0
    assert client.zscore(redis_keys.workers_set(), "w0") is None  # deregistered, not left to expire
    assert "Traceback" not in worker.log_text()
    client.close()
