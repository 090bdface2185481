"""Stopping a gateway process's background tasks so that a shutdown always finishes.

A task's cancellation can be swallowed below it: something inside one of its awaits
(a library's timeout or error handling) ends the ``CancelledError`` and the task's
``while True`` loop sleeps on. Observed under gunicorn: a gateway process stopped (SIGSTOP)
and resumed, then sent SIGTERM, waited for ever for its Redis liveness task (state
"cancelling", asleep in its loop), so the master was killed and the process stayed behind
as an orphan. `stop_tasks` asks again until every task has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Final

__all__ = ["stop_tasks"]

RECANCEL_INTERVAL_S: Final = 0.2
"""How long a cancelled task may run on before its cancellation is requested again, seconds."""


async def stop_tasks(tasks: Iterable[asyncio.Task[object]]) -> None:
    """Cancel ``tasks`` and return once every one has ended; never raises their errors.

    A task still running ``RECANCEL_INTERVAL_S`` after a cancellation is cancelled again
    (its loop swallowed the previous one), so this cannot wait for ever on a task that
    reaches an ``await`` again.
    """
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=RECANCEL_INTERVAL_S)
    for task in tasks:
        if not task.cancelled():
            task.exception()  # retrieved: no "exception was never retrieved" at exit
