"""Running the gateway: one aiohttp process, or several under gunicorn (``pwc-mcp gateway``).

Both paths serve with the same HTTP server settings (`server_options`):

* ``auto_decompress=False``: request bodies are never inflated; ``gateway.admission.checks``
  refuses any ``Content-Encoding`` but ``identity`` before reading, so a gzip bomb costs
  nothing and an invalid compressed body cannot reach a decoder.
* ``keepalive_timeout`` = `IDLE_TIMEOUT_S` (75 s), longer than nginx's upstream
  ``keepalive_timeout`` (60 s in ``nginx/pwc-mcp.conf``): the proxy always closes an idle
  connection first, so the gateway never closes one onto which nginx has just written a
  POST (nginx never replays a POST, so that race surfaced as 502s after any stall).
* aiohttp's server logger is ``aiohttp.server``, whose records ``pwc_mcp_core.runtime.logs``
  reduces to a content-free line (no address, no traceback for a client's fault).

gunicorn's own lines go through the same handler and format (`gunicorn_logger_class`).

With more than one process, Prometheus multiprocess mode is switched on (a fresh
``PROMETHEUS_MULTIPROC_DIR`` unless one is set) so ``/metrics`` from any process
shows the sum of all of them; a dead process's files are marked dead on exit.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Final

from gateway.process.settings import GatewaySettings
from pwc_mcp_core.errors import ConfigError
from web_serving.listen import CannotListen, bind_address
from web_serving.listen import check_listen as check_web_listen
from web_serving.runner import GUNICORN_COMMON

if TYPE_CHECKING:  # gunicorn is imported lazily: embedded serving never needs it
    from aiohttp import web
    from gunicorn.app.base import BaseApplication
    from gunicorn.arbiter import Arbiter
    from gunicorn.config import Config
    from gunicorn.glogging import Logger
    from gunicorn.workers.base import Worker

    from gateway.process.connection import GatewayRunner, ServerOptions

__all__ = [
    "IDLE_TIMEOUT_S",
    "app_factory",
    "bind_address",
    "check_listen",
    "config_error",
    "gunicorn_logger_class",
    "run_gateway",
    "serve_from_env",
    "server_options",
    "serving_app",
]

logger = logging.getLogger(__name__)

WORKER_CLASS = "aiohttp.GunicornWebWorker"
IDLE_TIMEOUT_S: Final = 75
"""Seconds an idle client connection stays open; must exceed the proxy's upstream keep-alive (60 s)."""


def server_options() -> ServerOptions:
    """The aiohttp server settings of every gateway process (see the module docstring)."""
    return {
        "auto_decompress": False,
        "keepalive_timeout": IDLE_TIMEOUT_S,
        "access_log": None,
        "logger": logging.getLogger("aiohttp.server"),
    }


def gunicorn_logger_class() -> type[Logger]:
    """`GunicornLogger`, built lazily so that importing this module does not import gunicorn."""
    from gunicorn.glogging import Logger

    class GunicornLogger(Logger):
        """gunicorn's logger, writing through the root handler ``configure_logging`` installed.

        gunicorn's default handlers use their own format (``%(process)d`` …) on stderr; here its
        ``gunicorn.error`` records ("Booting worker", "Worker timeout", "was sent SIGKILL")
        propagate to the content-free line format of every pwc-mcp process, and its access
        log (addresses, paths) stays off.
        """

        def setup(self, cfg: Config) -> None:
            super().setup(cfg)
            for log in (self.error_log, self.access_log):
                for handler in list(log.handlers):
                    log.removeHandler(handler)
            self.error_log.propagate = True
            self.access_log.disabled = True

    return GunicornLogger


def child_exit(server: Arbiter, worker: Worker) -> None:
    """gunicorn hook: drop a dead process's live gauges from the multiprocess metrics."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]


def _gunicorn_app(options: Mapping[str, object]) -> BaseApplication:
    from gunicorn.app.base import BaseApplication

    class GatewayApplication(BaseApplication):
        """gunicorn running ``gateway.process.serving:app_factory`` with aiohttp's worker class."""

        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        # aiohttp's gunicorn worker takes an app factory; the stubs know WSGI and ASGI apps only.
        def load(self) -> Callable[[], Awaitable[web.AppRunner]]:  # type: ignore[override]
            return app_factory

    return GatewayApplication()


