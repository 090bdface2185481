"""The archive-size slow paths (issue 19) stay fixed: query plans and statement counts, never time.

A catalog in the archive's shape (``bench/gen_catalog.py --preset archive``) at
20,000 papers, with one task holding leaderboards on 1,000 datasets, is
imported once per module. Then:

* ``tasks/<id>/trending-benchmarks`` and ``tasks/<id>/page`` issue the same
  small number of SQL statements for the 1,000-dataset task as for a
  one-dataset task (no query per dataset);
* every ``papers/`` filter and ordering, deep pages included, reads papers
  through a covering index, never their (large) table rows: ``papers_list_*``
  in the list's order (no sort) for column filters, ``papers_id_cover`` for
  papers reached from a link table or the FTS index (``task``, ``search``);
* ``papers/?search=`` matches the papers whose title or abstract holds the word.
* ``tasks/<id>/papers`` counts the task's links alone and pages exactly as the plain query
  (sort every linked paper) in every order, near either end, with superseded and undated
  papers, reading the ordered index near either end instead of sorting.
"""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.gen_catalog import PRESETS, generate
from catalog.importer import run_import
from catalog.store.core import Page
from catalog.store.papers import (
    TREND_SQL,
    fts_filter,
    list_papers,
    order_clause,
    task_papers,
)
from catalog.store.taxonomy import task_page, trending_benchmarks

# Generating and importing 20,000 papers takes 10-30 s on a shared 2-core machine, and minutes
# when parallel workers and other jobs share the cores: the first test's deadline covers it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

HEAVY = 1000
SHAPE = replace(PRESETS["archive"], tasks=300, datasets=3000, authors=20_000, methods=300, links=10_000,
                heavy_task_datasets=HEAVY, evaluation_tasks=150)


@pytest.fixture(scope="module")
def archive_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive20k")
    generate(20_000, 6000, root / "dumps", 7, shape=SHAPE, compress=True)
    db = root / "catalog.db"
    sources = sorted(p for p in (root / "dumps").iterdir() if p.name.endswith(".gz"))
    out = io.StringIO()
    assert run_import(db, sources, out=out) == 0, out.getvalue()
    return db


@pytest.fixture(scope="module")
def conn(archive_db: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(f"file:{archive_db}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    yield connection
    connection.close()


def _statements(conn: sqlite3.Connection, call: Callable[[], Any]) -> list[str]:
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    # FTS5 reads its own shadow tables through the same connection; those are not ours.
    return [s for s in seen if "papers_fts_" not in s and not s.lstrip().upper().startswith("PRAGMA")]


def _task(conn: sqlite3.Connection, *, most: bool) -> str:
    order = "DESC" if most else "ASC"
    return str(conn.execute(f"SELECT task_id FROM dataset_tasks GROUP BY task_id ORDER BY count(*) {order}, "
                            "task_id LIMIT 1").fetchone()[0])


def test_the_heavy_task_links_a_thousand_datasets(conn: sqlite3.Connection) -> None:
    heavy = _task(conn, most=True)
    assert conn.execute("SELECT count(*) FROM dataset_tasks WHERE task_id = ?", (heavy,)).fetchone()[0] == HEAVY


@pytest.mark.parametrize("endpoint", ["trending", "page"])
def test_task_benchmarks_issue_as_many_statements_for_1000_datasets_as_for_one(conn: sqlite3.Connection,
                                                                                 endpoint: str) -> None:
    def run(task: str) -> list[str]:
        if endpoint == "trending":
            return _statements(conn, lambda: trending_benchmarks(
                conn, task, limit=100, min_recent_papers=0, include_descendants=False, is_open=None))
        return _statements(conn, lambda: task_page(conn, task))

    heavy, light = run(_task(conn, most=True)), run(_task(conn, most=False))
    assert len(heavy) == len(light) <= 10, heavy


def test_trending_benchmarks_read_leaderboard_papers_from_the_covering_index(conn: sqlite3.Connection) -> None:
    task = _task(conn, most=True)
    statements = _statements(conn, lambda: trending_benchmarks(
        conn, task, limit=100, min_recent_papers=0, include_descendants=False, is_open=None))
    grouped = next(sql for sql in statements if sql.lstrip().startswith("WITH"))
    plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + grouped).fetchall()]
    assert "SEARCH p USING COVERING INDEX papers_id_cover (id=?) LEFT-JOIN" in plan, plan
    assert any(step.startswith("SEARCH e USING INDEX evaluations_task_dataset") for step in plan), plan


