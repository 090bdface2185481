"""The dispatch seam's pure parts: the one response bound, the refusal table, the in-memory dispatcher."""

from __future__ import annotations

import pytest

from pwc_mcp_core.cluster.admission import LIMITS_UNAVAILABLE, AdmissionScript, Decision, Lease
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import (
    Answer,
    Deferred,
    InMemoryDispatcher,
    TimedOut,
    TooLarge,
    bounded,
    refusal_of,
)


def test_the_bound_admits_a_body_at_the_limit_and_refuses_one_byte_more() -> None:
    assert bounded(b"x" * 10, 10) == Answer(b"x" * 10)
    assert bounded(b"x" * 11, 10) == TooLarge()


@pytest.mark.parametrize(("decision", "expected"), [
    pytest.param(Decision(False, "global", 9), ("server_saturated", 1), id="global"),
    pytest.param(LIMITS_UNAVAILABLE, ("limits_unavailable", 1), id="store-down"),
    pytest.param(Decision(False, "requests", 12), ("rate_limit_exceeded", 12), id="requests"),
    pytest.param(Decision(False, "semantic", 0), ("rate_limit_exceeded", 1), id="at-least-one-second"),
    pytest.param(Decision(False, "concurrency", 1), ("rate_limit_exceeded", 1), id="concurrency"),
])
def test_every_refusing_decision_has_one_refusal_code_and_retry(decision: Decision,
                                                                 expected: tuple[str, int]) -> None:
    assert refusal_of(decision) == expected


async def test_the_in_memory_dispatcher_records_calls_and_bounds_bodies() -> None:
    answers = iter([b"x" * 5, b"x" * 50, TimedOut()])

    async def handler(call: Call) -> bytes | TimedOut:
        return next(answers)

    dispatcher = InMemoryDispatcher(handler, max_response_bytes=10)
    deferred = Deferred(AdmissionScript(["k"], [1], Lease("l", "c")))
    call = Call("tools/call", "list_tasks")
    assert await dispatcher.dispatch(call) == Answer(b"xxxxx")
    assert await dispatcher.dispatch(call, deferred) == TooLarge()
    assert await dispatcher.dispatch(call) == TimedOut()
    assert dispatcher.calls == [call] * 3 and dispatcher.admissions == [None, deferred, None]
