"""catalog-extras.json and the dump formats the real data lacks (papers, links, methods, datasets)."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

from catalog.importer import run_import
from catalog.sample import sample_sources

TABLES = ("papers", "tasks", "datasets", "methods", "evaluations", "repositories", "lineage",
          "organizations", "paper_organizations", "frameworks", "paper_frameworks", "conferences",
          "external_metadata", "paper_markdown", "authors", "paper_authors", "paper_tasks")


def _counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        conn.close()


def test_reimporting_every_sample_format_changes_no_counts(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert run_import(db, sample_sources(), out=io.StringIO()) == 0
    first = _counts(db)
    out = io.StringIO()
    assert run_import(db, sample_sources(), out=out) == 0
    assert _counts(db) == first
    for line in out.getvalue().splitlines():
        if "): read " in line:
            assert ", inserted 0," in line, line


def test_extras_entries_naming_unknown_things_are_skipped_with_reasons(tmp_path: Path) -> None:
    extras = {
        "areas": [{"name": "Computer Vision"}],
        "tasks": [{"name": "Image Classification", "area": "Computer Vision"},
                  {"name": "Fine-Grained Image Classification", "parent": "Image Classification"}],
        "lineage": [{"predecessor": "1512.03385", "successor": "9999.99999"}],
        "evaluations": [{"task": "Nope", "dataset": "Nope", "model_name": "M", "metrics": {"A": 1}}],
        "frameworks": [{"slug": "x", "name": "X"}],
    }
    path = tmp_path / "catalog-extras.json"
    path.write_text(json.dumps(extras), encoding="utf-8")
    out = io.StringIO()
    assert run_import(tmp_path / "c.db", [path], out=out) == 0
    text = out.getvalue()
    assert "skipped 3" in text
    assert "unknown paper '1512.03385'" in text and "unknown task or dataset" in text
    conn = sqlite3.connect(tmp_path / "c.db")
    child = conn.execute("SELECT t.level, a.name FROM tasks t JOIN areas a ON a.id = t.area_id "
                         "WHERE t.name = 'Fine-Grained Image Classification'").fetchone()
    conn.close()
    assert child == (1, "Computer Vision")


def test_links_mark_official_code_and_frameworks_of_sample_papers(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert run_import(db, sample_sources(), out=io.StringIO()) == 0
    conn = sqlite3.connect(db)
    row = conn.execute("SELECT has_official_implementation, code_repository_count FROM papers "
                       "WHERE arxiv_id = '1706.03762'").fetchone()
    frameworks = {s for (s,) in conn.execute(
        "SELECT f.slug FROM paper_frameworks pf JOIN frameworks f ON f.id = pf.framework_id "
        "JOIN papers p ON p.id = pf.paper_id WHERE p.arxiv_id = '1706.03762'")}
    years = conn.execute("SELECT first_paper_year, latest_paper_year FROM organizations "
                         "WHERE slug = 'google'").fetchone()
    conn.close()
    assert row == (1, 2)
    assert frameworks == {"tensorflow", "pytorch"}
    assert years == (2013, 2021)
