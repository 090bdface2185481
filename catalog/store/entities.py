"""Entity queries: conferences, organizations, frameworks, datasets (benchmarks) and evaluations."""

from __future__ import annotations

import sqlite3

from catalog.store.core import JsonBody, NotFound, Page, envelope, loads, sid
from catalog.store.papers import resolve_task
from catalog.store.taxonomy import _descendants, ordering_sql

__all__ = ["conference_detail", "conference_list", "dataset_evaluations", "dataset_list",
           "evaluation_list", "framework_catalog", "organization_detail", "organization_list"]

DATASET_ORDERINGS = {"name": "d.name COLLATE NOCASE", "full_name": "d.full_name COLLATE NOCASE",
                     "created_at": "d.created_at", "paper_count": "paper_count",
                     "evaluation_count": "evaluation_count", "id": "d.id"}
EVALUATION_ORDERINGS = {"best_rank": "e.best_rank IS NULL, e.best_rank",
                        "benchmark_popularity": "benchmark_popularity",
                        "updated_at": "e.updated_at", "model_name": "e.model_name COLLATE NOCASE",
                        "id": "e.id"}


def _by_id_or_slug(conn: sqlite3.Connection, table: str, columns: str, ref: str, label: str) -> sqlite3.Row:
    text = ref.strip()
    row = None
    if text.isdigit() and len(text) <= 18:
        row = conn.execute(f"SELECT {columns} FROM {table} x WHERE x.id = ?", (int(text),)).fetchone()
    if row is None:
        row = conn.execute(f"SELECT {columns} FROM {table} x WHERE x.slug = ? COLLATE NOCASE", (text,)).fetchone()
    if row is None:
        raise NotFound(f"{label} not found: {text}")
    return row


# --- conferences ----------------------------------------------------------------

_CONF = ("x.id, x.slug, x.name, x.year, x.tier, x.start_date, x.end_date, x.venue, x.location, "
         "x.description, x.url, x.hf_url, (SELECT count(*) FROM papers p WHERE p.conference_id = x.id) AS paper_count")


def conference_list(conn: sqlite3.Connection) -> JsonBody:
    """``conferences/``: every conference, newest year first, as ``{id, slug, name, year, paper_count, location}``."""
    rows = conn.execute(f"SELECT {_CONF} FROM conferences x ORDER BY x.year DESC, x.name COLLATE NOCASE").fetchall()
    results = [{"id": str(r["id"]), "slug": r["slug"], "name": r["name"], "year": r["year"],
                "paper_count": r["paper_count"], "location": r["location"]} for r in rows]
    return envelope(results, len(results))


def conference_detail(conn: sqlite3.Connection, ref: str) -> JsonBody:
    """``conferences/<slug-or-id>`` (§4.3 #21)."""
    r = _by_id_or_slug(conn, "conferences", _CONF, ref, "Conference")
    return {"id": str(r["id"]), "slug": r["slug"], "name": r["name"], "year": r["year"],
            "paper_count": r["paper_count"], "tier": r["tier"], "start_date": r["start_date"],
            "end_date": r["end_date"], "venue": r["venue"], "location": r["location"],
            "description": r["description"], "url": r["url"], "hf_url": r["hf_url"]}


# --- organizations --------------------------------------------------------------

_ORG = ("x.id, x.slug, x.name, x.description, x.is_featured, x.trending_rank, x.first_paper_year, "
        "x.latest_paper_year, x.website_url, x.github_url, x.hf_url, "
        "(SELECT count(*) FROM paper_organizations po WHERE po.organization_id = x.id) AS paper_count")


def _org_summary(r: sqlite3.Row) -> JsonBody:
    return {"id": str(r["id"]), "slug": r["slug"], "name": r["name"], "paper_count": r["paper_count"],
            "is_featured": bool(r["is_featured"]), "trending_rank": r["trending_rank"]}


