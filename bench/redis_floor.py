"""The floor under the Redis hop: a bare ping-pong between two Python processes through Redis.

Usage: ``uv run python bench/redis_floor.py [--calls 3000]``.

Starts a private redis-server. One process (asyncio, redis-py with hiredis, like the gateway)
``RPUSH``es 100 bytes and waits with ``BLPOP`` for the answer; another (a blocking thread,
like a worker) ``BLPOP``s it and ``RPUSH``es it back. No admission, no stream, no tool: the
same four process wake-ups as a call through Redis (gateway → Redis → worker → Redis →
gateway) and nothing else. Prints the round trip's p50 and p90, and one asyncio ``PING``'s
round trip for scale. What the hop costs above this floor is the project's own code.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis
import redis.asyncio as aioredis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cluster import ProcessGroup

_STOP = b"stop"


def _echo(url: str) -> None:
    """The worker side: hand every item from ``a`` back on ``b`` until told to stop."""
    client = redis.Redis.from_url(url)
    while True:
        _, item = client.execute_command("BLPOP", "a", 0)
        if item == _STOP:
            return
        client.execute_command("RPUSH", "b", item)


async def _measure(url: str, calls: int) -> tuple[list[float], float]:
    client = aioredis.Redis.from_url(url)
    rounds = []
    for _ in range(calls):
        started = time.perf_counter()
        await client.execute_command("RPUSH", "a", b"x" * 100)
        await client.execute_command("BLPOP", "b", 0)
        rounds.append(time.perf_counter() - started)
    await client.execute_command("RPUSH", "a", _STOP)
    started = time.perf_counter()
    for _ in range(calls):
        await client.execute_command("PING")
    ping = (time.perf_counter() - started) / calls
    await client.aclose()
    return rounds[calls // 6:], ping  # the first sixth warms up


def measure_floor(url: str, calls: int) -> tuple[list[float], float]:
    """Run the ping-pong ``calls`` times against the redis-server at ``url`` (an echo process
    started and stopped here): the round trips after warm-up (seconds) and one ``PING``'s."""
    echo = multiprocessing.Process(target=_echo, args=(url,))
    echo.start()
    try:
        return asyncio.run(_measure(url, calls))
    finally:
        echo.join(10)
        if echo.is_alive():
            echo.kill()


def main(argv: list[str] | None = None) -> int:
    """Measure and print the floor."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pwc-floor-") as tmp, ProcessGroup(Path(tmp)) as group:
        url = group.start_redis()
        rounds, ping = measure_floor(url, args.calls)
    print(f"ping-pong through Redis: p50 {statistics.median(rounds) * 1e6:.0f} µs, "
          f"p90 {statistics.quantiles(rounds, n=10)[8] * 1e6:.0f} µs; one PING {ping * 1e6:.0f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
