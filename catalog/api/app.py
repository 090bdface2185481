"""aiohttp app serving the catalog's read API under ``/api/v1``.

``create_app(db_path)`` builds the application: the 26 read endpoints of
``docs/cli-contract.md`` §4.3 (list endpoints answer both with and without the
trailing slash), the chunked Markdown read of ``docs/tool-contract.md`` §4 and the two
public-metadata endpoints (``catalog.store.public``).

Every failure is JSON ``{"detail": ...}``: 404 unknown route/entity, 405,
409 ambiguous/changed, 422 bad input. SQL runs in a small thread pool with one
read-only connection per thread. The access log is content-free: method,
route name, status and milliseconds (never a query, path value or body).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aiohttp import web

from catalog.api.responses import EXECUTOR_KEY, STORE_KEY, json_response, run_query
from catalog.store.core import Store, StoreError

__all__ = ["STORE_KEY", "create_app", "json_response", "run_query"]

logger = logging.getLogger(__name__)
access_logger = logging.getLogger("catalog.access")

MAX_BODY = 2 * 1024 * 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _route_name(request: web.Request) -> str:
    info = request.match_info
    route = getattr(info, "route", None)
    name = getattr(route, "name", None)
    return name or "unmatched"


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every failure into ``{"detail": ...}`` JSON and log one access line."""
    started = time.perf_counter()
    try:
        response = await handler(request)
    except StoreError as exc:
        response = json_response({"detail": exc.detail}, exc.status)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        detail = {404: "Not found", 405: "Method not allowed"}.get(exc.status, exc.reason)
        response = json_response({"detail": detail}, exc.status)
        for name in ("Allow",):
            if name in exc.headers:
                response.headers[name] = exc.headers[name]
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never leak internals
        logger.error("unhandled %s in route %s", type(exc).__name__, _route_name(request))
        response = json_response({"detail": "Internal server error"}, 500)
    access_logger.info("%s %s %d %.1fms", request.method, _route_name(request), response.status,
                       (time.perf_counter() - started) * 1000)
    return response


def create_app(db_path: Path, *, workers: int = 4) -> web.Application:
    """Build the catalog application over the SQLite file at ``db_path``.

    Raises:
        FileNotFoundError: the database file does not exist.
    """
    from catalog.api import routes_catalog, routes_papers
    app = web.Application(middlewares=[error_middleware], client_max_size=MAX_BODY)
    app[STORE_KEY] = Store(Path(db_path))
    app[EXECUTOR_KEY] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="catalog-sql")
    routes_papers.register(app.router)
    routes_catalog.register(app.router)

    async def warm(app: web.Application) -> None:
        # Load the embedder before the first semantic search needs it (about 1 s, once per
        # process), off the event loop so that other requests are served meanwhile.
        from catalog.search.embeddings import get_embedder

        asyncio.get_running_loop().run_in_executor(app[EXECUTOR_KEY], get_embedder)

    async def shutdown(app: web.Application) -> None:
        app[EXECUTOR_KEY].shutdown(wait=False, cancel_futures=True)

    app.on_startup.append(warm)
    app.on_cleanup.append(shutdown)
    return app
