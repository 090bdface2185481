"""The load benchmark of the whole server: ``uv run python bench/run.py [--quick] [--large] [--out FILE]``.

Starts the sample catalog (and, with ``--large``, a generated large catalog when
``bench/gen_catalog.py`` exists), a private redis-server, then each server
configuration in turn (embedded; Redis mode with 1/2 gateway processes and
1/2/4 workers), drives every workload with ``wrk`` from a separate process and
writes the tables to ``BENCHMARKS.md`` (every section but ``## Catalog``).
Every process started is stopped at the end, on error and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import report
from bench.cluster import ProcessGroup, free_port, peak_rss_kib, wait_http
from bench.load import Workload, discover, run_wrk, sanity_check, workloads, write_all

logger = logging.getLogger("bench.run")

REPO_ROOT = Path(__file__).resolve().parent.parent
CURSOR_KEY = "bench-cursor-key-0123456789abcdef0123"
LIMITS = {
    # limits stay enforced (in Redis in Redis mode) but high enough not to reject the load
    "PWC_MCP_REQUEST_LIMIT": "10000",
    "PWC_MCP_SEMANTIC_LIMIT": "10000",
    "PWC_MCP_CONCURRENCY_LIMIT": "10000",
    # above the 256 connections of the sweep; it also sizes the tool thread pools
    "PWC_MCP_GLOBAL_CONCURRENCY_LIMIT": "512",
}


@dataclass(frozen=True)
class ServerConfig:
    """One server shape: embedded (no Redis) or Redis mode with gateway processes and workers."""

    key: str
    label: str
    redis: bool
    gateways: int = 1
    workers: int = 0


EMBEDDED = ServerConfig("embedded", "embedded (1 process)", False)
R1W1 = ServerConfig("redis-g1-w1", "Redis, 1 gateway, 1 worker", True, 1, 1)
R1W2 = ServerConfig("redis-g1-w2", "Redis, 1 gateway, 2 workers", True, 1, 2)
R2W2 = ServerConfig("redis-g2-w2", "Redis, 2 gateways, 2 workers", True, 2, 2)
R2W4 = ServerConfig("redis-g2-w4", "Redis, 2 gateways, 4 workers", True, 2, 4)


@dataclass(frozen=True)
class Plan:
    """What one run measures and for how long (seconds per wrk run)."""

    configs: tuple[ServerConfig, ...]
    operations: tuple[str, ...]
    seconds: float
    connections: int
    sweep_configs: tuple[str, ...]
    sweep_operations: tuple[str, ...]
    sweep_levels: tuple[int, ...]
    sweep_seconds: float
    hop_pairs: int = 7        # interleaved (Redis, embedded) runs of the cached call at 1 connection
    hop_seconds: float = 3


FULL = Plan((EMBEDDED, R1W1, R1W2, R2W2, R2W4),
            ("initialize", "tools_list", "cached_call", "uncached_search", "read_chunk", "mixed"),
            seconds=8, connections=64, sweep_configs=("embedded", "redis-g1-w2"),
            sweep_operations=("tools_list", "cached_call"), sweep_levels=(1, 4, 16, 64, 256), sweep_seconds=5)
QUICK = Plan((EMBEDDED, R1W1, R1W2, R2W2),
             ("tools_list", "cached_call", "uncached_search", "mixed"),
             seconds=1, connections=32, sweep_configs=("embedded",),
             sweep_operations=("cached_call",), sweep_levels=(1, 16, 256), sweep_seconds=1,
             hop_pairs=2, hop_seconds=1)


@dataclass
class ConfigResult:
    """Everything measured for one server configuration."""

    config: ServerConfig
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)         # operation → WrkResult dict
    sweep: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)  # op → connections → result
    hop: dict[str, Any] | None = None                                       # cached_call at 1 connection
    rss_kib: dict[str, int] = field(default_factory=dict)                   # process name → VmHWM
    failures: list[str] = field(default_factory=list)


def server_env(api_url: str, port: int, redis_url: str | None) -> dict[str, str]:
    env = {"PORT": str(port), "PWC_MCP_HOST": "127.0.0.1", "PWC_API_URL": api_url,
           "PWC_MCP_CURSOR_KEY_CURRENT": CURSOR_KEY, **LIMITS}
    if redis_url:
        env["PWC_MCP_REDIS_URL"] = redis_url
    return env


def flush_redis(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.close()


def measure_config(group: ProcessGroup, config: ServerConfig, plan: Plan, api_url: str, redis_url: str,
                   loads: dict[str, Workload], paths: dict[str, Path]) -> ConfigResult:
    """Start ``config``, run the plan's workloads against it, record peak RSS, stop it."""
    result = ConfigResult(config)
    if config.redis:
        flush_redis(redis_url)
    port = free_port()
    env = server_env(api_url, port, redis_url if config.redis else None)
    started = []
    try:
        for i in range(config.workers):
            started.append(group.start_pwc_mcp(f"{config.key}-worker-{i + 1}", "worker", ["worker"], env,
                                                wait_path=None))
        args = ["gateway", "--processes", str(config.gateways)]
        gateway = group.start_pwc_mcp(f"{config.key}-gateway", "gateway", args, env)
        started.append(gateway)
        base_url = f"http://127.0.0.1:{port}"
        wait_http(f"{base_url}/health", timeout_s=60, proc=gateway.popen)
        offset = 0
        for op in plan.operations:
            result.runs[op] = _run(base_url, loads[op], paths[op], plan.connections, plan.seconds, offset, result)
            offset += 100_000  # distinct queries never repeat across runs of one config
        if config.key in plan.sweep_configs:
            for op in plan.sweep_operations:
                for level in plan.sweep_levels:
                    run = _run(base_url, loads[op], paths[op], level, plan.sweep_seconds, offset, result)
                    result.sweep.setdefault(op, {})[level] = run
        hop = result.sweep.get("cached_call", {}).get(1)
        result.hop = hop or _run(base_url, loads["cached_call"], paths["cached_call"], 1, plan.sweep_seconds, 0,
                                 result)
        for proc in started:
            for n, pid in enumerate(proc.pids()):
                name = proc.name if n == 0 else f"{proc.name} (child {n})"
                result.rss_kib[name] = peak_rss_kib(pid)
    except RuntimeError as exc:
        result.failures.append(str(exc)[:2000])
        logger.error("%s failed: %s", config.key, str(exc)[:2000])
    finally:
        for proc in reversed(started):
            group.stop(proc)
    return result


