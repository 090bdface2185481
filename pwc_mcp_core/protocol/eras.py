"""Era routing, request classification and the 2026-07-28 envelope/header checks.

* `route` picks the era from ``MCP-Protocol-Version`` (docs/protocol.md §0, §1.5, §6.4).
* `classify` is the cheap, pure look at a request the gateway needs before
  dispatch (admission, semantic-search limit, log labels; docs/tool-contract.md §2.3, §2.6).
* `check_modern_request` runs the 2026-07-28 ladder: ``_meta`` envelope
  (-32602) → headers agree with the body (-32020) (docs/protocol.md §6.2).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.protocol.json_types import JsonValue
from pwc_mcp_core.protocol.jsonrpc import HEADER_MISMATCH, INVALID_PARAMS
from pwc_mcp_core.protocol.versions import (
    CLIENT_CAPABILITIES_META_KEY,
    KNOWN_VERSIONS,
    LEGACY_VERSIONS,
    MODERN_VERSION,
    PROTOCOL_VERSION_META_KEY,
)

__all__ = [
    "METHOD_HEADER",
    "NAME_BEARING_METHODS",
    "NAME_HEADER",
    "PROTOCOL_HEADER",
    "Classification",
    "check_modern_request",
    "classify",
    "decode_header_value",
    "is_semantic_search",
    "lower_headers",
    "protocol_label",
    "route",
]

PROTOCOL_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"

NAME_BEARING_METHODS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""Method → the params key ``Mcp-Name`` mirrors (docs/protocol.md §6.2)."""

_SEMANTIC_MODES: Final = frozenset({"semantic", "hybrid"})
_B64_SENTINEL: Final = re.compile(r"^=\?base64\?(.*)\?=$")
_LEGACY: Final = frozenset(LEGACY_VERSIONS)


def lower_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    """A header mapping readable with lower-case names.

    aiohttp's ``CIMultiDictProxy`` is already case-insensitive and is returned as
    is; a plain ``dict`` (tests, stdio) is copied with lower-cased keys.
    """
    if isinstance(headers, dict):
        return {k.lower(): v for k, v in headers.items()}
    return headers


def route(version: str | None) -> Literal["legacy", "modern"] | None:
    """The era for an ``MCP-Protocol-Version`` value: absent or handshake-era → legacy,
    2026-07-28 → modern, anything else → ``None`` (answered 400)."""
    if version is None or version in _LEGACY:
        return "legacy"
    if version == MODERN_VERSION:
        return "modern"
    return None


def protocol_label(version: str | None) -> str:
    """Log label: ``legacy`` without the header, a known version verbatim, else ``unknown``."""
    if version is None:
        return "legacy"
    return version if version in KNOWN_VERSIONS else "unknown"


