"""Bodies served compressed when the client accepts it: ``/docs`` and ``/openapi.json``.

Without nginx (compose, a Space) the gateway itself is the edge, so its large documents
(``/openapi.json`` is over 100 KB) go out gzip-compressed to a client whose
``Accept-Encoding`` admits gzip. Each body is compressed once, when it is first built,
and kept with it: no per-request CPU. nginx passes an already compressed answer through.
`not_modified` is the one conditional-GET check of the documents that carry an ``ETag``.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from aiohttp import web

__all__ = ["Body", "accepts_gzip", "not_modified", "respond", "wants_gzip"]

_MIN_BYTES: Final = 1024  # smaller bodies are sent as they are: gzip would not pay for its header


@dataclass(frozen=True)
class Body:
    """A response body and, when worth it, its gzip form (``None``: send ``plain`` only)."""

    plain: bytes
    gz: bytes | None

    @classmethod
    def of(cls, plain: bytes) -> Body:
        """``plain`` and its gzip form (level 6, no timestamp, so it is the same every time)."""
        return cls(plain, gzip.compress(plain, 6, mtime=0) if len(plain) >= _MIN_BYTES else None)


def accepts_gzip(accept_encoding: str | None) -> bool:
    """True when ``Accept-Encoding`` admits ``gzip`` (by name or ``*``) with a q-value above 0."""
    for part in (accept_encoding or "").split(","):
        coding, _, params = part.partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        quality = "1"
        for param in params.split(";"):
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                quality = value.strip()
        try:
            if float(quality) > 0:
                return True
        except ValueError:
            continue
    return False


def wants_gzip(request: web.Request, body: Body) -> bool:
    """Whether ``body`` goes out gzip-compressed to this request."""
    return body.gz is not None and accepts_gzip(request.headers.get("Accept-Encoding"))


def not_modified(request: web.Request, etag: str) -> bool:
    """Whether the request's ``If-None-Match`` names ``etag``: the weak comparison of RFC 9110
    §13.1.2, since nginx marks a tag weak when it compresses the body."""
    return etag in {tag.strip().removeprefix("W/") for tag in request.headers.get("If-None-Match", "").split(",")}


def respond(request: web.Request, body: Body, content_type: str, *, charset: str | None = None,
            headers: Mapping[str, str] | None = None) -> web.Response:
    """``body`` as ``content_type``, gzip-compressed when the client accepts it (``Vary: Accept-Encoding``)."""
    out = dict(headers or {})
    if body.gz is not None:
        out["Vary"] = ", ".join(filter(None, (out.get("Vary"), "Accept-Encoding")))
    payload = body.plain
    if wants_gzip(request, body) and body.gz is not None:
        out["Content-Encoding"] = "gzip"
        payload = body.gz
    return web.Response(body=payload, content_type=content_type, charset=charset, headers=out)
