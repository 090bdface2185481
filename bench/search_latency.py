"""In-process latency of ``papers/search`` per mode and of the bare vector scan, on a built catalog.

Usage::

    uv run python bench/search_latency.py --db FILE [--rounds 3] [--threads 1] [--random-vectors]
        [--baseline FILE]   # e.g. git show 71eb608:catalog/search.py > /tmp/old_search.py

Runs the function behind ``papers/search`` (``catalog.search.papers.search_papers``,
page size 10) on a read-only connection, without HTTP, for three query sets:
2-3 word queries, one common word (the most frequent title word of the
catalog's first 20,000 titles) and queries with filters. Prints p50/p99 in ms
per mode and set, then the vector scan alone (``VectorIndex.search``: query
embedding + int8 scan + top 500) and, with ``--threads N``, hybrid searches/s
from N threads sharing the process (one connection each).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import sqlite3
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from catalog.search import papers as search
from catalog.search import vectors
from catalog.search.embeddings import get_embedder
from catalog.store.core import Page

QUERIES = ("attention transformer", "graph neural network", "speech recognition", "contrastive learning",
           "object detection", "reinforcement learning policy", "diffusion generation", "question answering",
           "federated learning", "sparse mixture of experts")


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def _common_word(conn: sqlite3.Connection) -> str:
    counts: collections.Counter[str] = collections.Counter()
    for (title,) in conn.execute("SELECT title FROM papers ORDER BY id LIMIT 20000"):
        counts.update(w for w in set(re.findall(r"[a-z]{4,}", (title or "").casefold()))
                      if w not in search.STOP_WORDS)
    return counts.most_common(1)[0][0]


def _random_index(conn: sqlite3.Connection) -> vectors.VectorIndex:
    ids = np.array([r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id")], dtype=np.int64)
    embedder = get_embedder()
    matrix = np.random.default_rng(7).integers(-127, 128, size=(len(ids), embedder.dimension), dtype=np.int8)
    scale = np.full(len(ids), 1 / (127 * 16), dtype=np.float32)
    return vectors.VectorIndex("random", embedder, matrix, ids, scale, np.full(len(ids), 20210101, np.int32),
                               np.ones(len(ids), np.int8))


CPU_MS: list[float] = []
"""CPU time of each timed search (this process, all threads): what the wall time would be on
an otherwise idle core, whatever the machine's load."""


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{statistics.median(ordered):7.1f} / {p99:7.1f}"


def _time(conn: sqlite3.Connection, query: str, mode: str, engine: Any = search, **filters: object) -> float:
    started = time.perf_counter()
    cpu = time.process_time()
    engine.search_papers(conn, query, Page(1, 10), mode=mode, start_date=filters.get("start_date"),
                         end_date=None, has_official_implementation=filters.get("official"))
    CPU_MS.append((time.process_time() - cpu) * 1000)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    """Print the latency table (see module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--baseline", type=Path, help="another search module file to time alongside")
    parser.add_argument("--random-vectors", action="store_true", help="time a db without vectors (see doc)")
    args = parser.parse_args()
    conn = _connect(args.db)
    count = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    started = time.perf_counter()
    if args.random_vectors:
        index = _random_index(conn)
        vectors.INDEXES.get = lambda _conn: index  # type: ignore[method-assign,assignment]
    else:
        index = vectors.INDEXES.get(conn)
    print(f"{count} papers; semantic index loaded in {(time.perf_counter() - started) * 1000:.0f} ms "
          f"({index.matrix.nbytes / 2**20:.0f} MiB int8)")
    common = _common_word(conn)
    sets: dict[str, list[tuple[str, dict[str, object]]]] = {"2-3 words": [(q, {}) for q in QUERIES],
            f"one common word ({common!r})": [(common, {})],
            "2-3 words + filters": [(q, {"start_date": "2020-01-01", "official": True}) for q in QUERIES]}
    for mode in search.MODES:
        _time(conn, QUERIES[0], mode)  # warm: embedder, index, page cache
    print("\n| query set | mode | p50 / p99 (ms) | CPU p50 (ms) |\n|---|---|---|---|")
    engines: list[tuple[str, Any]] = [("", search)]
    if args.baseline is not None:
        spec = importlib.util.spec_from_file_location("baseline_search", args.baseline)
        assert spec is not None and spec.loader is not None
        baseline = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(baseline)
        engines.append(("baseline ", baseline))
    for name, items in sets.items():
        for mode in ("keyword", "semantic", "hybrid"):
            samples: dict[str, list[float]] = {label: [] for label, _ in engines}
            cpu: dict[str, list[float]] = {label: [] for label, _ in engines}
            for _ in range(args.rounds * (10 if len(items) == 1 else 1)):
                for q, f in items:
                    for label, engine in engines:
                        samples[label].append(_time(conn, q, mode, engine, **f))
                        cpu[label].append(CPU_MS[-1])
            for label, _ in engines:
                print(f"| {name} | {label}{mode} | {_percentiles(samples[label])} | "
                      f"{statistics.median(cpu[label]):7.1f} |")
    scans = []
    for _ in range(args.rounds):
        for q in QUERIES:
            t0, c0 = time.perf_counter(), time.process_time()
            index.search(q, search.CANDIDATES)
            scans.append((time.perf_counter() - t0) * 1000)
            CPU_MS.append((time.process_time() - c0) * 1000)
    print(f"| vector scan alone (embed + int8 scan + top 500) | - | {_percentiles(scans)} | "
          f"{statistics.median(CPU_MS[-len(scans):]):7.1f} |")
    if args.threads:
        done = [0]
        lock = threading.Lock()
        deadline = time.perf_counter() + 10.0

        def worker() -> None:
            own = _connect(args.db)
            i = 0
            while time.perf_counter() < deadline:
                _time(own, QUERIES[i % len(QUERIES)], "hybrid")
                i += 1
            with lock:
                done[0] += i

        threads = [threading.Thread(target=worker) for _ in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(f"\nhybrid, {args.threads} threads in one process: {done[0] / 10.0:.1f} searches/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
