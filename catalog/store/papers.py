"""Paper list queries: ``papers/``, ``papers/recent``, ``papers/trending``, ``.../related``, task papers.

Trend score (deterministic, relative to the newest paper date in the
database, never the wall clock, so results are stable)::

    age_days    = newest_published - published      (unknown date: 3650)
    velocity    = (popularity + citation_count) / (age_days + 30)
    trend_score = velocity

``order_by=trending`` sorts by ``trend_score`` (ties: citations, id). The
importer stores the score as ``papers.trend`` (schema v3), so ``papers/`` and
task paper pages read it from the covering ``papers_list_*`` indexes, deep
pages included; an older database falls back to the expression.

``papers/?search=`` runs on ``papers_fts``: the words and quoted phrases of
:func:`catalog.store.fts.keyword_parts` must all occur in the title or abstract
(whole words, case- and accent-insensitive), as in keyword search.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping

from catalog.db.schema import normalize_title
from catalog.store.core import (
    PAPER_COLUMNS,
    Conflict,
    Envelope,
    Invalid,
    JsonBody,
    NotFound,
    Page,
    envelope,
    newest_paper_date,
    paper_summaries,
    paper_summary,
    resolve_paper,
)
from catalog.store.filters import PaperFilters
from catalog.store.fts import keyword_parts

__all__ = ["fts_filter", "has_stored_trend", "list_papers", "order_clause", "recent_papers", "related_papers", "resolve_authors", "task_papers",
           "trending_papers"]

_AGE = "(julianday(:newest) - julianday(coalesce(p.published, date(:newest, '-3650 days'))))"
TREND_SQL = f"((p.popularity + p.citation_count) / ({_AGE} + 30.0))"

_ORDER = {
    "trending": f"{TREND_SQL} {{dir}}, p.citation_count {{dir}}, p.id {{dir}}",
    "date_published": "p.published {dir} NULLS LAST, p.id {dir}",
    "citation_count": "p.citation_count {dir}, p.id {dir}",
}


_STORED_TREND = "p.trend {dir}, p.citation_count {dir}, p.id {dir}"


def order_clause(order_by: str, order_dir: str, *, stored_trend: bool = False) -> str:
    """SQL ORDER BY body for the paper orderings of ``docs/cli-contract.md`` §2.5.

    ``stored_trend`` sorts ``trending`` by the stored ``papers.trend`` (equal
    values, indexed) instead of computing the expression."""
    direction = "DESC" if order_dir == "desc" else "ASC"
    if order_by == "trending" and stored_trend:
        return _STORED_TREND.format(dir=direction)
    return _ORDER[order_by].format(dir=direction)


def has_stored_trend(conn: sqlite3.Connection) -> bool:
    """True when the database has the importer-maintained ``papers.trend`` (schema v3+)."""
    return bool(int(conn.execute("PRAGMA user_version").fetchone()[0]) >= 3)


def fts_filter(text: str) -> str | None:
    """FTS5 query for ``papers/?search=``: all keyword parts in title or abstract; None
    when the text has no word (nothing can match)."""
    parts = keyword_parts(text)
    if not parts:
        return None
    return "{title abstract} : (" + " AND ".join(parts) + ")"


def _resolve_named(conn: sqlite3.Connection, table: str, fields: tuple[str, ...], value: str,
                   label: str) -> int:
    """Exact, case-insensitive match on ``fields`` (priority order) or the numeric id."""
    needle = value.strip()
    if needle.isdigit() and len(needle) <= 18:
        row = conn.execute(f"SELECT id FROM {table} WHERE id = ?", (int(needle),)).fetchone()
        if row:
            return int(row[0])
    for field in fields:
        row = conn.execute(f"SELECT id FROM {table} WHERE {field} = ? COLLATE NOCASE ORDER BY id LIMIT 1",
                           (needle,)).fetchone()
        if row:
            return int(row[0])
    raise NotFound(f"{label} not found: {value}")


def resolve_task(conn: sqlite3.Connection, value: str) -> int:
    """Task id for an exact name, slug or id (404 ``Task not found``)."""
    return _resolve_named(conn, "tasks", ("name", "slug"), value, "Task")


def resolve_authors(conn: sqlite3.Connection, refs: list[str]) -> list[JsonBody]:
    """Resolve ``--author`` references (§3.3) to ``[{id, name, hf_username}]``.

    All digits → author id; ``@user`` → HF username; else normalized name.

    Raises:
        Invalid: an empty reference, or more than 10.
        NotFound: a reference matches no author.
        Conflict: a name matches several authors; detail is the
            ``ambiguous_author`` object with ``candidates``.
    """
    if len(refs) > 10:
        raise Invalid("at most 10 author filters are allowed")
    out: list[JsonBody] = []
    for ref in refs:
        text = ref.strip()
        if not text or len(text) > 200:
            raise Invalid("author reference must be 1-200 characters")
        if text.isdigit():
            rows = conn.execute("SELECT id, name, hf_username FROM authors WHERE id = ?",
                                (int(text[-18:]),)).fetchall()
        elif text.startswith("@"):
            rows = conn.execute("SELECT id, name, hf_username FROM authors WHERE hf_username = ? "
                                "COLLATE NOCASE ORDER BY id", (text[1:],)).fetchall()
        else:
            rows = conn.execute("SELECT id, name, hf_username FROM authors WHERE normalized_name = ? "
                                "ORDER BY id", (normalize_title(text),)).fetchall()
        candidates: list[JsonBody] = [{"id": str(r[0]), "name": r[1], "hf_username": r[2]} for r in rows]
        if not candidates:
            raise NotFound(f"Author not found: {text}")
        if len(candidates) > 1:
            raise Conflict({"code": "ambiguous_author", "reference": text, "candidates": candidates})
        out.append(candidates[0])
    return out


_PUBLISHED = "@published@"  # placeholder: the date column term differs between count and page
_LINKED = ("task", "method", "dataset", "framework", "organization", "search")
# Ordered covering index of each ordering (schema v3) and how much cheaper walking one
# index entry is than looking up and sorting one matching paper.
_ORDER_INDEX = {"trending": "papers_list_trend", "date_published": "papers_list_date",
                "citation_count": "papers_list_citations"}
_WALK_FACTOR = 4


def _flip(order: str) -> str:
    """The reverse of an ORDER BY body of :func:`order_clause` (directions and NULLS placement)."""
    swap = {"ASC": "DESC", "DESC": "ASC", "NULLS LAST": "NULLS FIRST", "NULLS FIRST": "NULLS LAST"}
    return re.sub(r"\b(?:ASC|DESC|NULLS LAST|NULLS FIRST)\b", lambda m: swap[m.group(0)], order)


def _walk_pays(conn: sqlite3.Connection, count: int, position: int) -> bool:
    """Whether walking an ordered list index reaches the ``position``-th of ``count`` matches
    sooner than sorting them all.

    Sorting costs ~ the matches; walking ~ position / share of the catalog that matches
    (e.g. page 1 of a task with 78,000 of 576,000 papers: ~150 index entries)."""
    total = conn.execute("SELECT max(id) FROM papers").fetchone()[0] or 0
    return bool(count) and position * total < _WALK_FACTOR * count * count


def _page_ids(conn: sqlite3.Connection, where: str, args: Mapping[str, object], count: int, page: Page, *,
              order_by: str, order_dir: str, stored_trend: bool, walk: bool, latest_only: bool) -> list[int]:
    """Ids of ``page`` of the ``count`` papers matching ``where`` (over ``papers p``), in order.

    ``count`` must be the exact number of matches. A page in the far half is read in the
    reverse order from the end and flipped (the last page costs what page 1 costs). With
    ``walk`` (papers reached from a link table or the FTS index) and a stored trend, the
    ordered ``papers_list_*`` index is walked when that pays (:func:`_walk_pays`): for all
    versions (``latest_only`` false) the ``is_latest = 1`` and ``= 0`` ranges are merged.
    Any plan gives the same ids: the orderings are total (``id`` breaks ties).
    """
    start, end = page.offset, page.offset + page.size
    order = order_clause(order_by, order_dir, stored_trend=stored_trend)
    reverse = 0 < start < count < start + min(end, count)  # a page nearer the end than the start
    if reverse:
        start, end, order = count - min(end, count), count - start, _flip(order)
    query_args = {**args, "limit": end - start, "offset": start}
    # (Dates ascending with NULLs last walk the index too: SQLite reads the non-NULL range,
    # then the NULLs.) An old database has no papers_list_* indexes and no stored trend.
    if not (walk and stored_trend and _walk_pays(conn, count, end)):
        sql = f"SELECT p.id FROM papers p WHERE {where} ORDER BY {order} LIMIT :limit OFFSET :offset"
    elif latest_only:
        sql = (f"SELECT p.id FROM papers p INDEXED BY {_ORDER_INDEX[order_by]} WHERE {where} "
               f"ORDER BY {order} LIMIT :limit OFFSET :offset")
    else:
        # is_latest is 0 or 1 (NOT NULL; the importer stores int(bool)): two ordered index
        # ranges, merged by the compound ORDER BY. Its result columns are the order's keys (with
        # a stored trend each a plain column, id last), each sorted by its position.
        parts = [part.strip().split(None, 1) for part in order.split(",")]
        keys = ", ".join(column for column, _ in parts)
        merged = ", ".join(f"{index} {term}" for index, (_, term) in enumerate(parts, 1))
        arm = f"SELECT {keys} FROM papers p INDEXED BY {_ORDER_INDEX[order_by]} WHERE p.is_latest = {{}} AND {where}"
        sql = f"{arm.format(1)} UNION ALL {arm.format(0)} ORDER BY {merged} LIMIT :limit OFFSET :offset"
    ids = [int(r[-1]) for r in conn.execute(sql, query_args)]
    return ids[::-1] if reverse else ids


def _text(filters: Mapping[str, str | bool], key: str) -> str | None:
    value = filters.get(key)
    return value if isinstance(value, str) else None


def list_papers(conn: sqlite3.Connection, page: Page, filters: Mapping[str, str | bool], *,
                order_by: str, order_dir: str, latest_only: bool,
                authors: list[str]) -> Envelope:
    """``papers/`` (§2.5, §4.3 #5): filtered, ordered page with ``applied_filters``.

    ``filters`` holds the raw strings of task, method, dataset, conference, framework,
    organization, search, start_date, end_date, and the booleans has_official_implementation
    and has_code (absent = not requested). Each one is resolved (404 on an unknown
    entity) and echoed verbatim in ``applied_filters``; authors are echoed as
    ``[{id, name, hf_username}]``. ``dataset`` keeps the papers with a result on that
    benchmark (name, full name, slug or id); ``has_code`` the papers with (without) any
    code repository, official or not.
    """
    where = ["1=1"]
    args: dict[str, object] = {"newest": newest_paper_date(conn) or "1970-01-01"}
    applied: JsonBody = {}
    joins: dict[str, tuple[str, str, Callable[[str], int]]] = {
        "task": ("paper_tasks", "task_id", lambda v: resolve_task(conn, v)),
        "method": ("paper_methods", "method_id",
                   lambda v: _resolve_named(conn, "methods", ("name", "full_name", "slug"), v, "Method")),
        "dataset": ("evaluations", "dataset_id",
                    lambda v: _resolve_named(conn, "datasets", ("name", "full_name", "slug"), v, "Dataset")),
        "framework": ("paper_frameworks", "framework_id",
                      lambda v: _resolve_named(conn, "frameworks", ("name", "slug"), v, "Framework")),
        "organization": ("paper_organizations", "organization_id",
                         lambda v: _resolve_named(conn, "organizations", ("name", "slug"), v, "Organization")),
    }
    for key, (table, column, resolver) in joins.items():
        if (value := _text(filters, key)) is not None:
            ident = resolver(value)
            args[key] = ident
            where.append(f"p.id IN (SELECT paper_id FROM {table} WHERE {column} = :{key})")
            applied[key] = value
    if (conference := _text(filters, "conference")) is not None:
        args["conference"] = _resolve_named(conn, "conferences", ("name", "slug"), conference, "Conference")
        where.append("p.conference_id = :conference")
        applied["conference"] = conference
    if (search := _text(filters, "search")) is not None:
        match = fts_filter(search)
        args["search"] = match
        where.append("0" if match is None else
                     "p.id IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH :search)")
        applied["search"] = search
    official = filters.get("has_official_implementation")
    shared = PaperFilters(_text(filters, "start_date"), _text(filters, "end_date"),
                          official if isinstance(official, bool) else None)
    terms, values = shared.named_sql(_PUBLISHED)
    where.extend(terms)
    args.update(values)
    applied.update(shared.applied())
    if filters.get("has_code") is not None:
        where.append(f"p.code_repository_count {'>' if filters['has_code'] else '='} 0")
        applied["has_code"] = "true" if filters["has_code"] else "false"
    if authors:
        resolved = resolve_authors(conn, authors)
        for index, author in enumerate(resolved):
            args[f"author{index}"] = int(str(author["id"]))
            where.append(f"p.id IN (SELECT paper_id FROM paper_authors WHERE author_id = :author{index})")
        applied["authors"] = resolved
    if latest_only:
        where.append("p.is_latest = 1")
    applied["latest_only"] = "true" if latest_only else "false"
    sql_where = " AND ".join(where)
    # A date range drives the count (an index range), but a page only when ordering by
    # date; otherwise ("+" keeps the term off the index) the ordered index is walked: a
    # wide range would sort most of the catalog for every page.
    count_where = sql_where.replace(_PUBLISHED, "p.published")
    page_where = sql_where.replace(_PUBLISHED, "p.published" if order_by == "date_published" else "+p.published")
    stored = has_stored_trend(conn)
    count = conn.execute(f"SELECT count(*) FROM papers p WHERE {count_where}", args).fetchone()[0]
    # Papers reached from a link table or the FTS index may be paged by walking the ordered index.
    walk = latest_only and (any(key in filters for key in _LINKED) or bool(authors))
    ids = _page_ids(conn, page_where, args, count, page, order_by=order_by, order_dir=order_dir,
                    stored_trend=stored, walk=walk, latest_only=latest_only)
    return envelope(paper_summaries(conn, ids), count, page, applied_filters=applied)


def recent_papers(conn: sqlite3.Connection, limit: int) -> Envelope:
    """``papers/recent``: the newest latest-version papers, newest first."""
    rows = conn.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.is_latest = 1 AND p.published IS NOT NULL "
                        "ORDER BY p.published DESC, p.id DESC LIMIT ?", (limit,)).fetchall()
    results = [paper_summary(r) for r in rows]
    return envelope(results, len(results))


def trending_papers(conn: sqlite3.Connection, limit: int, max_age_days: int,
                    min_velocity: float | None) -> Envelope:
    """``papers/trending``: papers at most ``max_age_days`` older than the newest, by trend score.

    Each row adds ``trend_score`` and ``velocity`` (equal; see module doc).
    """
    newest = newest_paper_date(conn)
    if newest is None:
        return envelope([], 0)
    args = {"newest": newest, "age": max_age_days, "min_velocity": min_velocity or 0.0, "limit": limit}
    # Ids first (from the papers_trend covering index), full rows only for the page.
    rows = conn.execute(
        f"SELECT p.id, {TREND_SQL} AS trend FROM papers p WHERE p.is_latest = 1 "
        f"AND p.published IS NOT NULL AND p.published >= date(:newest, '-' || :age || ' days') "
        f"AND {TREND_SQL} >= :min_velocity ORDER BY trend DESC, p.citation_count DESC, p.id DESC "
        f"LIMIT :limit", args).fetchall()
    trend = {row[0]: row[1] for row in rows}
    results = paper_summaries(conn, list(trend))
    for item in results:
        item["trend_score"] = round(trend[int(str(item["id"]))], 6)
        item["velocity"] = round(trend[int(str(item["id"]))], 6)
    return envelope(results, len(results), max_age_days=max_age_days, reference_date=newest)


def related_papers(conn: sqlite3.Connection, ref: str, limit: int) -> Envelope:
    """``papers/<ref>/related``: papers sharing lineage, tasks or methods.

    Score = 3 per lineage link + 1 per shared task + 1 per shared method;
    ties by citations then id. The paper itself is excluded.
    """
    pid = resolve_paper(conn, ref)["id"]
    # Scores are summed without touching papers; only candidates that can still make the
    # page (score >= the limit-th best score) are joined for the citation tie-break. A
    # paper in popular tasks has tens of thousands of neighbours: joining every one
    # cost ~50 ms at 100,000 papers.
    rows = conn.execute(
        """
        WITH scored AS (
            SELECT other, sum(weight) AS score FROM (
                SELECT successor_id AS other, 3 AS weight FROM lineage WHERE predecessor_id = :pid
                UNION ALL SELECT predecessor_id, 3 FROM lineage WHERE successor_id = :pid
                UNION ALL SELECT b.paper_id, 1 FROM paper_tasks a JOIN paper_tasks b
                    ON a.task_id = b.task_id WHERE a.paper_id = :pid
                UNION ALL SELECT b.paper_id, 1 FROM paper_methods a JOIN paper_methods b
                    ON a.method_id = b.method_id WHERE a.paper_id = :pid
            ) WHERE other != :pid GROUP BY other
        ), cutoff AS (
            SELECT score FROM scored ORDER BY score DESC LIMIT 1 OFFSET :limit - 1
        )
        SELECT s.other, s.score FROM scored s JOIN papers p ON p.id = s.other
        WHERE s.score >= coalesce((SELECT score FROM cutoff), 0)
        ORDER BY s.score DESC, p.citation_count DESC, s.other LIMIT :limit
        """, {"pid": pid, "limit": limit}).fetchall()
    results = paper_summaries(conn, [r[0] for r in rows])
    return envelope(results, len(results))


def task_papers(conn: sqlite3.Connection, task: str, page: Page, *, order_by: str,
                order_dir: str) -> Envelope:
    """``tasks/<id>/papers``: a page of the task's papers (all versions), each with ``methods``.

    The count reads the task's ``paper_tasks`` index range alone: it equals the number of
    papers linked (the primary key makes the pairs distinct, and every pair names a paper:
    the importer links only papers it has written and never deletes one; a paper deleted
    otherwise takes its links with it: ``ON DELETE CASCADE`` with the foreign keys
    :func:`catalog.db.schema.create_db` turns on). The page is planned as
    ``papers/?task=`` pages (:func:`_page_ids`).
    """
    task_id = resolve_task(conn, task)
    args = {"task": task_id, "newest": newest_paper_date(conn) or "1970-01-01"}
    where = "p.id IN (SELECT paper_id FROM paper_tasks WHERE task_id = :task)"
    count = conn.execute("SELECT count(*) FROM paper_tasks WHERE task_id = :task", args).fetchone()[0]
    ids = _page_ids(conn, where, args, count, page, order_by=order_by, order_dir=order_dir,
                    stored_trend=has_stored_trend(conn), walk=True, latest_only=False)
    return envelope(paper_summaries(conn, ids, with_methods=True), count, page)
