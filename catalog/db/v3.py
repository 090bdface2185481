"""Migration 3 of the catalog schema: archive-size paper lists and task benchmarks.

Found with ``EXPLAIN QUERY PLAN`` on a catalog generated at the July 2025
archive's counts (576,261 papers, 274,000 leaderboard rows; issue 19). Each
addition names the query it serves:

* ``papers.trend``: the trend score of ``catalog.store.papers`` (``TREND_SQL``),
  stored by the importer after every import (a derived column, like
  ``has_official_implementation``). The score only depends on the newest
  paper date, which changes only on import, so ``order_by=trending`` can read
  it from an index instead of computing it for every matching paper.
* ``papers_list_*``: covering indexes for ``papers/`` and ``tasks/<id>/papers``.
  Each holds the equality filters first (``is_latest``, the default
  ``latest_only``; ``has_official_implementation`` in ``_official``), then
  the whole ordering including the ``id`` tie-break, then the other filter
  columns. A page, page 1000 included, is read from the index in order, with
  no sort and without touching the large paper rows: ``_trend`` and
  ``_official`` for ``order_by=trending``, ``_date`` for
  ``order_by=date_published``, ``_citations`` for ``order_by=citation_count``.
  (``catalog.store.papers`` keeps a date range from driving a trend-ordered
  query, which would sort most of the catalog.)
* ``papers_id_cover``: the same columns keyed by id, for papers reached from
  a link table or the FTS index (``task``, ``method``, ``author`` and
  ``search`` filters, leaderboard rows of trending benchmarks): a small index
  entry per paper instead of its large table row (with its abstract).
* The importer runs ``ANALYZE`` at the end (``catalog.db.schema.analyze``), so
  the planner knows that ``is_latest`` barely filters and drives a filtered
  list from the filter's papers, not from a scan of every paper.
* ``evaluations_task_dataset`` replaces ``evaluations_task``: the grouped
  per-dataset statistics and best rows of one task (task page, trending
  benchmarks) read one index range; it holds ``model_name``, so the best row
  of every benchmark of a task is read from the index alone.
  ``evaluations_dataset_paper`` covers the per-dataset evaluation and
  distinct-paper counts.
* ``repositories_paper_cover``: a task page's recommended repositories (the
  most starred of its papers' repositories) from the index alone.

Plain SQL run by :func:`catalog.db.schema.migrate` in one transaction. Never edit
it once released: append migration 4 instead.
"""

from __future__ import annotations

__all__ = ["V3"]

V3 = """
ALTER TABLE papers ADD COLUMN trend REAL NOT NULL DEFAULT 0;

CREATE INDEX papers_list_trend ON papers(is_latest, trend, citation_count, id, has_official_implementation,
                                         published, conference_id);
CREATE INDEX papers_list_official ON papers(has_official_implementation, is_latest, trend, citation_count, id,
                                            published);
CREATE INDEX papers_list_date ON papers(is_latest, published, id, has_official_implementation, conference_id);
CREATE INDEX papers_list_citations ON papers(is_latest, citation_count, id, has_official_implementation,
                                             published, conference_id);
CREATE INDEX papers_id_cover ON papers(id, is_latest, trend, citation_count, published,
                                       has_official_implementation);

DROP INDEX evaluations_task;
CREATE INDEX evaluations_task_dataset ON evaluations(task_id, dataset_id, best_rank, model_name);
CREATE INDEX evaluations_dataset_paper ON evaluations(dataset_id, paper_id);
CREATE INDEX repositories_paper_cover ON repositories(paper_id, url, stars);
"""
