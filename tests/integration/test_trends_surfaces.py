"""get_trends on every surface over the sample catalog: /mcp, legacy SSE and stdio with the official
SDK, REST (and its OpenAPI operation), and the ``pwc trends`` CLI as a process, each giving the same
counts; an unknown task is an error result (a 404 JSON body over REST, exit 4 from the CLI)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from pwc.chart import trends_png
from tests.conftest import REPO_ROOT, start_pwc_mcp
from tests.core.mcp_server.test_stdio import stdio_params

pytestmark = pytest.mark.slow

ARGUMENTS = {"task": "Image Classification", "from_year": 2016, "to_year": 2019}
# Image Classification: DenseNet 2016, nothing in 2017 or 2018, EfficientNet 2019 (both with code).
YEARS = [{"year": 2016, "papers": 1, "with_code": 1, "share_with_code": 1.0},
         {"year": 2017, "papers": 0, "with_code": 0, "share_with_code": None},
         {"year": 2018, "papers": 0, "with_code": 0, "share_with_code": None},
         {"year": 2019, "papers": 1, "with_code": 1, "share_with_code": 1.0}]
TABLE = "2016|1|1|100%\n2017|0|0|—\n2018|0|0|—\n2019|1|1|100%"
UNKNOWN = {"task": "no-such-task-anywhere"}
ENV = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_CONCURRENCY_LIMIT": "64"}


async def _session(client: Client) -> dict[str, Any]:
    """Call get_trends and an unknown task through one SDK session; returns the structured content
    with the chart's base64 PNG as ``images``, the way REST carries it."""
    result = await client.call_tool("get_trends", ARGUMENTS)
    assert not result.is_error, result.content
    text, image = result.content
    assert TABLE in text.text and (image.type, image.mime_type) == ("image", "image/png")
    missing = await client.call_tool("get_trends", UNKNOWN)
    assert missing.is_error and missing.content[0].text.startswith(
        "not_found: Task not found: no-such-task-anywhere")
    assert "give its exact name, slug or ID" in missing.content[0].text
    return {**(result.structured_content or {}), "images": [{"mimeType": image.mime_type, "data": image.data}]}


def test_mcp_sse_rest_and_openapi(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **ENV}, log_path=tmp_path / "gateway.log")

    async def sessions() -> tuple[dict[str, Any], dict[str, Any]]:
        async with asyncio.timeout(90):
            async with httpx2.AsyncClient(headers={"X-PwC-MCP-Client": "trends-mcp"},
                                          timeout=httpx2.Timeout(60)) as http, \
                    Client(streamable_http_client(server.mcp_url, http_client=http), mode="legacy") as client:
                over_mcp = await _session(client)
            async with Client(sse_client(f"{server.base_url}/sse", headers={"X-PwC-MCP-Client": "trends-sse"},
                                         timeout=30), mode="legacy") as client:
                over_sse = await _session(client)
        return over_mcp, over_sse

    try:
        over_mcp, over_sse = asyncio.run(sessions())
        rest = httpx.get(f"{server.base_url}/v1/tools/get_trends", params=ARGUMENTS, timeout=60)
        posted = httpx.post(f"{server.base_url}/v1/tools/get_trends", json=ARGUMENTS, timeout=60)
        missing = httpx.get(f"{server.base_url}/v1/tools/get_trends", params=UNKNOWN, timeout=60)
        neither = httpx.get(f"{server.base_url}/v1/tools/get_trends", timeout=60)
        openapi = httpx.get(f"{server.base_url}/openapi.json", timeout=60).json()
    finally:
        server.stop()
    assert over_mcp["years"] == YEARS and over_sse == over_mcp
    assert rest.status_code == 200 and rest.json() == over_mcp == posted.json()
    assert missing.status_code == 404 and missing.json()["error"].startswith("not_found: Task not found: ")
    assert (neither.status_code, neither.json()) == (
        422, {"error": "invalid_argument: trends needs exactly one of task, method or benchmark"})
    operation = openapi["paths"]["/v1/tools/get_trends"]
    assert {"get", "post"} <= set(operation)
    assert {p["name"] for p in operation["get"]["parameters"]} == {"task", "method", "benchmark", "from_year",
                                                                  "to_year"}


def test_stdio_and_the_cli_give_the_same_counts(catalog_url: str) -> None:
    async def over_stdio() -> dict[str, Any]:
        async with asyncio.timeout(60):
            async with Client(stdio_params(catalog_url), mode="auto") as client:
                return await _session(client)

    structured = asyncio.run(over_stdio())
    assert structured["years"] == YEARS
    typed = {key: value for key, value in structured.items() if key != "images"}
    assert base64.b64decode(structured["images"][0]["data"]) == trends_png(typed)
    pwc = [str(Path(sys.executable).parent / "pwc"), "trends", "--task", "Image Classification",
           "--from-year", "2016", "--to-year", "2019"]
    env = {**os.environ, "PWC_API_URL": catalog_url}
    as_json = subprocess.run([*pwc, "--json"], capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert (as_json.returncode, as_json.stderr) == (0, "")
    cli = json.loads(as_json.stdout)["data"]
    assert {key: cli[key] for key in cli if key in typed} == {key: typed[key] for key in cli if key in typed}
    assert cli["years"] == typed["years"]
    as_text = subprocess.run(pwc, capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60)
    assert as_text.returncode == 0 and TABLE in as_text.stdout
    missing = subprocess.run([*pwc[:2], "--task", "no-such-task-anywhere"], capture_output=True, text=True,
                             env=env, cwd=REPO_ROOT, timeout=60)
    assert missing.returncode == 4 and missing.stdout == ""
    assert missing.stderr.startswith("pwc: Task not found: no-such-task-anywhere")
