"""The catalog's HTTP connections: JSON for requests aiohttp cannot parse.

aiohttp answers a request it cannot parse (not HTTP, a request line over
``REQUEST_LINE_LIMIT``, a header over 8 KB, a bad header) with a ``text/plain`` 400 that
echoes part of the request, and logs the client's address with a traceback. The catalog's
connections (:class:`CatalogRequestHandler`, served through :class:`CatalogRunner` in one
process and under gunicorn) answer ``{"detail": "..."}`` like every other failure, echo
nothing, and log one content-free line.
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

__all__ = ["CatalogRequestHandler", "CatalogRunner", "ServerOptions"]

logger = logging.getLogger(__name__)

_DETAILS: Final = {
    400: "Bad request: the request is not valid HTTP (or its request line or a header is too long); "
         "do not retry it as is",
    413: "Request too large: send a smaller request",
    431: "Request headers too large: send fewer or shorter headers",
}
_INTERNAL: Final = "Internal server error"


class ServerOptions(TypedDict):
    """aiohttp server keyword arguments the catalog sets (``web.AppRunner``, the request handler)."""

    access_log: logging.Logger | None
    max_line_size: int


class CatalogRequestHandler(RequestHandler):
    """aiohttp's connection handler whose parse errors are JSON without echo (module docstring)."""

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """``{"detail": ...}`` for a request aiohttp could not parse (or a failed handler)."""
        if request.writer.output_size > 0:  # the answer has started: nothing else can be sent
            raise ConnectionError("the response was already started")
        logger.warning("request refused status=%d error=%s", status, type(exc).__name__ if exc else "none")
        detail = _DETAILS.get(status, _INTERNAL if status >= 500 else _DETAILS[400])
        response = web.Response(status=status, body=orjson.dumps({"detail": detail}),
                                content_type="application/json", charset="utf-8")
        response.force_close()
        return response


class CatalogRunner(HandlerRunner):
    """``web.AppRunner`` whose sites accept connections with :class:`CatalogRequestHandler`.

    Args:
        app: the catalog application.
        handler_kwargs: aiohttp's server settings (e.g. ``max_line_size``, ``access_log``).
    """

    def __init__(self, app: web.Application, **handler_kwargs: Unpack[ServerOptions]) -> None:
        super().__init__(app, **handler_kwargs)
        self._handler_kwargs = handler_kwargs

    def make_handler(self, server: web.Server, loop: asyncio.AbstractEventLoop) -> CatalogRequestHandler:
        """A :class:`CatalogRequestHandler` with the runner's server settings."""
        # aiohttp annotates access_log as a Logger, but None is its documented "no access log".
        return CatalogRequestHandler(server, loop=loop, **self._handler_kwargs)  # type: ignore[arg-type]
