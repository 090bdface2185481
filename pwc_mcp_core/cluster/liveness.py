"""How long to trust old heartbeats after Redis itself stalled (ARCHITECTURE.md "Delivery guarantee").

A Redis pause (SIGSTOP, a long fork, a failover) silences every heartbeat at once: judged
by the liveness window alone, every worker would look dead the moment Redis resumes and
their calls would be reclaimed or refused. Each process that judges liveness therefore
watches its own Redis round trips: after a gap of ``STALL_S`` or more without one, it
widens the window by the length of that gap for one ``HEARTBEAT_TTL_S`` after the gap
ended, time for every live worker to beat again. A real death is still noticed one TTL
after that grace ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from pwc_mcp_core.cluster import redis_keys

__all__ = ["STALL_S", "StallWatch"]

# A round trip this late (or a gap this long between them) is a Redis stall, not a slow call.
STALL_S: Final = 2.0
# Stalls longer than this are treated as outages: the window grows by at most this much.
MAX_GRACE_S: Final = 30.0


class StallWatch:
    """Tracks this process's Redis round trips and the liveness grace they imply.

    Args:
        clock: monotonic seconds (a test seam).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_ok = clock()
        self._grace_s = 0.0
        self._grace_until = 0.0

    def ok(self, started: float | None = None) -> bool:
        """Record a round trip that just succeeded (``started``: when it was sent, monotonic).

        Returns True when it ended a stall (a gap of ``STALL_S`` or more), i.e. when a
        liveness judgement made from its answer must not be trusted.
        """
        now = self._clock()
        gap = now - min(self._last_ok, started if started is not None else now)
        self._last_ok = now
        if gap < STALL_S:
            return False
        self._grace_s = min(MAX_GRACE_S, max(self._grace_s if now < self._grace_until else 0.0, gap))
        self._grace_until = now + redis_keys.HEARTBEAT_TTL_S + STALL_S
        return True

    def grace_s(self) -> float:
        """Seconds to add to the liveness window now (0 outside a grace period)."""
        return self._grace_s if self._clock() < self._grace_until else 0.0
