"""Public-metadata lookups for papers the catalog may not hold (``external_metadata``).

Endpoints (``docs/requirements.md``, "public-metadata"):

* ``GET papers/{reference}/public-metadata`` — reference: arXiv id (modern or
  legacy, ``vN`` ignored, also ``arxiv.org/abs|pdf`` URLs), DOI (``10.x/y``,
  ``doi:10.x/y`` or a ``doi.org`` URL) or Hugging Face Papers id/URL.
  Anything else (e.g. a title) → 422, use the title search instead.
* ``GET papers/public-metadata/search?title=`` — exact normalized title
  (:func:`catalog.db.schema.normalize_title`) across sources, else the single
  arXiv record whose "Name:" prefix equals the query's prefix (or the whole
  query when it has no colon); that match carries a ``note``.

Response when the catalog holds the paper (callers retry with the id)::

    {"in_catalog": true, "paper_id": "12", "arxiv_id": "1706.03762" | null,
     "title": "...", "matched_by": "arxiv_id" | "doi" | "hf_id" | "title" | ...}

Otherwise::

    {"in_catalog": false, "source": "arxiv" | "crossref" | "huggingface",
     "title", "authors": [str], "abstract", "published", "arxiv_id", "doi",
     "hf_id", "matched_by", "note": str | null,
     "available_at": [{"label": "arXiv abstract", "url": ...}, ...]}

Unknown → 404 ``{"detail": "No public metadata for <kind>: <ref>"}``;
several different papers sharing the exact title → 409.
"""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import unquote

from catalog.db.schema import normalize_title, title_prefix
from catalog.store.core import (
    Conflict,
    Invalid,
    JsonBody,
    NotFound,
    find_by_arxiv,
    loads,
    strip_arxiv_version,
)

__all__ = ["metadata_by_reference", "metadata_by_title"]

_SOURCE_ORDER = "CASE source WHEN 'arxiv' THEN 0 WHEN 'crossref' THEN 1 ELSE 2 END"
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_URL_FORMS = (
    (re.compile(r"^https?://(?:www\.)?arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?/?$", re.I), "arxiv"),
    (re.compile(r"^https?://(?:www\.)?huggingface\.co/papers/([^/?#]+)/?$", re.I), "hf"),
    (re.compile(r"^https?://(?:dx\.)?doi\.org/(.+)$", re.I), "doi"),
    (re.compile(r"^doi:(.+)$", re.I), "doi"),
)


def _classify(ref: str) -> tuple[str, str]:
    """Return ``(kind, key)`` with kind ``arxiv`` | ``doi`` | ``hf``; 422 otherwise."""
    text = ref.strip()
    for pattern, kind in _URL_FORMS:
        match = pattern.match(text)
        if match:
            text = unquote(match.group(1)).strip()
            if kind == "doi":
                return "doi", text.lower()
            arxiv = strip_arxiv_version(text)
            if arxiv:
                return "arxiv", arxiv
            return "hf", text
    arxiv = strip_arxiv_version(text)
    if arxiv:
        return "arxiv", arxiv
    if _DOI.match(text):
        return "doi", text.lower()
    raise Invalid("Unsupported paper reference: expected an arXiv ID, DOI or Hugging Face paper ID; "
                  "use papers/public-metadata/search?title= for titles")


def _in_catalog(conn: sqlite3.Connection, arxiv_id: str | None, matched_by: str) -> JsonBody | None:
    if not arxiv_id:
        return None
    row = find_by_arxiv(conn, "SELECT p.id, p.arxiv_id, p.title FROM papers p WHERE", arxiv_id)
    if row is None:
        return None
    return {"in_catalog": True, "paper_id": str(row[0]), "arxiv_id": row[1], "title": row[2],
            "matched_by": matched_by}


def _links(row: sqlite3.Row) -> list[dict[str, str]]:
    links: list[dict[str, str]] = []
    if row["arxiv_id"]:
        links.append({"label": "arXiv abstract", "url": f"https://arxiv.org/abs/{row['arxiv_id']}"})
        links.append({"label": "arXiv PDF", "url": f"https://arxiv.org/pdf/{row['arxiv_id']}"})
    hf = row["hf_id"] or (row["arxiv_id"] if row["arxiv_id"] and "/" not in row["arxiv_id"] else None)
    if hf:
        links.append({"label": "Hugging Face Papers", "url": f"https://huggingface.co/papers/{hf}"})
    if row["doi"]:
        links.append({"label": "DOI", "url": f"https://doi.org/{row['doi']}"})
    seen = {link["url"] for link in links}
    stored = loads(row["links"], [])
    for extra in stored if isinstance(stored, list) else []:
        if isinstance(extra, dict) and extra.get("url") and extra["url"] not in seen:
            links.append({"label": str(extra.get("label") or "Link"), "url": str(extra["url"])})
            seen.add(extra["url"])
    return links


