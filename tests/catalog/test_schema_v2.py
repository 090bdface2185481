"""Migration 2: a version-1 catalog gains the lookup indexes, keeps its data, and is served meanwhile."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from catalog.db import schema
from catalog.store.core import Store, resolve_paper

V2_INDEXES = {"papers_arxiv_nocase", "papers_trend", "external_metadata_arxiv_nocase", "datasets_slug_nocase",
              "paper_tasks_task_paper", "paper_methods_method_paper", "paper_authors_author_paper"}


def _v1_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(f"BEGIN;\n{schema.MIGRATIONS[0]}\nPRAGMA user_version = 1;\nCOMMIT;")
    conn.execute("INSERT INTO papers (id, arxiv_id, title, abstract, authors) "
                 "VALUES (1, 'math.GT/0309136', 'Ricci Flow', 'Surgery.', '[]')")
    conn.commit()
    conn.close()
    return path


def _indexes(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_migrating_a_version_1_catalog_adds_the_indexes_and_keeps_rows(tmp_path: Path) -> None:
    conn = sqlite3.connect(_v1_db(tmp_path / "c.db"))
    assert not V2_INDEXES & _indexes(conn)
    assert schema.migrate(conn) == schema.SCHEMA_VERSION >= 2
    assert _indexes(conn) >= V2_INDEXES
    assert "paper_tasks_task" not in _indexes(conn)  # replaced by the covering index
    assert conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'ricci'").fetchall() == [(1,)]
    conn.close()


def test_a_version_1_catalog_is_served_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _v1_db(tmp_path / "c.db")
    with caplog.at_level(logging.WARNING, logger="catalog.store.core"):
        store = Store(path)
    assert any("older than" in r.getMessage() for r in caplog.records)
    assert resolve_paper(store.conn(), "MATH.gt/0309136")["id"] == 1


def test_a_current_catalog_is_served_without_a_warning(catalog_db: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="catalog.store.core"):
        Store(catalog_db)
    assert not caplog.records