def serving_app(settings: GatewaySettings) -> web.Application:
    """``create_app`` for a server process: once started, its heap is settled
    (``gc_tuning.settle_after_startup``). Tests build apps with ``create_app``, which
    leaves the test process's collector alone."""
    from gateway.process.app import (
        create_app,  # lazy: `pwc-mcp --help` and the workers never build the app
    )
    from pwc_mcp_core.cluster import redis_keys

    redis_keys.use_namespace(settings.core.redis_namespace)  # before anything builds a key
    app = create_app(settings)
    app.on_startup.append(_settle_heap)  # runs after the app's lifecycle has started everything
    return app


async def _settle_heap(app: web.Application) -> None:
    from pwc_mcp_core.runtime.gc_tuning import settle_after_startup

    settle_after_startup()


async def app_factory() -> GatewayRunner:
    """Entry point for gunicorn (``gateway.process.serving:app_factory``): settings from the environment.

    Returns a runner, not the bare app, so gunicorn's aiohttp worker serves with the
    gateway's own server settings (`server_options`: no request decompression, the idle
    timeout above the proxy's, the content-free server logger) and connections
    (:mod:`gateway.process.connection`: header deadline, JSON parse errors).
    """
    from gateway.process.connection import GatewayRunner
    from pwc_mcp_core.runtime.logs import configure_logging

    settings = GatewaySettings.from_env(os.environ)
    configure_logging(settings.core.log_level)
    graceful_s = int(settings.core.call_deadline_s) + 5
    return GatewayRunner(serving_app(settings), shutdown_timeout=graceful_s * 0.95, **server_options())


def run_gateway(settings: GatewaySettings, *, processes: int = 1) -> None:
    """Serve until SIGTERM/SIGINT on ``PWC_MCP_HOST:PORT``.

    Raises:
        ConfigError: the app cannot be built (single-process mode; gunicorn processes exit instead).
    """
    core = settings.core
    if processes <= 1:

        app = serving_app(settings)
        logger.info("pwc-mcp gateway listening on %s", bind_address(core.host, core.port))
        from gateway.process.connection import GatewayRunner
        from web_serving.runner import serve_until_signal

        asyncio.run(serve_until_signal(GatewayRunner(app, **server_options()), core.host, core.port))
        return
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="pwc-mcp-metrics-")
    logger.info("pwc-mcp gateway listening on %s with %d processes", bind_address(core.host, core.port), processes)
    _gunicorn_app({
        "bind": bind_address(core.host, core.port),
        "workers": processes,
        "worker_class": WORKER_CLASS,
        "accesslog": None,
        "logger_class": gunicorn_logger_class(),
        "keepalive": IDLE_TIMEOUT_S,  # app_factory's runner sets the same on aiohttp's server
        "loglevel": core.log_level.lower(),
        "graceful_timeout": int(core.call_deadline_s) + 5,
        "timeout": settings.process_timeout_s,  # PWC_MCP_GATEWAY_TIMEOUT
        "child_exit": child_exit,
        **GUNICORN_COMMON,
    }).run()


def check_listen(host: str, port: int) -> None:
    """Fail before anything starts when ``host:port`` cannot be listened on (e.g. a busy port).

    Raises:
        ConfigError: one line naming the address and what to do.
    """
    try:
        check_web_listen(host, port, host_hint="set PWC_MCP_HOST to an address of this machine",
                                 port_hint="stop the other server or set PORT to a free port")
    except CannotListen as exc:
        raise ConfigError(str(exc)) from None


def config_error(command: str, exc: ConfigError) -> int:
    """Print one clear line for a configuration error and return exit status 2."""
    print(f"pwc-mcp {command}: {exc}", file=sys.stderr)
    return 2


def serve_from_env(command: str, environ: Mapping[str, str], processes: int, *,
                   allow_ephemeral_cursor_key: bool = False) -> int:
    """Build settings from ``environ``, configure logging and serve; returns the exit status."""
    from pwc_mcp_core.runtime.logs import configure_logging

    try:
        settings = GatewaySettings.from_env(environ, allow_ephemeral_cursor_key=allow_ephemeral_cursor_key)
        check_listen(settings.core.host, settings.core.port)
        configure_logging(settings.core.log_level)
        run_gateway(settings, processes=processes)
    except ConfigError as exc:
        return config_error(command, exc)
    except OSError as exc:  # the port was taken between the check and the bind
        return config_error(command, ConfigError(f"cannot listen: {exc.strerror or exc}"))
    return 0
