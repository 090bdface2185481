"""The gateway's HTTP connections: a header deadline and JSON for requests aiohttp cannot parse.

nginx bounds slow clients at the edge (``client_header_timeout``); a deployment without it
(compose, the Space) must not be held open by them either, so every gateway process serves
through :class:`GatewayRunner`, whose connections (:class:`GatewayRequestHandler`):

* close a connection whose request headers are not complete `HEADER_TIMEOUT_S` after their
  first byte (an idle keep-alive connection is left to ``keepalive_timeout``, which must stay
  above the proxy's; a body has its own deadline, ``admission.BODY_TIMEOUT_S``);
* answer a request that is not valid HTTP (an unknown method, a bad header, a request line over
  the bound) with ``{"error": "bad_request: …"}``, never aiohttp's text, which echoes the
  client's request line back.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final, TypedDict, Unpack

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from web_serving.runner import HandlerRunner

__all__ = ["HEADER_TIMEOUT_S", "GatewayRequestHandler", "GatewayRunner", "ServerOptions"]

logger = logging.getLogger(__name__)

HEADER_TIMEOUT_S: Final = 10.0
"""Seconds from a request's first byte until its headers must be complete (nginx: ``client_header_timeout``)."""

_ERRORS: Final = {
    400: "bad_request: the request is not valid HTTP; do not retry it as is",
    413: "request_too_large: the request is over the bound; send a smaller request",
    431: "headers_too_large: the request's headers are over the bound; send fewer or shorter headers",
}
_INTERNAL: Final = "internal_error: the server failed to answer; retry after 1 s"


class ServerOptions(TypedDict):
    """aiohttp server keyword arguments (`web.run_app`, `web.AppRunner`; `serving.server_options`)."""

    auto_decompress: bool
    keepalive_timeout: float
    access_log: logging.Logger | None
    logger: logging.Logger


class GatewayRequestHandler(RequestHandler):
    """aiohttp's connection handler with the header deadline and JSON errors (module docstring)."""

    def __init__(self, manager: web.Server, *, loop: asyncio.AbstractEventLoop,
                 **options: Unpack[ServerOptions]) -> None:
        # aiohttp annotates access_log as a Logger, but None is its documented "no access log".
        super().__init__(manager, loop=loop, **options)  # type: ignore[arg-type]
        self._gateway_loop = loop
        self._header_started: float | None = None  # loop time of the first byte of headers still incomplete
        self._header_timer: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        """Note the first byte of a request (arming the deadline if none is), then parse as aiohttp does.

        A request whose headers were parsed (aiohttp's request count moved) has no deadline
        pending; while its handler runs (aiohttp's ``_request_in_progress``) its body bytes arm
        none. This is the connection's own per-message work: no middleware runs per request
        for it. One timer per connection, not per request: it is armed only when none is
        pending, and when it fires for a request that has since started it is not re-armed (a
        timer per request cost keep-alive traffic two heap operations each, `bench/ab_embedded.py`)."""
        if self._header_started is None and not self._request_in_progress:
            self._header_started = now = self._gateway_loop.time()
            if self._header_timer is None:
                self._header_timer = self._gateway_loop.call_at(now + HEADER_TIMEOUT_S, self._header_timeout)
        count = self._request_count
        super().data_received(data)
        if self._request_count != count:  # a request's headers are complete
            self._header_started = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        started = self._header_started
        if self._request_in_progress:  # the bytes that armed it were a running request's body
            self._header_started = None
            return
        if started is None or self.transport is None:
            return  # the headers came in time; the next request's first byte arms a new timer
        due = started + HEADER_TIMEOUT_S
        if self._gateway_loop.time() >= due:
            self.transport.close()
        else:  # a later request's headers are pending: wait for their own deadline
            self._header_timer = self._gateway_loop.call_at(due, self._header_timeout)

    def connection_lost(self, exc: BaseException | None) -> None:
        """Disarm the deadline, then let aiohttp clean up."""
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """A JSON error for a request aiohttp could not parse (or a handler that failed), no echo."""
        if request.writer.output_size > 0:  # the answer has started: nothing else can be sent
            raise ConnectionError("the response was already started")
        if status >= 500:
            logger.error("request failed status=%d error=%s", status, type(exc).__name__ if exc else "none")
        text = _ERRORS.get(status, _INTERNAL if status >= 500 else _ERRORS[400])
        headers = {"Retry-After": "1"} if status >= 500 else None
        response = web.Response(status=status, body=orjson.dumps({"error": text}), content_type="application/json",
                                headers=headers)
        response.force_close()
        return response


class GatewayRunner(HandlerRunner):
    """``web.AppRunner`` whose sites accept connections with :class:`GatewayRequestHandler`.

    Args:
        app: the application.
        shutdown_timeout: as ``web.AppRunner``'s.
        handler_kwargs: aiohttp's server settings (``serving.server_options``).
    """

    def __init__(self, app: web.Application, *, shutdown_timeout: float = 60.0,
                 **handler_kwargs: Unpack[ServerOptions]) -> None:
        super().__init__(app, shutdown_timeout=shutdown_timeout, **handler_kwargs)
        self._handler_kwargs = handler_kwargs

    def make_handler(self, server: web.Server, loop: asyncio.AbstractEventLoop) -> GatewayRequestHandler:
        """A :class:`GatewayRequestHandler` with the runner's server settings."""
        return GatewayRequestHandler(server, loop=loop, **self._handler_kwargs)
