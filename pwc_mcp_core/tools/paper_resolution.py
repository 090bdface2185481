"""Paper reference resolution for every tool with a ``paper`` argument (docs/tool-contract.md §5).

Accepted forms: modern and legacy arXiv ids (``vN`` stripped), numeric catalog
ids (canonicalised to the record's arXiv id when it has one), arXiv / Hugging
Face / Papers With Code URLs, exact titles, and the unique short name before a
title's colon ("BERT"). Any other http(s) URL is refused without an upstream call.

A reference the catalog lacks falls back to the public-metadata endpoints
(``docs/requirements.md``): ``papers/{reference}/public-metadata`` for
identifiers, then ``papers/public-metadata/search?title=`` for titles (or when
the first endpoint rejects the reference with 400/422). Answers, misses
included, are cached for an hour through the client's ``Cache`` under their own
``pubmeta:`` key namespace; failed lookups (timeout, 5xx, network) are not
cached and raise ``upstream_error``. A record that says ``in_catalog: true``
(with ``arxiv_id``/``paper_id``) is resolved again as that catalog paper. Full
text is never fetched from outside the catalog.

Errors: :class:`~pwc_mcp_core.errors.ToolError` with the §3.1 prefixes
(``not_found:``, ``ambiguous:``, ``upstream_error:``); other catalog failures
propagate as ``pwc.errors`` exceptions for the caller's §3.1 mapping.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from pwc.errors import HTTPStatusError, RequestTimeout, ResponseError, TransportError
from pwc.references import ARXIV_LEGACY, ARXIV_MODERN
from pwc.transport import Client, quote_ref
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue

__all__ = ["ResolvedPaper", "classify_identifier", "resolve_paper"]

logger = logging.getLogger(__name__)

MAX_TITLE_PAGES = 10
PUBLIC_METADATA_TTL_S = 3600.0
DEFAULT_NOTE = ("This paper is not in the Papers With Code catalog; only public metadata is "
                "available. Cite one of the available_at links instead of a Papers With Code page.")
SEARCH_PAGE_SIZE = 100

_VERSION_SUFFIX = re.compile(r"v\d+$", re.IGNORECASE)
_NUMERIC = re.compile(r"\d{1,20}")
_DOI = re.compile(r"10\.\d{4,9}/\S+")
_ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org"}
_HF_HOSTS = {"huggingface.co", "www.huggingface.co"}
_PWC_HOSTS = {"paperswithcode.co", "www.paperswithcode.co"}


@dataclass(frozen=True)
class ResolvedPaper:
    """A resolved paper reference.

    Attributes:
        canonical: the id to hand the CLI and the read endpoint (arXiv id or catalog
            number); for a paper outside the catalog, its arXiv id or DOI.
        in_catalog: False when only public metadata is known (``external`` is set).
        external: the public-metadata record (``title``, ``abstract``, ``authors``,
            ``source``, ``note``, labelled ``available_at`` [{label, url}], …) or None.
        kind: whether the reference was an ``"identifier"`` (id or URL) or a ``"title"``.
        note: set when the answer was chosen among several candidates (a short name such as
            ``llama`` resolved to the one ``LLaMA: …`` title while ``Llama 2: …`` also exists):
            what was chosen and what else there is.
    """

    canonical: str
    in_catalog: bool
    external: JsonObject | None
    kind: Literal["identifier", "title"]
    note: str | None = None


def _strip_version(value: str) -> str:
    return _VERSION_SUFFIX.sub("", value) if _VERSION_SUFFIX.search(value) else value


def classify_identifier(value: str) -> str | None:
    """``"arxiv"``, ``"legacy"``, ``"numeric"`` or ``"doi"`` for an id (``vN`` already stripped), else None."""
    if ARXIV_MODERN.fullmatch(value):
        return "arxiv"
    if _NUMERIC.fullmatch(value):
        return "numeric"
    if ARXIV_LEGACY.fullmatch(value):
        return "legacy"
    if _DOI.fullmatch(value):
        return "doi"
    return None


def _unsupported(url: str) -> ToolError:
    return ToolError(f"not_found: Paper URL not supported: {url}; only arXiv, Hugging Face, "
                     "and Papers With Code URLs resolve")


def _from_url(url: str) -> tuple[str, str | None]:
    """(candidate, slug-or-None) from a supported URL; raises ToolError otherwise (no upstream call)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        raise _unsupported(url) from None
    host = (parts.hostname or "").lower()
    path = unquote(parts.path).strip("/")
    candidate: str | None = None
    if host in _ARXIV_HOSTS:
        for prefix in ("abs/", "pdf/"):
            if path.startswith(prefix):
                candidate = path[len(prefix):]
                if prefix == "pdf/" and candidate.lower().endswith(".pdf"):
                    candidate = candidate[:-4]
    elif host in _HF_HOSTS and path.startswith("papers/"):
        candidate = path[len("papers/"):]
    elif host in _PWC_HOSTS and path.startswith("paper/"):
        candidate = path[len("paper/"):]
        if candidate and classify_identifier(_strip_version(candidate)) is None:
            return candidate.replace("-", " "), candidate.lower()
    if not candidate:
        raise _unsupported(url)
    candidate = _strip_version(candidate)
    if classify_identifier(candidate) not in {"arxiv", "legacy", "numeric"}:
        raise _unsupported(url)
    return candidate, None


