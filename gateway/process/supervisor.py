"""``pwc-mcp serve`` in Redis mode: one gateway and N worker subprocesses, kept alive.

A child that exits is logged and restarted (after a short pause if it keeps dying);
a child that exits with status 2 (bad configuration) stops everything, since a
restart cannot fix it. A child that exits has its live Prometheus gauges dropped from
the shared multiprocess directory (``mark_process_dead``), as gunicorn's ``child_exit``
hook does for gateway processes. SIGTERM or SIGINT stops every child (SIGTERM, then SIGKILL
after a grace period) and the supervisor exits 0.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Child", "supervise"]

logger = logging.getLogger(__name__)

CONFIG_ERROR_EXIT: Final = 2
POLL_INTERVAL_S: Final = 0.5
QUICK_EXIT_S: Final = 5.0
RESTART_PAUSE_S: Final = 1.0
STOP_GRACE_S: Final = 40.0


@dataclass
class Child:
    """One supervised subprocess."""

    name: str
    argv: Sequence[str]
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = field(default=0.0)

    def start(self, env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(list(self.argv), env=dict(env))
        self.started_at = time.monotonic()
        logger.info("started %s pid=%d", self.name, self.proc.pid)


def gateway_argv(processes: int) -> list[str]:
    return [sys.executable, "-m", "gateway", "gateway", "--processes", str(processes)]


def worker_argv() -> list[str]:
    return [sys.executable, "-m", "workers"]


def _stop_all(children: Sequence[Child]) -> None:
    for child in children:
        if child.proc is not None and child.proc.poll() is None:
            child.proc.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children:
        if child.proc is None:
            continue
        try:
            child.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.proc.kill()
            child.proc.wait()


def _mark_dead(env: Mapping[str, str], pid: int) -> None:
    """Drop a dead child's live gauges from the multiprocess metrics, if they are on."""
    directory = env.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]


def supervise(children: Sequence[Child], env: Mapping[str, str]) -> int:
    """Run ``children`` until a stop signal; returns the exit status (0, or 2 on a config error)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for child in children:
        child.start(env)
    status = 0
    try:
        while not stop.wait(POLL_INTERVAL_S):
            for child in children:
                proc = child.proc
                code = proc.poll() if proc is not None else None
                if proc is None or code is None:
                    continue
                if code == CONFIG_ERROR_EXIT:
                    logger.error("%s exited with a configuration error; stopping", child.name)
                    status = CONFIG_ERROR_EXIT
                    stop.set()
                    break
                _mark_dead(env, proc.pid)
                logger.warning("%s exited with status %d; restarting", child.name, code)
                if time.monotonic() - child.started_at < QUICK_EXIT_S:
                    stop.wait(RESTART_PAUSE_S)  # a crash loop must not spin
                if not stop.is_set():
                    child.start(env)
    finally:
        _stop_all(children)
    return status
