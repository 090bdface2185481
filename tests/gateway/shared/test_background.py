"""`gateway.shared.background.stop_tasks`: a shutdown never waits for ever on a background loop."""

from __future__ import annotations

import asyncio

from gateway.shared.background import stop_tasks


async def _loop_that_swallows_one_cancellation(log: list[str]) -> None:
    swallowed = False
    while True:
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            if swallowed:
                raise
            swallowed = True  # as a library's error handling below a loop once did
            log.append("swallowed")


async def _fails() -> None:
    raise RuntimeError("boom")


async def test_a_task_that_swallows_its_cancellation_is_cancelled_again_and_errors_are_not_raised() -> None:
    log: list[str] = []
    looping = asyncio.create_task(_loop_that_swallows_one_cancellation(log))
    failed = asyncio.create_task(_fails())
    sleeping = asyncio.create_task(asyncio.sleep(3600))
    await asyncio.sleep(0.1)
    await asyncio.wait_for(stop_tasks([looping, failed, sleeping]), timeout=5)
    assert log == ["swallowed"]
    assert looping.cancelled() and sleeping.cancelled() and isinstance(failed.exception(), RuntimeError)


async def test_stop_tasks_with_nothing_to_stop_returns_at_once() -> None:
    await asyncio.wait_for(stop_tasks([]), timeout=1)
