"""The semantic index: one int8 vector per paper, stored beside the database and versioned with it.

Files, next to ``<db>`` (e.g. ``catalog.db``)::

    catalog.db.vectors.json             manifest (written last, replaced atomically)
    catalog.db.vectors-<stamp>.npy      int8 matrix, one row per paper (memory-mapped by readers)
    catalog.db.vectors-<stamp>.npz      per row: paper id, scale, published (YYYYMMDD), official flag

``<stamp>`` is a random token that the build also writes into the database
(``catalog_meta.vectors_stamp``). A reader serves vectors only when the
manifest's stamp equals the database's and the manifest's embedder (name and
version) is the one installed; anything else is a :class:`VectorsUnavailable`
error naming the fix (``pwc-catalog embed --db FILE``), never silent garbage.

Quantization: each unit vector ``v`` is stored as ``round(v * 127 / max|v|)``
with its scale ``max|v| / 127``; a query is quantized the same way, so a cosine
is ``int8 dot * row scale * query scale``. The dot products are computed by
SimSIMD's int8 kernels over the memory-mapped matrix (an exact scan: ~146 MiB
for 576k papers, shared by every reader process through the page cache).
Filters (dates, official code) are masks over the per-row columns, so a
filtered semantic search is still one scan.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
import simsimd

from catalog.embeddings import DEFAULT_EMBEDDER, Embedder, document_text, get_embedder
from catalog.provenance import record_embedding

__all__ = ["FORMAT", "PendingVectors", "VectorIndex", "VectorsUnavailable", "build_vectors", "dequantize",
           "load_index", "manifest_path", "quantize", "top_k"]

logger = logging.getLogger(__name__)

FORMAT = 1
STAMP_KEY = "vectors_stamp"
BATCH = 4096
EMBED_HINT = "rebuild it with `pwc-catalog embed --db FILE` (or re-import)"

Int8Matrix = npt.NDArray[np.int8]
Floats = npt.NDArray[np.float32]


class VectorsUnavailable(Exception):
    """The semantic index is missing or does not belong to this database / embedder."""


def manifest_path(db: Path) -> Path:
    """Where the manifest of ``db``'s vectors lives."""
    return db.with_name(f"{db.name}.vectors.json")


