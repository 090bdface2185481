"""Store-level behaviour: read-only connections, paper resolution, search helpers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from catalog.search import papers as search
from catalog.store import core as store


def test_store_connections_are_read_only(catalog_db: Path) -> None:
    conn = store.Store(catalog_db).conn()
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM papers")


def test_store_refuses_a_missing_database(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.Store(tmp_path / "missing.db")


@pytest.mark.parametrize(("ref", "paper_id"), [
    pytest.param("3", 3, id="numeric"), pytest.param("1512.03385v2", 3, id="versioned"),
    pytest.param("MATH.GT/0309136", 4, id="legacy-case"), pytest.param("dropout", 5, id="slug"),
])
def test_resolve_paper_accepts_every_reference_form(catalog_db: Path, ref: str, paper_id: int) -> None:
    assert store.resolve_paper(store.Store(catalog_db).conn(), ref)["id"] == paper_id


@pytest.mark.parametrize(("ref", "error"), [
    pytest.param("", store.Invalid, id="empty"), pytest.param("nope", store.NotFound, id="unknown"),
])
def test_resolve_paper_errors_carry_an_http_status(catalog_db: Path, ref: str, error: type[store.StoreError]) -> None:
    with pytest.raises(error) as info:
        store.resolve_paper(store.Store(catalog_db).conn(), ref)
    assert info.value.status in (404, 422)


@pytest.mark.parametrize(("query", "parts"), [
    pytest.param('"a b" c', ['"a b"', '"c"'], id="phrase-and-word"),
    pytest.param('NEAR( "x', ['"x"'], id="syntax-neutralized"),
    pytest.param('NEAR( "AND', ['"NEAR"', '"AND"'], id="only-stop-words-kept"),
    pytest.param('the attention', ['"attention"'], id="stop-word-dropped"),
    pytest.param('""', [], id="empty-phrase"),
])
def test_keyword_parts_are_fts_safe(query: str, parts: list[str]) -> None:
    assert search.keyword_parts(query) == parts


