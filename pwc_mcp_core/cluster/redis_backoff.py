"""The one retry backoff of every Redis wait loop (workers, shared cache): redis-py's own.

Equal jitter (half the exponential step fixed, half random) so that workers and threads
that lost Redis together do not retry together, and never spin at ~0 s. Attempts are
ended by a deadline (the call's, the drain's, the waiter's), never by a count.
"""

from __future__ import annotations

from redis.backoff import AbstractBackoff, EqualJitterBackoff

__all__ = ["REDIS_BACKOFF", "backoff"]


def backoff(*, base_s: float, cap_s: float) -> AbstractBackoff:
    """A jittered exponential backoff: ``compute(failures)`` seconds, at most ``cap_s``."""
    return EqualJitterBackoff(cap=cap_s, base=base_s)


# Waiting out a Redis outage: 0.1 s doubling up to 2 s.
REDIS_BACKOFF = backoff(base_s=0.1, cap_s=2.0)
