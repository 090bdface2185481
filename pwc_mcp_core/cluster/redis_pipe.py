"""Pipelined Redis commands over one dedicated connection, for the paths every call takes.

A command through redis-py's client costs a pool checkout with a liveness probe
of the socket, a retry wrapper, its packer and a release: on this project's benchmark
machine that overhead was about twice the Redis round trip itself, on every admission,
enqueue and reply wait. :class:`RedisPipe` keeps redis-py's connection (its connect and
handshake), packs with `pack_command` (hiredis), parses with hiredis and drops the rest:

* commands submitted during one event-loop iteration are written together, in one
  system call, by one flush task; a command sent to an idle pipe is written at once;
* the replies are parsed (hiredis) as their bytes arrive, in the connection's own
  ``data_received``, and each caller's future resolved there: no reader task and no
  stream buffer lie between a reply and its caller, and the next batch is written while
  earlier replies are still on their way;
* a reply that is a Redis error goes to its caller alone, as `StoreRefused`; a lost
  connection fails every waiting caller with `StoreConnectionLost` (`StoreReplyLost` for
  commands already written, which may have run),
  and the next command connects again (Redis restarts need no process restart);
* a caller that waits longer than ``timeout_s`` gets `StoreTimeout`
  and the connection is dropped, so a hung Redis fails fast instead of stalling (one
  timer per pipe, set to the deadline of the oldest unanswered command, replaces a
  timeout per command);
* (re)connecting is `redis_connect`'s: with a URL it is one attempt; with Sentinel it
  finds the current master and waits out a failover (commands wait unwritten meanwhile,
  so none runs twice), and callers get `redis_connect.reconnect_wait_s` more time.

A blocking command (``BLMPOP``, ``XREADGROUP ... BLOCK``) holds the connection until it
returns, so it must have a pipe of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
from collections import deque
from collections.abc import Callable, Sequence
from typing import TypeAlias

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.connection import ConnectionPool as SyncConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, InvalidResponse, NoScriptError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pwc_mcp_core.cluster.errors import (
    StoreConnectionLost,
    StoreRefused,
    StoreReplyLost,
    StoreTimeout,
    StoreUnavailable,
)
from pwc_mcp_core.cluster.redis_connect import RedisTarget, async_pool, reconnect_wait_s, sync_pool

__all__ = ["Arg", "OnReply", "RedisPipe", "Reply", "ScriptRunner", "SyncPipe", "int_reply", "pack_command"]

Arg: TypeAlias = bytes | str | int | float
"""One argument of a command, as `pack_command` packs it."""
Reply: TypeAlias = "bytes | int | list[Reply] | None"
"""A parsed RESP2 reply (no decoding: strings stay bytes); a refused command is an exception instead."""
_Waiter: TypeAlias = "asyncio.Future[Reply | StoreRefused] | _Callback"
OnReply: TypeAlias = "Callable[[Reply | StoreUnavailable], None]"
"""`RedisPipe.submit`'s callback: the reply (a refused command's as its `StoreRefused`), or the
`StoreUnavailable` that failed the command."""


class RedisPipe:
    """Commands pipelined over one dedicated connection to ``target``'s master.

    Args:
        target: a ``redis://``/``rediss://``/``unix://`` URL or a Sentinel service (`redis_connect`).
        timeout_s: the longest a caller waits for its reply (seconds; with Sentinel plus
            `redis_connect.reconnect_wait_s`); then the connection is dropped and
            `StoreTimeout` raised. ``None`` waits forever (a pipe that
            carries blocking commands, whose callers bound the wait themselves).
        connect_timeout_s: the longest one connection attempt may take (seconds).
    """

    def __init__(self, target: RedisTarget, *, timeout_s: float | None = 2.0, connect_timeout_s: float = 1.0) -> None:
        self._pool: ConnectionPool = async_pool(target, socket_timeout=None, connect_timeout=connect_timeout_s)
        self._conn: AbstractConnection = self._pool.make_connection()  # type: ignore[no-untyped-call]
        self._closing: set[asyncio.Task[None]] = set()
        self._timeout_s = None if timeout_s is None else timeout_s + reconnect_wait_s(target)
        self._outbox: list[bytes] = []
        self._outbox_waiters: list[_Waiter] = []
        self._pending: deque[_Waiter] = deque()
        self._flush_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._closed = False
        # (deadline, last waiter of a batch) in submission order; one timer checks the oldest.
        # A per-call asyncio.timeout cost a tenth of a busy gateway's event loop.
        self._deadlines: deque[tuple[float, _Waiter]] = deque()
        self._watchdog: asyncio.TimerHandle | None = None

    async def execute(self, *args: Arg) -> Reply:
        """Run one command (``execute("LPUSH", key, value)``) and return its parsed reply.

        Raises:
            StoreRefused: Redis answered with an error.
            StoreConnectionLost: Redis is unreachable, or the connection was lost.
            StoreTimeout: no reply within ``timeout_s``.
            (All three are `StoreUnavailable`, see `pwc_mcp_core.cluster.errors`.)
        """
        result = (await self.execute_many([args]))[0]
        if isinstance(result, Exception):
            raise result
        return result

    async def execute_many(self, commands: Sequence[Sequence[Arg]]) -> list[Reply | StoreRefused]:
        """Run ``commands`` in order (written together) and return their replies.

        A command that Redis refused has its `StoreRefused` in its place in the list.

        Raises:
            StoreConnectionLost: Redis is unreachable, or the connection was lost.
            StoreTimeout: no reply within ``timeout_s``.
        """
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Reply | StoreRefused]] = [loop.create_future() for _ in commands]
        self._send(commands, futures)
        if len(futures) == 1:
            return [await futures[0]]
        return list(await asyncio.gather(*futures))

    def submit(self, command: Sequence[Arg], on_reply: OnReply) -> None:
        """Send one command without waiting: ``on_reply`` gets its outcome where the reply is read,
        in the connection's callback, so no task wakes up in between (the gateway's reply wait).

        ``on_reply`` must not raise. It gets the reply (a refused command: its `StoreRefused`),
        or the `StoreConnectionLost`/`StoreTimeout` that failed the command.

        Raises:
            StoreConnectionLost: the pipe is closed (``on_reply`` is not called).
        """
        self._send([command], [_Callback(on_reply)])

    def _send(self, commands: Sequence[Sequence[Arg]], waiters: Sequence[_Waiter]) -> None:
        """Write ``commands`` now, or leave them to this iteration's flush; their replies go to ``waiters``."""
        if self._closed:
            raise StoreConnectionLost("the pipe is closed")
        loop = asyncio.get_running_loop()
        data = b"".join([pack_command(command) for command in commands])
        if not self._write_now(data, waiters):
            self._outbox.append(data)
            self._outbox_waiters.extend(waiters)
            if self._flush_task is None:
                self._flush_task = loop.create_task(self._flush())
        if self._timeout_s is not None:
            deadline = loop.time() + self._timeout_s
            self._deadlines.append((deadline, waiters[-1]))  # replies come in order: the last is the latest
            if self._watchdog is None:
                self._watchdog = loop.call_at(deadline, self._check_deadlines)

    def _write_now(self, data: bytes, waiters: Sequence[_Waiter]) -> bool:
        """Write ``data`` at once when the pipe is idle (connected, nothing waiting for a reply or
        a flush, the socket's buffer empty): a lone command then costs no flush task and no
        event-loop iteration before it leaves. Busy, it is left to the flush task, which writes
        every command of one iteration together. Whether it was written."""
        conn = self._conn
        writer = conn._writer  # redis-py's asyncio.StreamWriter (None until connected)
        if (self._pending or self._outbox or self._flush_task is not None or self._write_lock.locked()
                or writer is None or not conn.is_connected or writer.transport.get_write_buffer_size()):
            return False
        self._pending.extend(waiters)  # before the write: replies may come back at once
        writer.write(data)  # the buffer is empty: the transport sends it now, nothing to drain
        return True

    def _check_deadlines(self) -> None:
        """Timer callback: fail everything once the oldest unanswered batch is past its deadline."""
        self._watchdog = None
        deadlines = self._deadlines
        while deadlines and deadlines[0][1].done():
            deadlines.popleft()
        if not deadlines:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if deadlines[0][0] > now:
            self._watchdog = loop.call_at(deadlines[0][0], self._check_deadlines)
            return
        # Redis stopped answering. Replies come in order, so every command already written is
        # stuck too: dropping the connection fails them; commands not yet written go out on a
        # new connection, under the watch of this timer again.
        error = StoreTimeout("no reply from Redis in time")
        while deadlines and deadlines[0][0] <= now:
            _fail(deadlines.popleft()[1], error)
        self._abandon(error)
        if deadlines:
            self._watchdog = loop.call_at(deadlines[0][0], self._check_deadlines)

    async def close(self) -> None:
        """Fail waiting callers and close the connection; later commands raise ``ConnectionError``."""
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._abandon(StoreConnectionLost("the pipe is closed"))
        await asyncio.gather(*self._closing)

    async def _flush(self) -> None:
        # Everything submitted in the iterations before this step goes out in one write.
        async with self._write_lock:
            self._flush_task = None
            data, waiters = self._outbox, self._outbox_waiters
            self._outbox, self._outbox_waiters = [], []
            if not waiters:
                return
            if self._closed:
                for waiter in waiters:
                    _fail(waiter, StoreConnectionLost("the pipe is closed"))
                return
            conn = self._conn
            try:
                if not conn.is_connected:
                    await conn.connect()  # type: ignore[no-untyped-call]
                    if conn is not self._conn:  # abandoned (closed) while connecting: nothing was written
                        for waiter in waiters:
                            _fail(waiter, StoreConnectionLost("the pipe is closed"))
                        await _disconnect_quietly(conn)
                        return
                    _ReplyProtocol.install(self, conn)
                self._pending.extend(waiters)  # before the write: replies may come back at once
                await conn.send_packed_command(data, check_health=False)
            except (RedisError, OSError) as exc:
                for waiter in waiters:
                    _fail(waiter, StoreConnectionLost(f"Redis unreachable: {type(exc).__name__}"))
                if conn is self._conn:  # else it was abandoned already (timeout, close)
                    self._abandon(StoreReplyLost("the connection to Redis was lost"))

    def _replied(self, conn: AbstractConnection, reply: Reply | StoreRefused) -> None:
        """One reply parsed off ``conn``: it resolves the oldest waiting caller (replies come in order)."""
        if conn is self._conn and self._pending:
            waiter = self._pending.popleft()
            if not waiter.done():
                waiter.set_result(reply)

    def _lost(self, conn: AbstractConnection, error: StoreUnavailable) -> None:
        """``conn`` failed under its callers; abandoned already (timeout, close) it is nobody's now."""
        if conn is self._conn:
            self._abandon(error)

    def _abandon(self, error: StoreUnavailable) -> None:
        """Fail every caller waiting for a reply and give the connection up, at once.

        Synchronous on purpose: a command submitted right after must not be written to
        the abandoned connection. The next flush connects a fresh one; the old one is
        closed in the background.
        """
        pending, self._pending = self._pending, deque()
        for waiter in pending:
            _fail(waiter, error)
        old, self._conn = self._conn, self._pool.make_connection()  # type: ignore[no-untyped-call]
        task = asyncio.get_running_loop().create_task(_disconnect_quietly(old))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)