def resolve_paper(reference: str, client: Client) -> ResolvedPaper:
    """Resolve a paper reference to its canonical id (docs/tool-contract.md §5 + the seed's fallback).

    Calls (all through ``client`` and its cache): ``papers/{id}`` for ids,
    ``papers/search`` (phrase, then plain; ≤ 10 pages each) for titles, then the
    public-metadata endpoints for references the catalog lacks.

    Raises:
        ToolError: ``not_found: …`` (empty reference, unsupported URL, unknown id or
            title, too many results), ``ambiguous: Paper title is ambiguous: …``,
            ``upstream_error: the public metadata lookup is unavailable …``.
        pwc.errors.PwcError: other catalog failures (mapped by the caller, §3.1).
    """
    text = (reference or "").strip()
    if not text:
        raise ToolError("not_found: Paper reference cannot be empty")
    return _resolve(text, client, allow_retry=True)


def _resolve(text: str, client: Client, *, allow_retry: bool) -> ResolvedPaper:
    slug: str | None = None
    candidate = text
    if re.match(r"https?://", text, re.IGNORECASE):
        candidate, slug = _from_url(text)
    if slug is None:
        stripped = _strip_version(candidate)
        if stripped[:4].lower() == "doi:":
            stripped = stripped[4:].strip()
        kind = classify_identifier(stripped)
        if kind is not None:
            return _resolve_identifier(stripped, kind, client, allow_retry=allow_retry)
    notes: list[str] = []
    title = _resolve_title(candidate, client, slug=slug, notes=notes)
    if title is not None:
        return ResolvedPaper(title, True, None, "title", notes[0] if notes else None)
    record = lookup_title(candidate, client)
    if record is None:
        raise ToolError(f"not_found: Paper title not found: {candidate}; no catalog paper or public "
                        "metadata record (arXiv, Crossref) has this exact title. Use search_papers to find "
                        "the paper by words of its title, then pass its arXiv ID or catalog ID")
    return _external_or_retry(record, "title", client, allow_retry=allow_retry, reference=candidate)


def _catalog_record(paper_id: str, client: Client) -> JsonObject | None:
    """``papers/{id}`` (cached 300 s), or None on 404."""
    try:
        record = client.get_json(f"papers/{quote_ref(paper_id)}")
    except HTTPStatusError as exc:
        if exc.status == 404:
            return None
        raise
    return record if isinstance(record, dict) else {}


