"""Serving one process: aiohttp's runner with the service's own request handler, until a signal."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Final

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

__all__ = ["GUNICORN_COMMON", "HandlerRunner", "MakeHandler", "serve_until_signal"]

GUNICORN_COMMON: Final = {"control_socket_disable": True}
"""gunicorn settings every service here runs with (gunicorn >= 25.1). gunicorn opens a control socket
at one per-user path ($XDG_RUNTIME_DIR or $HOME/.gunicorn/gunicorn.ctl) by default: two services on
one host (the gateway and the catalog) would remove each other's, and nothing here uses it."""


MakeHandler = Callable[[web.Server, asyncio.AbstractEventLoop], RequestHandler]
"""Builds one connection's handler from aiohttp's server and the running loop."""


class _HandlerFactory:
    """The protocol factory a site listens with: aiohttp's server, making the service's handlers."""

    def __init__(self, server: web.Server, make_handler: MakeHandler) -> None:
        self._server = server
        self._make_handler = make_handler

    def __call__(self) -> RequestHandler:
        return self._make_handler(self._server, asyncio.get_running_loop())

    @property
    def requests_count(self) -> int:
        """Requests served so far (gunicorn's ``max_requests`` reads it)."""
        return self._server.requests_count


class HandlerRunner(web.AppRunner):
    """``web.AppRunner`` whose sites accept connections with the service's own request handler.

    Subclasses implement :meth:`make_handler`; aiohttp's runner keeps everything else
    (start-up, shutdown, gunicorn's worker).
    """

    def make_handler(self, server: web.Server, loop: asyncio.AbstractEventLoop) -> RequestHandler:
        """One connection's handler; each service returns its own subclass of aiohttp's."""
        raise NotImplementedError

    @property
    def server(self) -> _HandlerFactory | None:  # type: ignore[override]  # stands in for web.Server at the sites
        """The protocol factory sites listen with (None before ``setup``)."""
        server = super().server
        return None if server is None else _HandlerFactory(server, self.make_handler)


async def serve_until_signal(runner: web.AppRunner, host: str, port: int) -> None:
    """Serve ``runner``'s app on ``host:port`` in this process until SIGTERM or SIGINT, then clean up."""
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
