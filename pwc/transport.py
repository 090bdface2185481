"""The anonymous, GET-only catalog API client of the `pwc` CLI (``docs/cli-contract.md`` §4.1).

One :class:`Client` wraps one ``httpx.Client``. Every response body is
streamed and capped at ``max_bytes`` (2 MiB): a larger ``Content-Length`` is
refused before reading, and the stream is abandoned as soon as more than the
limit has arrived. Reads go through the :class:`pwc.cache.Cache` seam; only
2xx responses are cached, as a small JSON envelope of status, lower-cased
headers and the base64 body.

Deadline: ``timeout`` is a wall-clock bound over the whole request (connect, headers and
body), not per socket read: every socket operation waits at most until that end, so a
server that trickles its answer a byte at a time cannot hold a thread past it. A caller
can tighten it for the requests its thread makes with :meth:`Client.within` (the worker
does so with the call's deadline, ARCHITECTURE.md "Delivery guarantee").

Errors: every timeout → :class:`RequestTimeout` (exit 3, a fix over the
reference, which let body-read timeouts exit 2); other network failures →
``TransportError("API request failed: <reason>")``; non-2xx →
``HTTPStatusError(status, <first 4096 chars of the body>)``; over the cap →
``ResponseError("API response exceeded the client byte limit")``.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import ssl
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

import httpcore
import httpx
from httpcore import SOCKET_OPTION

from pwc import __version__
from pwc.cache import MARKDOWN_TTL_S, Cache, NullCache, ttl_for_path
from pwc.errors import HTTPStatusError, RequestTimeout, ResponseError, TransportError
from pwc.json_types import JsonValue

__all__ = ["DEFAULT_BASE_URL", "MAX_BYTES", "Client", "TextResponse", "encode_params", "quote_ref"]

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://paperswithcode.co/api/v1"
MAX_BYTES = 2 * 1024 * 1024
"""The 2 MiB bound, defined once: the catalog response cap here, and the MCP server's default
request and response bound (``pwc_mcp_core.runtime.core_settings.DEFAULT_MAX_BODY_BYTES``)."""
DETAIL_CHARS = 4096
HEADERS = {"User-Agent": f"pwc-cli/{__version__}", "Accept": "application/json, text/plain;q=0.9"}


@dataclass(frozen=True)
class TextResponse:
    """A text body: ``text`` (UTF-8, undecodable bytes replaced), lower-case ``headers``, ``status``."""

    text: str
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 200


def quote_ref(ref: str) -> str:
    """Percent-encode a paper reference for a URL path, keeping only ``.`` safe (``cs/0101001`` → ``cs%2F0101001``)."""
    return quote(str(ref), safe=".")


def _param_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.strftime("%Y-%m-%d")
    return str(value)


def encode_params(params: Mapping[str, object] | None) -> list[tuple[str, str]]:
    """Query parameters as ordered pairs (§4.1): None dropped, bools ``true``/``false``,
    dates ``YYYY-MM-DD``, lists and tuples as repeated keys."""
    pairs: list[tuple[str, str]] = []
    for key, value in (params or {}).items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            pairs.extend((key, _param_value(item)) for item in value if item is not None)
        else:
            pairs.append((key, _param_value(value)))
    return pairs


def _cache_key(path: str, pairs: list[tuple[str, str]]) -> str:
    digest = hashlib.sha256(json.dumps(["GET", path, sorted(pairs)]).encode()).hexdigest()
    return "GET:" + digest[:32]


def _pack(status: int, headers: dict[str, str], body: bytes) -> bytes:
    return json.dumps({"status": status, "headers": headers,
                       "body": base64.b64encode(body).decode("ascii")}).encode()


def _unpack(blob: bytes) -> tuple[int, dict[str, str], bytes]:
    data = json.loads(blob)
    return int(data["status"]), dict(data["headers"]), base64.b64decode(data["body"])


class _Ends(threading.local):
    """The monotonic end of the request the current thread is making (``inf``: none)."""

    end: float = float("inf")


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every read and write waits at most until its thread's end."""

    def __init__(self, inner: httpcore.NetworkStream, ends: _Ends) -> None:
        self._inner = inner
        self._ends = ends

    def _bound(self, timeout: float | None, error: type[Exception]) -> float | None:
        left = self._ends.end - time.monotonic()
        if left <= 0:
            raise error("the request deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._bound(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._ends)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's sync socket backend with every connect, read and write bounded by the
    calling thread's request end (``_Ends``): httpx itself only bounds each operation."""

    def __init__(self, ends: _Ends) -> None:
        self._inner = httpcore.SyncBackend()
        self._ends = ends

    def _bound(self, timeout: float | None) -> float | None:
        left = self._ends.end - time.monotonic()
        if left <= 0:
            raise httpcore.ConnectTimeout("the request deadline passed")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self._bound(timeout), local_address, socket_options)
        return _DeadlineStream(stream, self._ends)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[SOCKET_OPTION] | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, self._bound(timeout), socket_options), self._ends)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process and shared by every client (a context
    is safe to share between threads): building one loads the CA bundle, about 20 ms of CPU,
    which every new client (one per runtime) paid twice before."""
    return httpx.create_ssl_context()


def _deadline_transport(ends: _Ends) -> httpx.HTTPTransport:
    """httpx's default transport over :class:`_DeadlineBackend` (same TLS and pool defaults)."""
    context = _tls_context()
    transport = httpx.HTTPTransport(verify=context)
    transport._pool = httpcore.ConnectionPool(  # httpx has no public backend seam
        ssl_context=context, max_connections=100, max_keepalive_connections=20,
        keepalive_expiry=5.0, network_backend=_DeadlineBackend(ends))
    return transport