def organization_list(conn: sqlite3.Connection, featured_only: bool) -> JsonBody:
    """``organizations/``: by trending rank (unranked last), then name."""
    where = "WHERE x.is_featured = 1" if featured_only else ""
    rows = conn.execute(f"SELECT {_ORG} FROM organizations x {where} ORDER BY x.trending_rank IS NULL, "
                        "x.trending_rank, x.name COLLATE NOCASE").fetchall()
    results = [_org_summary(r) for r in rows]
    return envelope(results, len(results), applied_filters={"featured_only": "true" if featured_only else "false"})


def organization_detail(conn: sqlite3.Connection, ref: str) -> JsonBody:
    """``organizations/<slug-or-id>`` (§4.3 #23)."""
    r = _by_id_or_slug(conn, "organizations", _ORG, ref, "Organization")
    return _org_summary(r) | {k: r[k] for k in ("description", "first_paper_year", "latest_paper_year",
                                                "website_url", "github_url", "hf_url")}


# --- frameworks -----------------------------------------------------------------

def framework_catalog(conn: sqlite3.Connection) -> JsonBody:
    """``frameworks/``: ``{"domains": [{slug, name, categories: [{slug, name, frameworks: [...]}]}]}``."""
    rows = conn.execute(
        "SELECT f.*, (SELECT count(*) FROM paper_frameworks pf WHERE pf.framework_id = f.id) AS paper_count "
        "FROM frameworks f ORDER BY f.domain_name COLLATE NOCASE, f.category_name COLLATE NOCASE, "
        "f.name COLLATE NOCASE").fetchall()
    domains: dict[str, JsonBody] = {}
    categories: dict[str, dict[str, JsonBody]] = {}
    frameworks: dict[tuple[str, str], list[JsonBody]] = {}
    for r in rows:
        domain_slug, category_slug = r["domain_slug"], r["category_slug"]
        domains.setdefault(domain_slug, {"slug": domain_slug, "name": r["domain_name"]})
        in_domain = categories.setdefault(domain_slug, {})
        if category_slug not in in_domain:
            listed: list[JsonBody] = frameworks.setdefault((domain_slug, category_slug), [])
            in_domain[category_slug] = {"slug": category_slug, "name": r["category_name"],
                                        "frameworks": listed}
        frameworks[(domain_slug, category_slug)].append({
            "id": str(r["id"]), "slug": r["slug"], "name": r["name"], "description": r["description"],
            "platforms": loads(r["platforms"], []), "paper_count": r["paper_count"],
            "organization_name": r["organization_name"], "when_to_use": r["when_to_use"],
            "github_url": r["github_url"], "docs_url": r["docs_url"],
            "introducing_paper_arxiv_id": r["introducing_paper_arxiv_id"]})
    for domain_slug, domain in domains.items():
        domain["categories"] = list(categories[domain_slug].values())
    return {"domains": list(domains.values())}


# --- datasets ------------------------------------------------------------------

_DATASET = ("d.id, d.slug, d.name, d.full_name, d.description, d.hf_url, d.featured_rank, "
            "(SELECT count(DISTINCT e.paper_id) FROM evaluations e WHERE e.dataset_id = d.id) AS paper_count, "
            "(SELECT count(*) FROM evaluations e WHERE e.dataset_id = d.id) AS evaluation_count")


