"""Embedded mode against a baseline revision, same run: the A/B that shows a slower request path before it lands.

Usage: ``uv run python bench/ab_embedded.py [--baseline 71eb608] [--requests 1600] [--rounds 3]
[--seconds 5] [--connections 32] [--baseline-tree DIR] [--tree DIR] [--no-pin] [--write]``.

Makes a ``git worktree`` of ``--baseline`` in a temporary directory and ``uv sync --frozen`` s its
own ``.venv`` there (the two lock files differ; ``--baseline-tree`` reuses a synced checkout
instead) and starts this checkout's sample catalog once. Then, for the baseline's and this
checkout's embedded ``pwc-mcp gateway`` (no Redis), on ``initialize``, ``tools/list`` and the
cached ``tools/call`` (``list_conferences``, warmed first):

* **The gate: instructions per request.** The gateway runs under ``valgrind --tool=callgrind``
  (``PYTHONHASHSEED=0``, instrumentation switched on once it answers). Per operation, a warm-up
  of ``--requests`` ÷ 4, then ``callgrind_control --zero``, exactly ``--requests`` requests over
  ``--connections`` keep-alive connections, and ``callgrind_control --dump``: the dump's
  instruction count ÷ the requests. The count does not move with the host's load (two runs of
  one checkout agree within 1%, at any load), so a regression of a few percent shows; the rounds below
  cannot show it.
* **Shown beside it: wrk rounds.** ``--rounds`` rounds (0 skips them) of wrk (one thread,
  ``--connections`` connections, ``--seconds`` per operation) against each gateway, the order
  flipped each round so host drift hits both; req/s and the gateway's CPU µs per request
  (``/proc`` user + system). With two or more CPUs the gateway is pinned to the first and wrk to
  the second (``taskset``; ``--no-pin`` leaves them free).

Prints both, and the new ÷ old ratios. The goal (`GOAL`) is on instructions per request.
``--write`` puts the ``## Embedded A/B`` section in ``BENCHMARKS.md``
(``bench.report.replace_section``; ``bench/run.py`` keeps it). Exit status 1 when an operation
misses the goal. Needs git, uv, valgrind (``callgrind_control``), and for the rounds wrk and
taskset.
"""

from __future__ import annotations

import argparse
import asyncio
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

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cpu_per_call import cpu_seconds, free_port, stop, wait_http
from bench.load import PROTOCOL, initialize_body, rpc_body
from bench.report import machine_info, replace_section

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TITLE = "## Embedded A/B"
GOAL = 1.03
"""The new code's gateway instructions per request ÷ the baseline's, per operation: at most this.

Instructions (callgrind), not time: on a shared host a round's rate swings by 2× with the other
jobs' load and its CPU per request by up to ±20%, while the instruction count of one checkout repeats
within 1%."""
WRK_CPU_WARN = 1.10
"""A wrk rounds' CPU-per-request ratio over this is printed as a warning (not a failure): it moves
with the host's load, but it sees the kernel work (system calls) the instruction count does not."""
WAIT_CALLGRIND_S = 300.0
"""How long a gateway under callgrind may take to answer (it starts with instrumentation off)."""

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


