"""``find_in_paper`` latency on the 98 KB sample paper (issue 30 goal: p50 ≤ 30 ms on a 100 KB paper).

Starts the sample catalog, builds one embedded runtime (the in-process memory cache a stdio or
embedded server has), and calls ``find_in_paper`` through ``execution.execute`` (validation,
paper resolution, the ``pwc paper find`` command, cursors, text) with a rotation of queries.
The first call of each query fills the caches (the Markdown read, the vocabulary look-ups, the
paragraph index); the steady state is what an agent asking several questions of one paper sees.
Prints p50/p90/max of the cold first call and of the warm calls, in milliseconds.

    uv run python bench/find_in_paper.py [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.catalog_process import serve
from pwc_mcp_core.runtime.caches import MemoryCache
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute

QUERIES = ("label smoothing", "positional encoding", "how many encoder layers", "learning rate warmup",
           "dropout rate of the big model", "BLEU on English-French", "attention heads", "GAN")


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0-1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="warm calls (default 200)")
    args = parser.parse_args()
    proc, api_url = serve("--sample")
    try:
        runtime = Runtime.build(CoreSettings(api_url=api_url, cursor_keys=("bench-find",)), MemoryCache())
        cold: list[float] = []
        warm: list[float] = []
        for index in range(len(QUERIES) + args.calls):
            query = QUERIES[index % len(QUERIES)]
            start = time.perf_counter()
            body = json.loads(execute(Call("tools/call", "find_in_paper",
                                           {"paper": "1706.03762", "query": query}), runtime))
            elapsed = (time.perf_counter() - start) * 1000
            if body["result"].get("isError"):
                raise RuntimeError(body["result"]["content"][0]["text"])
            (cold if index < len(QUERIES) else warm).append(elapsed)
        size = body["result"]["structuredContent"]["total_bytes"]
        print(f"find_in_paper on 1706.03762 ({size:,} bytes), {len(QUERIES)} queries")
        for name, values in (("first call of each query", cold), ("warm", warm)):
            print(f"{name}: n={len(values)} p50={statistics.median(values):.1f} ms "
                  f"p90={percentile(values, 0.9):.1f} ms max={max(values):.1f} ms")
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
