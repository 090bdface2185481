"""The ``/mcp`` endpoint: stateless Streamable HTTP in JSON-response mode (docs/protocol.md §1, §10).

``POST /mcp`` runs :mod:`gateway.admission.checks` (415 encoding → 413 → 421 → 403 → identity),
then ``McpServer.prepare``. A request the server answers itself is counted under the limits
(429/503; a notification or a client's response gets no answer, is no request and is not
counted, `is_request`), then checked for Accept (406) and Content-Type (415). A ``tools/call`` or
``resources/read`` goes, after the same media checks, to `gateway.dispatch.gate.CallGate`
(admission and dispatch, one typed outcome), and ``McpServer.answer`` maps the outcome to
its JSON-RPC reply (a refusal, 503 ``response_too_large``, …). Refusals are JSON-RPC errors
carrying the request id (:mod:`pwc_mcp_core.protocol.refusals`).
``GET``/``DELETE /mcp`` → 405 with ``Allow: POST``.
One content-free line per request goes to logger ``pwc_mcp.requests`` (docs/tool-contract.md §2.6).
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from gateway.admission.checks import Admission, compact_dumps, refusal_response
from gateway.dispatch.gate import CallGate
from gateway.shared.request_log import record_request
from pwc_mcp_core.mcp_server.server import McpServer, Pending, Reply
from pwc_mcp_core.protocol.eras import PROTOCOL_HEADER, Classification, protocol_label
from pwc_mcp_core.protocol.jsonrpc import INTERNAL_ERROR, error_response
from pwc_mcp_core.protocol.refusals import request_id_json

__all__ = ["McpEndpoint", "is_request", "method_not_allowed", "readable_refusal"]

logger = logging.getLogger(__name__)

_JSON: Final = "application/json"
_JSON_HEADERS: Final = {"Content-Type": _JSON}
# Methods that go to the dispatcher (a worker, or the embedded pool) and so hold a
# concurrency lease; every other method is answered by the gateway at once and is only counted.
DISPATCHED_METHODS: Final = frozenset({"tools/call", "resources/read"})


_BROWSER_PAGE: Final = (
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>MCP endpoint</title></head><body>"
    "<h1>This is an MCP endpoint</h1><p>MCP clients POST JSON-RPC messages here; a browser cannot use it."
    " How to connect a client, and every tool: <a href=\"/docs\">/docs</a>.</p></body></html>")


async def method_not_allowed(request: web.Request) -> web.Response:
    """``GET``/``DELETE /mcp``: stateless server, no SSE stream and no sessions (405, ``Allow: POST``).

    A browser (``Accept`` names ``text/html`` and not ``text/event-stream``) gets the same 405
    as a short page pointing to ``/docs``; every header says so too (``Link: </docs>; rel="help"``).
    """
    headers = {"Allow": "POST", "Link": '</docs>; rel="help"'}
    accept = request.headers.get("Accept", "").lower()
    if "text/html" in accept and "text/event-stream" not in accept:
        return web.Response(status=405, text=_BROWSER_PAGE, content_type="text/html", headers=headers)
    return web.json_response({"error": "method_not_allowed", "allowed": ["POST"]}, status=405,
                             headers=headers, dumps=compact_dumps)


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
    return content_type is not None and content_type.split(";", 1)[0].strip().lower() == "application/json"


_REASON_MAX: Final = 300


def readable_refusal(response: web.Response, *, as_200: bool) -> web.Response:
    """A 429/503 JSON-RPC refusal made readable by clients that show only the HTTP error.

    Its reason phrase becomes the refusal's message (ASCII, one line, at most 300 characters):
    MCP SDKs on ``mcp`` 1.x (langchain-mcp-adapters) raise ``HTTPStatusError`` with the status
    line and drop the body, so the phrase is what the user sees. With ``as_200`` a refusal that
    names a request id is answered with HTTP 200, and the client reads it as the call's error.
    """
    if response.status not in (429, 503) or not isinstance(response.body, bytes):
        return response
    try:
        message = json.loads(response.body)
    except ValueError:
        return response
    error = message.get("error") if isinstance(message, dict) else None
    text = error.get("message") if isinstance(error, dict) else None
    if not isinstance(text, str):
        return response
    reason = unicodedata.normalize("NFKD", " ".join(text.split())).encode("ascii", "ignore").decode()
    if len(reason) > _REASON_MAX:
        reason = reason[:_REASON_MAX - 3].rsplit(" ", 1)[0] + "..."
    status = 200 if as_200 and message.get("id") is not None else response.status
    response.set_status(status, reason if status != 200 else None)
    return response


@dataclass
class McpEndpoint:
    """The ``POST /mcp`` handler: admission, the MCP server, and dispatched calls through `CallGate`.

    ``refusals_as_200``: answer a refusal that names a request id with HTTP 200 (`readable_refusal`;
    ``PWC_MCP_REFUSAL_STATUS=200``).
    """

    admission: Admission
    server: McpServer
    gate: CallGate
    refusals_as_200: bool = False

    async def post(self, request: web.Request, *, client_hash: str | None = None) -> web.StreamResponse:
        """``POST /mcp``: one JSON-RPC message in, its answer (or a refusal) out.

        ``client_hash``: given by a caller that has already passed ``request`` through Host/Origin
        (checks 2 and 3) and resolved its identity (check 4), as ``POST /messages`` has.
        """
        started = time.perf_counter()
        tool, protocol = "unknown", protocol_label(request.headers.get(PROTOCOL_HEADER))
        response: web.Response
        body_or_error = await self.admission.check_body(request)
        if isinstance(body_or_error, web.Response):
            response = body_or_error
        else:
            info = self.server.classify(body_or_error, request.headers)
            tool, protocol = info.tool or "unknown", info.protocol_label
            refused = None if client_hash is not None else self.admission.check_transport_security(request)
            response = refused or await self._admitted(request, body_or_error, info, client_hash)
        record_request("mcp_request", response, started, protocol=protocol, tool=tool)  # the refusal's own status
        # POST /messages (client_hash given) puts a refusal on the stream and answers 202 itself.
        return response if client_hash is not None else readable_refusal(
            response, as_200=self.refusals_as_200)

    async def not_allowed(self, request: web.Request) -> web.Response:
        """``GET``/``DELETE /mcp`` → 405, logged like every ``/mcp`` request."""
        started = time.perf_counter()
        response = await method_not_allowed(request)
        record_request("mcp_request", response, started, protocol=protocol_label(request.headers.get(PROTOCOL_HEADER)),
                       tool="unknown")
        return response

    async def _admitted(self, request: web.Request, body: bytes, info: Classification,
                        client_hash: str | None = None) -> web.Response:
        """Limits, media types and the answer, in the documented order (module docstring)."""
        if client_hash is None:
            client_hash = self.admission.client_hash(request)
        media_error = _media_error(request, info.message)
        if media_error is None and info.method in DISPATCHED_METHODS:
            prepared = await self._prepare(body, request, info)
            if isinstance(prepared, Pending):
                outcome = await self.gate.run(prepared.call, client_hash, semantic=info.is_semantic_search)
                return _response(self.server.answer(prepared, outcome))
        else:
            prepared = None  # nothing runs before the limits have counted the request
        if is_request(info.message):  # a notification or a client's response is not counted
            refused = await self.admission.check_client_limits(client_hash, semantic=info.is_semantic_search,
                                                               lease=False, id_json=request_id_json(info.message))
            if isinstance(refused, web.Response):
                return refused
        if media_error is not None:
            return media_error
        if prepared is None:
            prepared = await self._prepare(body, request, info)
        if isinstance(prepared, Pending):  # a method classify did not see as dispatched (never by contract)
            return _response(self.server.answer(prepared, await self.gate.run(
                prepared.call, client_hash, semantic=info.is_semantic_search)))
        return _response(prepared)

    async def _prepare(self, body: bytes, request: web.Request, info: Classification) -> Reply | Pending:
        try:  # prepare never raises by contract; this keeps a bug from leaking a traceback
            return await self.server.prepare(body, request.headers, parsed=info.message)
        except Exception as exc:  # noqa: BLE001
            logger.error("mcp handler failure type=%s", type(exc).__name__)
            return Reply(500, error_response(b"null", INTERNAL_ERROR, "Internal error"), _JSON_HEADERS)


def is_request(message: object) -> bool:
    """False only for a message that gets no answer: a JSON-RPC 2.0 notification (a string
    ``method``, no ``id``) or a client's response (``id`` with ``result`` or ``error``), the two
    cases `McpServer.prepare` answers with an empty 202. Anything else, invalid or unparsed
    bodies included, is a request: it is answered, so it counts against the limits."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return True
    method = message.get("method")
    if method is None and "id" in message and ("result" in message or "error" in message):
        return False
    return not (isinstance(method, str) and "id" not in message)


def _media_error(request: web.Request, message: object) -> web.Response | None:
    """The Accept (406 ``not_acceptable``) or Content-Type (415 ``unsupported_media_type``) refusal
    of the JSON-RPC ``message`` (its id in the answer), or ``None`` when both are acceptable."""
    if not accepts_json(request.headers.get("Accept")):
        return refusal_response("not_acceptable", id_json=request_id_json(message))
    if not is_json_content(request.headers.get("Content-Type")):
        return refusal_response("unsupported_media_type", id_json=request_id_json(message))
    return None


def _response(reply: Reply) -> web.Response:
    """The aiohttp response of a `Reply` (``None`` body: 202 without a body)."""
    if reply.body is None:
        return web.Response(status=reply.status, headers=reply.headers)
    headers = reply.headers if "Content-Type" in reply.headers else {**reply.headers, **_JSON_HEADERS}
    return web.Response(status=reply.status, body=reply.body, headers=headers)
