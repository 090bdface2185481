"""Pipelined Redis commands over one dedicated connection, for the paths every call takes.

A command through redis-py's client costs a pool checkout with a liveness probe
of the socket, a retry wrapper, its packer and a release: on this project's benchmark
machine that overhead was about twice the Redis round trip itself, on every admission,
enqueue and reply wait. :class:`RedisPipe` keeps redis-py's connection and RESP parser,
packs with `pack_command` and drops the rest:

* commands submitted during one event-loop iteration are written together, in one
  system call, by one flush task;
* one reader task reads the replies in order and resolves each caller's future, so
  the next batch is written while earlier replies are still on their way;
* a reply that is a Redis error (``ResponseError``, e.g. ``NoScriptError``) goes to its
  caller alone; a lost connection fails every waiting caller with ``ConnectionError``,
  and the next command connects again (Redis restarts need no process restart);
* a caller that waits longer than ``timeout_s`` gets ``redis.exceptions.TimeoutError``
  and the connection is dropped, so a hung Redis fails fast instead of stalling.

A blocking command (``BLMPOP``, ``XREADGROUP ... BLOCK``) holds the connection until it
returns, so it must have a pipe of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import deque
from collections.abc import Sequence
from typing import Any

from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.connection import ConnectionPool as SyncConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, NoScriptError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["RedisPipe", "ScriptRunner", "SyncPipe", "pack_command"]


class RedisPipe:
    """Commands pipelined over one dedicated connection to ``url``.

    Args:
        url: ``redis://`` or ``unix://`` URL (database, password and the like as redis-py reads them).
        timeout_s: the longest a caller waits for its reply (seconds); then the connection
            is dropped and ``redis.exceptions.TimeoutError`` raised. ``None`` waits forever
            (a pipe that carries blocking commands, whose callers bound the wait themselves).
        connect_timeout_s: the longest a (re)connection may take (seconds).
    """

    def __init__(self, url: str, *, timeout_s: float | None = 2.0, connect_timeout_s: float = 1.0) -> None:
        pool = ConnectionPool.from_url(url, socket_connect_timeout=connect_timeout_s, socket_timeout=None,
                                       health_check_interval=0)
        self._conn: AbstractConnection = pool.make_connection()
        self._timeout_s = timeout_s
        self._outbox: list[bytes] = []
        self._outbox_waiters: list[asyncio.Future[Any]] = []
        self._pending: deque[asyncio.Future[Any]] = deque()
        self._flush_task: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._closed = False

    async def execute(self, *args: Any) -> Any:
        """Run one command (``execute("LPUSH", key, value)``) and return its parsed reply.

        Raises:
            redis.exceptions.ResponseError: Redis answered with an error.
            redis.exceptions.ConnectionError: Redis is unreachable, or the connection was lost.
            redis.exceptions.TimeoutError: no reply within ``timeout_s``.
        """
        result = (await self.execute_many([args]))[0]
        if isinstance(result, Exception):
            raise result
        return result

    async def execute_many(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Run ``commands`` in order (written together) and return their replies.

        A command that Redis refused has its ``ResponseError`` in its place in the list.

        Raises:
            redis.exceptions.ConnectionError: Redis is unreachable, or the connection was lost.
            redis.exceptions.TimeoutError: no reply within ``timeout_s``.
        """
        if self._closed:
            raise RedisConnectionError("the pipe is closed")
        loop = asyncio.get_running_loop()
        waiters = [loop.create_future() for _ in commands]
        self._outbox.append(b"".join([pack_command(command) for command in commands]))
        self._outbox_waiters.extend(waiters)
        if self._flush_task is None:
            self._flush_task = loop.create_task(self._flush())
        try:
            async with asyncio.timeout(self._timeout_s):
                if len(waiters) == 1:
                    return [await waiters[0]]
                return list(await asyncio.gather(*waiters))
        except TimeoutError:
            await self._drop(RedisTimeoutError("no reply from Redis in time"))
            raise RedisTimeoutError("no reply from Redis in time") from None

    async def close(self) -> None:
        """Fail waiting callers and close the connection; later commands raise ``ConnectionError``."""
        self._closed = True
        await self._drop(RedisConnectionError("the pipe is closed"))

    async def _flush(self) -> None:
        # Everything submitted in the iterations before this step goes out in one write.
        async with self._write_lock:
            self._flush_task = None
            data, waiters = self._outbox, self._outbox_waiters
            self._outbox, self._outbox_waiters = [], []
            if not waiters:
                return
            try:
                if not self._conn.is_connected:
                    await self._conn.connect()
                    self._reader = asyncio.get_running_loop().create_task(self._read_forever())
                self._pending.extend(waiters)  # before the write: replies may come back at once
                await self._conn.send_packed_command(data, check_health=False)
            except (RedisError, OSError) as exc:
                for waiter in waiters:
                    _fail(waiter, RedisConnectionError(f"Redis unreachable: {type(exc).__name__}"))
                await self._drop(RedisConnectionError("the connection to Redis was lost"))

    async def _read_forever(self) -> None:
        conn = self._conn
        while True:
            try:
                reply: Any = await conn.read_response(disconnect_on_error=False)
            except ResponseError as exc:
                reply = exc
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self._reader = None  # this task ends here; _drop must not cancel it
                await self._drop(RedisConnectionError(f"the connection to Redis was lost: {type(exc).__name__}"))
                return
            if self._pending:
                waiter = self._pending.popleft()
                if not waiter.done():
                    waiter.set_result(reply)

    async def _drop(self, error: RedisError) -> None:
        """Fail every caller waiting for a reply and disconnect; the next flush reconnects."""
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        pending, self._pending = self._pending, deque()
        for waiter in pending:
            _fail(waiter, error)
        with contextlib.suppress(Exception):
            await self._conn.disconnect(nowait=True)


