"""A test-only "faulty catalog": an HTTP proxy in front of the real sample catalog.

It runs an aiohttp server on its own event loop in a daemon thread and
forwards every request to the upstream catalog, unless a fault is switched on:

* ``delay(seconds)``: wait, then forward (a slow catalog);
* ``fail(status)``: answer ``status`` with ``{"detail": "injected fault"}`` (5xx);
* ``trickle(interval_s)``: answer with the upstream's headers, then its body one byte
  every ``interval_s`` (a catalog that never quite stops sending);
* ``refuse()``: stop listening, so connections are refused; ``heal()`` listens again
  on the same port.

Faults spare the gateway readiness probe (``GET …/tasks/?page=1&page_size=1``) so
``/health`` keeps reporting the catalog as up while tool calls see the fault,
unless ``spare_probe`` is False. ``hits`` counts the requests that were faulted.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import aiohttp
from aiohttp import web

__all__ = ["FaultyCatalog"]

_HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding",
                          "host"})


@dataclass
class _Fault:
    delay_s: float = 0.0
    status: int | None = None
    trickle_s: float = 0.0


class FaultyCatalog:
    """Proxy ``http://127.0.0.1:<port>/api/v1`` → ``upstream_api_url`` with switchable faults.

    Args:
        upstream_api_url: the real catalog's API base, e.g. ``http://127.0.0.1:P/api/v1``.
        port: the port to listen on (a free one chosen by the caller).
        host: the address to listen on (a netns test's own veth address, or loopback).
    """

    def __init__(self, upstream_api_url: str, port: int, host: str = "127.0.0.1") -> None:
        self._upstream_root = upstream_api_url.split("/api/v1")[0]
        self.port = port
        self.host = host
        self.fault = _Fault()
        self.spare_probe = True
        self.hits = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="faulty-catalog", daemon=True)
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._session: aiohttp.ClientSession | None = None

    @property
    def api_url(self) -> str:
        """The URL to give the system under test as ``PWC_API_URL``."""
        return f"http://{self.host}:{self.port}/api/v1"

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop thread and listen (returns once the socket is bound)."""
        self._thread.start()
        self._run(self._start())

    def close(self) -> None:
        """Stop listening, close the upstream session and the loop thread."""
        self._run(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def _run(self, coro) -> None:  # a coroutine
        asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=15)

    async def _start(self) -> None:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await self._listen()

    async def _listen(self) -> None:
        assert self._runner is not None
        self._site = web.TCPSite(self._runner, self.host, self.port, reuse_address=True)
        await self._site.start()

    async def _stop_listening(self) -> None:
        if self._site is not None:
            await self._site.stop()
            self._site = None

    async def _close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    # -- fault switches --------------------------------------------------------------------

    def delay(self, seconds: float) -> None:
        """Forward every (non-probe) request after ``seconds``."""
        self.fault = _Fault(delay_s=seconds)

    def fail(self, status: int = 503) -> None:
        """Answer every (non-probe) request with ``status``."""
        self.fault = _Fault(status=status)

    def trickle(self, interval_s: float = 0.5) -> None:
        """Send every (non-probe) answer's body one byte per ``interval_s``."""
        self.fault = _Fault(trickle_s=interval_s)

    def refuse(self) -> None:
        """Stop listening: new connections are refused (the probe too)."""
        self._run(self._stop_listening())

    def heal(self) -> None:
        """No fault; listen again if refusing."""
        self.fault = _Fault()
        if self._site is None:
            self._run(self._listen())

    # -- the proxy -------------------------------------------------------------------------

    @staticmethod
    def _is_probe(request: web.Request) -> bool:
        return request.path.endswith("/tasks/") and request.query.get("page_size") == "1"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        fault = self.fault
        faulted = not (self.spare_probe and self._is_probe(request))
        if faulted and fault.trickle_s:
            self.hits += 1
            return await self._trickle(request, fault.trickle_s)
        if faulted and (fault.delay_s or fault.status):
            self.hits += 1
            if fault.delay_s:
                await asyncio.sleep(fault.delay_s)
            if fault.status:
                return web.json_response({"detail": "injected fault"}, status=fault.status)
        assert self._session is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        body = await request.read()
        async with self._session.request(request.method, self._upstream_root + request.path_qs,
                                         headers=headers, data=body or None, allow_redirects=False) as upstream:
            payload = await upstream.read()
            out = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_HEADERS}
            return web.Response(status=upstream.status, body=payload, headers=out)

    async def _trickle(self, request: web.Request, interval_s: float) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
        response.content_length = 1_000_000
        await response.prepare(request)
        try:
            for _ in range(1_000_000):
                await response.write(b" ")
                await asyncio.sleep(interval_s)
        except (ConnectionError, asyncio.CancelledError):
            pass
        return response
