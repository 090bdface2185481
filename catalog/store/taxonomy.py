"""Taxonomy queries: areas, tasks (list, summary, page, trending benchmarks) and methods.

Benchmark trends (``tasks/<task>/trending-benchmarks``), relative to the
newest paper date in the database:

* ``recent_paper_count``: distinct evaluated papers published within
  ``recent_days`` (365) of the newest date; ``all_time_paper_count``: all
  distinct evaluated papers (rows without a known paper count by title);
* ``trend_score = recent / (all_time + 1)``;
* ``support_weighted_score = recent * all_time / (all_time + support_prior_papers)``
  with ``support_prior_papers = 5``; rows are ranked by it (ties: all_time
  desc, name).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from catalog.store.core import NotFound, Page, envelope, loads, newest_paper_date, sid
from catalog.store.papers import resolve_task

__all__ = ["area_list", "areas_with_task_benchmarks", "areas_with_tasks", "method_detail",
           "method_list", "task_list", "task_page", "task_summary", "trending_benchmarks"]

RECENT_DAYS = 365
SUPPORT_PRIOR = 5

TASK_COLUMNS = (
    "t.id, t.slug, t.name, t.description, t.area_id, t.parent_id, t.level, t.research_trends, "
    "t.visible, t.created_at, "
    "(SELECT count(*) FROM paper_tasks x WHERE x.task_id = t.id) AS paper_count, "
    "(SELECT count(*) FROM dataset_tasks x WHERE x.task_id = t.id) AS benchmark_count, "
    "(SELECT count(*) FROM evaluations x WHERE x.task_id = t.id) AS evaluation_count"
)

TASK_ORDERINGS = {"name": "t.name COLLATE NOCASE", "created_at": "t.created_at", "level": "t.level",
                  "paper_count": "paper_count", "benchmark_count": "benchmark_count",
                  "evaluation_count": "evaluation_count", "id": "t.id"}
METHOD_ORDERINGS = {"name": "m.name COLLATE NOCASE", "full_name": "m.full_name COLLATE NOCASE",
                    "introduced_year": "m.introduced_year", "created_at": "m.created_at",
                    "paper_count": "paper_count", "id": "m.id"}
AREA_ORDERINGS = {"name": "name COLLATE NOCASE", "id": "id"}


def ordering_sql(ordering: str, table: dict[str, str], tiebreak: str) -> str:
    """Translate ``name`` / ``-name`` into SQL (the caller validated the key)."""
    desc = ordering.startswith("-")
    column = table[ordering.lstrip("-")]
    direction = "DESC" if desc else "ASC"
    return f"{column} {direction}, {tiebreak} {direction}"


def task_row(row: sqlite3.Row) -> dict[str, Any]:
    """A task summary (§4.3 #13)."""
    return {"id": str(row["id"]), "slug": row["slug"], "name": row["name"],
            "area_id": sid(row["area_id"]), "parent_id": sid(row["parent_id"]), "level": row["level"],
            "visible": bool(row["visible"]), "paper_count": row["paper_count"],
            "benchmark_count": row["benchmark_count"], "evaluation_count": row["evaluation_count"]}


def area_list(conn: sqlite3.Connection, page: Page, ordering: str) -> dict[str, Any]:
    """``areas/``: envelope of ``{id, name, slug}``."""
    count = conn.execute("SELECT count(*) FROM areas").fetchone()[0]
    rows = conn.execute(f"SELECT id, name, slug FROM areas ORDER BY {ordering_sql(ordering, AREA_ORDERINGS, 'id')} "
                        "LIMIT ? OFFSET ?", (page.size, page.offset)).fetchall()
    return envelope([{"id": str(r[0]), "name": r[1], "slug": r[2]} for r in rows], count, page)


def areas_with_tasks(conn: sqlite3.Connection) -> dict[str, Any]:
    """``areas/with-tasks/``: every area with its visible tasks (by name)."""
    areas = {r[0]: {"id": str(r[0]), "name": r[1], "slug": r[2], "tasks": []}
             for r in conn.execute("SELECT id, name, slug FROM areas ORDER BY name COLLATE NOCASE, id")}
    for row in conn.execute(f"SELECT {TASK_COLUMNS} FROM tasks t WHERE t.visible = 1 AND t.area_id IS NOT NULL "
                            "ORDER BY t.name COLLATE NOCASE, t.id"):
        if row["area_id"] in areas:
            areas[row["area_id"]]["tasks"].append(task_row(row))
    return {"count": len(areas), "results": list(areas.values())}


def _dataset_eval_counts(conn: sqlite3.Connection, task_id: int) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT d.id, d.slug, d.name, d.full_name, d.description, d.hf_url, d.featured_rank, "
        "(SELECT count(*) FROM evaluations e WHERE e.dataset_id = d.id) AS evaluation_count, "
        "(SELECT count(DISTINCT e.paper_id) FROM evaluations e WHERE e.dataset_id = d.id) AS paper_count "
        "FROM dataset_tasks dt JOIN datasets d ON d.id = dt.dataset_id WHERE dt.task_id = ?",
        (task_id,)).fetchall()


