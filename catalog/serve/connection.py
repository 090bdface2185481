"""The catalog's HTTP connections: JSON for requests aiohttp cannot parse, and a clear bind error.

aiohttp answers a request it cannot parse (not HTTP, a request line over
``REQUEST_LINE_LIMIT``, a header over 8 KB, a bad header) with a ``text/plain`` 400 that
echoes part of the request, and logs the client's address with a traceback. The catalog's
connections (:class:`CatalogRequestHandler`, served through :class:`CatalogRunner` in one
process and under gunicorn) answer ``{"detail": "..."}`` like every other failure, echo
nothing, and log one content-free line.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from typing import Any, Final

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

__all__ = ["CannotListen", "CatalogRequestHandler", "CatalogRunner", "check_listen"]

logger = logging.getLogger(__name__)

_DETAILS: Final = {
    400: "Bad request: the request is not valid HTTP (or its request line or a header is too long); "
         "do not retry it as is",
    413: "Request too large: send a smaller request",
    431: "Request headers too large: send fewer or shorter headers",
}
_INTERNAL: Final = "Internal server error"


class CannotListen(Exception):
    """The address cannot be listened on (a busy port, an address of another machine)."""


def check_listen(host: str, port: int) -> None:
    """Fail before anything is served (or built) when ``host:port`` cannot be listened on.

    Raises:
        CannotListen: one line naming the address and what to do.
    """
    shown = f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise CannotListen(f"cannot listen on {shown}: {exc.strerror or exc}; "
                           "pass --host with an address of this machine") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            try:
                probe.bind(address)
            except OSError as exc:
                reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
                raise CannotListen(f"cannot listen on {shown}: {reason}; "
                                   "stop the other server or pass --port with a free port") from None


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


class _HandlerFactory:
    """The protocol factory a site listens with: aiohttp's server, making catalog handlers."""

    def __init__(self, server: web.Server, handler_kwargs: dict[str, Any]) -> None:
        self._server = server
        self._handler_kwargs = handler_kwargs

    def __call__(self) -> CatalogRequestHandler:
        return CatalogRequestHandler(self._server, loop=asyncio.get_running_loop(), **self._handler_kwargs)

    @property
    def requests_count(self) -> int:
        """Requests served so far (gunicorn's ``max_requests`` reads it)."""
        return self._server.requests_count


class CatalogRunner(web.AppRunner):
    """``web.AppRunner`` whose sites accept connections with :class:`CatalogRequestHandler`.

    Args:
        app: the catalog application.
        handler_kwargs: aiohttp's server settings (e.g. ``max_line_size``, ``access_log``).
    """

    def __init__(self, app: web.Application, **handler_kwargs: Any) -> None:
        super().__init__(app, **handler_kwargs)
        self._handler_kwargs = handler_kwargs

    @property
    def server(self) -> _HandlerFactory | None:  # type: ignore[override]  # stands in for web.Server at the sites
        """The protocol factory sites listen with (None before ``setup``)."""
        server = super().server
        return None if server is None else _HandlerFactory(server, self._handler_kwargs)
