"""Hand a dispatched call's concurrency lease to the worker that runs it.

A worker releases the lease in the same pipelined round trip as its reply, so a
call through Redis costs the gateway one Redis round trip fewer. The gateway
marks the lease for hand-off in a context variable around MCP handling; the
Redis executor reads it, sends the lease with the call, and records when a
worker's reply arrived (the worker has released it by then). In every other
case (embedded mode, a static method, a timeout, a refused enqueue) the gateway
releases the lease itself. Releasing is idempotent, so a late worker release
after a gateway timeout is harmless.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["CURRENT", "LeaseHandoff"]


@dataclass
class LeaseHandoff:
    """One admitted request's lease, and whether a worker has released it."""

    lease_id: str
    client_hash: str
    released_by_worker: bool = False


CURRENT: ContextVar[LeaseHandoff | None] = ContextVar("pwc_mcp_lease_handoff", default=None)
