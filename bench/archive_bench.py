"""The catalog at the archive's size: import, then p50/p99 per endpoint at 1 and 8 clients.

Usage::

    uv run python bench/gen_catalog.py --preset archive --gzip --out /work/archive/dumps
    uv run python bench/archive_bench.py --data /work/archive/dumps --db /work/archive/catalog.db \
        [--skip-import] [--import-nice N] [--processes 2] [--requests 100] [--seconds 10] [--out BENCHMARKS.md | -]

Steps, all in one run:

1. ``python -m catalog import`` of the five ``.gz`` dumps in ``--data`` into ``--db``
   (the importer builds a new file and renames it over ``--db`` when done, so readers of
   ``--db`` never see a partial file). Reports wall time, the importer's peak RSS
   and CPU time (``getrusage`` of the child; on a shared machine CPU time is the
   steadier figure) and the size of the database and of the files
   beside it (``<db>.*``, e.g. search vectors). ``--skip-import`` reuses
   ``--db`` and the figures its last import saved in ``<db>.import.json``.
2. ``pwc-catalog serve --db --processes N`` on a free port, and an embedded
   ``pwc-mcp gateway`` whose ``PWC_API_URL`` points at it.
3. Per endpoint: ``--requests`` sequential requests (at most ``--seconds``) from
   one client, then as many from 8 concurrent clients; p50/p99 in ms and, at
   8 clients, requests/s. Search queries are 2-3 (or one) of the generator's
   topic words, drawn at random, so the gateway's cache rarely answers
   ``search_papers``. ``get_task`` is measured cold: the first call of the
   biggest task through ``/mcp`` after the gateway started, and then the
   catalog requests it makes (``pwc.commands.tasks.run_task``) uncached.

Writes the ``## Catalog at archive size`` section of ``--out``. A benchmark,
not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.cluster import ProcessGroup, free_port
from bench.gen_catalog import WORDS
from bench.report import publish_section

SECTION = "## Catalog at archive size"
DUMPS = ("papers-with-abstracts.json.gz", "links-between-papers-and-code.json.gz", "methods.json.gz",
         "datasets.json.gz", "evaluation-tables.json.gz")
GATEWAY_ENV = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000",
               "PWC_MCP_CONCURRENCY_LIMIT": "64", "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "512",
               "PWC_MCP_CURSOR_KEY_CURRENT": "bench-cursor-key-0123456789abcdef", "PWC_MCP_HOST": "127.0.0.1"}
CLIENTS = 8

Call = Callable[[aiohttp.ClientSession, int], Awaitable[None]]


@dataclass
class Row:
    """One measured endpoint."""

    name: str
    one: tuple[float, float, int]  # p50, p99, samples
    many: tuple[float, float, int, float]  # p50, p99, samples, requests/s


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def run_import(data: Path, db: Path, nice: int = 0) -> dict[str, float]:
    """Import the dumps into ``db`` and return the figures. The importer itself builds a new
    file and renames it over ``db`` (with its vector files named for ``db``), so readers of
    ``db`` never see a partial file."""
    sources = [str(data / name) for name in DUMPS]
    started = time.perf_counter()
    prefix = ["nice", "-n", str(nice)] if nice else []
    done = subprocess.run([*prefix, sys.executable, "-m", "catalog", "import", "--db", str(db), *sources],
                          cwd=REPO, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"import failed ({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the import is this process's first child
    figures = {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime,
               "peak_rss_bytes": usage.ru_maxrss * 1024.0}
    Path(f"{db}.import.json").write_text(json.dumps(figures), encoding="utf-8")
    return figures


def sizes(db: Path) -> tuple[int, int]:
    """Bytes of the database and of the files beside it that belong to it (``<db>.*``)."""
    beside = sum(p.stat().st_size for p in db.parent.glob(db.name + ".*")
                 if p.is_file() and not p.name.endswith(".import.json") and ".tmp-" not in p.name)
    return db.stat().st_size, beside


def _quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def measure(call: Call, requests: int, seconds: float) -> tuple[tuple[float, float, int],
                                                                     tuple[float, float, int, float]]:
    """(p50, p99, n) at one client and (p50, p99, n, requests/s) at ``CLIENTS`` clients."""
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        await call(http, 0)  # warm-up (connection, first-page caches)
        one: list[float] = []
        deadline = time.perf_counter() + seconds
        while len(one) < requests and (time.perf_counter() < deadline or len(one) < 5):
            started = time.perf_counter()
            await call(http, len(one) + 1)
            one.append((time.perf_counter() - started) * 1000)
        many: list[float] = []
        counter = iter(range(10_000, 10**9))

        async def client() -> None:
            while len(many) < requests and (time.perf_counter() < deadline or len(many) < 5 * CLIENTS):
                started = time.perf_counter()
                await call(http, next(counter))
                many.append((time.perf_counter() - started) * 1000)

        began = time.perf_counter()
        deadline = began + seconds
        await asyncio.gather(*(client() for _ in range(CLIENTS)))
        elapsed = time.perf_counter() - began
    return (*_quantiles(one), len(one)), (*_quantiles(many), len(many), len(many) / elapsed)


def _query(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.sample(WORDS, words))


async def _get(http: aiohttp.ClientSession, url: str, params: dict[str, str | int]) -> None:
    async with http.get(url, params=params) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} {params}: HTTP {response.status}")


async def _mcp(http: aiohttp.ClientSession, base: str, tool: str, arguments: dict[str, object]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    headers = {"Content-Type": "application/json", "Accept": "application/json", "X-PwC-MCP-Client": "bench"}
    async with http.post(f"{base}/mcp", json=body, headers=headers) as response:
        payload = await response.read()
        if response.status != 200 or b'"isError":true' in payload:
            raise RuntimeError(f"{tool}: HTTP {response.status} {payload[:300]!r}")


def _probe(api: str) -> dict[str, str]:
    """The biggest task (by leaderboards and by papers), a method and an author of the catalog."""
    import httpx

    with httpx.Client(base_url=api + "/", timeout=120) as client:
        def first(path: str, **params: str | int) -> dict[str, Any]:
            result: dict[str, Any] = client.get(path, params=params).json()["results"][0]
            return result

        by_boards = first("tasks/", ordering="-benchmark_count", page_size=1)
        by_papers = first("tasks/", ordering="-paper_count", page_size=1)
        method = first("methods/", ordering="-paper_count", page_size=1)
        paper = first("papers/", page_size=1)
    return {"board_task": str(by_boards["id"]), "board_task_name": str(by_boards["name"]),
            "board_task_boards": str(by_boards["benchmark_count"]), "paper_task": str(by_papers["id"]),
            "paper_task_papers": str(by_papers["paper_count"]), "method": str(method["name"]),
            "author": str(paper["authors"][0])}


def endpoints(api: str, mcp: str, probe: dict[str, str]) -> dict[str, Call]:
    """The measured requests (see the module doc)."""
    task, big = probe["board_task"], probe["paper_task"]

    def papers(**params: str | int) -> Call:
        return lambda http, i: _get(http, f"{api}/papers/", params)

    async def get_task_requests(http: aiohttp.ClientSession, i: int) -> None:
        await _get(http, f"{api}/tasks/", {"q": probe["board_task_name"], "page": 1, "page_size": 100})
        await _get(http, f"{api}/tasks/{task}/page", {})
        await _get(http, f"{api}/tasks/{task}/trending-benchmarks", {"limit": 100, "min_recent_papers": 0})
        await _get(http, f"{api}/tasks/{task}/papers", {"page": 1, "page_size": 100, "order_by": "trending",
                                                        "order_dir": "desc", "include_resources": "true"})
        await _get(http, f"{api}/areas/", {"page": 1, "page_size": 100})

    return {
        "keyword search, 2-3 words": lambda http, i: _get(http, f"{api}/papers/search", {
            "q": _query(i, 2 + i % 2), "mode": "keyword", "page_size": 10}),
        "hybrid search (default), 2-3 words": lambda http, i: _get(http, f"{api}/papers/search", {
            "q": _query(i, 2 + i % 2), "page_size": 10}),
        "hybrid search, one common word": lambda http, i: _get(http, f"{api}/papers/search", {
            "q": _query(i, 1), "page_size": 10}),
        "semantic search, 2-3 words": lambda http, i: _get(http, f"{api}/papers/search", {
            "q": _query(i, 2 + i % 2), "mode": "semantic", "page_size": 10}),
        "`search_papers` through `/mcp`, default mode": lambda http, i: _mcp(http, mcp, "search_papers", {
            "query": _query(i + 7919, 2 + i % 2)}),
        f"`get_task` catalog requests, biggest task ({probe['board_task_boards']} datasets)": get_task_requests,
        "`tasks/{id}/trending-benchmarks`, biggest task": lambda http, i: _get(
            http, f"{api}/tasks/{task}/trending-benchmarks", {"limit": 100, "min_recent_papers": 0}),
        "`tasks/{id}/page`, biggest task": lambda http, i: _get(http, f"{api}/tasks/{task}/page", {}),
        "`papers/`, page 1": papers(),
        "`papers/`, page 1000": papers(page=1000),
        "`papers/?has_official_implementation=true&start_date=2016-01-01`, page 1000": papers(
            has_official_implementation="true", start_date="2016-01-01", page=1000),
        "`papers/?start_date=2020-01-01&end_date=2020-12-31`, page 100": papers(
            start_date="2020-01-01", end_date="2020-12-31", page=100),
        "`papers/?order_by=date_published`, page 1000": papers(order_by="date_published", page=1000),
        "`papers/?order_by=citation_count`, page 1000": papers(order_by="citation_count", page=1000),
        f"`papers/?task=` largest ({probe['paper_task_papers']} papers), page 1": papers(task=big),
        "`papers/?task=` largest, page 100": papers(task=big, page=100),
        f"`tasks/{{id}}/papers` largest ({probe['paper_task_papers']} papers), page 1": lambda http, i: _get(
            http, f"{api}/tasks/{big}/papers", {}),
        "`tasks/{id}/papers` largest, page 1000": lambda http, i: _get(http, f"{api}/tasks/{big}/papers",
                                                                       {"page": 1000}),
        "`tasks/{id}/papers` largest, last page, by date": lambda http, i: _get(
            http, f"{api}/tasks/{big}/papers", {"page": -(-int(probe["paper_task_papers"]) // 20),
                                                "order_by": "date_published"}),
        "`papers/?method=` largest, page 1": papers(method=probe["method"]),
        "`papers/?author=`, page 1": papers(author=probe["author"]),
        "`papers/?search=word`": lambda http, i: _get(http, f"{api}/papers/", {"search": _query(i, 1)}),
    }


async def cold_get_task(mcp: str, task: str) -> float:
    """Milliseconds of the first ``get_task`` of ``task`` through ``/mcp``."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=300)) as http:
        started = time.perf_counter()
        await _mcp(http, mcp, "get_task", {"task": task})
        return (time.perf_counter() - started) * 1000


