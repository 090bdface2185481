"""The aiohttp application: routes, middleware, and the lifecycle of limiter, dispatcher and probes.

Modes (ARCHITECTURE.md §3): ``PWC_MCP_REDIS_URL`` unset → embedded (``MemoryLimiter``,
core's ``LocalDispatcher`` with its ``MemoryCache``); set → ``RedisLimiter`` and the
``RedisDispatcher`` (workers). Both dispatchers implement
`pwc_mcp_core.runtime.dispatch.Dispatcher`; every surface runs calls through one
`gateway.dispatch.gate.CallGate`. Routes: ``POST|GET|DELETE|OPTIONS /mcp``, ``GET|HEAD /health``,
``GET|HEAD /.well-known/mcp``, ``GET|HEAD|OPTIONS /.well-known/mcp/server-card.json``
(:mod:`gateway.surfaces.server_card`), ``GET|HEAD /docs``, ``GET /metrics``, the HTTP+SSE transport
(``GET /sse``, ``POST /messages``, :mod:`gateway.surfaces.sse_routes`), REST (``/v1/tools``,
:mod:`gateway.surfaces.rest`) and ``GET|HEAD /openapi.json``; anything else a JSON 404 or 405
(:mod:`gateway.surfaces.route_errors`). ``/docs``, ``/openapi.json`` and the server card count against
the client's request limit (`route_errors.metered`); the first two go out gzip-compressed when accepted.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Mapping, Sequence

from aiohttp import web

from gateway.admission.checks import Admission
from gateway.admission.cors import cors_middleware, preflight_handler
from gateway.admission.identity import derive_key, parse_networks
from gateway.admission.limits import Limiter, MemoryLimiter
from gateway.admission.security import SecurityPolicy
from gateway.dispatch.dispatchers import build_dispatcher
from gateway.dispatch.gate import CallGate
from gateway.process.settings import GatewaySettings
from gateway.shared import metrics
from gateway.surfaces.docs import DocsPage
from gateway.surfaces.health import HealthState
from gateway.surfaces.openapi import OpenApiDocument
from gateway.surfaces.public_url import PublicUrl
from gateway.surfaces.rest import RestApi, add_rest_routes
from gateway.surfaces.route_errors import add_route_errors, metered
from gateway.surfaces.server_card import CARD_PATH, ServerCard
from gateway.surfaces.sse_routes import add_sse_routes
from gateway.surfaces.sse_sessions import SessionHub, build_session_store
from gateway.surfaces.streamable_http import McpEndpoint
from gateway.surfaces.wellknown import WellKnown
from pwc_mcp_core.cluster.limits import RedisLimiter
from pwc_mcp_core.mcp_server.server import McpServer
from pwc_mcp_core.protocol.json_types import JsonValue
from pwc_mcp_core.runtime.dispatch import Dispatcher

__all__ = ["DISPATCHER", "HEALTH", "LIMITER", "create_app"]

logger = logging.getLogger(__name__)

DISPATCHER = web.AppKey("dispatcher", Dispatcher)
LIMITER = web.AppKey("limiter", Limiter)
HEALTH = web.AppKey("health", HealthState)


async def _metrics(request: web.Request) -> web.Response:
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.CONTENT_TYPE})


def create_app(settings: GatewaySettings, *, dispatcher: Dispatcher | None = None, limiter: Limiter | None = None,
               tools: Sequence[Mapping[str, JsonValue]] | None = None) -> web.Application:
    """Build the gateway application.

    Args:
        settings: gateway settings (core inside).
        dispatcher: where calls run; default: the configured mode's (`build_dispatcher`).
        limiter: default: ``RedisLimiter`` when ``core.redis`` is set, else ``MemoryLimiter``.
        tools: the ``tools/list`` tools; default ``registry.tool_list_result()`` (``/docs`` shows the same).

    Raises:
        ConfigError: an allowlist is invalid (e.g. a wildcard Origin), or Redis mode is
            configured without the Redis dispatcher.
    """
    core = settings.core
    if tools is None:
        from pwc_mcp_core.tools import registry

        tools = registry.tool_list_result()["tools"]
    policy = SecurityPolicy.from_lists(core.allowed_hosts, core.allowed_origins)
    redis_mode = core.redis is not None
    if dispatcher is None:
        dispatcher = build_dispatcher(core)
    if limiter is None:
        limiter = RedisLimiter(core.redis, settings.limits) if core.redis is not None else MemoryLimiter(settings.limits)
    health = HealthState(core.api_url, ok_interval_s=settings.health_ok_interval_s,
                         fail_interval_s=settings.health_fail_interval_s,
                         redis_probe=limiter.ping if redis_mode else None,
                         live_workers=(lambda: dispatcher.live_workers) if redis_mode else None,
                         pool=(lambda: dataclasses.asdict(dispatcher.pool_state())) if redis_mode else None)
    admission = Admission(policy=policy, trusted=parse_networks(core.trusted_proxy_cidrs), limiter=limiter,
                          max_body_bytes=settings.max_body_bytes, identity_key=derive_key(core.cursor_keys[0]))
    server = McpServer(core, dispatcher, tools=tools)
    health.on_data_source(server.set_data_source)  # the catalog's provenance, into the instructions
    gate = CallGate(dispatcher, limiter)
    endpoint = McpEndpoint(admission=admission, server=server, gate=gate, refusals_as_200=settings.refusal_status == "200")

    # client_max_size bounds any body aiohttp itself reads; /mcp counts its own bytes.
    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[cors_middleware(policy=policy)])
    app[DISPATCHER] = dispatcher
    app[LIMITER] = limiter
    app[HEALTH] = health
    app.router.add_post("/mcp", endpoint.post)
    app.router.add_get("/mcp", endpoint.not_allowed, allow_head=False)
    app.router.add_delete("/mcp", endpoint.not_allowed)
    app.router.add_route("OPTIONS", "/mcp", preflight_handler(policy=policy))
    app.router.add_get("/health", health.handle)  # HEAD too: uptime monitors use it
    public_url = PublicUrl(policy, parse_networks(core.trusted_proxy_cidrs), core.port)
    app.router.add_get("/.well-known/mcp", WellKnown(public_url, lambda: health.data_source).handle)
    card = ServerCard(public_url, [str(tool["name"]) for tool in tools], lambda: health.data_source)
    app.router.add_get(CARD_PATH, metered(admission, card.handle))
    app.router.add_route("OPTIONS", CARD_PATH, card.preflight)
    app.router.add_get("/docs", metered(admission, DocsPage(tools, core, public_url, lambda: health.data_source).handle))
    app.router.add_get("/metrics", _metrics, allow_head=False)
    app.cleanup_ctx.append(_lifecycle)
    add_sse_routes(app, admission=admission, endpoint=endpoint, policy=policy,
                   hub=SessionHub(build_session_store(core.redis), settings.sse))
    add_rest_routes(app, RestApi(admission, server, gate, tools), policy)
    app.router.add_get("/openapi.json", metered(admission, OpenApiDocument(tools, public_url).handle))
    add_route_errors(app, admission)  # the router's 404/405 in JSON; tried after every other route
    return app


async def _lifecycle(app: web.Application) -> AsyncIterator[None]:
    """Start the dispatcher and probes; on shutdown stop them and close connections."""
    dispatcher, limiter, health = app[DISPATCHER], app[LIMITER], app[HEALTH]
    await dispatcher.start()
    metrics.set_live_workers(dispatcher.live_workers)
    health.start()
    try:
        yield
    finally:
        await health.stop()
        await dispatcher.close()
        await limiter.close()
