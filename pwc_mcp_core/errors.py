"""The `pwc_mcp_core` error tree.

    CoreError
    ├── ConfigError            a setting is missing or invalid (startup stops, message names the variable)
    ├── ToolError              a tool failed in a way the model can act on; becomes an `isError`
    │                          result whose text is the message (prefixes of docs/tool-contract.md §3.1:
    │                          `not_found:`, `ambiguous:`, `invalid_argument:`, `upstream_error:` …)
    ├── ProtocolError          the dispatcher rejects a request (JSON-RPC error code + message)
    └── ResourceError          `resources/read` failed; becomes a JSON-RPC error (code, data.uri)

A dispatched call's fate (no worker, a timeout, an answer over the bound) is not an error
here: it is the typed `Outcome` of `pwc_mcp_core.runtime.dispatch`.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "CoreError",
    "ProtocolError",
    "ResourceError",
    "ToolError",
]


class CoreError(Exception):
    """Root of the errors `pwc_mcp_core` raises on purpose."""


class ConfigError(CoreError):
    """A setting is missing or invalid; the message names the variable and what it accepts."""


class ToolError(CoreError):
    """A tool failure reported to the client as an ``isError`` result with this message."""


class ResourceError(CoreError):
    """A ``resources/read`` failure, reported as a JSON-RPC error.

    Attributes:
        code: the JSON-RPC error code (-32002 on the legacy era, -32602 on 2026-07-28).
        uri: the requested URI, echoed in ``error.data.uri``.
    """

    def __init__(self, message: str, *, code: int, uri: str) -> None:
        super().__init__(message)
        self.code = code
        self.uri = uri


class ProtocolError(CoreError):
    """A request the dispatcher rejects with a JSON-RPC error (never a tool failure).

    Attributes:
        code: the JSON-RPC error code (`jsonrpc.INVALID_PARAMS`, …).
        data: optional ``error.data`` value.
    """

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
