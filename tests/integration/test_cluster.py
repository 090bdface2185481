"""Cluster behaviour across real processes: two gateways, shared limits, cursors and content-free logs."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.integration.conftest import Cluster

pytestmark = pytest.mark.slow

HEADERS = {"Content-Type": "application/json", "Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}


def call(url: str, name: str, arguments: dict[str, Any], *, client: str = "cluster-tests",
         extra: dict[str, str] | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return httpx.post(url, json=body, headers={**HEADERS, "X-PwC-MCP-Client": client, **(extra or {})}, timeout=60)


def structured(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert not result.get("isError"), result["content"][0]["text"]
    return result["structuredContent"]


def test_a_read_paper_continuation_crosses_gateway_processes(cluster_factory: Callable[..., Cluster]) -> None:
    cluster = cluster_factory(gateways=2, workers=1, PWC_MCP_REQUEST_LIMIT="1000")
    first, second = cluster.gateways
    cluster.wait_ready(second)
    chunks = [structured(call(first.mcp_url, "read_paper", {"paper": "1706.03762"}))]
    gateways = [second, first]
    while chunks[-1]["next_cursor"]:
        gateway = gateways[len(chunks) % 2]  # alternate: every cursor is continued by the other process
        chunks.append(structured(call(gateway.mcp_url, "read_paper",
                                      {"paper": "1706.03762", "cursor": chunks[-1]["next_cursor"]})))
    assert len(chunks) >= 2
    markdown = "".join(chunk["markdown"] for chunk in chunks)
    assert len(markdown.encode()) > 64 * 1024
    assert chunks[-1]["truncated"] is False


def test_two_gateway_processes_share_one_clients_request_budget(cluster_factory: Callable[..., Cluster]) -> None:
    cluster = cluster_factory(gateways=2, workers=1, PWC_MCP_REQUEST_LIMIT="6")
    cluster.wait_ready(cluster.gateways[1])
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    def one(index: int) -> int:
        gateway = cluster.gateways[index % 2]
        return httpx.post(gateway.mcp_url, json=ping, headers={**HEADERS, "X-PwC-MCP-Client": "shared"},
                          timeout=30).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(one, range(10)))
    assert sorted(statuses) == [200] * 6 + [429] * 4
    # Another client still has its own budget on either process.
    other = httpx.post(cluster.gateways[1].mcp_url, json=ping, headers={**HEADERS, "X-PwC-MCP-Client": "other"})
    assert other.status_code == 200


def test_logs_and_metrics_stay_content_free_across_gateway_and_worker(cluster_factory: Callable[..., Cluster]) -> None:
    cluster = cluster_factory(gateways=1, workers=1, LOG_LEVEL="DEBUG")
    gateway = cluster.gateways[0]
    secrets = {
        "query": "zebra-secret-query-7731",
        "reference": "Secret Paper Title 4417",
        "client": "client-secret-9054",
        "forwarded": "198.51.100.77",
    }
    call(gateway.mcp_url, "search_papers", {"query": secrets["query"], "mode": "keyword"}, client=secrets["client"])
    call(gateway.mcp_url, "get_paper_info", {"paper": secrets["reference"]},
         extra={"X-Forwarded-For": secrets["forwarded"]})
    metrics = httpx.get(f"{gateway.base_url}/metrics", timeout=10).text
    deadline = time.monotonic() + 5  # log lines are written in batches, at most 0.2 s late
    while "mcp_request tool=get_paper_info" not in gateway.log_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    texts = {"gateway log": gateway.log_text(), "worker log": cluster.workers[0].log_text(), "metrics": metrics}
    assert "mcp_request tool=search_papers" in texts["gateway log"]
    leaks = {(where, kind) for where, text in texts.items() for kind, secret in secrets.items() if secret in text}
    assert leaks == set()