class _Callback:
    """A waiter of `RedisPipe.submit`: hands its outcome to a function at once, where the reply is
    read, instead of resolving a future whose task would run one event-loop iteration later."""

    __slots__ = ("_done", "_on_reply")

    def __init__(self, on_reply: OnReply) -> None:
        self._on_reply = on_reply
        self._done = False

    def done(self) -> bool:
        """Whether the outcome was handed over (it is, once)."""
        return self._done

    def set_result(self, reply: Reply | StoreRefused) -> None:
        """The command's reply."""
        self._done = True
        self._on_reply(reply)

    def set_exception(self, error: BaseException) -> None:
        """The command failed (the pipe gives `StoreUnavailable` errors only)."""
        self._done = True
        self._on_reply(error if isinstance(error, StoreUnavailable) else StoreConnectionLost(type(error).__name__))


class _ReplyProtocol(asyncio.Protocol):
    """Reads a connected `RedisPipe` connection's replies in place of redis-py's stream reader.

    Installed on the transport once redis-py has connected (its handshake, AUTH and SELECT
    included, is read by redis-py); from then on each chunk is fed to a hiredis reader as it
    arrives and every complete reply goes straight to `RedisPipe._replied`, in this callback.
    The stream protocol it replaces still gets the flow-control and loss callbacks, so
    redis-py's writer (``drain``, ``disconnect``) works as before.
    """

    def __init__(self, pipe: RedisPipe, conn: AbstractConnection, previous: asyncio.BaseProtocol) -> None:
        self._pipe = pipe
        self._conn = conn
        self._previous = previous
        self._parser = _reply_parser()

    @classmethod
    def install(cls, pipe: RedisPipe, conn: AbstractConnection) -> None:
        """Take over reading ``conn`` (connected, its handshake done) for ``pipe``."""
        transport = conn._writer.transport  # type: ignore[union-attr]  # connected: redis-py's StreamWriter
        transport.set_protocol(cls(pipe, conn, transport.get_protocol()))

    def data_received(self, data: bytes) -> None:
        """Parse what arrived and hand every complete reply to its caller."""
        self._parser.feed(data)
        while True:
            try:
                reply = self._parser.gets()
            except InvalidResponse:
                self._pipe._lost(self._conn, StoreReplyLost("Redis sent an unreadable reply"))
                return
            if reply is False:  # hiredis: no complete reply yet
                return
            if isinstance(reply, RedisConnectionError):
                self._pipe._lost(self._conn, StoreReplyLost(f"the connection to Redis was lost: {type(reply).__name__}"))
                return
            self._pipe._replied(self._conn, _refused(reply) if isinstance(reply, ResponseError) else reply)

    def eof_received(self) -> bool:
        """Redis closed the connection: close our side too (`connection_lost` follows)."""
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """Fail the callers still waiting on this connection, and tell redis-py's protocol."""
        self._previous.connection_lost(exc)
        reason = type(exc).__name__ if exc is not None else "closed by Redis"
        self._pipe._lost(self._conn, StoreReplyLost(f"the connection to Redis was lost: {reason}"))

    def pause_writing(self) -> None:
        """Redis reads slower than we write: redis-py's ``drain`` waits (its protocol's flag)."""
        self._previous.pause_writing()

    def resume_writing(self) -> None:
        """The write buffer drained: ``drain`` returns."""
        self._previous.resume_writing()


