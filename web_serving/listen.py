"""Listening: the address check both services run before anything starts (standard library only)."""

from __future__ import annotations

import errno
import socket

__all__ = ["CannotListen", "bind_address", "check_listen"]


def bind_address(host: str, port: int) -> str:
    """``host:port`` for gunicorn and for messages, with IPv6 hosts bracketed."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class CannotListen(Exception):
    """The address cannot be listened on (a busy port, an address of another machine)."""


def check_listen(host: str, port: int, *, host_hint: str, port_hint: str) -> None:
    """Fail before anything is served (or built) when ``host:port`` cannot be listened on.

    Args:
        host: the address to bind.
        port: the port to bind.
        host_hint: what to do about an address that is not this machine's (e.g. "set PWC_MCP_HOST ...").
        port_hint: what to do about a busy port (e.g. "pass --port with a free port").

    Raises:
        CannotListen: one line naming the address, the reason and the hint.
    """
    shown = bind_address(host, port)
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise CannotListen(f"cannot listen on {shown}: {exc.strerror or exc}; {host_hint}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind
            try:
                probe.bind(address)
            except OSError as exc:
                reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
                raise CannotListen(f"cannot listen on {shown}: {reason}; {port_hint}") from None
