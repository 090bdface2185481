"""Embedded limiter throughput as identities accumulate (issue 14 item 7).

``uv run python bench/limiter_bench.py [--identities 100000] [--requests 20000]``

Measures ``MemoryLimiter.acquire`` + ``release`` per second from fresh identities (the
IPv6 case: every request a new client) on an empty limiter, then again after
``--identities`` distinct identities are tracked inside the window, and prints both,
their ratio, and a Markdown row for BENCHMARKS.md. Target: the ratio stays >= 0.80.
Runs in one process on the event loop, as the embedded gateway does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.admission.limits import LimitSettings, MemoryLimiter

LIMITS = LimitSettings(request_limit=60, semantic_limit=10, concurrency_limit=4, global_concurrency_limit=1_000_000)


async def _rate(limiter: MemoryLimiter, requests: int, tag: str) -> float:
    started = time.perf_counter()
    for n in range(requests):
        decision = await limiter.acquire(f"{tag}{n}", semantic=n % 4 == 0)
        assert decision.allowed and decision.lease is not None
        await limiter.release(decision.lease)
    return requests / (time.perf_counter() - started)


async def main(identities: int, requests: int, rounds: int) -> int:
    empty = max([await _rate(MemoryLimiter(LIMITS), requests, f"e{r}-") for r in range(rounds)])
    loaded = MemoryLimiter(LIMITS)
    for n in range(identities):
        await loaded.acquire(f"seed{n}", semantic=False, lease=False)
    tracked = loaded.tracked_identities
    full = max([await _rate(loaded, requests, f"f{r}-") for r in range(rounds)])
    ratio = full / empty
    print(f"empty limiter:            {empty:10,.0f} acquire+release/s")
    print(f"after {tracked:,} identities: {full:10,.0f} acquire+release/s")
    print(f"ratio: {ratio:.2f} (target >= 0.80)")
    print(f"| embedded limiter, fresh identity per request | {empty:,.0f}/s | {full:,.0f}/s "
          f"after {tracked:,} identities | {ratio:.2f} |")
    return 0 if ratio >= 0.80 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.identities, args.requests, args.rounds)))
