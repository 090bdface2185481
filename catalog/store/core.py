"""Read-only access to the catalog database: connections, errors, paging and papers.

``catalog.store.core`` and its ``store_*`` siblings are the only modules that run
SQL for the server. Every query function takes a ``sqlite3.Connection``
(from :meth:`Store.conn`, one read-only connection per thread) and returns
plain dicts/lists using the upstream field names of ``docs/cli-contract.md`` §4.3.
Identifiers are rendered as strings (``"17"``), as upstream does.

Errors are raised as :class:`StoreError` subclasses carrying an HTTP status
and a JSON-ready ``detail`` (a string, or the ``ambiguous_author`` object of
§3.3); the server turns them into ``{"detail": ...}`` responses.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias, TypedDict, Unpack
from urllib.parse import quote

from catalog.db.schema import SCHEMA_VERSION

__all__ = [
    "PAPER_COLUMNS",
    "Conflict",
    "Envelope",
    "EnvelopeExtras",
    "Invalid",
    "JsonBody",
    "NotFound",
    "Page",
    "Store",
    "StoreError",
    "envelope",
    "find_by_arxiv",
    "newest_paper_date",
    "paper_detail",
    "paper_summaries",
    "paper_summary",
    "resolve_paper",
    "strip_arxiv_version",
]

logger = logging.getLogger(__name__)


JsonBody: TypeAlias = dict[str, object]
"""A response body for the JSON encoder: ids, sqlite values, lists and nested bodies."""


class EnvelopeExtras(TypedDict, total=False):
    """What some list envelopes add to the four fields of :class:`Envelope`."""

    applied_filters: JsonBody
    mode: str
    matched_entities: list[JsonBody]
    strong_count: int
    count_capped: bool
    max_age_days: int
    reference_date: str
    parameter_coverage_known: int
    parameter_coverage_total: int


class Envelope(EnvelopeExtras):
    """The list envelope of ``docs/cli-contract.md`` §4.2 (:func:`envelope`)."""

    count: int
    next_page: int | None
    previous_page: int | None
    results: list[JsonBody]


class StoreError(Exception):
    """A client-visible failure: ``status`` (HTTP) and ``detail`` (str or dict)."""

    status = 400

    def __init__(self, detail: object) -> None:
        super().__init__(detail if isinstance(detail, str) else json.dumps(detail))
        self.detail = detail


class NotFound(StoreError):
    """An unknown entity (404)."""

    status = 404


class Conflict(StoreError):
    """Ambiguous input or a changed content version (409)."""

    status = 409


class Invalid(StoreError):
    """A well-formed request whose values are not acceptable (422)."""

    status = 422


class Store:
    """Opens the catalog SQLite file read-only, one connection per thread.

    Raises:
        FileNotFoundError: ``path`` does not exist (checked at construction).
    """

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"catalog database not found: {path}")
        self.path = path
        self._uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        self._local = threading.local()
        self._warn_if_old()

    def _warn_if_old(self) -> None:
        """Log once when the file predates the current schema (served, but without the
        indexes of later migrations; any ``pwc-catalog import`` migrates it)."""
        try:
            conn = sqlite3.connect(self._uri, uri=True)
            try:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            finally:
                conn.close()
        except sqlite3.Error:
            return  # unreadable files fail on the first query with a clear error
        if version < SCHEMA_VERSION:
            logger.warning("catalog database schema v%d is older than v%d: lookups may be slow "
                           "until the next pwc-catalog import migrates it", version, SCHEMA_VERSION)

    def conn(self) -> sqlite3.Connection:
        """Return this thread's read-only connection (rows are ``sqlite3.Row``)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._uri, uri=True, check_same_thread=True)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA query_only=ON")
            self._local.conn = conn
        return conn


@dataclass(frozen=True)
class Page:
    """1-based page number and page size (both already validated)."""

    page: int
    size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size


def envelope(results: list[JsonBody], count: int, page: Page | None = None,
             **extra: Unpack[EnvelopeExtras]) -> Envelope:
    """Build the list envelope of ``docs/cli-contract.md`` §4.2.

    ``next_page`` is ``page + 1`` while rows remain beyond this page, else
    None; ``previous_page`` is ``page - 1`` or None.
    """
    next_page = page.page + 1 if page is not None and page.page * page.size < count else None
    previous_page = page.page - 1 if page is not None and page.page > 1 else None
    return {"count": count, "next_page": next_page, "previous_page": previous_page, "results": results,
            **extra}


def sid(value: object) -> str | None:
    """Render a numeric id as the API's string id (None stays None)."""
    return None if value is None else str(value)


def loads(text: str | None, default: object) -> object:
    """Parse a JSON column, falling back to ``default`` for NULL or bad text."""
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


# --- papers -------------------------------------------------------------------

