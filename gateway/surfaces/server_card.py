"""``GET /.well-known/mcp/server-card.json``: the MCP Server Card (SEP-2127), and the transports.

The card says, before a client connects, who this server is and where to connect:
``name`` (reverse-DNS, the same name as the MCP registry entry ``server.json``), ``version``,
``title`` and a description consistent with ``serverInfo``, and one ``remotes`` entry per HTTP
transport with its absolute URL (from the request's allowlisted ``Host``, scheme and port,
`public_url`, as ``/.well-known/mcp`` and ``/docs`` build theirs) and the protocol versions it
speaks. The card format (schema ``v1``, the ``experimental-ext-server-card`` repository) lists no
tools, resources or prompts: ``tools/list`` stays authoritative. The tool names, the data the
catalog serves (`DataSource.summary`), the documentation URL and the legacy SSE transport's
deprecation go under the vendor key of ``_meta`` (`META_KEY`).

`TRANSPORTS` is the one list of HTTP transports with their paths, versions and status; the card,
``/docs`` and the test that keeps ``server.json`` in step read it. Legacy HTTP+SSE is
**deprecated**: the 2026-07-28 revision of the MCP specification lists it as Deprecated
(SEP-2596, deprecated since 2025-03-26, migrate to Streamable HTTP); it keeps working here.

Served as ``application/mcp-server-card+json`` (``application/json`` when the client asks only for
that), with ``Access-Control-Allow-Origin: *`` (public, read-only metadata, as the card's discovery
document requires), ``Cache-Control: public, max-age=3600`` and a strong ``ETag`` (a matching
``If-None-Match`` answers 304); ``OPTIONS`` answers the CORS preflight. ``HEAD`` answers like ``GET``
without a body. Each ``GET`` and ``HEAD`` counts against the client's request limit, like ``/docs``
(`route_errors.metered`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from gateway.surfaces.compressed import not_modified
from gateway.surfaces.public_url import PublicUrl
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.versions import (
    LEGACY_VERSIONS,
    SERVER_INFO,
    SERVER_VERSION,
    SUPPORTED_VERSIONS,
)
from pwc_mcp_core.tools.data_source import UNKNOWN_SUMMARY, DataSource

__all__ = ["CARD_DESCRIPTION", "CARD_PATH", "CARD_SCHEMA", "MEDIA_TYPE", "META_KEY", "SERVER_NAME",
           "SSE_DEPRECATION", "TRANSPORTS", "ServerCard", "Transport", "server_card"]

CARD_PATH: Final = "/.well-known/mcp/server-card.json"
CARD_SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
MEDIA_TYPE: Final = "application/mcp-server-card+json"
SERVER_NAME: Final = "co.paperswithcode/pwc-mcp"
"""Reverse-DNS name of the card and of the registry entry (``server.json``)."""
META_KEY: Final = SERVER_NAME
"""The vendor key under ``_meta`` for what the card format has no field for."""
CARD_DESCRIPTION: Final = "Anonymous read-only Papers With Code catalog: papers, tasks, methods, benchmarks, leaderboards"
"""``serverInfo.description`` within the card's and the registry's 100 characters."""

SSE_DEPRECATION: Final[JsonObject] = {
    "status": "deprecated",
    "deprecated_since": "2025-03-26",
    "specification": "2026-07-28",
    "sep": "SEP-2596",
    "use_instead": "streamable-http",
    "reference": "https://modelcontextprotocol.io/specification/latest/deprecated",
}
"""How the MCP specification 2026-07-28 classes the legacy HTTP+SSE transport."""


@dataclass(frozen=True)
class Transport:
    """One HTTP transport: its card ``type``, path on this server, protocol versions and status."""

    type: str
    path: str
    versions: tuple[str, ...]
    deprecation: JsonObject | None = None

    def entry(self, base: str) -> JsonObject:
        """The card's ``remotes`` entry for a server reached at ``base``."""
        return {"type": self.type, "url": f"{base}{self.path}", "supportedProtocolVersions": [*self.versions]}

    def describe(self, base: str) -> JsonObject:
        """Type, absolute URL, versions and status, as ``/docs`` and the card's ``_meta`` show it."""
        status: JsonObject = dict(self.deprecation) if self.deprecation else {"status": "current"}
        return {"type": self.type, "url": f"{base}{self.path}", "protocol_versions": [*self.versions], **status}


TRANSPORTS: Final = (
    Transport("streamable-http", "/mcp", SUPPORTED_VERSIONS),
    Transport("sse", "/sse", LEGACY_VERSIONS, SSE_DEPRECATION),
)


def server_card(base: str, tool_names: Sequence[str], data: DataSource | None = None) -> JsonObject:
    """The card for a server reached at ``base`` (``scheme://host``) serving ``tool_names``."""
    return {
        "$schema": CARD_SCHEMA,
        "name": SERVER_NAME,
        "version": SERVER_VERSION,
        "title": SERVER_INFO["title"],
        "description": CARD_DESCRIPTION,
        "websiteUrl": SERVER_INFO["websiteUrl"],
        "remotes": [transport.entry(base) for transport in TRANSPORTS],
        "_meta": {META_KEY: {
            "documentation_url": f"{base}/docs",
            "transports": [transport.describe(base) for transport in TRANSPORTS],
            "tools": [*tool_names],
            "data": data.summary() if data is not None else dict(UNKNOWN_SUMMARY),
        }},
    }


def _wants_card_type(request: web.Request) -> bool:
    """The card's own media type unless the client asks for ``application/json`` and not for it."""
    accept = request.headers.get("Accept", "").lower()
    return "application/json" not in accept or MEDIA_TYPE in accept


class ServerCard:
    """``GET``/``HEAD`` of `CARD_PATH`; each base URL's body is serialized once (a small LRU).

    Args:
        public_url: builds the absolute base URL of a request.
        tool_names: the names of the ``tools/list`` tools.
        data: reads the current `DataSource` (None: provenance unknown).
    """

    def __init__(self, public_url: PublicUrl, tool_names: Sequence[str],
                 data: Callable[[], DataSource | None] = lambda: None) -> None:
        self._public_url = public_url
        self._tool_names = tuple(tool_names)
        self._data = data
        self._body = functools.lru_cache(maxsize=16)(self._body_for)

    def _body_for(self, base: str, data: DataSource | None) -> tuple[bytes, str]:
        body = json.dumps(server_card(base, self._tool_names, data), ensure_ascii=False).encode("utf-8")
        return body, f'"{hashlib.sha256(body).hexdigest()[:32]}"'

    async def handle(self, request: web.Request) -> web.Response:
        """The card, or 304 when ``If-None-Match`` names its current ``ETag``."""
        body, etag = self._body(self._public_url.base(request), self._data())
        headers = {"Cache-Control": "public, max-age=3600", "ETag": etag, "Vary": "Host, Accept",
                   "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag"}
        if not_modified(request, etag):
            return web.Response(status=304, headers=headers)
        content_type = MEDIA_TYPE if _wants_card_type(request) else "application/json"
        return web.Response(body=body, content_type=content_type, charset="utf-8", headers=headers)

    @staticmethod
    async def preflight(request: web.Request) -> web.Response:
        """``OPTIONS``: the CORS preflight of a cross-origin revalidation (``If-None-Match``), from any origin."""
        return web.Response(status=204, headers={
            "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD",
            "Access-Control-Allow-Headers": "Accept, Content-Type, If-None-Match", "Access-Control-Max-Age": "600"})