def areas_with_task_benchmarks(conn: sqlite3.Connection, per_task: int, min_eval_count: int) -> dict[str, Any]:
    """``areas/with-task-benchmarks/``: areas → tasks → top ``per_task`` benchmarks.

    A benchmark needs ``evaluation_count >= min_eval_count``; benchmarks are
    ordered by featured rank (unranked last), evaluation count desc, name.
    Tasks and areas left without benchmarks are omitted.
    """
    results = []
    for area in conn.execute("SELECT id, name, slug FROM areas ORDER BY name COLLATE NOCASE, id").fetchall():
        tasks = []
        for task in conn.execute(f"SELECT {TASK_COLUMNS} FROM tasks t WHERE t.area_id = ? AND t.visible = 1 "
                                 "ORDER BY t.name COLLATE NOCASE, t.id", (area[0],)).fetchall():
            rows = [r for r in _dataset_eval_counts(conn, task["id"]) if r["evaluation_count"] >= min_eval_count]
            rows.sort(key=lambda r: (r["featured_rank"] is None, r["featured_rank"] or 0,
                                     -r["evaluation_count"], r["name"].casefold()))
            if rows:
                item = task_row(task)
                item["benchmarks"] = [
                    {"id": str(r["id"]), "name": r["name"], "slug": r["slug"], "full_name": r["full_name"],
                     "description": r["description"], "hf_url": r["hf_url"],
                     "evaluation_count": r["evaluation_count"], "featured_rank": r["featured_rank"]}
                    for r in rows[:per_task]]
                tasks.append(item)
        if tasks:
            results.append({"id": str(area[0]), "name": area[1], "slug": area[2], "tasks": tasks})
    return {"count": len(results), "results": results}


def check_area(conn: sqlite3.Connection, area_id: int | None) -> None:
    """Raise NotFound for an ``area_id`` filter naming no area."""
    if area_id is not None and conn.execute("SELECT 1 FROM areas WHERE id = ?", (area_id,)).fetchone() is None:
        raise NotFound(f"Area not found: {area_id}")


def task_list(conn: sqlite3.Connection, page: Page, *, q: str | None, area_id: int | None,
              level: int | None, visible_only: bool, ordering: str) -> dict[str, Any]:
    """``tasks/``: filtered page of task summaries.

    ``q`` matches a case-insensitive substring of name or slug, or the id.
    """
    check_area(conn, area_id)
    where: list[str] = ["1=1"]
    args: list[object] = []
    if q:
        where.append("(t.name LIKE ? OR t.slug LIKE ? OR CAST(t.id AS TEXT) = ?)")
        args += [f"%{q}%", f"%{q}%", q.strip()]
    if area_id is not None:
        where.append("t.area_id = ?")
        args.append(area_id)
    if level is not None:
        where.append("t.level = ?")
        args.append(level)
    if visible_only:
        where.append("t.visible = 1")
    sql_where = " AND ".join(where)
    count = conn.execute(f"SELECT count(*) FROM tasks t WHERE {sql_where}", args).fetchone()[0]
    rows = conn.execute(f"SELECT {TASK_COLUMNS} FROM tasks t WHERE {sql_where} "
                        f"ORDER BY {ordering_sql(ordering, TASK_ORDERINGS, 't.id')} LIMIT ? OFFSET ?",
                        [*args, page.size, page.offset]).fetchall()
    return envelope([task_row(r) for r in rows], count, page)


