"""Start the self-hosted catalog for a benchmark: ``python -m catalog serve <source>`` on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(*source: str, timeout_s: float = 120.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start the catalog on ``source`` (``--sample`` or ``--db PATH``); returns (process, API URL).

    Its access log is discarded: a benchmark reads no line of it.

    Raises:
        RuntimeError: the catalog exited, or did not answer within ``timeout_s``.
    """
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "catalog", "serve", *source, "--host", "127.0.0.1",
                             "--port", str(port)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    api_url = f"http://127.0.0.1:{port}/api/v1"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the catalog ({' '.join(source)}) exited before answering")
        try:
            if httpx.get(f"{api_url}/tasks/?page=1&page_size=1", timeout=2).status_code == 200:
                return proc, api_url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"the catalog did not answer within {timeout_s:.0f} s")
