"""Admission refusals as JSON-RPC error objects an MCP SDK can read (README "Admission order").

A refusal keeps its HTTP status and ``Retry-After`` header, and its body is a JSON-RPC
response (https://www.jsonrpc.org/specification#error_object)::

    {"jsonrpc": "2.0", "id": <request id or null>,
     "error": {"code": -32000, "message": "Rate limit exceeded: …; retry after 12 s",
               "data": {"error": "rate_limit_exceeded", "retry_after_s": 12}}}

``data.error`` is the stable machine-readable code (the plain ``{"error": code}`` of
earlier versions); ``data.retry_after_s`` equals ``Retry-After``, or ``null`` when
retrying the same request cannot succeed. A 429 ``rate_limit_exceeded`` also names the limit
that refused in ``data.limit`` (``requests``, ``semantic`` or ``concurrency``), and its message
says which limit it is and the agent's options (`LIMIT_MESSAGES`). The official SDKs surface such a body as the
request's error (Python: ``MCPError`` with this code, message and data). The id is
``null`` when the request could not be read (a body over the bound, or not JSON-RPC).
The nginx site answers its own refusals with the same shape (``nginx/pwc-mcp.conf``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pwc_mcp_core.protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, encode_id, error_response

__all__ = ["LIMIT_MESSAGES", "REFUSALS", "SERVER_BUSY", "Refusal", "refusal_body", "refusal_message",
           "request_id_json"]

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
    "not_acceptable": Refusal(406, INVALID_REQUEST, "Not Acceptable: Client must accept application/json; "
                              "retry with Accept: application/json, text/event-stream"),
    "unsupported_media_type": Refusal(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be "
                                      "application/json; retry with Content-Type: application/json"),
    "request_incomplete": Refusal(400, INVALID_REQUEST, "Request incomplete: the body ended before its "
                                  "declared length; retry with the whole body"),
    # When the refusing limit is unknown: the agent's options for any of them (LIMIT_MESSAGES has each
    # limit's own): when to retry, and that keyword searches and the other tools skip the semantic limit.
    "rate_limit_exceeded": Refusal(429, SERVER_BUSY, "Rate limit exceeded for this client; retry after "
                                   "{retry} s. Semantic and hybrid searches (search_papers without "
                                   "mode=keyword) have a smaller limit of their own; search_papers with "
                                   "mode=keyword and the other tools do not count against it"),
    "server_saturated": Refusal(503, SERVER_BUSY, "Server saturated: too many requests in progress from all "
                                "clients together (the server-wide limit, not this client's own); retry after "
                                "{retry} s"),
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

LIMIT_MESSAGES: Final[dict[str, str]] = {
    "requests": "Rate limit exceeded (requests per client per minute): this client has used its request budget "
                "for the current 60 s window, and every request counts, keyword searches and every other tool "
                "included; retry after {retry} s, when its oldest request leaves the window",
    "semantic": "Rate limit exceeded (semantic searches per client per minute): this client has used its budget "
                "of semantic and hybrid searches (search_papers without mode=keyword) for the current 60 s "
                "window; retry after {retry} s for another such search, or go on now with search_papers "
                "mode=keyword or any other tool, which this limit does not count",
    "concurrency": "Rate limit exceeded (concurrent requests per client): this client has too many requests in "
                   "progress at once; wait until one of them returns and retry after {retry} s, sending calls "
                   "one after another rather than all at once",
}
"""The message of a 429 ``rate_limit_exceeded`` by the limit that refused (an admission ``Decision.kind``)."""


def request_id_json(message: object) -> bytes:
    """The JSON text of a parsed request's id (a string or an integer), else ``b"null"``."""
    request_id = message.get("id") if isinstance(message, dict) else None
    return encode_id(request_id) if type(request_id) is str or type(request_id) is int else b"null"


def refusal_message(error: str, *, limit_bytes: int, retry_after_s: int | None = None,
                    limit: str | None = None) -> str:
    """The human message of the refusal ``error``: for ``rate_limit_exceeded`` refused by a known
    ``limit`` (`LIMIT_MESSAGES`), that limit's own; else the code's (`REFUSALS`).

    Raises:
        KeyError: ``error`` is not a known refusal.
    """
    named = _named_limit(error, limit)
    template = REFUSALS[error].message if named is None else LIMIT_MESSAGES[named]
    return template.format(retry=retry_after_s, limit=limit_bytes)


def _named_limit(error: str, limit: str | None) -> str | None:
    """``limit`` when it has a message of its own for ``error`` (a 429 ``rate_limit_exceeded``), else None."""
    return limit if error == "rate_limit_exceeded" and limit in LIMIT_MESSAGES else None


def refusal_body(error: str, *, limit_bytes: int, id_json: bytes = b"null", retry_after_s: int | None = None,
                 limit: str | None = None) -> bytes:
    """The serialized JSON-RPC refusal for ``error`` (a `REFUSALS` key).

    Args:
        error: the refusal's code, e.g. ``"rate_limit_exceeded"``.
        id_json: the request id as JSON text (`request_id_json`); ``b"null"`` when unknown.
        retry_after_s: the ``Retry-After`` seconds sent with it, or ``None`` (do not retry as is).
        limit_bytes: the byte bound named by the too-large messages (``max_body_bytes``).
        limit: the admission limit that refused (``Decision.kind``); a 429 then says which limit it
            was and what the agent can do, and carries it as ``data.limit``.

    Raises:
        KeyError: ``error`` is not a known refusal.
    """
    kind = REFUSALS[error]
    message = refusal_message(error, limit_bytes=limit_bytes, retry_after_s=retry_after_s, limit=limit)
    data: dict[str, str | int | None] = {"error": error, "retry_after_s": retry_after_s}
    named = _named_limit(error, limit)
    if named is not None:
        data["limit"] = named
    return error_response(id_json, kind.code, message, data)
