"""Catalog benchmark: import throughput and HTTP latency of the self-hosted catalog.

Usage::

    uv run python bench/gen_catalog.py --papers 100000 --evaluations 500000 --out /tmp/pwc-gen \
        [--vocabulary realistic|tiny]
    uv run python bench/catalog_bench.py --data /tmp/pwc-gen --db /tmp/pwc-gen.db [--requests 300]

Steps: (1) ``python -m catalog import`` of every dump in ``--data`` into a new
``--db`` (records/s from the importer's summary line and the wall time);
(2) ``python -m catalog serve --db`` on a free port; (3) from this separate
process, with one ``httpx.Client``, ``--requests`` sequential requests each of
keyword search, paper info, a benchmark leaderboard page (100 rows), a 64 KiB
read chunk, and (not targets, for context) hybrid search (the CLI's default
mode) and related papers; p50/p99 in milliseconds. Search queries are two of
ten topic words; how many papers they match depends on the generator's
``--vocabulary`` (see ``bench/gen_catalog.py``). Prints a Markdown table for
BENCHMARKS.md. A benchmark, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers import free_port, stop_process, wait_http


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_import(data: Path, db: Path) -> tuple[int, float, float]:
    """Import every source in ``data`` into a fresh ``db``.

    Returns (records, wall seconds, the importer's own records/s)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    sources = sorted(str(p) for p in data.iterdir() if p.suffix == ".json" or p.is_dir())
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "catalog", "import", "--db", str(db), *sources],
                          cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"import failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    match = re.search(r"imported (\d+) records .* \((\d+) records/s\)", done.stdout)
    if not match:
        return 0, elapsed, 0.0
    return int(match.group(1)), elapsed, float(match.group(2))


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


def measure(base: str, requests: int, seed: int) -> dict[str, tuple[float, float]]:
    """p50/p99 (ms) per request kind against the running server at ``base``."""
    rng = random.Random(seed)
    results: dict[str, tuple[float, float]] = {}
    with httpx.Client(base_url=base, timeout=30) as client:
        papers = client.get("papers/", params={"page": 1, "page_size": 100, "order_by": "date_published",
                                               "latest_only": "true"}).json()["results"]
        refs = [p.get("arxiv_id") or str(p["id"]) for p in papers]
        datasets = [d["id"] for d in client.get("datasets/", params={"page": 1, "page_size": 100}).json()["results"]]
        words = ["attention", "transformer", "diffusion", "graph", "sparse", "retrieval", "vision", "speech", "policy", "token"]
        readable = [p.name[:-3] for p in sorted(Path(ARGS.data, "markdown").glob("*.md"))]
        kinds = {
            "keyword search": lambda: client.get("papers/search", params={
                "q": " ".join(rng.sample(words, 2)), "mode": "keyword", "page": 1, "page_size": 10}),
            "paper info": lambda: client.get(f"papers/{rng.choice(refs)}", params={"include_resources": "true"}),
            "leaderboard page": lambda: client.get(f"datasets/{rng.choice(datasets)}/evaluations/", params={
                "page": 1, "page_size": 100, "ordering": "best_rank"}),
            "read chunk 64 KiB": lambda: client.get(f"research/papers/{rng.choice(readable)}/read", params={
                "offset": rng.choice((0, 65536)), "limit": 65536}),
            "hybrid search": lambda: client.get("papers/search", params={
                "q": " ".join(rng.sample(words, 2)), "mode": "hybrid", "page": 1, "page_size": 10}),
            "related papers": lambda: client.get(f"papers/{rng.choice(refs)}/related", params={"limit": 4}),
        }
        for name, call in kinds.items():
            for _ in range(5):  # warm-up
                call().raise_for_status()
            samples = []
            for _ in range(requests):
                started = time.perf_counter()
                call().raise_for_status()
                samples.append((time.perf_counter() - started) * 1000)
            results[name] = _percentiles(samples)
    return results


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder written by gen_catalog.py")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--seed", type=int, default=11)
    ARGS = parser.parse_args()
    if not ARGS.skip_import:
        records, seconds, rate = run_import(ARGS.data, ARGS.db)
        print(f"import: {records} records in {seconds:.1f} s wall = {records / seconds:,.0f} records/s "
              f"incl. interpreter start; importer-reported {rate:,.0f} records/s")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "catalog", "serve", "--db", str(ARGS.db),
                             "--host", "127.0.0.1", "--port", str(port)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/v1/"
    try:
        wait_http(f"{base}areas/", proc=proc, timeout_s=120)
        results = measure(base, ARGS.requests, ARGS.seed)
    finally:
        stop_process(proc)
    print(f"\nmachine: nproc={os.cpu_count()}, CPU {_cpu_model()}, Python {platform.python_version()}\n")
    print("| request | p50 ms | p99 ms |\n| --- | ---: | ---: |")
    for name, (p50, p99) in results.items():
        print(f"| {name} | {p50:.1f} | {p99:.1f} |")


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
