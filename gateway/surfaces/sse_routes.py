"""``GET /sse`` and ``POST /messages``: the HTTP+SSE transport of MCP 2024-11-05.

https://modelcontextprotocol.io/specification/2024-11-05/basic/transports

Deprecated: the MCP specification 2026-07-28 lists HTTP+SSE as Deprecated (SEP-2596; use Streamable
HTTP). It keeps working; each stream's answer says so in ``Deprecation`` and ``Link: rel="deprecation"``
headers (RFC 9745), and the server card and ``/docs`` label it (`server_card.TRANSPORTS`).

* ``GET /sse``: Host/Origin allowlists (421/403), the client's identity, one counted
  request under the per-client limits (429/503), then a place under the stream caps
  (429 ``too_many_streams`` for the client's cap, 503 for the global one, ``Retry-After``).
  The stream's first event is ``endpoint`` with ``/messages?session_id=<id>``; answers
  follow as ``message`` events; a ``: ping`` comment goes out after ``heartbeat_s``
  without an event. The stream ends after ``idle_timeout_s`` without a message, when
  the client disconnects (noticed when the connection is lost, not at the next tick:
  everything the session held, its place under the caps too, is freed at once) or when
  the process stops.
* ``POST /messages?session_id=<id>``: Host/Origin, then the session must be open and
  opened by the same client, else 404 with a JSON-RPC error body. The message then goes
  through the ``/mcp`` endpoint itself (:class:`gateway.surfaces.streamable_http.McpEndpoint`): the same
  body bound (413), admission and limits (every message counts), the same
  ``McpServer.handle`` and executors, the same content-free log line. Its JSON-RPC
  answer is routed to the stream's holder (:class:`gateway.surfaces.sse_sessions.SessionHub`,
  through Redis when that is another process; written at once by the POST's own task when
  the stream is this process's and idle) and the POST answers 202 with an empty
  body. A refusal that names the request id (429, 503, ...) is that call's answer: it goes on
  the stream and the POST answers 202 too, so an SDK's SSE client fails that call alone (a
  non-2xx POST ends its whole session). A refusal without an id (413) or a transport-level
  error (421, 403, 404) answers the POST itself.

The answer is computed where the POST lands, so admission sees the real request and the
call runs on the same executor path as ``/mcp``; only the finished answer travels.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from gateway.admission.checks import Admission, refusal_response
from gateway.admission.cors import preflight_handler
from gateway.admission.limits import LimitsUnavailable
from gateway.admission.security import SecurityPolicy
from gateway.shared import metrics
from gateway.shared.request_log import record_request, request_log
from gateway.surfaces.disconnect import watch_disconnect
from gateway.surfaces.server_card import SSE_DEPRECATION
from gateway.surfaces.sse_sessions import GLOBAL_CAP, Session, SessionHub
from gateway.surfaces.streamable_http import McpEndpoint
from pwc_mcp_core.protocol.jsonrpc import INVALID_REQUEST, error_response
from pwc_mcp_core.protocol.versions import SERVER_VERSION

__all__ = ["SseRoutes", "add_sse_routes"]


MESSAGES_PATH: Final = "/messages"
_TICK_S: Final = 1.0  # how often an idle stream checks for a gone client and the idle timeout
_PING: Final = b": ping\n\n"
_STREAMS_RETRY_S: Final = 5
# An answer up to this size is written from the POST's task when the stream is idle; larger ones
# (up to the 2 MiB bound) go through the pump, whose writes may wait on a slow reader.
_WRITE_NOW_MAX_BYTES: Final = 32 * 1024
_STREAM_HEADERS: Final = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",  # nginx: never buffer this response
    # Deprecated by the MCP specification (RFC 9745: the date it was deprecated, 2025-03-26).
    "Deprecation": "@1742947200",
    "Link": f'<{SSE_DEPRECATION["reference"]}>; rel="deprecation"',
}
_SESSION_NOT_FOUND: Final = error_response(b"null", INVALID_REQUEST,
                                           "Unknown or expired session: open a new stream with GET /sse")


def _event(name: str, data: bytes) -> bytes:
    if b"\n" not in data:  # every serialized JSON-RPC answer: one data line
        return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"
    lines = b"".join(b"data: " + line + b"\n" for line in data.split(b"\n"))
    return b"event: " + name.encode() + b"\n" + lines + b"\n"


def _names_a_request(body: bytes) -> bool:
    """True when ``body`` is a JSON-RPC error answering a request id (not ``null``)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and "error" in message and message.get("id") is not None


