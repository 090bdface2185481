"""``GET /health``: readiness from cached state only (docs/tool-contract.md §1.3, seed "Safety and operations").

Background tasks keep the state fresh; ``/health`` itself never waits on anything:

* catalog: ``GET {api_url}/tasks/?page=1&page_size=1`` → ready when the answer is a JSON
  object whose ``results`` (or ``items``) is a list; next probe 30 s after a success,
  5 s after a failure. Starts not ready, so the first ``/health`` may answer 503.
* data (what the catalog serves, issue 29): after a successful probe, ``GET {api_url}/catalog``
  when due (first probe, then every `DATA_REFRESH_S`), parsed into one
  `pwc_mcp_core.tools.data_source.DataSource` (None: provenance unknown, e.g. an older import or an
  upstream that is not this project's catalog) and handed to the listeners (`on_data_source`: the
  MCP server's instructions). A network failure keeps the last value and retries at the next probe.
* redis (Redis mode): ``PING`` every 2 s.
* workers (Redis mode): the executor's cached live-worker count (must be ≥ 1).
* pool (Redis mode, beside ``checks``): the executor's cached ``{"threads", "running", "waiting"}``: calls the
  live workers can run at once, calls taken and not yet answered, calls not yet taken.
  Shown, not judged: a saturated pool is alive, and admission already refuses past it.

Body: ``{"status": "ok"|"unavailable", "service": "pwc-mcp", "version", "protocol",
"checks": {"redis": "ok"|"unavailable"|"embedded", "workers": N|null, "catalog": "ok"|"unavailable"},
"data": DataSource.summary() | {"provenance": "unknown"}}``
plus, in Redis mode, a top-level ``"pool"`` (shown, not a check; ``data`` is not one either),
HTTP 200 when ready, 503 when not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

import httpx
from aiohttp import web

from gateway.shared.background import stop_tasks
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.versions import LATEST_LEGACY_VERSION, SERVER_VERSION
from pwc_mcp_core.tools.data_source import UNKNOWN_SUMMARY, DataSource, fetch_data_source

__all__ = ["HealthState"]

logger = logging.getLogger(__name__)

REDIS_PROBE_INTERVAL_S: Final = 2.0
PROBE_TIMEOUT_S: Final = 5.0
DATA_REFRESH_S: Final = 300.0


def catalog_ready(payload: object) -> bool:
    """True when a probe answer looks like a catalog listing."""
    return isinstance(payload, dict) and (isinstance(payload.get("results"), list)
                                          or isinstance(payload.get("items"), list))


class HealthState:
    """Cached readiness plus the background probes that refresh it.

    Args:
        api_url: catalog API base URL.
        ok_interval_s, fail_interval_s: probe spacing after a success / a failure.
        redis_probe: ``async () -> bool`` in Redis mode, None when embedded.
        live_workers: ``() -> int`` (cached, cheap) in Redis mode, None when embedded.
        pool: ``() -> dict[str, int]`` (cached, cheap) in Redis mode, None when embedded.
        data_refresh_s: how often the catalog's provenance is fetched again.
    """

    def __init__(self, api_url: str, *, ok_interval_s: float, fail_interval_s: float,
                 redis_probe: Callable[[], Awaitable[bool]] | None = None,
                 live_workers: Callable[[], int] | None = None,
                 pool: Callable[[], dict[str, int]] | None = None,
                 data_refresh_s: float = DATA_REFRESH_S) -> None:
        self._url = api_url.rstrip("/") + "/tasks/"
        self._api_url = api_url
        self._data_refresh = data_refresh_s
        self._data_due = 0.0  # loop time of the next provenance fetch
        self.data_source: DataSource | None = None
        self._listeners: list[Callable[[DataSource | None], None]] = []
        self._ok_interval = ok_interval_s
        self._fail_interval = fail_interval_s
        self._redis_probe = redis_probe
        self._live_workers = live_workers
        self._pool = pool
        self.catalog_ok = False
        self.redis_ok = False
        self._tasks: list[asyncio.Task[None]] = []

    async def probe_catalog(self, client: httpx.AsyncClient) -> bool:
        """One catalog probe; updates and returns ``catalog_ok`` (never raises)."""
        try:
            response = await client.get(self._url, params={"page": 1, "page_size": 1})
            self.catalog_ok = response.status_code == 200 and catalog_ready(response.json())
        except (httpx.HTTPError, ValueError):
            self.catalog_ok = False
        return self.catalog_ok

    def on_data_source(self, listener: Callable[[DataSource | None], None]) -> None:
        """Call ``listener`` with every new `DataSource` (None: provenance unknown)."""
        self._listeners.append(listener)

    async def fetch_data_source(self, client: httpx.AsyncClient) -> DataSource | None:
        """One fetch of the catalog's provenance; updates and returns ``data_source`` (never raises)."""
        loop = asyncio.get_running_loop()
        try:
            source = await fetch_data_source(client, self._api_url)
        except httpx.HTTPError:
            self._data_due = loop.time() + self._fail_interval  # keep the last value; retry soon
            return self.data_source
        self._data_due = loop.time() + self._data_refresh
        if source != self.data_source:
            self.data_source = source
            logger.info("catalog data: %s", source.instructions_line() if source else "provenance unknown")
            for listener in self._listeners:
                listener(source)
        return source

    async def _catalog_loop(self) -> None:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as client:
            while True:
                ok = await self.probe_catalog(client)
                if ok and asyncio.get_running_loop().time() >= self._data_due:
                    await self.fetch_data_source(client)
                await asyncio.sleep(self._ok_interval if ok else self._fail_interval)

    async def _redis_loop(self) -> None:
        assert self._redis_probe is not None
        while True:
            self.redis_ok = await self._redis_probe()
            await asyncio.sleep(REDIS_PROBE_INTERVAL_S)

    def start(self) -> None:
        """Start the background probes (call inside the running loop)."""
        self._tasks.append(asyncio.create_task(self._catalog_loop(), name="pwc-mcp-health-catalog"))
        if self._redis_probe is not None:
            self._tasks.append(asyncio.create_task(self._redis_loop(), name="pwc-mcp-health-redis"))

    async def stop(self) -> None:
        """Cancel the probes."""
        await stop_tasks(self._tasks)
        self._tasks.clear()

    def snapshot(self) -> tuple[int, JsonObject]:
        """``(http_status, body)`` from the cached state only."""
        workers = self._live_workers() if self._live_workers is not None else None
        redis_mode = self._redis_probe is not None
        ready = self.catalog_ok and (not redis_mode or (self.redis_ok and bool(workers)))
        checks: JsonObject = {
            "redis": ("ok" if self.redis_ok else "unavailable") if redis_mode else "embedded",
            "workers": workers,
            "catalog": "ok" if self.catalog_ok else "unavailable",
        }
        body: JsonObject = {"status": "ok" if ready else "unavailable", "service": "pwc-mcp", "version": SERVER_VERSION,
                "protocol": LATEST_LEGACY_VERSION, "checks": checks,
                "data": self.data_source.summary() if self.data_source else dict(UNKNOWN_SUMMARY)}
        if self._pool is not None:
            body["pool"] = dict(self._pool())
        return (200 if ready else 503), body

    async def handle(self, request: web.Request) -> web.Response:
        """``GET /health``."""
        status, body = self.snapshot()
        return web.json_response(body, status=status, headers={"Cache-Control": "no-store"})
