"""Completion from the catalog and strict cursors, end to end over real HTTP with the official
MCP Python SDK (issue 12 items 4 and 5): gateway → Redis → worker → the sample catalog in Redis
mode, and one embedded process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp.types import PromptReference, ResourceTemplateReference

from tests.conftest import start_pwc_mcp
from tests.integration.conftest import Cluster
from tests.integration.test_mcp_client_e2e import RAISED_LIMITS, client_for

pytestmark = pytest.mark.slow


@pytest.fixture(params=["redis", "embedded"])
def server_url(request: pytest.FixtureRequest, cluster_factory: Callable[..., Cluster], catalog_url: str,
               tmp_path: Path) -> Iterator[str]:
    if request.param == "redis":
        yield cluster_factory(gateways=1, workers=1, **RAISED_LIMITS).gateways[0].mcp_url
        return
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, **RAISED_LIMITS},
                           log_path=tmp_path / "embedded.log")
    try:
        yield server.mcp_url
    finally:
        server.stop()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_completion_offers_what_the_catalog_holds(server_url: str, mode: str) -> None:
    async with client_for(server_url, mode) as client:
        task = await client.complete(PromptReference(type="ref/prompt", name="survey_task"),
                                     {"name": "task", "value": "Constituency Parsin"})
        assert task.completion.values == ["Constituency Parsing"] and task.completion.has_more is False
        slug = await client.complete(PromptReference(type="ref/prompt", name="survey_task"),
                                     {"name": "task", "value": "image-generation"})
        assert slug.completion.values == ["image-generation"]  # the slug of the sample's Image Generation
        lacking = await client.complete(PromptReference(type="ref/prompt", name="survey_task"),
                                        {"name": "task", "value": "protein-folding"})
        assert lacking.completion.values == []
        paper = await client.complete(ResourceTemplateReference(type="ref/resource", uri="pwc://papers/{paper}"),
                                      {"name": "paper", "value": "Attention Is All"})
        assert "Attention Is All You Need" in paper.completion.values
        benchmark = await client.complete(PromptReference(type="ref/prompt", name="compare_leaderboard"),
                                          {"name": "benchmark", "value": "imagen"})
        assert benchmark.completion.values[0] == "ImageNet"


async def test_a_catalog_failure_completes_to_nothing_not_an_error(tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": "http://127.0.0.1:9/api/v1", "PWC_MCP_CATALOG_TIMEOUT": "1"},
                           log_path=tmp_path / "down.log")
    try:
        async with client_for(server.mcp_url, "legacy") as client:
            result = await client.complete(PromptReference(type="ref/prompt", name="survey_task"),
                                           {"name": "task", "value": "Constituency"})
            # The citation format's values are fixed: they need no catalog.
            citation = ResourceTemplateReference(type="ref/resource", uri="pwc://papers/{paper}/citation{?format}")
            formats = await client.complete(citation, {"name": "format", "value": "r"})
        assert result.completion.values == []
        assert formats.completion.values == ["ris"]
    finally:
        server.stop()


async def test_a_mangled_cursor_is_an_invalid_argument_over_http(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url, "PWC_MCP_CHUNK_BYTES": "1024",
                                           **RAISED_LIMITS}, log_path=tmp_path / "cursor.log")
    try:
        async with client_for(server.mcp_url, "legacy") as client:
            first = await client.call_tool("read_paper", {"paper": "1706.03762"})
            cursor = first.structured_content["next_cursor"]
            for mangled in (cursor[: len(cursor) // 2], "%%%private%%%"):
                result = await client.call_tool("read_paper", {"paper": "1706.03762", "cursor": mangled})
                assert result.is_error
                assert result.content[0].text.startswith("invalid_argument: invalid continuation cursor")
                assert "omit cursor to start from the beginning" in result.content[0].text
            again = await client.call_tool("read_paper", {"paper": "1706.03762", "cursor": "next"})
            assert not again.is_error and again.structured_content["offset"] == 0
    finally:
        server.stop()
