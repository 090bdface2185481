"""Coalesce concurrent calls of one Lua script into one pipelined Redis round trip.

A busy gateway admits many requests per event-loop iteration. Sending each
``EVALSHA`` on its own costs a write and a read system call per request, which
dominated the gateway's CPU profile. :class:`ScriptBatcher` queues the calls
made during one loop iteration and sends them together in one non-transactional
pipeline on the next; each caller still gets its own result or error. Every
script call stays atomic on its own (Redis runs scripts one at a time), so
batching changes no limit semantics.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

__all__ = ["ScriptBatcher"]

_Pending = tuple[Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]


class ScriptBatcher:
    """``await batcher(keys, args)`` runs the script like ``EVALSHA``, batched with concurrent calls.

    Args:
        redis: an asyncio client (its pool supplies the connection for each batch).
        source: the Lua source; loaded on first use and again if Redis forgot it (restart).
        max_batch: the largest batch sent at once; more waiting calls go in the next batch.

    Raises (from ``__call__``): whatever the script or the connection raised for this call,
    e.g. ``redis.exceptions.RedisError`` when Redis is unreachable.
    """

    def __init__(self, redis: Redis, source: str, *, max_batch: int = 256) -> None:
        self._redis = redis
        self._source = source
        self._sha = hashlib.sha1(source.encode("utf-8")).hexdigest()
        self._max_batch = max_batch
        self._pending: list[_Pending] = []
        self._scheduled = False
        self._flushing: set[asyncio.Task[None]] = set()

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((keys, args, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._start_flush)
        return await future

    def _start_flush(self) -> None:
        self._scheduled = False
        while self._pending:
            batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch:]
            task = asyncio.get_running_loop().create_task(self._flush(batch))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _flush(self, batch: list[_Pending]) -> None:
        try:
            results = await self._run(batch)
        except BaseException as exc:  # connection errors belong to every caller of the batch
            for _keys, _args, future in batch:
                if not future.done():
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_keys, _args, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _run(self, batch: list[_Pending]) -> list[Any]:
        for attempt in range(2):
            async with self._redis.pipeline(transaction=False) as pipe:
                for keys, args, _future in batch:
                    pipe.evalsha(self._sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(result, NoScriptError) for result in results):
                await self._redis.script_load(self._source)
                continue
            return results
        return results
