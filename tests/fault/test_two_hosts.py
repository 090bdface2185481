"""Issue 14: the worker pool on a second host, partitioned for 20 s and healed.

The second host is a network namespace joined to this one by a veth pair, made here as
root: this side 169.254.14.1/30, the namespace 169.254.14.2/30 (link-local addresses the
test assigns itself; nothing leaves the machine). Redis listens on the veth address and
the catalog proxy too; host 1 runs the gateway and one worker, host 2 one worker.
Under load the veth link goes down for 20 s: host 2's calls are reclaimed by host 1's
worker and nobody gets two answers. After the heal, host 2's worker takes calls at full
capacity again without a restart. Skips, with the reason, where the kernel refuses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from pwc_mcp_core.cluster import redis_keys
from tests.conftest import PWC_MCP_BIN, REPO_ROOT, TEST_CURSOR_KEY, start_pwc_mcp
from tests.fault.accounting import tally
from tests.fault.conftest import RAISED_LIMITS, health, pending_by_consumer, wait_until
from tests.fault.faulty_catalog import FaultyCatalog
from tests.fault.test_pool_faults import send
from tests.helpers import free_port, stop_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

HOST1, HOST2 = "169.254.14.1", "169.254.14.2"
THREADS = 4


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@pytest.fixture
def second_host() -> Iterator[tuple[str, str]]:
    """``(netns name, this side's veth name)``; removed afterwards."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to make a network namespace")
    tag = uuid.uuid4().hex[:6]
    netns, here, there = f"pwc14-{tag}", f"v14h{tag}", f"v14n{tag}"
    made = _ip("netns", "add", netns)
    if made.returncode != 0:
        pytest.skip(f"the kernel refused a network namespace: {made.stderr.strip()}")
    try:
        for step in (("link", "add", here, "type", "veth", "peer", "name", there),
                     ("link", "set", there, "netns", netns),
                     ("addr", "add", f"{HOST1}/30", "dev", here),
                     ("link", "set", here, "up"),
                     ("-n", netns, "addr", "add", f"{HOST2}/30", "dev", there),
                     ("-n", netns, "link", "set", there, "up"),
                     ("-n", netns, "link", "set", "lo", "up")):
            result = _ip(*step)
            if result.returncode != 0:
                pytest.skip(f"the kernel refused `ip {' '.join(step)}`: {result.stderr.strip()}")
        yield netns, here
    finally:
        _ip("link", "del", here)
        _ip("netns", "del", netns)


def _redis_on(address: str, workdir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", address, "--save", "",
                             "--protected-mode", "no",  # reachable only on loopback and the test's own veth
                             "--appendonly", "no", "--dir", str(workdir), "--loglevel", "warning"],
                            stdout=(workdir / "redis.log").open("ab"), stderr=subprocess.STDOUT)
    url = f"redis://{address}:{port}/0"
    client = redis.Redis.from_url(url)
    wait_until(lambda: _pings(client), timeout_s=10, what="redis-server on the veth address")
    client.close()
    return proc, url


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


def test_a_partitioned_worker_host_loses_no_call_and_rejoins_at_full_capacity(
        second_host: tuple[str, str], catalog_url: str, tmp_path: Path) -> None:
    netns, link = second_host
    deadline_s = 20
    redis_proc, redis_url = _redis_on(HOST1, tmp_path)
    proxy = FaultyCatalog(catalog_url, free_port(), host=HOST1)
    proxy.start()
    env = {"PWC_MCP_REDIS_URL": redis_url, "PWC_API_URL": proxy.api_url, "PWC_MCP_WORKER_THREADS": str(THREADS),
           "PWC_MCP_CALL_DEADLINE": str(deadline_s), **RAISED_LIMITS}
    processes: list[subprocess.Popen] = []
    try:
        host1 = start_pwc_mcp("worker", env={**env, "PWC_MCP_WORKER_ID": "host1"}, wait_path=None,
                              log_path=tmp_path / "host1.log")
        processes.append(host1.proc)
        log = (tmp_path / "host2.log").open("ab")
        host2 = subprocess.Popen(["ip", "netns", "exec", netns, str(PWC_MCP_BIN), "worker"], cwd=REPO_ROOT,
                                 env={**os.environ, "PWC_MCP_CURSOR_KEY_CURRENT": TEST_CURSOR_KEY,
                                      "PWC_MCP_REDIS_NAMESPACE": redis_keys.namespace(),
                                      "PYTHONUNBUFFERED": "1", **env, "PWC_MCP_WORKER_ID": "host2"},
                                 stdout=log, stderr=log)
        log.close()
        processes.append(host2)
        gateway = start_pwc_mcp("gateway", env=env, log_path=tmp_path / "gateway.log")
        processes.append(gateway.proc)
        pool = lambda: health(gateway.base_url)[1].get("pool") or {}  # noqa: E731
        wait_until(lambda: pool().get("threads") == 2 * THREADS, timeout_s=30, what="both hosts' workers live")

        proxy.delay(2.0)
        collect = send(gateway.mcp_url, 2 * THREADS, "part", deadline_s=deadline_s)
        wait_until(lambda: pending_by_consumer(redis_url).get("host2", 0) >= 1, timeout_s=10,
                   what="host 2 holding calls")
        assert _ip("link", "set", link, "down").returncode == 0  # partition host 2
        partitioned = time.monotonic()
        during = send(gateway.mcp_url, THREADS, "during", deadline_s=deadline_s)
        outcomes = collect() + during()
        counted = tally("worker host partitioned for 20 s under load", outcomes, deadline_s=deadline_s)
        assert counted.answered_twice == 0 and counted.hung == 0
        assert counted.answered_once == 3 * THREADS, outcomes
        assert "reclaimed calls of a dead worker" in host1.log_text()
        time.sleep(max(0.0, 20 - (time.monotonic() - partitioned)))
        assert _ip("link", "set", link, "up").returncode == 0  # heal

        # Host 2 rejoins by itself; with host 1 gone, its THREADS threads take THREADS calls at once.
        wait_until(lambda: pool().get("threads") == 2 * THREADS, timeout_s=20, what="host 2 live again")
        stop_process(host1.proc)
        wait_until(lambda: pool().get("threads") == THREADS, timeout_s=10, what="host 1's worker gone")
        proxy.delay(1.0)
        started = time.monotonic()
        after = send(gateway.mcp_url, THREADS, "healed", deadline_s=deadline_s)()
        counted = tally("after the heal, host 2 alone (4 calls, 4 threads)", after, deadline_s=deadline_s)
        assert counted.answered_once == THREADS, after
        assert time.monotonic() - started < 2 * 1.0 + 2.5, "host 2 did not run its calls at once"
        assert host2.poll() is None, "host 2's worker was restarted or died"
    finally:
        for proc in reversed(processes):
            stop_process(proc)
        proxy.close()
        stop_process(redis_proc)