class SyncPipe:
    """`RedisPipe`'s synchronous sibling for one thread: a connection it holds for good.

    A worker's consumer thread runs every call through it (its reply with its next
    ``XREADGROUP``), so redis-py's pool checkout, pipeline object and per-reply read path are
    skipped: redis-py connects (its handshake, and with Sentinel the master lookup), then
    commands are packed by `pack_command`, written in one call, and the replies parsed by a
    hiredis reader of the pipe's own, in order. Not thread-safe: one per thread.

    Args:
        target: a URL or a Sentinel service (`redis_connect`); with Sentinel a reconnection
            finds the current master.
        timeout_s: socket timeout (seconds); must exceed the longest ``BLOCK`` sent.
        connect_timeout_s: the longest one connection attempt may take (seconds).
    """

    def __init__(self, target: RedisTarget, *, timeout_s: float, connect_timeout_s: float = 2.0) -> None:
        pool: SyncConnectionPool = sync_pool(target, socket_timeout=timeout_s, connect_timeout=connect_timeout_s)
        self._conn = pool.make_connection()
        self._sock: socket.socket | None = None  # the connection the parser below reads
        self._parser = _reply_parser()
        self._buffer = bytearray(65536)

    def execute_many(self, commands: Sequence[Sequence[Arg]]) -> list[Reply | ResponseError]:
        """Run ``commands`` in one write and return their replies (a refused one as its ``ResponseError``).

        Raises:
            redis.exceptions.ConnectionError, redis.exceptions.TimeoutError: Redis is
                unreachable or silent; the connection is dropped and the next call reconnects.
        """
        try:
            sock = self._socket()
            if sock is not self._sock:  # a new connection: nothing of the old one's replies is left
                self._sock, self._parser = sock, _reply_parser()
            sock.sendall(b"".join([pack_command(command) for command in commands]))
            return self._read(sock, len(commands))
        except (RedisError, OSError) as exc:
            self._conn.disconnect()  # type: ignore[no-untyped-call]
            self._sock = None
            if isinstance(exc, RedisError):
                raise
            if isinstance(exc, TimeoutError):
                raise RedisTimeoutError("no reply from Redis in time") from exc
            raise RedisConnectionError(f"the connection to Redis was lost: {type(exc).__name__}") from exc

    def _socket(self) -> socket.socket:
        """redis-py's socket of the connection, connected first when it is not."""
        sock: socket.socket | None = self._conn._sock  # type: ignore[attr-defined]
        if sock is None:
            # Connect explicitly: a Sentinel connection's connect finds the master. (redis-py's
            # connect() runs a retry wrapper even when connected: only called when needed.)
            self._conn.connect()  # type: ignore[no-untyped-call]
            sock = self._conn._sock  # type: ignore[attr-defined]
        if sock is None:
            raise RedisConnectionError("Redis did not connect")
        return sock

    def _read(self, sock: socket.socket, count: int) -> list[Reply | ResponseError]:
        replies: list[Reply | ResponseError] = []
        parser, buffer = self._parser, self._buffer
        while len(replies) < count:
            reply = parser.gets()
            if reply is False:  # hiredis: no complete reply yet
                received = sock.recv_into(buffer)
                if not received:
                    raise RedisConnectionError("the connection was closed by Redis")
                parser.feed(buffer, 0, received)  # type: ignore[arg-type]  # hiredis reads any buffer
            elif isinstance(reply, RedisConnectionError):  # a Redis that is loading, or the like
                raise reply
            else:
                replies.append(reply)
        return replies

    def close(self) -> None:
        """Close the connection."""
        self._conn.disconnect()  # type: ignore[no-untyped-call]
        self._sock = None