def task_summary(conn: sqlite3.Connection, ref: str) -> dict[str, Any]:
    """``tasks/<id>``: one task summary (id, slug or exact name)."""
    task_id = resolve_task(conn, ref)
    return task_row(conn.execute(f"SELECT {TASK_COLUMNS} FROM tasks t WHERE t.id = ?", (task_id,)).fetchone())


def _refs(rows: list[sqlite3.Row]) -> list[dict[str, Any]]:
    return [{"id": str(r["id"]), "slug": r["slug"], "name": r["name"]} for r in rows]


def task_page(conn: sqlite3.Connection, ref: str) -> dict[str, Any]:
    """``tasks/<id>/page``: task, parents (nearest first), sisters, children,
    recommended frameworks (top starred repositories of the task's papers),
    benchmarks and subtask benchmarks (§4.3 #15)."""
    task_id = resolve_task(conn, ref)
    row = conn.execute(f"SELECT {TASK_COLUMNS} FROM tasks t WHERE t.id = ?", (task_id,)).fetchone()
    task = task_row(row) | {"description": row["description"],
                            "research_trends": loads(row["research_trends"], [])}
    parents, parent_id, seen = [], row["parent_id"], {task_id}
    while parent_id is not None and parent_id not in seen:
        seen.add(parent_id)
        parent = conn.execute("SELECT id, slug, name, parent_id FROM tasks WHERE id = ?", (parent_id,)).fetchone()
        if parent is None:
            break
        parents.append(parent)
        parent_id = parent["parent_id"]
    sisters = conn.execute("SELECT id, slug, name FROM tasks WHERE parent_id IS ? AND id != ? AND visible = 1 "
                           "AND (? IS NOT NULL OR area_id IS ?) ORDER BY name COLLATE NOCASE LIMIT 50",
                           (row["parent_id"], task_id, row["parent_id"], row["area_id"])).fetchall()
    children = conn.execute("SELECT id, slug, name FROM tasks WHERE parent_id = ? ORDER BY name COLLATE NOCASE",
                            (task_id,)).fetchall()
    repos = conn.execute(
        "SELECT r.id, r.url, max(coalesce(r.stars, 0)) AS stars FROM repositories r JOIN paper_tasks pt "
        "ON pt.paper_id = r.paper_id WHERE pt.task_id = ? GROUP BY r.url ORDER BY stars DESC, r.url LIMIT 5",
        (task_id,)).fetchall()
    frameworks = []
    for repo in repos:
        parts = repo["url"].rstrip("/").split("/")
        frameworks.append({"id": str(repo["id"]), "url": repo["url"],
                           "owner": parts[-2] if len(parts) >= 2 else None, "name": parts[-1],
                           "num_stars": repo["stars"]})
    # One grouped query for every benchmark's best row (a task can have 4,000 datasets).
    best = dict(conn.execute(
        "SELECT dataset_id, model_name FROM (SELECT dataset_id, model_name, row_number() OVER "
        "(PARTITION BY dataset_id ORDER BY best_rank, id) AS n FROM evaluations "
        "WHERE task_id = ? AND best_rank IS NOT NULL) WHERE n = 1", (task_id,)).fetchall())
    benchmarks = [{"id": str(b["id"]), "slug": b["slug"], "name": b["name"], "paper_count": b["paper_count"],
                   "evaluation_count": b["evaluation_count"], "best_model_name": best.get(b["id"])}
                  for b in _dataset_eval_counts(conn, task_id)]
    benchmarks.sort(key=lambda b: (-b["evaluation_count"], b["name"].casefold()))
    subtask_benchmarks = []
    for child in children:
        rows = _dataset_eval_counts(conn, child["id"])
        if rows:
            subtask_benchmarks.append({"subtask_id": str(child["id"]), "benchmarks": [
                {"id": str(r["id"]), "slug": r["slug"], "name": r["name"]}
                for r in sorted(rows, key=lambda r: r["name"].casefold())]})
    return {"task": task, "parents": _refs(parents), "sisters": _refs(sisters), "children": _refs(children),
            "recommended_frameworks": frameworks, "benchmarks": benchmarks,
            "subtask_benchmarks": subtask_benchmarks}


