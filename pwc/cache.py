"""The cache seam between the `pwc` transport and whoever runs it.

The CLI runs with :class:`NullCache`. The MCP workers pass a shared Redis cache
(``pwc_mcp_core``) and the embedded server an in-memory one; both implement
:class:`Cache`. Values are opaque bytes (the transport serialises a response
envelope); keys are short ASCII strings chosen by the transport.

TTL policy (``docs/requirements.md``, "Safety and operations"; spec
``docs/tool-contract.md`` §8): search and paper lists 60 s, taxonomy 600 s, paper and
benchmark data 300 s, Markdown chunks 3600 s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Cache", "NullCache", "ttl_for_path"]

SEARCH_TTL_S = 60.0
TAXONOMY_TTL_S = 600.0
RECORD_TTL_S = 300.0
MARKDOWN_TTL_S = 3600.0

_SEARCH_PATHS = ("papers/search", "papers/", "papers/recent", "papers/trending")
_TAXONOMY_PREFIXES = ("tasks/", "methods/", "areas/", "conferences/", "organizations/", "frameworks/")


class Cache(Protocol):
    """A get-or-load cache for upstream responses.

    ``fetch(key, ttl_s, loader)`` returns the cached bytes for ``key`` or calls
    ``loader()`` (which performs the upstream request and returns bytes, or
    raises), stores its result for ``ttl_s`` seconds and returns it. Errors
    raised by ``loader`` propagate and are never cached. A distributed
    implementation may make concurrent callers of one key wait for a single
    ``loader`` call (single-flight).
    """

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes: ...


class NullCache:
    """A cache that never stores anything: every ``fetch`` calls the loader."""

    def fetch(self, key: str, ttl_s: float, loader: Callable[[], bytes]) -> bytes:
        return loader()


def ttl_for_path(path: str) -> float:
    """Seconds an upstream response for ``path`` (no leading slash) may be cached.

    Examples: ``papers/search`` → 60, ``tasks/1/page`` → 600,
    ``datasets/72/evaluations/`` → 300, ``research/papers/x/read`` → 3600 when
    the request pins a content version (the caller decides that), else 300.
    """
    path = path.lstrip("/")
    if path in _SEARCH_PATHS:
        return SEARCH_TTL_S
    if path.startswith(_TAXONOMY_PREFIXES):
        return TAXONOMY_TTL_S
    return RECORD_TTL_S