def dataset_list(conn: sqlite3.Connection, page: Page, *, q: str | None, task: str | None,
                 include_descendants: bool, min_eval_count: int | None, is_open: bool | None,
                 ordering: str) -> JsonBody:
    """``datasets/``: page of ``{id, name, slug, full_name, description, hf_url, paper_count, evaluation_count}``.

    ``q``: substring of name/full name/slug, or the id. ``task``: exact task
    name/slug/id (404 if unknown), optionally with its descendants.
    ``is_open``: datasets with at least one evaluation of that openness.
    """
    where: list[str] = ["1=1"]
    args: list[str | int] = []
    if q:
        where.append("(d.name LIKE ? OR d.full_name LIKE ? OR d.slug LIKE ? OR CAST(d.id AS TEXT) = ?)")
        args += [f"%{q}%"] * 3 + [q.strip()]
    if task is not None:
        task_id = resolve_task(conn, task)
        ids = _descendants(conn, task_id) if include_descendants else [task_id]
        where.append(f"d.id IN (SELECT dataset_id FROM dataset_tasks WHERE task_id IN ({','.join('?' * len(ids))}))")
        args += ids
    if min_eval_count:
        where.append("(SELECT count(*) FROM evaluations e WHERE e.dataset_id = d.id) >= ?")
        args.append(min_eval_count)
    if is_open is not None:
        where.append("EXISTS (SELECT 1 FROM evaluations e WHERE e.dataset_id = d.id AND e.is_open = ?)")
        args.append(1 if is_open else 0)
    sql_where = " AND ".join(where)
    count = conn.execute(f"SELECT count(*) FROM datasets d WHERE {sql_where}", args).fetchone()[0]
    rows = conn.execute(f"SELECT {_DATASET} FROM datasets d WHERE {sql_where} "
                        f"ORDER BY {ordering_sql(ordering, DATASET_ORDERINGS, 'd.id')} LIMIT ? OFFSET ?",
                        [*args, page.size, page.offset]).fetchall()
    results = [{"id": str(r["id"]), "name": r["name"], "slug": r["slug"], "full_name": r["full_name"],
                "description": r["description"], "hf_url": r["hf_url"], "paper_count": r["paper_count"],
                "evaluation_count": r["evaluation_count"], "featured_rank": r["featured_rank"]} for r in rows]
    return envelope(results, count, page)


def resolve_dataset(conn: sqlite3.Connection, ref: str) -> int:
    """Dataset id for a numeric id or slug (404 ``Benchmark not found``)."""
    return _by_id_or_slug(conn, "datasets", "x.id", ref, "Benchmark")["id"]


# --- evaluations ----------------------------------------------------------------

_EVAL_PAGE = ("e.*, t.name AS task_name, t.slug AS task_slug, d.name AS dataset_name, d.slug AS dataset_slug, "
              "p.title AS p_title, p.arxiv_id AS p_arxiv, p.published AS p_published")
# Only for ordering=benchmark_popularity: the correlated count runs once per matching row.
_EVAL = (_EVAL_PAGE + ", (SELECT count(*) FROM evaluations x WHERE x.dataset_id = e.dataset_id) "
         "AS benchmark_popularity")
_EVAL_FROM = ("FROM evaluations e JOIN tasks t ON t.id = e.task_id JOIN datasets d ON d.id = e.dataset_id "
              "LEFT JOIN papers p ON p.id = e.paper_id")


def _nullable_bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _popularity(conn: sqlite3.Connection, dataset_ids: set[int]) -> dict[int, int]:
    """Rows per benchmark (``benchmark_popularity``) for the given dataset ids."""
    if not dataset_ids:
        return {}
    marks = ",".join("?" * len(dataset_ids))
    return dict(conn.execute(f"SELECT dataset_id, count(*) FROM evaluations WHERE dataset_id IN ({marks}) "
                             "GROUP BY dataset_id", list(dataset_ids)).fetchall())


