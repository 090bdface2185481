"""get_sota_history on the embedded server over the sample catalog: the chart is MCP image content
on /mcp and the ``images`` field over REST, next to the same structured content."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest

from pwc.chart import history_png
from tests.conftest import start_pwc_mcp

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
