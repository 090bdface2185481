"""Garbage-collector settings for the long-running server processes (gateway, workers).

CPython's cyclic collector re-scans every container object it tracks on each full
collection. A server process holds tens of thousands of long-lived ones after startup
(modules, the tool catalogue, compiled validators, parsers), so under load the full
collections stalled the gateway's event loop often enough to triple its p99 latency
(tools/list at 64 connections: 24 ms against 10 ms with the collector off), and the
young-generation collections, every 700 allocations by default, cost about 5 % of its
throughput (BENCHMARKS.md).
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle_after_startup"]

YOUNG_THRESHOLD = 10_000
"""Container allocations (net of frees) between young-generation collections; CPython's default is 700."""


def settle_after_startup() -> None:
    """Call once, when the process has built everything it keeps for its lifetime.

    Collects once, then ``gc.freeze()`` moves every surviving object to the permanent
    generation, which later collections never scan (the standard remedy for long-lived
    servers, see the ``gc.freeze`` documentation), and raises the young generation's
    threshold to :data:`YOUNG_THRESHOLD`, keeping the older generations' ratios. Reference
    counting still frees almost everything at once; only cyclic garbage waits longer.
    """
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