def _reply_parser() -> hiredis.Reader:
    """A RESP reader giving raw replies: bytes stay bytes; a Redis error is a value, the
    ``ResponseError`` (or, for a Redis that is loading or the like, ``ConnectionError``)
    subclass redis-py's own parser would raise."""
    return hiredis.Reader(protocolError=InvalidResponse, replyError=BaseParser.parse_error)


def pack_command(args: Sequence[Arg]) -> bytes:
    """One command as a RESP array of bulk strings (``str`` is UTF-8; ``int``/``float`` as text),
    packed by hiredis in C.

    redis-py's own packer was a tenth of a busy gateway's time, and a packer in Python (this
    function's earlier body) a sixth of a worker's work around each call.

    Raises:
        redis.exceptions.DataError: an argument of another type (``bool``, ``None``, ...).
    """
    command: tuple[Arg, ...] = args if isinstance(args, tuple) else tuple(args)
    try:
        # hiredis's stub types the argument as a 1-tuple; it takes any number of items.
        packed: bytes = hiredis.pack_command(command)  # type: ignore[arg-type]
    except TypeError:
        wrong = next((arg for arg in args if type(arg) not in (bytes, str, int, float)), None)
        raise DataError(f"a Redis argument cannot be {type(wrong).__name__}") from None
    return packed


