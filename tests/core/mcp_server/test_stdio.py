"""`pwc-mcp stdio`: newline-delimited JSON-RPC over stdin/stdout, checked with the official SDK client."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from pwc_mcp_core.mcp_server.stdio import headers_for, serve
from pwc_mcp_core.tools.registry import tools as registry_tools
from tests.core.mcp_server.test_server import make_server
from tests.integration.citation_session import cite_and_verify

REPO_ROOT = Path(__file__).resolve().parents[3]


def stdio_params(catalog_url: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "pwc_mcp_core.mcp_server.stdio"],
                                 cwd=str(REPO_ROOT),
                                 env={"PWC_API_URL": catalog_url, "PWC_MCP_CURSOR_KEY_CURRENT": "stdio-test-key-0123456789abcdefgh",
                                      "LOG_LEVEL": "WARNING"})


@pytest.mark.parametrize(("mode", "version"), [
    pytest.param("legacy", "2025-11-25", id="legacy"),
    pytest.param("auto", "2026-07-28", id="auto-negotiates-modern"),
])
async def test_the_sdk_client_lists_tools_and_gets_a_prompt_over_stdio(mode: str, version: str) -> None:
    # Listing and prompts never reach the catalog, so an unreachable API URL proves it.
    async with asyncio.timeout(60):
        async with Client(stdio_params("http://127.0.0.1:9/api/v1"), mode=mode) as client:
            assert client.protocol_version == version
            tools = await client.list_tools()
            assert sorted(t.name for t in tools.tools) == sorted(t.name for t in registry_tools())
            assert "search_papers" in {t.name for t in tools.tools}
            prompt = await client.get_prompt("find_papers", {"topic": "graph neural networks"})
            assert prompt.messages[0].content.text.startswith("Find papers about 'graph neural networks'.")
            templates = await client.list_resource_templates()
            assert {t.name for t in templates.resource_templates} == {"paper-info", "paper-markdown",
                                                                       "paper-citation", "task", "benchmark"}


async def test_the_sdk_client_calls_a_tool_over_stdio(catalog_url: str) -> None:
    async with asyncio.timeout(60):
        async with Client(stdio_params(catalog_url), mode="legacy") as client:
            result = await client.call_tool("list_tasks", {"limit": 2})
            assert result.content


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_cites_and_verifies_over_stdio(catalog_url: str, mode: str) -> None:
    async with asyncio.timeout(60):
        async with Client(stdio_params(catalog_url), mode=mode) as client:
            await cite_and_verify(client)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_instructions_over_stdio_name_the_catalogs_data(catalog_url: str, mode: str) -> None:
    # The sample catalog records itself as the sample; without a catalog the line is left out.
    async with asyncio.timeout(60):
        async with Client(stdio_params(catalog_url), mode=mode) as client:
            assert client.instructions is not None
            assert client.instructions.endswith("Data: the bundled sample catalog (a few dozen real-shaped "
                                                "records for trying the server), not the Papers With Code archive.")
        async with Client(stdio_params("http://127.0.0.1:9/api/v1"), mode=mode) as client:
            assert client.instructions is not None and "Data:" not in client.instructions


async def run_serve(lines: bytes, max_line_bytes: int = 4096) -> list[dict]:
    stdout = io.BytesIO()
    await serve(make_server(), io.BytesIO(lines), stdout, max_line_bytes=max_line_bytes)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


async def test_serve_answers_requests_one_line_each_and_skips_notifications_and_blank_lines() -> None:
    lines = (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n\n'
             b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
             b'{bad\n'
             b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    answers = sorted(await run_serve(lines), key=lambda a: str(a["id"]))
    assert [a["id"] for a in answers] == [1, 2, None]
    assert answers[0]["result"] == {} and answers[2]["error"]["code"] == -32700


async def test_serve_rejects_an_oversized_line_and_keeps_going() -> None:
    lines = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * 5000 + b'"}}\n' \
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'
    answers = await run_serve(lines, max_line_bytes=1024)
    assert answers[0] == {"jsonrpc": "2.0", "id": None,
                          "error": {"code": -32600, "message": "Invalid Request: the message is too large"}}
    assert answers[1]["id"] == 2 and answers[1]["result"] == {}


async def test_serve_routes_a_modern_envelope_to_the_modern_era() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    line = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta}}).encode()
    (answer,) = await run_serve(line + b"\n")
    assert answer["result"]["supportedVersions"] == ["2026-07-28"]


@pytest.mark.parametrize(("message", "headers"), [
    pytest.param({"method": "ping"}, {}, id="legacy"),
    pytest.param({"method": "tools/call", "params": {"name": "get_task", "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}},
        {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "get_task"}, id="modern-tool"),
    pytest.param({"method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 5}}},
                 {}, id="non-string-version"),
])
def test_headers_for_derives_what_http_would_carry(message: dict, headers: dict) -> None:
    assert headers_for(message) == headers
