"""End to end with the official MCP Python SDK client, in both protocol eras.

Every tool, resource template and prompt, through gateway → Redis → worker →
the self-hosted catalog over HTTP (Redis mode), and the same through one
embedded process (no Redis).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from pwc_mcp_core.tools.examples import EXAMPLE_CALLS
from tests.conftest import start_pwc_mcp
from tests.integration.conftest import Cluster

pytestmark = pytest.mark.slow

RAISED_LIMITS = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000",
                 "PWC_MCP_CONCURRENCY_LIMIT": "64"}

TOOL_CALLS = EXAMPLE_CALLS

RESOURCES = [
    "pwc://papers/1706.03762",
    "pwc://papers/1810.04805/markdown",
    "pwc://tasks/image-classification",
    "pwc://benchmarks/ImageNet",
    "pwc://papers/1706.03762/citation?format=ris",
]

PROMPTS = {"find_papers": {"topic": "vision transformers"},
           "compare_leaderboard": {"benchmark": "ImageNet"},
           "survey_task": {"task": "image-classification"}}


@pytest.fixture(params=["redis", "embedded"])
def server_url(request: pytest.FixtureRequest, cluster_factory: Callable[..., Cluster], catalog_url: str,
               tmp_path: Path) -> Iterator[str]:
    """The MCP endpoint of a Redis-mode cluster (1 gateway, 1 worker) or of one embedded process."""
    if request.param == "redis":
        cluster = cluster_factory(gateways=1, workers=1, **RAISED_LIMITS)
        yield cluster.gateways[0].mcp_url
        return
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **RAISED_LIMITS},
                           log_path=tmp_path / "embedded.log")
    try:
        yield server.mcp_url
    finally:
        server.stop()


def client_for(url: str, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"X-PwC-MCP-Client": f"e2e-{mode}"}, timeout=httpx2.Timeout(60))
    return Client(streamable_http_client(url, http_client=http), mode=mode)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_tool_resource_and_prompt_works_through_a_real_client(server_url: str, mode: str) -> None:
    async with client_for(server_url, mode) as client:
        tools = await client.list_tools()
        assert sorted(tool.name for tool in tools.tools) == sorted(TOOL_CALLS)

        for name, arguments in TOOL_CALLS.items():
            result = await client.call_tool(name, arguments)
            text = " ".join(getattr(block, "text", "") for block in result.content)
            assert not result.is_error, f"{name}: {text}"
            assert result.structured_content["schema_version"] == "v1", name

        templates = await client.list_resource_templates()
        assert len(templates.resource_templates) == 5
        for uri in RESOURCES:
            contents = (await client.read_resource(uri)).contents
            assert contents and contents[0].text, uri

        prompts = await client.list_prompts()
        assert sorted(prompt.name for prompt in prompts.prompts) == sorted(PROMPTS)
        for name, arguments in PROMPTS.items():
            prompt = await client.get_prompt(name, arguments)
            assert next(iter(arguments.values())) in prompt.messages[0].content.text


async def test_tool_failures_are_error_results_not_protocol_errors(server_url: str) -> None:
    async with client_for(server_url, "legacy") as client:
        missing = await client.call_tool("get_task", {"task": "no-such-task-anywhere"})
        assert missing.is_error
        assert missing.content[0].text.startswith("not_found:")
        invalid = await client.call_tool("search_papers", {"query": "x", "limit": 500})
        assert invalid.is_error
        assert invalid.content[0].text.startswith("invalid_argument:")


async def test_search_results_carry_the_projections_not_the_cli_payload(server_url: str) -> None:
    async with client_for(server_url, "legacy") as client:
        result = await client.call_tool("search_papers", {"query": "transformer", "mode": "keyword", "limit": 2})
        structured = result.structured_content
        assert "data" not in structured  # the CLI payload stays with `pwc search --json`
        assert len(structured["items"]) == 2 and structured["total"] >= 2
        assert result.content[0].text.strip()
