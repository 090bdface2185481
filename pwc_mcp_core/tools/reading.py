"""``read_paper``: one Markdown chunk per call with a signed continuation cursor (docs/tool-contract.md §4).

Flow (§4.2): no cursor (or a placeholder such as ``next``) → resolve the
reference (§5), read from offset 0 with no pinned version; a cursor → verify it
and continue from its paper / offset / version / limit / expiry. One upstream
read of at most ``min(settings.chunk_bytes, 65536)`` bytes per call::

    GET research/papers/<quote_ref(paper)>/read?offset=O&limit=L[&content_version=V]

Continuation reads (version pinned) go through the in-process
:class:`~pwc_mcp_core.runtime.caches.ChunkCache` first; on a miss the transport's own
cache (shared Redis in the cluster) already stores version-pinned reads for
3600 s, so nothing is cached twice here beyond the in-process layer.

The result shape is :data:`READ_PAPER_OUTPUT_SCHEMA`. A paper outside the
catalog returns its public metadata with ``in_catalog: false``, ``markdown:
null`` and the labelled ``available_at`` links (``docs/requirements.md``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

from pwc.errors import HTTPStatusError
from pwc.transport import Client, TextResponse, quote_ref
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.runtime.caches import Chunk, ChunkCache
from pwc_mcp_core.tools.cursors import (
    VERSION_PREFIX,
    CursorCodec,
    CursorReferenceMismatch,
    CursorState,
    ExpiredCursor,
    InvalidCursor,
    is_placeholder,
    source_for,
)
from pwc_mcp_core.tools.error_texts import GENERIC_UPSTREAM
from pwc_mcp_core.tools.paper_resolution import resolve_paper
from pwc_mcp_core.tools.projections.untrusted import TRUST

__all__ = ["READ_PAPER_OUTPUT_SCHEMA", "PaperChanged", "read_paper"]

logger = logging.getLogger(__name__)

MAX_CHUNK_BYTES = 65536
_CURSOR_SUFFIX = ("; pass the next_cursor value from the previous read_paper result, "
                  "or omit cursor to start from the beginning")
INVALID_CURSOR = "invalid_argument: invalid continuation cursor" + _CURSOR_SUFFIX
# An expired cursor cannot be renewed (its hour is fixed when reading starts): only a restart helps.
EXPIRED_CURSOR = ("invalid_argument: expired continuation cursor (a cursor lasts one hour from the first "
                  "read and is never extended); omit cursor to restart reading from the beginning")
OTHER_PAPER = ("invalid_argument: continuation cursor belongs to a different paper; "
               "omit cursor to start reading this paper from the beginning")
UNCONTINUABLE = ("invalid_argument: this reference cannot carry a continuation cursor; "
                 "use the paper's arXiv ID or catalog ID")
NO_MARKDOWN = ("no_markdown: no stored Markdown is available for this paper; use get_paper_info for its "
               "abstract, authors and links")
PLACEHOLDER_NOTE = ("cursor {} is not a continuation cursor, so this read starts at byte 0; to continue a "
                    "reading, pass the next_cursor value of the previous result")
BAD_CHUNK = GENERIC_UPSTREAM  # a chunk that fails the header checks: the catalog's fault, retry it
_VERSION_RE = re.compile(r"[0-9a-f]{64}")

_LINK: JsonObject = {"type": "object", "required": ["label", "url"],
         "properties": {"label": {"type": "string"}, "url": {"type": "string"}}}
READ_PAPER_OUTPUT_SCHEMA: JsonObject = {
    "type": "object",
    "additionalProperties": False,
    "required": ["schema_version", "paper", "markdown", "truncated", "next_cursor", "offset",
                 "next_offset", "content_version", "in_catalog"],
    "properties": {
        "schema_version": {"const": "v1"},
        "paper": {"type": "string", "description": "the reference as passed (trimmed)"},
        "markdown": {"type": ["string", "null"], "description": "this chunk; null outside the catalog"},
        "truncated": {"type": "boolean", "description": "more Markdown remains"},
        "next_cursor": {"type": ["string", "null"], "description": "pass as cursor to continue"},
        "offset": {"type": "integer", "minimum": 0, "description": "byte offset of this chunk"},
        "next_offset": {"type": ["integer", "null"], "description": "byte offset of the next chunk"},
        "content_version": {"type": ["string", "null"], "description": "sha256 of the document"},
        "total_bytes": {"type": ["integer", "null"], "minimum": 0,
                        "description": "the whole document's size in bytes; present when the catalog states it"},
        "in_catalog": {"type": "boolean"},
        "trust": {"type": "string", "description": "present with markdown: it is untrusted third-party text"},
        "note": {"type": "string"},
        "available_at": {"type": "array", "items": _LINK},
        "public_metadata": {"type": "object", "description": "title, authors, abstract, source, …"},
    },
}


class _ChunkSettings(Protocol):
    """The one setting ``read_paper`` reads: the chunk size in bytes."""

    @property
    def chunk_bytes(self) -> int: ...


class _Runtime(Protocol):
    """What ``read_paper`` needs from ``execution.Runtime``."""

    client: Client
    cursor_codec: CursorCodec
    chunk_cache: ChunkCache

    @property
    def settings(self) -> _ChunkSettings: ...


class PaperChanged(ToolError):
    """The pinned content version no longer exists (HTTP 409): restart from the beginning.

    ``restart`` is the hint for the caller: the arguments of the restarting call.
    """

    def __init__(self, reference: str) -> None:
        self.restart = {"paper": reference, "cursor": None}
        super().__init__("paper_changed: paper changed; restart reading from the beginning "
                         f"(restart: {json.dumps(self.restart, ensure_ascii=False)})")


def read_paper(arguments: Mapping[str, JsonValue], runtime: _Runtime) -> JsonObject:
    """Read one Markdown chunk of a paper (docs/tool-contract.md §4, seeds).

    Args:
        arguments: ``{"paper": str (required), "cursor": str | None}``.
        runtime: provides ``client``, ``cursor_codec``, ``chunk_cache``, ``settings.chunk_bytes``.

    Returns:
        ``{"schema_version": "v1", "paper", "markdown", "truncated", "next_cursor",
        "offset", "next_offset", "content_version", "in_catalog"}`` — plus ``note``,
        ``available_at`` and ``public_metadata`` when ``in_catalog`` is false.

    Raises:
        ToolError: ``invalid_argument:`` (bad/expired/foreign cursor), ``not_found:``,
            ``ambiguous:``, ``no_markdown:``, ``paper_changed:`` (:class:`PaperChanged`),
            ``upstream_error:`` (a chunk failing the header checks).
        pwc.errors.PwcError: other catalog failures (mapped by the caller, §3.1).
    """
    reference = str(arguments.get("paper") or "").strip()
    cursor = arguments.get("cursor")
    codec, client = runtime.cursor_codec, runtime.client
    if cursor is not None and not isinstance(cursor, str):
        raise ToolError(INVALID_CURSOR)
    state: CursorState | None = None
    if not is_placeholder(cursor):
        state = _continue(str(cursor), reference, runtime)
    if state is None:
        resolved = resolve_paper(reference, client)
        if not resolved.in_catalog:
            return _outside_catalog(reference, resolved.external or {})
        limit = max(1, min(int(runtime.settings.chunk_bytes), MAX_CHUNK_BYTES))
        paper = resolved.canonical
        result = _read(reference, paper, None, 0, limit, codec.new_expiry(), runtime)
        if isinstance(cursor, str) and cursor.strip():
            # `cursor: "next"` is the natural guess; say that it restarted, or an agent loops on chunk 1.
            result["note"] = PLACEHOLDER_NOTE.format(json.dumps(cursor.strip()))
        return result
    return _read(reference, state.paper, state.version, state.offset, state.limit, state.exp, runtime)


def _continue(cursor: str, reference: str, runtime: _Runtime) -> CursorState:
    try:
        return runtime.cursor_codec.decode(cursor, reference)
    except InvalidCursor:
        raise ToolError(INVALID_CURSOR) from None
    except ExpiredCursor:
        raise ToolError(EXPIRED_CURSOR) from None
    except CursorReferenceMismatch as mismatch:
        # Another reference may carry the cursor only if it names the same paper.
        resolved = resolve_paper(reference, runtime.client)
        if not resolved.in_catalog or resolved.canonical != mismatch.state.paper:
            raise ToolError(OTHER_PAPER) from None
        return mismatch.state.with_ref(reference)


def _outside_catalog(reference: str, record: Mapping[str, JsonValue]) -> JsonObject:
    metadata: JsonObject = {k: v for k, v in record.items() if k not in {"available_at", "note", "in_catalog"}}
    available_at = record.get("available_at")
    links: list[JsonValue] = list(available_at) if isinstance(available_at, list) else []
    return {"schema_version": "v1", "paper": reference, "markdown": None, "truncated": False,
            "next_cursor": None, "offset": 0, "next_offset": None, "content_version": None,
            "in_catalog": False, "note": record.get("note") or "", "available_at": links,
            "public_metadata": metadata}


def _read(reference: str, paper: str, version: str | None, offset: int, limit: int, exp: int,
          runtime: _Runtime) -> JsonObject:
    """One chunk. ``version`` is None (a fresh read), the whole content version (a format-1
    cursor: sent to the catalog, which answers 409 when it changed) or its prefix (a format-2
    cursor: the catalog's answer must start with it, else the paper changed)."""
    # Only continuation reads (version pinned) use the chunk cache (§4.5), keyed by the prefix.
    pinned = version is not None
    key = version[:VERSION_PREFIX] if version else None
    chunk = runtime.chunk_cache.get(paper, key, offset, limit) if key else None
    if chunk is None:
        full = version if version is not None and len(version) == 64 else None
        response = _fetch(reference, paper, full, offset, limit, runtime.client)
        got, chunk = _validate(response, full, offset)
        if key is not None and not got.startswith(key):
            raise PaperChanged(reference)
        chunk = replace(_at_boundary(chunk, offset), version=got)
        if pinned:
            runtime.chunk_cache.put(paper, got[:VERSION_PREFIX], offset, limit, chunk)
    version = chunk.version or version
    if version is None:  # every chunk read or cached carries the version it was read at
        raise ToolError(BAD_CHUNK)
    next_cursor = None
    if chunk.next_offset is not None:
        state = CursorState(ref=reference, paper=paper, source=source_for(paper), version=version,
                            offset=chunk.next_offset, limit=limit, exp=exp)
        try:
            next_cursor = runtime.cursor_codec.encode(state)
        except ValueError:
            # The session's fixed expiry passed between decode and encode, or the
            # state cannot be represented in a cursor (e.g. a reference over 500 chars).
            if exp <= runtime.cursor_codec.now():
                raise ToolError(EXPIRED_CURSOR) from None
            raise ToolError(UNCONTINUABLE) from None
    result: JsonObject = {"schema_version": "v1", "paper": reference, "markdown": chunk.markdown,
              "truncated": chunk.truncated, "next_cursor": next_cursor, "offset": offset,
              "next_offset": chunk.next_offset, "content_version": version, "in_catalog": True,
              "trust": TRUST}
    if chunk.total_bytes is not None:  # only when the catalog states it
        result["total_bytes"] = chunk.total_bytes
    return result


def _at_boundary(chunk: Chunk, offset: int) -> Chunk:
    """A truncated chunk ended after its last paragraph break in its second half, else after its last
    line break in its second half, so no chunk ends inside a number or a word (``(-0`` | ``.1104``).

    The next offset moves back to match; a chunk without such a break is kept whole. Deterministic,
    so a cached continuation and a fresh read of the same (offset, limit) agree.
    """
    text = chunk.markdown
    if not chunk.truncated or chunk.next_offset is None:
        return chunk
    half = len(text) // 2
    end = next((at + len(mark) for mark in ("\n\n", "\n") if (at := text.rfind(mark)) >= half), len(text))
    if end >= len(text):
        return chunk
    kept = text[:end]
    return Chunk(markdown=kept, truncated=True, next_offset=offset + len(kept.encode("utf-8")),
                 total_bytes=chunk.total_bytes)


def _fetch(reference: str, paper: str, version: str | None, offset: int, limit: int,
           client: Client) -> TextResponse:
    path = f"research/papers/{quote_ref(paper)}/read"
    try:
        return client.get_text(path, {"offset": offset, "limit": limit, "content_version": version})
    except HTTPStatusError as exc:
        if exc.status == 409:
            raise PaperChanged(reference) from None
        if exc.status != 404:
            raise
    # 404 on read: a missing paper, or a paper without stored Markdown (§5 step 5).
    try:
        client.get_json(f"papers/{quote_ref(paper)}")
    except HTTPStatusError as exc:
        if exc.status == 404:
            raise ToolError(f"not_found: Paper not found: {paper}") from None
        raise
    raise ToolError(NO_MARKDOWN)


def _validate(response: TextResponse, version: str | None, offset: int) -> tuple[str, Chunk]:
    """Strict header checks of §4.2; returns (content version, chunk) or raises ``upstream_error``."""
    headers = response.headers
    got_version = headers.get("x-pwc-content-version", "")
    truncated = headers.get("x-pwc-truncated")
    next_raw = headers.get("x-pwc-next-offset")
    total_raw = headers.get("x-pwc-total-bytes")
    body_bytes = len(response.text.encode("utf-8"))
    reason = None
    if not _VERSION_RE.fullmatch(got_version):
        reason = "content version"
    elif version is not None and got_version != version:
        reason = "content version not echoed"
    elif truncated not in ("0", "1"):
        reason = "truncated flag"
    elif truncated == "1" and (next_raw is None or not next_raw.isdigit()):
        reason = "next offset"
    elif truncated == "0" and next_raw is not None:
        reason = "next offset on last chunk"
    elif truncated == "1" and int(next_raw or 0) <= offset:
        reason = "offset did not advance"
    elif truncated == "1" and int(next_raw or 0) != offset + body_bytes:
        reason = "next offset does not match the body"
    elif total_raw is not None and (not total_raw.isdigit() or int(total_raw) < offset + body_bytes):
        reason = "total bytes"
    if reason is not None:
        logger.warning("invalid Markdown chunk from the catalog check=%s", reason)
        raise ToolError(BAD_CHUNK)
    next_offset = int(next_raw) if truncated == "1" and next_raw is not None else None
    total = int(total_raw) if total_raw is not None else None
    return got_version, Chunk(markdown=response.text, truncated=truncated == "1", next_offset=next_offset,
                              total_bytes=total)
