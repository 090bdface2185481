"""The REST JSON surface: the same tools as MCP, over plain HTTP (``/v1/tools``).

* ``GET /v1/tools`` → ``{"tools": [...]}``, the ``tools/list`` entries (name, title,
  description, inputSchema, outputSchema, annotations).
* ``POST /v1/tools/{name}`` with the tool's arguments as a JSON object (an empty body is ``{}``).
* ``GET /v1/tools/{name}?arg=value&…`` for arguments that fit a query string: each value is
  coerced to its ``inputSchema`` type (integer, number, boolean; a repeated key or a
  comma-separated value makes an array); what cannot be coerced is passed on as text,
  so validation names it.

A call answers 200 with the tool's ``structuredContent`` (plus ``images``, each
``{"mimeType", "data"}`` with base64 data, when the result has image content: the
``get_sota_history`` and ``get_trends`` charts). A failure answers
``{"error": "<prefix>: <what was wrong and what to do>"}`` with the tool error prefixes
of ``/mcp`` and a fitting status (:func:`status_for`): invalid_argument/ambiguous 422,
a body that is not a JSON object 400, not_found (and an unknown tool) 404,
upstream_error 502, upstream_timeout 504, the catalog's or our limits 429/503 with
``Retry-After``, an answer over the response bound 502 ``response_too_large``.

Admission is the ``/mcp`` admission, by calling :class:`gateway.admission.checks.Admission`:
body bound (413), Host/Origin (421/403), identity, then every limit (a call holds a
concurrency lease; listing is counted). The call is a ``tools/call`` `Call` run by the same
`gateway.dispatch.gate.CallGate` as ``/mcp`` (Redis → workers, the limits checked in the
enqueue script); its one `Outcome` becomes the REST answer through `_outcome` below, never
by reading a JSON-RPC envelope.
One content-free line per request goes to ``pwc_mcp.requests`` (tool, status, latency,
bytes, protocol ``rest``, version).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import orjson
from aiohttp import web
from multidict import MultiMapping

from gateway.admission.checks import Admission
from gateway.admission.cors import preflight_handler
from gateway.admission.security import SecurityPolicy
from gateway.dispatch.gate import CallGate
from gateway.shared import metrics
from gateway.shared.request_log import record_request
from pwc_mcp_core.cluster.admission import Decision
from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.protocol.jsonrpc import INVALID_PARAMS
from pwc_mcp_core.protocol.refusals import REFUSALS, refusal_message
from pwc_mcp_core.runtime.dispatch import (
    Answer,
    Outcome,
    Refused,
    TimedOut,
    Unavailable,
    refusal_of,
)

__all__ = ["RestApi", "add_rest_routes", "coerce_query", "status_for"]


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
    "not_acceptable": "invalid_argument",  # REST checks no media types; mapped so none can be a KeyError
    "unsupported_media_type": "invalid_argument",
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


def status_for(text: str) -> int:
    """The HTTP status of a tool error text by its prefix (``not_found: …`` → 404)."""
    return _PREFIX_STATUS.get(text.split(":", 1)[0].strip(), 502)


def _json(status: int, payload: object, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(payload), content_type="application/json",
                        headers=headers)


def _error(status: int, text: str, *, retry_after: int | None = None) -> web.Response:
    return _json(status, {"error": text}, {"Retry-After": str(retry_after)} if retry_after is not None else None)


def _scalar_type(schema: Mapping[str, JsonValue]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else None


def _coerce(value: str, schema: Mapping[str, JsonValue]) -> JsonValue:
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


def coerce_query(query: MultiMapping[str], input_schema: Mapping[str, JsonValue]) -> JsonObject:
    """Query parameters → tool arguments, typed per ``input_schema``'s properties.

    Unknown names pass through as strings (validation then refuses them by name).
    """
    properties = _object(input_schema.get("properties"))
    arguments: JsonObject = {}
    for name in dict.fromkeys(query.keys()):
        values = query.getall(name)
        schema = _object(properties.get(name))
        if _scalar_type(schema) == "array":
            items = _object(schema.get("items"))
            parts = [part for value in values for part in (value.split(",") if len(values) == 1 else [value])]
            arguments[name] = [_coerce(part, items) for part in parts if part != ""]
        else:
            arguments[name] = _coerce(values[-1], schema)
    return arguments


def _object(value: JsonValue | None) -> JsonObject:
    """``value`` when it is a JSON object (a schema), else an empty one."""
    return value if isinstance(value, dict) else {}


def _refusal(code: str, *, retry_after: int | None = None, limit_bytes: int = 0,
             limit: str | None = None) -> web.Response:
    """An admission refusal (a `REFUSALS` code) in REST words: its status, its own message (the
    refusing ``limit``'s for a 429) behind the REST prefix, and ``Retry-After`` when retrying can succeed."""
    message = refusal_message(code, retry_after_s=retry_after, limit_bytes=limit_bytes, limit=limit)
    text = f"{_REFUSAL_PREFIX[code]}: {message}"
    return _error(REFUSALS[code].status, text, retry_after=retry_after)


def _refused(decision: Decision) -> web.Response:
    code, retry_after = refusal_of(decision)
    return _refusal(code, retry_after=retry_after, limit=decision.kind)


def _with_images(result: JsonObject) -> JsonValue:
    """``structuredContent``, plus ``images`` (``[{"mimeType", "data"}]``, data base64) when the result
    carries image content (the ``get_sota_history`` and ``get_trends`` charts): REST has no content
    list to put it in."""
    structured = result.get("structuredContent")
    content = result.get("content")
    images: list[JsonValue] = [{"mimeType": item.get("mimeType"), "data": item.get("data")}
                               for item in (content if isinstance(content, list) else [])
                               if isinstance(item, dict) and item.get("type") == "image"]
    if images and isinstance(structured, dict):
        return {**structured, "images": images}
    return structured


def _answered(body: bytes) -> web.Response:
    """The REST answer of a tool's body: its ``structuredContent``, or its error by prefix."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return _error(502, "upstream_error: the tool service gave no answer; retry after 5 s", retry_after=5)
    result = message.get("result") if isinstance(message, dict) else None
    if isinstance(result, dict):
        if not result.get("isError"):
            return _json(200, _with_images(result))
        content = result.get("content") or [{}]
        text = str(content[0].get("text") or "internal_error: the tool failed")
        retry = text.startswith(("rate_limited", "upstream_error: the Papers With Code", "upstream_timeout"))
        return _error(status_for(text), text, retry_after=5 if retry else None)
    error = message.get("error") if isinstance(message, dict) else None
    if isinstance(error, dict) and error.get("code") == INVALID_PARAMS:
        return _error(422, f"invalid_argument: {error.get('message', '')}")
    return _error(502, "upstream_error: the tool call failed; retry after 5 s", retry_after=5)


def _outcome(outcome: Outcome, limit_bytes: int) -> web.Response:
    """The one table from a dispatch outcome to the REST answer."""
    if isinstance(outcome, Answer):
        return _answered(outcome.body)
    if isinstance(outcome, Refused):
        return _refused(outcome.decision)
    if isinstance(outcome, Unavailable):
        return _error(503, "unavailable: the tool service is temporarily unavailable; retry shortly", retry_after=1)
    if isinstance(outcome, TimedOut):
        return _error(504, "upstream_timeout: the tool call timed out")
    return _error(502, f"response_too_large: the answer exceeds the {limit_bytes}-byte response bound; "
                       "do not retry it as is, ask for less (a smaller limit or page)")  # TooLarge


@dataclass
class RestApi:
    """The ``/v1/tools`` handlers over one ``McpServer``.

    Args:
        admission: the gateway's admission (the one ``/mcp`` uses).
        server: the gateway's ``McpServer`` (builds the calls).
        gate: admission and dispatch, shared with ``/mcp``.
        tools: the ``tools/list`` entries.
    """

    admission: Admission
    server: McpServer
    gate: CallGate
    tools: Sequence[Mapping[str, JsonValue]]

    def __post_init__(self) -> None:
        self._by_name = {str(tool["name"]): tool for tool in self.tools}
        self._listing = orjson.dumps({"tools": list(self.tools)})

    async def list_tools(self, request: web.Request) -> web.Response:
        """``GET /v1/tools``."""
        started = time.perf_counter()
        response = self._transport_refusal(request)
        if response is None:
            decision = await self.admission.decide(self.admission.client_hash(request), semantic=False)
            if decision.allowed:
                response = web.Response(body=self._listing, content_type="application/json")
            else:
                metrics.record_rejection(decision.kind)
                response = _refused(decision)
        return _record("unknown", response, started)

    async def call_post(self, request: web.Request) -> web.Response:
        """``POST /v1/tools/{name}`` with a JSON object of arguments."""
        started = time.perf_counter()
        body = await self.admission.read_body(request)
        if isinstance(body, str):
            return _record("unknown", _refusal(body, limit_bytes=self.admission.max_body_bytes), started)
        if not body.strip():
            arguments: JsonValue = {}
        else:
            try:
                arguments = orjson.loads(body)
            except orjson.JSONDecodeError:
                arguments = None
        name = request.match_info["name"]
        if not isinstance(arguments, dict):
            refused = self._transport_refusal(request)
            if refused is not None:
                return _record(self._label(name), refused, started)
            return await self._counted(request, self._label(name), started, _error(
                400, "invalid_argument: the body must be a JSON object of the tool's arguments"))
        return await self._call(request, name, arguments, started)

    async def call_get(self, request: web.Request) -> web.Response:
        """``GET /v1/tools/{name}?…`` with arguments in the query string."""
        started = time.perf_counter()
        name = request.match_info["name"]
        tool = self._by_name.get(name)
        arguments = coerce_query(request.query, _object(tool.get("inputSchema"))) if tool else {}
        return await self._call(request, name, arguments, started)

    async def _call(self, request: web.Request, name: str, arguments: JsonObject, started: float) -> web.Response:
        label = self._label(name)
        refused = self._transport_refusal(request)
        if refused is not None:
            return _record(label, refused, started)
        if name not in self._by_name:
            return await self._counted(request, label, started,
                                       _error(404, "not_found: no such tool; GET /v1/tools lists them"))
        call = self.server.tool_call(name, arguments)
        outcome = await self.gate.run(call, self.admission.client_hash(request),
                                       semantic=self.server.is_semantic_search(name, arguments))
        return _record(label, _outcome(outcome, self.admission.max_body_bytes), started)

    async def _counted(self, request: web.Request, label: str, started: float,
                       response: web.Response) -> web.Response:
        """Answer ``response`` to a request that failed before dispatch, counted like every
        request (so guessing tool names or sending junk is metered): a limit refusal wins."""
        decision = await self.admission.decide(self.admission.client_hash(request), semantic=False)
        if not decision.allowed:
            metrics.record_rejection(decision.kind)
            response = _refused(decision)
        return _record(label, response, started)

    def _transport_refusal(self, request: web.Request) -> web.Response | None:
        """Host/Origin (421/403) in REST words, or None."""
        refused = self.admission.check_transport_security(request)
        return None if refused is None else self._transport_refused(refused)

    def _label(self, name: str) -> str:
        return name if name in self._by_name else "unknown"

    @staticmethod
    def _transport_refused(refusal: web.Response) -> web.Response:
        """A Host (421) or Origin (403) refusal in REST words."""
        return _error(refusal.status, _TRANSPORT_REFUSALS.get(refusal.status, "invalid_argument: refused"))


def add_rest_routes(app: web.Application, api: RestApi, policy: SecurityPolicy) -> None:
    """Register ``GET /v1/tools``, ``GET|POST /v1/tools/{name}`` and their CORS preflights."""
    app.router.add_get("/v1/tools", api.list_tools, allow_head=False)
    app.router.add_post("/v1/tools/{name}", api.call_post)
    app.router.add_get("/v1/tools/{name}", api.call_get, allow_head=False)
    for path in ("/v1/tools", "/v1/tools/{name}"):
        app.router.add_route("OPTIONS", path, preflight_handler(policy=policy))


def _record(tool: str, response: web.Response, started: float) -> web.Response:
    return record_request("rest_request", response, started, protocol=PROTOCOL, tool=tool)
