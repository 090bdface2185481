"""The header deadline of the gateway's connections (`gateway.process.connection`) and the body
deadline (`gateway.admission.checks.BODY_TIMEOUT_S`), on a real socket."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from gateway.admission import checks
from gateway.process import connection
from gateway.process.app import create_app
from gateway.process.connection import GatewayRunner
from gateway.process.serving import server_options
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings, rpc

DEADLINE_S = 0.3


@contextlib.asynccontextmanager
async def served(fake_dispatcher: FakeDispatcher) -> AsyncIterator[int]:
    """The app behind the production runner on a free loopback port; yields the port."""
    runner = GatewayRunner(create_app(make_settings(request_limit=1000), dispatcher=fake_dispatcher,
                                      tools=FAKE_TOOLS), **server_options())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


def request(port: int) -> bytes:
    body = rpc("ping")
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """Read one response; its status and body."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    body = await asyncio.wait_for(reader.readexactly(length), 5)
    return int(head.split(b" ", 2)[1]), body


async def closed_after(reader: asyncio.StreamReader) -> float:
    """Seconds until the server closes the connection (nothing else is sent)."""
    started = time.monotonic()
    assert await asyncio.wait_for(reader.read(), 5) == b""
    return time.monotonic() - started


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "HEADER_TIMEOUT_S", DEADLINE_S)
    monkeypatch.setattr(checks, "BODY_TIMEOUT_S", DEADLINE_S)


async def test_incomplete_headers_are_cut_at_the_deadline(fake_dispatcher: FakeDispatcher) -> None:
    async with served(fake_dispatcher) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        assert DEADLINE_S * 0.8 <= await closed_after(reader) < DEADLINE_S + 1
        writer.close()


async def test_a_busy_keep_alive_connection_stays_open_and_its_idle_time_is_not_a_deadline(
        fake_dispatcher: FakeDispatcher) -> None:
    """Requests whose headers come in time, over several deadlines, then an idle pause longer than
    one: the connection stays open (the timer armed by an earlier request does not cut it)."""
    async with served(fake_dispatcher) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        stop = time.monotonic() + 3 * DEADLINE_S
        while time.monotonic() < stop:
            writer.write(request(port))
            assert (await answer(reader))[0] == 200
            await asyncio.sleep(DEADLINE_S / 4)
        await asyncio.sleep(2 * DEADLINE_S)
        writer.write(request(port))
        assert (await answer(reader))[0] == 200
        writer.close()


async def test_incomplete_headers_after_answered_requests_get_their_own_full_deadline(
        fake_dispatcher: FakeDispatcher) -> None:
    """A request's headers that stall after earlier requests on the connection are cut one deadline
    after their own first byte: not earlier (at a timer an earlier request armed), not never."""
    async with served(fake_dispatcher) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request(port))
        assert (await answer(reader))[0] == 200
        await asyncio.sleep(DEADLINE_S / 2)  # the timer the first request armed is due half-way through
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert DEADLINE_S * 0.8 <= await closed_after(reader) < DEADLINE_S + 1
        writer.close()


async def test_a_body_that_stalls_is_refused_at_its_deadline(fake_dispatcher: FakeDispatcher) -> None:
    """Headers complete, part of the body, then nothing: 400 ``request_incomplete`` one body deadline
    later (a body already complete is read without a timer)."""
    async with served(fake_dispatcher) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000\r\n\r\n{\"jsonrpc\"".encode())
        started = time.monotonic()
        status, body = await answer(reader)
        assert DEADLINE_S * 0.8 <= time.monotonic() - started < DEADLINE_S + 1
        assert status == 400 and b"request_incomplete" in body
        writer.close()  # aiohttp would linger 10 s for the rest of the body: hang up first
        await writer.wait_closed()
