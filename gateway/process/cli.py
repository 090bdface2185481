"""``pwc-mcp``: the launcher (ARCHITECTURE.md §3).

Commands (all honour ``PWC_MCP_HOST`` and ``PORT``, default 127.0.0.1:7860):

* ``serve [--workers N]`` — with ``PWC_MCP_REDIS_URL`` (or the Sentinel variables): a gateway and N worker
  processes, supervised; without: one embedded process.
* ``gateway [--processes N]`` — only the HTTP gateway (gunicorn when N > 1).
* ``worker`` — one worker (``python -m workers`` with the same environment).
* ``demo`` — the bundled sample catalog plus an embedded server, offline, with an
  ephemeral cursor key.
* ``stdio`` — MCP over stdin/stdout; without ``PWC_MCP_CURSOR_KEY_CURRENT`` it keeps one
  cursor key in the user state directory (``pwc_mcp_core.mcp_server.stdio_key``).
* ``smoke URL`` — the deployment smoke test.

A configuration error prints one line and exits 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from collections.abc import Sequence

from pwc_mcp_core import __version__
from pwc_mcp_core.errors import ConfigError
from pwc_mcp_core.runtime.core_settings import int_option

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)


_PROCESSES = int_option("--processes", 1, 256)


def build_parser() -> argparse.ArgumentParser:
    """The ``pwc-mcp`` argument parser."""
    parser = argparse.ArgumentParser(prog="pwc-mcp", description="Papers With Code MCP server.")
    parser.add_argument("--version", action="version", version=f"pwc-mcp {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = commands.add_parser("serve", help="run the server (gateway + workers with Redis, else embedded)")
    serve.add_argument("--workers", type=int_option("--workers", 1, 256), default=2,
                       help="worker processes in Redis mode (default 2)")
    serve.add_argument("--processes", type=_PROCESSES, default=1, help="gateway processes (default 1)")
    gateway = commands.add_parser("gateway", help="run only the HTTP gateway")
    gateway.add_argument("--processes", type=_PROCESSES, default=1, help="gateway processes under gunicorn")
    commands.add_parser("worker", help="run one worker process (Redis mode)", add_help=False)
    commands.add_parser("demo", help="serve the bundled sample catalog offline",
                        description="The bundled sample catalog and an embedded MCP server in one process group, "
                                    "offline, with an ephemeral cursor key.",
                        epilog="environment: PORT (the server, default 7860), PWC_DEMO_CATALOG_PORT (the catalog, "
                               "default 8000; a free port when it is taken)")
    commands.add_parser("stdio", help="serve MCP over stdin/stdout", add_help=False)
    commands.add_parser("smoke", help="smoke-test a deployment", add_help=False)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from gateway.process.serving import check_listen, config_error, serve_from_env
    from gateway.process.settings import GatewaySettings
    from gateway.process.supervisor import Child, gateway_argv, supervise, worker_argv
    from pwc_mcp_core.runtime.logs import configure_logging

    try:
        settings = GatewaySettings.from_env(os.environ)
        if settings.core.redis_url is not None:
            check_listen(settings.core.host, settings.core.port)
    except ConfigError as exc:
        return config_error("serve", exc)
    if settings.core.redis is None:
        return serve_from_env("serve", os.environ, args.processes)
    configure_logging(settings.core.log_level)
    children = [Child("gateway", gateway_argv(args.processes))]
    children += [Child(f"worker-{i + 1}", worker_argv()) for i in range(args.workers)]
    # One metrics directory for the gateway and the workers, so /metrics sums them all.
    env = dict(os.environ)
    env.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="pwc-mcp-metrics-"))
    return supervise(children, env)


def _demo() -> int:
    from gateway.process.demo import run_demo

    return run_demo(dict(os.environ))


def _worker(argv: Sequence[str]) -> int:
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "workers", *argv])
    return 1  # not reached


def _stdio(argv: Sequence[str]) -> int:
    from pwc_mcp_core.mcp_server.stdio import main as stdio_main

    return stdio_main(argv)


def _smoke(argv: Sequence[str]) -> int:
    from gateway.process.smoke import main as smoke_main

    return smoke_main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pwc-mcp`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough = {"worker": _worker, "stdio": _stdio, "smoke": _smoke}
    if argv and argv[0] in passthrough:
        return passthrough[argv[0]](argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "gateway":
        from gateway.process.serving import serve_from_env

        return serve_from_env("gateway", os.environ, args.processes)
    if args.command == "demo":
        return _demo()
    if args.command in (None, "serve"):
        if args.command is None:
            args = build_parser().parse_args(["serve"])
        return _serve(args)
    return 2
