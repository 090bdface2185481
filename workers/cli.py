"""`pwc-mcp worker` / `python -m workers`: start one worker process.

Reads every setting from the environment (see ``WorkerSettings``), exits 2
with one clear line on a configuration error, 0 after a graceful drain.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence

from pwc_mcp_core.cluster import redis_connect, redis_keys
from pwc_mcp_core.cluster.cache import RedisCache
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.caches import MemoryCache, TieredCache
from pwc_mcp_core.runtime.logs import configure_logging
from pwc_mcp_core.tools.execution import Runtime
from workers.runner import Runner
from workers.settings import WorkerSettings
from workers.worker import Worker

__all__ = ["main"]


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run a worker until SIGTERM; returns the process exit code."""
    environ = os.environ if environ is None else environ
    if argv and any(arg in ("-h", "--help") for arg in argv):
        print("usage: pwc-mcp worker\n\nRuns one worker; configure it with PWC_MCP_* environment variables.")
        return 0
    try:
        settings = WorkerSettings.from_env(environ)
    except ConfigError as exc:
        print(f"pwc-mcp worker: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.core.log_level)
    redis_keys.use_namespace(settings.core.redis_namespace)  # before anything builds a key

    def runtime() -> Runtime:
        redis_client = redis_connect.sync_client(settings.redis, socket_timeout=5, connect_timeout=2)
        return Runtime.build(settings.core, TieredCache(MemoryCache(), RedisCache(redis_client)))

    worker = Worker(settings, Runner(runtime, settings.threads, settings.core.max_body_bytes, clock=settings.clock))
    asyncio.run(worker.run())
    return 0
