"""Every Redis key pwc-mcp uses, under one versioned root, with the TTLs that go with them.

No other module builds key strings. Keys that Lua scripts touch together are
passed to them explicitly as KEYS. Identities appear here only as keyed hashes
(hex digests), never as raw addresses.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ROOT",
    "cache_entry",
    "cache_lock",
    "calls_stream",
    "concurrency_client",
    "concurrency_global",
    "rate_window",
    "reply_list",
    "sse_client_sessions",
    "sse_holder",
    "sse_inbox",
    "sse_session",
    "sse_sessions_global",
    "worker_threads",
    "workers_set",
]

ROOT: Final = "pwcmcp:v1:"

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
    """The Stream of pending tool calls (consumer group ``workers``)."""
    return f"{ROOT}calls"


def reply_list(gateway_id: str) -> str:
    """The list a gateway process reads replies for its own calls from."""
    return f"{ROOT}reply:{gateway_id}"


def workers_set() -> str:
    """Sorted set of worker ids scored by their last heartbeat (unix ms)."""
    return f"{ROOT}workers"


def worker_threads() -> str:
    """Hash of consumer name → its thread count (calls it runs at once), kept beside ``workers_set``."""
    return f"{ROOT}worker-threads"


def cache_entry(digest: str) -> str:
    """A cached upstream response, by the digest of its request."""
    return f"{ROOT}cache:{digest}"


def cache_lock(digest: str) -> str:
    """The single-flight lock held while one process loads ``cache_entry(digest)``."""
    return f"{ROOT}cache-lock:{digest}"


def rate_window(kind: str, client_hash: str) -> str:
    """Sliding-window log (sorted set) of one client's admitted requests of ``kind``."""
    return f"{ROOT}rate:{kind}:{client_hash}"


def concurrency_client(client_hash: str) -> str:
    """Sorted set of one client's in-flight leases, scored by lease expiry (unix ms)."""
    return f"{ROOT}conc:client:{client_hash}"


def concurrency_global() -> str:
    """Sorted set of every in-flight lease, scored by lease expiry (unix ms)."""
    return f"{ROOT}conc:global"


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
    return f"{ROOT}sse:session:{session_id}"


def sse_client_sessions(client_hash: str) -> str:
    """Sorted set of one client's open SSE session ids, scored by expiry (unix ms)."""
    return f"{ROOT}sse:client:{client_hash}"


def sse_sessions_global() -> str:
    """Sorted set of every open SSE session id, scored by expiry (unix ms)."""
    return f"{ROOT}sse:all"


def sse_holder(holder_id: str) -> str:
    """The Redis client id of one gateway process's inbox connection (its presence: when the
    process dies, Redis drops that connection at once)."""
    return f"{ROOT}sse:holder:{holder_id}"


def sse_inbox(holder_id: str) -> str:
    """The list one gateway process reads the messages for the SSE streams it holds from."""
    return f"{ROOT}sse:inbox:{holder_id}"
