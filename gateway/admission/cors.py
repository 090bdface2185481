"""CORS for allowlisted browser origins only (docs/tool-contract.md §1.6).

Responses to an allowlisted ``Origin`` carry ``Access-Control-Allow-Origin: <origin>``
(never ``*``), ``Vary: Origin`` and the exposed headers; ``OPTIONS /mcp`` preflight from
an allowlisted origin → 200 with methods, headers and ``max-age`` 600, from any other
origin → 400 ``{"error": "invalid_origin: Disallowed CORS origin; …"}``. Limit answers (429/503) get the headers too.
"""

from __future__ import annotations

from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from gateway.admission.security import SecurityPolicy

__all__ = ["cors_middleware", "preflight_handler"]

ALLOW_METHODS: Final = "GET, POST, DELETE, OPTIONS"
ALLOW_HEADERS: Final = ("accept, accept-language, content-language, content-type, authorization, "
                        "mcp-protocol-version, mcp-method, mcp-name, mcp-session-id")
EXPOSE_HEADERS: Final = "mcp-session-id, retry-after"
MAX_AGE_S: Final = "600"



def _allowed_origin(policy: SecurityPolicy, request: web.Request) -> str | None:
    origin = request.headers.get("Origin")
    if origin is None or origin.lower() == "null" or not policy.origin_allowed(origin):
        return None
    return origin


def cors_middleware(*, policy: SecurityPolicy) -> Middleware:
    """Add CORS response headers for allowlisted origins on every path."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            response = exc
        origin = _allowed_origin(policy, request)
        if origin is not None and not response.prepared:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
            response.headers.add("Vary", "Origin")
        if isinstance(response, web.HTTPException):
            raise response
        return response

    return middleware


def preflight_handler(*, policy: SecurityPolicy) -> Handler:
    """``OPTIONS /mcp``: answer the CORS preflight."""

    async def handle(request: web.Request) -> web.Response:
        if _allowed_origin(policy, request) is None:
            return web.json_response({"error": "invalid_origin: Disallowed CORS origin; this web origin is not "
                                               "in PWC_MCP_ALLOWED_ORIGINS"}, status=400)
        return web.Response(status=200, text="OK", headers={
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": MAX_AGE_S,
        })

    return handle
