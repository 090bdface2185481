"""``/health``: readiness from cached background probes only (docs/tool-contract.md §1.3)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from aiohttp import web

from gateway.process.app import HEALTH, create_app
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings


async def catalog_stub(aiohttp_server, *, status: int = 200, payload: object = None,
                       hang: asyncio.Event | None = None) -> str:
    """A tiny catalog answering ``tasks/`` and return its API base URL; with ``hang``, each answer
    waits until that event is set (set it before the test ends, or the server's shutdown waits)."""

    async def tasks(request: web.Request) -> web.Response:
        if hang is not None:
            await hang.wait()
        return web.json_response(payload if payload is not None else {"results": [], "count": 0}, status=status)

    app = web.Application()
    app.router.add_get("/api/v1/tasks/", tasks)
    server = await aiohttp_server(app)
    return str(server.make_url("/api/v1"))


async def poll_health(client, want: int) -> dict:
    """Poll /health until it answers ``want`` (bounded)."""
    async with asyncio.timeout(5):
        while True:
            response = await client.get("/health")
            if response.status == want:
                return await response.json()
            await asyncio.sleep(0.05)


async def test_health_is_unavailable_while_the_catalog_is_unreachable(aiohttp_client) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    response = await client.get("/health")
    body = await response.json()
    assert response.status == 503
    assert body["status"] == "unavailable"
    assert body["service"] == "pwc-mcp" and body["protocol"] == "2025-11-25"
    assert body["checks"] == {"redis": "embedded", "workers": None, "catalog": "unavailable"}


async def test_health_becomes_ok_once_the_catalog_answers(aiohttp_client, aiohttp_server) -> None:
    api = await catalog_stub(aiohttp_server)
    client = await aiohttp_client(create_app(make_settings(api_url=api), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    body = await poll_health(client, 200)
    assert body["status"] == "ok"
    assert body["checks"]["catalog"] == "ok"


@pytest.mark.parametrize(("status", "payload"), [
    pytest.param(500, {"results": []}, id="server-error"),
    pytest.param(200, {"detail": "nope"}, id="not-a-listing"),
    pytest.param(200, ["a"], id="not-an-object"),
])
async def test_a_catalog_that_answers_wrongly_is_not_ready(aiohttp_client, aiohttp_server, status: int,
                                                           payload: object) -> None:
    api = await catalog_stub(aiohttp_server, status=status, payload=payload)
    app = create_app(make_settings(api_url=api), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS)
    client = await aiohttp_client(app)
    async with httpx.AsyncClient() as http:
        assert not await app[HEALTH].probe_catalog(http)
    assert (await client.get("/health")).status == 503


async def test_health_never_waits_on_a_hanging_catalog(aiohttp_client, aiohttp_server) -> None:
    hold = asyncio.Event()
    api = await catalog_stub(aiohttp_server, hang=hold)
    client = await aiohttp_client(create_app(make_settings(api_url=api), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    try:
        for _ in range(3):
            assert (await client.get("/health")).status == 503
    finally:
        hold.set()  # the probe's request ends, so the stub's shutdown does not wait for it


async def test_redis_mode_needs_redis_and_a_live_worker(aiohttp_client, aiohttp_server, redis_url: str) -> None:
    api = await catalog_stub(aiohttp_server)
    executor = FakeDispatcher(live_workers=0)
    client = await aiohttp_client(create_app(make_settings(api_url=api, redis_url=redis_url), dispatcher=executor,
                                             tools=FAKE_TOOLS))
    async with asyncio.timeout(5):
        while (body := await (await client.get("/health")).json())["checks"]["catalog"] != "ok":
            await asyncio.sleep(0.05)
    assert body["status"] == "unavailable"
    assert body["checks"]["workers"] == 0
    executor.live_workers = 2
    body = await poll_health(client, 200)
    assert body["checks"] == {"redis": "ok", "workers": 2, "catalog": "ok"}


async def test_redis_down_makes_health_unavailable(aiohttp_client, aiohttp_server, redis_server,
                                                   redis_url: str) -> None:
    api = await catalog_stub(aiohttp_server)
    client = await aiohttp_client(create_app(make_settings(api_url=api, redis_url=redis_url),
                                             dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    await poll_health(client, 200)
    redis_server.stop()
    try:
        body = await poll_health(client, 503)
        assert body["checks"]["redis"] == "unavailable"
    finally:
        redis_server.start()
    await poll_health(client, 200)
