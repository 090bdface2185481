"""Coalesce concurrent Redis work made in one event-loop iteration into one pipelined round trip.

A busy gateway admits many requests per loop iteration, and a busy worker
finishes many calls per iteration. Sending each command on its own costs a
write and a read system call per request, which dominated both CPU profiles.
:class:`IterationBatcher` queues the items submitted during one loop iteration
and hands them, together, to ``_send`` on the next; each caller still gets its
own result or error. :class:`ScriptBatcher` uses it for ``EVALSHA``: every script
call stays atomic on its own (Redis runs scripts one at a time), so batching
changes no semantics.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

__all__ = ["IterationBatcher", "ScriptBatcher"]

Item = TypeVar("Item")


class IterationBatcher(Generic[Item]):
    """Batch items submitted during one loop iteration; subclasses implement :meth:`_send`.

    ``await batcher.submit(item)`` returns that item's result. ``_send(items)``
    returns one result per item, in order; a result that is an ``Exception`` is
    raised to that item's caller alone, and an exception raised by ``_send`` goes
    to every caller of the batch.

    Args:
        max_batch: the largest batch handed to ``_send``; more waiting items form the next.
    """

    def __init__(self, *, max_batch: int = 256) -> None:
        self._max_batch = max_batch
        self._pending: list[tuple[Item, asyncio.Future[Any]]] = []
        self._scheduled = False
        self._flushing: set[asyncio.Task[None]] = set()

    async def submit(self, item: Item) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((item, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._start_flush)
        return await future

    async def _send(self, items: list[Item]) -> list[Any]:
        raise NotImplementedError

    def _start_flush(self) -> None:
        self._scheduled = False
        while self._pending:
            batch, self._pending = self._pending[: self._max_batch], self._pending[self._max_batch:]
            task = asyncio.get_running_loop().create_task(self._flush(batch))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _flush(self, batch: list[tuple[Item, asyncio.Future[Any]]]) -> None:
        try:
            results = await self._send([item for item, _future in batch])
        except BaseException as exc:  # connection errors belong to every caller of the batch
            for _item, future in batch:
                if not future.done():
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_item, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)


class ScriptBatcher(IterationBatcher[tuple[Sequence[Any], Sequence[Any]]]):
    """``await batcher(keys, args)`` runs the script like ``EVALSHA``, batched with concurrent calls.

    Args:
        redis: an asyncio client (its pool supplies the connection for each batch).
        source: the Lua source; loaded on first use and again if Redis forgot it (restart).
        max_batch: the largest batch sent at once.

    Raises (from ``__call__``): whatever the script or the connection raised for this call,
    e.g. ``redis.exceptions.RedisError`` when Redis is unreachable.
    """

    def __init__(self, redis: Redis, source: str, *, max_batch: int = 256) -> None:
        super().__init__(max_batch=max_batch)
        self._redis = redis
        self._source = source
        self._sha = hashlib.sha1(source.encode("utf-8")).hexdigest()

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await self.submit((keys, args))

    async def _send(self, items: list[tuple[Sequence[Any], Sequence[Any]]]) -> list[Any]:
        for attempt in range(2):
            async with self._redis.pipeline(transaction=False) as pipe:
                for keys, args in items:
                    pipe.evalsha(self._sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(result, NoScriptError) for result in results):
                await self._redis.script_load(self._source)
                continue
            return results
        return results
