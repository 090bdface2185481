"""HTTP+SSE sessions shared through a real Redis by two gateway apps in one test process."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis

from gateway.process.app import create_app
from gateway.surfaces.sse_sessions import SseSettings
from pwc_mcp_core.cluster import redis_keys
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings, rpc, tool_call
from tests.gateway.surfaces.test_sse_routes import POST_HEADERS, next_event, open_stream


def redis_app(redis_url: str, fake_dispatcher: FakeDispatcher, **sse):
    settings = dataclasses.replace(make_settings(redis_url=redis_url, request_limit=1000), sse=SseSettings(**sse))
    return create_app(settings, dispatcher=fake_dispatcher, tools=FAKE_TOOLS)


async def test_a_post_to_another_gateway_is_answered_on_the_holders_stream(aiohttp_client, redis_url: str,
                                                                           fake_dispatcher: FakeDispatcher) -> None:
    holder = await aiohttp_client(redis_app(redis_url, fake_dispatcher))
    other = await aiohttp_client(redis_app(redis_url, fake_dispatcher))
    stream, endpoint = await open_stream(holder, **{"X-PwC-MCP-Client": "r1"})
    posted = await other.post(endpoint, data=tool_call("list_tasks"), headers={**POST_HEADERS,
                                                                               "X-PwC-MCP-Client": "r1"})
    assert posted.status == 202
    event, data = await next_event(stream)
    assert event == "message" and '"structuredContent":{"ok":true}' in data
    stranger = await other.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS, "X-PwC-MCP-Client": "r2"})
    assert stranger.status == 404
    stream.close()


async def test_stream_caps_are_cluster_wide(aiohttp_client, redis_url: str, fake_dispatcher: FakeDispatcher) -> None:
    one = await aiohttp_client(redis_app(redis_url, fake_dispatcher, max_streams_per_client=1))
    two = await aiohttp_client(redis_app(redis_url, fake_dispatcher, max_streams_per_client=1))
    stream, _ = await open_stream(one, **{"X-PwC-MCP-Client": "capped"})
    refused = await two.get("/sse", headers={"X-PwC-MCP-Client": "capped"})
    assert refused.status == 429
    stream.close()


async def test_a_session_the_store_lost_ends_its_stream(aiohttp_client, redis_url: str,
                                                        fake_dispatcher: FakeDispatcher) -> None:
    client = await aiohttp_client(redis_app(redis_url, fake_dispatcher, heartbeat_s=0.5))
    stream, endpoint = await open_stream(client, **{"X-PwC-MCP-Client": "lost"})
    store = aioredis.Redis.from_url(redis_url)
    await store.delete(redis_keys.sse_session(endpoint.split("=", 1)[1]))
    await store.aclose()
    async with asyncio.timeout(redis_keys.SSE_SESSION_RENEW_S + 4):
        while (await next_event(stream))[0] != "eof":
            pass


@dataclasses.dataclass
class HeldSession:
    """A stream held by one gateway app, another app to post through, and a Redis client."""

    other: Any
    stream: Any
    endpoint: str
    record: str
    store: aioredis.Redis


@contextlib.asynccontextmanager
async def held_session(aiohttp_client, redis_url: str, fake_dispatcher: FakeDispatcher,
                       client: str) -> AsyncIterator[HeldSession]:
    """Two gateway apps on one Redis; ``client`` holds a stream on the first."""
    holder = await aiohttp_client(redis_app(redis_url, fake_dispatcher))
    other = await aiohttp_client(redis_app(redis_url, fake_dispatcher))
    stream, endpoint = await open_stream(holder, **{"X-PwC-MCP-Client": client})
    store = aioredis.Redis.from_url(redis_url)
    try:
        yield HeldSession(other, stream, endpoint, redis_keys.sse_session(endpoint.split("=", 1)[1]), store)
    finally:
        await store.aclose()
        stream.close()


async def test_a_message_for_a_session_whose_holder_is_gone_gets_404_at_once(aiohttp_client, redis_url: str,
                                                                              fake_dispatcher: FakeDispatcher) -> None:
    async with held_session(aiohttp_client, redis_url, fake_dispatcher, "orphan") as held:
        assert await held.store.hget(held.record, "conn")  # named from the start: no wait for a renewal
        calls = len(fake_dispatcher.calls)
        # What the others see when the holder died: the connection its record names is gone. (A
        # CLIENT KILL of the live holder's inbox is a blip it recovers from, the test below.)
        gone = aioredis.Redis.from_url(redis_url)
        gone_id = await gone.client_id()
        await gone.aclose()
        await held.store.hset(held.record, "conn", str(gone_id))
        posted = await held.other.post(held.endpoint, data=tool_call("list_tasks"),
                                       headers={**POST_HEADERS, "X-PwC-MCP-Client": "orphan"})
        assert posted.status == 404
        assert len(fake_dispatcher.calls) == calls  # nothing ran for a lost stream
        assert not await held.store.exists(held.record)  # and its places are freed


async def test_a_message_for_a_stream_this_process_holds_needs_no_session_lookup(aiohttp_client, redis_url: str,
                                                                                 fake_dispatcher: FakeDispatcher) -> None:
    client = await aiohttp_client(redis_app(redis_url, fake_dispatcher))
    stream, endpoint = await open_stream(client, **{"X-PwC-MCP-Client": "local"})
    store = aioredis.Redis.from_url(redis_url)
    try:
        lookups = (await store.info("commandstats")).get("cmdstat_hmget", {}).get("calls", 0)
        posted = await client.post(endpoint, data=tool_call("list_tasks"),
                                   headers={**POST_HEADERS, "X-PwC-MCP-Client": "local"})
        assert posted.status == 202
        assert (await next_event(stream))[0] == "message"
        assert (await store.info("commandstats")).get("cmdstat_hmget", {}).get("calls", 0) == lookups
        stranger = await client.post(endpoint, data=rpc("ping"), headers={**POST_HEADERS, "X-PwC-MCP-Client": "x"})
        assert stranger.status == 404  # still bound to the client that opened it
    finally:
        await store.aclose()
        stream.close()


async def test_a_holder_whose_inbox_reconnects_names_the_new_connection_at_once(aiohttp_client, redis_url: str,
                                                                                fake_dispatcher: FakeDispatcher) -> None:
    async with held_session(aiohttp_client, redis_url, fake_dispatcher, "blip") as held:
        conn = await held.store.hget(held.record, "conn")
        await held.store.execute_command("CLIENT", "KILL", "ID", conn.decode())  # a blip: the holder lives on
        async with asyncio.timeout(redis_keys.SSE_SESSION_RENEW_S / 2):  # sooner than the next renewal
            while (renamed := await held.store.hget(held.record, "conn")) == conn:
                await asyncio.sleep(0.02)
        assert renamed, renamed  # a new connection's id, in a record that still exists
        posted = await held.other.post(held.endpoint, data=tool_call("list_tasks"),
                                       headers={**POST_HEADERS, "X-PwC-MCP-Client": "blip"})
        assert posted.status == 202  # the session lives: it is not taken for a dead holder's
        assert (await next_event(held.stream))[0] == "message"
