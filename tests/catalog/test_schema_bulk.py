"""Bulk-load imports: FTS rebuilt, triggers and indexes restored exactly, old DB kept on failure."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from catalog.db import schema
from catalog.db.bulk import BulkLoad, is_empty
from catalog.importer import run_import
from catalog.sample import sample_sources

FTS_TRIGGERS = {"papers_fts_delete", "papers_fts_insert", "papers_fts_update"}


def _import(db: Path, *sources: Path) -> str:
    out = io.StringIO()
    assert run_import(db, list(sources), out=out) == 0, out.getvalue()
    return out.getvalue()


def _ddl(conn: sqlite3.Connection) -> set[tuple[str, str, str]]:
    return {(t, n, s) for t, n, s in conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL")}


def _fts(conn: sqlite3.Connection, match: str) -> list[int]:
    return [r[0] for r in conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid",
                                       (match,))]


def _papers(path: Path, *titles: str) -> Path:
    path.write_text(json.dumps([
        {"paper_url": f"https://paperswithcode.com/paper/p{i}", "arxiv_id": f"2401.{10000 + i}",
         "title": title, "abstract": "An abstract.", "authors": ["Ada Lovelace"], "tasks": [],
         "date": "2024-01-02", "methods": []} for i, title in enumerate(titles)]))
    return path


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bulk") / "sample.db"
    _import(db, *sample_sources())
    return db


def test_a_first_import_ends_with_exactly_the_migrated_triggers_and_indexes(sample: Path,
                                                                             tmp_path: Path) -> None:
    fresh = schema.create_db(tmp_path / "fresh.db")
    conn = sqlite3.connect(sample)
    try:
        assert _ddl(conn) == _ddl(fresh)
        assert schema.schema_version(conn) == schema.SCHEMA_VERSION
    finally:
        conn.close()
        fresh.close()


def test_an_import_rebuilds_the_fts_index_so_keyword_search_finds_imported_papers(sample: Path) -> None:
    conn = sqlite3.connect(sample)
    try:
        indexed = conn.execute("SELECT count(*) FROM papers_fts").fetchone()[0]
        assert indexed == conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        conn.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES ('integrity-check', 1)")
        title_id = conn.execute("SELECT id FROM papers WHERE title LIKE 'Attention Is All You Need%'").fetchone()[0]
        assert title_id in _fts(conn, '"attention is all you need"')
    finally:
        conn.close()


def test_after_an_import_the_triggers_keep_the_fts_index_in_sync(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _import(db, _papers(tmp_path / "papers-with-abstracts.json", "Quokka Networks"))
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE papers SET title = 'Wombat Networks' WHERE title = 'Quokka Networks'")
        assert _fts(conn, "quokka") == []
        assert len(_fts(conn, "wombat")) == 1
    finally:
        conn.close()


def test_a_reimport_into_a_filled_catalog_updates_the_fts_index(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _import(db, _papers(tmp_path / "papers-with-abstracts.json", "Quokka Networks", "Platypus Models"))
    (tmp_path / "v2").mkdir()
    _import(db, _papers(tmp_path / "v2" / "papers-with-abstracts.json", "Echidna Networks"))
    conn = sqlite3.connect(db)
    try:
        assert _fts(conn, "quokka") == []
        assert len(_fts(conn, "echidna")) == len(_fts(conn, "platypus")) == 1
        fresh = schema.create_db(tmp_path / "fresh.db")
        assert _ddl(conn) == _ddl(fresh)
        fresh.close()
    finally:
        conn.close()


def test_a_failed_import_leaves_the_previous_database_and_its_fts_untouched(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _import(db, _papers(tmp_path / "papers-with-abstracts.json", "Quokka Networks"))
    bad = tmp_path / "bad" / "papers-with-abstracts.json"
    bad.parent.mkdir()
    bad.write_text('[{"title": "Wombat", "arxiv_id": "2401.20000"}, {"title": ')
    out = io.StringIO()
    assert run_import(db, [bad], out=out) == 2
    conn = sqlite3.connect(db)
    try:
        assert len(_fts(conn, "quokka")) == 1
        assert _fts(conn, "wombat") == []
        assert {n for _, n, _ in _ddl(conn) if n.startswith("papers_fts")} == FTS_TRIGGERS
    finally:
        conn.close()


@pytest.mark.parametrize("drop_indexes", [pytest.param(True, id="with-indexes"),
                                          pytest.param(False, id="triggers-only")])
def test_bulk_load_restores_what_it_dropped(tmp_path: Path, drop_indexes: bool) -> None:
    conn = schema.create_db(tmp_path / "c.db")
    before = _ddl(conn)
    assert is_empty(conn)
    bulk = BulkLoad(conn)
    bulk.begin(drop_indexes=drop_indexes)
    remaining = _ddl(conn)
    assert not any(kind == "trigger" for kind, _, _ in remaining)
    names = {name for _, name, _ in remaining}
    assert ("evaluations_paper" in names) is (not drop_indexes)
    conn.execute("INSERT INTO papers (id, title, abstract, authors) VALUES (1, 'Kiwi', '', '[]')")
    bulk.finish(rebuild=True)
    assert _ddl(conn) == before
    assert _fts(conn, "kiwi") == [1]
    assert not is_empty(conn)
