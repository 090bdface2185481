"""Run one queued call in a worker thread: the only place workers cross from async to sync.

``execute`` (``pwc_mcp_core.execution``) never raises and returns the
serialized response body; this module adds the thread pool bound, the
deadline check and the response-size bound.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor

from pwc_mcp_core import queue
from pwc_mcp_core.call import Call
from pwc_mcp_core.execution import Runtime, execute

__all__ = ["Runner"]

logger = logging.getLogger(__name__)

MAX_RESPONSE_BYTES = 2 * 1024 * 1024


class Runner:
    """Runs calls on a bounded thread pool.

    Args:
        runtime: the process-wide execution runtime (cached transport, cursor codec).
        threads: the pool size; at most this many calls run at once.
    """

    def __init__(self, runtime: Runtime, threads: int) -> None:
        self._runtime = runtime
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pwc-call")
        self.free = asyncio.Semaphore(threads)
        self.threads = threads

    async def run(self, call_json: str) -> bytes | None:
        """Run one serialized call; ``None`` when its deadline already passed (nobody waits)."""
        call = Call.from_json(call_json)
        if call.deadline <= time.time():
            return None
        loop = asyncio.get_running_loop()
        body = await loop.run_in_executor(self._pool, execute, call, self._runtime)
        if len(body) > MAX_RESPONSE_BYTES:
            logger.warning("response over the bound replaced bytes=%d", len(body))
            return queue.TOO_LARGE
        return body

    def close(self) -> None:
        """Stop the pool without waiting (draining is the worker loop's job)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
