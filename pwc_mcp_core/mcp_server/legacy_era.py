"""Results of the handshake era (2025-11-25 and older; docs/protocol.md §3, §4).

Everything here is built once when `McpServer` starts; the dispatcher only
splices ids into the pre-serialized bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.protocol.json_types import JsonObject
from pwc_mcp_core.protocol.jsonrpc import INVALID_PARAMS, result_body
from pwc_mcp_core.protocol.versions import LATEST_LEGACY_VERSION, LEGACY_VERSIONS, SERVER_INFO
from pwc_mcp_core.tools.instructions import SERVER_INSTRUCTIONS
from pwc_mcp_core.tools.prompts import prompts_list_result
from pwc_mcp_core.tools.templates import templates_list_result

__all__ = [
    "LEGACY_CAPABILITIES", "LOG_LEVELS", "initialize_bodies", "initialize_version", "legacy_static_bodies", "set_level",
]

LEGACY_CAPABILITIES: Final[JsonObject] = {
    # Stateless, no GET stream: nothing can be pushed, so no listChanged / subscribe (docs/protocol.md §3).
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
    "logging": {},
}

LOG_LEVELS: Final = frozenset({"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"})
"""RFC 5424 levels accepted by ``logging/setLevel`` (docs/protocol.md §4.6)."""


def initialize_bodies(instructions: str = SERVER_INSTRUCTIONS) -> dict[str, bytes]:
    """Protocol version → the serialized ``initialize`` result body answering it.

    A requested version we speak is echoed; `LATEST_LEGACY_VERSION`'s body answers the rest.
    """
    return {
        version: result_body({
            "protocolVersion": version,
            "capabilities": LEGACY_CAPABILITIES,
            "serverInfo": dict(SERVER_INFO),
            "instructions": instructions,
        })
        for version in LEGACY_VERSIONS
    }


def legacy_static_bodies(tools_result: Mapping[str, object]) -> dict[str, bytes]:
    """Method → serialized result body for every parameter-free legacy method."""
    return {
        "ping": result_body({}),
        "tools/list": result_body(tools_result),
        "resources/list": result_body({"resources": []}),
        "resources/templates/list": result_body(templates_list_result()),
        "prompts/list": result_body(prompts_list_result()),
        # Nothing can be pushed statelessly; subscribe is not advertised, the calls still succeed.
        "resources/subscribe": result_body({}),
        "resources/unsubscribe": result_body({}),
    }


def initialize_version(params: JsonObject) -> str:
    """The version answered to ``initialize``: the requested one if we speak it, else the latest."""
    requested = params.get("protocolVersion")
    # Only a string can name a version; any other JSON value gets the latest (never a lookup error).
    return requested if isinstance(requested, str) and requested in LEGACY_VERSIONS else LATEST_LEGACY_VERSION


def set_level(params: JsonObject) -> JsonObject:
    """``logging/setLevel``: accept a valid level (stateless, so nothing persists) and return ``{}``.

    Raises:
        ProtocolError: -32602 for a missing, non-string or unknown level.
    """
    level = params.get("level")
    # A list or object is unhashable: test the type before the set lookup.
    if not isinstance(level, str) or level not in LOG_LEVELS:
        raise ProtocolError(INVALID_PARAMS, "Invalid log level: expected one of " + ", ".join(sorted(LOG_LEVELS)))
    return {}
