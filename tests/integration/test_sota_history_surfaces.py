"""get_sota_history on the embedded server over the sample catalog: the chart is MCP image content
on /mcp, SSE and stdio and the ``images`` field over REST, next to the same structured content; the
MCP surfaces also serve the tool's MCP Apps view. The CLI's ``--chart`` is tests/pwc/test_history.py."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.types import ImageContent, TextContent, TextResourceContents

from pwc.chart import history_png
from pwc_mcp_core.tools.apps import APP_MIME_TYPE, SOTA_HISTORY_URI, view_html
from tests.conftest import start_pwc_mcp
from tests.core.mcp_server.test_stdio import stdio_params

pytestmark = pytest.mark.slow


def test_mcp_and_rest_carry_the_chart(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "1000"},
                           log_path=tmp_path / "gateway.log")
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "get_sota_history", "arguments": {"benchmark": "ImageNet"}}}
        result = httpx.post(server.mcp_url, json=call, headers=headers, timeout=60).json()["result"]
        rest = httpx.get(f"{server.base_url}/v1/tools/get_sota_history", params={"benchmark": "ImageNet"},
                         timeout=60).json()
    finally:
        server.stop()
    text, image = result["content"]
    assert text["type"] == "text" and "ViT-H/14" in text["text"]
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    png = base64.b64decode(image["data"])
    assert png == history_png(result["structuredContent"]["data"])
    assert rest["images"] == [{"mimeType": "image/png", "data": image["data"]}]
    assert {k: v for k, v in rest.items() if k != "images"} == result["structuredContent"]


async def _chart_and_view(client: Client) -> None:
    """The SDK client gets the chart as image content beside the text, and reads the MCP Apps view
    the tool names (issue 32 item 4)."""
    result = await client.call_tool("get_sota_history", {"benchmark": "ImageNet"})
    text, image = result.content
    assert isinstance(text, TextContent) and "ViT-H/14" in text.text
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert result.structured_content is not None
    assert base64.b64decode(image.data) == history_png(result.structured_content["data"])
    tool = next(t for t in (await client.list_tools()).tools if t.name == "get_sota_history")
    assert tool.meta == {"ui": {"resourceUri": SOTA_HISTORY_URI}}
    (view,) = (await client.read_resource(SOTA_HISTORY_URI)).contents
    assert isinstance(view, TextResourceContents) and view.mime_type == APP_MIME_TYPE
    assert view.text == view_html(SOTA_HISTORY_URI)


async def test_sse_carries_the_chart_and_the_view(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_REQUEST_LIMIT": "1000"},
                           log_path=tmp_path / "gateway.log")
    try:
        async with asyncio.timeout(90), Client(sse_client(f"{server.base_url}/sse", timeout=30),
                                               mode="legacy") as client:
            await _chart_and_view(client)
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_carries_the_chart_and_the_view(catalog_url: str, mode: str) -> None:
    async with asyncio.timeout(90), Client(stdio_params(catalog_url), mode=mode) as client:
        await _chart_and_view(client)
