"""The absolute base URL a client uses to reach this server, for ``/docs`` and ``/.well-known/mcp``.

* Host: the request's ``Host`` header when the Host allowlist admits it (so a forged
  Host never ends up in a page someone copies a configuration from; its port, when it has
  one, is 1–65535 in ASCII digits, `security.parse_port`); otherwise the first exact
  allowlist entry, else ``localhost:<port>``.
* Scheme: ``X-Forwarded-Proto`` (``http``/``https`` only) when the socket peer is a
  proxy we trust (loopback, a unix socket, or ``PWC_MCP_TRUSTED_PROXY_CIDRS``, the same
  peers `identity` takes ``X-Forwarded-For`` from; our nginx sets it), else the
  connection's own scheme.
* Port: a trusted proxy's ``X-Forwarded-Port`` (our nginx sends ``$server_port``) when the
  Host has none, it is a valid port (anything else is ignored, never a 500) and it is not
  the scheme's default, so a site on e.g. 8443 keeps its port. nginx forwards
  ``Host $host``, without a port, so the listener's internal port is never advertised.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from gateway.admission.identity import TrustedNetworks
from gateway.admission.security import SecurityPolicy, parse_port

__all__ = ["PORT_HEADER", "PROTO_HEADER", "PublicUrl"]

PROTO_HEADER: Final = "X-Forwarded-Proto"
PORT_HEADER: Final = "X-Forwarded-Port"
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_SCHEMES: Final = frozenset({"http", "https"})


def _has_port(host: str) -> bool:
    """True when ``host`` (``name``, ``name:port``, ``[v6]`` or ``[v6]:port``) names a port."""
    return host.rsplit("]", 1)[-1].count(":") == 1 if host.startswith("[") else ":" in host


def _trusted_peer(peer: str | None, trusted: TrustedNetworks) -> bool:
    if not peer:
        return True  # a unix-socket peer: only a local proxy can connect
    try:
        address = ipaddress.ip_address(peer.strip("[]"))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or any(address in network for network in trusted)


@dataclass(frozen=True)
class PublicUrl:
    """Builds ``scheme://host`` for a request (see the module docstring).

    Args:
        policy: the Host allowlist.
        trusted: networks of trusted reverse proxies (besides loopback).
        port: the listener port, for the ``localhost`` fallback.
    """

    policy: SecurityPolicy
    trusted: TrustedNetworks
    port: int

    def fallback_host(self) -> str:
        """The host used when the request's own ``Host`` is absent or not allowlisted."""
        return min(self.policy.exact_hosts) if self.policy.exact_hosts else f"localhost:{self.port}"

    def base(self, request: web.Request) -> str:
        """``scheme://host`` without a trailing slash, e.g. ``https://mcp.example.org``."""
        host = self.policy.allowed_host(request.headers.get("Host")) or self.fallback_host()
        scheme = request.scheme if request.scheme in _SCHEMES else "http"
        forwarded = request.headers.get(PROTO_HEADER, "").strip().lower()
        trusted = _trusted_peer(request.remote, self.trusted)
        if forwarded in _SCHEMES and trusted:
            scheme = forwarded
        port = parse_port(request.headers.get(PORT_HEADER, "").strip())
        if trusted and port is not None and not _has_port(host) and port != _DEFAULT_PORTS[scheme]:
            host = f"{host}:{port}"
        return f"{scheme}://{host.lower()}"
