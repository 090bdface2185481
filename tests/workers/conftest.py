"""Worker-room fixtures: the settings of an in-process worker over the session redis-server and sample catalog."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest

from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.tools.execution import Runtime
from workers.runner import Runner
from workers.settings import WorkerSettings

SEARCH = {"query": "transformer", "mode": "keyword"}


def worker_env(redis_url: str, api_url: str, **extra: str) -> dict[str, str]:
    """A worker's environment: two threads, a short drain, the test process's Redis namespace."""
    return {"PWC_MCP_REDIS_URL": redis_url, "PWC_API_URL": api_url, "PWC_MCP_CURSOR_KEY_CURRENT": "k" * 32,
            "PWC_MCP_WORKER_ID": "room-test", "PWC_MCP_WORKER_THREADS": "2", "PWC_MCP_WORKER_DRAIN_S": "10",
            "PWC_MCP_REDIS_NAMESPACE": redis_keys.namespace(), **extra}


def tool_call(name: str, arguments: dict[str, object] | None = None, *, seconds: float = 30.0) -> Call:
    """A ``tools/call`` whose deadline is ``seconds`` from now (negative: already past)."""
    return Call(kind="tools/call", name=name, arguments=dict(SEARCH if arguments is None else arguments),  # type: ignore[arg-type]
                deadline=time.time() + seconds)


def result_of(body: bytes) -> dict[str, object]:
    """The JSON-RPC ``result`` of a response body (fails the test on an ``error`` body)."""
    parsed = json.loads(body)
    assert "result" in parsed, parsed
    return parsed["result"]


@pytest.fixture
def settings(redis_url: str, catalog_url: str) -> WorkerSettings:
    """Worker settings over the flushed session redis-server and the sample catalog."""
    return WorkerSettings.from_env(worker_env(redis_url, catalog_url))


@pytest.fixture
def runtimes() -> Iterator[list[Runtime]]:
    """Every runtime a test's runners built; their catalog clients are closed after the test."""
    built: list[Runtime] = []
    yield built
    for runtime in built:
        runtime.client.close()


@pytest.fixture
def make_runner(settings: WorkerSettings, runtimes: list[Runtime]) -> Callable[..., Runner]:
    """``make_runner(max_response_bytes=None, settings=None)``: the runner `workers.cli` builds
    (by default over the ``settings`` fixture), without the Redis-backed cache (a memory-only runtime)."""
    default = settings

    def build(max_response_bytes: int | None = None, settings: WorkerSettings | None = None) -> Runner:
        chosen = settings or default

        def runtime() -> Runtime:
            runtimes.append(Runtime.build(chosen.core))
            return runtimes[-1]

        return Runner(runtime, chosen.threads, max_response_bytes or chosen.core.max_body_bytes, clock=chosen.clock)

    return build
