"""The Redis side of the legacy HTTP+SSE transport's sessions: `RedisSessionStore`
(the gateway's ``SessionHub`` and ``SessionStore`` seam, `gateway.surfaces.sse_sessions`,
say what a session is; this module holds its Redis records, inbox and scripts).

A session record ``redis_keys.sse_session`` names its holder, its client and the Redis client
id of the holder's inbox connection; an answer computed elsewhere is pushed onto the holder's
inbox list (``redis_keys.sse_inbox``), which the holder drains with one blocking pop loop. The
stream caps are checked and taken in one step by ``sse_open.lua`` and renewed by
``sse_renew.lua``. Every Redis failure the gateway must answer raises `LimitsUnavailable`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Sequence
from typing import Final, Protocol

from pwc_mcp_core.cluster import redis_keys, scripts
from pwc_mcp_core.cluster.errors import LimitsUnavailable, StoreRefused, StoreUnavailable
from pwc_mcp_core.cluster.redis_backoff import REDIS_BACKOFF
from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.cluster.redis_pipe import RedisPipe, Reply, ScriptRunner, int_reply

__all__ = ["CLIENT_CAP", "GLOBAL_CAP", "OPENED", "RedisSessionStore", "SessionOwner", "StreamCaps"]

logger = logging.getLogger(__name__)

# Outcomes of opening a session (the codes of sse_open.lua).
OPENED: Final = 0
GLOBAL_CAP: Final = 1
CLIENT_CAP: Final = 2
_INBOX_BLOCK_S: Final = 1.0
# How long opening a session waits for the inbox's first attempt to learn its connection id.
_CONN_ID_WAIT_S: Final = 2.0


class StreamCaps(Protocol):
    """The stream caps a session opens under (the gateway's ``SseSettings``)."""

    @property
    def max_streams(self) -> int:
        """Open streams in all, cluster-wide."""
        ...

    @property
    def max_streams_per_client(self) -> int:
        """Open streams of one client identity."""
        ...


class LocalSession(Protocol):
    """A stream this process holds, as the store sees it."""

    @property
    def session_id(self) -> str:
        """The opaque id in the message URL."""
        ...

    @property
    def client_hash(self) -> str:
        """The identity hash of the client that opened it."""
        ...


class SessionOwner(Protocol):
    """What the store needs from the process's sessions (the gateway's ``SessionHub``)."""

    def local_sessions(self) -> Sequence[LocalSession]:
        """The streams this process holds."""
        ...

    def end_local(self, session_id: str) -> None:
        """End a local stream whose record is gone."""
        ...

    def deliver_local(self, session_id: str, body: bytes, *, routed: bool) -> bool:
        """Hand an answer to a local stream."""
        ...


class RedisSessionStore:
    """Redis mode: sessions shared by every gateway process (see the module docstring).

    Args:
        target: the shared Redis, a URL or a Sentinel service (`redis_connect`).
    """

    def __init__(self, target: RedisTarget) -> None:
        self.holder_id = secrets.token_hex(8)
        self._pipe = RedisPipe(target, timeout_s=2.0, connect_timeout_s=1.0)
        # BLPOP holds its connection, so the inbox has a pipe of its own (its deadline: the block time and more).
        self._inbox_pipe = RedisPipe(target, timeout_s=_INBOX_BLOCK_S + 2.0, connect_timeout_s=1.0)
        self._open = ScriptRunner(self._pipe, scripts.load("sse_open"))
        self._renew = ScriptRunner(self._pipe, scripts.load("sse_renew"))
        self._ttl_ms = redis_keys.SSE_SESSION_TTL_S * 1000
        # The Redis client id of the inbox connection ("" until the inbox loop has asked, while it
        # reconnects, or where CLIENT is not allowed); `open` waits for the first attempt.
        self._conn_id = ""
        self._inbox_tried = asyncio.Event()
        self._client_refused_logged = False

    async def open(self, session_id: str, client_hash: str, settings: StreamCaps) -> int:
        # A record should name the inbox connection, or other processes cannot tell when its
        # holder dies (they would route answers into a dead inbox until the next renewal).
        if not self._inbox_tried.is_set():  # only at startup: no timer per open after that
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_CONN_ID_WAIT_S):
                    await self._inbox_tried.wait()
        conn_id = self._conn_id
        record = redis_keys.sse_session(session_id)
        try:
            outcome = int_reply(await self._open(
                [redis_keys.sse_client_sessions(client_hash), redis_keys.sse_sessions_global(), record],
                [session_id, settings.max_streams_per_client, settings.max_streams, self._ttl_ms, self.holder_id,
                 client_hash, conn_id]))
            if outcome == OPENED and self._conn_id and self._conn_id != conn_id:
                # The inbox reconnected meanwhile, and its re-stamp did not know this session yet.
                await self._pipe.execute("HSET", record, "conn", self._conn_id)
        except StoreUnavailable as exc:
            raise LimitsUnavailable("redis unreachable") from exc
        return outcome

    async def lookup(self, session_id: str) -> tuple[str, str] | None:
        record = redis_keys.sse_session(session_id)
        try:
            fields = await self._pipe.execute("HMGET", record, "holder", "client", "conn")
            holder, client, conn = fields if isinstance(fields, list) and len(fields) == 3 else (None, None, None)
            if not isinstance(holder, bytes) or not isinstance(client, bytes):
                return None
            if holder.decode() != self.holder_id and isinstance(conn, bytes) and conn \
                    and not await self._holder_present(conn):
                # The holder's inbox connection is gone: the process died with the stream.
                await self.close(session_id, client.decode())
                return None
        except StoreUnavailable as exc:
            raise LimitsUnavailable("redis unreachable") from exc
        return holder.decode(), client.decode()

    async def _holder_present(self, conn: bytes) -> bool:
        """Whether the Redis client ``conn`` (a holder's inbox connection) is still connected."""
        try:
            return bool(await self._pipe.execute("CLIENT", "LIST", "ID", conn))
        except StoreRefused:  # CLIENT not allowed here: presence unknown, assume the holder lives
            return True

    async def forward(self, holder_id: str, session_id: str, body: bytes) -> None:
        inbox = redis_keys.sse_inbox(holder_id)
        try:
            await self._pipe.execute_many([("RPUSH", inbox, session_id.encode() + b" " + body),
                                           ("EXPIRE", inbox, redis_keys.SSE_INBOX_TTL_S)])
        except StoreUnavailable as exc:
            raise LimitsUnavailable("redis unreachable") from exc

    async def close(self, session_id: str, client_hash: str) -> None:
        with contextlib.suppress(StoreUnavailable):
            await self._pipe.execute_many([("ZREM", redis_keys.sse_client_sessions(client_hash), session_id),
                                           ("ZREM", redis_keys.sse_sessions_global(), session_id),
                                           ("DEL", redis_keys.sse_session(session_id))])

    async def run(self, hub: SessionOwner) -> None:
        await asyncio.gather(self._renew_forever(hub), self._drain_inbox(hub))

    async def _renew_forever(self, hub: SessionOwner) -> None:
        while True:
            await asyncio.sleep(redis_keys.SSE_SESSION_RENEW_S)
            await self._renew_once(hub)

    async def _renew_once(self, hub: SessionOwner) -> None:
        """Extend this process's records (naming the current inbox connection); end the streams
        of records that are gone."""
        sessions = hub.local_sessions()
        if not sessions:
            return
        record_keys: list[str] = [redis_keys.sse_sessions_global()]
        for session in sessions:
            record_keys += [redis_keys.sse_client_sessions(session.client_hash), redis_keys.sse_session(session.session_id)]
        try:
            gone = await self._renew(record_keys, [self._ttl_ms, self._conn_id, *(s.session_id for s in sessions)])
        except StoreUnavailable as exc:
            logger.warning("sse session renewal failed error=%s", type(exc).__name__)
            return
        for session_id in gone if isinstance(gone, list) else ():
            hub.end_local(session_id.decode() if isinstance(session_id, bytes) else str(session_id))

    async def _learn_conn_id(self, hub: SessionOwner, reply: Reply | StoreRefused) -> None:
        """Take the inbox connection's id from a ``CLIENT ID`` reply; a new one (a reconnection)
        goes into this process's records as soon as it is known."""
        # Where CLIENT is not allowed (some managed Redis), "" leaves the sessions to their expiry.
        conn_id = "" if isinstance(reply, StoreRefused) else str(reply)
        self._inbox_tried.set()
        if not conn_id and not self._client_refused_logged:
            self._client_refused_logged = True
            logger.warning("sse inbox CLIENT ID refused: a dead holder's sessions end at their expiry, not at once")
        if conn_id != self._conn_id:
            self._conn_id = conn_id
            await self._renew_once(hub)

    async def _drain_inbox(self, hub: SessionOwner) -> None:
        inbox = redis_keys.sse_inbox(self.holder_id)
        failures = 0
        # A (re)connection: ask its id first. Every reconnection of this pipe follows a failure of
        # its BLPOP (it always has one in flight), so the id is asked once per connection.
        fresh = True
        while True:
            try:
                if fresh:
                    (conn_id,) = await self._inbox_pipe.execute_many([("CLIENT", "ID")])
                    await self._learn_conn_id(hub, conn_id)
                    fresh = False
                item = await self._inbox_pipe.execute("BLPOP", inbox, _INBOX_BLOCK_S)
            except StoreUnavailable as exc:
                failures += 1
                fresh = True
                # Records made meanwhile name no connection (taken as alive) rather than the lost one.
                self._conn_id = ""
                self._inbox_tried.set()
                if failures == 1:  # once per outage, not at every retry; a blip reconnects at once
                    logger.warning("sse inbox read failed error=%s", type(exc).__name__)
                else:
                    await asyncio.sleep(REDIS_BACKOFF.compute(failures - 1))
                continue
            failures = 0
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], bytes)):
                continue  # None: nothing within the block time
            session_id, _, body = item[1].partition(b" ")
            hub.deliver_local(session_id.decode(), body, routed=True)

    async def aclose(self) -> None:
        await self._pipe.close()
        await self._inbox_pipe.close()
