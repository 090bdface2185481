"""Admission of ``POST /mcp``: the ordered checks a request passes before MCP handling.

Fixed order (docs/tool-contract.md §1.1, §2.3; the first failing check answers):

0. ``Content-Encoding`` absent or ``identity``, before a byte of the body is read →
   415 ``unsupported_content_encoding``. MCP clients never compress requests, and the
   server does not inflate (aiohttp's ``auto_decompress`` is off, ``gateway.process.serving``), so a
   compressed body, valid or a bomb, costs no CPU and delays no other client.
1. Body at most ``max_body_bytes`` (2 MiB): ``Content-Length`` checked first, then the
   bytes actually read are counted (chunked bodies) → 413 ``request_too_large``; a body
   that ends early (the client aborted) → 400 ``request_incomplete``, logged as one line.
2. ``Host`` allowlist → 421 ``invalid_host`` ("Invalid Host header: …").
3. ``Origin`` allowlist (absent allowed, ``null`` refused) → 403 ``invalid_origin``.
4. Client identity (:mod:`gateway.admission.identity`), hashed with a key derived from the cursor secret.
5. Limits, checked and recorded atomically (:mod:`gateway.admission.limits`):
   global concurrency → 503 ``server_saturated``, ``Retry-After: 1``;
   requests/min, semantic-or-hybrid searches/min, per-client concurrency →
   429 ``rate_limit_exceeded``, ``Retry-After`` = seconds until the window frees;
   limit store unreachable → 503 ``limits_unavailable``, ``Retry-After: 1``
   (fail closed: no request is served without being counted).

Then :mod:`gateway.surfaces.streamable_http` checks Accept (406) and Content-Type (415) and runs the MCP
server; a dispatched call's answer over the bound is 503 ``response_too_large``.
Every refusal above (0, 1, 2, 3, 5 and the response bound) is a JSON-RPC error object with the
request id (``null`` when the body was not read) and ``data: {"error": <code>,
"retry_after_s": n}`` (:mod:`pwc_mcp_core.protocol.refusals`). Rejected requests are not recorded.
Behind Redis, a tool call's check 5 runs inside the script that queues the call
(:mod:`gateway.dispatch.gate`); every answer stays the one this order gives.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Final

from aiohttp import ClientPayloadError, web

from gateway.admission import identity
from gateway.admission.limits import Decision, Lease, Limiter, LimitsUnavailable
from gateway.admission.security import SecurityPolicy
from gateway.shared import metrics
from pwc_mcp_core.cluster.admission import LIMITS_UNAVAILABLE
from pwc_mcp_core.protocol.jsonrpc import compact
from pwc_mcp_core.protocol.refusals import REFUSALS, refusal_body
from pwc_mcp_core.runtime.core_settings import DEFAULT_MAX_BODY_BYTES
from pwc_mcp_core.runtime.dispatch import refusal_of

__all__ = ["Admission", "BodyIncomplete", "compact_dumps", "identity_encoded", "json_error", "read_bounded_body",
           "refusal_response"]

# Compact like the reference server's bodies: {"error":"rate_limit_exceeded"}.
compact_dumps = compact


def json_error(status: int, code: str, *, retry_after: int | None = None) -> web.Response:
    """A plain-JSON error ``{"error": code}`` (not JSON-RPC), with ``Retry-After`` if given."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return web.json_response({"error": code}, status=status, headers=headers, dumps=compact_dumps)


_JSON_HEADERS: Final = {"Content-Type": "application/json"}
BODY_TIMEOUT_S: Final = 10.0
"""Seconds a request body may take to arrive in full (then 400 ``request_incomplete``, connection closed)."""


def refusal_response(error: str, *, id_json: bytes = b"null", retry_after: int | None = None,
                     limit_bytes: int = DEFAULT_MAX_BODY_BYTES, close: bool = False,
                     limit: str | None = None) -> web.Response:
    """The JSON-RPC refusal ``error`` (`pwc_mcp_core.protocol.refusals`) with its status and ``Retry-After``.

    ``close`` ends the connection after the answer (a body that broke off cannot be drained);
    ``limit`` is the admission limit that refused (its own message and ``data.limit``).
    """
    headers = dict(_JSON_HEADERS)
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    body = refusal_body(error, id_json=id_json, retry_after_s=retry_after, limit_bytes=limit_bytes, limit=limit)
    response = web.Response(status=REFUSALS[error].status, body=body, headers=headers)
    if close:
        response.force_close()
    return response


def identity_encoded(content_encoding: str | None) -> bool:
    """True when ``Content-Encoding`` is absent or only ``identity`` (any case, any repetition)."""
    if content_encoding is None:
        return True
    return all(token.strip().lower() in ("", "identity") for token in content_encoding.split(","))


class BodyIncomplete(Exception):
    """The request body ended before its declared length (the client aborted or timed out)."""


