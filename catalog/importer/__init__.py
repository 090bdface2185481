"""Catalog importer: the only writer of the catalog database.

``pwc-catalog import --db FILE SOURCE...`` calls :func:`run_import`.

Sources (kind detected from the first record, the file name breaking ties;
``.json`` or ``.json.gz`` by magic bytes):

* Papers with Code dumps, streamed with ``ijson``: ``papers-with-abstracts``,
  ``links-between-papers-and-code``, ``evaluation-tables``, ``methods``,
  ``datasets`` (JSON arrays).
* A folder of paper Markdown, ``<arxiv_id>.md`` or ``<arxiv_id>/<arxiv_id>.md``
  (:func:`catalog.importer.others.markdown_files`).
* arXiv OAI snapshot JSON-lines → ``external_metadata``.
* ``catalog-extras.json``: areas, task hierarchy, conferences, organizations,
  frameworks, lineage, citation counts, HF artifacts, popularity and extended
  leaderboard rows; the format is documented in :mod:`catalog.importer.extras`.

Natural keys (so re-imports update instead of duplicating): papers by arXiv
id (version stripped), else PwC slug; tasks, datasets, methods, areas,
conferences, organizations, frameworks by slug; evaluations by (task,
dataset, model name, paper URL or title, harness, split, methodology).

Leaderboard rank rule: see :mod:`catalog.importer.ranking` (first non-size
metric of ``sota.metrics``; lower is better for error/loss/perplexity-like
names, else higher; competition ranks).
"""

from __future__ import annotations

from catalog.importer.run import run_import

__all__ = ["run_import"]
