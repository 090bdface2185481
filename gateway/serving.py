"""Running the gateway: one aiohttp process, or several under gunicorn (``pwc-mcp gateway``).

With more than one process, Prometheus multiprocess mode is switched on (a fresh
``PROMETHEUS_MULTIPROC_DIR`` unless one is set) so ``/metrics`` from any process
shows the sum of all of them; a dead process's files are marked dead on exit.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

from pwc_mcp_core.errors import ConfigError

from gateway.settings import GatewaySettings

__all__ = ["bind_address", "config_error", "run_gateway", "serve_from_env"]

logger = logging.getLogger(__name__)

WORKER_CLASS = "aiohttp.GunicornWebWorker"


def bind_address(host: str, port: int) -> str:
    """``host:port`` for gunicorn, with IPv6 hosts bracketed."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def child_exit(server: Any, worker: Any) -> None:
    """gunicorn hook: drop a dead process's live gauges from the multiprocess metrics."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def _gunicorn_app(options: dict[str, Any]) -> Any:
    from gunicorn.app.base import BaseApplication

    class GatewayApplication(BaseApplication):  # type: ignore[misc]
        """gunicorn running ``gateway.app:app_factory`` with aiohttp's worker class."""

        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            from gateway.app import app_factory

            return app_factory

    return GatewayApplication()


def run_gateway(settings: GatewaySettings, *, processes: int = 1) -> None:
    """Serve until SIGTERM/SIGINT on ``PWC_MCP_HOST:PORT``.

    Raises:
        ConfigError: the app cannot be built (single-process mode; gunicorn processes exit instead).
    """
    core = settings.core
    if processes <= 1:
        from aiohttp import web

        from gateway.app import serving_app

        app = serving_app(settings)
        logger.info("pwc-mcp gateway listening on %s", bind_address(core.host, core.port))
        web.run_app(app, host=core.host, port=core.port, access_log=None, print=None)
        return
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="pwc-mcp-metrics-")
    logger.info("pwc-mcp gateway listening on %s with %d processes", bind_address(core.host, core.port), processes)
    _gunicorn_app({
        "bind": bind_address(core.host, core.port),
        "workers": processes,
        "worker_class": WORKER_CLASS,
        "accesslog": None,
        "loglevel": core.log_level.lower(),
        "graceful_timeout": int(core.call_deadline_s) + 5,
        "timeout": max(60, int(core.call_deadline_s) * 2),
        "child_exit": child_exit,
    }).run()


def config_error(command: str, exc: ConfigError) -> int:
    """Print one clear line for a configuration error and return exit status 2."""
    print(f"pwc-mcp {command}: {exc}", file=sys.stderr)
    return 2


def serve_from_env(command: str, environ: Mapping[str, str], processes: int, *,
                   allow_ephemeral_cursor_key: bool = False) -> int:
    """Build settings from ``environ``, configure logging and serve; returns the exit status."""
    from pwc_mcp_core.logs import configure_logging

    try:
        settings = GatewaySettings.from_env(environ, allow_ephemeral_cursor_key=allow_ephemeral_cursor_key)
        configure_logging(settings.core.log_level)
        run_gateway(settings, processes=processes)
    except ConfigError as exc:
        return config_error(command, exc)
    return 0