PAPER_COLUMNS = (
    "p.id, p.arxiv_id, p.slug, p.title, p.abstract, p.authors, p.published, p.conference_id, "
    "p.citation_count, p.url_abs, p.url_pdf, p.source_url, p.has_official_implementation, "
    "p.code_repository_count, p.popularity, p.is_latest, p.hf_models, p.hf_datasets, "
    "p.hf_spaces, p.project_pages, "
    # The venue a citation and a reference check need, on every row (one primary-key look-up).
    "(SELECT c.name FROM conferences c WHERE c.id = p.conference_id) AS conference_name"
)

_ARXIV_MODERN = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$", re.IGNORECASE)
_ARXIV_LEGACY = re.compile(r"^([a-z][a-z0-9.\-]*/\d{7})(v\d+)?$", re.IGNORECASE)


def strip_arxiv_version(ref: str) -> str | None:
    """Return the arXiv id without ``vN`` if ``ref`` is one (modern or legacy), else None."""
    for pattern in (_ARXIV_MODERN, _ARXIV_LEGACY):
        match = pattern.match(ref)
        if match:
            return match.group(1)
    return None


def route_identifier(row: sqlite3.Row) -> str:
    """The reference the public site uses for a paper: arXiv id, else catalog id."""
    return row["arxiv_id"] or str(row["id"])


def paper_summary(row: sqlite3.Row) -> JsonBody:
    """A paper summary (search/list/related rows), §4.3 field names."""
    return {
        "id": str(row["id"]),
        "arxiv_id": row["arxiv_id"],
        "route_identifier": route_identifier(row),
        "slug": row["slug"],
        "title": row["title"],
        "authors": loads(row["authors"], []),
        "published": row["published"],
        "citation_count": row["citation_count"],
        "url_abs": row["url_abs"],
        "url_pdf": row["url_pdf"],
        "source_url": row["source_url"],
        "has_official_implementation": bool(row["has_official_implementation"]),
        "code_repository_count": row["code_repository_count"],
        "source": "arxiv" if row["arxiv_id"] else "external",
        "conference_name": row["conference_name"],
    }


