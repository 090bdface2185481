"""CPU time per cached call, per surface and per checkout: the A/B that a shared, noisy host cannot blur.

Usage: ``python3 bench/cpu_per_call.py CHECKOUT [CHECKOUT ...] [--mode embedded|redis]
[--seconds 4] [--rounds 3] [--connections 8]``.

Each checkout needs its own ``uv sync``ed ``.venv``. For each round and checkout (interleaved,
so host drift hits every one alike) it starts that checkout's gateway (Redis mode: plus one
worker, on a private redis-server) on the sample catalog, warms the cached
``list_conferences`` call, then runs wrk against ``POST /mcp`` (``tools/call``) and
``GET /v1/tools/list_conferences`` (REST) and reads the user+system CPU seconds the gateway
(and the worker) spent (``/proc/<pid>/stat``). It prints, per checkout and surface, the
median over rounds of CPU microseconds per answered call, and the REST ÷ ``/mcp`` ratio.
Wall-clock rates on a host whose load average is ten times its cores say little; the CPU a
call costs is what a busy host divides among the calls, so it is the figure compared here.
Needs wrk, curl and redis-server on ``PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
CALL = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_conferences","arguments":{}}}'
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def wait_http(url: str, timeout_s: float = 60.0) -> None:
    """Wait until ``url`` answers."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def start(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Stop every process started here (and what it forked)."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wrk(url: str, script: str, bodies: Path, seconds: int, connections: int) -> int:
    env = {**os.environ, "BENCH_BODIES": str(bodies), "BENCH_THREADS": "1", "BENCH_OFFSET": "0",
           "BENCH_CLIENTS": "1024", "BENCH_PROTOCOL": "", "BENCH_CHECK_BODY": "1"}
    out = subprocess.run(["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "30s",
                          "-s", str(HERE / "wrk" / script), url], env=env, capture_output=True, text=True,
                         check=True).stdout
    data = json.loads(next(line for line in out.splitlines() if line.startswith("BENCH_JSON")).split(" ", 1)[1])
    if data["bad_responses"]:
        raise RuntimeError(f"{data['bad_responses']} bad responses from {url}")
    return int(data["requests"])


def measure(tree: Path, mode: str, catalog_url: str, redis_url: str | None, bodies: Path, seconds: int,
            connections: int) -> dict[str, float]:
    port = free_port()
    env = {**os.environ, "PWC_API_URL": catalog_url, "PWC_MCP_CURSOR_KEY_CURRENT": "bench-key-0123456789abcdef0123456", "PORT": str(port),
           "LOG_LEVEL": "WARNING", "PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_CONCURRENCY_LIMIT": "1000",
           "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "1000"}
    env.pop("PWC_MCP_REDIS_URL", None)
    procs = []
    if mode == "redis":
        assert redis_url is not None
        env["PWC_MCP_REDIS_URL"] = redis_url
        procs.append(start([str(tree / ".venv/bin/pwc-mcp"), "worker"], tree, env))
    procs.append(start([str(tree / ".venv/bin/pwc-mcp"), "gateway"], tree, env))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{base}/health")
        request = urllib.request.Request(f"{base}/mcp", data=CALL, headers={"Content-Type": "application/json"})
        for _ in range(20):  # the worker may need a moment to be seen alive
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        result = {}
        for surface, script in (("mcp", "mcp.lua"), ("rest", "rest.lua")):
            before = [cpu_seconds(p.pid) for p in procs]
            calls = wrk(base, script, bodies, seconds, connections)
            after = [cpu_seconds(p.pid) for p in procs]
            result[f"{surface}_gateway_us"] = (after[-1] - before[-1]) / calls * 1e6
            result[f"{surface}_total_us"] = sum(a - b for a, b in zip(after, before, strict=True)) / calls * 1e6
        return result
    finally:
        stop(procs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--mode", choices=("embedded", "redis"), default="embedded")
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.trees]
    procs = []
    cat_port = free_port()
    procs.append(start([str(trees[0] / ".venv/bin/python"), "-m", "catalog", "serve", "--sample", "--port",
                        str(cat_port)], trees[0], dict(os.environ)))
    redis_url = None
    if args.mode == "redis":
        redis_port = free_port()
        procs.append(start(["redis-server", "--port", str(redis_port), "--save", "", "--appendonly", "no"],
                           Path(tempfile.gettempdir()), dict(os.environ)))
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
    catalog_url = f"http://127.0.0.1:{cat_port}/api/v1"
    results: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl") as bodies:
        bodies.write(CALL + b"\n")
        bodies.flush()
        try:
            wait_http(f"{catalog_url}/conferences")
            for round_ in range(args.rounds):
                order = trees if round_ % 2 == 0 else list(reversed(trees))
                for tree in order:
                    if redis_url is not None:
                        subprocess.run(["redis-cli", "-u", redis_url, "flushall"], capture_output=True, check=True)
                    got = measure(tree, args.mode, catalog_url, redis_url, Path(bodies.name), args.seconds,
                                  args.connections)
                    results[tree].append(got)
                    print(f"round {round_ + 1} {tree.name} {args.mode} "
                          + " ".join(f"{k}={v:.0f}" for k, v in got.items()), flush=True)
        finally:
            stop(procs)
    print(f"\nmedian CPU µs per call over {args.rounds} rounds ({args.mode}, {args.connections} connections):")
    for tree, rows in results.items():
        med = {key: statistics.median(row[key] for row in rows) for key in rows[0]}
        print(f"{tree.name}: /mcp gateway {med['mcp_gateway_us']:.0f} total {med['mcp_total_us']:.0f} | "
              f"REST gateway {med['rest_gateway_us']:.0f} total {med['rest_total_us']:.0f} | "
              f"REST ÷ /mcp (total) {med['rest_total_us'] / med['mcp_total_us']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
