"""Derived columns the importer maintains after every import (see ``catalog.db.schema``)."""

from __future__ import annotations

import sqlite3

from catalog.store.core import newest_paper_date
from catalog.store.papers import TREND_SQL

__all__ = ["update_derived", "update_trend"]


def update_derived(conn: sqlite3.Connection) -> None:
    """Recompute ``papers.code_repository_count`` / ``has_official_implementation``,
    ``papers.trend``, framework links from repository frameworks, and organization
    paper years.

    Runs inside the importer's last transaction; idempotent.
    """
    # Only rows whose counts can change are rewritten (paper rows are large).
    conn.execute("UPDATE papers SET code_repository_count = (SELECT count(*) FROM repositories r "
                 "WHERE r.paper_id = papers.id), has_official_implementation = EXISTS (SELECT 1 "
                 "FROM repositories r WHERE r.paper_id = papers.id AND r.is_official = 1) "
                 "WHERE code_repository_count != 0 OR has_official_implementation != 0 OR "
                 "id IN (SELECT paper_id FROM repositories)")
    # Papers use a framework when one of their repositories is written with it; the
    # dump labels TensorFlow "tf".
    conn.execute("INSERT OR IGNORE INTO paper_frameworks (paper_id, framework_id) SELECT "
                 "r.paper_id, f.id FROM repositories r JOIN frameworks f ON f.slug = CASE "
                 "lower(r.framework) WHEN 'tf' THEN 'tensorflow' ELSE lower(r.framework) END")
    conn.execute("UPDATE organizations SET first_paper_year = (SELECT min(CAST(substr(p.published,"
                 " 1, 4) AS INTEGER)) FROM paper_organizations po JOIN papers p ON p.id = "
                 "po.paper_id WHERE po.organization_id = organizations.id AND p.published IS NOT "
                 "NULL), latest_paper_year = (SELECT max(CAST(substr(p.published, 1, 4) AS "
                 "INTEGER)) FROM paper_organizations po JOIN papers p ON p.id = po.paper_id "
                 "WHERE po.organization_id = organizations.id AND p.published IS NOT NULL)")
    update_trend(conn)


def update_trend(conn: sqlite3.Connection) -> None:
    """Store ``papers.trend``: the store's ``TREND_SQL`` at the newest paper date.

    Ordering by the (indexed) column then equals ordering by the expression.
    Only rows whose score changes are rewritten; papers without signals keep 0.
    """
    conn.execute(f"UPDATE papers AS p SET trend = {TREND_SQL} WHERE p.trend IS NOT {TREND_SQL}",
                 {"newest": newest_paper_date(conn) or "1970-01-01"})
