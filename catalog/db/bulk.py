"""Bulk-load mode of the catalog schema: write without FTS triggers and secondary indexes.

A per-row FTS trigger and a dozen per-row index updates cost more than the
rows themselves on a large import (issue 2 "Performance"). In bulk-load mode
the importer, **on its private temporary copy only** (the server never reads
it; a failed import discards it and the old database stays untouched):

1. :meth:`BulkLoad.begin` drops the ``papers_fts`` sync triggers and, when
   asked, the named secondary indexes of the big tables (:data:`BULK_TABLES`);
   UNIQUE/PRIMARY KEY indexes stay, so ``INSERT OR IGNORE`` still works.
2. The importer writes.
3. :meth:`BulkLoad.restore_indexes` re-creates the indexes (one sorted build
   each) before queries that need them run.
4. :meth:`BulkLoad.finish` rebuilds ``papers_fts`` from ``papers`` (when
   papers changed), re-creates the triggers and runs ``ANALYZE``, all in the
   importer's last transaction, before the atomic swap.

Triggers and indexes are re-created from their own ``sqlite_master`` text,
so the result is exactly the migrated schema.
"""

from __future__ import annotations

import logging
import sqlite3

from catalog.db.schema import analyze, rebuild_fts

__all__ = ["BULK_TABLES", "BulkLoad", "is_empty"]

logger = logging.getLogger(__name__)

# Tables whose secondary indexes a fresh import drops and rebuilds in one pass.
BULK_TABLES = ("papers", "evaluations", "paper_tasks", "paper_methods", "paper_authors", "authors",
               "entity_aliases")


def is_empty(conn: sqlite3.Connection) -> bool:
    """True when the catalog holds no papers and no evaluations (a first import)."""
    return conn.execute("SELECT NOT EXISTS (SELECT 1 FROM papers) AND "
                        "NOT EXISTS (SELECT 1 FROM evaluations)").fetchone()[0] == 1


class BulkLoad:
    """Drops and restores the FTS triggers and (optionally) secondary indexes; see module doc."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._triggers: list[tuple[str, str]] = []
        self._indexes: list[tuple[str, str]] = []

    def begin(self, *, drop_indexes: bool) -> None:
        """Drop the ``papers`` triggers and, if ``drop_indexes``, the BULK_TABLES indexes.

        Worth dropping indexes only when most rows are new: re-creating them
        re-reads whole tables, which costs more than it saves on a small
        import into a large catalog.
        """
        c = self.conn
        self._triggers = c.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                                   "AND tbl_name = 'papers' ORDER BY name").fetchall()
        for name, _ in self._triggers:
            c.execute(f'DROP TRIGGER "{name}"')
        if drop_indexes:
            marks = ",".join("?" * len(BULK_TABLES))
            # sql IS NULL marks UNIQUE/PRIMARY KEY autoindexes, which cannot be dropped.
            self._indexes = c.execute(f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
                                      f"sql IS NOT NULL AND tbl_name IN ({marks}) ORDER BY name",
                                      BULK_TABLES).fetchall()
            for name, _ in self._indexes:
                c.execute(f'DROP INDEX "{name}"')
        logger.info("bulk load: %d triggers and %d indexes dropped", len(self._triggers), len(self._indexes))

    def restore_indexes(self) -> None:
        """Re-create the dropped indexes (idempotent)."""
        indexes, self._indexes = self._indexes, []
        for _, sql in indexes:
            self.conn.execute(sql)

    def finish(self, *, rebuild: bool) -> None:
        """Restore indexes, rebuild ``papers_fts`` if ``rebuild``, re-create the triggers,
        and refresh the planner's statistics (:func:`catalog.db.schema.analyze`)."""
        self.restore_indexes()
        if rebuild:
            rebuild_fts(self.conn)
        triggers, self._triggers = self._triggers, []
        for _, sql in triggers:
            self.conn.execute(sql)
        analyze(self.conn)
