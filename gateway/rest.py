"""The REST JSON surface: the same 21 tools over plain HTTP (``/v1/tools``).

* ``GET /v1/tools`` → ``{"tools": [...]}``, the ``tools/list`` entries (name, title,
  description, inputSchema, outputSchema, annotations).
* ``POST /v1/tools/{name}`` with the tool's arguments as a JSON object (an empty body is ``{}``).
* ``GET /v1/tools/{name}?arg=value&…`` for arguments that fit a query string: each value is
  coerced to its ``inputSchema`` type (integer, number, boolean; a repeated key or a
  comma-separated value makes an array); what cannot be coerced is passed on as text,
  so validation names it.

A call answers 200 with the tool's ``structuredContent``. A failure answers
``{"error": "<prefix>: <what was wrong and what to do>"}`` with the tool error prefixes
of ``/mcp`` and a fitting status (:func:`status_for`): invalid_argument/ambiguous 422,
a body that is not a JSON object 400, not_found (and an unknown tool) 404,
upstream_error 502, upstream_timeout 504, the catalog's or our limits 429/503 with
``Retry-After``, a response over the bound 503.

Admission is the ``/mcp`` admission, by calling :class:`gateway.admission.Admission`:
body bound (413), Host/Origin (421/403), identity, then every limit (a call holds a
concurrency lease; listing is counted). The call is a ``tools/call`` handed to the same
``McpServer.handle`` and so to the same executor (Redis → workers in Redis mode).
One content-free line per request goes to ``pwc_mcp.requests`` (tool, status, latency,
bytes, protocol ``rest``, version).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from aiohttp import web
from multidict import MultiMapping
from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.protocol.versions import SERVER_VERSION

from gateway import metrics
from gateway.admission import Admission
from gateway.cors import preflight_handler
from gateway.dispatch_ticket import DispatchTicket
from gateway.security import SecurityPolicy

__all__ = ["RestApi", "add_rest_routes", "coerce_query", "status_for"]

request_log = logging.getLogger("pwc_mcp.requests")

PROTOCOL: Final = "rest"
# Tool error prefix → HTTP status; anything else a tool reports is a 502 (an upstream failure).
_PREFIX_STATUS: Final = {
    "invalid_argument": 422,
    "ambiguous": 422,
    "not_found": 404,
    "upstream_error": 502,
    "upstream_timeout": 504,
    "rate_limited": 503,
    "internal_error": 500,
}
# Admission refusals in REST words: the refusal's own message (pwc_mcp_core.protocol.refusals)
# behind the REST prefix of its code; Host and Origin refusals carry no JSON body of their own.
_REFUSAL_PREFIX: Final = {
    "request_too_large": "request_too_large",
    "unsupported_content_encoding": "invalid_argument",
    "request_incomplete": "invalid_argument",
    "rate_limit_exceeded": "rate_limited",
    "server_saturated": "unavailable",
    "limits_unavailable": "unavailable",
    "response_too_large": "response_too_large",
}
_INT_MIN: Final = -(2**63)
_UINT_MAX: Final = 2**64 - 1
_TRANSPORT_REFUSALS: Final = {
    421: "invalid_host: the Host header is not allowed",
    403: "invalid_origin: the Origin header is not allowed",
}


def _refusal_text(refusal: web.Response) -> str:
    """``<prefix>: <message>`` of an admission refusal (a JSON-RPC refusal body, or 421/403)."""
    text = _TRANSPORT_REFUSALS.get(refusal.status)
    if text is not None:
        return text
    try:
        error = orjson.loads(refusal.body)["error"]
        return f"{_REFUSAL_PREFIX[error['data']['error']]}: {error['message']}"
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return "unavailable: the request was refused"


def status_for(text: str) -> int:
    """The HTTP status of a tool error text by its prefix (``not_found: …`` → 404)."""
    return _PREFIX_STATUS.get(text.split(":", 1)[0].strip(), 502)


def _json(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(payload), content_type="application/json",
                        headers=headers)


def _error(status: int, text: str, *, retry_after: int | None = None) -> web.Response:
    return _json(status, {"error": text}, {"Retry-After": str(retry_after)} if retry_after is not None else None)


def _scalar_type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _coerce(value: str, schema: Mapping[str, Any]) -> Any:
    declared = schema.get("type")
    if value == "" and isinstance(declared, list) and "null" in declared:
        return None  # an empty value of a nullable parameter means null
    kind = _scalar_type(schema)
    try:
        if kind == "integer":
            number = int(value)
            # Beyond 64 bits JSON tools read it as a float, as orjson does in a POST body.
            return number if _INT_MIN <= number <= _UINT_MAX else float(number)
        if kind == "number":
            real = float(value)
            return real if math.isfinite(real) else value  # not JSON: passed on as text
    except (ValueError, OverflowError):
        return value
    if kind == "boolean":
        lowered = value.strip().lower()
        return {"true": True, "1": True, "false": False, "0": False}.get(lowered, value)
    return value


def coerce_query(query: MultiMapping[str], input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters → tool arguments, typed per ``input_schema``'s properties.

    Unknown names pass through as strings (validation then refuses them by name).
    """
    properties: Mapping[str, Any] = input_schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in dict.fromkeys(query.keys()):
        values = query.getall(name)
        schema = properties.get(name) or {}
        if _scalar_type(schema) == "array":
            items = schema.get("items") or {}
            parts = [part for value in values for part in (value.split(",") if len(values) == 1 else [value])]
            arguments[name] = [_coerce(part, items) for part in parts if part != ""]
        else:
            arguments[name] = _coerce(values[-1], schema)
    return arguments