async def read_bounded_body(request: web.Request, max_bytes: int) -> bytes | None:
    """Read the request body, or return None as soon as it exceeds ``max_bytes``.

    The whole body must arrive within `BODY_TIMEOUT_S`, so a client that sends part of a body
    and stalls holds no connection for long even without nginx in front (compose, the Space).

    Raises:
        BodyIncomplete: the body ended early (client abort), was malformed (bad chunking), or
            did not arrive in time.
    """
    if request.content.is_eof():  # the whole body is buffered already (the usual case): no timer to arm
        return await _read_body(request, max_bytes)
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            return await _read_body(request, max_bytes)
    except TimeoutError as exc:
        raise BodyIncomplete from exc


async def _read_body(request: web.Request, max_bytes: int) -> bytes | None:
    try:
        length = request.content_length
        if length is not None:
            # The usual case: a declared length within the bound is read in one go (aiohttp
            # stops at the declared length, and client_max_size is the same bound).
            return None if length > max_bytes else await request.read()
        chunks: list[bytes] = []
        total = 0
        async for chunk in request.content.iter_chunked(65536):
            total += len(chunk)
            if total > max_bytes:
                return None
            chunks.append(chunk)
        return b"".join(chunks)
    except web.HTTPRequestEntityTooLarge:  # aiohttp's own bound (client_max_size): the same 413
        return None
    except (ClientPayloadError, ConnectionError) as exc:  # a client's fault: no traceback
        raise BodyIncomplete from exc


def _is_unix_peer(request: web.Request) -> bool:
    transport = request.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    return getattr(sock, "family", None) == getattr(socket, "AF_UNIX", object())


@dataclass(frozen=True)
class Admission:
    """Runs checks 1–5 for one request; see the module docstring for the order."""

    policy: SecurityPolicy
    trusted: identity.TrustedNetworks
    limiter: Limiter
    max_body_bytes: int
    identity_key: bytes

    async def check_body(self, request: web.Request) -> bytes | web.Response:
        """Checks 0 and 1: an uncompressed, bounded, complete body, or its refusal (415, 413, 400)."""
        body = await self.read_body(request)
        if isinstance(body, bytes):
            return body
        return refusal_response(body, limit_bytes=self.max_body_bytes, close=body == "request_incomplete")

    async def read_body(self, request: web.Request) -> bytes | str:
        """Checks 0 and 1 as values: the body, or the refusal's code (`pwc_mcp_core.protocol.refusals`)."""
        if not identity_encoded(request.headers.get("Content-Encoding")):
            metrics.record_rejection("content_encoding")
            # The unread body is drained by aiohttp (raw bytes, never inflated): closing with
            # it unread would reset the connection under a proxy still sending it.
            return "unsupported_content_encoding"
        try:
            body = await read_bounded_body(request, self.max_body_bytes)
        except BodyIncomplete:
            return "request_incomplete"
        if body is None:
            metrics.record_rejection("too_large")
            return "request_too_large"
        return body

    def check_transport_security(self, request: web.Request) -> web.Response | None:
        """Checks 2 and 3: Host (421) then Origin (403)."""
        if not self.policy.host_allowed(request.headers.get("Host")):
            metrics.record_rejection("host")
            return refusal_response("invalid_host")
        if not self.policy.origin_allowed(request.headers.get("Origin")):
            metrics.record_rejection("origin")
            return refusal_response("invalid_origin")
        return None

    async def check_client_limits(self, client_hash: str, *, semantic: bool, lease: bool = True,
                                  id_json: bytes = b"null") -> Lease | web.Response | None:
        """Check 5 for a client whose identity (check 4, `client_hash`) is already known: the
        concurrency lease to release (``None`` when ``lease`` is False: the request is counted
        but holds no slot), or the refusal to send (``id_json``: the request id it carries)."""
        decision = await self.decide(client_hash, semantic=semantic, lease=lease)
        return decision.lease if decision.allowed else self.refusal(decision, id_json)

    async def decide(self, client_hash: str, *, semantic: bool, lease: bool = False) -> Decision:
        """Check 5 as a value: the limits' `Decision` (`LIMITS_UNAVAILABLE` when the store is down)."""
        try:
            return await self.limiter.acquire(client_hash, semantic=semantic, lease=lease)
        except LimitsUnavailable:
            return LIMITS_UNAVAILABLE

    def client_hash(self, request: web.Request) -> str:
        """Check 4: the request's client identity, as the keyed hash the limits are stored under."""
        client = identity.resolve_client(request.remote, request.headers, trusted=self.trusted,
                                         unix_socket=_is_unix_peer(request))
        return identity.hash_identity(self.identity_key, client)

    @staticmethod
    def refusal(decision: Decision, id_json: bytes = b"null") -> web.Response:
        """The answer to a refused request (`refusal_of`): 503 or 429, with ``Retry-After`` and the
        message of the limit that refused."""
        metrics.record_rejection(decision.kind)
        code, retry_after = refusal_of(decision)
        return refusal_response(code, id_json=id_json, retry_after=retry_after, limit=decision.kind)

    @staticmethod
    def limits_unavailable(id_json: bytes = b"null") -> web.Response:
        """The answer when the limit store is unreachable (fail closed): 503, ``Retry-After: 1``."""
        return Admission.refusal(LIMITS_UNAVAILABLE, id_json)