def _resolve_identifier(paper_id: str, kind: str, client: Client, *, allow_retry: bool) -> ResolvedPaper:
    if kind != "doi":
        record = _catalog_record(paper_id, client)
        if record is not None:
            arxiv = record.get("arxiv_id")
            if kind == "numeric" and isinstance(arxiv, str) and arxiv.strip():
                return ResolvedPaper(_strip_version(arxiv.strip()), True, None, "identifier")
            return ResolvedPaper(paper_id, True, None, "identifier")
    found = lookup_identifier(paper_id, client)
    if found == "rejected":  # the identifier endpoint refused it: try it as a title
        found = lookup_title(paper_id, client)
    if not found:
        raise ToolError(f"not_found: Paper not found: {paper_id}; neither the catalog nor the public "
                        "metadata lookup knows this identifier")
    assert isinstance(found, dict)
    return _external_or_retry(found, "identifier", client, allow_retry=allow_retry, reference=paper_id)


def _external_or_retry(record: JsonObject, kind: Literal["identifier", "title"], client: Client, *,
                       allow_retry: bool, reference: str) -> ResolvedPaper:
    """Public metadata → an out-of-catalog result, or a retry with the catalog paper it maps to."""
    if record.get("in_catalog") is True:
        target = record.get("arxiv_id") or record.get("paper_id")
        if allow_retry and target is not None and str(target).strip():
            resolved = _resolve(str(target).strip(), client, allow_retry=False)
            return ResolvedPaper(resolved.canonical, resolved.in_catalog, resolved.external, kind)
        raise ToolError(f"not_found: Paper not found: {reference}")
    canonical = record.get("arxiv_id") or record.get("doi") or reference
    return ResolvedPaper(_strip_version(str(canonical)), False, record, kind)


def _normalize(title: str) -> str:
    return " ".join(title.split()).casefold()


def _slugify(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.casefold()).strip("-")


def _item_key(item: JsonObject) -> str | None:
    arxiv = item.get("arxiv_id")
    if isinstance(arxiv, str) and arxiv.strip():
        return _strip_version(arxiv.strip())
    if item.get("id") is not None and str(item["id"]).strip():
        return str(item["id"]).strip()
    return None


def _ambiguous(candidate: str, matches: dict[str, str]) -> ToolError:
    listed = "; ".join(f"{title} ({key})" for key, title in matches.items())
    return ToolError(f"ambiguous: Paper title is ambiguous: {candidate}; {listed}. "
                     "Pass one of these IDs as paper")


def _resolve_title(candidate: str, client: Client, *, slug: str | None, notes: list[str] | None = None) -> str | None:
    """The catalog id of the paper with exactly this title (or unique ``Name:`` prefix), else None.

    Raises ToolError for ambiguity or an exhausted page budget (§5 step 4).
    """
    wanted = _normalize(candidate)
    short_name = None if ":" in wanted else wanted + ":"
    prefixed: dict[str, str] = {}
    others: dict[str, str] = {}  # titles that start with the short name but not "name:" (Llama 2: …)
    exhausted = False
    for query in (f'"{candidate}"', candidate):
        exact: dict[str, str] = {}
        exhausted = False
        page = 1
        for pages in range(1, MAX_TITLE_PAGES + 1):
            data = client.get_json("papers/search", {"q": query, "mode": "keyword", "page": page,
                                                     "page_size": SEARCH_PAGE_SIZE})
            results = data.get("results", data.get("items", [])) if isinstance(data, dict) else data
            for item in results if isinstance(results, list) else []:
                title = item.get("title") if isinstance(item, dict) else None
                if not isinstance(item, dict) or not isinstance(title, str):
                    continue
                key = _item_key(item)
                if key is None:
                    continue
                normalized = _normalize(title)
                if normalized == wanted or (slug is not None and slug in {item.get("slug"), _slugify(title)}):
                    exact.setdefault(key, title)
                elif short_name is not None and normalized.startswith(short_name):
                    prefixed.setdefault(key, title)
                elif short_name is not None and normalized.startswith(wanted) \
                        and not normalized[len(wanted):len(wanted) + 1].isalnum():
                    others.setdefault(key, title)
            next_page = data.get("next_page") if isinstance(data, dict) else None
            if not isinstance(next_page, int) or isinstance(next_page, bool) or next_page <= page:
                break
            if pages == MAX_TITLE_PAGES:
                exhausted = True
                break
            page = next_page
        if len(exact) == 1:
            return next(iter(exact))
        if exact:
            raise _ambiguous(candidate, exact)
    if exhausted:
        raise ToolError("not_found: Too many results to resolve paper title safely: "
                        f"{candidate}; use the arXiv ID or a more specific title")
    if len(prefixed) == 1:
        key, title = next(iter(prefixed.items()))
        if others and notes is not None:
            listed = "; ".join(f"{other} ({ident})" for ident, other in list(others.items())[:5])
            notes.append(f"Note: {candidate!r} was resolved to {title} ({key}), the one title named "
                         f"'{candidate}: …'; other papers start with that name: {listed}. "
                         "Pass an arXiv ID to choose another.")
        return key
    if prefixed:
        raise _ambiguous(candidate, prefixed)
    return None


