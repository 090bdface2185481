"""Session-per-call clients read a whole paper through the shipped nginx site, with default limits
(issue 33 item 3).

langchain-mcp-adapters opens an MCP session for every tool call: over Streamable HTTP each call
is ``initialize``, ``notifications/initialized``, ``tools/list``, the GET stream it tries, the
``tools/call`` and a ``DELETE`` at the edge. Reading the 98 KB sample paper is 13 ``read_paper``
calls in a second or two, which the shared per-address zone (10 r/s, burst 40) refused. The
cluster here runs with the gateway's default limits (60 requests/min per client, notifications
not counted): ``pwc-mcp gateway``, a real redis-server and one ``pwc-mcp worker``, behind the
shipped ``nginx/pwc-mcp.conf`` rendered for loopback and otherwise unchanged. Clients through
nginx speak from their own loopback address (127.0.0.N); direct clients name themselves
(``X-PwC-MCP-Client``). A flood from one address still gets nginx's JSON-RPC 429.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.conftest import RedisServer, ServerProcess, start_pwc_mcp
from tests.helpers import refusal_error, stop_process, wait_http
from tests.integration.test_sse_node_clients import node_env, node_toolbox  # noqa: F401 - the fixture
from tests.ops.test_production_path import Nginx, _start_nginx, _wait_nginx, ip, stop_gateway

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PAPER = "1706.03762"  # the sample catalog's 98 KB paper
LANGCHAIN_ADAPTERS = "langchain-mcp-adapters==0.3.2"

# Reads the whole paper with one session per call (the adapters' default), following
# next_cursor until it is null; prints the number of calls and bytes read.
LANGCHAIN_READER = textwrap.dedent("""
    import asyncio, json, sys
    import httpx
    from langchain_mcp_adapters.client import MultiServerMCPClient

    url, transport, address, who, paper = sys.argv[1:6]

    def factory(headers=None, timeout=None, auth=None):
        local = httpx.AsyncHTTPTransport(local_address=address, verify=False)
        return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=False, transport=local)

    async def main():
        connection = {"url": url, "transport": transport, "httpx_client_factory": factory}
        if who:
            connection["headers"] = {"X-PwC-MCP-Client": who}
        client = MultiServerMCPClient({"pwc": connection})
        tool = {tool.name: tool for tool in await client.get_tools()}["read_paper"]
        arguments, calls, read, total = {"paper": paper}, 0, 0, None
        while True:
            message = await tool.ainvoke({"name": "read_paper", "args": arguments, "id": f"c{calls}",
                                          "type": "tool_call"})
            calls += 1
            structured = (message.artifact or {}).get("structured_content")
            assert structured and structured.get("markdown"), message.content
            read += len(structured["markdown"].encode("utf-8"))
            total = structured.get("total_bytes")
            if not structured.get("next_cursor"):
                break
            arguments = {"paper": paper, "cursor": structured["next_cursor"]}
        print(json.dumps({"calls": calls, "bytes": read, "total_bytes": total}))

    asyncio.run(main())