def measure_hop(group: ProcessGroup, plan: Plan, api_url: str, redis_url: str, loads: dict[str, Workload],
                paths: dict[str, Path], *, between: Callable[[], dict[str, float]] | None = None) -> dict[str, Any]:
    """The Redis hop: ``embedded`` and ``redis-g1-w1`` up side by side, cached calls at 1 connection.

    ``between``, when given, runs between the two runs of every pair and its values join the
    pair (``bench/hop.py --floor`` measures the bare Redis ping-pong there, in the same rounds).

    On a shared or virtualised machine, single runs minutes apart vary by tens of
    percent, more than the hop itself. So the two servers run at the same time, and the
    runs alternate in ``plan.hop_pairs`` pairs (the order flips each pair). The hop is
    the median of the paired p50 differences; the medians of each side are reported too.
    """
    flush_redis(redis_url)
    result = ConfigResult(ServerConfig("hop", "embedded and redis-g1-w1 side by side", True, 1, 1))
    started = []
    urls: dict[str, str] = {}
    try:
        for key, redis in (("embedded", None), ("redis-g1-w1", redis_url)):
            port = free_port()
            env = server_env(api_url, port, redis)
            if redis:
                started.append(group.start_pwc_mcp("hop-worker", "worker", ["worker"], env, wait_path=None))
            started.append(gateway := group.start_pwc_mcp(f"hop-{key}", "gateway", ["gateway"], env))
            urls[key] = f"http://127.0.0.1:{port}"
            wait_http(f"{urls[key]}/health", timeout_s=60, proc=gateway.popen)
        pairs: list[dict[str, float]] = []
        for i in range(plan.hop_pairs):
            pair: dict[str, float] = {}
            for n, key in enumerate(("redis-g1-w1", "embedded") if i % 2 == 0 else ("embedded", "redis-g1-w1")):
                if n == 1 and between is not None:
                    pair.update(between())
                run = _run(urls[key], loads["cached_call"], paths["cached_call"], 1, plan.hop_seconds, 0, result)
                if "error" in run:
                    return {"error": run["error"]}
                pair[key] = run["p50_ms"]
            pairs.append(pair)
    except RuntimeError as exc:
        logger.error("hop measurement failed: %s", str(exc)[:2000])
        return {"error": str(exc)[:2000]}
    finally:
        for proc in reversed(started):
            group.stop(proc)
    out = {"pairs": pairs, "seconds": plan.hop_seconds,
           "redis_p50_ms": statistics.median(p["redis-g1-w1"] for p in pairs),
           "embedded_p50_ms": statistics.median(p["embedded"] for p in pairs),
           "delta_ms": statistics.median(p["redis-g1-w1"] - p["embedded"] for p in pairs)}
    logger.info("hop: +%.2f ms (median of %d pairs; Redis %.2f ms, embedded %.2f ms)", out["delta_ms"], len(pairs),
                out["redis_p50_ms"], out["embedded_p50_ms"])
    return out