def _lookup(kind: str, reference: str, path: str, params: dict[str, str] | None,
            client: Client) -> JsonObject | str | None:
    """One cached public-metadata request: the record, ``"rejected"`` (400/422) or None (404)."""
    digest = hashlib.sha256(reference.encode("utf-8")).hexdigest()[:32]

    def load() -> bytes:
        try:
            record = client.get_json(path, params)
        except HTTPStatusError as exc:
            if exc.status == 404:
                return b'{"outcome":"miss"}'
            if exc.status in (400, 422):
                return b'{"outcome":"rejected"}'
            if exc.status == 409:  # several public records share the exact title
                return b'{"outcome":"ambiguous"}'
            raise _unavailable(exc) from None
        except (RequestTimeout, TransportError, ResponseError) as exc:
            raise _unavailable(exc) from None
        if not isinstance(record, dict):
            raise _unavailable(ResponseError("unexpected shape"))
        return json.dumps({"outcome": "hit", "record": record}).encode("utf-8")

    try:
        blob = client.cache.fetch(f"pubmeta:{kind}:{digest}", PUBLIC_METADATA_TTL_S, load)
        answer = json.loads(blob)
    except (ValueError, TypeError) as exc:
        raise _unavailable(exc) from None
    if answer.get("outcome") == "hit" and isinstance(answer.get("record"), dict):
        return _normalize_record(answer["record"])
    if answer.get("outcome") == "ambiguous":
        raise ToolError(f"ambiguous: Paper title is ambiguous: {reference}; several public metadata "
                        "records share this title; use the arXiv ID or DOI")
    return "rejected" if answer.get("outcome") == "rejected" else None


def _unavailable(exc: BaseException) -> ToolError:
    logger.warning("public metadata lookup failed type=%s", type(exc).__name__)
    return ToolError("upstream_error: the public metadata lookup is unavailable; retry later "
                     "or use the arXiv ID of a paper in the catalog")


def _normalize_record(record: JsonObject) -> JsonObject:
    """The record with a ``note`` and a clean labelled ``available_at`` list."""
    if record.get("in_catalog") is True:
        return record
    available_at = record.get("available_at")
    links: list[JsonValue] = [
        {"label": str(link["label"]), "url": str(link["url"])}
        for link in (available_at if isinstance(available_at, list) else [])
        if isinstance(link, dict) and link.get("label") and link.get("url")
    ]
    note = record.get("note")
    return {**record, "in_catalog": False, "available_at": links,
            "note": note if isinstance(note, str) and note.strip() else DEFAULT_NOTE}


def lookup_identifier(reference: str, client: Client) -> JsonObject | str | None:
    """``papers/{reference}/public-metadata``: record, ``"rejected"`` or None (cached 1 h)."""
    return _lookup("id", reference, f"papers/{quote_ref(reference)}/public-metadata", None, client)


def lookup_title(title: str, client: Client) -> JsonObject | None:
    """``papers/public-metadata/search?title=``: the record or None (cached 1 h, misses too)."""
    found = _lookup("title", title, "papers/public-metadata/search", {"title": title}, client)
    return found if isinstance(found, dict) else None
