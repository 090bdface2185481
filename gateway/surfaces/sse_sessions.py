"""Sessions of the HTTP+SSE transport (MCP 2024-11-05), cluster-wide or in one process.

https://modelcontextprotocol.io/specification/2024-11-05/basic/transports: a client
holds ``GET /sse`` open and POSTs its messages to the session's URL; the answers travel
on the stream. The POST may reach any gateway process on any host, so a session is
known in a shared store and the answer is routed to the process that holds the stream:

* :class:`MemorySessionStore` (embedded mode): one process, routing is a queue put.
* `RedisSessionStore` (Redis mode, `pwc_mcp_core.cluster.sse_sessions`): a session record ``redis_keys.sse_session`` names
  its holder, its client and the Redis client id of the holder's inbox connection; an answer
  computed elsewhere is pushed onto the holder's inbox list (``redis_keys.sse_inbox``), which
  the holder drains with one blocking pop loop. A message for another process's session is
  admitted only while that connection exists (``CLIENT LIST ID``): Redis drops it the moment
  the holder dies, so its sessions answer 404 at once and no call runs for a lost stream.
  A record names that connection from its opening (once the inbox has asked for its id), and
  a reconnected inbox renames it in its holder's records as soon as it knows the new id: a
  blip passes for a death only during the reconnection itself, which starts without a delay.
  The holder renews its records every ``redis_keys.SSE_SESSION_RENEW_S``; their
  ``redis_keys.SSE_SESSION_TTL_S`` (30 s, on Redis's clock) outlasts a Redis stall the way
  worker liveness does, and only collects what a dead holder left. No sticky sessions are needed.

Stream caps (per client and in all, :class:`SseSettings`) are checked and taken in one
atomic step (``sse_open.lua`` behind Redis). A session id is ``secrets.token_urlsafe(32)``
and bound to the identity hash of the client that opened it: a message from another
client is answered as if the session did not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from gateway.shared.background import stop_tasks
from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.cluster.sse_sessions import CLIENT_CAP, GLOBAL_CAP, OPENED, RedisSessionStore
from pwc_mcp_core.runtime.core_settings import env_int, env_number

__all__ = ["GLOBAL_CAP", "MemorySessionStore", "Session", "SessionHub", "SseSettings", "build_session_store"]

logger = logging.getLogger(__name__)

# Answers queued for one stream before it counts as a reader that stopped reading.
_QUEUE_BOUND: Final = 256


@dataclass(frozen=True)
class SseSettings:
    """Caps and timers of the HTTP+SSE transport.

    Attributes:
        max_streams: open streams in all (cluster-wide behind Redis); ``PWC_MCP_SSE_MAX_STREAMS``, 512.
        max_streams_per_client: open streams of one client identity;
            ``PWC_MCP_SSE_MAX_STREAMS_PER_CLIENT``, 8.
        idle_timeout_s: a stream with no message for this long is closed (seconds);
            ``PWC_MCP_SSE_IDLE_TIMEOUT_S``, 300.
        heartbeat_s: an SSE comment is sent after this long without an event (seconds), so
            proxies keep idle streams open; ``PWC_MCP_SSE_HEARTBEAT_S``, 15.
        write_timeout_s: a write to the stream that cannot be handed to the client's socket
            within this long (a reader that stopped reading) closes the stream and frees its
            place (seconds); ``PWC_MCP_SSE_WRITE_TIMEOUT_S``, 30.
    """

    max_streams: int = 512
    max_streams_per_client: int = 8
    idle_timeout_s: float = 300.0
    heartbeat_s: float = 15.0
    write_timeout_s: float = 30.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> SseSettings:
        """Read the five variables above; unset or blank ones keep their defaults.

        Raises:
            ConfigError: a value is not a number in its range; the message names the variable.
        """
        return cls(max_streams=env_int(environ, "PWC_MCP_SSE_MAX_STREAMS", 512, 1, 1_000_000),
                   max_streams_per_client=env_int(environ, "PWC_MCP_SSE_MAX_STREAMS_PER_CLIENT", 8, 1, 100_000),
                   idle_timeout_s=env_number(environ, "PWC_MCP_SSE_IDLE_TIMEOUT_S", 300.0, 1.0, 86_400.0),
                   heartbeat_s=env_number(environ, "PWC_MCP_SSE_HEARTBEAT_S", 15.0, 0.05, 3_600.0),
                   write_timeout_s=env_number(environ, "PWC_MCP_SSE_WRITE_TIMEOUT_S", 30.0, 0.05, 3_600.0))


@dataclass(eq=False)
class Session:
    """One open stream held by this process.

    Attributes:
        session_id: the opaque id in the message URL.
        client_hash: identity hash of the client that opened it (messages must match it).
        outbox: serialized JSON-RPC messages to send on the stream, in arrival order.
        last_active: ``time.monotonic()`` of the last message (idle timeout).
        messages, routed: answers sent, and how many of them came from another process.
    """

    session_id: str
    client_hash: str
    outbox: asyncio.Queue[bytes] = field(default_factory=lambda: asyncio.Queue(_QUEUE_BOUND))
    last_active: float = field(default_factory=time.monotonic)
    messages: int = 0
    routed: int = 0
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    # Set by the stream's handler: writes one answer at once when that cannot wait on the
    # client (False: it cannot, queue it). ``writing``: a write is under way on the stream.
    write_now: Callable[[bytes], Awaitable[bool]] | None = None
    writing: bool = False

    def end(self) -> None:
        """End the stream now: mark it closed and wake its pump, which then frees the session."""
        if self.closed.is_set():
            return
        self.closed.set()
        with contextlib.suppress(asyncio.QueueFull):  # a full outbox: the pump is awake anyway
            self.outbox.put_nowait(b"")  # the empty message is the wake-up; answers are never empty


class SessionStore(Protocol):
    """Where sessions are known: this process only, or Redis."""

    holder_id: str

    async def open(self, session_id: str, client_hash: str, settings: SseSettings) -> int:
        """Take a place under both caps: ``OPENED``, ``GLOBAL_CAP`` or ``CLIENT_CAP``
        (raises LimitsUnavailable)."""

    async def lookup(self, session_id: str) -> tuple[str, str] | None:
        """``(holder_id, client_hash)`` of an open session, or None (raises LimitsUnavailable)."""

    async def forward(self, holder_id: str, session_id: str, body: bytes) -> None:
        """Hand an answer to another process's stream (raises LimitsUnavailable)."""

    async def close(self, session_id: str, client_hash: str) -> None:
        """Forget a session and free its places; never raises."""

    async def run(self, hub: SessionHub) -> None:
        """Background work until cancelled: renewals and the inbox (none in memory)."""

    async def aclose(self) -> None:
        """Release connections."""


