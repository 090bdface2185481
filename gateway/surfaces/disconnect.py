"""Notice at once that the client of a long response went away.

aiohttp (with its default ``handler_cancellation=False``) tells a handler that its client
is gone only when the handler next writes. A stream that waits for its next event would
hold the client's place until its next tick; :func:`watch_disconnect` instead calls back
from the connection's own ``connection_lost``, through the public
``asyncio.Transport.set_protocol``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from aiohttp import web

__all__ = ["watch_disconnect"]


class _Watch(asyncio.Protocol):
    """aiohttp's protocol for the connection, with ``on_lost`` called first when it is lost."""

    def __init__(self, inner: asyncio.Protocol, on_lost: Callable[[], None]) -> None:
        self.inner = inner
        self._on_lost = on_lost

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self._on_lost()
        finally:
            self.inner.connection_lost(exc)


@contextmanager
def watch_disconnect(request: web.BaseRequest, on_lost: Callable[[], None]) -> Iterator[None]:
    """Call ``on_lost`` (synchronously, in the event loop) if the request's connection is lost
    inside the block; at once if it already is. The connection is left as it was afterwards."""
    transport = request.transport
    if transport is None or transport.is_closing():
        on_lost()
        yield
        return
    inner = transport.get_protocol()
    if not isinstance(inner, asyncio.Protocol):  # not a plain stream protocol: leave it alone
        yield
        return
    watch = _Watch(inner, on_lost)
    transport.set_protocol(watch)
    try:
        yield
    finally:
        if transport.get_protocol() is watch:
            transport.set_protocol(inner)
