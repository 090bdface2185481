"""``pwc-mcp demo``: the bundled sample catalog and an embedded server, fully offline.

Starts ``python -m catalog serve --sample`` on a free loopback port, waits until it
answers, then serves the embedded gateway pointed at it on ``PWC_MCP_HOST:PORT``.
The cursor key is always ephemeral (a warning says cursors will not survive a
restart); Redis is never used. The catalog is stopped when the server stops.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Final

import httpx

__all__ = ["free_port", "run_demo"]

logger = logging.getLogger(__name__)

CATALOG_START_TIMEOUT_S: Final = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the demo's catalog; tests and conformance)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_catalog(api_url: str, proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + CATALOG_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            if httpx.get(f"{api_url}/tasks/", params={"page": 1, "page_size": 1}, timeout=2.0).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return False


def _catalog_port(environ: Mapping[str, str]) -> int:
    """The sample catalog's port: ``PWC_DEMO_CATALOG_PORT`` (default 8000, where the README's
    quick start looks); a free port when that one is taken or the setting is 0."""
    from gateway.process.serving import check_listen
    from pwc_mcp_core.errors import ConfigError
    from pwc_mcp_core.runtime.core_settings import env_int

    wanted = env_int(environ, "PWC_DEMO_CATALOG_PORT", 8000, 0, 65535)
    if wanted:
        try:
            check_listen("127.0.0.1", wanted)
            return wanted
        except ConfigError:
            pass
    return free_port()


def run_demo(environ: Mapping[str, str]) -> int:
    """Run the demo until SIGTERM/SIGINT; returns the exit status (1 if the catalog would not start)."""
    from gateway.process.serving import bind_address, check_listen, config_error, serve_from_env
    from pwc_mcp_core.errors import ConfigError
    from pwc_mcp_core.runtime.core_settings import env_int

    try:  # a busy port is one line before the catalog starts (7860 is also Gradio's default)
        check_listen(environ.get("PWC_MCP_HOST") or "127.0.0.1", env_int(environ, "PORT", 7860, 1, 65535))
    except ConfigError as exc:
        return config_error("demo", exc)
    port = _catalog_port(environ)
    catalog = subprocess.Popen([sys.executable, "-m", "catalog", "serve", "--sample", "--host", "127.0.0.1",
                                "--port", str(port)], stdout=subprocess.DEVNULL)
    api_url = f"http://127.0.0.1:{port}/api/v1"
    try:
        if not _wait_catalog(api_url, catalog):
            print("pwc-mcp demo: the sample catalog did not start", file=sys.stderr)
            return 1
        env = {k: v for k, v in environ.items()  # the demo is embedded: no Redis setting of any form
               if not k.startswith("PWC_MCP_REDIS_")
               and k not in ("PWC_MCP_CURSOR_KEY_CURRENT", "PWC_MCP_CURSOR_KEY_PREVIOUS")}
        env["PWC_API_URL"] = api_url
        mcp_port = env_int(environ, "PORT", 7860, 1, 65535)
        where = bind_address(environ.get("PWC_MCP_HOST") or "127.0.0.1", mcp_port)
        print(f"pwc-mcp demo: MCP server at http://{where}/mcp\n"
              f"pwc-mcp demo: sample catalog API at {api_url}; for the pwc CLI: "
              f"export PWC_API_URL={api_url}", file=sys.stderr, flush=True)
        print("pwc-mcp demo: WARNING using an ephemeral random cursor key; read_paper cursors will not "
              "survive a restart", file=sys.stderr, flush=True)
        return serve_from_env("demo", env, 1, allow_ephemeral_cursor_key=True)
    finally:
        if catalog.poll() is None:
            catalog.terminate()
            try:
                catalog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                catalog.kill()
                catalog.wait()