def _session_not_found() -> web.Response:
    return web.Response(status=404, body=_SESSION_NOT_FOUND, content_type="application/json")


@dataclass
class SseRoutes:
    """The two handlers; ``endpoint`` is the ``/mcp`` endpoint every message goes through."""

    admission: Admission
    endpoint: McpEndpoint
    hub: SessionHub

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """``GET /sse``: admit, open a session and pump its answers until it ends."""
        started = time.perf_counter()
        refused = self.admission.check_transport_security(request)
        if refused is not None:
            return self._logged(refused, started)
        client_hash = self.admission.client_hash(request)
        counted = await self.admission.check_client_limits(client_hash, semantic=False, lease=False)
        if isinstance(counted, web.Response):
            return self._logged(counted, started)
        try:
            opened = await self.hub.open(client_hash)
        except LimitsUnavailable:
            return self._logged(self.admission.limits_unavailable(), started)
        if not isinstance(opened, Session):
            metrics.record_rejection("sse_streams")
            refusal = refusal_response("too_many_streams", retry_after=_STREAMS_RETRY_S)
            if opened == GLOBAL_CAP:
                refusal.set_status(503)
            return self._logged(refusal, started)
        response = web.StreamResponse(headers=_STREAM_HEADERS)
        origin = request.headers.get("Origin")
        if origin is not None:  # allowlisted (checked above); the CORS middleware cannot add it once prepared
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
        try:
            await response.prepare(request)
            await response.write(_event("endpoint", f"{MESSAGES_PATH}?session_id={opened.session_id}".encode()))
            opened.write_now = lambda body: self._write_now(request, response, opened, body)
            with watch_disconnect(request, opened.end):
                await self._pump(request, response, opened)
        except ConnectionError:
            pass  # the client went away: the session is freed below
        finally:
            await self.hub.close(opened)
            request_log.info("sse_stream status=200 duration_ms=%d messages=%d routed=%d protocol=sse version=%s",
                             int((time.perf_counter() - started) * 1000), opened.messages, opened.routed,
                             SERVER_VERSION)
        return response

    async def _pump(self, request: web.Request, response: web.StreamResponse, session: Session) -> None:
        settings = self.hub.settings
        tick = min(_TICK_S, settings.heartbeat_s)
        last_event = time.monotonic()
        while not session.closed.is_set():
            transport = request.transport
            if transport is None or transport.is_closing():
                return
            now = time.monotonic()
            if now - session.last_active > settings.idle_timeout_s:
                return
            try:
                async with asyncio.timeout(tick):  # not wait_for: no task per message
                    body = await session.outbox.get()
            except TimeoutError:
                # An answer written at once (`_write_now`) counts as an event too.
                if time.monotonic() - max(last_event, session.last_active) >= settings.heartbeat_s:
                    await self._write_in_turn(request, response, session, _PING)
                    last_event = time.monotonic()
                continue
            if not body:  # `Session.end`'s wake-up: the loop's test ends the stream
                continue
            await self._write_in_turn(request, response, session, _event("message", body))
            session.messages += 1
            last_event = time.monotonic()

    async def _write_in_turn(self, request: web.Request, response: web.StreamResponse, session: Session,
                             data: bytes) -> None:
        """`_write` with ``session.writing`` set meanwhile, so no answer is written at once in between."""
        session.writing = True
        try:
            await self._write(request, response, data)
        finally:
            session.writing = False

    async def _write_now(self, request: web.Request, response: web.StreamResponse, session: Session,
                         body: bytes) -> bool:
        """Write one answer on the stream from the POST's own task, when the write cannot wait on the
        client: aiohttp waits only while the transport is paused (above its 64 KiB high-water mark),
        which an answer of at most 32 KiB into an empty transport buffer cannot reach. False when
        it could wait: it is queued instead."""
        transport = request.transport
        if (len(body) > _WRITE_NOW_MAX_BYTES or transport is None or transport.is_closing()
                or transport.get_write_buffer_size()):
            return False
        session.writing = True
        try:
            await response.write(_event("message", body))  # no deadline: it cannot wait (above)
        except ConnectionError:
            session.closed.set()  # the client went away: its pump frees the session
        finally:
            session.writing = False
        session.messages += 1
        return True

    async def _write(self, request: web.Request, response: web.StreamResponse, data: bytes) -> None:
        """Write within ``write_timeout_s``; a reader that stopped reading loses its connection.

        Raises:
            ConnectionError: the deadline passed (the connection is aborted, so nothing
                waits on its full buffer any more) or the client went away.
        """
        try:
            async with asyncio.timeout(self.hub.settings.write_timeout_s):
                await response.write(data)
        except TimeoutError:
            metrics.record_rejection("sse_write_timeout")
            if request.transport is not None:
                request.transport.abort()
            raise ConnectionResetError("the SSE reader stopped reading") from None

    async def message(self, request: web.Request) -> web.StreamResponse:
        """``POST /messages?session_id=…``: check the session, run the message, route the answer."""
        started = time.perf_counter()
        refused = self.admission.check_transport_security(request)
        if refused is not None:
            return _message_logged(refused, started)
        session_id = request.query.get("session_id", "")
        client_hash = self.admission.client_hash(request)
        try:
            holder = await self.hub.holder_of(session_id, client_hash) if session_id else None
        except LimitsUnavailable:
            return _message_logged(self.admission.limits_unavailable(), started)
        if holder is None:
            # Counted like every request, so guessing session ids is metered; a limit refusal wins.
            counted = await self.admission.check_client_limits(client_hash, semantic=False, lease=False)
            response = counted if isinstance(counted, web.Response) else _session_not_found()
            return _message_logged(response, started)
        answer = await self.endpoint.post(request, client_hash=client_hash)  # Host/Origin checked above
        raw = answer.body if isinstance(answer, web.Response) else None
        if not isinstance(raw, bytes | bytearray) or not raw:
            return answer  # 202 for a notification
        body = bytes(raw)
        if answer.status != 200:
            # A refusal (429, 503, ...) that names the request id is that call's answer: it goes
            # on the stream, where SSE clients wait for it, and the POST is accepted (202). SDK
            # SSE clients end the whole session on a non-2xx POST (the Python SDK raises in its
            # writer); this way only the refused call fails. The refusal is still counted and
            # logged (by the /mcp endpoint, with its own status). One without an id (413, a body
            # that is not JSON-RPC) cannot be matched to a call: it answers the POST.
            if _names_a_request(body):
                try:
                    if await self.hub.deliver(holder, session_id, body):
                        return web.Response(status=202)
                except LimitsUnavailable:
                    pass
            return answer
        try:
            delivered = await self.hub.deliver(holder, session_id, body)
        except LimitsUnavailable:
            return self.admission.limits_unavailable()
        return web.Response(status=202) if delivered else _session_not_found()

    @staticmethod
    def _logged(response: web.Response, started: float) -> web.Response:
        request_log.info("sse_stream status=%d duration_ms=%d messages=0 routed=0 protocol=sse version=%s",
                         response.status, int((time.perf_counter() - started) * 1000), SERVER_VERSION)
        return response


def add_sse_routes(app: web.Application, *, admission: Admission, endpoint: McpEndpoint, hub: SessionHub,
                   policy: SecurityPolicy) -> None:
    """Register ``GET /sse``, ``POST /messages`` (and their CORS preflights) and the hub's lifecycle."""
    routes = SseRoutes(admission, endpoint, hub)
    app.router.add_get("/sse", routes.stream, allow_head=False)
    app.router.add_post(MESSAGES_PATH, routes.message)
    for path in ("/sse", MESSAGES_PATH):
        app.router.add_route("OPTIONS", path, preflight_handler(policy=policy))

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        await hub.start()
        try:
            yield
        finally:
            await hub.aclose()

    async def end_streams(app: web.Application) -> None:  # open streams must not hold up a shutdown
        for session in hub.local_sessions():
            session.end()

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(end_streams)


def _message_logged(response: web.Response, started: float) -> web.Response:
    """The content-free line (and metrics) of a message refused before it reached ``/mcp``."""
    return record_request("sse_message", response, started, protocol="sse")
