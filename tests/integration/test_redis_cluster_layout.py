"""The key layout is ready for Redis Cluster: nothing a deployment runs crosses a slot.

A redis-server in cluster mode (one node owning all 16384 slots) refuses, with
``CROSSSLOT``, any script or transaction whose keys hash to different slots, and a script
that touches a key of another slot than its declared ones. A gateway and a worker run on
it (a plain ``redis://`` URL: one node answers for every slot) and serve calls over /mcp,
REST and a legacy SSE stream; Redis's own error statistics must show no such refusal.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from tests.fault.conftest import HEADERS, RAISED_LIMITS, call_tool, unique_search, wait_until
from tests.helpers import free_port, stop_process
from tests.integration.conftest import Cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


@pytest.fixture
def cluster_mode_redis(tmp_path: Path) -> Iterator[str]:
    """A one-node Redis Cluster holding every slot; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed; .ci/run installs it")
    for _attempt in range(3):
        # The cluster bus gets a free port of its own: by default it is port + 10000, which is over
        # 65535 for a high ephemeral port (redis-server then exits at once), or may be taken.
        port, bus = free_port(), free_port()
        nodes = tmp_path / f"nodes-{port}.conf"
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                 "no", "--dir", str(tmp_path), "--cluster-enabled", "yes", "--cluster-port", str(bus),
                                 "--cluster-config-file", str(nodes), "--loglevel", "warning"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
        if _started(client, proc):
            break
        client.close()  # a port was taken between free_port() and the bind: try others
    else:
        pytest.fail("the cluster-mode redis-server exited at start three times")
    try:
        client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        wait_until(lambda: b"cluster_state:ok" in client.execute_command("CLUSTER", "INFO"), timeout_s=20,
                   what="the one-node cluster ok")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        stop_process(proc)


def _started(client: redis.Redis, proc: subprocess.Popen[bytes]) -> bool:
    """True when the server answers; False when it exited first (fails the test after 20 s)."""
    wait_until(lambda: _ping(client) or proc.poll() is not None, timeout_s=20, what="the cluster-mode redis-server")
    return proc.poll() is None


def _ping(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def _sse_ping(base_url: str) -> bool:
    """Open a legacy SSE stream, post a ping through its endpoint, read the answer on it."""
    answered = threading.Event()
    endpoint: list[str] = []
    ready = threading.Event()

    def read() -> None:
        with httpx.stream("GET", f"{base_url}/sse", headers={"X-PwC-MCP-Client": "layout"},
                          timeout=httpx.Timeout(5, read=20)) as response:
            event = ""
            for line in response.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "endpoint":
                    endpoint.append(line[6:])
                    ready.set()
                elif line.startswith("data: ") and event == "message" and json.loads(line[6:]).get("id") == 3:
                    answered.set()
                    return

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    assert ready.wait(15), "no SSE endpoint event"
    posted = httpx.post(base_url + endpoint[0], headers=HEADERS | {"X-PwC-MCP-Client": "layout"}, timeout=10,
                        content=json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
    assert posted.status_code == 202, posted.text
    return answered.wait(15)


def test_a_deployment_on_a_cluster_mode_redis_never_crosses_a_slot(
        cluster_mode_redis: str, catalog_url: str, tmp_path: Path) -> None:
    env = {"PWC_MCP_REDIS_URL": cluster_mode_redis, "PWC_API_URL": catalog_url, "PWC_MCP_WORKER_THREADS": "4",
           **RAISED_LIMITS}
    cluster = Cluster(redis_url=cluster_mode_redis, catalog_url=catalog_url, logs=tmp_path, env=env)
    try:
        cluster.add_worker(PWC_MCP_WORKER_ID="w0")
        gateway = cluster.add_gateway()
        cluster.wait_ready()
        for n in range(4):  # admission + enqueue, the worker's read, reply and release, the cache
            answer = call_tool(gateway.mcp_url, "search_papers", unique_search(f"slot{n}"), client_id=f"s{n}",
                               timeout_s=30)
            assert answer.status == 200 and not answer.is_tool_error, answer.body
        rest = httpx.post(f"{gateway.base_url}/v1/tools/list_tasks", json={}, timeout=30,
                          headers={"X-PwC-MCP-Client": "rest"})
        assert rest.status_code == 200, rest.text
        assert _sse_ping(gateway.base_url)  # session open, renew, inbox
    finally:
        cluster.stop()  # the worker's deregistration and the SSE session's removal count too
    client = redis.Redis.from_url(cluster_mode_redis)
    try:
        errors = client.info("errorstats")
        stats = client.info("commandstats")
    finally:
        client.close()
    # A cross-slot script, transaction or command is refused (CROSSSLOT, a rejected call); a
    # script touching an undeclared slot fails inside EVALSHA. Expected failures only: a script
    # Redis did not know yet (NOSCRIPT, then loaded) and the consumer group that exists (BUSYGROUP).
    # (The ERR count is redis-py's CLIENT SETINFO, which Redis 7.0 does not know; it is ignored.)
    assert "errorstat_CROSSSLOT" not in errors, errors
    assert not [name for name, stat in stats.items() if stat.get("rejected_calls")], stats
    noscript = errors.get("errorstat_NOSCRIPT", {}).get("count", 0)
    assert stats["cmdstat_evalsha"]["failed_calls"] == noscript, (stats["cmdstat_evalsha"], errors)
    failing = {name for name, stat in stats.items() if stat.get("failed_calls")}
    assert failing <= {"cmdstat_evalsha", "cmdstat_xgroup|create"}, stats
