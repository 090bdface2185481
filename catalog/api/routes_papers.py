"""Paper routes: search, list, recent, trending, detail, related, lineage, read, passages, public metadata.

Paper references in paths may be a numeric id, an arXiv id (``vN`` allowed),
a percent-encoded legacy arXiv id (``math.GT%2F0309136``) or a slug.

Read endpoint (``docs/tool-contract.md`` §4): ``research/papers/{ref}/read`` with
optional ``offset`` (byte offset, default 0, must sit on a UTF-8 character
boundary), ``limit`` (bytes, 1-16 MiB; absent = to the end) and
``content_version`` (64 hex; 409 when it differs). The body is raw Markdown;
a chunk never splits a UTF-8 character: it is cut back to a boundary, or,
when ``limit`` is smaller than the character at ``offset``, extended to
that one whole character so reading always advances. Headers:
``x-pwc-content-version``, ``x-pwc-truncated`` (``0``/``1``), ``x-pwc-total-bytes``
(the whole document's UTF-8 size) and, only when truncated, ``x-pwc-next-offset``
(= offset + body bytes).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from aiohttp import web

from catalog.api.params import Params
from catalog.api.responses import json_response, run_query
from catalog.search import papers as search
from catalog.search import passages
from catalog.store import core as store
from catalog.store import papers as store_papers
from catalog.store import public as store_public
from catalog.store.core import Conflict, Invalid

__all__ = ["register", "utf8_chunk"]

ORDER_BY = ("trending", "date_published", "citation_count")
ORDER_DIR = ("asc", "desc")
MAX_READ_LIMIT = 16 * 1024 * 1024
MAX_EXPANSIONS = 10
_VERSION = re.compile(r"^[0-9a-f]{64}$")
_FILTERS = ("search", "task", "method", "conference", "framework", "organization")


def _ref(request: web.Request) -> str:
    """The paper reference from the path, decoded and without a trailing slash."""
    return unquote(request.match_info["ref"]).strip().rstrip("/")


async def papers_search(request: web.Request) -> web.Response:
    """``GET papers/search``."""
    params = Params(request.query)
    query = params.text("q", required=True)
    page = params.page(10)
    mode = params.choice("mode", "hybrid", search.MODES)
    start, end = params.date_range()
    official = params.boolean("has_official_implementation", None)
    abstracts = params.boolean("abstracts", False) is True
    body = await run_query(request, search.search_papers, query, page, mode=mode, start_date=start,
                           end_date=end, has_official_implementation=official, abstracts=abstracts)
    return json_response(body)


async def papers_list(request: web.Request) -> web.Response:
    """``GET papers/`` with catalog filters and ``applied_filters``."""
    params = Params(request.query)
    page = params.page(20)
    filters: dict[str, object] = {}
    for name in _FILTERS:
        value = params.text(name)
        if value is not None:
            filters[name] = value
    start, end = params.date_range()
    if start:
        filters["start_date"] = start
    if end:
        filters["end_date"] = end
    official = params.boolean("has_official_implementation", None)
    if official is not None:
        filters["has_official_implementation"] = official
    authors = params.repeated("author")
    order_by = params.choice("order_by", "trending", ORDER_BY)
    order_dir = params.choice("order_dir", "desc", ORDER_DIR)
    latest_only = params.boolean("latest_only", True)
    params.boolean("include_resources", False)  # validated; summaries never carry resources
    body = await run_query(request, store_papers.list_papers, page, filters, order_by=order_by,
                           order_dir=order_dir, latest_only=bool(latest_only), authors=authors)
    return json_response(body)


async def papers_recent(request: web.Request) -> web.Response:
    """``GET papers/recent``."""
    limit = Params(request.query).integer("limit", 10, 1, 100)
    return json_response(await run_query(request, store_papers.recent_papers, limit))


async def papers_trending(request: web.Request) -> web.Response:
    """``GET papers/trending``."""
    params = Params(request.query)
    limit = params.integer("limit", 20, 1, 100)
    max_age = params.integer("max_age_days", 180, 1, 365)
    min_velocity = params.number("min_velocity")
    return json_response(await run_query(request, store_papers.trending_papers, limit, max_age, min_velocity))


async def paper_detail(request: web.Request) -> web.Response:
    """``GET papers/{ref}``."""
    include = Params(request.query).boolean("include_resources", False)
    return json_response(await run_query(request, store.paper_detail, _ref(request),
                                         include_resources=bool(include)))


async def paper_related(request: web.Request) -> web.Response:
    """``GET papers/{ref}/related``."""
    limit = Params(request.query).integer("limit", 4, 1, 20)
    return json_response(await run_query(request, store_papers.related_papers, _ref(request), limit))


async def paper_lineage(request: web.Request) -> web.Response:
    """``GET research/papers/{ref}/lineage``."""
    return json_response(await run_query(request, store.paper_lineage, _ref(request)))


def utf8_chunk(data: bytes, offset: int, limit: int | None) -> bytes:
    """Return ``data[offset:offset+limit]`` adjusted to UTF-8 character boundaries.

    Raises:
        Invalid: ``offset`` is past the end or inside a character.
    """
    if offset > len(data):
        raise Invalid("offset is beyond the end of the document")
    if offset < len(data) and (data[offset] & 0xC0) == 0x80:
        raise Invalid("offset is not at a UTF-8 character boundary")
    if limit is None or offset + limit >= len(data):
        return data[offset:]
    end = offset + limit
    while end > offset and (data[end] & 0xC0) == 0x80:
        end -= 1
    if end == offset:  # limit smaller than one character: send that whole character
        end = offset + 1
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end += 1
    return data[offset:end]


async def paper_read(request: web.Request) -> web.Response:
    """``GET research/papers/{ref}/read`` (see module doc)."""
    params = Params(request.query)
    offset = params.integer("offset", 0, 0, 2**62)
    limit = params.integer("limit", None, 1, MAX_READ_LIMIT)
    wanted = params.text("content_version", max_len=64)
    if wanted is not None and not _VERSION.match(wanted.lower()):
        raise Invalid("content_version must be 64 hexadecimal characters")
    data, version = await run_query(request, store.paper_markdown, _ref(request))
    if wanted is not None and wanted.lower() != version:
        raise Conflict("content version changed; restart reading from offset 0")
    assert offset is not None
    chunk = utf8_chunk(data, offset, limit)
    end = offset + len(chunk)
    headers = {"x-pwc-content-version": version, "x-pwc-truncated": "1" if end < len(data) else "0",
               "x-pwc-total-bytes": str(len(data))}
    if end < len(data):
        headers["x-pwc-next-offset"] = str(end)
    return web.Response(body=chunk, headers=headers, content_type="text/markdown", charset="utf-8")


async def paper_passages(request: web.Request) -> web.Response:
    """``GET research/papers/{ref}/passages?q=&limit=&expand=``: the paragraphs of the paper's
    Markdown that best match ``q`` by keyword and by meaning (:mod:`catalog.search.passages`); ``limit``
    1-20 (default 5); ``expand`` (repeatable, at most 10) other names of the query's entity,
    matched as phrases at a lower weight. No match is an empty ``passages`` list."""
    params = Params(request.query)
    query = params.text("q", required=True)
    limit = params.integer("limit", 5, 1, passages.MAX_LIMIT)
    expansions = [value.strip() for value in params.repeated("expand") if value.strip()]
    if len(expansions) > MAX_EXPANSIONS or any(len(value) > 500 for value in expansions):
        raise Invalid(f"expand takes at most {MAX_EXPANSIONS} values of at most 500 characters")
    return json_response(await run_query(request, passages.find_passages, _ref(request), query, limit, expansions))


async def public_metadata(request: web.Request) -> web.Response:
    """``GET papers/{ref}/public-metadata``."""
    return json_response(await run_query(request, store_public.metadata_by_reference, _ref(request)))


async def public_metadata_search(request: web.Request) -> web.Response:
    """``GET papers/public-metadata/search?title=``."""
    title = Params(request.query).text("title", required=True)
    return json_response(await run_query(request, store_public.metadata_by_title, title))


def _name(base: str, suffix: str) -> str:
    return f"{base}_slash" if suffix else base


def register(router: web.UrlDispatcher) -> None:
    """Add the paper routes (specific paths before the catch-all ``papers/{ref}``)."""
    base = "/api/v1"
    for suffix in ("", "/"):
        router.add_get(f"{base}/papers/search{suffix}", papers_search, name=_name("papers_search", suffix))
        router.add_get(f"{base}/papers/recent{suffix}", papers_recent, name=_name("papers_recent", suffix))
        router.add_get(f"{base}/papers/trending{suffix}", papers_trending, name=_name("papers_trending", suffix))
        router.add_get(f"{base}/papers/public-metadata/search{suffix}", public_metadata_search,
                       name=_name("public_metadata_search", suffix))
        router.add_get(f"{base}/papers{suffix}", papers_list, name=_name("papers_list", suffix))
    ref = "{ref:.+?}"
    router.add_get(f"{base}/papers/{ref}/related", paper_related, name="paper_related")
    router.add_get(f"{base}/papers/{ref}/related/", paper_related, name="paper_related_slash")
    router.add_get(f"{base}/papers/{ref}/public-metadata", public_metadata, name="public_metadata")
    router.add_get(f"{base}/research/papers/{ref}/lineage", paper_lineage, name="paper_lineage")
    router.add_get(f"{base}/research/papers/{ref}/lineage/", paper_lineage, name="paper_lineage_slash")
    router.add_get(f"{base}/research/papers/{ref}/read", paper_read, name="paper_read")
    router.add_get(f"{base}/research/papers/{ref}/passages", paper_passages, name="paper_passages")
    router.add_get(f"{base}/papers/{{ref:.+}}", paper_detail, name="paper_detail")
