"""A real local HTTP stub of the catalog API for `pwc` tests (no mock transport).

``StubCatalog`` serves canned responses from a thread on a free port and
records every request as ``(path, params)`` where ``path`` is relative to
``/api/v1/`` and ``params`` maps each query key to a value (a list when the
key repeats). Routes map a path to a JSON-able body, a ``Reply`` or a
callable ``(params) -> body | Reply``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Reply", "StubCatalog", "stub_catalog"]


@dataclass
class Reply:
    """A raw reply: status, body (bytes/str/JSON-able) and extra headers."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StubCatalog:
    routes: dict[str, Any]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def paths(self) -> list[str]:
        return [path for path, _ in self.calls]


def _encode(body: Any) -> tuple[bytes, str]:
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    return json.dumps(body).encode(), "application/json"


def _handler(stub: StubCatalog) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # http.server naming
            parts = urlsplit(self.path)
            path = parts.path.removeprefix("/api/v1/")
            params: dict[str, Any] = {}
            for key, value in parse_qsl(parts.query, keep_blank_values=True):
                if key in params:
                    params[key] = [*params[key], value] if isinstance(params[key], list) else [params[key], value]
                else:
                    params[key] = value
            stub.calls.append((path, params))
            stub.headers_seen.append({k.lower(): v for k, v in self.headers.items()})
            route = stub.routes.get(path)
            if route is None:
                reply = Reply({"detail": "Not Found"}, status=404)
            else:
                result = route(params) if callable(route) else route
                reply = result if isinstance(result, Reply) else Reply(result)
            body, ctype = _encode(reply.body)
            self.send_response(reply.status)
            self.send_header("Content-Type", ctype)
            headers = {"Content-Length": str(len(body)), **reply.headers}
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def stub_catalog(routes: dict[str, Any] | None = None) -> Iterator[StubCatalog]:
    """Serve ``routes`` on 127.0.0.1; yields the stub with ``.url`` = ``http://127.0.0.1:PORT/api/v1``."""
    stub = StubCatalog(routes=dict(routes or {}))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    server.daemon_threads = True
    stub.url = f"http://127.0.0.1:{server.server_address[1]}/api/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


RouteFn = Callable[[dict[str, Any]], Any]
