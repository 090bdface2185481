"""The edge's Host and port handling over real HTTP (issue 33 items 11, 12): the shipped nginx
forwards ``Host $host`` (no port) and ``X-Forwarded-Port``; ports are ASCII digits, 1–65535."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from gateway.process.app import create_app
from tests.gateway.conftest import FAKE_TOOLS, FakeExecutor, make_settings, rpc

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
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeExecutor(), tools=FAKE_TOOLS))
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