async def _disconnect_quietly(conn: AbstractConnection) -> None:
    with contextlib.suppress(Exception):
        await conn.disconnect(nowait=True)


def _refused(exc: ResponseError) -> StoreRefused:
    refused = StoreRefused(str(exc))
    refused.__cause__ = exc
    return refused


def int_reply(reply: Reply) -> int:
    """``reply`` as an integer (a script's status code, a count).

    Raises:
        StoreRefused: the reply is no integer (a script or a Redis that answers otherwise).
    """
    if isinstance(reply, int):
        return reply
    if isinstance(reply, bytes):
        with contextlib.suppress(ValueError):
            return int(reply)
    raise StoreRefused(f"expected an integer reply, got {type(reply).__name__}")


def _fail(waiter: _Waiter, error: Exception) -> None:
    if not waiter.done():
        waiter.set_exception(error)


class ScriptRunner:
    """``await runner(keys, args)`` runs a Lua script by SHA over a :class:`RedisPipe`.

    The source is loaded on first use and again when Redis has forgotten it (a restart).
    Each script call stays atomic on its own; concurrent calls share one write.

    Raises (from ``__call__``): `StoreRefused` for an error raised by the script, or the
    pipe's `StoreConnectionLost`/`StoreTimeout`: all `StoreUnavailable`.
    """

    def __init__(self, pipe: RedisPipe, source: str) -> None:
        self._pipe = pipe
        self._source = source
        self._sha = hashlib.sha1(source.encode("utf-8")).hexdigest()

    async def __call__(self, keys: Sequence[Arg], args: Sequence[Arg]) -> Reply:
        try:
            return await self._pipe.execute("EVALSHA", self._sha, len(keys), *keys, *args)
        except StoreRefused as exc:
            if not isinstance(exc.__cause__, NoScriptError):
                raise
            await self._pipe.execute("SCRIPT", "LOAD", self._source)
            return await self._pipe.execute("EVALSHA", self._sha, len(keys), *keys, *args)
