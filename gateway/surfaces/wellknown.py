"""``GET /.well-known/mcp``: connection metadata for discovery.

``documentation_url`` is this server's own ``/docs`` and ``setup_url`` its "Connect a client"
section and ``server_card_url`` the MCP Server Card (`server_card`), as absolute URLs (built from the request's allowlisted ``Host``, scheme and port,
`public_url`), so a self-hosted deployment documents itself rather than pointing at the public site.
``data`` says what the catalog serves (`DataSource.summary`, or ``{"provenance": "unknown"}``).
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from gateway.surfaces.public_url import PublicUrl
from gateway.surfaces.server_card import CARD_PATH
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.versions import LATEST_LEGACY_VERSION, SUPPORTED_VERSIONS
from pwc_mcp_core.tools.data_source import UNKNOWN_SUMMARY, DataSource

__all__ = ["WellKnown", "discovery_document"]


def discovery_document(base_url: str, data: DataSource | None = None) -> JsonObject:
    """The discovery JSON for a server reached at ``base_url`` (``scheme://host``); versions newest first;
    ``data``: what the catalog serves (None: unknown)."""
    return {
        "name": "Papers With Code",
        "description": "Anonymous read-only AI research catalog",
        "transport": {"type": "streamable-http", "url": "/mcp"},
        "protocol_version": LATEST_LEGACY_VERSION,
        "supported_protocol_versions": [*sorted(SUPPORTED_VERSIONS, reverse=True)],
        "documentation_url": f"{base_url}/docs",
        "setup_url": f"{base_url}/docs#connect",
        "server_card_url": f"{base_url}{CARD_PATH}",
        "data": data.summary() if data is not None else dict(UNKNOWN_SUMMARY),
    }


class WellKnown:
    """``GET /.well-known/mcp`` with absolute URLs from `PublicUrl`; ``data`` reads the current `DataSource`."""

    def __init__(self, public_url: PublicUrl, data: Callable[[], DataSource | None] = lambda: None) -> None:
        self._public_url = public_url
        self._data = data

    async def handle(self, request: web.Request) -> web.Response:
        """``GET /.well-known/mcp``."""
        return web.json_response(discovery_document(self._public_url.base(request), self._data()))
