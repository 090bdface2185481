"""The Redis hop alone: ``bench/run.py``'s paired measurement, with as many pairs as asked.

Usage: ``uv run python bench/hop.py [--pairs 15] [--seconds 3] [--floor [--runs 5] [--out BENCHMARKS.md]]``.

Starts the sample catalog, a redis-server, an ``embedded`` gateway and a ``redis-g1-w1``
one (1 gateway, 1 worker) side by side, then runs wrk on the cached ``list_conferences``
call at one connection against each in turn (``--pairs`` pairs, the order flipped each
pair). The hop is the median of the pairs' p50 differences (Redis minus embedded); its
quartiles show the spread. Prints one line per pair and the summary; the target is
``≤ 0.5 ms``.

``--floor`` also runs ``bench/redis_floor.py``'s bare ping-pong (``--floor-calls`` round
trips) on the same redis-server between the two runs of every pair, and reports the hop as a
multiple of that floor, both measured in the same rounds (the target: ≤ 1.25× the floor).
``--runs K`` repeats the whole measurement K times in a row (fresh gateway and worker each
time) and reports every run, so one lucky or unlucky run on a noisy host cannot decide the
verdict alone: it is the median run's. With ``--out FILE`` it also writes the
``## Redis hop against its floor`` section there.

``--instructions N`` counts instead of timing: the same cached call, N times at one connection,
against an ``embedded`` gateway and then a ``redis-g1-w1`` pair (the worker with one consumer
thread), each process under ``valgrind --tool=callgrind`` (``PYTHONHASHSEED=0``, counted between
``--zero`` and ``--dump`` as in ``bench/ab_embedded.py``), plus the Redis commands each call
costs (``SLOWLOG`` at a 0 µs threshold, nested script commands included). Each process's
count repeats within about 1% whatever the host's load,
where the timed hop swings by tens of percent; ``--tree DIR`` counts another checkout's code
with this environment (for a before/after). With ``--out FILE`` it writes the
``## Redis hop in instructions`` section.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.ab_embedded import (
    CALL,
    WAIT_CALLGRIND_S,
    callgrind_control,
    dumped_instructions,
    exact_requests,
    gateway_env,
)
from bench.ab_embedded import start as start_logged
from bench.cluster import ProcessGroup
from bench.cpu_per_call import free_port, stop
from bench.load import PROTOCOL, discover, workloads, write_all
from bench.redis_floor import measure_floor
from bench.report import publish_section
from bench.run import QUICK, measure_hop

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Redis hop against its floor"
INSTRUCTIONS_SECTION = "## Redis hop in instructions"
GOAL = 1.25


def main(argv: list[str] | None = None) -> int:
    """Measure the hop and print it; 1 when the measurement failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per wrk run")
    parser.add_argument("--floor", action="store_true", help="measure the bare Redis ping-pong in the same rounds")
    parser.add_argument("--floor-calls", type=int, default=2000, help="ping-pong round trips per pair")
    parser.add_argument("--runs", type=int, default=1, help="with --floor: whole measurements in a row, each reported")
    parser.add_argument("--out", default="-", help="with --floor or --instructions: the file to write the section to "
                                                   "(- prints only)")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="count instructions per call over N calls instead of timing pairs")
    parser.add_argument("--tree", type=Path, default=None, help="with --instructions: the checkout whose code runs")
    args = parser.parse_args(argv)
    if args.instructions:
        return _count(args)
    if args.pairs < 2:
        parser.error("--pairs must be at least 2 (the quartiles need two)")
    if args.runs < 1 or (args.runs > 1 and not args.floor):
        parser.error("--runs takes a positive count, and only with --floor")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    plan = dataclasses.replace(QUICK, hop_pairs=args.pairs, hop_seconds=args.seconds)
    load_before = os.getloadavg()[0]
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pwc-hop-") as tmp, ProcessGroup(Path(tmp)) as group:
        redis_url = group.start_redis()
        _, api_url = group.start_catalog("catalog", "--sample")
        loads = workloads(discover(api_url))
        paths = write_all(Path(tmp), loads.values())

        def floor() -> dict[str, float]:
            rounds, _ = measure_floor(redis_url, args.floor_calls)
            return {"floor": statistics.median(rounds) * 1000}

        for _ in range(args.runs):
            hop = measure_hop(group, plan, api_url, redis_url, loads, paths, between=floor if args.floor else None)
            if "error" in hop:
                print(f"hop measurement failed: {hop['error']}")
                return 1
            runs.append(hop)
    load_after = os.getloadavg()[0]
    for number, hop in enumerate(runs, 1):
        _print_run(hop, f"run {number}: " if len(runs) > 1 else "")
    if args.floor:
        publish_section(args.out, SECTION, _floor_section(runs, args, (load_before, load_after)))
    return 0


