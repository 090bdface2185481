"""Redis mode over HTTP: shared limits across gateway instances and failing closed (real redis-server)."""

from __future__ import annotations

import asyncio

from gateway.process.app import create_app
from tests.gateway.conftest import (
    FAKE_TOOLS,
    JSON_HEADERS,
    FakeDispatcher,
    make_settings,
    rpc,
    tool_call,
)
from tests.helpers import refusal_error


def me(name: str) -> dict[str, str]:
    return {**JSON_HEADERS, "X-PwC-MCP-Client": name}


async def test_two_gateways_share_one_client_budget(aiohttp_client, redis_url: str) -> None:
    one = await aiohttp_client(create_app(make_settings(redis_url=redis_url, request_limit=5, concurrency_limit=100),
                                          dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    two = await aiohttp_client(create_app(make_settings(redis_url=redis_url, request_limit=5, concurrency_limit=100),
                                          dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    responses = await asyncio.gather(*[(one if i % 2 else two).post("/mcp", data=rpc("ping"), headers=me("shared"))
                                       for i in range(12)])
    assert sorted(r.status for r in responses) == [200] * 5 + [429] * 7
    assert (await one.post("/mcp", data=rpc("ping"), headers=me("someone-else"))).status == 200


async def test_two_gateways_share_one_concurrency_budget(aiohttp_client, redis_url: str) -> None:
    slow_one, slow_two = FakeDispatcher(blocking=True), FakeDispatcher(blocking=True)
    one = await aiohttp_client(create_app(make_settings(redis_url=redis_url, concurrency_limit=2),
                                          dispatcher=slow_one, tools=FAKE_TOOLS))
    two = await aiohttp_client(create_app(make_settings(redis_url=redis_url, concurrency_limit=2),
                                          dispatcher=slow_two, tools=FAKE_TOOLS))
    held = [asyncio.create_task(one.post("/mcp", data=tool_call(), headers=me("c"))),
            asyncio.create_task(two.post("/mcp", data=tool_call(), headers=me("c")))]
    await slow_one.wait_started(1)
    await slow_two.wait_started(1)
    assert (await one.post("/mcp", data=tool_call(), headers=me("c"))).status == 429
    assert (await two.post("/mcp", data=tool_call(), headers=me("c"))).status == 429
    slow_one.gate.set()
    slow_two.gate.set()
    assert [r.status for r in await asyncio.gather(*held)] == [200, 200]
    assert (await two.post("/mcp", data=tool_call(), headers=me("c"))).status == 200


async def test_redis_down_fails_closed_then_recovers_without_restart(aiohttp_client, redis_server,
                                                                     redis_url: str) -> None:
    client = await aiohttp_client(create_app(make_settings(redis_url=redis_url), dispatcher=FakeDispatcher(),
                                             tools=FAKE_TOOLS))
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("a"))).status == 200
    redis_server.stop()
    try:
        response = await client.post("/mcp", data=rpc("ping"), headers=me("a"))
        assert response.status == 503
        assert response.headers["Retry-After"] == "1"
        assert refusal_error(await response.read()) == "limits_unavailable"
    finally:
        redis_server.start()
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("a"))).status == 200


async def test_redis_mode_uses_the_redis_dispatcher_and_reports_no_workers(aiohttp_client, redis_url: str) -> None:
    from gateway.dispatch.redis_dispatcher import RedisDispatcher
    from gateway.process.app import DISPATCHER

    app = create_app(make_settings(redis_url=redis_url, call_deadline_s=1.0), tools=FAKE_TOOLS)
    client = await aiohttp_client(app)
    assert isinstance(app[DISPATCHER], RedisDispatcher)
    body = await (await client.get("/health")).json()
    assert body["status"] == "unavailable"
    assert body["checks"]["workers"] == 0
    response = await client.post("/mcp", data=tool_call(), headers=me("nobody-home"))
    assert response.status == 503  # no worker registered within the call's deadline
