"""Schema migrations: an empty database reaches the current version, idempotently."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from catalog.db import schema


def test_migrate_brings_an_empty_database_to_the_current_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "c.db"))
    assert schema.schema_version(conn) == 0
    assert schema.migrate(conn) == schema.SCHEMA_VERSION
    # A second run applies nothing and keeps the version.
    assert schema.migrate(conn) == schema.SCHEMA_VERSION
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"papers", "evaluations", "paper_markdown", "external_metadata", "papers_fts"} <= tables


def test_migrate_refuses_a_database_newer_than_the_code(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "c.db"))
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    with pytest.raises(RuntimeError, match="newer"):
        schema.migrate(conn)


def test_fts_triggers_keep_keyword_search_in_sync(tmp_path: Path) -> None:
    conn = schema.create_db(tmp_path / "c.db")
    conn.execute("INSERT INTO papers (id, title, abstract, authors) VALUES (1, 'Attention', 'x', '[]')")
    conn.execute("UPDATE papers SET title = 'Residual Learning' WHERE id = 1")
    hits = conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'residual'").fetchall()
    assert hits == [(1,)]
    assert conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'attention'").fetchall() == []


@pytest.mark.parametrize(("title", "normalized", "prefix"), [
    pytest.param("Attention Is  All You Need!", "attention is all you need", None, id="plain"),
    pytest.param("LLaMA: Open and Efficient", "llama open and efficient", "llama", id="colon"),
    pytest.param(": odd", "odd", None, id="empty-prefix"),
])
def test_title_helpers_normalize_and_split_the_name_prefix(title: str, normalized: str, prefix: str | None) -> None:
    assert schema.normalize_title(title) == normalized
    assert schema.title_prefix(title) == prefix


def test_content_version_is_the_sha256_of_the_utf8_text() -> None:
    import hashlib

    assert schema.content_version("é中") == hashlib.sha256("é中".encode()).hexdigest()
