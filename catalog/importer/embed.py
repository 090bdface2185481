"""Building the semantic index (format: ``catalog.search.vectors``): embed every paper, then publish.

The importer builds it on its private copy of the database and publishes it after the swap;
``pwc-catalog embed`` rebuilds it for a database in place.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from catalog.db.provenance import record_embedding
from catalog.search.embeddings import DEFAULT_EMBEDDER, Embedder, document_text, get_embedder
from catalog.search.vectors import BATCH, FORMAT, STAMP_KEY, manifest_path, quantize
from catalog.store.filters import date_key

__all__ = ["PendingVectors", "build_vectors", "embed_database"]


class PendingVectors:
    """Vectors built for a database that is not yet in place; :meth:`publish` after the swap."""

    def __init__(self, db: Path, stamp: str, manifest: dict[str, object]) -> None:
        self.db, self.stamp, self.manifest = db, stamp, manifest
        self._done = False

    def _tmp_manifest(self) -> Path:
        return self.db.with_name(f"{self.db.name}.vectors-{self.stamp}.json")

    def publish(self) -> None:
        """Make these vectors current (atomic manifest replace) and delete older vector files."""
        os.replace(self._tmp_manifest(), manifest_path(self.db))
        self._done = True
        keep = {str(self.manifest["matrix"]), str(self.manifest["columns"])}
        for old in self.db.parent.glob(f"{self.db.name}.vectors-*"):
            if old.name not in keep:
                old.unlink(missing_ok=True)  # readers that still map it keep the inode

    def discard(self) -> None:
        """Remove the unpublished files (no-op after :meth:`publish`)."""
        if self._done:
            return
        self._done = True
        for name in (self.manifest["matrix"], self.manifest["columns"], self._tmp_manifest().name):
            self.db.with_name(str(name)).unlink(missing_ok=True)


def _embed_progress(out: TextIO | None, quiet: bool, count: int, name: str) -> Any:
    """A tqdm bar over papers when ``out`` is a terminal (else None, after a plain stage line)."""
    if out is None or quiet:
        return None
    isatty = getattr(out, "isatty", None)
    if callable(isatty) and isatty():
        from tqdm import tqdm

        return tqdm(total=count, unit=" papers", unit_scale=True, file=out, desc="embedding", leave=False)
    print(f"embedding {count} papers with {name}", file=out, flush=True)
    return None


def build_vectors(conn: sqlite3.Connection, db: Path, *, out: TextIO | None = None,
                  embedder: Embedder | None = None, quiet: bool = False) -> PendingVectors:
    """Embed every paper of ``conn``'s database and write the files for ``db`` (not yet published).

    Writes a fresh stamp into ``catalog_meta`` of ``conn`` (autocommit) so the
    database and the vectors name each other. Memory stays at one batch of
    texts plus the int8 matrix. Progress goes to ``out`` (a bar on a terminal,
    plain lines otherwise; none with ``quiet``), then one summary line.
    """
    started = time.perf_counter()
    embedder = embedder or get_embedder(DEFAULT_EMBEDDER)
    stamp = secrets.token_hex(8)
    count = int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])
    matrix_name, columns_name = f"{db.name}.vectors-{stamp}.npy", f"{db.name}.vectors-{stamp}.npz"
    pending = PendingVectors(db, stamp, {
        "format": FORMAT, "stamp": stamp, "embedder": embedder.name, "embedder_version": embedder.version,
        "dimension": embedder.dimension, "count": count, "matrix": matrix_name, "columns": columns_name,
        "text": "title + abstract[:1200]"})
    bar = _embed_progress(out, quiet, count, embedder.name)
    try:
        matrix = np.lib.format.open_memmap(db.with_name(matrix_name), mode="w+", dtype=np.int8,
                                           shape=(count, embedder.dimension))
        ids = np.zeros(count, dtype=np.int64)
        scale = np.zeros(count, dtype=np.float32)
        published = np.zeros(count, dtype=np.int32)
        official = np.zeros(count, dtype=np.int8)
        cursor = conn.execute("SELECT id, title, abstract, published, has_official_implementation "
                              "FROM papers ORDER BY id")
        done = 0
        while done < count:
            rows = cursor.fetchmany(BATCH)
            if not rows:
                break
            rows = rows[: count - done]
            end = done + len(rows)
            q, s = quantize(embedder.embed([document_text(r[1], r[2]) for r in rows]))
            matrix[done:end] = q
            scale[done:end] = s
            ids[done:end] = [r[0] for r in rows]
            published[done:end] = [date_key(r[3]) for r in rows]
            official[done:end] = [1 if r[4] else 0 for r in rows]
            done = end
            if bar is not None:
                bar.update(len(rows))
            elif out is not None and not quiet and done % (BATCH * 25) == 0:
                print(f"  embedded {done} of {count} papers", file=out, flush=True)
        matrix.flush()
        del matrix
        np.savez(db.with_name(columns_name), ids=ids[:done], scale=scale[:done], published=published[:done],
                 official=official[:done])
        if done != count:  # the table changed under us: cannot happen on the importer's private copy
            raise OSError(f"papers changed while embedding ({done} of {count})")
        conn.execute("INSERT OR REPLACE INTO catalog_meta (key, value) VALUES (?, ?)", (STAMP_KEY, stamp))
        record_embedding(conn, model=embedder.name, version=embedder.version, dimension=embedder.dimension,
                         papers=count)
        pending._tmp_manifest().write_text(json.dumps(pending.manifest, indent=1), encoding="utf-8")
    except BaseException:
        pending.discard()
        raise
    finally:
        if bar is not None:
            bar.close()
    if out is not None:
        elapsed = time.perf_counter() - started
        print(f"embedded {count} papers with {embedder.name} in {elapsed:.1f} s "
              f"({count / elapsed if elapsed > 0 else 0:.0f} papers/s)", file=out, flush=True)
    return pending


def embed_database(db: Path, *, out: TextIO, quiet: bool = False) -> int:
    """``pwc-catalog embed``: (re)build the semantic index of an existing database; exit code.

    ``quiet``: no progress, only errors and the summary line.
    """
    db = Path(db)
    if not db.is_file():
        print(f"error: catalog database not found: {db}", file=out)
        return 1
    try:
        conn = sqlite3.connect(str(db), isolation_level=None)
        try:
            pending = build_vectors(conn, db, out=out, quiet=quiet)
        finally:
            conn.close()
        pending.publish()
    except (sqlite3.Error, OSError) as exc:
        print(f"error: cannot build the semantic index of {db}: {exc}", file=out)
        return 1
    return 0
