"""``GET /.well-known/mcp``: connection metadata for discovery (docs/tool-contract.md §1.4)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pwc_mcp_core.version import LATEST_LEGACY_VERSION, SUPPORTED_VERSIONS

__all__ = ["discovery_document", "handle"]


def discovery_document() -> dict[str, Any]:
    """The static discovery JSON; versions sorted newest first."""
    return {
        "name": "Papers With Code",
        "description": "Anonymous read-only AI research catalog",
        "transport": {"type": "streamable-http", "url": "/mcp"},
        "protocol_version": LATEST_LEGACY_VERSION,
        "supported_protocol_versions": sorted(SUPPORTED_VERSIONS, reverse=True),
        "documentation_url": "https://paperswithcode.co/mcp/schema",
        "setup_url": "https://paperswithcode.co/mcp",
    }


async def handle(request: web.Request) -> web.Response:
    """``GET /.well-known/mcp``."""
    return web.json_response(discovery_document())
