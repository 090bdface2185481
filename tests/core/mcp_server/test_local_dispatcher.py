"""``LocalDispatcher``: the bounded in-process thread pool of embedded mode and stdio."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from pwc_mcp_core.mcp_server.local_dispatcher import LocalDispatcher
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import Answer, TimedOut, TooLarge, Unavailable


class FakeClient:
    """The catalog client's ``within``: records each call's remaining seconds."""

    def __init__(self) -> None:
        self.budgets: list[float] = []

    @contextlib.contextmanager
    def within(self, seconds: float) -> Iterator[None]:
        self.budgets.append(seconds)
        yield


class FakeRuntime:
    """A runtime without a catalog: only the client's deadline scope."""

    def __init__(self) -> None:
        self.client = FakeClient()


def call(deadline_in_s: float = 10.0) -> Call:
    return Call("tools/call", "list_tasks", {}, "legacy", "2025-11-25", time.time() + deadline_in_s)


def executor_running(run, *, max_response_bytes: int = 1024, **hooks) -> LocalDispatcher:
    return LocalDispatcher(FakeRuntime, max_workers=1, max_response_bytes=max_response_bytes, run=run, **hooks)


async def test_calls_run_in_a_named_worker_thread_with_a_runtime_built_once() -> None:
    seen: list[tuple[str, object]] = []
    built: list[FakeRuntime] = []

    def factory() -> FakeRuntime:
        built.append(FakeRuntime())
        return built[-1]

    def run(c: Call, runtime: object) -> bytes:
        seen.append((threading.current_thread().name, runtime))
        return b'{"result":{}}'

    executor = LocalDispatcher(factory, max_workers=2, max_response_bytes=1024, run=run)
    try:
        assert await executor.dispatch(call()) == Answer(b'{"result":{}}')
        assert await executor.dispatch(call()) == Answer(b'{"result":{}}')
        assert all(name.startswith("pwc-mcp-tool") for name, _ in seen)
        assert len(built) == 1 and {runtime for _, runtime in seen} == {built[0]}
        # each call's catalog requests are bounded by what is left of its deadline
        assert len(built[0].client.budgets) == 2 and all(0 < b <= 10 for b in built[0].client.budgets)
    finally:
        await executor.close()


async def test_a_call_past_its_deadline_times_out() -> None:
    release = threading.Event()

    def run(c: Call, runtime: object) -> bytes:
        release.wait(10)
        return b'{"result":{}}'

    executor = executor_running(run)
    try:
        assert await executor.dispatch(call(deadline_in_s=0.1)) == TimedOut()
        assert await executor.dispatch(call(deadline_in_s=-1)) == TimedOut()
        assert executor.run_here(call(deadline_in_s=-1)) == TimedOut()
    finally:
        release.set()
        await executor.close()


async def test_an_oversized_body_is_too_large_and_one_at_the_bound_is_answered() -> None:
    executor = executor_running(lambda c, r: b"x" * 11, max_response_bytes=10)
    exact = executor_running(lambda c, r: b"x" * 10, max_response_bytes=10)
    try:
        assert await executor.dispatch(call()) == TooLarge()
        assert executor.run_here(call()) == TooLarge()
        assert await exact.dispatch(call()) == Answer(b"x" * 10)
    finally:
        await executor.close()
        await exact.close()


async def test_a_closed_executor_refuses_calls_and_reports_no_live_worker() -> None:
    executor = executor_running(lambda c, r: b"{}")
    assert executor.live_workers == 1
    await executor.close()
    assert executor.live_workers == 0
    assert isinstance(await executor.dispatch(call()), Unavailable)
    assert isinstance(executor.run_here(call()), Unavailable)


async def test_hooks_observe_queue_wait_and_call_time() -> None:
    waits: list[float] = []
    calls: list[float] = []
    executor = executor_running(lambda c, r: b"{}", on_queue_wait=waits.append, on_call=calls.append)
    try:
        await executor.dispatch(call())
    finally:
        await executor.close()
    assert len(waits) == 1 and len(calls) == 1 and calls[0] >= waits[0] >= 0


async def test_start_builds_the_runtime_and_the_tool_tables_before_any_call() -> None:
    from pwc_mcp_core.tools.registry import tools
    from pwc_mcp_core.tools.validation import _validator

    built: list[FakeRuntime] = []
    _validator.cache_clear()
    executor = LocalDispatcher(lambda: built.append(FakeRuntime()) or built[-1], max_workers=1, max_response_bytes=1024,
                             run=lambda c, runtime: b'{"result":{}}')
    try:
        await executor.start()
        assert len(built) == 1
        # every validator compiled: the first calls of many threads find them all built
        assert _validator.cache_info().currsize == len(tools())
        await executor.dispatch(call())
        assert len(built) == 1
    finally:
        await executor.close()
