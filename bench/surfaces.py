"""REST and HTTP+SSE beside Streamable HTTP: one cached tool call over each surface, same run.

Usage: ``uv run python bench/surfaces.py [--seconds 4] [--clients 16] [--rounds 3] [--paced-rate 300]
[--cpu-slots 15] [--out BENCHMARKS.md]``.

For ``embedded`` and ``redis-g1-w1`` (one gateway process, one worker) it starts the
server on the sample catalog, warms the cache, then measures the same cached call
(``list_conferences``) as
* ``POST /mcp`` (Streamable HTTP, JSON response),
* ``POST /v1/tools/list_conferences`` (REST),
* an SSE round trip: ``POST /messages`` (202) until its answer arrives on the session's
  ``GET /sse`` stream;
with one client (sequential: p50/p95 latency) and with ``--clients`` concurrent clients
(throughput; each its own identity, and for SSE its own session; every surface has the
same number of calls in flight), in ``--rounds`` interleaved rounds. The load generator is
one Python process (aiohttp), the same for the three surfaces, so the ratios against
``/mcp`` (each taken within a round, then the median of the rounds') are the comparable
figures; absolute numbers are below ``bench/run.py``'s wrk ones.

An SSE call costs its client two HTTP exchanges (the POST's 202, then the stream event), and
that client shares the 2 cores with the server, so the rate ratio mixes the load
generator's cost into the server's. The server's own cost is measured apart: the same
clients send ``--paced-rate`` calls/s in all (300, below every surface's top rate, so each
surface is measured at the same load: at its own top rate batching and warm caches would
favour the fastest), and the user+system CPU the gateway process (and in Redis mode the
worker) spent meanwhile, divided by the calls answered (``/proc/<pid>/stat``), is the cost
per call. The surfaces take ``--cpu-slots`` turns of ``CPU_SLOT_S`` each with clients opened
once, and each turn is compared with the ``/mcp`` turn of the same slot: on a shared host the
machine's speed drifts by more than the differences measured, and neighbours in time drift
least. The SSE target is a gateway CPU per call within 10 % of ``/mcp``'s.
Writes the ``## REST and SSE`` section of ``BENCHMARKS.md`` (kept by ``bench/run.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.cluster import ProcessGroup, free_port
from bench.report import replace_section

TOOL = "list_conferences"
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {}}}
SURFACES = ("mcp", "rest", "sse")
ENV = {"PWC_MCP_REQUEST_LIMIT": "10000", "PWC_MCP_SEMANTIC_LIMIT": "10000", "PWC_MCP_CONCURRENCY_LIMIT": "64",
       "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "512", "PWC_MCP_SSE_MAX_STREAMS_PER_CLIENT": "64",
       "PWC_MCP_CURSOR_KEY_CURRENT": "bench-cursor-key-0123456789abcdef", "PWC_MCP_HOST": "127.0.0.1"}
SECTION = "## REST and SSE"
CPU_SLOT_S = 2.0  # one surface's turn in the CPU phase

Caller = Callable[[], Awaitable[None]]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User+system CPU seconds the processes ``pids`` have used so far (``/proc/<pid>/stat``)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / TICKS


async def mcp_caller(http: aiohttp.ClientSession, base: str, client: str) -> Caller:
    headers = {"Content-Type": "application/json", "Accept": "application/json", "X-PwC-MCP-Client": client}
    body = json.dumps(CALL).encode()

    async def call() -> None:
        async with http.post(f"{base}/mcp", data=body, headers=headers) as response:
            payload = await response.read()
            assert response.status == 200 and b'"isError":true' not in payload, response.status

    return call


async def rest_caller(http: aiohttp.ClientSession, base: str, client: str) -> Caller:
    headers = {"Content-Type": "application/json", "X-PwC-MCP-Client": client}

    async def call() -> None:
        async with http.post(f"{base}/v1/tools/{TOOL}", data=b"{}", headers=headers) as response:
            await response.read()
            assert response.status == 200, response.status

    return call


async def sse_caller(http: aiohttp.ClientSession, base: str, client: str, streams: list) -> Caller:
    headers = {"X-PwC-MCP-Client": client}
    stream = await http.get(f"{base}/sse", headers=headers, timeout=aiohttp.ClientTimeout(total=None))
    streams.append(stream)
    assert (await stream.content.readline()).strip() == b"event: endpoint"
    endpoint = (await stream.content.readline()).decode().strip().removeprefix("data: ")
    await stream.content.readline()
    pending: dict[int, asyncio.Future[bytes]] = {}

    async def read_events() -> None:
        data = b""
        async for line in stream.content:
            if line.startswith(b"data: "):
                data = line[6:].strip()
            elif line == b"\n" and data:
                message = json.loads(data)
                future = pending.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(data)
                data = b""

    streams.append(asyncio.create_task(read_events()))
    ids = iter(range(1, 1 << 62))
    post_headers = {"Content-Type": "application/json", **headers}

    async def call() -> None:
        request_id = next(ids)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        pending[request_id] = future
        body = json.dumps({**CALL, "id": request_id}).encode()
        async with http.post(f"{base}{endpoint}", data=body, headers=post_headers) as response:
            assert response.status == 202, response.status
        assert b'"isError":true' not in await asyncio.wait_for(future, 30)

    return call


async def make_caller(surface: str, http: aiohttp.ClientSession, base: str, client: str, streams: list) -> Caller:
    if surface == "sse":
        return await sse_caller(http, base, client, streams)
    return await (mcp_caller if surface == "mcp" else rest_caller)(http, base, client)


def close_streams(streams: list) -> None:
    """Cancel the SSE readers and close the streams ``make_caller`` opened."""
    for item in streams:
        if isinstance(item, asyncio.Task):
            item.cancel()
        else:
            item.close()


def turn_order(index: int) -> tuple[str, ...]:
    """The surfaces in round or slot ``index``, rotated so that none is always first."""
    shift = index % len(SURFACES)
    return SURFACES[shift:] + SURFACES[:shift]


async def measure(base: str, surface: str, seconds: float, clients: int) -> dict[str, float]:
    """p50/p95 ms with one sequential client and calls/s with ``clients`` concurrent ones."""
    streams: list = []
    # Fresh identities each measurement: one round's single client alone can outrun the
    # per-client limit (10,000 a minute at most) within the next round's window.
    tag = uuid.uuid4().hex[:8]
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        try:
            single = await make_caller(surface, http, base, f"bench-{surface}-{tag}-single", streams)
            for _ in range(50):
                await single()
            latencies = []
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                await single()
                latencies.append((time.perf_counter() - started) * 1000)
            callers = [await make_caller(surface, http, base, f"bench-{surface}-{tag}-{i}", streams)
                       for i in range(clients)]
            done = 0

            async def loop(call: Caller, until: float) -> None:
                nonlocal done
                while time.perf_counter() < until:
                    await call()
                    done += 1

            started = time.perf_counter()
            await asyncio.gather(*(loop(c, started + seconds) for c in callers))
            elapsed = time.perf_counter() - started
            rate = done / elapsed
        finally:
            close_streams(streams)
    quantiles = statistics.quantiles(latencies, n=100)
    return {"p50": statistics.median(latencies), "p95": quantiles[94], "rate": rate}


async def paced_cpu(callers: list[Caller], servers: dict[str, list[int]], seconds: float,
                    paced_rate: float) -> dict[str, float]:
    """CPU µs per call each of ``servers`` (name → pids) spent while ``callers`` sent
    ``paced_rate`` calls/s in all for ``seconds``."""
    interval = len(callers) / paced_rate
    done = 0

    async def paced_loop(call: Caller, first: float, until: float) -> None:
        nonlocal done
        slot = first
        while slot < until:
            await asyncio.sleep(max(0.0, slot - time.perf_counter()))
            await call()
            done += 1
            slot += interval

    before = {name: cpu_seconds(pids) for name, pids in servers.items()}
    started = time.perf_counter()
    await asyncio.gather(*(paced_loop(c, started + i * interval / len(callers), started + seconds)
                           for i, c in enumerate(callers)))
    return {name: (cpu_seconds(pids) - before[name]) * 1e6 / max(done, 1) for name, pids in servers.items()}


async def measure_cpu(base: str, clients: int, slots: int, slot_seconds: float, paced_rate: float,
                      servers: dict[str, list[int]]) -> dict[str, dict[str, float]]:
    """Each surface's CPU µs per call (median of ``slots``) and its ratio to ``/mcp``'s (the
    median of the slots' ratios): the surfaces take turns, ``slot_seconds`` each, with
    callers opened once, so each ratio compares neighbours in time on a shared host."""
    streams: list = []
    tag = uuid.uuid4().hex[:8]
    per_slot: dict[str, list[dict[str, float]]] = {surface: [] for surface in SURFACES}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http:
        try:
            callers = {surface: [await make_caller(surface, http, base, f"bench-cpu-{surface}-{tag}-{i}", streams)
                                 for i in range(clients)] for surface in SURFACES}
            for group in callers.values():  # warm: connections, sessions, caches
                await asyncio.gather(*(call() for call in group for _ in range(5)))
            for index in range(slots):
                for surface in turn_order(index):
                    per_slot[surface].append(await paced_cpu(callers[surface], servers, slot_seconds, paced_rate))
        finally:
            close_streams(streams)
    out: dict[str, dict[str, float]] = {}
    for surface in SURFACES:
        out[surface] = {f"cpu_{name}": statistics.median(slot[name] for slot in per_slot[surface]) for name in servers}
        ratios = [mine["gateway"] / mcp["gateway"] for mine, mcp in zip(per_slot[surface], per_slot["mcp"], strict=True)]
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        out[surface].update(cpu_gateway_ratio=quartiles[1], cpu_gateway_q1=quartiles[0], cpu_gateway_q3=quartiles[2])
    return out


def run(seconds: float, clients: int, rounds: int, paced_rate: float,
        cpu_slots: int) -> dict[str, dict[str, dict[str, float]]]:
    """Each configuration's figures per surface: the median of ``rounds`` interleaved rounds."""
    results: dict[str, dict[str, dict[str, float]]] = {}
    log_dir = Path("/tmp/pwc-mcp-bench-surfaces")
    log_dir.mkdir(exist_ok=True)
    with ProcessGroup(log_dir) as group:
        _, api = group.start_catalog("catalog", "--sample")
        redis_url = group.start_redis()
        for config in ("embedded", "redis-g1-w1"):
            env = {**ENV, "PWC_API_URL": api, "PORT": str(free_port())}
            procs = []
            servers: dict[str, list[int]] = {}
            if config != "embedded":
                env["PWC_MCP_REDIS_URL"] = redis_url
                procs.append(group.start_pwc_mcp(f"{config}-worker", "worker", ["worker"], env, wait_path=None))
                servers["worker"] = procs[-1].pids()
            procs.append(group.start_pwc_mcp(f"{config}-gateway", "gateway", ["gateway"], env, wait_path="/health"))
            servers["gateway"] = procs[-1].pids()
            base = f"http://127.0.0.1:{env['PORT']}"
            runs: dict[str, list[dict[str, float]]] = {surface: [] for surface in SURFACES}
            for index in range(rounds):  # the surfaces interleaved, so host drift hits each alike
                for surface in turn_order(index):
                    runs[surface].append(asyncio.run(measure(base, surface, seconds, clients)))
                for surface in SURFACES:  # against /mcp's of the same round: neighbours share the host's state
                    for key in ("rate", "p50"):
                        runs[surface][-1][f"{key}_ratio"] = runs[surface][-1][key] / runs["mcp"][-1][key]
            results[config] = {surface: {key: statistics.median(run[key] for run in by_round)
                                         for key in by_round[0]} for surface, by_round in runs.items()}
            cpu = asyncio.run(measure_cpu(base, clients, cpu_slots, CPU_SLOT_S, paced_rate, servers))
            for surface in SURFACES:
                results[config][surface].update(cpu[surface])
            for proc in procs:
                group.stop(proc)
    return results


def render(results: dict[str, dict[str, dict[str, float]]], seconds: float, clients: int, rounds: int,
           paced_rate: float, cpu_slots: int, command: str) -> str:
    names = {"mcp": "Streamable HTTP `POST /mcp`", "rest": f"REST `POST /v1/tools/{TOOL}`",
             "sse": "HTTP+SSE round trip (`POST /messages` → stream event)"}
    lines = [SECTION, "",
             f"Generated by `{command}`: the cached `{TOOL}` call over each surface, same run, "
             f"{seconds:g} s per measurement, median of {rounds} interleaved rounds (each ratio ÷ /mcp: the median of "
             "the rounds' ratios); one Python aiohttp load "
             "generator for all three, so compare the ratios (÷ `/mcp`) rather than the absolute figures with the "
             "wrk tables above. CPU µs/call: what the gateway (and the worker) spent per answered call while "
             f"{clients} clients sent {paced_rate:g} calls/s in all (the same rate for every surface), the server's "
             f"own cost whatever the client's; the surfaces take {cpu_slots} turns of {CPU_SLOT_S:g} s each, and the "
             "figures are the medians of the turns (gateway CPU ÷ /mcp: of each turn's ratio to the /mcp turn "
             "of the same slot, with the quartiles of those ratios).", "",
             f"| surface | config | p50 ms (1 client) | p95 ms | calls/s ({clients} clients) | rate ÷ /mcp "
             "| p50 ÷ /mcp | gateway CPU µs/call | gateway CPU ÷ /mcp | worker CPU µs/call |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for config, by_surface in results.items():
        for surface in SURFACES:
            row = by_surface[surface]
            worker = f"{row['cpu_worker']:,.0f}" if "cpu_worker" in row else "–"
            lines.append(f"| {names[surface]} | `{config}` | {row['p50']:.2f} | {row['p95']:.2f} | "
                         f"{row['rate']:,.0f} | {row['rate_ratio']:.2f}× | {row['p50_ratio']:.2f}× | "
                         f"{row['cpu_gateway']:,.0f} | {row['cpu_gateway_ratio']:.2f}× ({row['cpu_gateway_q1']:.2f}–"
                         f"{row['cpu_gateway_q3']:.2f}) | {worker} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    parser.add_argument("--paced-rate", type=float, default=300.0, help="calls/s of the CPU-per-call phase")
    parser.add_argument("--cpu-slots", type=int, default=15,
                        help=f"turns of each surface in the CPU phase ({CPU_SLOT_S:g} s each)")
    parser.add_argument("--out", default="BENCHMARKS.md", help="file to update, or - to print")
    args = parser.parse_args()
    command = "uv run python bench/surfaces.py" + (f" --seconds {args.seconds:g}" if args.seconds != 4.0 else "") \
        + (f" --rounds {args.rounds}" if args.rounds != 3 else "") \
        + (f" --paced-rate {args.paced_rate:g}" if args.paced_rate != 300.0 else "") \
        + (f" --cpu-slots {args.cpu_slots}" if args.cpu_slots != 15 else "")
    section = render(run(args.seconds, args.clients, args.rounds, args.paced_rate, args.cpu_slots), args.seconds,
                     args.clients, args.rounds, args.paced_rate, args.cpu_slots, command)
    if args.out == "-":
        print(section)
    else:
        replace_section(Path(args.out), SECTION, section, before="## Notes")
        print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
