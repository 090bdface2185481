"""Run one queued call in the calling worker thread.

``execute`` (``pwc_mcp_core.tools.execution``) never raises and returns the serialized
response body; core's ``LocalDispatcher`` adds the runtime, the deadline (a call already past
it does not start) and the response-size bound (the one check on the worker's side of Redis),
shared with embedded mode. The outcome goes back in the queue's one reply format
(`pwc_mcp_core.cluster.replies`); whether it is still wanted is `Worker._finish`'s judgement.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pwc_mcp_core.cluster.replies import Replied
from pwc_mcp_core.mcp_server.local_dispatcher import LocalDispatcher
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.dispatch import Answer, TooLarge

if TYPE_CHECKING:  # the tool tables load on first use, not on import
    from pwc_mcp_core.tools.execution import Runtime

__all__ = ["Runner"]

logger = logging.getLogger(__name__)


class Runner:
    """Runs serialized calls in the worker's consumer threads.

    Args:
        runtime_factory: builds the process-wide execution runtime (cached transport, cursor codec).
        threads: the consumer threads, i.e. calls that run at once.
        max_response_bytes: the response bound; a body above it is replied as `TooLarge`.
    """

    def __init__(self, runtime_factory: Callable[[], Runtime], threads: int, max_response_bytes: int,
                 clock: Callable[[], float] = time.time) -> None:
        self._dispatcher = LocalDispatcher(runtime_factory, max_workers=threads, max_response_bytes=max_response_bytes,
                                       thread_name_prefix="pwc-call", clock=clock)
        self._clock = clock
        self.threads = threads

    def run_here(self, call: Call | str) -> Replied | None:
        """Run one call (or serialized call) in the calling thread: its `Answer` or `TooLarge`;
        ``None`` when its deadline had passed before it started, or the worker is closing.
        The deadline is judged by ``clock`` and also bounds the call's catalog requests.

        Raises:
            ValueError: ``call`` is not a call (the caller drops the entry).
        """
        if isinstance(call, str):
            call = Call.from_json(call)
        outcome = self._dispatcher.run_here(call)
        if isinstance(outcome, TooLarge):
            logger.warning("response over the bound replaced")
        return outcome if isinstance(outcome, Answer | TooLarge) else None

    def warm(self) -> None:
        """Build the runtime and the tool tables before the consumer threads start (blocking).

        Raises:
            whatever the runtime factory raises.
        """
        self._dispatcher.warm()

    async def close(self) -> None:
        """Stop the pool without waiting (draining is the worker loop's job)."""
        await self._dispatcher.close()
