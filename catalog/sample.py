"""The bundled sample catalog: ``build_sample_db(path)`` imports ``catalog/sample/``.

``pwc-catalog serve --sample`` calls it. The sample holds the public dump
formats (papers, links, methods, datasets, evaluation tables), an arXiv OAI
JSON-lines file (papers known only through external metadata), a Markdown
folder and ``catalog-extras.json``; see ``catalog/sample/README.md``.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

from catalog.db.provenance import SAMPLE_DIR
from catalog.importer import run_import

__all__ = ["SAMPLE_DIR", "SAMPLE_SOURCES", "build_sample_db", "sample_sources"]

logger = logging.getLogger(__name__)

SAMPLE_SOURCES = (
    "papers-with-abstracts.json",
    "methods.json",
    "datasets.json",
    "evaluation-tables.json",
    "links-between-papers-and-code.json",
    "arxiv-metadata-oai-snapshot.jsonl",
    "markdown",
    "catalog-extras.json",
)


def sample_sources() -> list[Path]:
    """Paths of the bundled sample sources, in import order."""
    return [SAMPLE_DIR / name for name in SAMPLE_SOURCES]


def build_sample_db(path: Path) -> None:
    """Import the bundled sample into the SQLite file ``path`` (replaced if it exists).

    Raises:
        RuntimeError: the import failed (the message holds the importer's output);
            this means the bundled sample or the schema is broken.
    """
    out = io.StringIO()
    code = run_import(Path(path), sample_sources(), out=out)
    if code != 0:
        raise RuntimeError(f"sample catalog import failed: {out.getvalue().strip()}")
    logger.info("sample catalog built")
