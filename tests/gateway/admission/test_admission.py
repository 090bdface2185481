"""Admission of POST /mcp over HTTP: order, body bound, Host/Origin and each limit exactly."""

from __future__ import annotations

import asyncio

import pytest

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

MiB2 = 2 * 1024 * 1024


def app_for(executor: FakeDispatcher | None = None, **core):
    return create_app(make_settings(**core), dispatcher=executor or FakeDispatcher(), tools=FAKE_TOOLS)


def me(name: str) -> dict[str, str]:
    """Headers naming a loopback client's own identity (isolates the limit buckets)."""
    return {**JSON_HEADERS, "X-PwC-MCP-Client": name}


async def test_body_over_2_mib_by_content_length_is_413(aiohttp_client) -> None:
    client = await aiohttp_client(app_for())
    response = await client.post("/mcp", data=b"x" * (MiB2 + 1), headers=JSON_HEADERS)
    assert response.status == 413
    assert refusal_error(await response.json()) == "request_too_large"
    assert "Retry-After" not in response.headers


async def test_chunked_body_over_2_mib_without_length_is_413(aiohttp_client) -> None:
    client = await aiohttp_client(app_for())

    async def chunks():
        for _ in range(5):
            yield b"x" * (512 * 1024)

    response = await client.post("/mcp", data=chunks(), headers=JSON_HEADERS)
    assert response.status == 413
    assert refusal_error(await response.json()) == "request_too_large"


async def test_a_body_of_exactly_2_mib_is_read(aiohttp_client) -> None:
    client = await aiohttp_client(app_for())
    body = rpc("ping")
    body = body[:-1] + b" " * (MiB2 - len(body)) + b"}"
    response = await client.post("/mcp", data=body, headers=JSON_HEADERS)
    assert response.status == 200


@pytest.mark.parametrize(("headers", "status"), [
    pytest.param({"Host": "evil.example.com"}, 421, id="bad-host"),
    pytest.param({"Host": "localhost"}, 200, id="bare-localhost-matches-any-port-entry"),
    pytest.param({"Host": "localhost:99999999"}, 421, id="port-out-of-range"),
    pytest.param({"Origin": "https://evil.example.com"}, 403, id="bad-origin"),
    pytest.param({"Origin": "null"}, 403, id="null-origin"),
    pytest.param({"Origin": "https://chatgpt.com"}, 200, id="allowed-origin"),
    pytest.param({"Host": "localhost:7860"}, 200, id="localhost-any-port"),
])
async def test_host_and_origin_allowlists(aiohttp_client, headers: dict[str, str], status: int) -> None:
    client = await aiohttp_client(app_for())
    response = await client.post("/mcp", data=rpc("ping"), headers={**JSON_HEADERS, **headers})
    assert response.status == status


@pytest.mark.parametrize(("body", "headers", "status"), [
    pytest.param(b"x" * (MiB2 + 1), {"Host": "evil.example.com", "Origin": "https://evil.example.com"}, 413,
                 id="size-beats-host"),
    pytest.param(rpc("ping"), {"Host": "evil.example.com", "Origin": "https://evil.example.com"}, 421,
                 id="host-beats-origin"),
    pytest.param(rpc("ping"), {"Origin": "https://evil.example.com", "X-PwC-MCP-Client": "spent"}, 403,
                 id="origin-beats-limits"),
    pytest.param(rpc("ping"), {"X-PwC-MCP-Client": "spent", "Accept": "text/html", "Content-Type": "text/plain"}, 429,
                 id="limits-beat-accept"),
    pytest.param(rpc("ping"), {"X-PwC-MCP-Client": "fresh", "Accept": "text/html", "Content-Type": "text/plain"}, 406,
                 id="accept-beats-content-type"),
])
async def test_the_first_failing_check_answers(aiohttp_client, body: bytes, headers: dict[str, str],
                                               status: int) -> None:
    client = await aiohttp_client(app_for(request_limit=1))
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("spent"))).status == 200
    response = await client.post("/mcp", data=body, headers={**JSON_HEADERS, **headers})
    assert response.status == status


async def test_requests_per_minute_are_limited_exactly(aiohttp_client) -> None:
    client = await aiohttp_client(app_for(request_limit=3))
    statuses = [(await client.post("/mcp", data=b"{}", headers=me("a"))).status for _ in range(3)]
    assert 429 not in statuses
    response = await client.post("/mcp", data=b"{}", headers=me("a"))
    assert response.status == 429
    assert refusal_error(await response.read()) == "rate_limit_exceeded"
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    error = (await response.json())["error"]
    assert error["data"]["limit"] == "requests" and "(requests per client per minute)" in error["message"]
    assert "keyword searches and every other tool included" in error["message"]
    assert (await client.post("/mcp", data=b"{}", headers=me("b"))).status != 429
    assert 'pwc_mcp_limit_rejections_total{kind="requests"}' in await (await client.get("/metrics")).text()


NOT_REQUESTS = [
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
    b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_tasks"}}',  # no id: a notification
    b'{"jsonrpc":"2.0","id":3,"result":{}}',  # a client's response
    b'{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}',
]


async def test_notifications_and_responses_are_not_counted_as_requests(aiohttp_client) -> None:
    """JSON-RPC messages that get no answer (202, empty body) are not requests: a client that
    opens a session per call sends one ``notifications/initialized`` each time."""
    executor = FakeDispatcher()
    client = await aiohttp_client(app_for(executor, request_limit=2))
    for _ in range(3):
        for body in NOT_REQUESTS:
            response = await client.post("/mcp", data=body, headers=me("n"))
            assert (response.status, await response.read()) == (202, b"")
    assert executor.calls == []
    statuses = [(await client.post("/mcp", data=rpc("ping"), headers=me("n"))).status for _ in range(3)]
    assert statuses == [200, 200, 429]
    # Malformed messages are answered (with an error), so they are requests and count.
    assert (await client.post("/mcp", data=b'{"jsonrpc":"2.0"}', headers=me("m"))).status == 400
    assert (await client.post("/mcp", data=b"not json", headers=me("m"))).status == 400
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("m"))).status == 429