def _print_run(hop: dict[str, Any], prefix: str) -> None:
    """One measurement's pairs and its summary line."""
    deltas = [pair["redis-g1-w1"] - pair["embedded"] for pair in hop["pairs"]]
    for index, pair in enumerate(hop["pairs"], 1):
        floor_text = f", floor {pair['floor']:.3f} ms" if "floor" in pair else ""
        print(f"{prefix}pair {index:2d}: redis {pair['redis-g1-w1']:.3f} ms, embedded {pair['embedded']:.3f} ms, "
              f"hop {pair['redis-g1-w1'] - pair['embedded']:+.3f} ms{floor_text}")
    quartiles = statistics.quantiles(deltas, n=4)
    print(f"{prefix}hop: {hop['delta_ms']:+.3f} ms (median of {len(deltas)} pairs; quartiles {quartiles[0]:+.3f} / "
          f"{quartiles[2]:+.3f} ms; p50 Redis {hop['redis_p50_ms']:.3f} ms, embedded {hop['embedded_p50_ms']:.3f} ms)")


def _count(args: argparse.Namespace) -> int:
    """``--instructions``: count, print (and with ``--out`` publish) the hop in instructions."""
    tree = (args.tree or REPO).resolve()
    with tempfile.TemporaryDirectory(prefix="pwc-hop-count-") as tmp, ProcessGroup(Path(tmp)) as group:
        redis_url = group.start_redis()
        _, api_url = group.start_catalog("catalog", "--sample")
        embedded, _ = _instructions(tree, Path(tmp), api_url, None, args.instructions)
        redis_mode, commands = _instructions(tree, Path(tmp), api_url, redis_url, args.instructions)
    publish_section(args.out, INSTRUCTIONS_SECTION,
                    _instructions_section(args, tree, embedded["gateway"], redis_mode, commands))
    return 0