def _descendants(conn: sqlite3.Connection, task_id: int) -> list[int]:
    rows = conn.execute("WITH RECURSIVE d(id) AS (SELECT ? UNION SELECT t.id FROM tasks t JOIN d "
                        "ON t.parent_id = d.id) SELECT id FROM d", (task_id,)).fetchall()
    return [r[0] for r in rows]


def trending_benchmarks(conn: sqlite3.Connection, ref: str, *, limit: int, min_recent_papers: int,
                        include_descendants: bool, is_open: bool | None) -> dict[str, Any]:
    """``tasks/<task>/trending-benchmarks`` (§4.3 #16), ranked as in the module doc."""
    task_id = resolve_task(conn, ref)
    slug = conn.execute("SELECT slug FROM tasks WHERE id = ?", (task_id,)).fetchone()[0]
    task_ids = _descendants(conn, task_id) if include_descendants else [task_id]
    marks = ",".join("?" * len(task_ids))
    newest = newest_paper_date(conn) or "1970-01-01"
    open_sql = "" if is_open is None else f" AND e.is_open = {1 if is_open else 0}"
    # One grouped query for all datasets (the heaviest task links 4,084): per-dataset
    # distinct papers (all time, recent) and the best row, from one evaluations range.
    # Rows reach their paper's date through papers_id_cover; only the best rows' titles
    # read paper rows.
    rows = conn.execute(
        f"""
        WITH ds AS (
            SELECT DISTINCT d.id, d.slug, d.name, d.description, d.hf_url FROM dataset_tasks dt
            JOIN datasets d ON d.id = dt.dataset_id WHERE dt.task_id IN ({marks})
        ), ev AS (
            SELECT e.id, e.dataset_id, e.best_rank, e.model_name, e.code_url, e.paper_title, e.paper_id,
                   coalesce(CAST(e.paper_id AS TEXT), e.paper_title) AS k,
                   coalesce(p.published, e.paper_published_date) AS published
            FROM evaluations e LEFT JOIN papers p ON p.id = e.paper_id
            WHERE e.task_id IN ({marks}) AND e.dataset_id IN (SELECT id FROM ds){open_sql}
        ), stats AS (
            SELECT dataset_id, count(DISTINCT k) AS all_time,
                   count(DISTINCT CASE WHEN published >= date(?, '-{RECENT_DAYS} days') THEN k END) AS recent
            FROM ev GROUP BY dataset_id
        ), best AS (
            SELECT dataset_id, model_name, paper_id, paper_title, code_url,
                   row_number() OVER (PARTITION BY dataset_id ORDER BY best_rank IS NULL, best_rank, id) AS n
            FROM ev
        )
        SELECT ds.id, ds.slug, ds.name, ds.description, ds.hf_url, coalesce(s.all_time, 0) AS all_time,
               coalesce(s.recent, 0) AS recent, b.model_name, coalesce(bp.title, b.paper_title) AS title,
               b.code_url, b.dataset_id AS best_of
        FROM ds LEFT JOIN stats s ON s.dataset_id = ds.id
        LEFT JOIN best b ON b.dataset_id = ds.id AND b.n = 1
        LEFT JOIN papers bp ON bp.id = b.paper_id
        """, [*task_ids, *task_ids, newest]).fetchall()
    results = []
    for d in rows:
        all_time, recent = d["all_time"], d["recent"]
        if recent < min_recent_papers:
            continue
        found = d["best_of"] is not None
        results.append({
            "id": str(d["id"]), "slug": d["slug"], "name": d["name"], "description": d["description"],
            "hf_url": d["hf_url"], "recent_paper_count": recent, "all_time_paper_count": all_time,
            "trend_score": round(recent / (all_time + 1), 6),
            "support_weighted_score": round(recent * all_time / (all_time + SUPPORT_PRIOR), 6),
            "best_model_name": d["model_name"] if found else None,
            "best_paper_title": d["title"] if found else None,
            "best_code_url": d["code_url"] if found else None})
    results.sort(key=lambda r: (-r["support_weighted_score"], -r["all_time_paper_count"], r["name"].casefold()))
    return {"task_id": str(task_id), "task_slug": slug, "recent_days": RECENT_DAYS,
            "support_prior_papers": SUPPORT_PRIOR, "count": len(results[:limit]), "results": results[:limit]}


