"""Helpers shared by the test suite: free ports, waiting for HTTP, starting a redis-server, stopping
children, awaiting one wait for queue replies."""

from __future__ import annotations

import asyncio
import functools
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import redis

from gateway.process.demo import free_port
from pwc_mcp_core.cluster import queue
from pwc_mcp_core.cluster.errors import StoreUnavailable
from pwc_mcp_core.cluster.redis_pipe import RedisPipe
from pwc_mcp_core.cluster.replies import Replied

__all__ = ["await_replies", "free_port", "http_client", "request", "spawn_redis", "stop_process", "wait_http"]


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process: ``httpx.get`` and a bare
    ``httpx.Client()`` each load the CA bundle again, about 20 ms of CPU per request."""
    return httpx.create_ssl_context()


def http_client(**kwargs: object) -> httpx.Client:
    """An ``httpx.Client`` with httpx's defaults but the process's one TLS context (``kwargs`` as for httpx)."""
    return httpx.Client(verify=_tls(), **kwargs)  # type: ignore[arg-type]


def request(method: str, url: str, **kwargs: object) -> httpx.Response:
    """``httpx.request`` (same arguments and defaults) without building a TLS context per call."""
    with http_client() as client:
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def wait_http(url: str, *, timeout_s: float = 30.0, proc: subprocess.Popen | None = None,
              ok_statuses: tuple[int, ...] = (200,)) -> None:
    """Poll ``url`` until it answers one of ``ok_statuses``.

    Raises:
        RuntimeError: ``proc`` exited, or nothing answered within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    last: object = None
    # One client for every poll, without keep-alive: a process that restarts on the same port
    # must not be asked over a connection to the one before it.
    with http_client(timeout=2.0, limits=httpx.Limits(max_keepalive_connections=0)) as client:
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
            try:
                response = client.get(url)
                if response.status_code in ok_statuses:
                    return
                last = response.status_code
            except httpx.HTTPError as exc:
                last = exc
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout_s}s (last: {last!r})")


def stop_process(proc: subprocess.Popen, *, timeout_s: float = 10.0) -> None:
    """Terminate ``proc`` (SIGTERM, then SIGKILL after ``timeout_s``) and reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=timeout_s)


def refusal_error(answer: object) -> str | None:
    """The ``data.error`` code of a JSON-RPC refusal body (`pwc_mcp_core.protocol.refusals`), else None.

    Accepts the parsed body or its raw bytes; checks the JSON-RPC shape on the way.
    """
    import json

    if isinstance(answer, (bytes, str)):
        answer = json.loads(answer)
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0" or "id" not in answer:
        return None
    error = answer.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    return data.get("error") if isinstance(data, dict) else None


async def await_replies(pipe: RedisPipe, reply_key: str, *, timeout_s: float) -> list[tuple[str, Replied]]:
    """One `queue.wait_replies_then` wait on ``pipe``, awaited: the decoded replies (``[]`` after
    ``timeout_s``); a failed wait raises its `StoreUnavailable`."""
    outcome: asyncio.Future[list[tuple[str, Replied]] | StoreUnavailable] = asyncio.get_running_loop().create_future()
    queue.wait_replies_then(pipe, reply_key, timeout_s=timeout_s, then=outcome.set_result)
    replies = await outcome
    if isinstance(replies, Exception):
        raise replies
    return replies


def spawn_redis(port: int, workdir: Path, *, tls: tuple[Path, Path] | None = None) -> subprocess.Popen[bytes]:
    """A redis-server child on loopback ``port`` (no persistence), answering ``PING`` when returned.

    ``tls`` (certificate, key): it listens with TLS only on ``port`` and does not ask clients for a
    certificate; reach it at ``rediss://127.0.0.1:<port>/0?ssl_cert_reqs=none``.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed; .ci/run installs it")
    listen = ["--port", str(port)]
    url = f"redis://127.0.0.1:{port}/0"
    if tls is not None:
        cert, key = tls
        listen = ["--port", "0", "--tls-port", str(port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                  "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"]
        url = f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=none"
    proc = subprocess.Popen(
        [binary, *listen, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(workdir), "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis.from_url(url)
    for _ in range(200):
        try:
            client.ping()
            client.close()
            return proc
        except redis.ConnectionError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    client.close()
    stop_process(proc)
    pytest.fail(f"redis-server did not start on port {port}")
