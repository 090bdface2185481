"""Rate-limit identity: who a request is, decided from the socket peer and trusted headers only.

Rules (seed "Safety and operations"; docs/tool-contract.md §2.2):

1. Direct loopback peer (127.0.0.0/8, ::1, IPv4-mapped loopback, or a unix-socket peer):
   a non-empty ``X-Forwarded-For`` → its right-most hop (our own nginx appends the real
   peer there); without one, a valid ``X-PwC-MCP-Client`` names the identity
   ``client:<value>``; otherwise the peer itself.
2. Peer inside ``PWC_MCP_TRUSTED_PROXY_CIDRS``: walk ``X-Forwarded-For`` from the right,
   skipping hops inside the trusted networks; the first hop outside them is the client.
   An invalid entry ends the walk (the last trusted address reached is used, so forged
   garbage can only ever share the proxy's bucket). ``X-PwC-MCP-Client`` is never honoured.
3. Anyone else: the socket peer; headers are ignored.

Several ``X-Forwarded-For`` field lines are combined, in order, into one comma-joined
value before any rule is applied (RFC 9110 §5.3): reading only the first line would let a
client's forged first line win over the line a trusted proxy appended.

Identities leave this module only as keyed hashes (:func:`hash_identity`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = ["CLIENT_HEADER", "FORWARDED_HEADER", "TrustedNetworks", "derive_key", "hash_identity", "parse_networks",
           "resolve_client"]

FORWARDED_HEADER: Final = "X-Forwarded-For"
CLIENT_HEADER: Final = "X-PwC-MCP-Client"
_CLIENT_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
UNKNOWN_PEER: Final = "unknown"
_CACHED_HEADER_CHARS: Final = 512

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
TrustedNetworks = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]


def parse_networks(values: Iterable[object]) -> TrustedNetworks:
    """Normalise CIDR strings (or network objects) into a tuple of networks.

    Raises:
        ValueError: an entry is not a network.
    """
    return tuple(ipaddress.ip_network(str(value).strip(), strict=False) for value in values
                 if str(value).strip())


@functools.lru_cache(maxsize=4096)  # the same few peers and hops come back on every request
def _parse_ip(value: str) -> IPAddress | None:
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _header(headers: Mapping[str, str], name: str) -> str | None:
    getall = getattr(headers, "getall", None)
    if getall is not None:  # aiohttp's multidict: every field line of the name
        lines = getall(name, ())
        # Several field lines are one comma-joined value (RFC 9110 §5.3), so a trusted proxy
        # that appends its own X-Forwarded-For line keeps the right-most position.
        return ",".join(lines) if lines else None
    value = headers.get(name)
    if value is None:
        value = headers.get(name.lower())
    return value


def resolve_client(peer: str | None, headers: Mapping[str, str], *,
                   trusted: TrustedNetworks = (), unix_socket: bool = False) -> str:
    """Return the identity string of a request (not yet hashed).

    ``peer`` is the socket peer address (``request.remote``); ``headers`` any
    case-insensitive mapping, or a plain dict with canonical or lower-case names.
    Returns a normalised IP address, ``client:<name>`` or ``"unknown"``.
    """
    forwarded, name = _header(headers, FORWARDED_HEADER), _header(headers, CLIENT_HEADER)
    if len(forwarded or "") + len(name or "") > _CACHED_HEADER_CHARS:  # keep the cache's memory bounded
        return _resolve.__wrapped__(peer, forwarded, name, trusted, unix_socket)
    return _resolve(peer, forwarded, name, trusted, unix_socket)


# Pure in its inputs, and the same peers, hops and names come back request after request.
@functools.lru_cache(maxsize=4096)
def _resolve(peer: str | None, forwarded_header: str | None, name: str | None, trusted: TrustedNetworks,
             unix_socket: bool) -> str:
    peer_ip = _parse_ip(peer) if peer else None
    peer_id = str(peer_ip) if peer_ip is not None else (peer.strip() if peer and peer.strip() else UNKNOWN_PEER)
    forwarded = [hop.strip() for hop in (forwarded_header or "").split(",")]
    forwarded = [hop for hop in forwarded if hop]

    if unix_socket or (peer_ip is not None and peer_ip.is_loopback):
        if forwarded:
            hop = _parse_ip(forwarded[-1])
            return str(hop) if hop is not None else peer_id
        if name is not None and _CLIENT_NAME.fullmatch(name):
            return f"client:{name}"
        return peer_id

    if peer_ip is not None and any(peer_ip in net for net in trusted):
        current = peer_ip
        for raw in reversed(forwarded):
            hop = _parse_ip(raw)
            if hop is None:
                break
            if not any(hop in net for net in trusted):
                return str(hop)
            current = hop
        return str(current)
    return peer_id


def derive_key(secret: str) -> bytes:
    """The identity-hashing key, derived from a configured secret (the current cursor key).

    Every gateway process and host with the same configuration derives the same key, so
    one client has one budget cluster-wide, and nothing about it lives in Redis.
    """
    return hmac.new(secret.encode("utf-8"), b"pwc-mcp client identity v1", hashlib.sha256).digest()


@functools.lru_cache(maxsize=4096)  # a keyed hash per request was a visible cost; same clients recur
def hash_identity(secret: bytes, identity: str) -> str:
    """Keyed BLAKE2b (16-byte digest, hex) of an identity; ``secret`` is at most 64 bytes."""
    return hashlib.blake2b(identity.encode("utf-8"), key=secret[:64], digest_size=16).hexdigest()
