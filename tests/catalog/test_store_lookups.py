"""The faster read paths (issue 2) answer exactly as before: arXiv lookups, related, leaderboards, search."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from catalog.search import papers as search
from catalog.store import core as store
from catalog.store import entities as store_entities
from catalog.store import papers as store_papers
from catalog.store.core import NotFound, Page, Store

# The related-papers query before the two-step rewrite: the reference ordering.
REFERENCE_RELATED = """
    SELECT other FROM (
        SELECT successor_id AS other, 3 AS weight FROM lineage WHERE predecessor_id = :pid
        UNION ALL SELECT predecessor_id, 3 FROM lineage WHERE successor_id = :pid
        UNION ALL SELECT b.paper_id, 1 FROM paper_tasks a JOIN paper_tasks b
            ON a.task_id = b.task_id WHERE a.paper_id = :pid
        UNION ALL SELECT b.paper_id, 1 FROM paper_methods a JOIN paper_methods b
            ON a.method_id = b.method_id WHERE a.paper_id = :pid
    ) JOIN papers p ON p.id = other
    WHERE other != :pid GROUP BY other
    ORDER BY sum(weight) DESC, max(p.citation_count) DESC, other LIMIT :limit
"""


@pytest.fixture
def conn(catalog_db: Path) -> sqlite3.Connection:
    connection = Store(catalog_db).conn()
    yield connection
    connection.close()


@pytest.fixture
def variant_conn(catalog_db: Path, tmp_path: Path) -> sqlite3.Connection:
    """The test catalog plus a paper whose arXiv id differs from paper 4's only in case."""
    path = tmp_path / "variant.db"
    shutil.copy(catalog_db, path)
    writable = sqlite3.connect(path)
    writable.execute("INSERT INTO papers (id, arxiv_id, title) VALUES (50, 'math.gt/0309136', 'Lower-case twin')")
    writable.commit()
    writable.close()
    connection = Store(path).conn()
    yield connection
    connection.close()


@pytest.mark.parametrize(("ref", "paper_id"), [
    pytest.param("1706.03762", 1, id="exact"),
    pytest.param("1706.03762v5", 1, id="version"),
    pytest.param("MATH.GT/0309136", 4, id="legacy-upper-case"),
    pytest.param("math.gt/0309136v2", 4, id="legacy-lower-case-version"),
])
def test_arxiv_references_resolve_case_insensitively(conn: sqlite3.Connection, ref: str, paper_id: int) -> None:
    assert store.resolve_paper(conn, ref)["id"] == paper_id


def test_an_exact_arxiv_match_wins_over_a_case_variant(variant_conn: sqlite3.Connection) -> None:
    assert store.resolve_paper(variant_conn, "math.GT/0309136")["id"] == 4
    assert store.resolve_paper(variant_conn, "math.gt/0309136")["id"] == 50


def test_an_unknown_arxiv_id_is_still_not_found(conn: sqlite3.Connection) -> None:
    with pytest.raises(NotFound):
        store.resolve_paper(conn, "2999.99999")


@pytest.mark.parametrize("sql", [
    pytest.param("SELECT id FROM papers p WHERE p.arxiv_id = ? COLLATE NOCASE", id="paper-nocase"),
    pytest.param("SELECT id FROM external_metadata WHERE arxiv_id = ? COLLATE NOCASE", id="external-nocase"),
    pytest.param("SELECT id FROM datasets x WHERE x.slug = ? COLLATE NOCASE", id="dataset-slug"),
    pytest.param("SELECT paper_id FROM paper_tasks WHERE task_id = ?", id="task-papers-covering"),
])
def test_hot_lookups_use_an_index_instead_of_a_scan(conn: sqlite3.Connection, sql: str) -> None:
    plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", ("x",)))
    assert "SEARCH" in plan and "SCAN" not in plan, plan


@pytest.mark.parametrize("limit", [1, 2, 4, 20])
def test_related_papers_keep_the_reference_ordering(conn: sqlite3.Connection, limit: int) -> None:
    for (pid,) in conn.execute("SELECT id FROM papers").fetchall():
        ref = str(pid)
        expected = [str(r[0]) for r in conn.execute(REFERENCE_RELATED, {"pid": pid, "limit": limit})]
        got = [p["id"] for p in store_papers.related_papers(conn, ref, limit)["results"]]
        assert got == expected, pid