def _record(row: sqlite3.Row, matched_by: str, note: str | None = None) -> JsonBody:
    return {"in_catalog": False, "source": row["source"], "title": row["title"],
            "authors": loads(row["authors"], []), "abstract": row["abstract"], "published": row["published"],
            "arxiv_id": row["arxiv_id"], "doi": row["doi"], "hf_id": row["hf_id"], "matched_by": matched_by,
            "note": note, "available_at": _links(row)}


def metadata_by_reference(conn: sqlite3.Connection, ref: str) -> JsonBody:
    """``papers/{reference}/public-metadata`` (see module doc)."""
    if not ref.strip() or len(ref) > 500:
        raise Invalid("paper reference must be 1-500 characters")
    kind, key = _classify(ref)
    if kind == "arxiv":
        hit = _in_catalog(conn, key, "arxiv_id")
        if hit:
            return hit
        row = conn.execute(f"SELECT * FROM external_metadata WHERE arxiv_id = ? COLLATE NOCASE OR hf_id = ? "
                           f"ORDER BY {_SOURCE_ORDER}, id LIMIT 1", (key, key)).fetchone()
        label = "arXiv ID"
    elif kind == "doi":
        row = conn.execute(f"SELECT * FROM external_metadata WHERE doi = ? ORDER BY {_SOURCE_ORDER}, id LIMIT 1",
                           (key,)).fetchone()
        label = "DOI"
    else:
        row = conn.execute(f"SELECT * FROM external_metadata WHERE hf_id = ? ORDER BY {_SOURCE_ORDER}, id LIMIT 1",
                           (key,)).fetchone()
        label = "Hugging Face paper ID"
    if row is None:
        raise NotFound(f"No public metadata for {label}: {key}")
    matched_by = {"arxiv": "arxiv_id", "doi": "doi", "hf": "hf_id"}[kind]
    return _in_catalog(conn, row["arxiv_id"], matched_by) or _record(row, matched_by)


def _catalog_title(conn: sqlite3.Connection, normalized: str) -> JsonBody | None:
    words = normalized.split()
    if not words:
        return None
    match = '"' + " ".join(words) + '"'
    rows = conn.execute("SELECT p.id, p.arxiv_id, p.title FROM papers_fts JOIN papers p ON p.id = papers_fts.rowid "
                        "WHERE papers_fts MATCH ? LIMIT 200", ("{title} : " + match,)).fetchall()
    exact = [r for r in rows if normalize_title(r[2]) == normalized]
    if len(exact) == 1:
        row = exact[0]
        return {"in_catalog": True, "paper_id": str(row[0]), "arxiv_id": row[1], "title": row[2],
                "matched_by": "title"}
    return None


def _paper_key(row: sqlite3.Row) -> str:
    return row["arxiv_id"] or row["doi"] or row["hf_id"] or f"#{row['id']}"


def metadata_by_title(conn: sqlite3.Connection, title: str) -> JsonBody:
    """``papers/public-metadata/search?title=`` (see module doc)."""
    normalized = normalize_title(title)
    if not normalized or len(title) > 500:
        raise Invalid("title must be 1-500 characters with at least one letter or digit")
    hit = _catalog_title(conn, normalized)
    if hit:
        return hit
    rows = conn.execute(f"SELECT * FROM external_metadata WHERE normalized_title = ? ORDER BY {_SOURCE_ORDER}, id",
                        (normalized,)).fetchall()
    papers: dict[str, sqlite3.Row] = {}
    for row in rows:
        papers.setdefault(_paper_key(row), row)
    if len(papers) > 1:
        listed = "; ".join(f"{r['title']} ({k})" for k, r in papers.items())
        raise Conflict(f"Title is ambiguous: {title.strip()}; {listed}")
    if papers:
        row = next(iter(papers.values()))
        return _in_catalog(conn, row["arxiv_id"], "title") or _record(row, "title")
    prefix = title_prefix(title) or normalized
    rows = conn.execute("SELECT * FROM external_metadata WHERE title_prefix = ? AND source = 'arxiv' ORDER BY id",
                        (prefix,)).fetchall()
    distinct = {_paper_key(r): r for r in rows}
    if len(distinct) == 1:
        row = next(iter(distinct.values()))
        note = f"Matched by the short name before the colon in the arXiv title: {row['title']}"
        return _in_catalog(conn, row["arxiv_id"], "title_prefix") or _record(row, "title_prefix", note)
    raise NotFound(f"No public metadata for title: {title.strip()}")
