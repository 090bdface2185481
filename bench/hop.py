"""The Redis hop alone: ``bench/run.py``'s paired measurement, with as many pairs as asked.

Usage: ``uv run python bench/hop.py [--pairs 15] [--seconds 3] [--floor [--out BENCHMARKS.md]]``.

Starts the sample catalog, a redis-server, an ``embedded`` gateway and a ``redis-g1-w1``
one (1 gateway, 1 worker) side by side, then runs wrk on the cached ``list_conferences``
call at one connection against each in turn (``--pairs`` pairs, the order flipped each
pair). The hop is the median of the pairs' p50 differences (Redis minus embedded); its
quartiles show the spread. Prints one line per pair and the summary; the target is
``≤ 0.5 ms``.

``--floor`` also runs ``bench/redis_floor.py``'s bare ping-pong (``--floor-calls`` round
trips) on the same redis-server between the two runs of every pair, and reports the hop as a
multiple of that floor, both measured in the same rounds (the target: ≤ 1.25× the floor).
With ``--out FILE`` it also writes the ``## Redis hop against its floor`` section there.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cluster import ProcessGroup
from bench.load import discover, workloads, write_all
from bench.redis_floor import measure_floor
from bench.report import publish_section
from bench.run import QUICK, measure_hop

SECTION = "## Redis hop against its floor"
GOAL = 1.25


def main(argv: list[str] | None = None) -> int:
    """Measure the hop and print it; 1 when the measurement failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per wrk run")
    parser.add_argument("--floor", action="store_true", help="measure the bare Redis ping-pong in the same rounds")
    parser.add_argument("--floor-calls", type=int, default=2000, help="ping-pong round trips per pair")
    parser.add_argument("--out", default="-", help="with --floor: the file to write the section to (- prints only)")
    args = parser.parse_args(argv)
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (the quartiles need two)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    plan = dataclasses.replace(QUICK, hop_pairs=args.pairs, hop_seconds=args.seconds)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="pwc-hop-") as tmp, ProcessGroup(Path(tmp)) as group:
        redis_url = group.start_redis()
        _, api_url = group.start_catalog("catalog", "--sample")
        loads = workloads(discover(api_url))
        paths = write_all(Path(tmp), loads.values())

        def floor() -> dict[str, float]:
            rounds, _ = measure_floor(redis_url, args.floor_calls)
            return {"floor": statistics.median(rounds) * 1000}

        hop = measure_hop(group, plan, api_url, redis_url, loads, paths, between=floor if args.floor else None)
    load_after = os.getloadavg()[0]
    if "error" in hop:
        print(f"hop measurement failed: {hop['error']}")
        return 1
    deltas = [pair["redis-g1-w1"] - pair["embedded"] for pair in hop["pairs"]]
    for index, pair in enumerate(hop["pairs"], 1):
        floor_text = f", floor {pair['floor']:.3f} ms" if "floor" in pair else ""
        print(f"pair {index:2d}: redis {pair['redis-g1-w1']:.3f} ms, embedded {pair['embedded']:.3f} ms, "
              f"hop {pair['redis-g1-w1'] - pair['embedded']:+.3f} ms{floor_text}")
    quartiles = statistics.quantiles(deltas, n=4)
    print(f"hop: {hop['delta_ms']:+.3f} ms (median of {len(deltas)} pairs; quartiles {quartiles[0]:+.3f} / "
          f"{quartiles[2]:+.3f} ms; p50 Redis {hop['redis_p50_ms']:.3f} ms, embedded {hop['embedded_p50_ms']:.3f} ms)")
    if args.floor:
        publish_section(args.out, SECTION, _floor_section(hop, args, (load_before, load_after)))
    return 0


def _floor_section(hop: dict[str, Any], args: argparse.Namespace, load: tuple[float, float]) -> str:
    """The hop against the floor measured in the same rounds, as a BENCHMARKS.md section."""
    pairs = hop["pairs"]
    floor_ms = statistics.median(pair["floor"] for pair in pairs)
    ratios = [(pair["redis-g1-w1"] - pair["embedded"]) / pair["floor"] for pair in pairs]
    ratio = hop["delta_ms"] / floor_ms
    quartiles = statistics.quantiles(ratios, n=4)
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    command = f"uv run python bench/hop.py --pairs {args.pairs} --floor"
    return "\n".join([
        SECTION, "",
        f"`{command}`: {len(pairs)} interleaved pairs of {args.seconds:g} s wrk runs (cached `list_conferences`, one",
        "connection) against `embedded` and `redis-g1-w1` side by side; between the two runs of each pair,",
        f"`bench/redis_floor.py`'s bare `RPUSH`/`BLPOP` ping-pong ({args.floor_calls} round trips) on the same",
        f"redis-server. Load average {load[0]:.1f} at the start, {load[1]:.1f} at the end (2 cores shared with",
        "other work), so only ratios taken in the same rounds are compared.", "",
        "| measure | value |", "| --- | --- |",
        f"| hop (Redis p50 minus embedded p50, median of pairs) | {hop['delta_ms']:+.3f} ms |",
        f"| floor (ping-pong p50, median of pairs) | {floor_ms:.3f} ms |",
        f"| hop ÷ floor | {ratio:.2f}× (per pair: median {statistics.median(ratios):.2f}×, "
        f"quartiles {quartiles[0]:.2f}× / {quartiles[2]:.2f}×) |",
        f"| goal | ≤ {GOAL}× the floor: {verdict} |", ""])


if __name__ == "__main__":
    sys.exit(main())
