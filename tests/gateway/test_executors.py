"""``EmbeddedExecutor``: the bounded in-process thread pool (embedded mode)."""

from __future__ import annotations

import threading
import time

import pytest

from gateway.executors import EmbeddedExecutor, build_executor
from pwc_mcp_core.call import Call
from pwc_mcp_core.errors import ExecutorTimeout, ExecutorUnavailable, ResponseTooLarge
from tests.gateway.conftest import make_settings


def call(deadline_in_s: float = 10.0) -> Call:
    return Call("tools/call", "list_tasks", {}, "legacy", "2025-11-25", time.time() + deadline_in_s)


async def test_calls_run_in_a_worker_thread() -> None:
    seen: list[str] = []

    def run(c: Call, runtime: object) -> bytes:
        seen.append(threading.current_thread().name)
        return b'{"result":{}}'

    executor = EmbeddedExecutor(object(), max_workers=2, max_response_bytes=1024, run=run)
    try:
        assert await executor(call()) == b'{"result":{}}'
        assert seen[0].startswith("pwc-mcp-tool")
    finally:
        await executor.close()


async def test_a_call_past_its_deadline_times_out() -> None:
    release = threading.Event()

    def run(c: Call, runtime: object) -> bytes:
        release.wait(10)
        return b'{"result":{}}'

    executor = EmbeddedExecutor(object(), max_workers=1, max_response_bytes=1024, run=run)
    try:
        with pytest.raises(ExecutorTimeout):
            await executor(call(deadline_in_s=0.1))
        with pytest.raises(ExecutorTimeout):
            await executor(call(deadline_in_s=-1))
    finally:
        release.set()
        await executor.close()


async def test_an_oversized_body_raises_response_too_large() -> None:
    executor = EmbeddedExecutor(object(), max_workers=1, max_response_bytes=10, run=lambda c, r: b"x" * 11)
    try:
        with pytest.raises(ResponseTooLarge):
            await executor(call())
    finally:
        await executor.close()


async def test_a_closed_executor_is_unavailable() -> None:
    executor = EmbeddedExecutor(object(), max_workers=1, max_response_bytes=10, run=lambda c, r: b"{}")
    await executor.close()
    with pytest.raises(ExecutorUnavailable):
        await executor(call())


async def test_embedded_mode_builds_the_thread_pool_executor() -> None:
    executor = build_executor(make_settings().core)
    try:
        assert isinstance(executor, EmbeddedExecutor)
    finally:
        await executor.close()
