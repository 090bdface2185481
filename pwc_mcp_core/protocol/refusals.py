"""Admission refusals as JSON-RPC error objects an MCP SDK can read (README "Admission order").

A refusal keeps its HTTP status and ``Retry-After`` header, and its body is a JSON-RPC
response (https://www.jsonrpc.org/specification#error_object)::

    {"jsonrpc": "2.0", "id": <request id or null>,
     "error": {"code": -32000, "message": "Rate limit exceeded: …; retry after 12 s",
               "data": {"error": "rate_limit_exceeded", "retry_after_s": 12}}}

``data.error`` is the stable machine-readable code (the plain ``{"error": code}`` of
earlier versions); ``data.retry_after_s`` equals ``Retry-After``, or ``null`` when
retrying the same request cannot succeed. The official SDKs surface such a body as the
request's error (Python: ``MCPError`` with this code, message and data). The id is
``null`` when the request could not be read (a body over the bound, or not JSON-RPC).
The nginx site answers its own refusals with the same shape (``nginx/pwc-mcp.conf``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, encode_id, error_response

__all__ = ["REFUSALS", "SERVER_BUSY", "Refusal", "refusal_body", "request_id_json"]

SERVER_BUSY: Final = -32000
"""Implementation-defined JSON-RPC server error: a limit refused the request; retry later."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """One kind of refusal: its HTTP status, JSON-RPC code and the message (``{retry}`` = seconds)."""

    status: int
    code: int
    message: str


REFUSALS: Final[dict[str, Refusal]] = {
    "request_too_large": Refusal(413, INVALID_REQUEST, "Request too large: the body exceeds {limit} bytes; "
                                 "do not retry it as is, send a smaller request"),
    "unsupported_content_encoding": Refusal(415, INVALID_REQUEST, "Unsupported Content-Encoding: send the "
                                            "request body uncompressed (identity); do not retry it compressed"),
    "request_incomplete": Refusal(400, INVALID_REQUEST, "Request incomplete: the body ended before its "
                                  "declared length; retry with the whole body"),
    # The agent's options: when to retry, and (the one true for every limit) that the smaller
    # semantic-search limit does not count keyword searches or the other tools.
    "rate_limit_exceeded": Refusal(429, SERVER_BUSY, "Rate limit exceeded for this client; retry after "
                                   "{retry} s. Semantic and hybrid searches (search_papers without "
                                   "mode=keyword) have a smaller limit of their own; search_papers with "
                                   "mode=keyword and the other tools do not count against it"),
    "server_saturated": Refusal(503, SERVER_BUSY, "Server saturated: too many requests in progress; "
                                "retry after {retry} s"),
    "limits_unavailable": Refusal(503, SERVER_BUSY, "Rate limits unavailable: the limit store cannot be "
                                  "reached, so no request is admitted; retry after {retry} s"),
    "too_many_streams": Refusal(429, SERVER_BUSY, "Too many open streams: close one (GET /sse) or retry "
                                "after {retry} s"),
    "invalid_host": Refusal(421, INVALID_REQUEST, "Invalid Host header: this server does not answer for that "
                            "host name; do not retry it as is, use the server's own address (PWC_MCP_ALLOWED_HOSTS)"),
    "invalid_origin": Refusal(403, INVALID_REQUEST, "Invalid Origin header: requests from this web origin are "
                              "not allowed (PWC_MCP_ALLOWED_ORIGINS); do not retry it as is, native clients send none"),
    "response_too_large": Refusal(503, INTERNAL_ERROR, "Response too large: the answer exceeds {limit} bytes; "
                                  "do not retry it as is, ask for less (a smaller limit or page)"),
}
"""``data.error`` code → how it is answered."""


def request_id_json(message: object) -> bytes:
    """The JSON text of a parsed request's id (a string or an integer), else ``b"null"``."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return encode_id(request_id) if type(request_id) is str or type(request_id) is int else b"null"


def refusal_body(error: str, *, limit_bytes: int, id_json: bytes = b"null", retry_after_s: int | None = None) -> bytes:
    """The serialized JSON-RPC refusal for ``error`` (a `REFUSALS` key).

    Args:
        error: the refusal's code, e.g. ``"rate_limit_exceeded"``.
        id_json: the request id as JSON text (`request_id_json`); ``b"null"`` when unknown.
        retry_after_s: the ``Retry-After`` seconds sent with it, or ``None`` (do not retry as is).
        limit_bytes: the byte bound named by the too-large messages (``max_body_bytes``).

    Raises:
        KeyError: ``error`` is not a known refusal.
    """
    kind = REFUSALS[error]
    message = kind.message.format(retry=retry_after_s, limit=limit_bytes)
    return error_response(id_json, kind.code, message, {"error": error, "retry_after_s": retry_after_s})