def _run(base_url: str, load: Workload, path: Path, connections: int, seconds: float, offset: int,
         result: ConfigResult) -> dict[str, Any]:
    try:
        sanity_check(base_url, load)
        run = run_wrk(base_url, load, path, connections=connections, seconds=seconds, offset=offset)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        result.failures.append(f"{load.key} c={connections}: {str(exc)[:600]}")
        logger.error("%s %s c=%d: %s", result.config.key, load.key, connections, str(exc)[:600])
        return {"error": str(exc)[:600]}
    logger.info("%-12s %-16s c=%-3d %8.0f req/s p50 %.2f ms p99 %.2f ms errors %d", result.config.key, load.key,
                connections, run.rps, run.p50_ms, run.p99_ms, run.errors)
    return asdict(run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs, fewer configurations (< 60 s)")
    parser.add_argument("--large", action="store_true", help="also benchmark against a generated large catalog")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "BENCHMARKS.md",
                        help="Markdown file to write (default BENCHMARKS.md; '-' prints to stdout)")
    parser.add_argument("--large-papers", type=int, default=100_000,
                        help="papers in the generated catalog (evaluations: 5 per paper)")
    parser.add_argument("--raw", type=Path, help="also write the raw numbers as JSON to this file")
    parser.add_argument("--seconds", type=float, help="override the seconds per wrk run")
    return parser


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # unwinds through the ProcessGroup, which stops every child


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # SIGINT too: a shell starts background jobs with SIGINT ignored, and Ctrl-C must still clean up
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    plan = QUICK if args.quick else FULL
    if args.seconds:
        plan = Plan(**{**plan.__dict__, "seconds": args.seconds, "sweep_seconds": args.seconds})
    started_at = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pwc-bench-") as tmp, ProcessGroup(Path(tmp)) as group:
        try:
            results = run_plan(group, plan, Path(tmp), large=args.large, large_papers=args.large_papers)
        except KeyboardInterrupt:
            logger.error("interrupted; stopping every process")
            return 130
        except (RuntimeError, subprocess.SubprocessError, OSError) as exc:
            logger.error("benchmark failed: %s", exc)
            return 1
    results["elapsed_s"] = time.monotonic() - started_at
    results["command"] = "uv run python bench/run.py " + " ".join(sys.argv[1:] if argv is None else argv)
    markdown = report.render(results)
    if str(args.out) == "-":
        print(markdown)
    else:
        report.write_preserving_catalog(args.out, markdown)
        logger.info("wrote %s in %.0f s", args.out, results["elapsed_s"])
    if args.raw:
        args.raw.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    return 0


def run_plan(group: ProcessGroup, plan: Plan, tmp: Path, *, large: bool,
             large_papers: int = 100_000) -> dict[str, Any]:
    """Run ``plan`` against the sample catalog (and the large one with ``large``); returns the raw results."""
    redis_url = group.start_redis()
    catalogs: list[tuple[str, tuple[str, ...]]] = [("sample", ("--sample",))]
    gen = REPO_ROOT / "bench" / "gen_catalog.py"
    if large and gen.exists():
        dumps, db = tmp / "large-dumps", tmp / "large.db"
        logger.info("generating and importing a large catalog (%d papers)", large_papers)
        subprocess.run([sys.executable, str(gen), "--papers", str(large_papers), "--evaluations",
                        str(large_papers * 5), "--out", str(dumps)], cwd=REPO_ROOT, check=True, timeout=1800,
                       stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, "-m", "catalog", "import", "--db", str(db), str(dumps)], cwd=REPO_ROOT,
                       check=True, timeout=3600, stdout=subprocess.DEVNULL)
        catalogs.append(("large", ("--db", str(db))))
    elif large:
        logger.warning("--large given but bench/gen_catalog.py does not exist; sample catalog only")
    out: dict[str, Any] = {"machine": report.machine_info(), "plan": asdict(plan), "catalogs": {}}
    for name, source in catalogs:
        catalog, api_url = group.start_catalog(f"catalog-{name}", *source)
        data = discover(api_url)
        loads = workloads(data)
        paths = write_all(tmp, loads.values())
        configs = []
        for config in plan.configs if name == "sample" else (EMBEDDED, R2W4):
            configs.append(measure_config(group, config, plan, api_url, redis_url, loads, paths))
        if name == "sample" and plan.hop_pairs:
            out["hop"] = measure_hop(group, plan, api_url, redis_url, loads, paths)
        out["catalogs"][name] = {
            "papers": len(data.papers), "readable": len(data.readable), "benchmarks": len(data.benchmarks),
            "labels": {key: load.label for key, load in loads.items()},
            "configs": [report.config_dict(c) for c in configs],
            "rss_kib": {catalog.name: peak_rss_kib(catalog.popen.pid)},
        }
        group.stop(catalog)
    redis_proc = next(p for p in group.procs if p.role == "redis")
    out["redis_rss_kib"] = peak_rss_kib(redis_proc.popen.pid)
    return out


if __name__ == "__main__":
    sys.exit(main())
