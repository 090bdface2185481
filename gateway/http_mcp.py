"""The ``/mcp`` endpoint: stateless Streamable HTTP in JSON-response mode (docs/protocol.md §1, §10).

``POST /mcp`` runs :mod:`gateway.admission` (415 encoding → 413 → 421 → 403 → identity →
429/503), then Accept (406) and Content-Type (415), then hands the body to
``McpServer.handle``; a response body over the bound becomes the 503
``response_too_large`` refusal. Refusals are JSON-RPC errors carrying the request id
(:mod:`pwc_mcp_core.protocol.refusals`). ``GET``/``DELETE /mcp`` → 405 with ``Allow: POST``.
One content-free line per request goes to logger ``pwc_mcp.requests`` (docs/tool-contract.md §2.6).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Final

from aiohttp import web
from pwc_mcp_core.protocol.eras import PROTOCOL_HEADER, Classification, protocol_label
from pwc_mcp_core.protocol.refusals import request_id_json
from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.protocol.versions import SERVER_VERSION

from gateway import metrics
from gateway.admission import Admission, compact_dumps, refusal_response
from gateway.dispatch_ticket import DispatchTicket

__all__ = ["McpEndpoint", "method_not_allowed"]

request_log = logging.getLogger("pwc_mcp.requests")
logger = logging.getLogger(__name__)

_JSON: Final = "application/json"
# Methods that run on a worker (or the embedded pool) and so hold a concurrency lease;
# every other method is answered by the gateway at once and is only counted.
DISPATCHED_METHODS: Final = frozenset({"tools/call", "resources/read"})


def _jsonrpc_error(status: int, code: int, message: str) -> web.Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return web.json_response(body, status=status, dumps=compact_dumps)


async def method_not_allowed(request: web.Request) -> web.Response:
    """``GET``/``DELETE /mcp``: stateless server, no SSE stream and no sessions (405, ``Allow: POST``)."""
    return web.json_response({"error": "method_not_allowed", "allowed": ["POST"]}, status=405,
                             headers={"Allow": "POST"}, dumps=compact_dumps)


def accepts_json(accept: str | None) -> bool:
    """True when ``Accept`` is absent or admits JSON (``application/json``, ``application/*``, ``*/*``)."""
    if accept is None or not accept.strip():
        return True
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in ("application/json", "application/*", "*/*"):
            return True
    return False


def is_json_content(content_type: str | None) -> bool:
    """True when ``Content-Type`` is ``application/json`` (parameters such as charset allowed)."""
    return bool(content_type) and content_type.split(";", 1)[0].strip().lower() == "application/json"


def _media_types_ok(request: web.Request) -> bool:
    """Whether the request passes the Accept (406) and Content-Type (415) checks."""
    return accepts_json(request.headers.get("Accept")) and is_json_content(request.headers.get("Content-Type"))


def _record(tool: str, protocol: str, response: web.Response, started: float) -> None:
    """The one content-free log line and the metrics of a finished ``/mcp`` request (§2.6)."""
    nbytes = response.content_length or 0
    latency = time.perf_counter() - started
    metrics.observe_request(tool, response.status, protocol, latency, nbytes)
    request_log.info("mcp_request tool=%s status=%d latency_ms=%d bytes=%d protocol=%s version=%s",
                     tool, response.status, int(latency * 1000), nbytes, protocol, SERVER_VERSION)


@dataclass
class McpEndpoint:
    """The ``POST /mcp`` handler: admission, then the MCP server."""

    admission: Admission
    server: McpServer
    max_response_bytes: int
    # True when the limiter and the executor run deferred admission (Redis mode, see
    # gateway.dispatch_ticket); never with an executor that would run a call unadmitted.
    defer_admission: bool = False

    async def post(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        tool, protocol = "unknown", protocol_label(request.headers.get(PROTOCOL_HEADER))
        response: web.Response
        body_or_error = await self.admission.check_body(request)
        if isinstance(body_or_error, web.Response):
            response = body_or_error
        else:
            info = self.server.classify(body_or_error, request.headers)
            tool, protocol = info.tool or "unknown", info.protocol_label
            response = self.admission.check_transport_security(request) or await self._admitted(
                request, body_or_error, info)
        _record(tool, protocol, response, started)
        return response

    async def not_allowed(self, request: web.Request) -> web.Response:
        """``GET``/``DELETE /mcp`` → 405, logged like every ``/mcp`` request."""
        started = time.perf_counter()
        response = await method_not_allowed(request)
        _record("unknown", protocol_label(request.headers.get(PROTOCOL_HEADER)), response, started)
        return response

    async def _admitted(self, request: web.Request, body: bytes, info: Classification) -> web.Response:
        dispatched = info.method in DISPATCHED_METHODS
        if dispatched and self.defer_admission and _media_types_ok(request):
            return await self._deferred(request, body, info)
        lease_or_error = await self.admission.check_limits(request, semantic=info.is_semantic_search,
                                                           lease=dispatched, id_json=request_id_json(info.message))
        if isinstance(lease_or_error, web.Response):
            return lease_or_error
        if lease_or_error is None:
            return await self._handle(request, body, info)
        ticket = DispatchTicket.admitted_with(lease_or_error)
        try:
            return await self._handle(request, body, info, ticket)
        finally:
            if not ticket.released_by_worker:
                await self.admission.limiter.release(lease_or_error)

    async def _deferred(self, request: web.Request, body: bytes, info: Classification) -> web.Response:
        """A dispatched call whose limits the Redis executor checks as it queues it (dispatch_ticket).

        The answer is the one the documented order gives: a refusal by the limits wins over
        anything handling produced, however far handling got.
        """
        client_hash = self.admission.client_hash(request)
        ticket = DispatchTicket.deferred_with(
            self.admission.limiter.admission_script(client_hash, semantic=info.is_semantic_search))
        try:
            response = await self._handle(request, body, info, ticket)
        finally:
            if ticket.lease_taken and not ticket.released_by_worker:
                await self.admission.limiter.release(ticket.lease)
        id_json = request_id_json(info.message)
        if ticket.limits_unavailable:
            return self.admission.limits_unavailable(id_json)
        if ticket.refusal is not None:
            return self.admission.refusal(ticket.refusal, id_json)
        if not ticket.admitted:  # handling ended before the executor admitted it: check now
            refused = await self.admission.check_client_limits(client_hash, semantic=info.is_semantic_search,
                                                               lease=False, id_json=id_json)
            if isinstance(refused, web.Response):
                return refused
        return response

    async def _handle(self, request: web.Request, body: bytes, info: Classification,
                      ticket: DispatchTicket | None = None) -> web.Response:
        """Accept/Content-Type, then the MCP server; ``ticket`` goes to the executor with the call."""
        if not accepts_json(request.headers.get("Accept")):
            return _jsonrpc_error(406, -32600, "Not Acceptable: Client must accept application/json")
        if not is_json_content(request.headers.get("Content-Type")):
            return _jsonrpc_error(415, -32000, "Unsupported Media Type: Content-Type must be application/json")
        try:  # McpServer.handle never raises by contract; executor failures come back as replies
            reply = await self.server.handle(body, request.headers, parsed=info.message, admission=ticket)
        except Exception as exc:  # a bug must not leak a traceback to the client
            logger.error("mcp handler failure type=%s", type(exc).__name__)
            return _jsonrpc_error(500, -32603, "Internal error")
        headers: dict[str, Any] = dict(reply.headers or {})
        if reply.body is None:
            return web.Response(status=reply.status, headers=headers)
        if len(reply.body) > self.max_response_bytes:
            metrics.record_rejection("response_too_large")
            return refusal_response("response_too_large", id_json=request_id_json(info.message),
                                    limit_bytes=self.max_response_bytes)
        headers.setdefault("Content-Type", _JSON)
        return web.Response(status=reply.status, body=reply.body, headers=headers)
