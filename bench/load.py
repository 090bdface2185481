"""Load-generation helpers: JSON-RPC bodies for each workload and a ``wrk`` runner.

The load comes from ``wrk`` (a separate C process) driven by ``bench/wrk/mcp.lua``:
the bodies of a workload are written one per line to a file the script replays
round robin, as ``BENCH_CLIENTS`` distinct ``X-PwC-MCP-Client`` identities.
Latency percentiles come from wrk's own histogram (microseconds).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "PROTOCOL",
    "Catalog",
    "Workload",
    "WrkResult",
    "call_body",
    "discover",
    "rpc_body",
    "run_wrk",
    "sanity_check",
    "workloads",
    "write_all",
]

logger = logging.getLogger(__name__)

LUA_SCRIPT = Path(__file__).resolve().parent / "wrk" / "mcp.lua"
PROTOCOL = "2025-11-25"
"""The MCP protocol version the simulated clients negotiate (stateless legacy era)."""

_WORD = re.compile(r"[A-Za-z]{4,}")


def rpc_body(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> str:
    """One compact JSON-RPC 2.0 request line."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":"))


def call_body(tool: str, arguments: dict[str, Any], request_id: int = 1) -> str:
    """A ``tools/call`` request line."""
    return rpc_body("tools/call", {"name": tool, "arguments": arguments}, request_id)


def initialize_body() -> str:
    return rpc_body("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                   "clientInfo": {"name": "pwc-bench", "version": "1"}})


@dataclass(frozen=True)
class Catalog:
    """What the running catalog holds that the workloads refer to."""

    papers: tuple[str, ...]        # arXiv ids (or catalog ids) of papers
    readable: tuple[str, ...]      # papers whose Markdown the catalog serves
    benchmarks: tuple[str, ...]    # dataset names with evaluations
    words: tuple[str, ...]         # title words, for search queries


def _items(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):
        rows = payload.get("results", payload.get("items", []))
        return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []
    return [row for row in payload if isinstance(row, dict)] if isinstance(payload, list) else []


def discover(api_url: str, *, max_papers: int = 100) -> Catalog:
    """Ask the catalog API directly for paper ids, readable papers, benchmarks and title words.

    Raises:
        RuntimeError: the catalog holds no papers.
    """
    with httpx.Client(base_url=api_url.rstrip("/") + "/", timeout=30.0) as client:
        papers = _items(client.get("papers/", params={"page_size": max_papers}).json())
        refs: list[str] = []
        words: list[str] = []
        for paper in papers:
            ref = paper.get("arxiv_id") or paper.get("id")
            if ref:
                refs.append(str(ref))
            words += [w.lower() for w in _WORD.findall(str(paper.get("title") or ""))]
        readable = [ref for ref in refs[:max_papers]
                    if client.get(f"research/papers/{ref}/read", params={"limit": 64}).status_code == 200]
        datasets = _items(client.get("datasets/", params={"page_size": 50}).json())
    benchmarks = [str(d.get("name") or d.get("slug")) for d in datasets if d.get("name") or d.get("slug")]
    if not refs:
        raise RuntimeError("the catalog returned no papers")
    unique_words = tuple(dict.fromkeys(words)) or ("learning", "network", "transformer")
    return Catalog(tuple(refs), tuple(readable or refs[:1]), tuple(benchmarks), unique_words)


@dataclass(frozen=True)
class Workload:
    """A named load shape: request bodies replayed in order; ``warm`` bodies are sent once first."""

    key: str
    label: str
    bodies: tuple[str, ...]
    warm: tuple[str, ...] = ()
    protocol: str = PROTOCOL
    # Tool results can fail with HTTP 200 (a JSON-RPC error or isError), so their bodies
    # are read; a static method's failure shows in its status. Reading a 44 KB tools/list
    # body in wrk's Lua cost it about three times the CPU per request, on the 2 cores
    # the server under test shares with it.
    check_body: bool = True

    def write(self, directory: Path) -> Path:
        path = directory / f"{self.key}.jsonl"
        path.write_text("\n".join(self.bodies) + "\n", encoding="utf-8")
        return path


def workloads(catalog: Catalog, *, distinct: int = 200_000) -> dict[str, Workload]:
    """The six workloads of the brief, keyed ``initialize``, ``tools_list``, ``cached_call``,
    ``uncached_search``, ``read_chunk`` and ``mixed``.

    ``uncached_search`` has ``distinct`` different keyword queries so no request
    hits the search cache; ``mixed`` replays agent sessions (search → info →
    read first chunk → leaderboard) over the catalog's papers and benchmarks.
    """
    words = catalog.words
    queries = [f"{words[i % len(words)]} {words[(i * 7 + 3) % len(words)]} {i}" for i in range(distinct)]
    cached = call_body("list_conferences", {})
    reads = tuple(call_body("read_paper", {"paper": ref}) for ref in catalog.readable)
    agent: list[str] = []
    sessions = max(len(catalog.papers), 1)
    for i in range(sessions):
        paper = catalog.papers[i % len(catalog.papers)]
        readable = catalog.readable[i % len(catalog.readable)]
        agent.append(call_body("search_papers", {"query": f"{words[i % len(words)]}", "mode": "keyword",
                                                 "limit": 10}))
        agent.append(call_body("get_paper_info", {"paper": paper}))
        agent.append(call_body("read_paper", {"paper": readable}))
        if catalog.benchmarks:
            agent.append(call_body("get_benchmark", {"benchmark": catalog.benchmarks[i % len(catalog.benchmarks)],
                                                     "limit": 10}))
    return {
        "initialize": Workload("initialize", "initialize", (initialize_body(),), protocol="", check_body=False),
        "tools_list": Workload("tools_list", "tools/list", (rpc_body("tools/list", {}),), check_body=False),
        "cached_call": Workload("cached_call", "cached tools/call (list_conferences)", (cached,), warm=(cached,)),
        "uncached_search": Workload(
            "uncached_search", "uncached search_papers (keyword, distinct queries)",
            tuple(call_body("search_papers", {"query": q, "mode": "keyword", "limit": 10}) for q in queries)),
        "read_chunk": Workload("read_chunk", "read_paper first chunk", reads, warm=reads),
        "mixed": Workload("mixed", "mixed agent session (search → info → read → leaderboard)", tuple(agent)),
    }


def sanity_check(base_url: str, workload: Workload, *, client_id: str = "bench-sanity") -> None:
    """Send each warm-up body (or the first body) once and fail loudly on an error answer.

    Raises:
        RuntimeError: a non-200 status, a JSON-RPC error or a tool result with ``isError``.
    """
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "X-PwC-MCP-Client": client_id}
    if workload.protocol:
        headers["MCP-Protocol-Version"] = workload.protocol
    with httpx.Client(timeout=60.0) as client:
        for body in workload.warm or workload.bodies[:1]:
            response = client.post(f"{base_url}/mcp", content=body, headers=headers)
            text = response.text
            if response.status_code != 200 or '"error"' in text[:48] or '"isError":true' in text.replace(" ", ""):
                raise RuntimeError(f"{workload.key}: sanity request failed: {response.status_code} {text[:400]}")


