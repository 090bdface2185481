"""A refused call over legacy SSE fails alone (issue 33 item 2), with the official Python SDK.

The SDK's ``sse_client`` ends the whole session when a ``POST /messages`` answers non-2xx.
A refusal that names the call's id is therefore that call's JSON-RPC error on the stream,
and the POST is accepted: the refused call raises with the reason and when to retry, and
the session goes on. A real gateway process (embedded mode) on the sample catalog, with the
Python SDK and the TypeScript SDK (v1 and v2).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client, MCPError
from mcp.client.sse import sse_client

from tests.conftest import ServerProcess, start_pwc_mcp
from tests.integration.test_sse_node_clients import node_env, node_toolbox  # noqa: F401 - fixture

pytestmark = pytest.mark.slow


async def _session(url: str) -> dict[str, object]:
    seen: dict[str, object] = {}
    async with Client(sse_client(url, headers={"X-PwC-MCP-Client": "refused-alone"}, timeout=30),
                      mode="legacy") as client:
        await client.call_tool("search_papers", {"query": "attention"})  # hybrid: the one allowed
        with pytest.raises(MCPError) as refused:
            await client.call_tool("search_papers", {"query": "transformers"})
        seen["message"] = str(refused.value)
        seen["data"] = refused.value.error.data
        # The same session goes on: another tool, a keyword search, the tool list.
        task = await client.call_tool("get_task", {"task": "image-classification"})
        seen["task"] = task.is_error
        keyword = await client.call_tool("search_papers", {"query": "attention", "mode": "keyword"})
        seen["keyword"] = keyword.is_error
        seen["tools"] = len((await client.list_tools()).tools)
    return seen


def test_a_refused_call_over_sse_fails_alone_and_the_session_goes_on(catalog_url: str, tmp_path: Path) -> None:
    server: ServerProcess = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_SEMANTIC_LIMIT": "1"},
                                          log_path=tmp_path / "gateway.log")
    try:
        seen = asyncio.run(asyncio.wait_for(_session(f"{server.base_url}/sse"), 60))
    finally:
        server.stop()
    assert "Rate limit exceeded (semantic searches per client per minute)" in str(seen["message"])
    assert "mode=keyword" in str(seen["message"])
    data = seen["data"]
    assert isinstance(data, dict) and data["error"] == "rate_limit_exceeded" and data["limit"] == "semantic"
    assert 1 <= data["retry_after_s"] <= 60
    assert (seen["task"], seen["keyword"]) == (False, False) and seen["tools"] > 20
    log = server.log_text()
    assert "status=429" in log  # the refusal stays counted and logged


@pytest.mark.parametrize("flavour", ["v1", "v2"])
def test_a_refused_call_fails_alone_with_the_typescript_sdk(catalog_url: str, tmp_path: Path, node_toolbox: Path,
                                                            flavour: str) -> None:
    script = Path(__file__).parent / "node" / "sse_refusal.mjs"
    shutil.copy(script, node_toolbox / script.name)  # ESM resolves packages beside the script
    server: ServerProcess = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_SEMANTIC_LIMIT": "1"},
                                          log_path=tmp_path / "gateway.log")
    try:
        result = subprocess.run([str(node_toolbox / "node_modules" / ".bin" / "node"), str(node_toolbox / script.name),
                                 f"{server.base_url}/sse", flavour], capture_output=True, text=True, timeout=120,
                                env=node_env(node_toolbox))
    finally:
        server.stop()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["refused"] and "Rate limit exceeded (semantic searches" in seen["message"]
    assert seen["data"]["error"] == "rate_limit_exceeded" and 1 <= seen["data"]["retry_after_s"] <= 60
    assert seen["task_ok"] and seen["tools"] > 20
