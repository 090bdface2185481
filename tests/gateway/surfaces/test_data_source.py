"""What data the catalog serves, on every MCP surface (issue 29 item 4): ``/health``,
``/.well-known/mcp``, ``/docs`` and one line of the ``initialize`` instructions.

The gateway learns it from the catalog's ``GET catalog`` (fetched beside the health probe, refreshed,
and absent gracefully when the upstream does not serve it).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from gateway.process.app import create_app
from gateway.surfaces.health import HealthState
from pwc_mcp_core.tools.data_source import DataSource
from pwc_mcp_core.tools.instructions import SERVER_INSTRUCTIONS
from tests.conftest import start_pwc_mcp
from tests.gateway.conftest import FAKE_TOOLS, JSON_HEADERS, FakeDispatcher, make_settings, rpc

COMMIT = "0123456789abcdef0123456789abcdef01234567"
ARCHIVE: dict[str, Any] = {
    "provenance": "recorded", "kind": "archive", "license": "CC BY-SA 4.0", "latest_paper": "2025-07-24",
    "imported_at": "2025-08-01T12:00:00+00:00", "embedding": {"model": "wordllama-l2_supercat-256"},
    "datasets": [{"id": "pwc-archive/papers-with-abstracts", "revision": COMMIT}], "imports": [],
}
ARCHIVE_LINE = "Data: Papers With Code archive snapshot (papers up to 2025-07-24), CC BY-SA 4.0."


class Catalog:
    """A stub catalog: ``tasks/`` for the health probe and ``catalog`` answering ``record``
    (None: 404, as an upstream that is not this project's catalog)."""

    def __init__(self) -> None:
        self.record: object = ARCHIVE
        self.fetches = 0

    async def tasks(self, request: web.Request) -> web.Response:
        return web.json_response({"results": [], "count": 0})

    async def catalog(self, request: web.Request) -> web.Response:
        self.fetches += 1
        if self.record is None:
            return web.json_response({"detail": "Not found"}, status=404)
        if isinstance(self.record, bytes):
            return web.Response(body=self.record, content_type="application/json")
        return web.json_response(self.record)


async def start_stub(aiohttp_server, catalog: Catalog) -> tuple[str, Any]:  # type: ignore[no-untyped-def]
    app = web.Application()
    app.router.add_get("/api/v1/tasks/", catalog.tasks)
    app.router.add_get("/api/v1/catalog", catalog.catalog)
    server = await aiohttp_server(app)
    return str(server.make_url("/api/v1")), server


async def poll_data(client) -> dict:  # type: ignore[no-untyped-def]
    """Poll ``/health`` until its ``data`` says the provenance is recorded (bounded)."""
    async with asyncio.timeout(5):
        while True:
            body = await (await client.get("/health")).json()
            if body["data"]["provenance"] == "recorded":
                return body
            await asyncio.sleep(0.05)


async def instructions(client) -> str:  # type: ignore[no-untyped-def]
    response = await client.post("/mcp", data=rpc("initialize", {"protocolVersion": "2025-11-25"}),
                                 headers=JSON_HEADERS)
    return str((await response.json())["result"]["instructions"])


async def test_every_surface_shows_an_archive_catalog(aiohttp_client, aiohttp_server) -> None:
    api, _ = await start_stub(aiohttp_server, Catalog())
    client = await aiohttp_client(create_app(make_settings(api_url=api), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    health = await poll_data(client)
    assert health["data"] == {
        "provenance": "recorded", "kind": "archive", "title": "Papers With Code archive", "license": "CC BY-SA 4.0",
        "latest_paper": "2025-07-24", "imported_at": "2025-08-01T12:00:00+00:00",
        "datasets": [{"id": "pwc-archive/papers-with-abstracts", "revision": COMMIT}],
        "embedding_model": "wordllama-l2_supercat-256"}
    assert (await (await client.get("/.well-known/mcp")).json())["data"] == health["data"]
    assert (await (await client.get("/docs?format=json")).json())["data"] == health["data"]
    page = await (await client.get("/docs?format=html")).text()
    assert "Data: Papers With Code archive, papers up to 2025-07-24, CC BY-SA 4.0" in page
    assert await instructions(client) == f"{SERVER_INSTRUCTIONS} {ARCHIVE_LINE}"


async def test_an_upstream_without_provenance_shows_unknown_and_no_data_line(aiohttp_client, aiohttp_server) -> None:
    catalog = Catalog()
    catalog.record = None
    api, _ = await start_stub(aiohttp_server, catalog)
    client = await aiohttp_client(create_app(make_settings(api_url=api), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    async with asyncio.timeout(5):
        while catalog.fetches == 0:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)
    health = await client.get("/health")
    assert health.status == 200 and (await health.json())["data"] == {"provenance": "unknown"}
    assert (await (await client.get("/.well-known/mcp")).json())["data"] == {"provenance": "unknown"}
    assert (await (await client.get("/docs?format=json")).json())["data"] == {"provenance": "unknown"}
    assert "provenance unknown" in await (await client.get("/docs?format=html")).text()
    assert await instructions(client) == SERVER_INSTRUCTIONS


async def test_the_provenance_is_refreshed_and_kept_across_a_network_failure(aiohttp_server) -> None:
    catalog = Catalog()
    api, server = await start_stub(aiohttp_server, catalog)
    seen: list[DataSource | None] = []
    health = HealthState(api, ok_interval_s=30, fail_interval_s=5)
    health.on_data_source(seen.append)
    async with httpx.AsyncClient(timeout=5) as http:
        assert (await health.fetch_data_source(http)) is not None
        assert await health.fetch_data_source(http) == seen[0]  # unchanged: no second notification
        catalog.record = {**ARCHIVE, "kind": "sample"}
        assert (await health.fetch_data_source(http)).kind == "sample"  # type: ignore[union-attr]
        catalog.record = b"{" + b" " * (2 << 20) + b"}"  # larger than any provenance record
        assert await health.fetch_data_source(http) is None
        catalog.record = ARCHIVE
        await health.fetch_data_source(http)
        await server.close()  # the catalog is gone: the last value stays
        assert (await health.fetch_data_source(http)).kind == "archive"  # type: ignore[union-attr]
    assert [s.kind if s else None for s in seen] == ["archive", "sample", None, "archive"]


def _poll_data(base_url: str) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            body = httpx.get(f"{base_url}/health", timeout=5).json()
            if body["data"]["provenance"] == "recorded":
                return body
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError("the gateway never showed the catalog's provenance")


@pytest.mark.timeout(120)
def test_a_gateway_over_the_sample_catalog_says_it_serves_the_sample(catalog_url: str, tmp_path: Path) -> None:
    server = start_pwc_mcp("gateway", env={"PWC_API_URL": catalog_url}, log_path=tmp_path / "gateway.log")
    try:
        health = _poll_data(server.base_url)
        data = health["data"]
        assert data["kind"] == "sample" and data["title"] == "Bundled sample catalog"
        assert data["embedding_model"] == "wordllama-l2_supercat-256" and data["datasets"] == []
        assert data["imported_at"] and data["latest_paper"] == "2024-12-27"
        assert httpx.get(f"{server.base_url}/.well-known/mcp", timeout=10).json()["data"] == data
        docs = httpx.get(f"{server.base_url}/docs", headers={"Accept": "application/json"}, timeout=10).json()
        assert docs["data"] == data
        page = httpx.get(f"{server.base_url}/docs", headers={"Accept": "text/html"}, timeout=10).text
        assert "Data: Bundled sample catalog" in page
        initialize = httpx.post(server.mcp_url, headers=JSON_HEADERS, timeout=10, content=json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        text = initialize.json()["result"]["instructions"]
        assert text.startswith(SERVER_INSTRUCTIONS)
        line = text.removeprefix(SERVER_INSTRUCTIONS).strip()
        assert line.startswith("Data: the bundled sample catalog") and "\n" not in line and len(line) < 140
    finally:
        server.stop()
