"""The edge's Host, ports and documents over real HTTP (issue 33 items 11–14).

The shipped nginx forwards ``Host $host`` (no port) and ``X-Forwarded-Port``; ports are ASCII
digits, 1–65535. Without nginx (compose, a Space) the gateway meters and compresses its large
documents itself; ``HEAD`` works where uptime monitors use it; a browser on ``/mcp`` is sent
to ``/docs``."""

from __future__ import annotations

import asyncio
import gzip
import json
import re

import pytest

from gateway.process.app import create_app
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings, rpc

FALLBACK = f"http://localhost:{make_settings().core.port}".encode()
PAGES = ["/docs", "/docs?format=json", "/openapi.json", "/.well-known/mcp"]


async def raw_request(port: int, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send ``head`` (request line and headers, bytes as given) and read the whole answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + b"Connection: close\r\n\r\n" + body)
        await writer.drain()
        async with asyncio.timeout(10):
            raw = await reader.read()
    finally:
        writer.close()
    header_block, _, payload = raw.partition(b"\r\n\r\n")
    lines = header_block.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, payload


@pytest.fixture
async def port(aiohttp_client) -> int:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    return int(client.server.port)


@pytest.mark.parametrize("path", PAGES)
@pytest.mark.parametrize("forwarded_port", ["\u00b2", "\u0668\u0660\u0668\u0660", "99999999", "-1", "0x50"])
async def test_a_bad_forwarded_port_from_a_trusted_peer_is_ignored_not_a_500(port: int, path: str,
                                                                            forwarded_port: str) -> None:
    head = (f"GET {path} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-Proto: https\r\n"
            f"X-Forwarded-Port: {forwarded_port}\r\n").encode()
    status, _, body = await raw_request(port, head)
    assert status == 200, body[:300]
    assert set(re.findall(rb"https?://localhost[^/\"'<\s]*", body)) == {b"https://localhost"}


@pytest.mark.parametrize("host", ["localhost:99999999", "localhost:\u00b2", "localhost:\u0668\u0660\u0660\u0660",
                                  "localhost:0", "localhost:"])
