"""One fuzz run in Redis mode (gateway → Redis → worker): workers survive, no lease leaks.

After the run: the worker process is alive and ``/health`` counts it, the calls
Stream is empty, and every concurrency lease sorted set is empty once idle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pwc_mcp_core.cluster import redis_keys
from pwc_mcp_core.tools import registry
from tests.conftest import RedisServer, ServerProcess, start_pwc_mcp
from tests.fuzz.conftest import FUZZ_ENV, post_json, tool_call
from tests.fuzz.oracle import check_answer
from tests.fuzz.strategies import (
    HEADER_NAMES,
    arguments_for,
    header_values,
    mutated_arguments,
    request_ids,
)
from tests.helpers import wait_http

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SCHEMAS = {tool["name"]: tool["inputSchema"] for tool in registry.tool_list_result()["tools"]}


@pytest.fixture(scope="module")
def redis_cluster(redis_server: RedisServer, catalog_url: str, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """(gateway, worker, redis URL) on a flushed session redis-server, for this module."""
    if redis_server.proc.poll() is not None:
        redis_server.start()
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    logs = tmp_path_factory.mktemp("fuzz-redis")
    env = {"PWC_API_URL": catalog_url, "PWC_MCP_REDIS_URL": redis_server.url, "PWC_MCP_WORKER_THREADS": "4",
           "PWC_MCP_WORKER_ID": "fuzz-worker", **FUZZ_ENV}
    worker = start_pwc_mcp("worker", env=env, wait_path=None, log_path=logs / "worker.log")
    gateway = start_pwc_mcp("gateway", env=env, log_path=logs / "gateway.log")
    try:
        wait_http(f"{gateway.base_url}/health", timeout_s=30)
        yield gateway, worker, redis_server.url
    finally:
        gateway.stop()
        worker.stop()


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30.0) as client:
        yield client


@FUZZ
@given(data=st.data(), request_id=request_ids,
       headers=st.one_of(st.just({}), st.dictionaries(st.sampled_from(HEADER_NAMES), header_values, max_size=3)))
def test_fuzzed_tool_calls_through_redis_never_give_a_5xx_or_a_leak(
        redis_cluster: tuple[ServerProcess, ServerProcess, str], http: httpx.Client, data: st.DataObject,
        request_id: Any, headers: dict[str, str]) -> None:
    gateway = redis_cluster[0]
    name = data.draw(st.sampled_from(sorted(SCHEMAS)), label="tool")
    arguments = data.draw(st.one_of(arguments_for(SCHEMAS[name]), mutated_arguments(SCHEMAS[name])),
                          label="arguments")
    response, sent = post_json(http, gateway.mcp_url, tool_call(name, arguments, request_id),
                               headers={k: v.encode("latin-1") for k, v in headers.items()})
    check_answer(response, sent, request_id)


def test_after_the_redis_fuzz_the_worker_is_alive_and_no_lease_or_call_is_left(
        redis_cluster: tuple[ServerProcess, ServerProcess, str]) -> None:
    gateway, worker, url = redis_cluster
    assert worker.proc.poll() is None, worker.log_text()[-2000:]
    assert gateway.proc.poll() is None
    health = httpx.get(f"{gateway.base_url}/health", timeout=5).json()
    assert health["checks"]["workers"] == 1
    client = redis.Redis.from_url(url)
    try:
        assert client.zcard(redis_keys.concurrency_global()) == 0
        leftovers = {key: client.zcard(key) for key in client.scan_iter(match=redis_keys.concurrency_client("*"))}
        assert not any(leftovers.values()), leftovers
        assert client.xlen(redis_keys.calls_stream()) == 0
    finally:
        client.close()
