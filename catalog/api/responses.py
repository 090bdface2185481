"""What the catalog's route modules share with the app: the app keys, the JSON response and the
SQL thread-pool runner (``catalog.api.app`` builds the app; the routes import only this)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
from aiohttp import web

from catalog.store.core import Store

__all__ = ["EXECUTOR_KEY", "STORE_KEY", "json_response", "run_query"]

STORE_KEY: web.AppKey[Store] = web.AppKey("catalog_store", Store)
EXECUTOR_KEY: web.AppKey[ThreadPoolExecutor] = web.AppKey("catalog_executor", ThreadPoolExecutor)


def json_response(body: Any, status: int = 200) -> web.Response:
    """Compact UTF-8 JSON response (orjson; the stdlib encoder for what orjson refuses,
    e.g. integers beyond 64 bits inside stored metrics or lone surrogates)."""
    try:
        data = orjson.dumps(body)
    except TypeError:  # ASCII escapes also carry lone surrogates safely
        data = json.dumps(body, separators=(",", ":")).encode("ascii")
    return web.Response(body=data, status=status, content_type="application/json", charset="utf-8")


async def run_query(request: web.Request, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``func(conn, *args, **kwargs)`` in the SQL thread pool and return its result."""
    store = request.app[STORE_KEY]

    def call() -> Any:
        return func(store.conn(), *args, **kwargs)

    return await asyncio.get_running_loop().run_in_executor(request.app[EXECUTOR_KEY], call)
