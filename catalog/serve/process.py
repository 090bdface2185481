"""Running the catalog: one aiohttp process, or several under gunicorn (``pwc-catalog serve``).

The catalog database is read-only while it is served (an import builds a new
file and renames it over the old one), so any number of processes can read
it at once. ``--processes N`` starts gunicorn with aiohttp's worker class:
N processes accept on the one listening socket, each with its own read-only
SQLite connections, so throughput grows with cores. gunicorn restarts a
process that dies and stops them all on SIGTERM after in-flight requests.

An import that replaces the file is picked up by restarting the service
(``systemctl restart pwc-catalog``); until then every process keeps reading
the file it opened.

Either way, connections answer a request aiohttp cannot parse with the JSON detail and no
echo (:mod:`catalog.serve.connection`), and an address that cannot be listened on (a busy port) is
one line before anything starts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from catalog.api.params import REQUEST_LINE_LIMIT
from catalog.serve.connection import CatalogRunner
from web_serving.listen import bind_address, check_listen
from web_serving.runner import GUNICORN_COMMON, serve_until_signal

if TYPE_CHECKING:
    from gunicorn.app.base import BaseApplication

__all__ = ["HOST_HINT", "PORT_HINT", "WORKER_CLASS", "run_catalog"]

logger = logging.getLogger(__name__)

WORKER_CLASS = "aiohttp.GunicornWebWorker"
PROCESS_TIMEOUT_S = 60  # gunicorn restarts a process whose event loop stalls longer
GRACEFUL_S = 30
HOST_HINT = "pass --host with an address of this machine"
PORT_HINT = "stop the other server or pass --port with a free port"


def run_catalog(db: Path, host: str, port: int, *, processes: int = 1) -> None:
    """Serve the catalog database ``db`` on ``host:port`` until SIGTERM/SIGINT.

    Raises:
        FileNotFoundError: ``db`` does not exist (checked before any process starts).
        web_serving.listen.CannotListen: ``host:port`` cannot be listened on (checked first).
    """
    from catalog.api.app import create_app

    # One clear line before "serving" is logged, not a raw [Errno 98] after it.
    check_listen(host, port, host_hint=HOST_HINT, port_hint=PORT_HINT)
    if processes <= 1:
        app = create_app(db)
        logger.info("catalog serving on %s", bind_address(host, port))
        asyncio.run(serve_until_signal(CatalogRunner(app, access_log=None, max_line_size=REQUEST_LINE_LIMIT),
                                       host, port))
        return
    create_app(db)  # fail here, once, with a clear error instead of in every process
    logger.info("catalog serving on %s with %d processes", bind_address(host, port), processes)
    _gunicorn_app(db, {
        "bind": bind_address(host, port),
        "workers": processes,
        "worker_class": WORKER_CLASS,
        "accesslog": None,
        "timeout": PROCESS_TIMEOUT_S,
        "graceful_timeout": GRACEFUL_S,
        "keepalive": 75,  # above nginx's upstream keep-alive (60 s): the proxy closes first
        **GUNICORN_COMMON,
    }).run()


def _gunicorn_app(db: Path, options: Mapping[str, object]) -> BaseApplication:
    from gunicorn.app.base import BaseApplication

    class CatalogApplication(BaseApplication):
        """gunicorn running :func:`catalog.api.app.create_app` with aiohttp's worker class."""

        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        # aiohttp's gunicorn worker takes an app factory; the stubs know WSGI and ASGI apps only.
        def load(self) -> Callable[[], Awaitable[web.AppRunner]]:  # type: ignore[override]
            async def factory() -> web.AppRunner:
                # A runner, not the bare app: aiohttp's gunicorn worker then serves with the
                # catalog's own request-line limit (a 10 KB query answers 422, not a text 400).
                from catalog.api.app import create_app

                # CatalogRunner: a request aiohttp cannot parse gets the JSON detail, no echo.
                return CatalogRunner(create_app(db), access_log=None, max_line_size=REQUEST_LINE_LIMIT)

            return factory

    return CatalogApplication()
