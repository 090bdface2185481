"""The router's own refusals in each surface's JSON shape, counted like every request.

aiohttp answers a path no route matches (404) and a method a route does not take (405)
itself, as ``text/plain``. A catch-all route, matched only after every other route missed
(:func:`add_route_errors`), answers them instead, so a matched request pays nothing for it
(a middleware cost every request a frame):

* under ``/v1/`` in the REST shape (:mod:`gateway.surfaces.rest`): ``{"error": "not_found: …"}``,
  ``{"error": "method_not_allowed: …"}`` with ``Allow``;
* elsewhere in the shape of ``GET /mcp`` and nginx's 404: ``{"error": "not_found"}``,
  ``{"error": "method_not_allowed", "allowed": [...]}`` with ``Allow``.

Each is counted against the client's limits first (a limit refusal wins), so probing
paths is metered like any other request, and logged as one content-free line.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractResource, PlainResource

from gateway.admission.checks import Admission, compact_dumps
from gateway.shared.request_log import record_request

__all__ = ["add_route_errors", "metered"]


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_REST_PREFIX: Final = "/v1/"


def _rest(path: str) -> bool:
    return path == "/v1" or path.startswith(_REST_PREFIX)


class _Unmatched(PlainResource):
    """Every path (``*`` and ``//x`` too), indexed at ``/``: the router tries it after every longer prefix."""

    def __init__(self) -> None:
        super().__init__("/")

    def _match(self, path: str) -> dict[str, str] | None:
        return {}

    def raw_match(self, path: str) -> bool:
        """Never: a route added later for ``/`` gets its own resource, not this one."""
        return False


def _answer(request: web.Request, methods: set[str]) -> web.Response:
    """404, or 405 when another route takes the path with ``methods``."""
    rest = _rest(request.path)
    if methods:
        allowed = sorted(methods - {"OPTIONS", "HEAD"})
        headers = {"Allow": ", ".join(allowed)}
        if rest:
            body: object = {"error": f"method_not_allowed: use {' or '.join(allowed)} on this path"}
        else:
            body = {"error": "method_not_allowed", "allowed": allowed}
        return web.json_response(body, status=405, headers=headers, dumps=compact_dumps)
    if rest:
        body = {"error": "not_found: no such path; GET /v1/tools lists the tools, /openapi.json describes them"}
    else:
        body = {"error": "not_found"}
    return web.json_response(body, status=404, dumps=compact_dumps)


def _refusal_in_shape(request: web.Request, refusal: web.Response, *, plain: bool = False) -> web.Response:
    """A limit refusal: JSON-RPC outside ``/v1/``, the REST ``{"error": …}`` inside it (and
    for a document, ``plain``)."""
    if not plain and not _rest(request.path):
        return refusal
    status = refusal.status
    text = ("rate_limited: this client's limits are used up; retry after Retry-After seconds" if status == 429
            else "unavailable: the server is busy or its limit store is unreachable; retry after Retry-After seconds")
    response = web.json_response({"error": text}, status=status, dumps=compact_dumps)
    if "Retry-After" in refusal.headers:
        response.headers["Retry-After"] = refusal.headers["Retry-After"]
    return response


def metered(admission: Admission, handler: Handler) -> Handler:
    """``handler`` counted against the client's request limit first, as every request is.

    For documents (``/docs``, ``/openapi.json``): without nginx in front (compose, a Space)
    the gateway is the edge, and a 100 KB document must not be free to fetch in a loop. A
    refusal is ``{"error": "rate_limited: …"}`` with ``Retry-After`` (429, or 503 when the limit
    store is unreachable), logged as one content-free line.
    """

    async def counted(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        decision = await admission.check_client_limits(admission.client_hash(request), semantic=False, lease=False)
        if isinstance(decision, web.Response):
            return record_request("page_request", _refusal_in_shape(request, decision, plain=True), started,
                                  protocol="http")
        return await handler(request)

    return counted


async def _allowed_methods(request: web.Request, catch_all: AbstractResource) -> set[str]:
    """The methods the other routes take on this path (empty: no route has it), as the router found them."""
    methods: set[str] = set()
    for resource in request.app.router.resources():
        if resource is not catch_all:
            _, allowed = await resource.resolve(request)
            methods |= allowed
    return methods


def add_route_errors(app: web.Application, admission: Admission) -> None:
    """Answer the router's 404 and 405 as the module docstring says, counting through ``admission``.

    A catch-all resource at ``/``: the router tries it only after every route on a longer path
    prefix missed, so it is called last whenever it is added."""
    resource = _Unmatched()
    app.router.register_resource(resource)

    async def unmatched(request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        counted = await admission.check_client_limits(admission.client_hash(request), semantic=False, lease=False)
        if isinstance(counted, web.Response):
            response = _refusal_in_shape(request, counted)
        else:
            response = _answer(request, await _allowed_methods(request, resource))
        return record_request("route_request", response, started, protocol="http")

    resource.add_route("*", unmatched)
