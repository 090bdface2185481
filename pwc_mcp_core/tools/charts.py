"""Image content of a tool result: the ``get_sota_history`` chart as MCP image content.

The PNG (``pwc.chart.history_png``) is keyed by a digest of the history payload and kept in the
runtime's answer cache (``client.cache``: memory, or Redis shared by the workers) for
``RECORD_TTL_S``, the lifetime of the benchmark rows it is drawn from; the same series is
drawn once. A chart that cannot be drawn is left out (logged): the text and the structured
content carry every fact, so a result never fails for its picture.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging

from pwc.cache import RECORD_TTL_S
from pwc.transport import Client
from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = ["CHART_KEY_PREFIX", "history_chart"]

CHART_KEY_PREFIX = "CHART:v1:"
logger = logging.getLogger("pwc_mcp.tools")


def history_chart(structured: JsonObject, client: Client) -> JsonObject | None:
    """``{"type": "image", "mimeType": "image/png", "data": base64}`` of the history in
    ``structured["data"]``, from the cache when drawn before; None when there is nothing to draw
    or drawing failed."""
    data = structured.get("data")
    if not isinstance(data, dict):
        return None
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()

    def draw() -> bytes:
        from pwc.chart import history_png

        return history_png(data)

    try:
        png = client.cache.fetch(CHART_KEY_PREFIX + digest, RECORD_TTL_S, draw)
    except Exception as exc:  # noqa: BLE001 - the chart is an extra; the answer stands without it
        logger.warning("chart failed type=%s", type(exc).__name__)
        return None
    return {"type": "image", "mimeType": "image/png", "data": base64.b64encode(png).decode("ascii")}
