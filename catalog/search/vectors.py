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
filtered semantic search is still one scan. ``catalog.importer.embed`` builds the files.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import simsimd

from catalog.search.embeddings import Embedder, get_embedder
from catalog.store.filters import PaperFilters, date_key

__all__ = ["FORMAT", "VectorIndex", "VectorsUnavailable", "dequantize",
           "load_index", "manifest_path", "quantize", "top_k"]

logger = logging.getLogger(__name__)

FORMAT = 1
STAMP_KEY = "vectors_stamp"
BATCH = 4096
EMBED_HINT = "rebuild it with `pwc-catalog embed --db FILE` (or re-import)"

Int8Matrix = npt.NDArray[np.int8]
Floats = npt.NDArray[np.float32]


NO_FILTERS = PaperFilters()


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

    def _mask(self, filters: PaperFilters) -> npt.NDArray[np.bool_] | None:
        """Rows passing the filters (None: no filter)."""
        mask: npt.NDArray[np.bool_] | None = None
        if filters.start_date:
            mask = self.published >= date_key(filters.start_date)
        if filters.end_date:
            upper = self.published <= date_key(filters.end_date)
            mask = upper if mask is None else mask & upper
        if filters.official is not None:
            flag = self.official == (1 if filters.official else 0)
            mask = flag if mask is None else mask & flag
        return mask

    def allowed(self, ids: list[int], filters: PaperFilters = NO_FILTERS) -> list[int]:
        """The ``ids`` (order kept) whose paper passes the filters; unknown ids are dropped."""
        if not ids:
            return []
        wanted = np.asarray(ids, dtype=np.int64)
        rows = np.clip(np.searchsorted(self.ids, wanted), 0, len(self.ids) - 1)
        ok = self.ids[rows] == wanted
        mask = self._mask(filters)
        if mask is not None:
            ok &= mask[rows]
        return [int(i) for i in wanted[ok]]

    def search(self, query: str, k: int, filters: PaperFilters = NO_FILTERS) -> list[tuple[int, float]]:
        """Paper ids nearest to ``query`` by cosine, best first, with their cosines (at most ``k``)."""
        if len(self.ids) == 0:
            return []
        return self.search_vector(self.embedder.embed([query])[0], k, filters)

    def search_vector(self, vector: Floats, k: int, filters: PaperFilters = NO_FILTERS) -> list[tuple[int, float]]:
        """Like :meth:`search` for an already embedded (unit) query vector."""
        if len(self.ids) == 0:
            return []
        q, qscale = quantize(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if qscale[0] == 0:
            return []  # nothing embeddable (e.g. only unknown symbols)
        dots = np.asarray(simsimd.cdist(q, self.matrix, metric="dot", dtype="int8", out_dtype="float32"))[0]
        scores = dots * (self.scale * qscale[0])  # zero rows (nothing embeddable) score 0
        mask = self._mask(filters)
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