def _instructions(tree: Path, tmp: Path, api_url: str, redis_url: str | None,
                  calls: int) -> tuple[dict[str, float], dict[str, int]]:
    """Instructions per call of each process of one deployment (``embedded``, or a Redis-mode gateway
    and worker), and in Redis mode the Redis commands per call by name (those every call sends)."""
    port = free_port()
    env = {**gateway_env(api_url, port), "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree)}
    roles = {"gateway": [sys.executable, "-m", "gateway", "gateway"]}
    if redis_url is not None:
        env |= {"PWC_MCP_REDIS_URL": redis_url, "PWC_MCP_WORKER_THREADS": "1"}
        roles = {"worker": [sys.executable, "-m", "workers"], **roles}  # no exec: callgrind follows one program
    mode = "redis" if redis_url else "embedded"
    procs = {role: (start_logged(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                  f"--callgrind-out-file={tmp / f'{mode}-{role}.out'}", *argv],
                                 tree, env, tmp / f"{mode}-{role}.log"), tmp / f"{mode}-{role}.out")
             for role, argv in roles.items()}
    try:
        deadline = time.monotonic() + WAIT_CALLGRIND_S
        while True:  # a worker under callgrind registers long after the gateway answers /health
            try:
                exact_requests(port, CALL, PROTOCOL, 1, 1)
                break
            except (OSError, RuntimeError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{mode} never answered the call; logs in {tmp}") from None
                time.sleep(1)
        for proc, _ in procs.values():
            callgrind_control(proc.pid, "--instr=on")
        exact_requests(port, CALL, PROTOCOL, max(calls // 4, 1), 1)
        for proc, _ in procs.values():
            callgrind_control(proc.pid, "--zero")
        client = redis.Redis.from_url(redis_url) if redis_url else None
        if client is not None:
            client.config_set("slowlog-max-len", 1_000_000)
            client.config_set("slowlog-log-slower-than", 0)
            client.slowlog_reset()
        exact_requests(port, CALL, PROTOCOL, calls, 1)
        counts = {role: dumped_instructions(proc.pid, out) / calls for role, (proc, out) in procs.items()}
        commands: dict[str, int] = {}
        if client is not None:
            names = _script_names(tree)
            entries = client.slowlog_get(1_000_000)
            assert isinstance(entries, list)  # the synchronous client's reply
            seen = collections.Counter(_command_name(entry["command"], names) for entry in entries)
            client.config_set("slowlog-log-slower-than", 10_000)
            client.close()
            # Per call, whole: what the heartbeat and liveness timers add over the run rounds away.
            commands = {name: round(n / calls) for name, n in seen.most_common() if n >= calls}
        return counts, commands
    finally:
        stop([proc for proc, _ in procs.values()])


def _command_name(command: bytes | str, scripts: dict[str, str]) -> str:
    """A SLOWLOG entry's command, by name; a script by its file name (``scripts``: SHA → name)."""
    text = command.decode(errors="replace") if isinstance(command, bytes) else command
    words = text.split()
    if words and words[0].upper() == "EVALSHA" and len(words) > 1:
        return f"EVALSHA {scripts.get(words[1], words[1][:8])}"
    return words[0].upper() if words else "?"


def _script_names(tree: Path) -> dict[str, str]:
    """SHA → file name of ``tree``'s Lua scripts, as its own ``scripts.load`` expands them."""
    code = ("import hashlib, json, pathlib; from pwc_mcp_core.cluster import scripts; "
            "print(json.dumps({hashlib.sha1(scripts.load(p.stem).encode()).hexdigest(): p.name "
            "for p in pathlib.Path(scripts.__file__).parent.glob('*.lua')}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                          capture_output=True, text=True, check=True)
    names: dict[str, str] = json.loads(done.stdout)
    return names


def _instructions_section(args: argparse.Namespace, tree: Path, embedded: float, redis_mode: dict[str, float],
                          commands: dict[str, int]) -> str:
    """The ``## Redis hop in instructions`` section."""
    hop = redis_mode["gateway"] + redis_mode["worker"] - embedded
    scripts = ", ".join(name.removeprefix("EVALSHA ") for name in sorted(commands) if name.startswith("EVALSHA"))
    top = sum(n for name, n in commands.items() if name.startswith(("EVALSHA", "XREADGROUP", "BLMPOP")))
    nested = sum(commands.values()) - top
    command = f"uv run python bench/hop.py --instructions {args.instructions}"
    return "\n".join([
        INSTRUCTIONS_SECTION, "",
        f"`{command}`{'' if tree == REPO.resolve() else ' (another checkout)'}: the cached `list_conferences` call "
        f"{args.instructions} times at one connection, after a warm-up, against",
        "an `embedded` gateway and then a `redis-g1-w1` pair (one consumer thread), each process under callgrind;",
        "instructions per call counted between `callgrind_control --zero` and `--dump`. Unlike the timed hop",
        "above, each process's count repeats within about 1% on a loaded host.", "",
        "| measure | instructions per call |", "| --- | --- |",
        f"| embedded gateway | {embedded:,.0f} |",
        f"| Redis mode: gateway | {redis_mode['gateway']:,.0f} |",
        f"| Redis mode: worker | {redis_mode['worker']:,.0f} |",
        f"| hop (gateway + worker − embedded) | {hop:+,.0f} ({hop / embedded:.2f}× the embedded call) |", "",
        f"Redis commands per call: {top} sent (the scripts {scripts}, and the blocking reads), {nested} run "
        "inside the scripts (`SLOWLOG` at a 0 µs threshold).", ""])


def _run_against_floor(hop: dict[str, Any]) -> dict[str, float]:
    """One measurement's hop, floor and hop ÷ floor, with the per-pair ratios' median and quartiles."""
    pairs = hop["pairs"]
    floor_ms = statistics.median(pair["floor"] for pair in pairs)
    ratios = [(pair["redis-g1-w1"] - pair["embedded"]) / pair["floor"] for pair in pairs]
    quartiles = statistics.quantiles(ratios, n=4)
    return {"hop_ms": hop["delta_ms"], "floor_ms": floor_ms, "ratio": hop["delta_ms"] / floor_ms,
            "pair_median": statistics.median(ratios), "pair_q1": quartiles[0], "pair_q3": quartiles[2]}


def _floor_section(runs: list[dict[str, Any]], args: argparse.Namespace, load: tuple[float, float]) -> str:
    """The hop against the floor measured in the same rounds, one row per run, as a BENCHMARKS.md section."""
    rows = [_run_against_floor(hop) for hop in runs]
    ratio = statistics.median(row["ratio"] for row in rows)
    passed = sum(row["ratio"] <= GOAL for row in rows)
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    runs_flag = f" --runs {args.runs}" if args.runs > 1 else ""
    command = f"uv run python bench/hop.py --pairs {args.pairs} --floor{runs_flag}"
    what = f"{len(rows)} measurements in a row, each of " if len(rows) > 1 else ""
    return "\n".join([
        SECTION, "",
        f"`{command}`: {what}{args.pairs} interleaved pairs of {args.seconds:g} s wrk runs (cached "
        "`list_conferences`, one connection) against `embedded` and `redis-g1-w1` side by side; between the two",
        f"runs of each pair, `bench/redis_floor.py`'s bare `RPUSH`/`BLPOP` ping-pong ({args.floor_calls} round trips)",
        f"on the same redis-server. Load average {load[0]:.1f} at the start, {load[1]:.1f} at the end (2 cores",
        "shared with other work), so only ratios taken in the same rounds are compared. Hop: the Redis p50 minus",
        "the embedded p50, median of the pairs; floor: the ping-pong p50, median of the pairs.", "",
        "| run | hop | floor | hop ÷ floor | per pair: median (quartiles) |", "| --- | --- | --- | --- | --- |",
        *(f"| {number} | {row['hop_ms']:+.3f} ms | {row['floor_ms']:.3f} ms | {row['ratio']:.2f}× | "
          f"{row['pair_median']:.2f}× ({row['pair_q1']:.2f}× / {row['pair_q3']:.2f}×) |"
          for number, row in enumerate(rows, 1)), "",
        f"Goal: ≤ {GOAL}× the floor. {'The median run' if len(rows) > 1 else 'The run'}: {ratio:.2f}×, {verdict}"
        + (f" ({passed} of {len(rows)} runs within the goal)." if len(rows) > 1 else "."), ""])


if __name__ == "__main__":
    sys.exit(main())