def gateway_env(catalog_url: str, port: int) -> dict[str, str]:
    """The embedded gateway's environment: the sample catalog, no Redis, limits above the load."""
    env = {**os.environ, "PWC_API_URL": catalog_url, "PWC_MCP_CURSOR_KEY_CURRENT": "bench-key-0123456789abcdef0123456",
           "PORT": str(port), "LOG_LEVEL": "WARNING", "PWC_MCP_REQUEST_LIMIT": "10000",
           "PWC_MCP_CONCURRENCY_LIMIT": "1000", "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "1000"}
    for key in ("PWC_MCP_REDIS_URL", "VIRTUAL_ENV"):
        env.pop(key, None)
    return env


def wait_and_warm(base: str, tree: Path, log: Path, timeout_s: float = 60.0) -> None:
    """Wait for the gateway at ``base`` to answer, then make the cached call once (its cache warm)."""
    try:
        wait_http(f"{base}/health", timeout_s)
    except RuntimeError:
        print(log.read_text(errors="replace")[-2000:], file=sys.stderr)
        raise
    warm = urllib.request.Request(f"{base}/mcp", data=CALL.encode(), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(warm, timeout=timeout_s) as response:
        if response.status != 200 or b'"isError":true' in response.read():
            raise RuntimeError(f"{tree}: the warm-up call failed")


def measure(tree: Path, catalog_url: str, bodies: dict[str, Path], seconds: int, connections: int,
            pin: tuple[int, int] | None, logs: Path) -> dict[str, tuple[float, float]]:
    """Start ``tree``'s embedded gateway; per operation (req/s, gateway CPU µs per request) under wrk."""
    port = free_port()
    cmd = [str(tree / ".venv/bin/pwc-mcp"), "gateway"]
    if pin is not None:
        cmd = ["taskset", "-c", str(pin[0]), *cmd]
    log = logs / f"gateway-{port}.log"
    gateway = start(cmd, tree, gateway_env(catalog_url, port), log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_and_warm(base, tree, log)
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


REQUESTS_TIMEOUT_S = 600.0
"""How long one batch of exact requests may take under callgrind (then the bench stops, not hangs)."""


def exact_requests(port: int, body: str, protocol: str, total: int, connections: int) -> None:
    """Send exactly ``total`` ``POST /mcp`` requests over at most ``connections`` keep-alive connections.

    ``connections`` senders, each sending its share one after another and naming its own client
    (``X-PwC-MCP-Client``), as wrk's script does, so the per-client request limit never refuses a
    long run. Raises ``RuntimeError`` on a bad answer and ``TimeoutError`` after `REQUESTS_TIMEOUT_S`."""
    data = body.encode()
    counts = [total // connections + (1 if i < total % connections else 0) for i in range(connections)]
    url = f"http://127.0.0.1:{port}/mcp"

    async def send(http: aiohttp.ClientSession, client: int, count: int) -> None:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "X-PwC-MCP-Client": f"bench-{client}", **({"MCP-Protocol-Version": protocol} if protocol else {})}
        for _ in range(count):
            async with http.post(url, data=data, headers=headers) as response:
                answer = await response.read()
                if response.status != 200 or b'"isError":true' in answer:
                    raise RuntimeError(f"bad answer: {response.status} {answer[:200]!r}")

    async def run() -> None:
        async with asyncio.timeout(REQUESTS_TIMEOUT_S), aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=connections)) as http:
            await asyncio.gather(*(send(http, i, n) for i, n in enumerate(counts) if n))

    asyncio.run(run())


def callgrind_control(pid: int, command: str) -> None:
    """Run ``callgrind_control command pid``; raise unless it says OK (it exits 0 on its errors too)."""
    done = subprocess.run(["callgrind_control", command, str(pid)], capture_output=True, text=True, timeout=120,
                          check=False)
    if done.returncode != 0 or "OK." not in done.stdout:
        raise RuntimeError(f"callgrind_control {command} {pid} failed: {(done.stdout + done.stderr).strip()[-500:]}")


def dumped_instructions(pid: int, out: Path) -> int:
    """Dump the counts of the callgrind run ``pid`` writing ``out`` (``--callgrind-out-file``) and
    return the instructions since its last ``--zero``, from the new dump's ``summary:`` line."""
    before = set(out.parent.glob(f"{out.name}.*"))
    callgrind_control(pid, "--dump")
    new = sorted(set(out.parent.glob(f"{out.name}.*")) - before)
    if len(new) != 1:
        raise RuntimeError(f"expected one new callgrind dump of {out.name}, found {[p.name for p in new]}")
    summary = [line for line in new[0].read_text().splitlines() if line.startswith("summary:")]
    if len(summary) != 1:
        raise RuntimeError(f"{new[0].name} has no 'summary:' line")
    return int(summary[0].split()[1])


def instructions(tree: Path, catalog_url: str, requests: int, connections: int, logs: Path) -> dict[str, float]:
    """Start ``tree``'s embedded gateway under callgrind; per operation, instructions per request.

    Counts user-space instructions only: a change that adds system calls (work in the kernel)
    shows in the wrk rounds' CPU per request, not here."""
    port = free_port()
    out = logs / f"callgrind-{port}.out"
    env = {**gateway_env(catalog_url, port), "PYTHONHASHSEED": "0"}
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
           str(tree / ".venv/bin/python"), str(tree / ".venv/bin/pwc-mcp"), "gateway"]
    log = logs / f"gateway-{port}.log"
    gateway = start(cmd, tree, env, log)
    try:
        wait_and_warm(f"http://127.0.0.1:{port}", tree, log, WAIT_CALLGRIND_S)
        callgrind_control(gateway.pid, "--instr=on")
        result = {}
        for key, _, body, protocol, _ in OPERATIONS:
            exact_requests(port, body, protocol, max(requests // 4, connections), connections)
            callgrind_control(gateway.pid, "--zero")
            exact_requests(port, body, protocol, requests, connections)
            result[key] = dumped_instructions(gateway.pid, out) / requests
        return result
    finally:
        stop([gateway])


def _med(values: list[float]) -> float:
    return statistics.median(values)


Rounds = dict[str, list[tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]]]]
"""Per operation, each round's (old, new) measurements: per operation (req/s, CPU µs per request)."""