def test_a_task_page_reads_best_rows_and_repositories_from_covering_indexes(conn: sqlite3.Connection) -> None:
    statements = _statements(conn, lambda: task_page(conn, _task(conn, most=True)))
    steps = [row[3] for sql in statements if sql.lstrip().upper().startswith(("SELECT", "WITH"))
             for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
    assert any("COVERING INDEX evaluations_task_dataset (task_id=?)" in step for step in steps), steps
    assert any("COVERING INDEX repositories_paper_cover (paper_id=?)" in step for step in steps), steps
    assert not any(re.match(r"SCAN (evaluations|repositories|papers)\b", step) for step in steps), steps


def _plans(conn: sqlite3.Connection, statements: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    for sql in statements:
        if re.match(r"\s*(SELECT|WITH)\b", sql, re.IGNORECASE) and re.search(r"\bpapers p\b", sql):
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()]
            out.append((sql, plan))
    return out


def _big_task(conn: sqlite3.Connection) -> str:
    return str(conn.execute("SELECT task_id FROM paper_tasks GROUP BY task_id ORDER BY count(*) DESC "
                            "LIMIT 1").fetchone()[0])


LISTS: dict[str, tuple[dict[str, Any], str, int]] = {
    "no-filter-page-1000": ({}, "trending", 1000),
    "official-since-page-1000": ({"has_official_implementation": True, "start_date": "2016-01-01"}, "trending", 1000),
    "date-range-trending": ({"start_date": "2020-01-01", "end_date": "2020-12-31"}, "trending", 30),
    "date-order-page-1000": ({}, "date_published", 1000),
    "date-order-range": ({"start_date": "2020-01-01"}, "date_published", 100),
    "citations-page-1000": ({}, "citation_count", 1000),
    "official-citations": ({"has_official_implementation": False}, "citation_count", 100),
    "largest-task": ({"task": "<big>"}, "trending", 1),
    "search-word": ({"search": "transformer"}, "trending", 1),
}


@pytest.mark.parametrize("case", list(LISTS))
def test_paper_lists_read_a_covering_index_in_order(conn: sqlite3.Connection, case: str) -> None:
    filters, order_by, page = LISTS[case]
    filters = {k: (_big_task(conn) if v == "<big>" else v) for k, v in filters.items()}
    statements = _statements(conn, lambda: list_papers(conn, Page(page, 20), filters, order_by=order_by,
                                                       order_dir="desc", latest_only=True, authors=[]))
    # The list's own queries: the page of ids and the count (not the page rows fetched by id).
    plans = [(sql, plan) for sql, plan in _plans(conn, statements)
             if re.match(r"\s*SELECT (p\.id( FROM|, count)|count\(\*\))", sql)]
    page_plan = next(plan for sql, plan in plans if "ORDER BY" in sql)
    linked = "task" in filters or "search" in filters
    assert len(plans) == 2, plans
    for sql, plan in plans:
        text = "\n".join(plan)
        assert not re.search(r"^SCAN p\b", text, re.MULTILINE), text  # never every paper row
        # Papers reached from a link table or the FTS index are counted from the id-keyed
        # covering index, and paged from it or by walking the ordered list index; other
        # lists read an ordered list index. Never the paper rows.
        if linked and sql.startswith("SELECT count"):
            assert "COVERING INDEX papers_id_cover (id=?" in text, text
        elif linked:
            assert "COVERING INDEX papers_id_cover (id=?" in text or "COVERING INDEX papers_list_" in text, text
        else:
            assert "COVERING INDEX papers_list_" in text, text
        assert "USING INTEGER PRIMARY KEY" not in text, text
        assert "LIKE" not in sql
    if not linked:  # read in index order: no sort of the matching papers, page 1000 included
        assert not any("TEMP B-TREE FOR" in step and "ORDER BY" in step for step in page_plan), page_plan
    if "search" in filters:
        assert any("papers_fts VIRTUAL TABLE" in step for step in page_plan), page_plan


@pytest.mark.parametrize("filters", [{"task": "<big>"}, {"search": "transformer"}, {"task": "<small>"}])
@pytest.mark.parametrize("page", [1, 30])
@pytest.mark.parametrize("order_by", ["trending", "date_published"])
def test_a_linked_filter_pages_exactly_as_the_plain_query(conn: sqlite3.Connection, filters: dict[str, str],
                                                          page: int, order_by: str) -> None:
    small = str(conn.execute("SELECT task_id FROM paper_tasks GROUP BY task_id ORDER BY count(*), task_id "
                             "LIMIT 1").fetchone()[0])
    filters = {k: {"<big>": _big_task(conn), "<small>": small}.get(v, v) for k, v in filters.items()}
    body = list_papers(conn, Page(page, 20), filters, order_by=order_by, order_dir="desc", latest_only=True,
                       authors=[])
    if "task" in filters:
        link = "p.id IN (SELECT paper_id FROM paper_tasks WHERE task_id = :v)"
        value = filters["task"]
    else:
        link = "p.id IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH :v)"
        value = fts_filter(filters["search"])
    order = order_clause(order_by, "desc", stored_trend=True)
    expected = [str(r[0]) for r in conn.execute(
        f"SELECT p.id FROM papers p WHERE {link} AND p.is_latest = 1 ORDER BY {order} LIMIT 20 OFFSET :o",
        {"v": value, "o": (page - 1) * 20})]
    assert [p["id"] for p in body["results"]] == expected


@pytest.fixture(scope="module")
def versions(archive_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """The catalog with every fifth paper a superseded version and every seventh undated (the
    generator writes neither)."""
    db = tmp_path_factory.mktemp("versions") / "catalog.db"
    with sqlite3.connect(archive_db) as source, sqlite3.connect(db) as target:
        source.backup(target)
    with sqlite3.connect(db) as writable:
        writable.execute("UPDATE papers SET is_latest = 0 WHERE id % 5 = 0")
        writable.execute("UPDATE papers SET published = NULL WHERE id % 7 = 0")  # NULLs sort last
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    yield connection
    connection.close()


def _plain_task_page(conn: sqlite3.Connection, task: str, page: Page, order_by: str,
                     order_dir: str) -> tuple[int, list[str]]:
    """The count and ids of a task paper page by the plain query (sort every linked paper)."""
    args = {"task": task, "newest": conn.execute("SELECT max(published) FROM papers").fetchone()[0],
            "limit": page.size, "offset": page.offset}
    where = "p.id IN (SELECT paper_id FROM paper_tasks WHERE task_id = :task)"
    count = conn.execute(f"SELECT count(*) FROM papers p WHERE {where}", args).fetchone()[0]
    order = order_clause(order_by, order_dir, stored_trend=True)
    return count, [str(r[0]) for r in conn.execute(
        f"SELECT p.id FROM papers p WHERE {where} ORDER BY {order} LIMIT :limit OFFSET :offset", args)]


def test_every_task_link_names_a_paper(conn: sqlite3.Connection) -> None:
    """What lets task paper pages count the task's links alone."""
    assert conn.execute("SELECT count(*) FROM paper_tasks WHERE paper_id NOT IN (SELECT id FROM papers)"
                        ).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM papers WHERE is_latest NOT IN (0, 1)").fetchone()[0] == 0


@pytest.mark.parametrize("catalog", ["latest", "versions"])
@pytest.mark.parametrize("order", ["trending desc", "trending asc", "date_published desc", "date_published asc",
                                   "citation_count desc", "citation_count asc"])
def test_task_papers_page_exactly_as_the_plain_query(conn: sqlite3.Connection, versions: sqlite3.Connection,
                                                     catalog: str, order: str) -> None:
    db = conn if catalog == "latest" else versions
    order_by, order_dir = order.split()
    big = _big_task(db)
    small = str(db.execute("SELECT task_id FROM paper_tasks GROUP BY task_id HAVING count(*) > 3 "
                           "ORDER BY count(*), task_id LIMIT 1").fetchone()[0])
    for task in (big, small):
        total = db.execute("SELECT count(*) FROM paper_tasks WHERE task_id = ?", (task,)).fetchone()[0]
        for size in (20, 7):
            last = -(-total // size)
            for number in sorted({1, 2, 3, last // 3, last // 2, last // 2 + 1, last - 2, last - 1, last,
                                  last + 1} - {0}):
                page = Page(number, size)
                body = task_papers(db, task, page, order_by=order_by, order_dir=order_dir)
                count, expected = _plain_task_page(db, task, page, order_by, order_dir)
                assert (body["count"], [p["id"] for p in body["results"]]) == (count, expected), (task, page)


@pytest.mark.parametrize("page", [1, 1000, "last"])
@pytest.mark.parametrize("order", ["trending desc", "date_published asc", "date_published desc"])
def test_task_papers_walk_the_ordered_index_near_either_end(versions: sqlite3.Connection,
                                                            page: int | str, order: str) -> None:
    task = _big_task(versions)
    total = versions.execute("SELECT count(*) FROM paper_tasks WHERE task_id = ?", (task,)).fetchone()[0]
    number = -(-total // 5) if page == "last" else min(int(page), -(-total // 5))
    order_by, order_dir = order.split()
    statements = _statements(versions, lambda: task_papers(versions, task, Page(number, 5),
                                                           order_by=order_by, order_dir=order_dir))
    counts = [sql for sql in statements if sql.startswith("SELECT count(*)")]
    assert counts == ["SELECT count(*) FROM paper_tasks WHERE task_id = " + task], counts
    (page_sql,) = [sql for sql in statements if "ORDER BY" in sql and "FROM paper_tasks" in sql]
    plan = "\n".join(row[3] for row in versions.execute("EXPLAIN QUERY PLAN " + page_sql))
    if page != 1000:
        assert "MERGE (UNION ALL)" in plan and "TEMP B-TREE" not in plan, plan


def test_task_papers_never_scan_the_papers_table(conn: sqlite3.Connection) -> None:
    statements = _statements(conn, lambda: task_papers(conn, _big_task(conn), Page(1, 100), order_by="trending",
                                                       order_dir="desc"))
    for sql, plan in _plans(conn, statements):
        assert not any(re.match(r"SCAN p\b", step) for step in plan), (sql, plan)


def test_the_stored_trend_is_the_trend_expression(conn: sqlite3.Connection) -> None:
    newest = conn.execute("SELECT max(published) FROM papers").fetchone()[0]
    assert conn.execute(f"SELECT count(*) FROM papers p WHERE p.trend IS NOT {TREND_SQL}",
                        {"newest": newest}).fetchone()[0] == 0


def test_the_search_filter_matches_the_papers_holding_the_word(conn: sqlite3.Connection) -> None:
    # A mid-frequency word of the generated vocabulary: dozens of papers, not thousands.
    word = _word(conn)
    pattern = re.compile(rf"\b{word}\b", re.IGNORECASE)
    expected = {r[0] for r in conn.execute("SELECT id, title, abstract FROM papers").fetchall()
                if pattern.search(r[1]) or pattern.search(r[2] or "")}
    body = list_papers(conn, Page(1, 100), {"search": word.upper()}, order_by="trending", order_dir="desc",
                       latest_only=True, authors=[])
    assert body["count"] == len(expected) and 0 < len(expected) <= 100
    assert {int(p["id"]) for p in body["results"]} == expected


def _word(conn: sqlite3.Connection) -> str:
    title = conn.execute("SELECT title FROM papers ORDER BY id LIMIT 1 OFFSET 500").fetchone()[0]
    words = [w for w in re.findall(r"[a-z]+", title.lower()) if len(w) > 7]
    counts = {w: conn.execute("SELECT count(*) FROM papers_fts WHERE papers_fts MATCH ?",
                              (f'{{title abstract}} : "{w}"',)).fetchone()[0] for w in words}
    return min(counts, key=lambda w: (counts[w], w))
