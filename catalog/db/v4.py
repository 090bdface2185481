"""Migration 4 of the catalog schema: the archive's other names of tasks and datasets.

The evaluation tables give each task ``synonyms`` and ``datasets.json`` gives
each dataset ``variants`` (issue 30 "the catalog's own vocabulary"). Both are
lists of plain names, stored one row per name:

* ``entity_aliases(entity_type, entity_id, alias)``: ``entity_type`` is
  ``'task'`` (a synonym) or ``'dataset'`` (a variant); ``entity_id`` the row
  of ``tasks`` or ``datasets``. No foreign key: one table serves two
  parents. The importer replaces an entity's aliases with those of the
  records that list them (``catalog.importer.writer.Writer.set_aliases``).
* ``entity_aliases_alias_nocase``: look-ups of a name typed in any case.

``catalog.search.vocabulary`` reads them so a query naming a synonym or a variant
matches its task or dataset. Plain SQL run by :func:`catalog.db.schema.migrate`
in one transaction. Never edit it once released: append migration 5 instead.
"""

from __future__ import annotations

__all__ = ["V4"]

V4 = """
CREATE TABLE entity_aliases (
    entity_type TEXT NOT NULL,   -- 'task' (synonym) | 'dataset' (variant)
    entity_id INTEGER NOT NULL,  -- tasks.id or datasets.id
    alias TEXT NOT NULL,
    PRIMARY KEY (entity_type, entity_id, alias)
) WITHOUT ROWID;
CREATE INDEX entity_aliases_alias_nocase ON entity_aliases(alias COLLATE NOCASE);
"""