async def test_a_host_with_an_invalid_port_is_refused_and_never_echoed(port: int, host: str) -> None:
    body = rpc("ping")
    head = (f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    status, _, answer = await raw_request(port, head, body)
    assert status == 421
    assert json.loads(answer)["error"]["data"]["error"] == "invalid_host"
    for path in PAGES:
        status, _, page = await raw_request(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\n".encode())
        assert status == 200
        # The Host is replaced by the fallback (the listener's own address), never echoed.
        assert set(re.findall(rb"https?://localhost[^/\"'<\s]*", page)) == {FALLBACK}


async def test_nginx_host_without_a_port_is_admitted_and_the_upstream_port_is_not_advertised(port: int) -> None:
    """What the shipped site sends: ``Host $host``, ``X-Forwarded-Proto``, ``X-Forwarded-Port``."""
    forwarded = b"Host: localhost\r\nX-Forwarded-Proto: https\r\nX-Forwarded-Port: 443\r\nX-Forwarded-For: 10.0.0.7\r\n"
    body = rpc("ping")
    status, _, answer = await raw_request(
        port, b"POST /mcp HTTP/1.1\r\n" + forwarded + b"Content-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n".encode(), body)
    assert status == 200 and json.loads(answer)["result"] == {}
    status, _, card = await raw_request(port, b"GET /.well-known/mcp HTTP/1.1\r\n" + forwarded)
    assert status == 200
    text = card.decode()
    assert set(re.findall(r"https?://localhost[^/\"]*", text)) == {"https://localhost"}
    assert "https://localhost/docs" in text and f":{port}" not in text


async def test_documents_count_against_the_request_limit(aiohttp_client) -> None:
    client = await aiohttp_client(create_app(make_settings(request_limit=3), dispatcher=FakeDispatcher(),
                                             tools=FAKE_TOOLS))
    port = int(client.server.port)
    statuses = []
    for path in ["/docs", "/openapi.json", "/docs"]:
        statuses.append((await raw_request(port, f"HEAD {path} HTTP/1.1\r\nHost: localhost\r\n".encode()))[0])
    assert statuses == [200, 200, 200]
    for path in ["/docs", "/openapi.json"]:
        status, headers, body = await raw_request(port, f"GET {path} HTTP/1.1\r\nHost: localhost\r\n".encode())
        assert status == 429 and 1 <= int(headers["Retry-After"]) <= 60
        assert json.loads(body)["error"].startswith("rate_limited: ")
    # What stays free: health, discovery (small, and what monitors and clients poll).
    for path in ["/health", "/.well-known/mcp"] * 3:  # (no catalog here: health says 503, never 429)
        assert (await raw_request(port, f"GET {path} HTTP/1.1\r\nHost: localhost\r\n".encode()))[0] in (200, 503)


@pytest.mark.parametrize(("path", "accept"), [("/openapi.json", "*/*"), ("/docs", "application/json"),
                                              ("/docs", "text/html")])
async def test_documents_are_gzip_compressed_when_the_client_accepts_it(port: int, path: str, accept: str) -> None:
    head = f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: {accept}\r\n"
    status, plain_headers, plain = await raw_request(port, head.encode())
    assert status == 200 and "Content-Encoding" not in plain_headers
    assert "Accept-Encoding" in plain_headers["Vary"]
    for accept_encoding in ["gzip", "br, gzip;q=0.5", "*"]:
        status, headers, body = await raw_request(port, f"{head}Accept-Encoding: {accept_encoding}\r\n".encode())
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        # /docs inlines the example chart, a PNG gzip cannot shrink; the rest compresses well.
        assert gzip.decompress(body) == plain and len(body) < len(plain) * (0.8 if path == "/docs" else 0.5)
    _, refused, body = await raw_request(port, f"{head}Accept-Encoding: gzip;q=0, br\r\n".encode())
    assert "Content-Encoding" not in refused and body == plain


async def test_each_encoding_of_openapi_has_its_own_etag(port: int) -> None:
    head = "GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n"
    _, plain, _ = await raw_request(port, head.encode())
    _, zipped, _ = await raw_request(port, f"{head}Accept-Encoding: gzip\r\n".encode())
    assert plain["ETag"] != zipped["ETag"]
    status, _, body = await raw_request(
        port, f"{head}Accept-Encoding: gzip\r\nIf-None-Match: {zipped['ETag']}\r\n".encode())
    assert (status, body) == (304, b"")
    assert (await raw_request(port, f"{head}If-None-Match: {zipped['ETag']}\r\n".encode()))[0] == 200


@pytest.mark.parametrize("path", ["/health", "/docs", "/openapi.json", "/.well-known/mcp"])
async def test_head_answers_like_get_without_a_body(port: int, path: str) -> None:
    got, get_headers, body = await raw_request(port, f"GET {path} HTTP/1.1\r\nHost: localhost\r\n".encode())
    status, headers, empty = await raw_request(port, f"HEAD {path} HTTP/1.1\r\nHost: localhost\r\n".encode())
    assert (status, empty) == (got, b"") and status in (200, 503)  # /health: 503 without a catalog
    assert headers["Content-Type"] == get_headers["Content-Type"]
    assert int(headers["Content-Length"]) == len(body)


async def test_a_browser_on_mcp_is_pointed_to_the_docs(port: int) -> None:
    status, headers, page = await raw_request(
        port, b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\n")
    assert status == 405 and headers["Allow"] == "POST" and headers["Content-Type"].startswith("text/html")
    assert b'<a href="/docs">' in page and headers["Link"] == '</docs>; rel="help"'
    # An MCP client asking for its SSE stream still gets the JSON 405.
    status, headers, body = await raw_request(
        port, b"GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream, text/html\r\n")
    assert status == 405 and json.loads(body) == {"error": "method_not_allowed", "allowed": ["POST"]}


@pytest.mark.parametrize("mode", ["http", "200"])
async def test_a_refusal_carries_its_message_in_the_reason_phrase_or_as_a_200(aiohttp_client, mode: str) -> None:
    """MCP SDKs on mcp 1.x show only the status line of a non-2xx answer (issue 33 item 5)."""
    import dataclasses

    settings = dataclasses.replace(make_settings(request_limit=1), refusal_status=mode)
    client = await aiohttp_client(create_app(settings, dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    port = int(client.server.port)
    body = rpc("ping", request_id=9)
    head = (f"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    assert (await raw_request(port, head, body))[0] == 200
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head + b"Connection: close\r\n\r\n" + body)
    status_line = (await reader.readline()).decode("latin-1").rstrip()
    writer.close()
    status, headers, answer = await raw_request(port, head, body)
    error = json.loads(answer)["error"]
    assert error["data"]["error"] == "rate_limit_exceeded" and json.loads(answer)["id"] == 9
    assert 1 <= int(headers["Retry-After"]) <= 60
    if mode == "http":
        assert status == 429
        reason = status_line.split(" ", 2)[2]
        assert reason.startswith("Rate limit exceeded (requests per client per minute)") and "retry after" in reason
        assert reason.isascii() and len(reason) <= 300
    else:
        assert status == 200 and status_line == "HTTP/1.1 200 OK"


def test_the_refusal_status_setting_names_its_variable() -> None:
    from gateway.process.settings import GatewaySettings
    from pwc_mcp_core.errors import ConfigError

    env = {"PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32}
    assert GatewaySettings.from_env(env).refusal_status == "http"
    assert GatewaySettings.from_env({**env, "PWC_MCP_REFUSAL_STATUS": "200"}).refusal_status == "200"
    with pytest.raises(ConfigError, match="PWC_MCP_REFUSAL_STATUS must be http"):
        GatewaySettings.from_env({**env, "PWC_MCP_REFUSAL_STATUS": "teapot"})


@pytest.mark.parametrize(("target", "status"), [("*", 404), ("//x", 404), ("/%0A", 404), ("/mcp/", 404),
                                                ("http://127.0.0.1/zz", 404), ("/health", 405)])
async def test_odd_request_targets_get_the_json_router_answer(port: int, target: str, status: int) -> None:
    """The catch-all route answers every unmatched target (``OPTIONS *`` too, whose path has no
    leading slash) in JSON, as the router's 404/405 were answered when a middleware did it."""
    got, headers, body = await raw_request(port, f"OPTIONS {target} HTTP/1.1\r\nHost: localhost\r\n".encode())
    assert got == status
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(body)["error"] == ("not_found" if status == 404 else "method_not_allowed")
