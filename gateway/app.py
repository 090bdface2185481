"""The aiohttp application: routes, middleware, and the lifecycle of limiter, executor and probes.

Modes (ARCHITECTURE.md §3): ``PWC_MCP_REDIS_URL`` unset → embedded (``MemoryLimiter``,
core's ``LocalExecutor`` with its ``MemoryCache``); set → ``RedisLimiter`` and the
``RedisExecutor`` (workers). Routes: ``POST|GET|DELETE|OPTIONS /mcp``, ``GET /health``,
``GET /.well-known/mcp``, ``GET /docs``, ``GET /metrics``, the HTTP+SSE transport
(``GET /sse``, ``POST /messages``, :mod:`gateway.sse_routes`), REST (``/v1/tools``,
:mod:`gateway.rest`) and ``GET /openapi.json``; anything else a JSON 404 or 405 (:mod:`gateway.route_errors`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from aiohttp import web
from pwc_mcp_core.runtime.gc_tuning import settle_after_startup
from pwc_mcp_core.mcp_server.server import McpServer

from gateway import metrics
from gateway.admission import Admission
from gateway.connection import GatewayRunner, request_started_middleware
from gateway.cors import cors_middleware, preflight_handler
from gateway.docs import DocsPage
from gateway.executors import build_executor
from gateway.health import HealthState
from gateway.http_mcp import McpEndpoint
from gateway.identity import derive_key, parse_networks
from gateway.limits import Limiter, MemoryLimiter, RedisLimiter
from gateway.public_url import PublicUrl
from gateway.security import SecurityPolicy
from gateway.openapi import OpenApiDocument
from gateway.rest import RestApi, add_rest_routes
from gateway.route_errors import route_errors_middleware
from gateway.settings import GatewaySettings
from gateway.sse_routes import add_sse_routes
from gateway.sse_sessions import SessionHub, build_session_store
from gateway.wellknown import WellKnown

__all__ = ["EXECUTOR", "HEALTH", "LIMITER", "app_factory", "create_app", "serving_app"]

logger = logging.getLogger(__name__)

EXECUTOR = web.AppKey("executor", object)
LIMITER = web.AppKey("limiter", object)
HEALTH = web.AppKey("health", HealthState)


async def _metrics(request: web.Request) -> web.Response:
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.CONTENT_TYPE})


def _live_workers(executor: Any) -> int:
    value = getattr(executor, "live_workers", 0)
    return int(value() if callable(value) else value)


def create_app(settings: GatewaySettings, *, executor: Any = None, limiter: Limiter | None = None,
               tools: Sequence[Mapping[str, Any]] | None = None) -> web.Application:
    """Build the gateway application.

    Args:
        settings: gateway settings (core inside).
        executor: ``async (Call) -> bytes``; default: the configured mode's executor.
        limiter: default: ``RedisLimiter`` when ``core.redis_url`` is set, else ``MemoryLimiter``.
        tools: the ``tools/list`` tools; default ``registry.tool_list_result()`` (``/docs`` shows the same).

    Raises:
        ConfigError: an allowlist is invalid (e.g. a wildcard Origin), or Redis mode is
            configured without the Redis executor.
    """
    core = settings.core
    if tools is None:
        from pwc_mcp_core.tools import registry

        tools = registry.tool_list_result()["tools"]
    policy = SecurityPolicy.from_lists(core.allowed_hosts, core.allowed_origins)
    redis_mode = core.redis_url is not None
    if executor is None:
        executor = build_executor(core)
    if limiter is None:
        limiter = RedisLimiter(core.redis_url, settings.limits) if redis_mode else MemoryLimiter(settings.limits)
    health = HealthState(core.api_url, ok_interval_s=settings.health_ok_interval_s,
                         fail_interval_s=settings.health_fail_interval_s,
                         redis_probe=getattr(limiter, "ping", None) if redis_mode else None,
                         live_workers=(lambda: _live_workers(executor)) if redis_mode else None,
                         pool=getattr(executor, "pool_state", None) if redis_mode else None)
    admission = Admission(policy=policy, trusted=parse_networks(core.trusted_proxy_cidrs), limiter=limiter,
                          max_body_bytes=settings.max_body_bytes, identity_key=derive_key(core.cursor_keys[0]))
    # Deferred admission needs both halves: the limiter builds the script, the executor runs it.
    defer = bool(getattr(executor, "runs_deferred_admission", False)) and hasattr(limiter, "admission_script")
    server = McpServer(core, executor, tools=tools)
    endpoint = McpEndpoint(admission=admission, server=server,
                           max_response_bytes=settings.max_body_bytes, defer_admission=defer)

    # client_max_size bounds any body aiohttp itself reads; /mcp counts its own bytes.
    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[request_started_middleware, cors_middleware(policy=policy),
                                       route_errors_middleware(admission)])
    app[EXECUTOR] = executor
    app[LIMITER] = limiter
    app[HEALTH] = health
    app.router.add_post("/mcp", endpoint.post)
    app.router.add_get("/mcp", endpoint.not_allowed, allow_head=False)
    app.router.add_delete("/mcp", endpoint.not_allowed)
    app.router.add_route("OPTIONS", "/mcp", preflight_handler(policy=policy))
    app.router.add_get("/health", health.handle, allow_head=False)
    public_url = PublicUrl(policy, parse_networks(core.trusted_proxy_cidrs), core.port)
    app.router.add_get("/.well-known/mcp", WellKnown(public_url).handle, allow_head=False)
    app.router.add_get("/docs", DocsPage(tools, core, public_url).handle, allow_head=False)
    app.router.add_get("/metrics", _metrics, allow_head=False)
    app.cleanup_ctx.append(_lifecycle)
    add_sse_routes(app, admission=admission, endpoint=endpoint, policy=policy,
                   hub=SessionHub(build_session_store(core.redis_url), settings.sse))
    add_rest_routes(app, RestApi(admission, server, tools), policy)
    app.router.add_get("/openapi.json", OpenApiDocument(tools, public_url).handle, allow_head=False)
    return app


async def _lifecycle(app: web.Application) -> AsyncIterator[None]:
    """Start the executor and probes; on shutdown stop them and close connections."""
    executor, limiter, health = app[EXECUTOR], app[LIMITER], app[HEALTH]
    start = getattr(executor, "start", None)
    if start is not None:
        await start()
    metrics.set_live_workers(_live_workers(executor))
    health.start()
    try:
        yield
    finally:
        await health.stop()
        close = getattr(executor, "close", None)
        if close is not None:
            await close()
        await limiter.close()


def serving_app(settings: GatewaySettings) -> web.Application:
    """``create_app`` for a server process: once started, its heap is settled
    (``gc_tuning.settle_after_startup``). Tests build apps with ``create_app``, which
    leaves the test process's collector alone."""
    app = create_app(settings)
    app.on_startup.append(_settle_heap)  # runs after _lifecycle has started everything
    return app


async def _settle_heap(app: web.Application) -> None:
    settle_after_startup()


async def app_factory() -> GatewayRunner:
    """Entry point for gunicorn (``gateway.app:app_factory``): settings from the environment.

    Returns a runner, not the bare app, so gunicorn's aiohttp worker serves with the
    gateway's own server settings (``gateway.serving.server_options``: no request
    decompression, the idle timeout above the proxy's, the content-free server logger)
    and connections (:mod:`gateway.connection`: header deadline, JSON parse errors).
    """
    from pwc_mcp_core.runtime.logs import configure_logging

    from gateway.serving import server_options

    settings = GatewaySettings.from_env(os.environ)
    configure_logging(settings.core.log_level)
    graceful_s = int(settings.core.call_deadline_s) + 5
    return GatewayRunner(serving_app(settings), shutdown_timeout=graceful_s * 0.95, **server_options())