class MemorySessionStore:
    """Embedded mode: sessions of this one process."""

    holder_id = "local"

    def __init__(self) -> None:
        self._clients: dict[str, str] = {}
        self._per_client: dict[str, int] = {}

    async def open(self, session_id: str, client_hash: str, settings: SseSettings) -> int:
        if len(self._clients) >= settings.max_streams:
            return GLOBAL_CAP
        if self._per_client.get(client_hash, 0) >= settings.max_streams_per_client:
            return CLIENT_CAP
        self._clients[session_id] = client_hash
        self._per_client[client_hash] = self._per_client.get(client_hash, 0) + 1
        return OPENED

    async def lookup(self, session_id: str) -> tuple[str, str] | None:
        client = self._clients.get(session_id)
        return None if client is None else (self.holder_id, client)

    async def forward(self, holder_id: str, session_id: str, body: bytes) -> None:
        return None  # one process: every session is local, the hub delivers it

    async def close(self, session_id: str, client_hash: str) -> None:
        if self._clients.pop(session_id, None) is None:
            return
        left = self._per_client.get(client_hash, 1) - 1
        if left > 0:
            self._per_client[client_hash] = left
        else:
            self._per_client.pop(client_hash, None)

    async def run(self, hub: SessionHub) -> None:
        return None

    async def aclose(self) -> None:
        return None


