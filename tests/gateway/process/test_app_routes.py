"""Routes and statuses of the gateway (docs/tool-contract.md §1.2–§1.6)."""

from __future__ import annotations

import json

import pytest

from gateway.process.app import create_app
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.gateway.conftest import (
    FAKE_TOOLS,
    JSON_HEADERS,
    FakeDispatcher,
    make_settings,
    rpc,
    tool_call,
)
from tests.helpers import refusal_error


@pytest.fixture
async def client(aiohttp_client, fake_dispatcher: FakeDispatcher):
    return await aiohttp_client(create_app(make_settings(), dispatcher=fake_dispatcher, tools=FAKE_TOOLS))


@pytest.fixture
async def real_client(aiohttp_client, fake_dispatcher: FakeDispatcher):
    """The app with the real tool catalogue."""
    return await aiohttp_client(create_app(make_settings(), dispatcher=fake_dispatcher))


async def test_initialize_is_answered_without_the_executor(client, fake_dispatcher: FakeDispatcher) -> None:
    response = await client.post("/mcp", data=rpc("initialize", {"protocolVersion": "2025-11-25",
                                                                 "capabilities": {}, "clientInfo": {"name": "t",
                                                                                                    "version": "1"}}),
                                 headers=JSON_HEADERS)
    assert response.status == 200
    body = await response.json()
    assert body["result"]["protocolVersion"] == "2025-11-25"
    assert "Mcp-Session-Id" not in response.headers
    assert fake_dispatcher.calls == []


async def test_tools_list_returns_the_catalogue(real_client) -> None:
    response = await real_client.post("/mcp", data=rpc("tools/list"), headers=JSON_HEADERS)
    assert response.status == 200
    assert len((await response.json())["result"]["tools"]) == len(TOOL_DEFS)


async def test_tool_calls_go_to_the_executor(client, fake_dispatcher: FakeDispatcher) -> None:
    response = await client.post("/mcp", data=tool_call("list_tasks", {"limit": 2}), headers=JSON_HEADERS)
    assert response.status == 200
    assert (await response.json())["result"]["structuredContent"] == {"ok": True}
    assert [(c.kind, c.name, c.arguments) for c in fake_dispatcher.calls] == [("tools/call", "list_tasks", {"limit": 2})]


async def test_a_notification_gets_202_with_an_empty_body(client) -> None:
    response = await client.post("/mcp", data=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
                                 headers=JSON_HEADERS)
    assert response.status == 202
    assert await response.read() == b""


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_and_delete_on_mcp_are_405_with_allow_post(client, method: str) -> None:
    response = await client.request(method, "/mcp")
    assert response.status == 405
    assert response.headers["Allow"] == "POST"
    assert await response.json() == {"error": "method_not_allowed", "allowed": ["POST"]}


@pytest.mark.parametrize("path", ["/", "/mcp/", "/nope", "/health/x"])
async def test_unknown_paths_are_404(client, path: str) -> None:
    assert (await client.get(path)).status == 404


@pytest.mark.parametrize(("headers", "status"), [
    pytest.param({"Content-Type": "application/json", "Accept": "text/event-stream"}, 406, id="accept-without-json"),
    pytest.param({"Content-Type": "application/json", "Accept": "*/*"}, 200, id="accept-any"),
    pytest.param({"Content-Type": "application/json"}, 200, id="accept-absent"),
    pytest.param({"Content-Type": "text/plain", "Accept": "application/json"}, 415, id="wrong-content-type"),
    pytest.param({"Content-Type": "application/json; charset=utf-8"}, 200, id="content-type-with-charset"),
    pytest.param({"Content-Type": "text/plain", "Accept": "text/html"}, 406, id="accept-checked-before-content-type"),
])
async def test_accept_and_content_type_are_checked(client, headers: dict[str, str], status: int) -> None:
    response = await client.post("/mcp", data=rpc("ping", request_id=7), headers=headers)
    assert response.status == status
    if status != 200:
        # The documented refusal shape (README "Refusals are JSON-RPC errors"): the request's id,
        # -32600 (cannot be accepted as sent), the stable code and no retry for the same request.
        body = await response.json()
        assert body["jsonrpc"] == "2.0" and body["id"] == 7
        assert body["error"]["code"] == -32600
        assert body["error"]["data"] == {
            "error": "not_acceptable" if status == 406 else "unsupported_media_type", "retry_after_s": None}
        assert body["error"]["message"].startswith("Not Acceptable" if status == 406 else "Unsupported Media Type")


async def test_a_response_over_the_bound_becomes_503_response_too_large(aiohttp_client) -> None:
    big = b'{"result":{"content":[{"type":"text","text":"' + b"x" * (2 * 1024 * 1024) + b'"}]}}'
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(big), tools=FAKE_TOOLS))
    response = await client.post("/mcp", data=tool_call(), headers=JSON_HEADERS)
    assert response.status == 503
    assert refusal_error(await response.json()) == "response_too_large"


