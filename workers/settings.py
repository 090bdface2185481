"""Worker settings, built once from the environment at the entry point."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

from pwc_mcp_core.cluster.redis_connect import RedisTarget
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import CoreSettings, env_int, env_number

__all__ = ["WorkerSettings"]

DEFAULT_THREADS = 32


@dataclass(frozen=True)
class WorkerSettings:
    """What one worker process needs on top of the core settings.

    Environment variables, besides every ``CoreSettings`` one (``PWC_MCP_REDIS_URL`` or
    ``PWC_MCP_REDIS_SENTINELS`` with ``PWC_MCP_REDIS_SENTINEL_MASTER`` is required here):

    * ``PWC_MCP_WORKER_THREADS`` (default 32): calls this worker runs at once. Unlike the
      embedded pool it does not follow the global concurrency limit: the limit is shared by
      every worker, and hundreds of threads in one process only queue on the GIL.

    * ``PWC_MCP_WORKER_ID`` (default ``<hostname>-<pid>``): the consumer name; unique
      among live workers.
    * ``PWC_MCP_WORKER_DRAIN_S`` (default 30, 1–600): how long SIGTERM waits for running
      calls before the process exits anyway.
    * ``PWC_MCP_WORKER_CLOCK_SKEW_S`` (default 0, -60–60): a test seam that makes this
      worker's wall clock read that many seconds off, to prove a host with a wrong clock
      still works (ARCHITECTURE.md "Clocks"); never set it in production.
    """

    core: CoreSettings
    worker_id: str
    drain_s: float = 30.0
    threads: int = DEFAULT_THREADS
    clock_skew_s: float = 0.0

    def clock(self) -> float:
        """This worker's wall clock, unix seconds (``time.time()`` plus the test skew)."""
        return time.time() + self.clock_skew_s

    @property
    def redis(self) -> RedisTarget:
        """The shared Redis, a URL or a Sentinel service (always set: ``from_env`` refuses to build without it)."""
        target = self.core.redis
        assert target is not None
        return target

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> WorkerSettings:
        """Build settings from ``environ``.

        Raises:
            ConfigError: a variable is missing or out of range (the message names it).
        """
        core = CoreSettings.from_env(environ)
        if core.redis is None:
            raise ConfigError("PWC_MCP_REDIS_URL (redis://host:port/db) or PWC_MCP_REDIS_SENTINELS with "
                              "PWC_MCP_REDIS_SENTINEL_MASTER is required to run a worker")
        drain_s = env_int(environ, "PWC_MCP_WORKER_DRAIN_S", 30, 1, 600)
        worker_id = environ.get("PWC_MCP_WORKER_ID", "").strip() or f"{socket.gethostname()}-{os.getpid()}"
        # CoreSettings already validated the variable; only its default differs here.
        threads = core.worker_threads if environ.get("PWC_MCP_WORKER_THREADS", "").strip() else DEFAULT_THREADS
        skew = env_number(environ, "PWC_MCP_WORKER_CLOCK_SKEW_S", 0.0, -60, 60)
        return cls(core=core, worker_id=worker_id, drain_s=float(drain_s), threads=threads, clock_skew_s=skew)

    def __repr__(self) -> str:
        return f"WorkerSettings(worker_id={self.worker_id!r}, threads={self.threads}, drain_s={self.drain_s})"