def build_session_store(target: RedisTarget | None) -> MemorySessionStore | RedisSessionStore:
    """The store for the configured mode: Redis when ``target`` is set, else this process."""
    return RedisSessionStore(target) if target else MemorySessionStore()


class SessionHub:
    """This process's open streams and the routing of answers to any stream in the cluster.

    Args:
        store: a :class:`MemorySessionStore` or :class:`RedisSessionStore`.
        settings: the caps and timers.
    """

    def __init__(self, store: SessionStore, settings: SseSettings) -> None:
        self.store = store
        self.settings = settings
        self._local: dict[str, Session] = {}
        self._task: asyncio.Task[None] | None = None

    def local_sessions(self) -> list[Session]:
        """The sessions whose streams this process holds."""
        return list(self._local.values())

    async def open(self, client_hash: str) -> Session | int:
        """Open a session for ``client_hash``: the session, or ``GLOBAL_CAP``/``CLIENT_CAP``
        (raises LimitsUnavailable)."""
        session_id = secrets.token_urlsafe(32)
        outcome = await self.store.open(session_id, client_hash, self.settings)
        if outcome != OPENED:
            return outcome
        session = Session(session_id, client_hash)
        self._local[session_id] = session
        return session

    async def close(self, session: Session) -> None:
        """Forget ``session`` everywhere and free its places; never raises."""
        session.closed.set()
        if self._local.pop(session.session_id, None) is not None:
            await self.store.close(session.session_id, session.client_hash)

    def end_local(self, session_id: str) -> None:
        """End the stream of a session the shared store no longer knows (its pump then frees it)."""
        session = self._local.get(session_id)
        if session is not None:
            session.end()

    async def holder_of(self, session_id: str, client_hash: str) -> str | None:
        """The holder of ``session_id`` when it is open and was opened by ``client_hash``,
        else None (raises LimitsUnavailable).

        A stream this process holds is answered from memory: no store round trip per message.
        (A record the store lost ends that stream at the next renewal, `end_local`.)
        """
        local = self._local.get(session_id)
        if local is not None and not local.closed.is_set():
            return self.store.holder_id if hmac.compare_digest(local.client_hash, client_hash) else None
        found = await self.store.lookup(session_id)
        if found is None or not hmac.compare_digest(found[1], client_hash):
            return None
        return found[0]

    async def deliver(self, holder_id: str, session_id: str, body: bytes) -> bool:
        """Send ``body`` on the session's stream; False when the local stream is gone
        (raises LimitsUnavailable when Redis cannot take it)."""
        if holder_id == self.store.holder_id:
            # An idle stream here takes the answer from this task, without the outbox and a
            # wake-up of its pump; a busy one (a write under way, answers queued) gets it in order.
            session = self._local.get(session_id)
            if (session is not None and session.write_now is not None and not session.writing
                    and session.outbox.empty() and not session.closed.is_set() and await session.write_now(body)):
                session.last_active = time.monotonic()
                return True
            return self.deliver_local(session_id, body, routed=False)
        await self.store.forward(holder_id, session_id, body)
        return True

    def deliver_local(self, session_id: str, body: bytes, *, routed: bool) -> bool:
        """Queue ``body`` on a stream this process holds; False when it is not here (or
        its reader stopped reading, which ends the session)."""
        session = self._local.get(session_id)
        if session is None or session.closed.is_set():
            return False
        try:
            session.outbox.put_nowait(body)
        except asyncio.QueueFull:
            session.end()
            return False
        session.last_active = time.monotonic()
        session.routed += routed
        return True

    async def start(self) -> None:
        """Start the store's background work (renewals, inbox)."""
        self._task = asyncio.create_task(self.store.run(self))

    async def aclose(self) -> None:
        """End every local stream, stop background work and release connections."""
        for session in self.local_sessions():
            await self.close(session)
        if self._task is not None:
            await stop_tasks([self._task])
        await self.store.aclose()