class Client:
    """The catalog API client: ``Client(base_url=None, *, timeout=30.0, cache=None, max_bytes=2 MiB, transport=None)``.

    ``base_url`` falls back to ``PWC_API_URL``, then :data:`DEFAULT_BASE_URL`
    (a trailing ``/`` is stripped). ``timeout`` (seconds) bounds each request end to
    end, wall clock (see the module docstring). ``transport`` is httpx's own seam (e.g.
    ``httpx.MockTransport`` in unit tests); None is the real network through the
    wall-clock deadline transport. Use as a context manager or call :meth:`close`.
    """

    def __init__(self, base_url: str | None = None, *, timeout: float = 30.0,
                 cache: Cache | None = None, max_bytes: int = MAX_BYTES,
                 transport: httpx.BaseTransport | None = None) -> None:
        base = base_url or os.environ.get("PWC_API_URL") or DEFAULT_BASE_URL
        self.base_url = base.rstrip("/")
        self.timeout = float(timeout)
        self.max_bytes = max_bytes
        self.cache: Cache = cache if cache is not None else NullCache()
        self._ends = _Ends()
        if transport is None:
            transport = _deadline_transport(self._ends)
        self._http = httpx.Client(headers=HEADERS, timeout=httpx.Timeout(self.timeout),
                                  follow_redirects=False, transport=transport)

    @contextlib.contextmanager
    def within(self, seconds: float) -> Iterator[None]:
        """Bound every request the calling thread makes inside the block to end within
        ``seconds`` from now (on top of ``timeout``); a request past it raises
        ``RequestTimeout``. Nested blocks keep the earliest end."""
        previous = self._ends.end
        self._ends.end = min(previous, time.monotonic() + max(0.0, seconds))
        try:
            yield
        finally:
            self._ends.end = previous

    def close(self) -> None:
        """Close the underlying connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def url(self, path: str) -> str:
        """The absolute URL of an API ``path`` (relative, e.g. ``papers/search``)."""
        return f"{self.base_url}/{path.lstrip('/')}"

    def get_json(self, path: str, params: Mapping[str, object] | None = None, *,
                 ttl_s: float | None = None) -> JsonValue:
        """GET ``path`` and parse the body as JSON.

        ``ttl_s`` overrides the cache lifetime :func:`pwc.cache.ttl_for_path` gives the path (the
        per-year paper counts of ``pwc trends`` are kept as long as taxonomy answers).
        Raises the transport errors of the module docstring, and
        ``ResponseError("API returned invalid JSON")``.
        """
        _, _, body = self._get(path, params, ttl_s)
        try:
            value: JsonValue = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise ResponseError("API returned invalid JSON") from None
        return value

    def get_text(self, path: str, params: Mapping[str, object] | None = None) -> TextResponse:
        """GET ``path`` and decode the body as UTF-8 text (undecodable bytes replaced).

        A request that pins ``content_version`` is cached for ``MARKDOWN_TTL_S``.
        """
        status, headers, body = self._get(path, params)
        return TextResponse(text=body.decode("utf-8", errors="replace"), headers=headers, status=status)

    def _get(self, path: str, params: Mapping[str, object] | None,
             ttl_s: float | None = None) -> tuple[int, dict[str, str], bytes]:
        path = path.lstrip("/")
        pairs = encode_params(params)
        if ttl_s is not None:
            ttl = ttl_s
        else:
            ttl = MARKDOWN_TTL_S if any(k == "content_version" for k, _ in pairs) else ttl_for_path(path)
        blob = self.cache.fetch(_cache_key(path, pairs), ttl, lambda: _pack(*self._fetch(path, pairs)))
        return _unpack(blob)

    def _fetch(self, path: str, pairs: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes]:
        """One uncached GET; returns (status, lower-case headers, body) for 2xx, else raises."""
        with self.within(self.timeout):
            return self._fetch_bounded(path, pairs)

    def _fetch_bounded(self, path: str, pairs: list[tuple[str, str]]) -> tuple[int, dict[str, str], bytes]:
        try:
            with self._http.stream("GET", self.url(path), params=tuple(pairs)) as response:
                status = response.status_code
                headers = {k.lower(): v for k, v in response.headers.items()}
                if not 200 <= status < 300:
                    detail = self._read_capped(response, DETAIL_CHARS * 4, truncate=True)
                    raise HTTPStatusError(status, detail.decode("utf-8", errors="replace")[:DETAIL_CHARS])
                declared = headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    raise ResponseError("API response exceeded the client byte limit")
                body = self._read_capped(response, self.max_bytes, truncate=False)
        except httpx.TimeoutException:
            logger.info("catalog request timed out after %.1fs", self.timeout)
            raise RequestTimeout("API request timed out") from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise TransportError(f"API request failed: {_reason(exc)}") from None
        return status, headers, body

    @staticmethod
    def _read_capped(response: httpx.Response, limit: int, *, truncate: bool) -> bytes:
        """Read the (decoded) body while streaming; past ``limit`` bytes stop and either
        truncate or raise ``ResponseError`` (the byte cap)."""
        chunks: list[bytes] = []
        received = 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            received += len(chunk)
            if received > limit:
                if truncate:
                    break
                raise ResponseError("API response exceeded the client byte limit")
        return b"".join(chunks)[:limit] if truncate else b"".join(chunks)


def _reason(exc: Exception) -> str:
    """A short reason for a network failure: the exception text (no URL, no body), one line."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]
