"""Building the semantic index (format: ``catalog.search.vectors``): embed every paper, then publish.

The importer builds it on its private copy of the database and publishes it after the swap;
``pwc-catalog embed`` rebuilds it for a database in place. On a re-import, a paper whose
embedded text (:func:`catalog.search.embeddings.document_text`) is the same in the database
being replaced keeps its vector from that database's index, when that index is the one its
stamp names and was built by the same embedder and weights: the result is the one a full
rebuild gives, under a fresh stamp.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, TextIO

import numpy as np

from catalog.db.provenance import record_embedding
from catalog.search.embeddings import (
    ABSTRACT_CHARS,
    DEFAULT_EMBEDDER,
    Embedder,
    document_text,
    get_embedder,
)
from catalog.search.vectors import (
    BATCH,
    FORMAT,
    STAMP_KEY,
    VectorIndex,
    VectorsUnavailable,
    load_index,
    manifest_path,
    quantize,
)
from catalog.store.filters import date_key

__all__ = ["PendingVectors", "build_vectors", "embed_database"]

logger = logging.getLogger(__name__)
TEXT = f"title + abstract[:{ABSTRACT_CHARS}]"  # what document_text embeds (the manifest's "text")


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


class _Progress(Protocol):
    """What the embedding loop calls on a progress bar (tqdm's)."""

    def update(self, n: float = 1) -> bool | None: ...

    def close(self) -> None: ...


def _embed_progress(out: TextIO | None, quiet: bool, count: int, name: str) -> _Progress | None:
    """A tqdm bar over papers when ``out`` is a terminal (else None, after a plain stage line)."""
    if out is None or quiet:
        return None
    isatty = getattr(out, "isatty", None)
    if callable(isatty) and isatty():
        from tqdm import tqdm

        return tqdm(total=count, unit=" papers", unit_scale=True, file=out, desc="embedding", leave=False)
    print(f"embedding {count} papers with {name}", file=out, flush=True)
    return None


class _Previous:
    """The vectors of the database being replaced, by paper id, with the text each embedded."""

    def __init__(self, db: Path, embedder: Embedder) -> None:
        self.index: VectorIndex | None = None
        self._conn: sqlite3.Connection | None = None
        self._next: tuple[int, str | None, str | None] | None = None
        try:
            if not db.is_file() or json.loads(manifest_path(db).read_text(encoding="utf-8")).get("text") != TEXT:
                return
            self._conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            row = self._conn.execute("SELECT value FROM catalog_meta WHERE key = ?", (STAMP_KEY,)).fetchone()
            index = load_index(db, None if row is None else str(row[0]))  # its own stamp, embedder, weights
            same_embedder = (index.embedder.name, index.embedder.version, index.embedder.dimension) == (
                embedder.name, embedder.version, embedder.dimension)
            if not same_embedder or bool(np.any(np.diff(index.ids) <= 0)):  # written in id order
                return
            self._old = self._papers(self._conn.execute("SELECT id, title, abstract FROM papers ORDER BY id"))
            self._next = next(self._old, None)
            self.index = index
        except (OSError, ValueError, AttributeError, sqlite3.Error, VectorsUnavailable) as exc:
            logger.info("embedding every paper: the previous semantic index is not reusable (%s)", exc)

    @staticmethod
    def _papers(cursor: sqlite3.Cursor) -> Iterator[tuple[int, str | None, str | None]]:
        while batch := cursor.fetchmany(BATCH):
            yield from batch

    def rows(self, ids: list[int], texts: list[str]) -> list[int]:
        """Per paper (ids ascending, after the ids of earlier calls): the row of its previous
        vector when that embedded the same text, else -1."""
        out = []
        for pid, text in zip(ids, texts, strict=True):
            while self._next is not None and self._next[0] < pid:
                self._next = next(self._old, None)
            row = -1
            if self.index is not None and self._next is not None and self._next[0] == pid \
                    and document_text(self._next[1], self._next[2]) == text:
                at = int(np.searchsorted(self.index.ids, pid))
                row = at if at < len(self.index.ids) and int(self.index.ids[at]) == pid else -1
            out.append(row)
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def build_vectors(conn: sqlite3.Connection, db: Path, *, out: TextIO | None = None,
                  embedder: Embedder | None = None, quiet: bool = False,
                  previous: Path | None = None) -> PendingVectors:
    """Embed every paper of ``conn``'s database and write the files for ``db`` (not yet published).

    Writes a fresh stamp into ``catalog_meta`` of ``conn`` (autocommit) so the
    database and the vectors name each other. Memory stays at one batch of
    texts plus the int8 matrix. Progress goes to ``out`` (a bar on a terminal,
    plain lines otherwise; none with ``quiet``), then one summary line.
    ``previous``: the database ``conn``'s replaces (the importer's ``db`` before the
    swap); its papers with the same text keep their vectors (see the module doc).
    """
    started = time.perf_counter()
    embedder = embedder or get_embedder(DEFAULT_EMBEDDER)
    reuse = _Previous(previous, embedder) if previous is not None else None
    reused = 0
    stamp = secrets.token_hex(8)
    count = int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])
    matrix_name, columns_name = f"{db.name}.vectors-{stamp}.npy", f"{db.name}.vectors-{stamp}.npz"
    pending = PendingVectors(db, stamp, {
        "format": FORMAT, "stamp": stamp, "embedder": embedder.name, "embedder_version": embedder.version,
        "dimension": embedder.dimension, "count": count, "matrix": matrix_name, "columns": columns_name,
        "text": TEXT})
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
            texts = [document_text(r[1], r[2]) for r in rows]
            ids[done:end] = [r[0] for r in rows]
            kept = reuse.rows([r[0] for r in rows], texts) if reuse is not None else [-1] * len(rows)
            fresh = [i for i, row in enumerate(kept) if row < 0]
            if len(fresh) < len(rows):
                assert reuse is not None and reuse.index is not None
                old = [(i, row) for i, row in enumerate(kept) if row >= 0]
                at, rows_at = np.array([done + i for i, _ in old]), np.array([row for _, row in old])
                matrix[at] = reuse.index.matrix[rows_at]
                scale[at] = reuse.index.scale[rows_at]
                reused += len(old)
            if fresh:
                q, s = quantize(embedder.embed([texts[i] for i in fresh]))
                at = np.array([done + i for i in fresh])
                matrix[at] = q
                scale[at] = s
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
        if reuse is not None:
            reuse.close()
    if out is not None:
        elapsed = time.perf_counter() - started
        if reused:
            print(f"indexed {count} papers with {embedder.name} in {elapsed:.1f} s: {count - reused} embedded, "
                  f"{reused} with unchanged text kept from the previous index", file=out, flush=True)
        else:
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