def _answer(status: int, body: bytes | None) -> web.Response:
    """A ``tools/call`` reply of ``McpServer.handle`` → the REST answer."""
    try:
        message = orjson.loads(body or b"")
    except orjson.JSONDecodeError:
        return _error(502, "upstream_error: the tool service gave no answer")
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict):
        if not result.get("isError"):
            return _json(200, result.get("structuredContent"))
        content = result.get("content") or [{}]
        text = str(content[0].get("text") or "internal_error: the tool failed")
        response = _error(status_for(text), text)
        if text.startswith("rate_limited"):
            response.headers["Retry-After"] = "5"
        return response
    error = message.get("error") if isinstance(message, dict) else None
    if error == "response_too_large":
        return _error(503, "response_too_large: the answer is over the 2 MiB bound; ask for fewer rows")
    text = str(error.get("message", "")) if isinstance(error, dict) else ""
    if "timed out" in text:
        return _error(504, "upstream_timeout: the tool call timed out")
    if status == 503:
        return _error(503, "unavailable: the tool service is temporarily unavailable; retry shortly", retry_after=1)
    if isinstance(error, dict) and error.get("code") == -32602:
        return _error(422, f"invalid_argument: {text}")
    return _error(502, "upstream_error: the tool call failed")


@dataclass
class RestApi:
    """The ``/v1/tools`` handlers over one ``McpServer``.

    Args:
        admission: the gateway's admission (the one ``/mcp`` uses).
        server: the gateway's ``McpServer``.
        tools: the ``tools/list`` entries.
    """

    admission: Admission
    server: McpServer
    tools: Sequence[Mapping[str, Any]]

    def __post_init__(self) -> None:
        self._by_name = {tool["name"]: tool for tool in self.tools}
        self._listing = orjson.dumps({"tools": list(self.tools)})

    async def list_tools(self, request: web.Request) -> web.Response:
        """``GET /v1/tools``."""
        started = time.perf_counter()
        response = self._transport_refusal(request)
        if response is None:
            counted = await self.admission.check_limits(request, semantic=False, lease=False)
            response = self._refused(counted) if isinstance(counted, web.Response) else \
                web.Response(body=self._listing, content_type="application/json")
        return self._record("unknown", response, started)

    async def call_post(self, request: web.Request) -> web.Response:
        """``POST /v1/tools/{name}`` with a JSON object of arguments."""
        started = time.perf_counter()
        body = await self.admission.check_body(request)
        if isinstance(body, web.Response):
            return self._record("unknown", self._refused(body), started)
        if not body.strip():
            arguments: Any = {}
        else:
            try:
                arguments = orjson.loads(body)
            except orjson.JSONDecodeError:
                arguments = None
        name = request.match_info["name"]
        if not isinstance(arguments, dict):
            refused = self._transport_refusal(request)
            if refused is not None:
                return self._record(self._label(name), refused, started)
            return await self._counted(request, self._label(name), started, _error(
                400, "invalid_argument: the body must be a JSON object of the tool's arguments"))
        return await self._call(request, name, arguments, started)

    async def call_get(self, request: web.Request) -> web.Response:
        """``GET /v1/tools/{name}?…`` with arguments in the query string."""
        started = time.perf_counter()
        name = request.match_info["name"]
        tool = self._by_name.get(name)
        arguments = coerce_query(request.query, tool["inputSchema"]) if tool else {}
        return await self._call(request, name, arguments, started)

    async def _call(self, request: web.Request, name: str, arguments: dict[str, Any], started: float) -> web.Response:
        label = self._label(name)
        refused = self._transport_refusal(request)
        if refused is not None:
            return self._record(label, refused, started)
        if name not in self._by_name:
            return await self._counted(request, label, started,
                                       _error(404, "not_found: no such tool; GET /v1/tools lists them"))
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        try:
            body = orjson.dumps(message)
        except orjson.JSONEncodeError:  # a value JSON cannot carry: the client's fault, still counted
            return await self._counted(request, label, started, _error(
                422, "invalid_argument: an argument is not a JSON value; send numbers within 64 bits"))
        info = self.server.classify(body, {})
        lease = await self.admission.check_limits(request, semantic=info.is_semantic_search, lease=True)
        if isinstance(lease, web.Response):
            return self._record(label, self._refused(lease), started)
        ticket = DispatchTicket.admitted_with(lease) if lease is not None else None
        try:  # McpServer.handle never raises; failures come back as replies
            reply = await self.server.handle(body, {}, parsed=info.message, admission=ticket)
        finally:
            if lease is not None and ticket is not None and not ticket.released_by_worker:
                await self.admission.limiter.release(lease)
        return self._record(label, _answer(reply.status, reply.body), started)

    async def _counted(self, request: web.Request, label: str, started: float,
                       response: web.Response) -> web.Response:
        """Answer ``response`` to a request that failed before dispatch, counted like every
        request (so guessing tool names or sending junk is metered): a limit refusal wins."""
        counted = await self.admission.check_limits(request, semantic=False, lease=False)
        if isinstance(counted, web.Response):
            response = self._refused(counted)
        return self._record(label, response, started)

    def _transport_refusal(self, request: web.Request) -> web.Response | None:
        """Host/Origin (421/403) in REST words, or None."""
        refused = self.admission.check_transport_security(request)
        return None if refused is None else self._refused(refused)

    def _label(self, name: str) -> str:
        return name if name in self._by_name else "unknown"

    @staticmethod
    def _refused(refusal: web.Response) -> web.Response:
        """An admission refusal in REST words, keeping its status and ``Retry-After``."""
        response = _error(refusal.status, _refusal_text(refusal))
        if "Retry-After" in refusal.headers:
            response.headers["Retry-After"] = refusal.headers["Retry-After"]
        return response

    @staticmethod
    def _record(tool: str, response: web.Response, started: float) -> web.Response:
        nbytes = response.content_length or 0
        latency = time.perf_counter() - started
        metrics.observe_request(tool, response.status, PROTOCOL, latency, nbytes)
        request_log.info("rest_request tool=%s status=%d latency_ms=%d bytes=%d protocol=%s version=%s",
                         tool, response.status, int(latency * 1000), nbytes, PROTOCOL, SERVER_VERSION)
        return response


def add_rest_routes(app: web.Application, api: RestApi, policy: SecurityPolicy) -> None:
    """Register ``GET /v1/tools``, ``GET|POST /v1/tools/{name}`` and their CORS preflights."""
    app.router.add_get("/v1/tools", api.list_tools, allow_head=False)
    app.router.add_post("/v1/tools/{name}", api.call_post)
    app.router.add_get("/v1/tools/{name}", api.call_get, allow_head=False)
    for path in ("/v1/tools", "/v1/tools/{name}"):
        app.router.add_route("OPTIONS", path, preflight_handler(policy=policy))
