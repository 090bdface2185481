"""Host and Origin allowlists for ``POST /mcp``: pure checks, validated at construction.

Semantics follow the MCP SDK's transport security (docs/tool-contract.md §1.6, docs/style.md §7
practice 7): an allowed Host entry is an exact ``host[:port]`` or ``host:*`` (any port, or
none: nginx's ``Host $host`` carries no port; a bare ``localhost`` entry does not match
``localhost:8000``); an allowed Origin is an exact ``scheme://host[:port]``. A port in a
``Host`` is 1–5 ASCII digits naming 1–65535 (`parse_port`): ``localhost:99999999``,
``localhost:²`` or Arabic-Indic digits are refused. A missing Origin is allowed (native
clients), ``null`` never is, and a wildcard Origin entry is refused at startup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from pwc_mcp_core.runtime.core_settings import checked_hosts, checked_origins

__all__ = ["SecurityPolicy", "parse_port"]

_PORT: Final = re.compile(r"[0-9]{1,5}")  # not \d: that admits every Unicode digit ("²", "٨")
_HOSTS_REMEMBERED: Final = 64
"""`SecurityPolicy.host_allowed` remembers the verdict on this many distinct ``Host`` values (a
deployment sees a handful; the cap keeps a client's made-up values from growing it)."""


def parse_port(value: str) -> int | None:
    """The TCP port ``value`` names: 1–5 ASCII digits, 1–65535; else None (never raises)."""
    if not _PORT.fullmatch(value):
        return None
    port = int(value)
    return port if 1 <= port <= 65535 else None


def _split_host_port(value: str) -> tuple[str, str | None]:
    """``"h:1"`` → ``("h", "1")``; ``"[::1]:1"`` → ``("[::1]", "1")``; no port → ``(value, None)``."""
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return value, None
        rest = value[end + 1:]
        return value[: end + 1], rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    if not sep or ":" in host:
        return value, None
    return host, port


@dataclass(frozen=True)
class SecurityPolicy:
    """The validated Host and Origin allowlists.

    Build it with :meth:`from_lists`; ``host_allowed`` and ``origin_allowed`` are
    pure and cheap (set lookups).
    """

    exact_hosts: frozenset[str]
    any_port_hosts: frozenset[str]
    origins: frozenset[str]
    _host_verdicts: dict[str | None, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_lists(cls, hosts: Iterable[str], origins: Iterable[str]) -> SecurityPolicy:
        """Build the policy from the allowlists (checked by ``settings.checked_hosts/_origins``, lower-cased).

        Raises:
            ConfigError: an Origin entry is a wildcard (or contains ``*``) or not an origin, or a
                Host entry uses ``*`` anywhere but as the whole port.
        """
        exact: set[str] = set()
        any_port: set[str] = set()
        for entry in (host.lower() for host in checked_hosts(hosts)):
            if entry.endswith(":*"):
                any_port.add(entry[:-2])
            else:
                name, port = _split_host_port(entry)
                number = None if port is None else parse_port(port)
                exact.add(entry if number is None else f"{name}:{number}")  # "h:08000" is h:8000
        allowed_origins = frozenset(origin.lower() for origin in checked_origins(origins))
        return cls(frozenset(exact), frozenset(any_port), allowed_origins)

    def host_allowed(self, host: str | None) -> bool:
        """True when the request's ``Host`` header matches an entry (absent → False).

        The verdict on a value already seen is a dict lookup: every request carries a Host, and
        parsing it again cost each one four calls (`bench/ab_embedded.py`)."""
        verdicts = self._host_verdicts
        verdict = verdicts.get(host)
        if verdict is None:
            verdict = self.allowed_host(host) is not None
            if len(verdicts) < _HOSTS_REMEMBERED:
                verdicts[host] = verdict
        return verdict

    def allowed_host(self, host: str | None) -> str | None:
        """The request's ``Host`` lower-cased, its port as a plain number, when it matches an
        entry; None when it does not, is absent, or its port is not a valid port."""
        if not host:
            return None
        name, port = _split_host_port(host.strip().lower())
        if port is None:
            return name if name in self.exact_hosts or name in self.any_port_hosts else None
        number = parse_port(port)
        if number is None:
            return None
        value = f"{name}:{number}"
        return value if value in self.exact_hosts or name in self.any_port_hosts else None

    def origin_allowed(self, origin: str | None) -> bool:
        """True when ``Origin`` is absent or exactly allowlisted; ``null`` is refused."""
        if origin is None:
            return True
        value = origin.strip().lower()
        if not value or value == "null":
            return False
        return value in self.origins
