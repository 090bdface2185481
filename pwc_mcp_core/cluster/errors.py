"""The cluster layer's one failure type: the shared store (Redis) could not serve a command.

Every Redis-facing function of `pwc_mcp_core.cluster` that the gateway calls raises
`StoreUnavailable` (or a subclass) instead of redis-py's exceptions or ``OSError``, so
the gateway decides "Redis is down, answer without it" by catching this one class and
imports nothing from ``redis`` to do so:

* `StoreConnectionLost`: unreachable, or the connection was lost; `StoreReplyLost` when the
  command had been written (it may have run: a master that died under it);
* `StoreTimeout`: no reply in time (the connection was dropped);
* `StoreRefused`: Redis answered the command with an error (a script's error, ``OOM``,
  ``READONLY`` during a failover); for a caller it means the store cannot serve it either.

Each also derives from the redis-py exception it replaces (``ConnectionError``,
``TimeoutError``, ``ResponseError``), so code that still catches those (a worker, a
test) keeps working unchanged. A worker, which calls redis-py through this package's sync
pipes, catches redis-py's own base class, re-exported here as `RedisError`, so no module
outside ``pwc_mcp_core.cluster`` imports ``redis``.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["LimitsUnavailable", "RedisError", "StoreConnectionLost", "StoreRefused", "StoreReplyLost", "StoreTimeout", "StoreUnavailable",
           "store_errors", "translate"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class StoreUnavailable(RedisError):
    """The shared store could not serve a command; the caller answers without it."""


class StoreConnectionLost(StoreUnavailable, RedisConnectionError):
    """Redis is unreachable, or the connection was lost before the reply."""


class StoreReplyLost(StoreConnectionLost):
    """The command was written and the connection was lost before its reply: it may have run.

    Only an idempotent command may be sent again (the queue's enqueue is, by its request id
    and lease id: a duplicate entry is answered once).
    """


class StoreTimeout(StoreUnavailable, RedisTimeoutError):
    """Redis gave no reply in time."""


class StoreRefused(StoreUnavailable, ResponseError):
    """Redis answered the command with an error (kept as ``__cause__``)."""


def translate(exc: BaseException) -> StoreUnavailable:
    """The `StoreUnavailable` for a redis-py error or an ``OSError`` (itself if it already is one)."""
    if isinstance(exc, StoreUnavailable):
        return exc
    error: StoreUnavailable
    if isinstance(exc, ResponseError):
        error = StoreRefused(str(exc))
    elif isinstance(exc, RedisTimeoutError | TimeoutError):
        error = StoreTimeout(f"no reply from Redis in time: {type(exc).__name__}")
    else:
        error = StoreConnectionLost(f"Redis unreachable: {type(exc).__name__}")
    error.__cause__ = exc
    return error


def store_errors(func: Callable[_P, Awaitable[_R]]) -> Callable[_P, Awaitable[_R]]:
    """Decorate a coroutine function of the cluster layer so that redis-py's errors and
    ``OSError`` leave it as `StoreUnavailable`."""

    @functools.wraps(func)
    async def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await func(*args, **kwargs)
        except StoreUnavailable:
            raise
        except (RedisError, OSError) as exc:
            raise translate(exc) from exc

    return wrapper


class LimitsUnavailable(Exception):
    """The shared limit store cannot be reached; the request must be refused (fail closed)."""
