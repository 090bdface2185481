"""A refusal that MCP SDKs on ``mcp`` 1.x can read (issue 33 item 5), with langchain-mcp-adapters.

Those clients raise ``httpx.HTTPStatusError`` for a non-2xx answer and drop its body, so the
good message ("retry after 58 s, or use mode=keyword") was lost. Now the refusal's reason
phrase carries the message, so the error they raise says it; and ``PWC_MCP_REFUSAL_STATUS=200``
answers a refused request with HTTP 200 and the JSON-RPC error, which they raise as
``McpError`` with the message. Either way the next call works. A real gateway process
(embedded mode) on the sample catalog; langchain-mcp-adapters in an isolated environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, start_pwc_mcp

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SCRIPT = textwrap.dedent("""
    import asyncio, json, sys
    from langchain_mcp_adapters.client import MultiServerMCPClient

    def leaves(exc):
        if isinstance(exc, BaseExceptionGroup):
            return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
        return [f"{type(exc).__name__}: {exc}"]

    async def main():
        client = MultiServerMCPClient({"pwc": {"url": sys.argv[1], "transport": sys.argv[2],
                                               "headers": {"X-PwC-MCP-Client": sys.argv[3]}}})
        tools = {tool.name: tool for tool in await client.get_tools()}
        seen = {}
        await tools["search_papers"].ainvoke({"query": "attention"})
        try:
            await tools["search_papers"].ainvoke({"query": "transformers"})
        except BaseException as exc:
            seen["errors"] = leaves(exc)
        task = await tools["get_task"].ainvoke({"task": "image-classification"})
        seen["after"] = "image" in str(task).lower()
        print(json.dumps(seen))

    asyncio.run(main())
""")


def _langchain(script: Path, url: str, transport: str, who: str) -> dict:
    run = subprocess.run(["uv", "run", "--no-project", "--with", "langchain-mcp-adapters==0.3.2", "python",
                          str(script), url, transport, who], capture_output=True, text=True, timeout=300,
                         check=False, env={**os.environ})
    if run.returncode != 0 and "No solution found" in run.stderr + run.stdout:
        pytest.skip("langchain-mcp-adapters could not be installed")
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("mode", "transport", "expected"), [
    pytest.param("http", "streamable_http", "HTTPStatusError: Client error '429 Rate limit exceeded (semantic searches",
                 id="reason-phrase-streamable-http"),
    pytest.param("200", "streamable_http", "McpError: Rate limit exceeded (semantic searches",
                 id="as-200-streamable-http"),
    pytest.param("http", "sse", "McpError: Rate limit exceeded (semantic searches", id="sse"),
])
def test_langchain_reads_the_refusal_and_goes_on(catalog_url: str, tmp_path: Path, mode: str, transport: str,
                                                 expected: str) -> None:
    script = tmp_path / "langchain_refusal.py"
    script.write_text(SCRIPT, encoding="utf-8")
    server: ServerProcess = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_SEMANTIC_LIMIT": "1",
                                                          "PWC_MCP_REFUSAL_STATUS": mode},
                                          log_path=tmp_path / "gateway.log")
    path = "/mcp" if transport == "streamable_http" else "/sse"
    try:
        seen = _langchain(script, f"{server.base_url}{path}", transport, f"lc-{mode}-{transport}")
    finally:
        server.stop()
    errors = seen.get("errors") or []
    assert any(error.startswith(expected) for error in errors), errors
    refusal = next(error for error in errors if error.startswith(expected))
    assert "retry after" in refusal and "mode=keyword" in refusal
    assert seen["after"] is True
    assert "status=429" in server.log_text()  # counted and logged as the refusal it is