async def test_refused_host_or_origin_requests_are_not_counted(aiohttp_client) -> None:
    client = await aiohttp_client(app_for(request_limit=1))
    for _ in range(3):
        assert (await client.post("/mcp", data=rpc("ping"),
                                  headers={**me("a"), "Origin": "https://evil.example.com"})).status == 403
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("a"))).status == 200


@pytest.mark.parametrize(("arguments", "limited"), [
    pytest.param({"query": "q"}, True, id="omitted-mode-counts-as-hybrid"),
    pytest.param({"query": "q", "mode": "hybrid"}, True, id="hybrid"),
    pytest.param({"query": "q", "mode": "semantic"}, True, id="semantic"),
    pytest.param({"query": "q", "mode": "keyword"}, False, id="keyword-is-not-semantic"),
])
async def test_semantic_searches_are_limited(aiohttp_client, arguments: dict, limited: bool) -> None:
    client = await aiohttp_client(app_for(semantic_limit=1, request_limit=10))
    first = await client.post("/mcp", data=tool_call("search_papers", arguments), headers=me("s"))
    second = await client.post("/mcp", data=tool_call("search_papers", arguments), headers=me("s"))
    assert first.status == 200
    assert (second.status == 429) is limited
    if limited:  # the refusal names the semantic budget and what is still open: keyword mode, other tools
        error = (await second.json())["error"]
        assert error["data"] == {"error": "rate_limit_exceeded", "retry_after_s": int(second.headers["Retry-After"]),
                                 "limit": "semantic"}
        assert "(semantic searches per client per minute)" in error["message"]
        assert "go on now with search_papers mode=keyword or any other tool" in error["message"]
        keyword = await client.post("/mcp", data=tool_call("search_papers", {"query": "q", "mode": "keyword"}),
                                    headers=me("s"))
        assert keyword.status == 200
    other = await client.post("/mcp", data=tool_call("list_tasks"), headers=me("s"))
    assert other.status == 200


@pytest.mark.parametrize("refused", [
    pytest.param({"query": "q", "mode": None}, id="mode-null"),
    pytest.param({"query": "q", "limit": 2**64 + 1}, id="limit-over-2-64"),
    pytest.param({"query": "q", "mode": "fuzzy"}, id="unknown-mode"),
    pytest.param({"mode": "semantic"}, id="no-query"),
    pytest.param({"query": "q", "published_after": "2024-01-02", "published_before": "2024-01-01"},
                 id="reversed-dates"),
])
async def test_a_search_validation_refuses_spends_no_semantic_budget(aiohttp_client, refused: dict) -> None:
    client = await aiohttp_client(app_for(semantic_limit=1, request_limit=20))
    for path, send in (("/mcp", lambda args: client.post("/mcp", data=tool_call("search_papers", args),
                                                         headers=me("v"))),
                       ("rest", lambda args: client.post("/v1/tools/search_papers", json=args, headers=me("w")))):
        for _ in range(3):
            assert (await send(refused)).status != 429, path
        assert (await send({"query": "q"})).status == 200, path  # the budget is still whole
        assert (await send({"query": "q"})).status == 429, path


async def test_four_concurrent_requests_per_client(aiohttp_client) -> None:
    executor = FakeDispatcher(blocking=True)
    client = await aiohttp_client(app_for(executor))
    held = [asyncio.create_task(client.post("/mcp", data=tool_call(), headers=me("c"))) for _ in range(4)]
    await executor.wait_started(4)
    refused = await client.post("/mcp", data=tool_call(), headers=me("c"))
    assert refused.status == 429
    assert refused.headers["Retry-After"] == "1"
    error = (await refused.json())["error"]
    assert error["data"]["limit"] == "concurrency" and "too many requests in progress" in error["message"]
    assert (await client.post("/mcp", data=rpc("ping"), headers=me("other"))).status == 200
    executor.gate.set()
    assert [r.status for r in await asyncio.gather(*held)] == [200] * 4
    assert (await client.post("/mcp", data=tool_call(), headers=me("c"))).status == 200


async def test_global_concurrency_answers_503_server_saturated(aiohttp_client) -> None:
    executor = FakeDispatcher(blocking=True)
    client = await aiohttp_client(app_for(executor, global_concurrency_limit=2))
    held = [asyncio.create_task(client.post("/mcp", data=tool_call(), headers=me(f"c{i}"))) for i in range(2)]
    await executor.wait_started(2)
    response = await client.post("/mcp", data=tool_call(), headers=me("c9"))
    assert response.status == 503
    assert response.headers["Retry-After"] == "1"
    assert refusal_error(await response.json()) == "server_saturated"
    assert "from all clients together" in (await response.json())["error"]["message"]
    executor.gate.set()
    await asyncio.gather(*held)


async def test_limit_answers_carry_cors_headers(aiohttp_client) -> None:
    client = await aiohttp_client(app_for(request_limit=1))
    headers = {**me("x"), "Origin": "https://chatgpt.com"}
    await client.post("/mcp", data=rpc("ping"), headers=headers)
    response = await client.post("/mcp", data=rpc("ping"), headers=headers)
    assert response.status == 429
    assert response.headers["Access-Control-Allow-Origin"] == "https://chatgpt.com"