""")

# The TypeScript SDK v2 over Streamable HTTP: connect, list, two calls, close.
TS_V2_CLIENT = textwrap.dedent("""
    import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
    const client = new Client({ name: "pwc-edge-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
    const tools = await client.listTools();
    const task = await client.callTool({ name: "get_task", arguments: { task: "image-classification" } });
    const paper = await client.callTool({ name: "read_paper", arguments: { paper: process.argv[3] } });
    await client.close();
    console.log(JSON.stringify({ tools: tools.tools.length, task: !task.isError, paper: !paper.isError }));
""")


@dataclass
class Edge:
    gateway: ServerProcess
    nginx: Nginx

    def access_lines(self) -> list[str]:
        """The edge's access log lines (time method route status bytes ...)."""
        log = self.nginx.site.prefix / "logs" / "pwc-mcp.access.log"
        return log.read_text(errors="replace").splitlines() if log.exists() else []


@pytest.fixture(scope="module")
def edge(redis_server: RedisServer, catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    import redis

    if redis_server.proc.poll() is not None:
        redis_server.start()
    redis.Redis.from_url(redis_server.url).flushall()
    logs = tmp_path_factory.mktemp("session-per-call")
    # The gateway's default limits: nothing but where Redis and the catalog are, and the Host allowlist.
    env = {"PWC_MCP_REDIS_URL": redis_server.url, "PWC_API_URL": catalog_url,
           "PWC_MCP_ALLOWED_HOSTS": "localhost,localhost:*,127.0.0.1:*"}
    worker = start_pwc_mcp("worker", env=env, wait_path=None, log_path=logs / "worker.log")
    gateway = start_pwc_mcp("gateway", env=env, log_path=logs / "gateway.log")
    nginx: Nginx | None = None
    try:
        wait_http(f"{gateway.base_url}/health", timeout_s=60, proc=gateway.proc)
        nginx = _start_nginx(tmp_path_factory.mktemp("edge"), gateway.port)
        _wait_nginx(nginx)
        yield Edge(gateway, nginx)
    finally:
        if nginx is not None:
            stop_process(nginx.proc)
        try:
            stop_gateway(gateway)
        finally:
            worker.stop()


def read_whole_paper(tmp_path: Path, url: str, transport: str, address: str, who: str = "") -> dict:
    """Run the langchain reader in its own environment (the adapters pin an older ``mcp``)."""
    if subprocess.run(["uv", "--version"], capture_output=True, check=False).returncode != 0:
        pytest.skip("uv is not installed; it builds the isolated langchain-mcp-adapters environment")
    script = tmp_path / "langchain_reader.py"
    script.write_text(LANGCHAIN_READER, encoding="utf-8")
    run = subprocess.run(["uv", "run", "--no-project", "--with", LANGCHAIN_ADAPTERS, "python", str(script),
                          url, transport, address, who, PAPER],
                         capture_output=True, text=True, timeout=300, check=False, env={**os.environ})
    if run.returncode != 0 and "No solution found" in run.stderr + run.stdout:
        pytest.skip("langchain-mcp-adapters could not be installed")
    assert run.returncode == 0, run.stderr[-3000:]
    read = json.loads(run.stdout.strip().splitlines()[-1])
    assert read["calls"] > 10 and read["bytes"] == read["total_bytes"], read
    return read


def test_langchain_over_streamable_http_reads_the_paper_and_the_ts_sdk_v2_runs_right_after(
        edge: Edge, tmp_path: Path, node_toolbox: Path) -> None:
    # Both from 127.0.0.1: Node's fetch cannot choose its source address.
    before = len(edge.access_lines())
    read = read_whole_paper(tmp_path, f"{edge.nginx.url}/mcp", "streamable_http", "127.0.0.1")
    script = node_toolbox / "edge_ts_v2.mjs"  # ESM resolves packages beside the script
    script.write_text(TS_V2_CLIENT, encoding="utf-8")
    ts = subprocess.run([str(node_toolbox / "node_modules" / ".bin" / "node"), str(script), f"{edge.nginx.url}/mcp",
                         PAPER], capture_output=True, text=True, timeout=120,
                        env={**node_env(node_toolbox), "NODE_TLS_REJECT_UNAUTHORIZED": "0"})
    assert ts.returncode == 0, ts.stdout[-2000:] + ts.stderr[-2000:]
    assert json.loads(ts.stdout.strip().splitlines()[-1]) == {"tools": len(TOOL_DEFS), "task": True, "paper": True}
    lines = edge.access_lines()[before:]
    statuses = [line.split()[3] for line in lines]
    assert "429" not in statuses, (read, statuses)
    assert len(lines) >= 4 * read["calls"], len(lines)
    # This machine may pace the clients slower than a fast one would; the same number of
    # requests from one address at full speed must pass the edge too.
    replayed = flood(edge, ip(4), len(lines), NOTIFICATION)
    assert [r.status_code for r in replayed if r.status_code != 202] == [], len(lines)


NOTIFICATION = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()


def flood(edge: Edge, address: str, count: int, body: bytes) -> list[httpx.Response]:
    """``count`` POSTs of ``body`` to /mcp through nginx from ``address``, 8 at a time."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    transport = httpx.HTTPTransport(local_address=address, verify=False)
    with httpx.Client(transport=transport, verify=False, timeout=15) as client:
        def post(_: int) -> httpx.Response:
            return client.post(f"{edge.nginx.url}/mcp", content=body, headers=headers)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            return list(pool.map(post, range(count)))


def test_langchain_over_sse_reads_the_paper_through_nginx(edge: Edge, tmp_path: Path) -> None:
    read_whole_paper(tmp_path, f"{edge.nginx.url}/sse", "sse", ip(2))


@pytest.mark.parametrize(("path", "transport"), [("/mcp", "streamable_http"), ("/sse", "sse")])
def test_langchain_reads_the_paper_directly(edge: Edge, tmp_path: Path, path: str, transport: str) -> None:
    read_whole_paper(tmp_path, f"{edge.gateway.base_url}{path}", transport, "127.0.0.1", who=f"direct-{transport}")


def test_a_flood_from_one_address_is_refused_at_the_edge_in_the_jsonrpc_shape(edge: Edge) -> None:
    started = time.monotonic()
    responses = flood(edge, ip(3), 400, PING)
    elapsed = time.monotonic() - started
    edge_refusals = [r for r in responses if r.status_code == 429 and r.json()["id"] is None]
    # What passes the edge is bounded by the burst (120) plus 10 r/s over the flood's duration;
    # the rest is nginx's own refusal (id null), not the gateway's.
    assert 400 - len(edge_refusals) <= 120 + 10 * elapsed + 2, (len(edge_refusals), elapsed)
    refused = edge_refusals[0]
    assert refused.headers["Retry-After"] == "1" and refused.headers["content-type"].startswith("application/json")
    assert refusal_error(refused.json()) == "rate_limit_exceeded"