def ratios(counts: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per operation, the new code's instructions per request ÷ the baseline's."""
    return {key: counts["new"][key] / counts["old"][key] for key, *_ in OPERATIONS}


def section(counts: dict[str, dict[str, float]], rows: Rounds, args: argparse.Namespace, loads: tuple[str, str],
            new_name: str) -> str:
    """The Markdown section: instructions per request and the verdict, then the wrk rounds' rates and CPU."""
    info = machine_info()
    pin = "gateway pinned to CPU 0, wrk to CPU 1" if not args.no_pin else "unpinned"
    lines = [
        TITLE, "",
        f"Generated by `uv run python bench/ab_embedded.py --baseline {args.baseline} --requests {args.requests} "
        f"--rounds {args.rounds} --seconds {args.seconds:g} --connections {args.connections} --write` on "
        f"{info['nproc']} cores ({info['cpu']}, Python {info['python']}; load average {loads[0]} at the start, "
        f"{loads[1]} at the end). The embedded gateway (`pwc-mcp gateway`, no Redis) of `{args.baseline}` (its own "
        f"worktree and venv) and of `{new_name}` on the sample catalog.",
        "",
        f"**The gate: instructions per request.** Each gateway runs under `valgrind --tool=callgrind`; per "
        f"operation, after a warm-up, exactly {args.requests:,} requests over {args.connections} keep-alive "
        "connections between `callgrind_control --zero` and `--dump`. The count repeats within 1% whatever "
        f"else the host runs. Goal: on every operation the new code's count is at most {GOAL:.2f}× the baseline's.",
        "",
        "| operation | instructions/req old | instructions/req new | new ÷ old | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    ratio = ratios(counts)
    for key, label, *_ in OPERATIONS:
        lines.append(f"| {label} | {counts['old'][key]:,.0f} | {counts['new'][key]:,.0f} | **{ratio[key]:.3f}** | "
                     f"{'PASS' if ratio[key] <= GOAL else 'FAIL'} |")
    if args.rounds:
        lines += [
            "",
            f"**Shown beside it: wrk rounds** ({pin}; 1 thread, {args.connections} connections, {args.seconds:g} s "
            f"per operation, {args.rounds} rounds, the order flipped each round; the gateway's CPU per request "
            "read from `/proc`). On this shared host a round's rate and CPU per request move with the other "
            "jobs' load by more than the goal, so they are not the gate.",
            "",
            "| operation | req/s old (rounds) | req/s new (rounds) | rate new ÷ old (rounds) | "
            "CPU µs/req old (rounds) | CPU µs/req new (rounds) | CPU new ÷ old, median (rounds) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for key, label, *_ in OPERATIONS:
            olds = [old[key] for old, _ in rows[key]]
            news = [new[key] for _, new in rows[key]]
            rates = [n[0] / o[0] for o, n in zip(olds, news, strict=True)]
            cpus = [n[1] / o[1] for o, n in zip(olds, news, strict=True)]
            lines.append(
                f"| {label} | {_med([o[0] for o in olds]):,.0f} ({' / '.join(f'{o[0]:,.0f}' for o in olds)}) | "
                f"{_med([n[0] for n in news]):,.0f} ({' / '.join(f'{n[0]:,.0f}' for n in news)}) | "
                f"{_med(rates):.2f} ({' / '.join(f'{r:.2f}' for r in rates)}) | "
                f"{_med([o[1] for o in olds]):,.0f} ({' / '.join(f'{o[1]:,.0f}' for o in olds)}) | "
                f"{_med([n[1] for n in news]):,.0f} ({' / '.join(f'{n[1]:,.0f}' for n in news)}) | "
                f"{_med(cpus):.2f} ({' / '.join(f'{c:.2f}' for c in cpus)}) |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the A/B, print it, and with ``--write`` publish it; 1 when an operation misses the goal."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--baseline", default="71eb608", help="the revision to compare with")
    parser.add_argument("--baseline-tree", type=Path, help="a synced checkout of the baseline to reuse")
    parser.add_argument("--tree", type=Path, default=REPO, help="the synced checkout to test (default this one)")
    parser.add_argument("--requests", type=int, default=1600, help="requests counted per operation under callgrind")
    parser.add_argument("--rounds", type=int, default=3, help="wrk rounds shown beside the count (0: none)")
    parser.add_argument("--seconds", type=int, default=5, help="seconds of wrk per operation")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--no-pin", action="store_true", help="leave the gateway and wrk unpinned")
    parser.add_argument("--write", action="store_true", help="publish the section in BENCHMARKS.md")
    args = parser.parse_args(argv)
    if args.connections < 1 or args.requests < args.connections:
        parser.error("--connections must be at least 1 and --requests at least --connections")
    missing = [tool for tool in ("valgrind", "callgrind_control", "git", "uv", *(("wrk",) if args.rounds else ()))
               if shutil.which(tool) is None]
    if missing:
        parser.error(f"needs {', '.join(missing)} on PATH (bench/README.md)")
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
        rows: Rounds = {key: [] for key, *_ in OPERATIONS}
        counts: dict[str, dict[str, float]] = {}
        try:
            wait_http(f"{catalog_url}/conferences")
            for name, tree in (("old", old_tree), ("new", new_tree)):
                counts[name] = instructions(tree, catalog_url, args.requests, args.connections, Path(tmp))
            for key, *_ in OPERATIONS:
                print(f"instructions {key:12s} old {counts['old'][key]:10,.0f}/req | new {counts['new'][key]:10,.0f}"
                      f"/req | new ÷ old {counts['new'][key] / counts['old'][key]:.3f}", flush=True)
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
    text = section(counts, rows, args, loads, new_name)
    if args.write:
        replace_section(REPO / "BENCHMARKS.md", TITLE, text, before="## REST and SSE")
    print(text)
    for key, *_ in OPERATIONS:  # kernel work is not in the count: flag a large CPU ratio, do not gate on it
        cpu_ratios = [new[key][1] / old[key][1] for old, new in rows[key]]
        if cpu_ratios and _med(cpu_ratios) > WRK_CPU_WARN:
            print(f"{key}: the wrk rounds' CPU per request is {_med(cpu_ratios):.2f}× the baseline's (over "
                  f"{WRK_CPU_WARN:.2f}×): look for system calls the instruction count does not see")
    missed = [key for key, ratio in ratios(counts).items() if ratio > GOAL]
    for key in missed:
        print(f"{key}: {ratios(counts)[key]:.3f}× the baseline's instructions per request, over the goal of {GOAL:.2f}×")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
