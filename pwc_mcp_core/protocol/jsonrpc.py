"""JSON-RPC 2.0 codes, body builders and the one (era, code) → HTTP status table.

Bodies are built in two halves so pre-serialized results can be reused: a
*body* is the response object without ``jsonrpc``/``id`` (``b'{"result":…}'``
or ``b'{"error":…}'``, the shape `execution.execute` returns) and
`splice_id` puts the envelope in front without parsing (ARCHITECTURE.md §2).
Serialization is stdlib `json`, compact, UTF-8, ``ensure_ascii=False``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "HEADER_MISMATCH",
    "HTTP_STATUS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Era",
    "dumps",
    "encode_id",
    "error_body",
    "error_response",
    "has_result_object",
    "http_status",
    "insert_into_result",
    "result_body",
    "splice_id",
]

Era = Literal["legacy", "modern"]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002
"""Legacy-era unknown resource; 2026-07-28 uses -32602 instead (docs/protocol.md §2)."""
HEADER_MISMATCH: Final = -32020
MISSING_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

HTTP_STATUS: Final[MappingProxyType[tuple[str, int], int]] = MappingProxyType({
    # 2025-11-25: only transport-level rejections leave HTTP 200 (docs/protocol.md §1.2, §2).
    ("legacy", PARSE_ERROR): 400,
    ("legacy", INVALID_REQUEST): 400,
    # 2026-07-28: mandatory statuses (docs/protocol.md §6.2); -32603 and -32002 stay 200.
    ("modern", PARSE_ERROR): 400,
    ("modern", INVALID_REQUEST): 400,
    ("modern", INVALID_PARAMS): 400,
    ("modern", METHOD_NOT_FOUND): 404,
    ("modern", HEADER_MISMATCH): 400,
    ("modern", MISSING_CLIENT_CAPABILITY): 400,
    ("modern", UNSUPPORTED_PROTOCOL_VERSION): 400,
})
"""The one table deciding the HTTP status of a JSON-RPC error, whatever raised it; absent → 200."""

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_RESULT_PREFIX: Final = re.compile(rb'^\{\s*"result"\s*:\s*\{')
_JSONRPC_PREFIX: Final = b'{"jsonrpc":"2.0","id":'


def http_status(era: Era, code: int) -> int:
    """The HTTP status for a JSON-RPC error ``code`` on ``era`` (`HTTP_STATUS`, default 200)."""
    return HTTP_STATUS.get((era, code), 200)


def utf8(json_text: str) -> bytes:
    """UTF-8 bytes of serialized JSON text.

    A lone surrogate (which a client can send as ``"\\ud800"``) cannot be UTF-8
    encoded; it is written back as the ``\\uXXXX`` escape it arrived as, which
    is valid JSON, instead of failing the whole response.
    """
    return json_text.encode("utf-8", "backslashreplace")


def compact(value: object) -> str:
    """Compact JSON text, non-ASCII kept, no NaN/Infinity: the one encoder configuration of every
    body, queue entry and resource text. Raises ``ValueError``/``TypeError`` for unserializable values."""
    return _ENCODER.encode(value)


def dumps(value: object) -> bytes:
    """`compact` as UTF-8 bytes (lone surrogates escaped, see `utf8`)."""
    return utf8(_ENCODER.encode(value))


def encode_id(request_id: str | int | None) -> bytes:
    """The JSON text of a request id (``b'null'`` for an unreadable one)."""
    if type(request_id) is int:
        return str(request_id).encode("ascii")
    return dumps(request_id)


def result_body(result: Mapping[str, object]) -> bytes:
    """``b'{"result":…}'``: a success body waiting for `splice_id`."""
    return b'{"result":' + dumps(result) + b"}"


def error_body(code: int, message: str, data: object = None) -> bytes:
    """``b'{"error":{"code":…,"message":…[,"data":…]}}'``: an error body waiting for `splice_id`."""
    error: dict[str, object] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return b'{"error":' + dumps(error) + b"}"


def error_response(id_json: bytes, code: int, message: str, data: object = None) -> bytes:
    """A whole JSON-RPC error response for the request ``id_json`` (``b"null"`` when unknown):
    the one builder of error bodies, whoever answers (server, refusals, gateway transports)."""
    return splice_id(id_json, error_body(code, message, data))


def splice_id(id_json: bytes, body: bytes) -> bytes:
    """Prefix ``{"jsonrpc":"2.0","id":<id_json>,`` to ``body`` (an object without them), without parsing.

    ``body`` must start with ``{`` and hold at least one member (`result_body`,
    `error_body` and `execution.execute` all do). ``b'{}'`` yields a response
    without result, which callers never produce.
    """
    return _JSONRPC_PREFIX + id_json + b"," + body[1:]


def has_result_object(body: bytes) -> bool:
    """True when ``body`` starts with ``{"result":{`` (whitespace allowed), i.e. a success body."""
    return _RESULT_PREFIX.match(body) is not None


def insert_into_result(body: bytes, member_json: bytes) -> bytes:
    """Insert ``"key":value`` text as the first member of the result object of a success body.

    Used to add ``"resultType":"complete"`` to executor bodies that lack it.
    Raises ``ValueError`` when ``body`` is not a success body.
    """
    match = _RESULT_PREFIX.match(body)
    if match is None:
        raise ValueError("not a result body")
    rest = body[match.end():].lstrip()
    separator = b"" if rest.startswith(b"}") else b","
    return body[:match.end()] + member_json + separator + body[match.end():]
