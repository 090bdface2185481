"""Prometheus metrics of the gateway and the hooks other processes feed (content-free).

Labels carry only classified values: a tool name from the fixed catalogue or
``unknown``, an HTTP status, a protocol label (``legacy``/known version/``unknown``)
and a limit kind. Never a query, reference, address or header value.

Multi-process: set ``PROMETHEUS_MULTIPROC_DIR`` (before this module is imported) and
every process writing to that directory — gunicorn gateway processes and same-host
workers — is merged by ``/metrics`` through ``MultiProcessCollector``. ``pwc-mcp
gateway`` with more than one process sets it to a fresh temp dir itself. Limitation:
workers on another host are not visible here; scrape them separately.

Worker-fed metrics (``pwc_mcp_cache_requests_total``, ``pwc_mcp_upstream_requests_total``)
live in ``pwc_mcp_core.runtime.cache_metrics`` and are recorded wherever calls run (this process
in embedded mode, the workers in Redis mode); the multiprocess collector sums them. The
RedisDispatcher reports through :func:`set_queue_depth`, :func:`set_busy_workers` and
:func:`set_live_workers` and :func:`set_worker_threads`.
"""

from __future__ import annotations

import functools
import os
from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

import pwc_mcp_core.runtime.cache_metrics  # noqa: F401  (registers the cache and upstream counters)
from pwc_mcp_core.runtime.core_settings import DEFAULT_MAX_BODY_BYTES

__all__ = ["CONTENT_TYPE", "observe_call", "observe_queue_wait", "observe_request", "record_rejection", "render",
           "set_busy_workers", "set_live_workers", "set_queue_depth", "set_worker_threads"]

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST

REQUESTS = Counter("pwc_mcp_requests", "POST /mcp requests by classified tool, HTTP status and protocol label",
                   ["tool", "status", "protocol"])
REQUEST_SECONDS = Histogram("pwc_mcp_request_seconds", "POST /mcp latency in seconds", ["tool"],
                            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60))
RESPONSE_BYTES = Histogram("pwc_mcp_response_bytes", "POST /mcp response body size in bytes",
                           buckets=(256, 1024, 4096, 16384, 65536, 262144, 1048576, DEFAULT_MAX_BODY_BYTES))
LIMIT_REJECTIONS = Counter("pwc_mcp_limit_rejections", "Requests refused by admission, by kind",
                           ["kind"])
QUEUE_WAIT_SECONDS = Histogram("pwc_mcp_executor_queue_wait_seconds",
                               "Time a tool call waited before a thread or worker started it")
CALL_SECONDS = Histogram("pwc_mcp_executor_call_seconds", "Time from dispatching a tool call to its reply")
# Pool-wide values every gateway process reads from Redis: "livemax" merges them across
# processes and drops a dead process's file (mark_process_dead, gunicorn's child_exit
# hook), so a dead process's last value cannot linger in the maximum.
QUEUE_DEPTH = Gauge("pwc_mcp_executor_queue_depth", "Tool calls waiting for a worker",
                    multiprocess_mode="livemax")
BUSY_WORKERS = Gauge("pwc_mcp_workers_busy",
                     "Tool calls a worker has taken and not yet answered (pool-wide; compare with "
                     "pwc_mcp_worker_threads)", multiprocess_mode="livemax")
LIVE_WORKERS = Gauge("pwc_mcp_workers_live", "Workers with a fresh heartbeat (1 in embedded mode)",
                     multiprocess_mode="livemax")
WORKER_THREADS = Gauge("pwc_mcp_worker_threads", "Calls the live workers can run at once (their threads summed)",
                       multiprocess_mode="livemax")


@functools.lru_cache(maxsize=1024)  # label values are classified, so the set is small
def _request_children(tool: str, status: int, protocol: str) -> tuple[Counter, Histogram]:
    return REQUESTS.labels(tool=tool, status=str(status), protocol=protocol), REQUEST_SECONDS.labels(tool=tool)


def observe_request(tool: str, status: int, protocol: str, seconds: float, nbytes: int) -> None:
    """Record one finished ``/mcp`` request (labels must already be classified)."""
    count, latency = _request_children(tool, status, protocol)
    count.inc()
    latency.observe(seconds)
    RESPONSE_BYTES.observe(nbytes)


def record_rejection(kind: str) -> None:
    """Count one admission refusal (``too_large``, ``host``, ``origin``, ``requests``, ``semantic``,
    ``concurrency``, ``global``, ``limits_unavailable``, ``response_too_large``)."""
    LIMIT_REJECTIONS.labels(kind=kind).inc()


def observe_queue_wait(seconds: float) -> None:
    """Executor hook: a call waited ``seconds`` before it started."""
    QUEUE_WAIT_SECONDS.observe(seconds)


def observe_call(seconds: float) -> None:
    """Executor hook: a call took ``seconds`` from dispatch to reply."""
    CALL_SECONDS.observe(seconds)


def set_queue_depth(depth: int) -> None:
    """Executor hook: calls currently waiting for a worker."""
    QUEUE_DEPTH.set(depth)


def set_busy_workers(count: int) -> None:
    """Executor hook: workers currently running a call."""
    BUSY_WORKERS.set(count)


def set_worker_threads(count: int) -> None:
    """Executor hook: threads of the live workers, summed."""
    WORKER_THREADS.set(count)


def set_live_workers(count: int) -> None:
    """Executor hook: workers with a fresh heartbeat."""
    LIVE_WORKERS.set(count)


def render() -> bytes:
    """The Prometheus text exposition, merged across processes when multiprocess mode is on."""
    # prometheus-client itself is configured by this variable, so it is read here, not in settings.
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest(REGISTRY)
