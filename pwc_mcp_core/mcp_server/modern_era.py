"""Results of the 2026-07-28 era (docs/protocol.md §6.1–§6.3; cache hints docs/tool-contract.md §8).

Every modern result carries ``resultType: "complete"`` and the server's
``Implementation`` under ``_meta["io.modelcontextprotocol/serverInfo"]``; the
list results and ``server/discover`` also carry ``ttlMs``/``cacheScope``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.jsonrpc import result_body
from pwc_mcp_core.protocol.versions import LIST_TTL_MS, MODERN_VERSIONS, modern_result_extras
from pwc_mcp_core.tools.instructions import SERVER_INSTRUCTIONS
from pwc_mcp_core.tools.prompts import prompts_list_result
from pwc_mcp_core.tools.templates import templates_list_result

__all__ = ["LEGACY_ONLY_METHODS", "MODERN_CAPABILITIES", "discover_body", "modern_result", "modern_static_bodies"]

MODERN_CAPABILITIES: Final[JsonObject] = {
    # Exactly the handlers the modern leg serves (conformance `discover-capabilities-match-handlers`):
    # no logging (logging/setLevel is removed) and no subscribe (subscriptions/listen is not offered).
    "tools": {"listChanged": False},
    "resources": {"listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
}

LEGACY_ONLY_METHODS: Final = frozenset({
    "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
})
"""Removed in 2026-07-28: answered 404 -32601 on the modern leg (docs/protocol.md §6.2)."""


def modern_result(result: Mapping[str, object], *, ttl_ms: int | None = None) -> dict[str, object]:
    """``result`` plus the modern fields (`version.modern_result_extras`), merging any ``_meta``."""
    extras = modern_result_extras(ttl_ms=ttl_ms)
    merged: dict[str, object] = {**result, **extras}
    meta, extra_meta = result.get("_meta"), extras["_meta"]
    if isinstance(meta, dict) and isinstance(extra_meta, dict):
        merged["_meta"] = {**meta, **extra_meta}
    return merged


def discover_body(instructions: str = SERVER_INSTRUCTIONS) -> bytes:
    """The serialized ``server/discover`` result body."""
    discover: JsonObject = {
        "supportedVersions": [*MODERN_VERSIONS],
        "capabilities": MODERN_CAPABILITIES,
        "instructions": instructions,
    }
    return result_body(modern_result(discover, ttl_ms=LIST_TTL_MS))


def modern_static_bodies(tools_result: Mapping[str, object]) -> dict[str, bytes]:
    """Method → serialized result body for every parameter-free modern method."""
    return {
        "server/discover": discover_body(),
        "tools/list": result_body(modern_result(tools_result, ttl_ms=LIST_TTL_MS)),
        "resources/list": result_body(modern_result({"resources": []}, ttl_ms=LIST_TTL_MS)),
        "resources/templates/list": result_body(modern_result(templates_list_result(), ttl_ms=LIST_TTL_MS)),
        "prompts/list": result_body(modern_result(prompts_list_result(), ttl_ms=LIST_TTL_MS)),
    }