METHOD_COLUMNS = ("m.id, m.slug, m.name, m.full_name, m.description, m.area_id, m.introduced_year, "
                  "m.source_paper_id, m.source_url, m.source_title, "
                  "(SELECT count(*) FROM paper_methods x WHERE x.method_id = m.id) AS paper_count")


def _method_summary(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": str(row["id"]), "slug": row["slug"], "name": row["name"], "full_name": row["full_name"],
            "area_id": sid(row["area_id"]), "introduced_year": row["introduced_year"],
            "paper_count": row["paper_count"]}


def method_list(conn: sqlite3.Connection, page: Page, *, q: str | None, area_id: int | None,
                introduced_year: int | None, ordering: str) -> dict[str, Any]:
    """``methods/``: page of method summaries; ``q`` = substring of name/full name/slug or the id."""
    check_area(conn, area_id)
    where: list[str] = ["1=1"]
    args: list[object] = []
    if q:
        where.append("(m.name LIKE ? OR m.full_name LIKE ? OR m.slug LIKE ? OR CAST(m.id AS TEXT) = ?)")
        args += [f"%{q}%"] * 3 + [q.strip()]
    if area_id is not None:
        where.append("m.area_id = ?")
        args.append(area_id)
    if introduced_year is not None:
        where.append("m.introduced_year = ?")
        args.append(introduced_year)
    sql_where = " AND ".join(where)
    count = conn.execute(f"SELECT count(*) FROM methods m WHERE {sql_where}", args).fetchone()[0]
    rows = conn.execute(f"SELECT {METHOD_COLUMNS} FROM methods m WHERE {sql_where} "
                        f"ORDER BY {ordering_sql(ordering, METHOD_ORDERINGS, 'm.id')} LIMIT ? OFFSET ?",
                        [*args, page.size, page.offset]).fetchall()
    return envelope([_method_summary(r) for r in rows], count, page)


def method_detail(conn: sqlite3.Connection, ref: str) -> dict[str, Any]:
    """``methods/<id-or-slug>``: summary plus description and source fields."""
    text = ref.strip()
    row = None
    if text.isdigit() and len(text) <= 18:
        row = conn.execute(f"SELECT {METHOD_COLUMNS} FROM methods m WHERE m.id = ?", (int(text),)).fetchone()
    if row is None:
        row = conn.execute(f"SELECT {METHOD_COLUMNS} FROM methods m WHERE m.slug = ? COLLATE NOCASE",
                           (text,)).fetchone()
    if row is None:
        raise NotFound(f"Method not found: {text}")
    return _method_summary(row) | {"description": row["description"],
                                   "source_paper_id": sid(row["source_paper_id"]),
                                   "source_url": row["source_url"], "source_title": row["source_title"]}