class SyncPipe:
    """`RedisPipe`'s synchronous sibling for one thread: a connection it holds for good.

    A worker's consumer thread runs every call through it twice (``XREADGROUP``, then
    the reply's pipeline), so redis-py's pool checkout and pipeline object are skipped:
    commands are packed by `pack_command`, written in one call, and the replies read in
    order. Not thread-safe: one per thread.

    Args:
        url: ``redis://`` or ``unix://`` URL.
        timeout_s: socket timeout (seconds); must exceed the longest ``BLOCK`` sent.
        connect_timeout_s: the longest a (re)connection may take (seconds).
    """

    def __init__(self, url: str, *, timeout_s: float, connect_timeout_s: float = 2.0) -> None:
        pool = SyncConnectionPool.from_url(url, socket_connect_timeout=connect_timeout_s, socket_timeout=timeout_s,
                                           health_check_interval=0)
        self._conn = pool.make_connection()

    def execute_many(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Run ``commands`` in one write and return their replies (a refused one as its ``ResponseError``).

        Raises:
            redis.exceptions.ConnectionError, redis.exceptions.TimeoutError: Redis is
                unreachable or silent; the connection is dropped and the next call reconnects.
        """
        try:
            self._conn.send_packed_command([b"".join([pack_command(command) for command in commands])],
                                           check_health=False)
            replies: list[Any] = []
            for _command in commands:
                try:
                    replies.append(self._conn.read_response())
                except ResponseError as exc:
                    replies.append(exc)
            return replies
        except (RedisError, OSError):
            self._conn.disconnect()
            raise

    def close(self) -> None:
        """Close the connection."""
        self._conn.disconnect()


def pack_command(args: Sequence[Any]) -> bytes:
    """One command as a RESP array of bulk strings (``str`` is UTF-8; ``int``/``float`` as text).

    redis-py's own packer was a tenth of a busy gateway's time; this one does only what
    the per-call commands need.

    Raises:
        redis.exceptions.DataError: an argument of another type (``bool``, ``None``, ...).
    """
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        if type(arg) is bytes:
            data = arg
        elif type(arg) is str:
            data = arg.encode("utf-8")
        elif type(arg) is int:
            data = b"%d" % arg
        elif type(arg) is float:
            data = repr(arg).encode("ascii")
        else:
            raise DataError(f"a Redis argument cannot be {type(arg).__name__}")
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def _fail(waiter: asyncio.Future[Any], error: Exception) -> None:
    if not waiter.done():
        waiter.set_exception(error)


class ScriptRunner:
    """``await runner(keys, args)`` runs a Lua script by SHA over a :class:`RedisPipe`.

    The source is loaded on first use and again when Redis has forgotten it (a restart).
    Each script call stays atomic on its own; concurrent calls share one write.

    Raises (from ``__call__``): ``ResponseError`` raised by the script, or the pipe's
    ``ConnectionError``/``TimeoutError``.
    """

    def __init__(self, pipe: RedisPipe, source: str) -> None:
        self._pipe = pipe
        self._source = source
        self._sha = hashlib.sha1(source.encode("utf-8")).hexdigest()

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        try:
            return await self._pipe.execute("EVALSHA", self._sha, len(keys), *keys, *args)
        except NoScriptError:
            await self._pipe.execute("SCRIPT", "LOAD", self._source)
            return await self._pipe.execute("EVALSHA", self._sha, len(keys), *keys, *args)
