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

Bounds (:mod:`catalog.importer.limits`): a file nested deeper than 64 levels,
or holding a string, number, record or line beyond its bound, is refused
before it is parsed (``error: <file>: ... at byte N (record R)``, exit 2, the
old database untouched); a field longer than its bound (title 2,000
characters, abstract 65,536, ...) is cut (a URL dropped) and counted.

Summary line per source: ``<file> (<kind>): read N, inserted N, updated N,
skipped N`` and, when non-zero, ``cut N oversized fields`` and ``N papers
kept apart``. *read*: records read (for evaluation tables each task,
dataset and leaderboard row); *inserted*: rows new to the catalog, including
rows an earlier source of the same import had only named (a task or method
listed by a paper) and this source describes; *updated*: rows the catalog
already held in full, written again; *skipped*: malformed records (first
reasons printed); *cut*: oversized fields cut or dropped; *kept apart*:
records whose ``paper_url`` names a paper with another arXiv id, stored as
papers of their own rather than merged. Details: :mod:`catalog.importer.stats`.
"""

from __future__ import annotations

from catalog.importer.run import run_import

__all__ = ["run_import"]