@dataclass(frozen=True)
class WrkResult:
    """One wrk run: throughput and latency (milliseconds) plus error counts."""

    connections: int
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    bad_responses: int
    socket_errors: int
    timeouts: int
    first_error: str = ""

    @property
    def errors(self) -> int:
        return self.bad_responses + self.socket_errors + self.timeouts


def wrk_threads(connections: int) -> int:
    """wrk threads: one per core we may use (2 at most), never more than connections."""
    return max(1, min(connections, 2, os.cpu_count() or 1))


def run_wrk(base_url: str, workload: Workload, bodies_path: Path, *, connections: int, seconds: float,
            offset: int = 0, clients: int = 1024) -> WrkResult:
    """Run ``wrk`` against ``base_url/mcp`` and parse the line ``done()`` prints.

    Raises:
        RuntimeError: wrk is missing, failed, or printed no result line.
    """
    binary = shutil.which("wrk")
    if binary is None:
        raise RuntimeError("wrk is not installed")
    threads = wrk_threads(connections)
    env = {**os.environ, "BENCH_BODIES": str(bodies_path), "BENCH_THREADS": str(threads),
           "BENCH_OFFSET": str(offset), "BENCH_CLIENTS": str(clients), "BENCH_PROTOCOL": workload.protocol,
           "BENCH_CHECK_BODY": "1" if workload.check_body else "0"}
    argv = [binary, "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(seconds))}s",
            "--timeout", "30s", "-s", str(LUA_SCRIPT), base_url]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=seconds + 60, check=False)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH_JSON ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({proc.returncode}): {proc.stderr[-500:]} {proc.stdout[-500:]}")
    data = json.loads(line.split(" ", 1)[1])
    duration = data["duration_us"] / 1e6
    first_error = next((ln for ln in proc.stderr.splitlines() if ln.startswith("BENCH_ERROR")), "")
    return WrkResult(connections=connections, requests=data["requests"], seconds=duration,
                     rps=data["requests"] / duration if duration else 0.0,
                     p50_ms=data["p50_us"] / 1000, p95_ms=data["p95_us"] / 1000, p99_ms=data["p99_us"] / 1000,
                     max_ms=data["max_us"] / 1000, bad_responses=data["bad_responses"],
                     socket_errors=data["socket_errors"], timeouts=data["timeouts"], first_error=first_error[:300])


def write_all(directory: Path, loads: Iterable[Workload]) -> dict[str, Path]:
    """Write each workload's body file into ``directory``; returns key → path."""
    return {load.key: load.write(directory) for load in loads}
