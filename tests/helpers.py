"""Helpers shared by the test suite: free ports, waiting for HTTP, stopping children, awaiting
one wait for queue replies."""

from __future__ import annotations

import asyncio
import functools
import ssl
import subprocess
import time

import httpx

from gateway.process.demo import free_port
from pwc_mcp_core.cluster import queue
from pwc_mcp_core.cluster.errors import StoreUnavailable
from pwc_mcp_core.cluster.redis_pipe import RedisPipe
from pwc_mcp_core.cluster.replies import Replied

__all__ = ["await_replies", "free_port", "http_client", "request", "stop_process", "wait_http"]


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