async def test_well_known_lists_versions_newest_first(client) -> None:
    response = await client.get("/.well-known/mcp")
    body = await response.json()
    assert response.status == 200
    assert body["transport"] == {"type": "streamable-http", "url": "/mcp"}
    assert body["protocol_version"] == "2025-11-25"
    assert body["supported_protocol_versions"] == sorted(body["supported_protocol_versions"], reverse=True)
    # This server's own /docs, absolute (issue 12 item 7), not the public site.
    assert body["documentation_url"] == f"http://{client.host}:{client.port}/docs"


@pytest.mark.parametrize("request_kwargs", [
    pytest.param({"params": {"format": "json"}}, id="format-query"),
    pytest.param({"headers": {"Accept": "application/json"}}, id="accept-json"),
])
async def test_docs_json_publishes_the_live_tool_schemas(real_client, request_kwargs) -> None:
    client = real_client
    response = await client.get("/docs", **request_kwargs)
    body = await response.json()
    assert body["endpoint"] == "/mcp"
    assert len(body["tools"]) == len(TOOL_DEFS)
    listed = await (await client.post("/mcp", data=rpc("tools/list"), headers=JSON_HEADERS)).json()
    by_name = {t["name"]: t for t in listed["result"]["tools"]}
    for tool in body["tools"]:
        assert tool["inputSchema"] == by_name[tool["name"]]["inputSchema"]


async def test_docs_html_is_a_readable_escaped_page(client) -> None:
    response = await client.get("/docs", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert response.status == 200
    assert response.content_type == "text/html"
    text = await response.text()
    assert "search_papers" in text and "<script" not in text
    assert "list_tasks &lt;test&gt;" in text  # descriptions are escaped, not raw


def test_docs_html_escapes_hostile_text() -> None:
    from gateway.surfaces.docs import render_html

    page = render_html({"name": "<b>x</b>", "version": "1", "protocol_version": "p", "endpoint": "/mcp",
                        "tools": [{"name": "a\"><script>", "description": "<img src=x>", "inputSchema": {"k": "<s>"}}]})
    # The one <img> is the example chart (a data: URI); hostile text never makes another.
    assert "<script>" not in page and page.count("<img") == 1 and "<s>" not in page


async def test_metrics_are_prometheus_text(client) -> None:
    await client.post("/mcp", data=rpc("ping"), headers=JSON_HEADERS)
    response = await client.get("/metrics")
    text = await response.text()
    assert response.status == 200
    assert "pwc_mcp_requests_total" in text
    assert "pwc_mcp_request_seconds_bucket" in text
    assert "pwc_mcp_limit_rejections_total" in text or "pwc_mcp_limit_rejections" in text


async def test_cors_preflight_from_an_allowed_origin(client) -> None:
    response = await client.options("/mcp", headers={
        "Origin": "https://chatgpt.com", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,mcp-protocol-version,mcp-method,mcp-name"})
    assert response.status == 200
    assert response.headers["Access-Control-Allow-Origin"] == "https://chatgpt.com"
    assert "mcp-protocol-version" in response.headers["Access-Control-Allow-Headers"]
    assert response.headers["Access-Control-Max-Age"] == "600"


async def test_cors_preflight_from_another_origin_is_refused(client) -> None:
    response = await client.options("/mcp", headers={"Origin": "https://evil.example.com",
                                                     "Access-Control-Request-Method": "POST"})
    assert response.status == 400
    assert "Access-Control-Allow-Origin" not in response.headers
    assert (await response.json())["error"].startswith("invalid_origin:")  # JSON, not text


async def test_allowed_origin_responses_carry_cors_headers(client) -> None:
    response = await client.post("/mcp", data=rpc("ping"), headers={**JSON_HEADERS, "Origin": "https://claude.ai"})
    assert response.status == 200
    assert response.headers["Access-Control-Allow-Origin"] == "https://claude.ai"
    assert "retry-after" in response.headers["Access-Control-Expose-Headers"]


def test_a_wildcard_origin_stops_startup() -> None:
    settings = make_settings(allowed_origins=("*",))
    with pytest.raises(ConfigError, match="wildcard"):
        create_app(settings, dispatcher=FakeDispatcher(), tools=FAKE_TOOLS)


async def test_mcp_replies_are_json(client) -> None:
    response = await client.post("/mcp", data=rpc("ping"), headers=JSON_HEADERS)
    assert response.content_type == "application/json"
    assert json.loads(await response.read()) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_serving_app_settles_its_heap_once_everything_has_started() -> None:
    from gateway.process.serving import _settle_heap, serving_app

    app = serving_app(make_settings())
    assert app.on_startup[-1] is _settle_heap  # after the lifecycle context started the executor
