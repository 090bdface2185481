"""The HTTP+SSE transport end to end with the official Python SDK's ``sse_client``.

Redis mode: two gateway processes (``pwc-mcp gateway --processes 2``), one worker, the
sample catalog over HTTP. Many sessions at once, so a session's POSTs reach the process
that does not hold its stream and their answers travel through Redis (each stream's
close line counts them as ``routed``). Embedded mode: one process, routing in-process.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import redis
from mcp import Client
from mcp.client.sse import sse_client

from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.tools.registry import tools as registry_tools
from tests.conftest import ServerProcess, start_pwc_mcp
from tests.integration.citation_session import cite_and_verify
from tests.integration.conftest import Cluster

pytestmark = pytest.mark.slow

SSE_ENV = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000", "PWC_MCP_CONCURRENCY_LIMIT": "64",
           "PWC_MCP_SSE_MAX_STREAMS_PER_CLIENT": "64"}
SESSIONS = 12
ROUNDS = 4


async def one_session(url: str, index: int) -> None:
    async with Client(sse_client(url, headers={"X-PwC-MCP-Client": "sse-e2e"}, timeout=30), mode="legacy") as client:
        tools = await client.list_tools()
        assert sorted(t.name for t in tools.tools) == sorted(t.name for t in registry_tools())
        result = await client.call_tool("get_task", {"task": "image-classification"})
        assert not result.is_error, result.content
        assert result.structured_content["schema_version"] == "v1"
        missing = await client.call_tool("get_task", {"task": f"no-such-task-{index}"})
        assert missing.is_error and missing.content[0].text.startswith("not_found:")
        listed = await client.call_tool("list_tasks", {"limit": 2})
        assert not listed.is_error and listed.structured_content["schema_version"] == "v1"


async def many_sessions(url: str, count: int) -> None:
    async with asyncio.timeout(90):
        await asyncio.gather(*(one_session(url, i) for i in range(count)))


def routed_total(logs: str) -> int:
    return sum(int(n) for n in re.findall(r"sse_stream status=200 .* routed=(\d+)", logs))


def wait_until(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def test_many_python_sdk_sessions_across_two_gateway_processes(cluster_factory: Callable[..., Cluster],
                                                               redis_url: str, tmp_path: Path) -> None:
    cluster = cluster_factory(gateways=0, workers=0, **SSE_ENV)
    cluster.add_worker()  # a separately started `pwc-mcp worker`
    gateway = start_pwc_mcp("gateway", "--processes", "2", env={**cluster.env, **SSE_ENV},
                            log_path=tmp_path / "gateway2.log")
    cluster.gateways.append(gateway)
    cluster.wait_ready(gateway)
    store = redis.Redis.from_url(redis_url)
    # Which process accepts a connection is the kernel's choice: on a loaded machine the one that
    # is awake can take a whole round, so rounds run until an answer crosses (at most ROUNDS).
    for rounds in range(1, ROUNDS + 1):
        asyncio.run(many_sessions(f"{gateway.base_url}/sse", SESSIONS))
        # Every disconnect freed its session: the cluster-wide cap set empties.
        wait_until(lambda: store.zcard(redis_keys.sse_sessions_global()) == 0)
        streams = SESSIONS * rounds
        wait_until(lambda streams=streams: len(re.findall(r"sse_stream status=200", gateway.log_text())) >= streams)
        if routed_total(gateway.log_text()) > 0:
            break
    assert routed_total(gateway.log_text()) > 0, "no answer crossed between the two processes"
    assert "sse inbox read failed" not in gateway.log_text()


def test_a_dead_holders_sessions_end_and_their_messages_get_404(cluster_factory: Callable[..., Cluster],
                                                                 tmp_path: Path) -> None:
    cluster = cluster_factory(gateways=2, workers=0, **SSE_ENV)
    holder, other = cluster.gateways
    with httpx.Client(timeout=10) as http, http.stream("GET", f"{holder.base_url}/sse") as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        endpoint = next(lines).removeprefix("data: ")
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert http.post(f"{other.base_url}{endpoint}", json=ping).status_code == 202
        holder.proc.send_signal(signal.SIGKILL)
        holder.proc.wait(5)
    # The holder's inbox connection is gone, so its session answers 404 at once; at the latest
    # it lapses within the session TTL (30 s), which the holder no longer renews.
    wait_until(lambda: httpx.post(f"{other.base_url}{endpoint}", json=ping).status_code == 404, timeout_s=40)
    body = httpx.post(f"{other.base_url}{endpoint}", json=ping).json()
    assert body["jsonrpc"] == "2.0" and "error" in body


def test_python_sdk_session_in_embedded_mode(catalog_url: str, tmp_path: Path) -> None:
    server: ServerProcess = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **SSE_ENV},
                                          log_path=tmp_path / "embedded.log")
    try:
        asyncio.run(many_sessions(f"{server.base_url}/sse", 2))
    finally:
        server.stop()


def test_the_citation_tools_over_legacy_sse_with_the_python_sdk(catalog_url: str, tmp_path: Path) -> None:
    server: ServerProcess = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **SSE_ENV},
                                          log_path=tmp_path / "citations.log")

    async def session() -> None:
        async with asyncio.timeout(60):
            async with Client(sse_client(f"{server.base_url}/sse", headers={"X-PwC-MCP-Client": "sse-cite"},
                                         timeout=30), mode="legacy") as client:
                await cite_and_verify(client)

    try:
        asyncio.run(session())
    finally:
        server.stop()
