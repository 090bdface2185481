"""Metrics recorded where tool calls run (gateway in embedded mode, or a worker), content-free.

The counters live here, not in the gateway, because workers must record them
too and may not import the gateway. With ``PROMETHEUS_MULTIPROC_DIR`` set to a
directory shared by the gateway and the workers of one host (``pwc-mcp serve``
and the systemd units do this), the gateway's ``/metrics`` sums every process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from prometheus_client import Counter

from pwc.cache import Cache

__all__ = ["CACHE_REQUESTS", "UPSTREAM_REQUESTS", "InstrumentedCache"]

CACHE_REQUESTS: Final = Counter("pwc_mcp_cache_requests", "Upstream cache lookups by result (hit|miss)", ["result"])
UPSTREAM_REQUESTS: Final = Counter("pwc_mcp_upstream_requests", "Catalog calls by outcome (ok|error)", ["outcome"])


class InstrumentedCache:
    """A :class:`pwc.cache.Cache` that counts hits, misses and catalog calls around another cache.

    A lookup whose loader runs is a miss and one catalog call (``ok`` when the
    loader returns, ``error`` when it raises); a lookup answered without the
    loader is a hit. The wrapped cache's behaviour is unchanged.
    """

    def __init__(self, inner: Cache) -> None:
        self._inner = inner

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        loaded = False

        def counted_loader() -> bytes:
            nonlocal loaded
            loaded = True
            try:
                value = loader()
            except Exception:
                UPSTREAM_REQUESTS.labels(outcome="error").inc()
                raise
            UPSTREAM_REQUESTS.labels(outcome="ok").inc()
            return value

        try:
            return self._inner.fetch(key, ttl_s, counted_loader)
        finally:
            CACHE_REQUESTS.labels(result="miss" if loaded else "hit").inc()
