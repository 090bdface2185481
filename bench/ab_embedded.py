"""Embedded mode against a baseline revision, same run: the A/B that shows a slower request path before it lands.

Usage: ``uv run python bench/ab_embedded.py [--baseline 71eb608] [--rounds 5] [--seconds 5]
[--connections 32] [--baseline-tree DIR] [--tree DIR] [--no-pin] [--write]``.

Makes a ``git worktree`` of ``--baseline`` in a temporary directory and ``uv sync --frozen`` s its
own ``.venv`` there (the two lock files differ; ``--baseline-tree`` reuses a synced checkout
instead), starts this checkout's sample catalog once, then for ``--rounds`` rounds runs the
baseline's and this checkout's embedded ``pwc-mcp gateway`` (no Redis) one after the other,
the order flipped each round so host drift hits both. Each gateway answers wrk (one thread,
``--connections`` connections) on ``initialize``, ``tools/list`` and the cached
``tools/call`` (``list_conferences``, warmed first). With two or more CPUs the gateway is
pinned to the first and wrk to the second (``taskset``; ``--no-pin`` leaves them free).

Prints, per round and operation, req/s and the gateway's CPU µs per request (``/proc`` user +
system) of both and the new ÷ old ratios; then per operation the median ratios and whether
every round of the new code was slower than every round of the old. The goal (`GOAL`) is on
CPU per request, which a shared host blurs far less than the rate. The load average
is read before and after. ``--write`` puts the ``## Embedded A/B`` section in ``BENCHMARKS.md``
(``bench.report.replace_section``; ``bench/run.py`` keeps it). Exit status 1 when an operation
misses the goal (`GOAL`). Needs git, uv, wrk and taskset.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cpu_per_call import cpu_seconds, free_port, stop, wait_http
from bench.load import PROTOCOL, initialize_body, rpc_body
from bench.report import machine_info, replace_section

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TICKS = os.sysconf("SC_CLK_TCK")
TITLE = "## Embedded A/B"
GOAL = 1.03
"""The new code's gateway CPU per request ÷ the baseline's, median over rounds, per operation: at most this.

CPU per request, not the rate: on a shared host the rate of a round swings by 2× with the other
jobs' load, the CPU a request costs moves by a few percent (`bench/cpu_per_call.py`)."""

CALL = rpc_body("tools/call", {"name": "list_conferences", "arguments": {}})
# (key, label, body, MCP-Protocol-Version header, check the body): as bench/load.py's workloads
OPERATIONS = (
    ("initialize", "initialize", initialize_body(), "", False),
    ("tools_list", "`tools/list`", rpc_body("tools/list", {}), PROTOCOL, False),
    ("cached_call", "cached `tools/call` (list_conferences)", CALL, PROTOCOL, True),
)


def loadavg() -> str:
    """The 1-minute load average."""
    return Path("/proc/loadavg").read_text().split()[0]


def start(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own session, its output into ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@contextmanager
def baseline_tree(revision: str, given: Path | None) -> Iterator[Path]:
    """A synced checkout of ``revision``: ``given`` as is, else a temporary git worktree with its own venv."""
    if given is not None:
        yield given.resolve()
        return
    tmp = Path(tempfile.mkdtemp(prefix="pwc-ab-embedded-"))
    tree = tmp / "baseline"
    try:
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), revision], cwd=REPO, check=True,
                       capture_output=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
        subprocess.run(["uv", "sync", "--frozen", "--quiet"], cwd=tree, env=env, check=True)
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True,
                       check=False)
        shutil.rmtree(tmp, ignore_errors=True)


def wrk(url: str, body_file: Path, protocol: str, check_body: bool, seconds: int, connections: int,
        cpu: int | None) -> tuple[int, float]:
    """Run wrk with ``bench/wrk/mcp.lua``; answered requests and wrk's seconds (raises on a bad answer)."""
    env = {**os.environ, "BENCH_BODIES": str(body_file), "BENCH_THREADS": "1", "BENCH_OFFSET": "0",
           "BENCH_CLIENTS": "1024", "BENCH_PROTOCOL": protocol, "BENCH_CHECK_BODY": "1" if check_body else "0"}
    cmd = ["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s", "--timeout", "30s",
           "-s", str(HERE / "wrk" / "mcp.lua"), url]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    data = json.loads(next(line for line in out.splitlines() if line.startswith("BENCH_JSON")).split(" ", 1)[1])
    if data["bad_responses"] or data["socket_errors"]:
        raise RuntimeError(f"{data['bad_responses']} bad responses, {data['socket_errors']} socket errors from {url}")
    return int(data["requests"]), data["duration_us"] / 1e6