def paper_summaries(conn: sqlite3.Connection, ids: list[int], *,
                    with_methods: bool = False) -> list[JsonBody]:
    """Summaries for ``ids`` in the given order (missing ids are skipped)."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = conn.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id IN ({marks})", ids)
    by_id = {row["id"]: paper_summary(row) for row in rows}
    if with_methods and by_id:
        methods: dict[int, list[JsonBody]] = {paper_id: [] for paper_id in by_id}
        for paper_id, mid, slug, name in conn.execute(
                f"SELECT pm.paper_id, m.id, m.slug, m.name FROM paper_methods pm "
                f"JOIN methods m ON m.id = pm.method_id WHERE pm.paper_id IN ({marks}) "
                f"ORDER BY m.name", ids):
            methods[paper_id].append({"id": str(mid), "slug": slug, "name": name})
        for paper_id, item in by_id.items():
            item["methods"] = methods[paper_id]
    return [by_id[i] for i in ids if i in by_id]


def find_by_arxiv(conn: sqlite3.Connection, select: str, arxiv: str, where: str = "",
                  args: Sequence[object] = ()) -> sqlite3.Row | None:
    """First row of ``{select} p.arxiv_id = ?{where}``: an exact match, else a case-insensitive one.

    ``select`` ends with ``WHERE`` over ``papers p``; ``where`` adds `` AND ...``
    conditions with ``args``. The exact match uses the UNIQUE index and wins
    over case variants; the fallback uses ``papers_arxiv_nocase`` (migration 2).
    """
    for compare in ("p.arxiv_id = ?", "p.arxiv_id = ? COLLATE NOCASE"):
        row: sqlite3.Row | None = conn.execute(f"{select} {compare}{where}", [arxiv, *args]).fetchone()
        if row is not None:
            return row
    return None


def resolve_paper(conn: sqlite3.Connection, ref: str) -> sqlite3.Row:
    """Find a paper by numeric id, arXiv id (with or without ``vN``; legacy too) or slug.

    Raises:
        NotFound: nothing matches (``Paper not found: <ref>``).
        Invalid: the reference is empty or longer than 500 characters.
    """
    ref = ref.strip()
    if not ref or len(ref) > 500:
        raise Invalid("paper reference must be 1-500 characters")
    row = None
    if ref.isdigit() and len(ref) <= 18:
        row = conn.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id = ?", (int(ref),)).fetchone()
    if row is None:
        arxiv = strip_arxiv_version(ref)
        if arxiv is not None:
            row = find_by_arxiv(conn, f"SELECT {PAPER_COLUMNS} FROM papers p WHERE", arxiv)
    if row is None:
        row = conn.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.slug = ? ORDER BY p.is_latest DESC, p.id LIMIT 1",
                           (ref,)).fetchone()
    if row is None:
        raise NotFound(f"Paper not found: {ref}")
    return row


def _lineage_items(conn: sqlite3.Connection, sql: str, paper_id: int) -> list[JsonBody]:
    rows = conn.execute(sql, (paper_id,)).fetchall()
    return [{"id": str(r["id"]), "title": r["title"], "route_identifier": route_identifier(r),
             "reference": route_identifier(r), "published": r["published"]} for r in rows]


_PREDECESSORS = ("SELECT p.id, p.arxiv_id, p.title, p.published FROM lineage l JOIN papers p "
                 "ON p.id = l.predecessor_id WHERE l.successor_id = ? ORDER BY p.published, p.id")
_SUCCESSORS = ("SELECT p.id, p.arxiv_id, p.title, p.published FROM lineage l JOIN papers p "
               "ON p.id = l.successor_id WHERE l.predecessor_id = ? ORDER BY p.published, p.id")


def paper_detail(conn: sqlite3.Connection, ref: str, *, include_resources: bool) -> JsonBody:
    """``papers/<ref>``: the paper object of §4.3 #2 (resources only when asked)."""
    row = resolve_paper(conn, ref)
    pid = row["id"]
    body = paper_summary(row)
    body["abstract"] = row["abstract"]
    body["organizations"] = [
        {"id": str(r[0]), "name": r[1], "slug": r[2]} for r in conn.execute(
            "SELECT o.id, o.name, o.slug FROM paper_organizations po JOIN organizations o "
            "ON o.id = po.organization_id WHERE po.paper_id = ? ORDER BY o.name", (pid,))]
    conference = None
    if row["conference_id"] is not None:
        conference = conn.execute("SELECT slug, name FROM conferences WHERE id = ?",
                                  (row["conference_id"],)).fetchone()
    body["conference"] = conference["slug"] if conference else None
    body["conference_name"] = conference["name"] if conference else None
    body["tasks"] = [{"id": str(r[0]), "name": r[1], "slug": r[2]} for r in conn.execute(
        "SELECT t.id, t.name, t.slug FROM paper_tasks pt JOIN tasks t ON t.id = pt.task_id "
        "WHERE pt.paper_id = ? ORDER BY t.name", (pid,))]
    body["methods"] = [{"id": str(r[0]), "name": r[1], "slug": r[2]} for r in conn.execute(
        "SELECT m.id, m.name, m.slug FROM paper_methods pm JOIN methods m ON m.id = pm.method_id "
        "WHERE pm.paper_id = ? ORDER BY m.name", (pid,))]
    body["predecessor_papers"] = _lineage_items(conn, _PREDECESSORS, pid)
    body["successor_papers"] = _lineage_items(conn, _SUCCESSORS, pid)
    body["is_latest"] = bool(row["is_latest"])
    body["has_markdown"] = conn.execute(
        "SELECT 1 FROM paper_markdown WHERE paper_id = ?", (pid,)).fetchone() is not None
    if include_resources:
        body["repositories"] = [
            {"url": r[0], "is_official": bool(r[1]), "framework": r[2], "stars": r[3]}
            for r in conn.execute("SELECT url, is_official, framework, stars FROM repositories "
                                  "WHERE paper_id = ? ORDER BY is_official DESC, stars DESC, url", (pid,))]
        body["project_pages"] = loads(row["project_pages"], [])
        body["hf_models"] = loads(row["hf_models"], [])
        body["hf_datasets"] = loads(row["hf_datasets"], [])
        body["hf_spaces"] = loads(row["hf_spaces"], [])
    return body


def paper_lineage(conn: sqlite3.Connection, ref: str) -> JsonBody:
    """``research/papers/<ref>/lineage``: ``{paper, predecessors, successors}`` (§4.3 #9)."""
    row = resolve_paper(conn, ref)
    strip = ("route_identifier", "published")

    def item(entry: JsonBody) -> JsonBody:
        return {k: v for k, v in entry.items() if k not in strip} | {"published": entry["published"]}

    return {
        "paper": {"id": str(row["id"]), "reference": route_identifier(row), "title": row["title"],
                  "published": row["published"]},
        "predecessors": [item(e) for e in _lineage_items(conn, _PREDECESSORS, row["id"])],
        "successors": [item(e) for e in _lineage_items(conn, _SUCCESSORS, row["id"])],
    }


def newest_paper_date(conn: sqlite3.Connection) -> str | None:
    """The newest ``published`` date in the catalog: the "now" of trend scores."""
    value: str | None = conn.execute("SELECT max(published) FROM papers").fetchone()[0]
    return value


def paper_markdown(conn: sqlite3.Connection, ref: str) -> tuple[bytes, str]:
    """Return ``(utf8_bytes, content_version)`` of a paper's Markdown.

    Raises:
        NotFound: unknown paper, or the paper has no stored Markdown.
    """
    row = resolve_paper(conn, ref)
    md = conn.execute("SELECT markdown, content_version FROM paper_markdown WHERE paper_id = ?",
                      (row["id"],)).fetchone()
    if md is None:
        raise NotFound(f"No stored Markdown for paper: {ref.strip()}")
    return md["markdown"].encode("utf-8"), md["content_version"]