def counts(db: Path) -> str:
    """The catalog's row counts, as one phrase."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        n = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
             for table in ("papers", "repositories", "tasks", "datasets", "methods", "authors", "evaluations")}
        abstract = conn.execute("SELECT avg(length(abstract)) FROM papers").fetchone()[0] or 0
    finally:
        conn.close()
    return (f"{n['papers']:,} papers with {abstract / 1000:.1f} KB abstracts, {n['repositories']:,} code links, "
            f"{n['tasks']:,} tasks, {n['datasets']:,} datasets, {n['methods']:,} methods, {n['authors']:,} "
            f"authors, {n['evaluations']:,} leaderboard rows")


def render(command: str, imported: dict[str, float], db_bytes: int, beside: int, cold_ms: float,
           rows: list[Row], processes: int, catalog: str, load: tuple[float, float]) -> str:
    """The Markdown section for BENCHMARKS.md."""
    gib = 1024 ** 3
    intro = (f"Generated by `{command}` on {os.cpu_count()} cores ({_cpu_model()}, Python "
             f"{platform.python_version()}; load average {load[0]:.1f} at the start, {load[1]:.1f} at the end: "
             f"the machine was shared). Catalog from `bench/gen_catalog.py --preset archive --gzip`: {catalog}. "
             f"`pwc-catalog serve --processes {processes}`; `/mcp` is an embedded `pwc-mcp gateway` with "
             "`PWC_API_URL` at that catalog; load from one Python aiohttp process on the same host.")
    header = (f"| request | p50 ms (1 client) | p99 ms | p50 ms ({CLIENTS} clients) | p99 ms | requests/s "
              f"({CLIENTS} clients) |")
    lines = [SECTION, "", intro, "",
             (f"* import of the five `.gz` dumps: {imported['seconds']:.0f} s wall "
              f"({imported.get('cpu_seconds', 0):.0f} s CPU), peak RSS {imported['peak_rss_bytes'] / gib:.2f} GiB"),
             f"* database: {db_bytes / gib:.2f} GiB, plus {beside / gib:.2f} GiB of files beside it",
             f"* `get_task` of the biggest task through `/mcp`, cold (first call): {cold_ms:,.0f} ms", "",
             header, "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row.name} | {row.one[0]:,.1f} | {row.one[1]:,.1f} | {row.many[0]:,.1f} | "
                     f"{row.many[1]:,.1f} | {row.many[3]:,.1f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=Path("/work/archive/dumps"))
    parser.add_argument("--db", type=Path, default=Path("/work/archive/catalog.db"))
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--processes", type=int, default=2, help="catalog serving processes")
    parser.add_argument("--import-nice", type=int, default=0, help="run the import under nice -n N")
    parser.add_argument("--requests", type=int, default=100, help="requests per endpoint and client count")
    parser.add_argument("--seconds", type=float, default=10.0, help="time cap per endpoint and client count")
    parser.add_argument("--only", default="", help="measure only endpoints whose name contains this")
    parser.add_argument("--out", default="BENCHMARKS.md", help="file to update, or - to print")
    args = parser.parse_args()
    if args.skip_import:
        imported = json.loads(Path(f"{args.db}.import.json").read_text(encoding="utf-8"))
    else:
        imported = run_import(args.data, args.db, args.import_nice)
        print(f"import: {imported['seconds']:.0f} s, peak RSS {imported['peak_rss_bytes'] / 2**30:.2f} GiB",
              flush=True)
    db_bytes, beside = sizes(args.db)
    catalog = counts(args.db)
    load_start = os.getloadavg()[0]
    log_dir = Path("/tmp/pwc-archive-bench")
    log_dir.mkdir(exist_ok=True)
    rows: list[Row] = []
    with ProcessGroup(log_dir) as group:
        _, api = group.start_catalog("catalog", "--db", str(args.db), "--processes", str(args.processes))
        port = free_port()
        group.start_pwc_mcp("gateway", "gateway", ["gateway"], {**GATEWAY_ENV, "PWC_API_URL": api, "PORT": str(port)},
                            wait_path="/health")
        mcp = f"http://127.0.0.1:{port}"
        probe = _probe(api)
        cold_ms = asyncio.run(cold_get_task(mcp, probe["board_task"]))
        print(f"get_task cold through /mcp: {cold_ms:,.0f} ms", flush=True)
        for name, call in endpoints(api, mcp, probe).items():
            if args.only and args.only not in name:
                continue
            one, many = asyncio.run(measure(call, args.requests, args.seconds))
            rows.append(Row(name, one, many))
            print(f"{name}: {one[0]:.1f}/{one[1]:.1f} ms; {CLIENTS} clients {many[0]:.1f}/{many[1]:.1f} ms, "
                  f"{many[3]:.1f}/s", flush=True)
    command = " ".join(["uv run python bench/archive_bench.py", *sys.argv[1:]])
    section = render(command, imported, db_bytes, beside, cold_ms, rows, args.processes, catalog,
                     (load_start, os.getloadavg()[0]))
    publish_section(args.out, SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
