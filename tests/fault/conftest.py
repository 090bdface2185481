"""Fault-injection harness: a faulty catalog proxy, a cluster behind it, raw JSON-RPC posts.

Everything is real: gateway and worker processes (``pwc-mcp gateway`` /
``pwc-mcp worker``) over the session redis-server, talking to the sample
catalog through :class:`tests.fault.faulty_catalog.FaultyCatalog`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis

from tests.fault.faulty_catalog import FaultyCatalog
from tests.helpers import free_port
from tests.integration.conftest import Cluster, cluster_factory  # noqa: F401 - re-exported fixture

PROTOCOL = "2025-11-25"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": PROTOCOL}
# Limits high enough that only the fault under test refuses anything.
RAISED_LIMITS = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000",
                 "PWC_MCP_CONCURRENCY_LIMIT": "64"}
_ids = itertools.count(1)


@pytest.fixture
def faulty_catalog(catalog_url: str) -> Iterator[FaultyCatalog]:
    """A fresh proxy in front of the sample catalog, healthy until a test switches a fault on."""
    proxy = FaultyCatalog(catalog_url, free_port())
    proxy.start()
    yield proxy
    proxy.close()


@pytest.fixture
def faulty_cluster(cluster_factory: Callable[..., Cluster],  # the imported fixture
                   faulty_catalog: FaultyCatalog) -> Callable[..., Cluster]:
    """``build(workers=2, gateways=1, **env)``: a ready cluster whose catalog is the faulty proxy.

    Workers get ``PWC_MCP_WORKER_ID`` ``w0``, ``w1``, … so XPENDING consumer names say
    which worker holds a call.
    """

    def build(workers: int = 2, gateways: int = 1, **env: str) -> Cluster:
        cluster = cluster_factory(gateways=0, workers=0, PWC_API_URL=faulty_catalog.api_url,
                                  **{**RAISED_LIMITS, **env})
        for index in range(workers):
            cluster.add_worker(PWC_MCP_WORKER_ID=f"w{index}")
        for _ in range(gateways):
            cluster.add_gateway()
        if workers:
            for gateway in cluster.gateways:
                cluster.wait_ready(gateway)
        return cluster

    return build


@dataclass
class RpcAnswer:
    """One HTTP answer to one JSON-RPC POST."""

    request_id: int
    status: int
    body: Any  # parsed JSON, or the raw text when it is not JSON
    headers: httpx.Headers
    elapsed_s: float

    @property
    def tool_text(self) -> str:
        """The first text block of a ``tools/call`` result ('' when absent)."""
        try:
            return self.body["result"]["content"][0]["text"]
        except (KeyError, IndexError, TypeError):
            return ""

    @property
    def is_tool_error(self) -> bool:
        return isinstance(self.body, dict) and bool((self.body.get("result") or {}).get("isError"))


def post_rpc(url: str, method: str, params: dict[str, Any] | None = None, *, client_id: str = "fault-tests",
             timeout_s: float = 60.0, request_id: int | None = None) -> RpcAnswer:
    """POST one JSON-RPC request with a fresh id; never raises on an HTTP error status.

    Raises:
        httpx.TimeoutException: nothing came back within ``timeout_s`` (the test's hang bound).
    """
    rid = request_id if request_id is not None else next(_ids)
    payload: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        payload["params"] = params
    started = time.monotonic()
    response = httpx.post(url, json=payload, headers={**HEADERS, "X-PwC-MCP-Client": client_id},
                          timeout=timeout_s)
    elapsed = time.monotonic() - started
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return RpcAnswer(rid, response.status_code, body, response.headers, elapsed)


def call_tool(url: str, name: str, arguments: dict[str, Any], **kwargs: Any) -> RpcAnswer:
    """``tools/call`` through :func:`post_rpc`."""
    return post_rpc(url, "tools/call", {"name": name, "arguments": arguments}, **kwargs)


def unique_search(tag: str) -> dict[str, Any]:
    """Arguments for a ``search_papers`` call no cache has seen (one catalog request)."""
    return {"query": f"attention {tag} {next(_ids)}", "mode": "keyword", "limit": 1}


def wait_until(predicate: Callable[[], Any], *, timeout_s: float, interval_s: float = 0.1,
               what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns a truthy value (returned); fail the test after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not reached within {timeout_s}s")
        time.sleep(interval_s)


def health(base_url: str) -> tuple[int, dict[str, Any]]:
    """``GET /health`` → (status, body); (0, {}) when the gateway does not answer."""
    try:
        response = httpx.get(f"{base_url}/health", timeout=5)
        return response.status_code, response.json()
    except (httpx.HTTPError, ValueError):
        return 0, {}


def pending_by_consumer(redis_url: str) -> dict[str, int]:
    """XPENDING summary of the calls Stream: worker id (``PWC_MCP_WORKER_ID``, without the
    per-start incarnation suffix) → pending entries."""
    from pwc_mcp_core.cluster import queue, redis_keys

    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        summary = client.xpending(redis_keys.calls_stream(), queue.GROUP)
    except redis.ResponseError:  # no Stream/group yet
        return {}
    finally:
        client.close()
    counts: dict[str, int] = {}
    for consumer in summary.get("consumers") or []:
        name = consumer["name"].decode() if isinstance(consumer["name"], bytes) else consumer["name"]
        worker_id = name.split("#", 1)[0]  # queue.consumer_name's <worker id>#<incarnation>
        counts[worker_id] = counts.get(worker_id, 0) + int(consumer["pending"])
    return counts


def assert_workers_alive(cluster: Cluster, expected: int | None = None) -> None:
    """Every worker process not deliberately killed is running, and ``/health`` counts them."""
    alive = [w for w in cluster.workers if w.proc.poll() is None]
    dead = [w for w in cluster.workers if w.proc.poll() is not None and w.proc.returncode != -9]
    assert not dead, f"worker(s) died: {[w.proc.returncode for w in dead]}"
    want = len(alive) if expected is None else expected
    gateway = next(g for g in cluster.gateways if g.proc.poll() is None)
    wait_until(lambda: health(gateway.base_url)[1].get("checks", {}).get("workers") == want,
               timeout_s=20, what=f"/health showing {want} workers")


@pytest.fixture(autouse=True)
def _report_tallies(request: pytest.FixtureRequest) -> Iterator[None]:
    """Hand the test's fault tallies to its report: the table is printed by the process that
    reports (``tests/conftest.py``), which under pytest-xdist is not the one that ran the test."""
    from tests.fault.accounting import TALLIES

    before = len(TALLIES)
    yield
    for counted in TALLIES[before:]:
        request.node.user_properties.append(("fault_tally", counted.row()))
