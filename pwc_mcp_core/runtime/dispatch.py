"""The dispatch seam: a `Dispatcher` runs one `Call` and returns one typed `Outcome` (ARCHITECTURE.md §2).

Like a transport under an HTTP client, a dispatcher knows nothing of the surface that asked:
``/mcp``, the legacy SSE transport, REST and stdio all hand it a `Call` and get back exactly
one of

* `Answer` — the executor's body (``{"result":…}`` or ``{"error":…}``, without
  ``jsonrpc``/``id``), within the response bound;
* `Refused` — the limits refused the call (a `Decision`), when the dispatcher ran the
  admission itself (`Deferred`);
* `Unavailable` — no worker is alive, the queue is full or unreachable, or the call was lost;
* `TimedOut` — no answer before ``call.deadline``;
* `TooLarge` — the serialized answer exceeds the response bound.

Each surface maps these through one table into its own wire shape
(`McpServer.answer` for JSON-RPC, the REST table in ``gateway.surfaces.rest``). Nothing raises
across the seam, and no mutable state travels with the call: admission either happened
before (the caller holds the lease and gives it back) or is a `Deferred` value the
dispatcher decides, in which case the lease is the dispatcher's (given back by the worker
that answers, else by the dispatcher before it returns).

`bounded` is the one place the response bound is applied; `InMemoryDispatcher` is the
implementation for tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from pwc_mcp_core.cluster.admission import Decision, Deferred
from pwc_mcp_core.cluster.outcomes import (
    TIMED_OUT,
    TOO_LARGE,
    Answer,
    Outcome,
    Refused,
    TimedOut,
    TooLarge,
    Unavailable,
)
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import DEFAULT_MAX_BODY_BYTES

# The outcomes are defined in `pwc_mcp_core.cluster.outcomes` (the queue's reply format carries
# them); this seam names them for every caller.
__all__ = ["TIMED_OUT", "TOO_LARGE", "Answer", "Deferred", "Dispatcher", "InMemoryDispatcher", "Outcome", "PoolState",
           "Refused", "TimedOut", "TooLarge", "Unavailable", "bounded", "refusal_of"]


def refusal_of(decision: Decision) -> tuple[str, int]:
    """The refusal code (`pwc_mcp_core.protocol.refusals.REFUSALS`) and ``Retry-After`` seconds of a refusing
    decision: the global limit is 503 ``server_saturated``, an unreachable store 503
    ``limits_unavailable``, any per-client limit 429 ``rate_limit_exceeded``."""
    if decision.kind == "global":
        return "server_saturated", 1
    if decision.kind == "limits_unavailable":
        return "limits_unavailable", 1
    return "rate_limit_exceeded", max(1, decision.retry_after_s)


def bounded(body: bytes, limit: int) -> Answer | TooLarge:
    """The response bound, applied in this one place: ``body`` as an `Answer`, or `TooLarge`."""
    return TOO_LARGE if len(body) > limit else Answer(body)


@dataclass(frozen=True, slots=True)
class PoolState:
    """The pool running calls: ``threads`` (calls it can run at once), ``running`` (taken, not
    answered) and ``waiting`` (queued, not taken). ``running`` at ``threads`` with ``waiting``
    above 0 is saturation."""

    threads: int
    running: int
    waiting: int


class Dispatcher(Protocol):
    """Runs calls somewhere (this process's threads, or workers over Redis)."""

    @property
    def runs_admission(self) -> bool:
        """Whether `dispatch` accepts a `Deferred` admission (decides the limits with the enqueue)."""
        ...

    @property
    def live_workers(self) -> int:
        """Workers able to run a call now (cached, never waits)."""
        ...

    def pool_state(self) -> PoolState:
        """The pool at the last look (cached, never waits)."""
        ...

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        """Run ``call`` and return its `Outcome`; never raises for a call's fate.

        ``admission`` is ``None`` when the caller already admitted the call (it holds the
        lease and releases it) or the call needs no lease; a `Deferred` admission (only when
        `runs_admission`) is decided here, and its lease released by the worker that answers
        or by the dispatcher before it returns.
        """
        ...

    async def start(self) -> None:
        """Start background work (warm-up, reply readers); may run before any dependency is up."""
        ...

    async def close(self) -> None:
        """Refuse new calls and release resources."""
        ...


class InMemoryDispatcher:
    """A `Dispatcher` for tests: ``handler`` answers each call with a body or an `Outcome`.

    Args:
        handler: ``async (call) -> bytes | Outcome``; bytes are bounded by ``max_response_bytes``.
        max_response_bytes: the response bound.
        live_workers: what `live_workers` reports.

    ``calls`` records every call and ``admissions`` what came with it.
    """

    runs_admission = False

    def __init__(self, handler: Callable[[Call], Awaitable[bytes | Outcome]], *,
                 max_response_bytes: int = DEFAULT_MAX_BODY_BYTES, live_workers: int = 1) -> None:
        self._handler = handler
        self._limit = max_response_bytes
        self.live_workers = live_workers
        self.calls: list[Call] = []
        self.admissions: list[Deferred | None] = []

    def pool_state(self) -> PoolState:
        """One thread per live worker, nothing queued."""
        return PoolState(self.live_workers, 0, 0)

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        """Record the call and answer it with ``handler``'s body (bounded) or outcome."""
        self.calls.append(call)
        self.admissions.append(admission)
        answered = await self._handler(call)
        return bounded(answered, self._limit) if isinstance(answered, bytes) else answered

    async def start(self) -> None:
        """Nothing to start."""

    async def close(self) -> None:
        """Nothing to close."""