def evaluation_row(r: sqlite3.Row, popularity: dict[int, int] | None = None) -> JsonBody:
    """An evaluation row with the §4.3 field names.

    ``benchmark_popularity`` comes from ``popularity[dataset_id]`` when given,
    else from the row's ``benchmark_popularity`` column.
    """
    return {
        "id": str(r["id"]), "paper_id": sid(r["paper_id"]), "task_id": str(r["task_id"]),
        "task_name": r["task_name"], "task_slug": r["task_slug"], "dataset_id": str(r["dataset_id"]),
        "dataset_name": r["dataset_name"], "dataset_slug": r["dataset_slug"],
        "model_name": r["model_name"], "harness": r["harness"], "metrics": loads(r["metrics"], {}),
        "best_metric": r["best_metric"], "best_rank": r["best_rank"], "is_open": _nullable_bool(r["is_open"]),
        "num_parameters": r["num_parameters"], "methodology": r["methodology"], "split": r["split"],
        "split_name": r["split_name"], "evaluated_on": r["evaluated_on"], "result_url": r["result_url"],
        "source_url": r["source_url"], "external_source_url": r["external_source_url"],
        "code_url": r["code_url"], "hf_model_url": r["hf_model_url"], "updated_at": r["updated_at"],
        "uses_additional_data": _nullable_bool(r["uses_additional_data"]),
        "paper_title": r["p_title"] or r["paper_title"], "paper_arxiv_id": r["p_arxiv"],
        "paper_published_date": r["p_published"] or r["paper_published_date"],
        "benchmark_popularity": (r["benchmark_popularity"] if popularity is None
                                 else popularity.get(r["dataset_id"], 0)),
    }


def evaluation_list(conn: sqlite3.Connection, page: Page, *, paper_id: int | None, dataset_id: int | None,
                    task_id: int | None, is_open: bool | None, max_parameters_exclusive: int | None,
                    ordering: str) -> JsonBody:
    """``evaluations/`` (§4.3 #3): a filtered page of evaluation rows.

    With ``max_parameters_exclusive`` only rows with a known
    ``num_parameters`` below it are returned, and the envelope adds
    ``parameter_coverage_known`` / ``parameter_coverage_total`` (rows with a
    known parameter count / all rows, before the parameter filter).
    """
    where, args = ["1=1"], []
    for column, value in (("e.paper_id", paper_id), ("e.dataset_id", dataset_id), ("e.task_id", task_id)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if is_open is not None:
        where.append("e.is_open = ?")
        args.append(1 if is_open else 0)
    extra: JsonBody = {}
    if max_parameters_exclusive is not None:
        base = " AND ".join(where)
        total, known = conn.execute(f"SELECT count(*), count(e.num_parameters) FROM evaluations e WHERE {base}",
                                    args).fetchone()
        extra = {"parameter_coverage_known": known, "parameter_coverage_total": total}
        where.append("e.num_parameters IS NOT NULL AND e.num_parameters < ?")
        args.append(max_parameters_exclusive)
    sql_where = " AND ".join(where)
    count = conn.execute(f"SELECT count(*) FROM evaluations e WHERE {sql_where}", args).fetchone()[0]
    # Counting a benchmark's rows per matching row is the costly part of a leaderboard
    # page; unless it orders the rows, it is counted once per benchmark on the page.
    by_popularity = ordering.lstrip("-") == "benchmark_popularity"
    rows = conn.execute(f"SELECT {_EVAL if by_popularity else _EVAL_PAGE} {_EVAL_FROM} WHERE {sql_where} "
                        f"ORDER BY {ordering_sql(ordering, EVALUATION_ORDERINGS, 'e.id')} LIMIT ? OFFSET ?",
                        [*args, page.size, page.offset]).fetchall()
    popularity = None if by_popularity else _popularity(conn, {r["dataset_id"] for r in rows})
    return envelope([evaluation_row(r, popularity) for r in rows], count, page, **extra)


def dataset_evaluations(conn: sqlite3.Connection, ref: str, page: Page, *, is_open: bool | None,
                        ordering: str) -> JsonBody:
    """``datasets/<id>/evaluations/``: the benchmark's rows (404 for an unknown benchmark)."""
    dataset_id = resolve_dataset(conn, ref)
    return evaluation_list(conn, page, paper_id=None, dataset_id=dataset_id, task_id=None, is_open=is_open,
                           max_parameters_exclusive=None, ordering=ordering)
