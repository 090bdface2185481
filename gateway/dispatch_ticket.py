"""The admission of one dispatched call (``tools/call``, ``resources/read``), handed by the
``/mcp`` endpoint to the executor as its explicit ``admission`` argument
(``McpServer.handle(..., admission=ticket)`` → ``executor(call, ticket)``).

It does two jobs, both to save Redis round trips on the path of every tool call:

* **Deferred admission.** Behind Redis, the endpoint does not run the limits before
  MCP handling; the Redis executor admits the call and appends it to the calls stream
  in one atomic script (``admit_enqueue.lua``). The documented admission order still
  decides every answer: when the call never reached that script (a JSON-RPC error, no
  live worker, a passed deadline), the endpoint runs the limits afterwards and a
  refusal replaces the answer; when the script refused, its refusal is the answer.
  Nothing runs before it is admitted: the script is the only way a deferred call is queued.
* **Lease hand-off.** The worker that runs the call releases its concurrency lease in
  the same pipelined round trip as its reply. In every other case (a timeout, a refused
  or failed enqueue) the endpoint releases the lease. Releasing is idempotent, so a late
  worker release after a gateway timeout is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.limits import AdmissionScript, Decision, Lease

__all__ = ["DispatchTicket"]


@dataclass
class DispatchTicket:
    """One dispatched call's admission state.

    Attributes:
        lease: the concurrency lease the call holds or will hold.
        deferred: the limits have not run yet; ``script`` admits and queues the call.
        script: ``admission.lua``'s KEYS/ARGV for the deferred admission.
        admitted: the limits admitted the call (on either path).
        lease_taken: the call holds ``lease`` in Redis.
        released_by_worker: a worker's reply arrived, so the worker released the lease.
        refusal: the deferred admission refused the call with this decision.
        limits_unavailable: the deferred admission could not reach Redis.
    """

    lease: Lease
    deferred: bool = False
    script: AdmissionScript | None = None
    admitted: bool = False
    lease_taken: bool = False
    released_by_worker: bool = False
    refusal: Decision | None = None
    limits_unavailable: bool = False

    @classmethod
    def admitted_with(cls, lease: Lease) -> DispatchTicket:
        """A call the endpoint has already admitted, holding ``lease``."""
        return cls(lease=lease, admitted=True, lease_taken=True)

    @classmethod
    def deferred_with(cls, script: AdmissionScript) -> DispatchTicket:
        """A call whose admission the Redis executor runs with the enqueue."""
        return cls(lease=script.lease, deferred=True, script=script)

