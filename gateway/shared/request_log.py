"""The one content-free log line and the metrics of a finished request, on every surface.

Each line names the surface's event (``mcp_request``, ``rest_request``, ``sse_message``,
``route_request``), the classified tool where there is one, the status, latency, response
bytes, protocol label and server version: never a query, argument, address or header value.
"""

from __future__ import annotations

import logging
import time

from aiohttp import web

from gateway.shared import metrics
from pwc_mcp_core.protocol.versions import SERVER_VERSION

__all__ = ["record_request", "request_log"]

request_log = logging.getLogger("pwc_mcp.requests")


def record_request(event: str, response: web.Response, started: float, *, protocol: str,
                   tool: str | None = None) -> web.Response:
    """Count ``response`` in the request metrics and write its line; returns ``response``.

    Args:
        event: the line's first word, naming the surface.
        started: ``time.perf_counter()`` when the request arrived.
        protocol: the protocol label (metrics and line).
        tool: the classified tool name (``unknown`` when none could be read); ``None`` leaves
            ``tool=`` out of the line, for surfaces that never name one (counted as ``unknown``).
    """
    nbytes = response.content_length or 0
    latency = time.perf_counter() - started
    metrics.observe_request(tool or "unknown", response.status, protocol, latency, nbytes)
    request_log.info("%s%s status=%d latency_ms=%d bytes=%d protocol=%s version=%s", event,
                     "" if tool is None else f" tool={tool}", response.status, int(latency * 1000), nbytes,
                     protocol, SERVER_VERSION)
    return response
