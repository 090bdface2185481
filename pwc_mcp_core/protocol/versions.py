"""Protocol versions and server identity (docs/protocol.md §0, docs/tool-contract.md §1.7).

One place names every protocol revision the server speaks, so era routing
(`eras`), discovery (`/.well-known/mcp`, `server/discover`) and the log labels
agree.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from pwc_mcp_core import __version__
from pwc_mcp_core.protocol.json_types import JsonObject

__all__ = [
    "CACHE_SCOPE_PUBLIC",
    "CLIENT_CAPABILITIES_META_KEY",
    "KNOWN_VERSIONS",
    "LATEST_LEGACY_VERSION",
    "LEGACY_VERSIONS",
    "LIST_TTL_MS",
    "MODERN_VERSION",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_META_KEY",
    "RESOURCE_READ_TTL_MS",
    "SERVER_INFO",
    "SERVER_INFO_META_KEY",
    "SERVER_VERSION",
    "SUPPORTED_VERSIONS",
    "modern_result_extras",
]

SERVER_VERSION: Final = __version__

MODERN_VERSION: Final = "2026-07-28"
"""The stateless revision: no handshake, `_meta` envelope on every request (docs/protocol.md §6)."""

MODERN_VERSIONS: Final = (MODERN_VERSION,)

LATEST_LEGACY_VERSION: Final = "2025-11-25"
"""Answered to an `initialize` asking for a version we do not speak (docs/protocol.md §3)."""

LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""Handshake-era revisions served by the legacy leg, newest first."""

SUPPORTED_VERSIONS: Final = (MODERN_VERSION, *LEGACY_VERSIONS)
"""Every revision we serve, newest first (listed in `-32022` data and `/.well-known/mcp`)."""

KNOWN_VERSIONS: Final = frozenset(SUPPORTED_VERSIONS)
"""Header values logged verbatim as the protocol label; anything else logs as `unknown`."""

SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
PROTOCOL_VERSION_META_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY: Final = "io.modelcontextprotocol/clientCapabilities"

LIST_TTL_MS: Final = 3_600_000
"""Cache hint on discover and the list results: one hour (docs/tool-contract.md §8)."""
RESOURCE_READ_TTL_MS: Final = 300_000
"""Cache hint on `resources/read` results: five minutes (docs/tool-contract.md §8)."""
CACHE_SCOPE_PUBLIC: Final = "public"

SERVER_INFO: Final[MappingProxyType[str, str]] = MappingProxyType({
    "name": "pwc",
    "title": "Papers With Code",
    "version": SERVER_VERSION,
    "description": "Anonymous read-only access to the Papers With Code research catalog: "
    "papers, tasks, methods, benchmarks and leaderboards.",
    "websiteUrl": "https://paperswithcode.co",
})
"""The `Implementation` object of `initialize.serverInfo` and of every modern result's `_meta`."""


def modern_result_extras(*, ttl_ms: int | None = None) -> JsonObject:
    """Fields every 2026-07-28 result carries (docs/protocol.md §6.1 items 2, 8 and SEP-2549).

    Returns ``{"resultType": "complete", "_meta": {serverInfo}}`` plus
    ``ttlMs``/``cacheScope: "public"`` when ``ttl_ms`` is given. The executor
    merges this into `resources/read` (``ttl_ms=RESOURCE_READ_TTL_MS``) and
    `tools/call` results when ``call.era == "modern"``.
    """
    extras: JsonObject = {
        "resultType": "complete",
        "_meta": {SERVER_INFO_META_KEY: dict(SERVER_INFO)},
    }
    if ttl_ms is not None:
        extras["ttlMs"] = ttl_ms
        extras["cacheScope"] = CACHE_SCOPE_PUBLIC
    return extras