def quantize(matrix: Floats) -> tuple[Int8Matrix, Floats]:
    """int8 rows and per-row scales such that ``row ~= int8 * scale`` (zero rows get scale 0)."""
    peak = np.abs(matrix).max(axis=1) if matrix.size else np.zeros(len(matrix), dtype=np.float32)
    scale = (peak / 127.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    q = np.rint(matrix / safe[:, None])
    np.clip(q, -127, 127, out=q)
    return q.astype(np.int8), scale


def dequantize(q: Int8Matrix, scale: Floats) -> Floats:
    """Inverse of :func:`quantize` (up to rounding)."""
    return (q.astype(np.float32) * scale[:, None]).astype(np.float32)


def top_k(scores: npt.NDArray[np.float32], ids: npt.NDArray[np.int64], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(id, score)`` pairs, best first, ties by smaller id; ``-inf`` scores excluded."""
    valid = int(np.count_nonzero(scores > -np.inf))
    k = min(k, valid)
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    part = part[scores[part] > -np.inf]
    order = np.lexsort((ids[part], -scores[part]))
    chosen = part[order]
    return [(int(ids[i]), float(scores[i])) for i in chosen]


def _date_key(value: str | None) -> int:
    """``YYYY-MM-DD`` (or a prefix) as an int ``YYYYMMDD``; 0 when absent or unparsable."""
    if not value:
        return 0
    digits = value[:10].replace("-", "")
    return int(digits.ljust(8, "0")) if digits.isdigit() else 0


@dataclass(frozen=True)
class VectorIndex:
    """A loaded (memory-mapped) semantic index; thread-safe for reading."""

    stamp: str
    embedder: Embedder
    matrix: Int8Matrix
    ids: npt.NDArray[np.int64]
    scale: Floats
    published: npt.NDArray[np.int32]
    official: npt.NDArray[np.int8]

    def _mask(self, start_date: str | None, end_date: str | None,
              official: bool | None) -> npt.NDArray[np.bool_] | None:
        """Rows passing the filters (None: no filter)."""
        mask: npt.NDArray[np.bool_] | None = None
        if start_date:
            mask = self.published >= _date_key(start_date)
        if end_date:
            upper = self.published <= _date_key(end_date)
            mask = upper if mask is None else mask & upper
        if official is not None:
            flag = self.official == (1 if official else 0)
            mask = flag if mask is None else mask & flag
        return mask

    def allowed(self, ids: list[int], *, start_date: str | None = None, end_date: str | None = None,
                official: bool | None = None) -> list[int]:
        """The ``ids`` (order kept) whose paper passes the filters; unknown ids are dropped."""
        if not ids:
            return []
        wanted = np.asarray(ids, dtype=np.int64)
        rows = np.clip(np.searchsorted(self.ids, wanted), 0, len(self.ids) - 1)
        ok = self.ids[rows] == wanted
        if start_date:
            ok &= self.published[rows] >= _date_key(start_date)
        if end_date:
            ok &= self.published[rows] <= _date_key(end_date)
        if official is not None:
            ok &= self.official[rows] == (1 if official else 0)
        return [int(i) for i in wanted[ok]]

    def search(self, query: str, k: int, *, start_date: str | None = None, end_date: str | None = None,
               official: bool | None = None) -> list[tuple[int, float]]:
        """Paper ids nearest to ``query`` by cosine, best first, with their cosines (at most ``k``)."""
        if len(self.ids) == 0:
            return []
        return self.search_vector(self.embedder.embed([query])[0], k, start_date=start_date, end_date=end_date,
                                  official=official)

    def search_vector(self, vector: Floats, k: int, *, start_date: str | None = None, end_date: str | None = None,
                      official: bool | None = None) -> list[tuple[int, float]]:
        """Like :meth:`search` for an already embedded (unit) query vector."""
        if len(self.ids) == 0:
            return []
        q, qscale = quantize(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if qscale[0] == 0:
            return []  # nothing embeddable (e.g. only unknown symbols)
        dots = np.asarray(simsimd.cdist(q, self.matrix, metric="dot", dtype="int8", out_dtype="float32"))[0]
        scores = dots * (self.scale * qscale[0])  # zero rows (nothing embeddable) score 0
        mask = self._mask(start_date, end_date, official)
        if mask is not None:
            scores[~mask] = -np.inf
        return top_k(scores, self.ids, k)


def _read_stamp(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM catalog_meta WHERE key = ?", (STAMP_KEY,)).fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def load_index(db: Path, db_stamp: str | None) -> VectorIndex:
    """Load the vectors of ``db`` whose stamp must equal ``db_stamp`` (read from the database).

    Raises:
        VectorsUnavailable: missing files, another database's vectors, or another embedder.
    """
    manifest_file = manifest_path(db)
    if db_stamp is None:
        raise VectorsUnavailable(f"the catalog database has no semantic index; {EMBED_HINT}")
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise VectorsUnavailable(f"the semantic index file {manifest_file.name} is missing; {EMBED_HINT}") from None
    except (OSError, ValueError) as exc:
        raise VectorsUnavailable(f"the semantic index manifest is unreadable ({exc}); {EMBED_HINT}") from None
    if manifest.get("format") != FORMAT or manifest.get("stamp") != db_stamp:
        raise VectorsUnavailable(f"the semantic index does not match the catalog database; {EMBED_HINT}")
    try:
        embedder = get_embedder(str(manifest.get("embedder")))
    except KeyError:
        raise VectorsUnavailable(f"the semantic index was built with an unknown embedder; {EMBED_HINT}") from None
    if manifest.get("embedder_version") != embedder.version or manifest.get("dimension") != embedder.dimension:
        raise VectorsUnavailable(f"the semantic index was built with other embedding weights; {EMBED_HINT}")
    try:
        matrix = np.load(db.with_name(manifest["matrix"]), mmap_mode="r")
        with np.load(db.with_name(manifest["columns"])) as columns:
            ids, scale = columns["ids"], columns["scale"]
            published, official = columns["published"], columns["official"]
    except (OSError, KeyError, ValueError) as exc:
        raise VectorsUnavailable(f"the semantic index files are unreadable ({exc}); {EMBED_HINT}") from None
    count = int(manifest.get("count", -1))
    if matrix.shape != (count, embedder.dimension) or matrix.dtype != np.int8 or len(ids) != count:
        raise VectorsUnavailable(f"the semantic index files are inconsistent; {EMBED_HINT}")
    return VectorIndex(db_stamp, embedder, matrix, ids.astype(np.int64), scale.astype(np.float32),
                       published.astype(np.int32), official.astype(np.int8))


class _Cache:
    """Process-wide loaded indexes by database file, re-validated against the database's stamp."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, VectorIndex] = {}

    def get(self, conn: sqlite3.Connection) -> VectorIndex:
        row = conn.execute("PRAGMA database_list").fetchone()
        path = str(row[2])
        stamp = _read_stamp(conn)
        index = self._by_path.get(path)
        if index is not None and index.stamp == stamp:
            return index
        with self._lock:
            index = self._by_path.get(path)
            if index is None or index.stamp != stamp:
                index = load_index(Path(path), stamp)
                self._by_path[path] = index
                logger.info("semantic index loaded: %d vectors", len(index.ids))
            return index


INDEXES = _Cache()


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
            published[done:end] = [_date_key(r[3]) for r in rows]
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