def measure(tree: Path, catalog_url: str, bodies: dict[str, Path], seconds: int, connections: int,
            pin: tuple[int, int] | None, logs: Path) -> dict[str, tuple[float, float]]:
    """Start ``tree``'s embedded gateway; per operation (req/s, gateway CPU µs per request)."""
    port = free_port()
    env = {**os.environ, "PWC_API_URL": catalog_url, "PWC_MCP_CURSOR_KEY_CURRENT": "bench-key-0123456789abcdef0123456",
           "PORT": str(port), "LOG_LEVEL": "WARNING", "PWC_MCP_REQUEST_LIMIT": "10000",
           "PWC_MCP_CONCURRENCY_LIMIT": "1000", "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "1000"}
    for key in ("PWC_MCP_REDIS_URL", "VIRTUAL_ENV"):
        env.pop(key, None)
    cmd = [str(tree / ".venv/bin/pwc-mcp"), "gateway"]
    if pin is not None:
        cmd = ["taskset", "-c", str(pin[0]), *cmd]
    log = logs / f"gateway-{port}.log"
    gateway = start(cmd, tree, env, log)
    base = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_http(f"{base}/health")
        except RuntimeError:
            print(log.read_text(errors="replace")[-2000:], file=sys.stderr)
            raise
        warm = urllib.request.Request(f"{base}/mcp", data=CALL.encode(), headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(warm, timeout=30) as response:
            if response.status != 200 or b'"isError":true' in response.read():
                raise RuntimeError(f"{tree}: the warm-up call failed")
        wrk(base, bodies["tools_list"], PROTOCOL, False, 1, connections, None if pin is None else pin[1])
        result = {}
        for key, _, _, protocol, check_body in OPERATIONS:
            before = cpu_seconds(gateway.pid)
            calls, elapsed = wrk(base, bodies[key], protocol, check_body, seconds, connections,
                                 None if pin is None else pin[1])
            result[key] = (calls / elapsed, (cpu_seconds(gateway.pid) - before) / calls * 1e6)
        return result
    finally:
        stop([gateway])


def _med(values: list[float]) -> float:
    return statistics.median(values)


def section(rows: dict[str, list[tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]]]],
            args: argparse.Namespace, loads: tuple[str, str], new_name: str) -> str:
    """The Markdown section: per operation, each round's rates, the ratios, CPU per request and the verdict."""
    info = machine_info()
    pin = "gateway pinned to CPU 0, wrk to CPU 1" if not args.no_pin else "unpinned"
    lines = [
        TITLE, "",
        f"Generated by `uv run python bench/ab_embedded.py --baseline {args.baseline} --rounds {args.rounds} "
        f"--seconds {args.seconds:g} --connections {args.connections} --write` on {info['nproc']} cores "
        f"({info['cpu']}, Python {info['python']}; load average {loads[0]} at the start, {loads[1]} at the end; "
        f"{pin}). The embedded gateway (`pwc-mcp gateway`, no Redis) of `{args.baseline}` (its own worktree and "
        f"venv) and of `{new_name}` answer wrk (1 thread, {args.connections} connections, {args.seconds:g} s per "
        "operation) on the sample catalog, one after the other, the order flipped each round; the gateway's "
        "CPU per request is read from `/proc`. "
        f"Goal: on every operation the new code's gateway CPU per request is at most {GOAL:.2f}× the "
        "baseline's (median of the rounds' ratios); the rates are shown, but on this shared host a round's "
        "rate swings with the other jobs' load far more than the CPU a request costs.",
        "",
        "| operation | req/s old (rounds) | req/s new (rounds) | rate new ÷ old (rounds) | CPU µs/req old (rounds) | "
        "CPU µs/req new (rounds) | CPU new ÷ old, median (rounds) | goal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, label, *_ in OPERATIONS:
        olds = [old[key] for old, _ in rows[key]]
        news = [new[key] for _, new in rows[key]]
        rates = [n[0] / o[0] for o, n in zip(olds, news, strict=True)]
        cpus = [n[1] / o[1] for o, n in zip(olds, news, strict=True)]
        verdict = "PASS" if _med(cpus) <= GOAL else "FAIL"
        lines.append(
            f"| {label} | {_med([o[0] for o in olds]):,.0f} ({' / '.join(f'{o[0]:,.0f}' for o in olds)}) | "
            f"{_med([n[0] for n in news]):,.0f} ({' / '.join(f'{n[0]:,.0f}' for n in news)}) | "
            f"{_med(rates):.2f} ({' / '.join(f'{r:.2f}' for r in rates)}) | "
            f"{_med([o[1] for o in olds]):,.0f} ({' / '.join(f'{o[1]:,.0f}' for o in olds)}) | "
            f"{_med([n[1] for n in news]):,.0f} ({' / '.join(f'{n[1]:,.0f}' for n in news)}) | "
            f"**{_med(cpus):.2f}** ({' / '.join(f'{c:.2f}' for c in cpus)}) | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the A/B, print it, and with ``--write`` publish it; 1 when an operation misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline", default="71eb608", help="the revision to compare with")
    parser.add_argument("--baseline-tree", type=Path, help="a synced checkout of the baseline to reuse")
    parser.add_argument("--tree", type=Path, default=REPO, help="the synced checkout to test (default this one)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=5, help="seconds of wrk per operation")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--no-pin", action="store_true", help="leave the gateway and wrk unpinned")
    parser.add_argument("--write", action="store_true", help="publish the section in BENCHMARKS.md")
    args = parser.parse_args(argv)
    cpus = sorted(os.sched_getaffinity(0))
    pin = (cpus[0], cpus[1]) if not args.no_pin and len(cpus) >= 2 and shutil.which("taskset") else None
    args.no_pin = pin is None
    new_tree = args.tree.resolve()
    new_name = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=new_tree, capture_output=True, text=True,
                              check=False).stdout.strip() or "HEAD"
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=new_tree, capture_output=True,
                      text=True, check=False).stdout.strip():
        new_name += " + uncommitted changes"
    load_start = loadavg()
    print(f"load average at the start: {load_start}", flush=True)
    with tempfile.TemporaryDirectory(prefix="pwc-ab-bodies-") as tmp, \
            baseline_tree(args.baseline, args.baseline_tree) as old_tree:
        bodies = {}
        for key, _, body, _, _ in OPERATIONS:
            bodies[key] = Path(tmp) / f"{key}.jsonl"
            bodies[key].write_text(body + "\n", encoding="utf-8")
        cat_port = free_port()
        catalog = start([sys.executable, "-m", "catalog", "serve", "--sample", "--port", str(cat_port)], REPO,
                        dict(os.environ), Path(tmp) / "catalog.log")
        catalog_url = f"http://127.0.0.1:{cat_port}/api/v1"
        rows: dict[str, list[tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]]]] = {
            key: [] for key, *_ in OPERATIONS}
        try:
            wait_http(f"{catalog_url}/conferences")
            for round_ in range(args.rounds):
                got: dict[str, dict[str, tuple[float, float]]] = {}
                order = (("old", old_tree), ("new", new_tree))
                for name, tree in order if round_ % 2 == 0 else reversed(order):
                    got[name] = measure(tree, catalog_url, bodies, args.seconds, args.connections, pin, Path(tmp))
                for key, *_ in OPERATIONS:
                    old, new = got["old"][key], got["new"][key]
                    rows[key].append((got["old"], got["new"]))
                    print(f"round {round_ + 1} {key:12s} old {old[0]:8,.0f} req/s {old[1]:6,.0f} µs/req | "
                          f"new {new[0]:8,.0f} req/s {new[1]:6,.0f} µs/req | new ÷ old rate {new[0] / old[0]:.2f} "
                          f"CPU {new[1] / old[1]:.2f} "
                          f"(load {loadavg()})", flush=True)
        finally:
            stop([catalog])
    loads = (load_start, loadavg())
    text = section(rows, args, loads, new_name)
    if args.write:
        replace_section(REPO / "BENCHMARKS.md", TITLE, text, before="## REST and SSE")
    print(text)
    failed = False
    for key, *_ in OPERATIONS:
        olds = [old[key] for old, _ in rows[key]]
        news = [new[key] for _, new in rows[key]]
        if max(n[0] for n in news) < min(o[0] for o in olds):
            print(f"{key}: every round of the new code had a lower rate than every round of the baseline")
        if min(n[1] for n in news) > max(o[1] for o in olds):
            print(f"{key}: every round of the new code cost more CPU per request than every round of the baseline")
        failed |= _med([n[1] / o[1] for o, n in zip(olds, news, strict=True)]) > GOAL
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
