"""The official MCP Python SDK client (mcp==2.3.0) talks to `McpServer` in both eras.

A tiny aiohttp app stands in for the gateway (which is tested on its own):
POST /mcp → `McpServer.handle` → the reply's status, headers and body.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from mcp import Client

from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.runtime.dispatch import InMemoryDispatcher
from pwc_mcp_core.tools.instructions import SERVER_INSTRUCTIONS
from tests.core.mcp_server.test_server import FAKE_TOOLS

ECHO_TOOLS = [{**t, "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}} for t in FAKE_TOOLS]


async def echo_executor(call: Call) -> bytes:
    """Answer tool calls with an echo of the call and resources with their URI."""
    if call.kind == "resources/read":
        return (b'{"result":{"contents":[{"uri":"%s","mimeType":"application/json","text":"{}"}]}}'
                % call.name.encode())
    return b'{"result":{"content":[{"type":"text","text":"%s %s"}],"isError":false}}' % (
        call.name.encode(), call.era.encode())


@pytest.fixture
async def mcp_url(aiohttp_server: Any) -> str:
    server = McpServer(CoreSettings(cursor_keys=("k",)), InMemoryDispatcher(echo_executor), tools=ECHO_TOOLS)

    async def post(request: web.Request) -> web.Response:
        reply = await server.handle(await request.read(), request.headers)
        return web.Response(status=reply.status, body=reply.body, headers=reply.headers)

    app = web.Application()
    app.router.add_post("/mcp", post)
    test_server = await aiohttp_server(app)
    return str(test_server.make_url("/mcp"))


@pytest.mark.parametrize(("mode", "version"), [
    pytest.param("legacy", "2025-11-25", id="legacy"),
    pytest.param("2026-07-28", "2026-07-28", id="modern-pinned"),
    pytest.param("auto", "2026-07-28", id="auto-negotiates-modern"),
])
async def test_the_sdk_client_lists_calls_reads_and_prompts_in_each_era(mcp_url: str, mode: str, version: str) -> None:
    async with asyncio.timeout(30):
        async with Client(mcp_url, mode=mode) as client:
            assert client.protocol_version == version
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["search_papers", "get_task"]
            result = await client.call_tool("get_task", {"q": "x"})
            era = "legacy" if mode == "legacy" else "modern"
            assert result.content[0].text == f"get_task {era}" and not result.is_error
            read = await client.read_resource("pwc://tasks/image-classification")
            assert read.contents[0].uri == "pwc://tasks/image-classification"
            templates = await client.list_resource_templates()
            assert len(templates.resource_templates) == 5
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["find_papers", "compare_leaderboard", "survey_task"]
            prompt = await client.get_prompt("survey_task", {"task": "image-classification"})
            assert prompt.messages[0].content.text.startswith("Survey the 'image-classification' task.")
            resources = await client.list_resources()
            assert resources.resources == []


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_legacy_sdk_client_sees_instructions_ping_and_logging(mcp_url: str) -> None:
    async with asyncio.timeout(30):
        async with Client(mcp_url, mode="legacy") as client:
            assert client.instructions == SERVER_INSTRUCTIONS
            assert client.server_info.name == "pwc"
            await client.send_ping()
            await client.set_logging_level("warning")


async def test_an_unknown_tool_reaches_the_sdk_client_as_an_error(mcp_url: str) -> None:
    async with asyncio.timeout(30):
        async with Client(mcp_url, mode="legacy") as client:
            with pytest.raises(Exception, match="Unknown tool: nope"):
                await client.call_tool("nope", {})
