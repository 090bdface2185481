"""Migration 2 of the catalog schema: indexes for the hot read paths and the FTS rank.

Found with ``EXPLAIN QUERY PLAN`` on a 100,000-paper catalog (issue 2
"Performance"); each index names the query it serves:

* ``papers_arxiv_nocase``: ``store.resolve_paper`` and the arXiv pin of
  ``search`` compare ``arxiv_id = ? COLLATE NOCASE``, which the binary UNIQUE
  index cannot serve (a full scan per paper info, read or related call).
* ``external_metadata_arxiv_nocase``: the same comparison in
  ``store_public.metadata_by_reference``.
* ``*_slug_nocase``: ``slug = ? COLLATE NOCASE`` lookups of benchmarks,
  methods, tasks, conferences and organizations by slug.
* ``papers_trend`` covers the trend score's columns: ``papers/`` counts
  (``is_latest = 1``), ``order_by=trending`` and ``papers/trending`` read this
  small index instead of every (large) paper row.
* Covering ``(entity_id, paper_id)`` link indexes replace the one-column
  ones of migration 1: related papers (shared tasks/methods), task pages
  and the author/organization/framework filters of ``papers/`` read
  ``paper_id`` straight from the index instead of one table row per link.

Plain SQL text run by :func:`catalog.db.schema.migrate` inside one transaction.
Never edit it once released: append migration 3 instead.
"""

from __future__ import annotations

__all__ = ["V2"]

V2 = """
CREATE INDEX papers_arxiv_nocase ON papers(arxiv_id COLLATE NOCASE);
CREATE INDEX external_metadata_arxiv_nocase ON external_metadata(arxiv_id COLLATE NOCASE);
CREATE INDEX papers_trend ON papers(published, popularity, citation_count, is_latest);

CREATE INDEX datasets_slug_nocase ON datasets(slug COLLATE NOCASE);
CREATE INDEX methods_slug_nocase ON methods(slug COLLATE NOCASE);
CREATE INDEX tasks_slug_nocase ON tasks(slug COLLATE NOCASE);
CREATE INDEX conferences_slug_nocase ON conferences(slug COLLATE NOCASE);
CREATE INDEX organizations_slug_nocase ON organizations(slug COLLATE NOCASE);

DROP INDEX paper_tasks_task;
CREATE INDEX paper_tasks_task_paper ON paper_tasks(task_id, paper_id);
DROP INDEX paper_methods_method;
CREATE INDEX paper_methods_method_paper ON paper_methods(method_id, paper_id);
DROP INDEX paper_authors_author;
CREATE INDEX paper_authors_author_paper ON paper_authors(author_id, paper_id);
DROP INDEX paper_organizations_org;
CREATE INDEX paper_organizations_org_paper ON paper_organizations(organization_id, paper_id);
DROP INDEX paper_frameworks_framework;
CREATE INDEX paper_frameworks_framework_paper ON paper_frameworks(framework_id, paper_id);
"""
