"""The shipped nginx site in front of a gateway: the HTTP+SSE transport and the REST surface."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.sse import sse_client

from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.conftest import ServerProcess, start_pwc_mcp
from tests.helpers import stop_process
from tests.ops.test_nginx import NGINX, render_site, wait_http_tls

pytestmark = pytest.mark.slow

HEARTBEAT_S = 0.5


@pytest.fixture(scope="module")
def gateway(catalog_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_pwc_mcp("gateway", env={
        "PWC_API_URL": catalog_url, "PWC_MCP_ALLOWED_HOSTS": "localhost", "PWC_MCP_REQUEST_LIMIT": "1000",
        "PWC_MCP_SSE_HEARTBEAT_S": str(HEARTBEAT_S)}, log_path=tmp_path_factory.mktemp("gateway") / "gateway.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def nginx_url(gateway: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    site = render_site(tmp_path_factory.mktemp("nginx"), gateway.port)
    proc = subprocess.Popen([NGINX, "-c", str(site.conf), "-p", str(site.prefix), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"https://localhost:{site.https_port}"
    try:
        wait_http_tls(f"{url}/.well-known/mcp", proc)
        yield url
    finally:
        stop_process(proc)


def insecure_client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                    auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=False)  # throwaway certificate


def test_python_sdk_sse_client_through_nginx(nginx_url: str) -> None:
    async def session() -> None:
        async with Client(sse_client(f"{nginx_url}/sse", httpx_client_factory=insecure_client), mode="legacy") as c:
            assert len((await c.list_tools()).tools) == len(TOOL_DEFS)
            task = await c.call_tool("get_task", {"task": "image-classification"})
            assert not task.is_error and task.structured_content["schema_version"] == "v1"

    asyncio.run(asyncio.wait_for(session(), 60))


def test_a_refused_call_fails_alone_through_nginx(nginx_url: str) -> None:
    """Past the semantic limit (10/min) one hybrid search is refused with its reason; the same
    Python SDK session then goes on (a non-2xx POST used to end it)."""
    async def session() -> tuple[dict, bool]:
        async with Client(sse_client(f"{nginx_url}/sse", httpx_client_factory=insecure_client), mode="legacy") as c:
            for n in range(12):
                try:
                    await c.call_tool("search_papers", {"query": f"attention {n}"})
                except MCPError as refused:
                    data = refused.error.data
                    break
            else:
                raise AssertionError("no search was refused")
            task = await c.call_tool("get_task", {"task": "image-classification"})
            return data, task.is_error

    data, failed = asyncio.run(asyncio.wait_for(session(), 90))
    assert data["error"] == "rate_limit_exceeded" and data["limit"] == "semantic" and data["retry_after_s"] >= 1
    assert failed is False


def test_the_stream_is_not_buffered_and_heartbeats_pass(nginx_url: str) -> None:
    with httpx.Client(verify=False, timeout=10) as http, http.stream("GET", f"{nginx_url}/sse") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        started = time.monotonic()
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        assert next(lines).startswith("data: /messages?session_id=")
        assert next(lines) == ""
        assert next(lines) == ": ping"  # a 9-byte comment arrives at once, so nothing buffers
        assert time.monotonic() - started < HEARTBEAT_S * 6


def test_unknown_sessions_get_404_through_nginx(nginx_url: str) -> None:
    response = httpx.post(f"{nginx_url}/messages?session_id=nope", verify=False,
                          json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404 and response.json()["jsonrpc"] == "2.0"


def test_rest_and_openapi_through_nginx(nginx_url: str) -> None:
    with httpx.Client(base_url=nginx_url, verify=False, timeout=30) as http:
        assert http.get("/v1/tools/list_tasks", params={"limit": 2}).status_code == 200
        assert http.post("/v1/tools/get_task", json={"task": "image-classification"}).status_code == 200
        assert http.get("/openapi.json").json()["openapi"].startswith("3.1")
        assert http.get("/v1/tools").status_code == 200


@pytest.mark.parametrize("location", ["location = /sse {", "location = /messages {"])
def test_the_sse_locations_read_longer_than_the_default_heartbeat(location: str) -> None:
    from gateway.surfaces.sse_sessions import SseSettings
    from tests.ops.test_nginx import SITE

    block = SITE.read_text(encoding="utf-8").split(location, 1)[1].split("}", 1)[0]
    assert "proxy_buffering off;" in block
    timeout_s = int(block.split("proxy_read_timeout", 1)[1].split("s;", 1)[0])
    assert timeout_s >= 4 * SseSettings().heartbeat_s
