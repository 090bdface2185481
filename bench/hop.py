"""The Redis hop alone: ``bench/run.py``'s paired measurement, with as many pairs as asked.

Usage: ``uv run python bench/hop.py [--pairs 15] [--seconds 3]``.

Starts the sample catalog, a redis-server, an ``embedded`` gateway and a ``redis-g1-w1``
one (1 gateway, 1 worker) side by side, then runs wrk on the cached ``list_conferences``
call at one connection against each in turn (``--pairs`` pairs, the order flipped each
pair). The hop is the median of the pairs' p50 differences (Redis minus embedded); its
quartiles show the spread. Prints one line per pair and the summary; the target is
``≤ 0.5 ms``.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cluster import ProcessGroup
from bench.load import discover, workloads, write_all
from bench.run import QUICK, measure_hop


def main(argv: list[str] | None = None) -> int:
    """Measure the hop and print it; 1 when the measurement failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per wrk run")
    args = parser.parse_args(argv)
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (the quartiles need two)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    plan = dataclasses.replace(QUICK, hop_pairs=args.pairs, hop_seconds=args.seconds)
    with tempfile.TemporaryDirectory(prefix="pwc-hop-") as tmp, ProcessGroup(Path(tmp)) as group:
        redis_url = group.start_redis()
        _, api_url = group.start_catalog("catalog", "--sample")
        loads = workloads(discover(api_url))
        paths = write_all(Path(tmp), loads.values())
        hop = measure_hop(group, plan, api_url, redis_url, loads, paths)
    if "error" in hop:
        print(f"hop measurement failed: {hop['error']}")
        return 1
    deltas = [pair["redis-g1-w1"] - pair["embedded"] for pair in hop["pairs"]]
    for index, pair in enumerate(hop["pairs"], 1):
        print(f"pair {index:2d}: redis {pair['redis-g1-w1']:.3f} ms, embedded {pair['embedded']:.3f} ms, "
              f"hop {pair['redis-g1-w1'] - pair['embedded']:+.3f} ms")
    quartiles = statistics.quantiles(deltas, n=4)
    print(f"hop: {hop['delta_ms']:+.3f} ms (median of {len(deltas)} pairs; quartiles {quartiles[0]:+.3f} / "
          f"{quartiles[2]:+.3f} ms; p50 Redis {hop['redis_p50_ms']:.3f} ms, embedded {hop['embedded_p50_ms']:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
