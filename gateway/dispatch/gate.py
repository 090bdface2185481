"""The call gate, the one way every surface runs a call: admission decided once, then the dispatcher.

``/mcp`` (and the legacy SSE transport through it) and REST hand a `Call` and the
client's identity to `CallGate.run` and get back one
`pwc_mcp_core.runtime.dispatch.Outcome`, which each maps through its own table.

Admission is one of two values, never both:

* the dispatcher runs it (Redis: `Limiter.deferred` gives the `Deferred` script,
  and the dispatcher checks the limits and queues the call in one round trip; the lease
  is then the dispatcher's);
* else the limits run here first (`Limiter.acquire`), a refusal is the outcome, and the
  lease an admitted call holds is given back when the dispatcher returns.

Every refusal and every answer over the response bound is counted in
``pwc_mcp_limit_rejections_total`` here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from gateway.admission.limits import Limiter, LimitsUnavailable
from gateway.shared import metrics
from pwc_mcp_core.cluster.admission import LIMITS_UNAVAILABLE
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import Dispatcher, Outcome, Refused, TooLarge, Unavailable

__all__ = ["CallGate"]

logger = logging.getLogger(__name__)

_FAILED = Unavailable("the dispatcher failed")


@dataclass(frozen=True, slots=True)
class CallGate:
    """The call gate: a dispatcher and the limits its calls are admitted by."""

    dispatcher: Dispatcher
    limiter: Limiter

    async def run(self, call: Call, client_hash: str, *, semantic: bool) -> Outcome:
        """Admit ``call`` for ``client_hash`` (``semantic``: a semantic or hybrid search) and run it."""
        try:
            outcome = await self._run(call, client_hash, semantic=semantic)
        except Exception as exc:  # noqa: BLE001 - dispatchers never raise by contract; never a 500
            logger.error("dispatch failed kind=%s error=%s", call.kind, type(exc).__name__)
            outcome = _FAILED
        if isinstance(outcome, Refused):
            metrics.record_rejection(outcome.decision.kind)
        elif isinstance(outcome, TooLarge):
            metrics.record_rejection("response_too_large")
        return outcome

    async def _run(self, call: Call, client_hash: str, *, semantic: bool) -> Outcome:
        deferred = self.limiter.deferred(client_hash, semantic=semantic) if self.dispatcher.runs_admission else None
        if deferred is not None:
            outcome = await self.dispatcher.dispatch(call, deferred)
        else:
            try:
                decision = await self.limiter.acquire(client_hash, semantic=semantic, lease=True)
            except LimitsUnavailable:
                decision = LIMITS_UNAVAILABLE
            if not decision.allowed or decision.lease is None:
                outcome = Refused(decision)
            else:
                try:
                    outcome = await self.dispatcher.dispatch(call)
                finally:
                    await self.limiter.release(decision.lease)
        return outcome