@pytest.mark.parametrize("ordering", ["best_rank", "-benchmark_popularity", "model_name"])
def test_leaderboard_rows_report_the_same_benchmark_popularity_in_every_ordering(
        conn: sqlite3.Connection, ordering: str) -> None:
    body = store_entities.evaluation_list(conn, Page(1, 50), paper_id=None, dataset_id=None, task_id=None,
                                          is_open=None, max_parameters_exclusive=None, ordering=ordering)
    counts = dict(conn.execute("SELECT dataset_id, count(*) FROM evaluations GROUP BY dataset_id").fetchall())
    results = body["results"]
    assert isinstance(results, list) and results
    for row in results:
        assert row["benchmark_popularity"] == counts[int(row["dataset_id"])]


@pytest.mark.parametrize("query", ["attention", "transformer language", "residual learning", "\"a shared title\""])
def test_keyword_search_without_filters_matches_the_joined_query(conn: sqlite3.Connection, query: str) -> None:
    def run(start_date: str | None) -> dict:
        return search.search_papers(conn, query, Page(1, 10), mode="keyword", start_date=start_date,
                                    end_date=None, has_official_implementation=None)

    plain, filtered = run(None), run("1900-01-01")  # every test paper has a date
    assert plain["count"] == filtered["count"] > 0
    assert [p["id"] for p in plain["results"]] == [p["id"] for p in filtered["results"]]


@pytest.mark.parametrize(("age", "min_velocity"), [(10_000, None), (3_000, 1.0), (30, None)])
def test_trending_papers_keep_the_reference_ranking_and_scores(conn: sqlite3.Connection, age: int,
                                                              min_velocity: float | None) -> None:
    newest = store.newest_paper_date(conn)
    reference = conn.execute(
        f"SELECT p.id, {store_papers.TREND_SQL} AS trend FROM papers p WHERE p.is_latest = 1 "
        f"AND p.published IS NOT NULL AND p.published >= date(:newest, '-' || :age || ' days') "
        f"AND {store_papers.TREND_SQL} >= :v ORDER BY trend DESC, p.citation_count DESC, p.id DESC LIMIT 20",
        {"newest": newest, "age": age, "v": min_velocity or 0.0}).fetchall()
    body = store_papers.trending_papers(conn, 20, age, min_velocity)
    assert [(p["id"], p["trend_score"]) for p in body["results"]] == [
        (str(pid), round(trend, 6)) for pid, trend in reference]
    assert all(p["title"] and p["velocity"] == p["trend_score"] for p in body["results"])


def test_paper_lists_order_by_the_stored_trend_exactly_as_by_the_expression(conn: sqlite3.Connection) -> None:
    def ids(stored: bool) -> list[int]:
        order = store_papers.order_clause("trending", "desc", stored_trend=stored)
        return [r[0] for r in conn.execute(f"SELECT p.id FROM papers p ORDER BY {order}",
                                           {"newest": store.newest_paper_date(conn)})]

    assert store_papers.has_stored_trend(conn)
    assert ids(stored=True) == ids(stored=False)


def test_a_schema_v2_database_still_lists_and_searches_papers() -> None:
    from catalog.db import schema
    old = sqlite3.connect(":memory:")
    old.row_factory = sqlite3.Row
    for version, script in enumerate(schema.MIGRATIONS[:2], start=1):
        old.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
    old.execute("INSERT INTO papers (id, title, published, citation_count) VALUES "
                "(1, 'Old cited', '2020-01-01', 3), (2, 'New cited', '2021-01-01', 1)")
    assert not store_papers.has_stored_trend(old)
    body = store_papers.list_papers(old, Page(1, 20), {}, order_by="trending", order_dir="desc",
                                    latest_only=True, authors=[])
    assert [p["id"] for p in body["results"]] == ["2", "1"]  # 1/30 before 3/396
    found = store_papers.list_papers(old, Page(1, 20), {"search": "old"}, order_by="trending", order_dir="desc",
                                     latest_only=True, authors=[])
    assert [p["id"] for p in found["results"]] == ["1"]


@pytest.mark.parametrize("filters", [{"search": "attention"}, {"task": "20"}, {}])
def test_a_page_past_the_end_still_counts_every_match(conn: sqlite3.Connection, filters: dict[str, str]) -> None:
    def body(page: int) -> dict:
        return store_papers.list_papers(conn, Page(page, 1), filters, order_by="trending", order_dir="desc",
                                        latest_only=True, authors=[])

    first, past = body(1), body(500)
    assert first["count"] > 0 and first["results"]
    assert past["count"] == first["count"] and past["results"] == []
