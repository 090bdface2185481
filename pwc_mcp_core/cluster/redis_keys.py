"""Every Redis key pwc-mcp uses, under one versioned root and the deployment's namespace,
with the TTLs that go with them.

No other module builds key strings. Keys that Lua scripts touch together are
passed to them explicitly as KEYS. Identities appear here only as keyed hashes
(hex digests), never as raw addresses.

**Namespaces.** Two deployments on one Redis database (staging next to production) never
see each other's keys: every key carries the deployment's namespace
(``PWC_MCP_REDIS_NAMESPACE``, by default `derived_namespace` of what makes answers differ:
the catalog URL and the cursor key id). A process chooses it once, at its entry point,
with `use_namespace`, before it builds any key; a process that never chooses (a test, a
tool) uses `DEFAULT_NAMESPACE`.

**Redis Cluster layout.** The control plane (the call Stream, replies, limits, leases,
liveness, SSE sessions) is written as ``pwcmcp:v1:{<namespace>}:...``: one hash tag, so
every multi-key script and pipeline of a deployment stays in one slot. The cache
(``pwcmcp:v1:<namespace>:cache:...``) has no tag: each entry and its lock are used one key
at a time, so they spread over every slot (ARCHITECTURE.md "Redis Cluster").
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = [
    "DEFAULT_NAMESPACE",
    "ROOT",
    "cache_entry",
    "cache_lock",
    "calls_stream",
    "concurrency_client",
    "concurrency_global",
    "derived_namespace",
    "namespace",
    "rate_window",
    "reply_list",
    "sse_client_sessions",
    "sse_holder",
    "sse_inbox",
    "sse_session",
    "sse_sessions_global",
    "use_namespace",
    "valid_namespace",
    "worker_threads",
    "workers_set",
]

ROOT: Final = "pwcmcp:v1:"
DEFAULT_NAMESPACE: Final = "default"
_NAMESPACE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# The key prefixes of the chosen namespace: control keys (one hash tag) and cache keys (none).
_control = f"{ROOT}{{{DEFAULT_NAMESPACE}}}:"
_spread = f"{ROOT}{DEFAULT_NAMESPACE}:"
_namespace = DEFAULT_NAMESPACE


def valid_namespace(name: str) -> bool:
    """Whether ``name`` can be a namespace: 1-64 of ``A-Z a-z 0-9 _ . -`` (no braces, no colons)."""
    return _NAMESPACE.fullmatch(name) is not None


def derived_namespace(api_url: str, cursor_key_id: str) -> str:
    """The default namespace of a deployment: 12 hex digits of a hash of what makes its answers
    differ, the catalog it reads (``api_url``) and the key that signs its cursors (its id)."""
    return hashlib.sha256(f"{api_url}\n{cursor_key_id}".encode()).hexdigest()[:12]


def use_namespace(name: str) -> None:
    """Build every key of this process under ``name`` from now on (called once, at an entry point).

    Raises:
        ValueError: ``name`` is no `valid_namespace`.
    """
    global _control, _spread, _namespace
    if not valid_namespace(name):
        raise ValueError("a Redis namespace is 1-64 of A-Z a-z 0-9 _ . -")
    _namespace, _control, _spread = name, f"{ROOT}{{{name}}}:", f"{ROOT}{name}:"


def namespace() -> str:
    """The namespace this process builds its keys under."""
    return _namespace

# Time a worker may go silent before it is presumed dead and its calls are reclaimed.
HEARTBEAT_TTL_S: Final = 6
# How often a live worker refreshes its heartbeat.
HEARTBEAT_INTERVAL_S: Final = 1.5
# A reply nobody collects (gateway gone) disappears after this long.
REPLY_TTL_S: Final = 60
# A single-flight loader lock lives this long unless its holder renews it: short, so the
# lock of a holder that died frees within seconds (a reclaimed call must not wait 35 s).
CACHE_LOCK_TTL_S: Final = 3
# How often a live holder renews its locks (a third of their TTL).
CACHE_LOCK_RENEW_S: Final = 1.0
# How long a single-flight waiter waits before it loads by itself: the loader's own
# timeout (25 s) plus a margin.
CACHE_WAIT_S: Final = 35


def calls_stream() -> str:
    """The Stream of pending tool calls (consumer group ``workers``).

    Its name carries the reply format's version (``cluster.replies``): during a rolling upgrade
    a worker takes only calls whose gateway reads its replies."""
    return f"{_control}calls:r2"


def reply_list(gateway_id: str) -> str:
    """The list a gateway process reads replies for its own calls from."""
    return f"{_control}reply:{gateway_id}"


def workers_set() -> str:
    """Sorted set of worker ids scored by their last heartbeat (unix ms)."""
    return f"{_control}workers"


def worker_threads() -> str:
    """Hash of consumer name → its thread count (calls it runs at once), kept beside ``workers_set``."""
    return f"{_control}worker-threads"


def cache_entry(digest: str) -> str:
    """A cached upstream response, by the digest of its request."""
    return f"{_spread}cache:{digest}"


def cache_lock(digest: str) -> str:
    """The single-flight lock held while one process loads ``cache_entry(digest)``."""
    return f"{_spread}cache-lock:{digest}"


def rate_window(kind: str, client_hash: str) -> str:
    """Sliding-window log (sorted set) of one client's admitted requests of ``kind``."""
    return f"{_control}rate:{kind}:{client_hash}"


def concurrency_client(client_hash: str) -> str:
    """Sorted set of one client's in-flight leases, scored by lease expiry (unix ms)."""
    return f"{_control}conc:client:{client_hash}"


def concurrency_global() -> str:
    """Sorted set of every in-flight lease, scored by lease expiry (unix ms)."""
    return f"{_control}conc:global"


# An SSE session's record and its places in the stream caps live this long unless the
# process holding the stream renews them. It outlasts a Redis stall (a SIGSTOP, a long fork)
# of up to about this long, like worker liveness (liveness.MAX_GRACE_S): a dead holder is
# noticed at once by its missing inbox connection (sse_holder), not by this expiry, which
# only collects what a dead holder left.
SSE_SESSION_TTL_S: Final = 30
# How often a live holder renews its sessions (well inside their TTL).
SSE_SESSION_RENEW_S: Final = 2.0
# Messages for a holder that stopped reading disappear after this long.
SSE_INBOX_TTL_S: Final = 60


def sse_session(session_id: str) -> str:
    """Hash of one HTTP+SSE session: ``holder`` (process id) and ``client`` (identity hash)."""
    return f"{_control}sse:session:{session_id}"


def sse_client_sessions(client_hash: str) -> str:
    """Sorted set of one client's open SSE session ids, scored by expiry (unix ms)."""
    return f"{_control}sse:client:{client_hash}"


def sse_sessions_global() -> str:
    """Sorted set of every open SSE session id, scored by expiry (unix ms)."""
    return f"{_control}sse:all"


def sse_holder(holder_id: str) -> str:
    """The Redis client id of one gateway process's inbox connection (its presence: when the
    process dies, Redis drops that connection at once)."""
    return f"{_control}sse:holder:{holder_id}"


def sse_inbox(holder_id: str) -> str:
    """The list one gateway process reads the messages for the SSE streams it holds from."""
    return f"{_control}sse:inbox:{holder_id}"