def decode_header_value(value: str | None) -> str | None:
    """Decode the ``=?base64?…?=`` form of ``Mcp-Name`` (docs/protocol.md §6.2); ``None`` if malformed."""
    if value is None:
        return None
    match = _B64_SENTINEL.match(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


class _Marker:
    """A named marker value that no JSON document can produce."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


NOT_JSON: Final = _Marker("NOT_JSON")
"""`Classification.message` of a body that is not valid JSON."""
UNPARSED: Final = _Marker("UNPARSED")
"""`Classification.message` when the body was not parsed (the handler parses it itself)."""


@dataclass(frozen=True, slots=True)
class Classification:
    """What the gateway needs to know about a request before dispatching it.

    Attributes:
        method: the JSON-RPC method, or ``None`` (not JSON, not a request object).
        tool: one of the 21 tool names, or ``None``; from ``params.name`` when it is a
            string, else from the ``Mcp-Name`` header (the body wins).
        is_semantic_search: ``search_papers`` with ``mode`` ``semantic``, ``hybrid`` or
            omitted (omitted = hybrid, docs/tool-contract.md §2.3).
        era: ``legacy``, ``modern`` or ``invalid`` (unsupported ``MCP-Protocol-Version``).
        protocol_label: `protocol_label` of the header, safe to log.
        message: the parsed body (any JSON value), `NOT_JSON` when it is not valid JSON,
            or `UNPARSED`; `McpServer.handle` reuses it instead of parsing the body again.
    """

    method: str | None
    tool: str | None
    is_semantic_search: bool
    era: Literal["legacy", "modern", "invalid"]
    protocol_label: str
    message: JsonValue | _Marker = UNPARSED


def parse_body(body: bytes) -> JsonValue | _Marker:
    """The JSON value of ``body``, or `NOT_JSON` (invalid JSON or UTF-8, or nested too deep)."""
    try:
        value: JsonValue = json.loads(body)
        return value
    except (ValueError, UnicodeDecodeError, RecursionError):
        return NOT_JSON


def classify(body: bytes, headers: Mapping[str, str], *, tool_names: frozenset[str]) -> Classification:
    """Classify a POST body without dispatching it. Never raises.

    ``tool_names`` are the served tools (the registry's); any other name is dropped, so an
    untrusted name never reaches logs or limits.
    """
    headers = lower_headers(headers)
    version = headers.get(PROTOCOL_HEADER)
    message = parse_body(body)
    method: str | None = None
    params: dict[str, JsonValue] | None = None
    if isinstance(message, dict):
        raw_method, raw_params = message.get("method"), message.get("params")
        method = raw_method if isinstance(raw_method, str) else None
        params = raw_params if isinstance(raw_params, dict) else None
    name = params.get("name") if params is not None else None
    if not isinstance(name, str):
        name = decode_header_value(headers.get(NAME_HEADER))
    tool = name if name in tool_names else None
    semantic = is_semantic_search(tool, params.get("arguments") if params is not None else None)
    return Classification(method=method, tool=tool, is_semantic_search=semantic,
                          era=route(version) or "invalid", protocol_label=protocol_label(version),
                          message=message)


def is_semantic_search(tool: str | None, arguments: object) -> bool:
    """Whether a call of ``tool`` counts against the semantic-search limit: ``search_papers``
    with ``mode`` ``semantic``, ``hybrid`` or omitted (omitted = hybrid, docs/tool-contract.md §2.3)."""
    if tool != "search_papers":
        return False
    if not isinstance(arguments, dict) or "mode" not in arguments:
        return True
    mode = arguments["mode"]
    # Only a string can name a mode; anything else (null too) is left for validation to refuse.
    return isinstance(mode, str) and mode in _SEMANTIC_MODES


def check_modern_request(message: Mapping[str, JsonValue], headers: Mapping[str, str]) -> None:
    """Validate a 2026-07-28 request's ``_meta`` envelope and its headers (docs/protocol.md §6.2, §6.3).

    Args:
        message: the request object (``method`` is a string).
        headers: lower-case readable headers (`lower_headers`).

    Raises:
        ProtocolError: -32602 when ``params._meta`` lacks the protocol version or the
            client capabilities; -32020 when ``MCP-Protocol-Version``, ``Mcp-Method`` or
            ``Mcp-Name`` disagree with the body.
    """
    params = message.get("params")
    if not isinstance(params, dict):
        params = {}
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise ProtocolError(INVALID_PARAMS, "params._meta must be an object carrying the required "
                            f"'{PROTOCOL_VERSION_META_KEY}' and '{CLIENT_CAPABILITIES_META_KEY}' envelope keys")
    missing = [k for k in (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY) if k not in meta]
    if missing:
        raise ProtocolError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): "
                            f"{', '.join(missing)}")
    if not isinstance(meta[CLIENT_CAPABILITIES_META_KEY], dict):
        raise ProtocolError(INVALID_PARAMS, f"'{CLIENT_CAPABILITIES_META_KEY}' must be an object")
    if headers.get(PROTOCOL_HEADER) != meta[PROTOCOL_VERSION_META_KEY]:
        raise ProtocolError(HEADER_MISMATCH,
                            "mcp-protocol-version header does not match the request envelope's protocol version")
    method = message["method"]
    if not isinstance(method, str) or headers.get(METHOD_HEADER) != method:
        raise ProtocolError(HEADER_MISMATCH, "mcp-method header does not match the request body's method")
    key = NAME_BEARING_METHODS.get(method)
    if key is not None:
        value = params.get(key)
        if value is not None and decode_header_value(headers.get(NAME_HEADER)) != value:
            raise ProtocolError(HEADER_MISMATCH,
                                f"mcp-name header does not match the request body's '{key}' parameter")
