"""Image content of a tool result: the ``get_sota_history`` and ``get_trends`` charts as MCP image content.

The PNG (``pwc.chart.history_png``, ``pwc.chart.trends_png``) is keyed by a digest of the payload
and kept in the runtime's answer cache (``client.cache``: memory, or Redis shared by the workers)
as long as the catalog answers it is drawn from (``RECORD_TTL_S`` for benchmark rows,
``TAXONOMY_TTL_S`` for the per-year counts); the same data is drawn once. A chart that cannot be
drawn is left out (logged): the text and the structured content carry every fact, so a result
never fails for its picture.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from collections.abc import Callable, Mapping

from pwc.cache import RECORD_TTL_S, TAXONOMY_TTL_S
from pwc.chart import history_png, trends_png
from pwc.transport import Client
from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["CHART_KEY_PREFIX", "chart_content", "preload"]

CHART_KEY_PREFIX = "CHART:v1:"
# tool → (pwc.chart renderer, seconds the drawing is kept, digest salt: history keys stay as they were)
_CHARTS: dict[str, tuple[Callable[[Mapping[str, object]], bytes], float, str]] = {
    "get_sota_history": (history_png, RECORD_TTL_S, ""),
    "get_trends": (trends_png, TAXONOMY_TTL_S, "trends:")}
logger = logging.getLogger("pwc_mcp.tools")


def chart_content(tool: str, structured: JsonObject, client: Client) -> JsonObject | None:
    """``{"type": "image", "mimeType": "image/png", "data": base64}`` of ``tool``'s payload
    (``structured["data"]``, or the structured content itself for a tool without ``data``), from
    the cache when drawn before; None for a tool without a chart, when there is nothing to draw or
    drawing failed."""
    if tool not in _CHARTS:
        return None
    data = structured.get("data", structured)  # typed tools (get_trends) carry their payload as fields
    if not isinstance(data, dict):
        return None
    renderer, ttl_s, salt = _CHARTS[tool]
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256((salt + canonical).encode()).hexdigest()

    def draw() -> bytes:
        return renderer(data)

    try:
        png = client.cache.fetch(CHART_KEY_PREFIX + digest, ttl_s, draw)
    except Exception as exc:  # noqa: BLE001 - the chart is an extra; the answer stands without it
        logger.warning("chart failed type=%s", type(exc).__name__)
        return None
    return {"type": "image", "mimeType": "image/png", "data": base64.b64encode(png).decode("ascii")}


_WARM_PAYLOAD: JsonObject = {
    "benchmark": {"name": "warm-up"}, "metric": "m", "direction": "higher", "direction_known": True,
    "points": [["2020-01-01", 1.0], ["2021-01-01", 2.0]],
    "steps": [{"date": "2020-01-01", "value": 1.0, "model": "a"}, {"date": "2021-01-01", "value": 2.0, "model": "b"}],
}


def preload() -> None:
    """Import matplotlib and draw one throw-away chart, so a process's first real chart costs what
    later ones do: the imports, the font files and the first layout make a cold first chart
    about 2.5–3 s on a shared 2-core host, a chart after them about 0.5 s (BENCHMARKS.md "First chart",
    ``bench/first_chart.py``). Never raises (logged)."""
    started = time.perf_counter()
    try:
        history_png(_WARM_PAYLOAD)
    except Exception as exc:  # noqa: BLE001 - a warm-up; the chart path reports its own failures
        logger.warning("chart preload failed type=%s", type(exc).__name__)
        return
    logger.info("chart preloaded duration_ms=%d", (time.perf_counter() - started) * 1000)

