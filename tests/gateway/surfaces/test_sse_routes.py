"""The HTTP+SSE transport's edge in one embedded app: sessions, caps, timers, bounds."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from gateway.process.app import create_app
from gateway.process.connection import GatewayRunner
from gateway.process.serving import server_options
from gateway.surfaces.sse_sessions import SseSettings
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings, rpc, tool_call
from tests.helpers import refusal_error

POST_HEADERS = {"Content-Type": "application/json"}


def sse_app(fake_dispatcher: FakeDispatcher, **sse: Any):
    settings = dataclasses.replace(make_settings(request_limit=1000), sse=SseSettings(**sse))
    return create_app(settings, dispatcher=fake_dispatcher, tools=FAKE_TOOLS)


async def next_event(response) -> tuple[str, str]:
    """The next ``(event, data)`` of an SSE stream; comments come back as ``("comment", text)``."""
    event, data = "message", []
    async with asyncio.timeout(5):
        while True:
            line = (await response.content.readline()).decode().rstrip("\n")
            if line.startswith(":") and not data:
                return "comment", line[1:].strip()
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line == "" and data:
                return event, "\n".join(data)
            elif line == "" and response.content.at_eof():
                return "eof", ""


async def open_stream(client, **headers: str):
    response = await client.get("/sse", headers=headers)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/event-stream")
    event, endpoint = await next_event(response)
    assert event == "endpoint" and endpoint.startswith("/messages?session_id=")
    return response, endpoint


@pytest.fixture
async def client(aiohttp_client, fake_dispatcher: FakeDispatcher):
    return await aiohttp_client(sse_app(fake_dispatcher, heartbeat_s=0.2, max_streams_per_client=2, max_streams=3))


async def test_answers_arrive_on_the_stream_and_the_post_gets_an_empty_202(client, fake_dispatcher) -> None:
    stream, endpoint = await open_stream(client)
    init = rpc("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}, request_id=7)
    posted = await client.post(endpoint, data=init, headers=POST_HEADERS)
    assert (posted.status, await posted.read()) == (202, b"")
    event, data = await next_event(stream)
    assert event == "message"
    assert json.loads(data)["result"]["protocolVersion"] == "2024-11-05"
    posted = await client.post(endpoint, data=tool_call("list_tasks", {"limit": 2}), headers=POST_HEADERS)
    assert posted.status == 202
    _, data = await next_event(stream)
    assert json.loads(data)["result"]["structuredContent"] == {"ok": True}
    assert [c.name for c in fake_dispatcher.calls] == ["list_tasks"]
    note = await client.post(endpoint, data=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                             headers=POST_HEADERS)
    assert note.status == 202
    stream.close()


async def test_heartbeats_are_comments(client) -> None:
    stream, _ = await open_stream(client)
    assert await next_event(stream) == ("comment", "ping")
    stream.close()


@pytest.mark.parametrize("query", ["", "?session_id=", "?session_id=not-a-session"])
async def test_unknown_session_is_404_with_a_jsonrpc_error(client, query: str) -> None:
    response = await client.post(f"/messages{query}", data=rpc("ping"), headers=POST_HEADERS)
    assert response.status == 404
    body = await response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and "GET /sse" in body["error"]["message"]


async def test_a_session_is_bound_to_the_client_that_opened_it(client) -> None:
    stream, endpoint = await open_stream(client, **{"X-PwC-MCP-Client": "alice"})
    other = await client.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS, "X-PwC-MCP-Client": "mallory"})
    assert other.status == 404
    own = await client.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS, "X-PwC-MCP-Client": "alice"})
    assert own.status == 202
    stream.close()


async def test_a_message_over_2_mib_is_413(client) -> None:
    stream, endpoint = await open_stream(client)
    response = await client.post(endpoint, data=b" " * (2 * 1024 * 1024 + 1), headers=POST_HEADERS)
    assert response.status == 413
    stream.close()


async def test_stream_caps_per_client_and_global(client) -> None:
    a1, _ = await open_stream(client, **{"X-PwC-MCP-Client": "a"})
    a2, _ = await open_stream(client, **{"X-PwC-MCP-Client": "a"})
    refused = await client.get("/sse", headers={"X-PwC-MCP-Client": "a"})
    assert (refused.status, refusal_error(await refused.read())) == (429, "too_many_streams")
    assert int(refused.headers["Retry-After"]) >= 1
    b1, _ = await open_stream(client, **{"X-PwC-MCP-Client": "b"})
    saturated = await client.get("/sse", headers={"X-PwC-MCP-Client": "c"})
    assert saturated.status == 503 and "Retry-After" in saturated.headers
    assert refusal_error(await saturated.read()) == "too_many_streams"
    for stream in (a1, a2, b1):
        stream.close()


async def test_a_disconnect_frees_the_session_and_its_place(client) -> None:
    stream, endpoint = await open_stream(client, **{"X-PwC-MCP-Client": "d"})
    second, _ = await open_stream(client, **{"X-PwC-MCP-Client": "d"})
    stream.close()
    async with asyncio.timeout(5):  # the holder notices within a tick
        while (await client.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS,
                                                                        "X-PwC-MCP-Client": "d"})).status != 404:
            await asyncio.sleep(0.1)
    again, _ = await open_stream(client, **{"X-PwC-MCP-Client": "d"})
    for response in (second, again):
        response.close()


async def test_an_idle_stream_ends(aiohttp_client, fake_dispatcher) -> None:
    client = await aiohttp_client(sse_app(fake_dispatcher, idle_timeout_s=1.0, heartbeat_s=0.3))
    stream, endpoint = await open_stream(client)
    async with asyncio.timeout(5):
        while (await next_event(stream))[0] != "eof":
            pass
    gone = await client.post(endpoint, data=rpc("ping"), headers=POST_HEADERS)
    assert gone.status == 404


async def test_host_and_origin_allowlists_apply(client) -> None:
    assert (await client.get("/sse", headers={"Host": "evil.example"})).status == 421
    assert (await client.get("/sse", headers={"Origin": "https://evil.example"})).status == 403
    stream, endpoint = await open_stream(client)
    bad = await client.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS, "Origin": "https://evil.example"})
    assert bad.status == 403
    stream.close()


async def test_every_request_counts_against_the_client_limits(aiohttp_client, fake_dispatcher) -> None:
    settings = dataclasses.replace(make_settings(request_limit=3), sse=SseSettings())
    client = await aiohttp_client(create_app(settings, dispatcher=fake_dispatcher, tools=FAKE_TOOLS))
    stream, endpoint = await open_stream(client)  # the stream itself is request 1
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'  # no answer: not a request
    notes = [(await client.post(endpoint, data=note, headers=POST_HEADERS)).status for _ in range(5)]
    assert notes == [202] * 5
    statuses = [(await client.post(endpoint, data=rpc("ping"), headers=POST_HEADERS)).status for _ in range(3)]
    assert statuses == [202, 202, 202]  # the third is refused: its answer on the stream says so
    answers = [json.loads((await next_event(stream))[1]) for _ in range(3)]
    assert [refusal_error(answer) for answer in answers] == [None, None, "rate_limit_exceeded"]
    stream.close()


def test_sse_settings_come_from_the_environment_and_bad_values_name_the_variable() -> None:
    from pwc_mcp_core.errors import ConfigError

    settings = SseSettings.from_env({"PWC_MCP_SSE_MAX_STREAMS": "9", "PWC_MCP_SSE_IDLE_TIMEOUT_S": " "})
    assert (settings.max_streams, settings.idle_timeout_s) == (9, 300.0)
    with pytest.raises(ConfigError, match="PWC_MCP_SSE_HEARTBEAT_S"):
        SseSettings.from_env({"PWC_MCP_SSE_HEARTBEAT_S": "soon"})


async def test_a_refused_message_is_also_answered_on_the_stream(aiohttp_client, fake_dispatcher: FakeDispatcher) -> None:
    settings = dataclasses.replace(make_settings(request_limit=3), sse=SseSettings(heartbeat_s=5))
    client = await aiohttp_client(create_app(settings, dispatcher=fake_dispatcher, tools=FAKE_TOOLS))
    stream, endpoint = await open_stream(client)  # counted: 1
    for _ in range(2):
        assert (await client.post(endpoint, data=rpc("ping"), headers=POST_HEADERS)).status == 202
        await next_event(stream)
    refused = await client.post(endpoint, data=rpc("tools/call", {"name": "list_tasks", "arguments": {}},
                                                   request_id=42), headers=POST_HEADERS)
    # Accepted: the refusal is the call's answer on the stream (a non-2xx POST ends an SDK session).
    assert (refused.status, await refused.read()) == (202, b"")
    event, data = await next_event(stream)  # SSE clients wait on the stream for id 42
    assert event == "message" and json.loads(data)["id"] == 42
    assert refusal_error(data) == "rate_limit_exceeded"
    assert 1 <= json.loads(data)["error"]["data"]["retry_after_s"] <= 60
    # Still counted: the metrics saw a 429.
    assert 'pwc_mcp_limit_rejections_total{kind="requests"}' in await (await client.get("/metrics")).text()
    # A refusal no call can be matched to (a body over the bound: no id read) answers the POST.
    assert (await client.post(endpoint, data=b" " * (2 * 1024 * 1024 + 1), headers=POST_HEADERS)).status == 413
    stream.close()



@pytest.mark.parametrize(("headers", "error"), [
    pytest.param({"Content-Type": "application/x-www-form-urlencoded"}, "unsupported_media_type", id="415"),
    pytest.param({"Content-Type": "application/json", "Accept": "text/html"}, "not_acceptable", id="406"),
])
async def test_a_media_type_refusal_of_a_message_is_its_answer_on_the_stream(client, headers: dict[str, str],
                                                                              error: str) -> None:
    """Like a limit refusal: the message names its id, so the refusal is that request's answer on the
    stream and the POST is accepted (a non-2xx POST ends an SDK's session)."""
    stream, endpoint = await open_stream(client)
    posted = await client.post(endpoint, data=rpc("ping", request_id=9), headers=headers)
    assert (posted.status, await posted.read()) == (202, b"")
    event, data = await next_event(stream)
    assert event == "message" and json.loads(data)["id"] == 9
    assert refusal_error(data) == error and json.loads(data)["error"]["code"] == -32600
    stream.close()


async def test_answers_keep_their_order_whether_written_at_once_or_through_the_queue(aiohttp_client) -> None:
    # A large answer goes through the stream's queue; a small one right after it must not overtake it.
    big = b'{"result":{"content":[{"type":"text","text":"' + b"x" * 200_000 + b'"}],"isError":false}}'
    client = await aiohttp_client(sse_app(FakeDispatcher(big)))
    stream, endpoint = await open_stream(client)
    for request_id in range(1, 4):
        posted = await client.post(endpoint, data=tool_call("list_tasks") if request_id == 1 else
                                   rpc("ping", request_id=request_id), headers=POST_HEADERS)
        assert posted.status == 202
    ids = [json.loads((await next_event(stream))[1])["id"] for _ in range(3)]
    assert ids == [1, 2, 3]
    stream.close()



@contextlib.asynccontextmanager
async def served(app):
    """``app`` behind the production runner (`GatewayRunner`: aiohttp's default of no handler
    cancellation, unlike the test client's) on a free loopback port; yields its base URL."""
    runner = GatewayRunner(app, **server_options())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_a_closed_stream_frees_its_place_at_once(fake_dispatcher) -> None:
    """A client that opens a session per call (langchain-mcp-adapters, the SDK's ``sse_client``):
    open, read the endpoint, close, back to back, well past the per-client cap of 8 (default
    settings), gets 200 every time: the slot is freed when the connection is lost, not at a tick."""
    async with served(sse_app(fake_dispatcher)) as base, aiohttp.ClientSession() as http:
        statuses = []
        for _ in range(12):
            response = await http.get(f"{base}/sse")
            statuses.append(response.status)
            if response.status == 200:
                assert (await next_event(response))[0] == "endpoint"
            response.close()
        assert statuses == [200] * 12
