"""Passages of one paper for a query, by keyword and by meaning (``research/papers/{ref}/passages``).

The paragraphs and their keyword ranking are :mod:`paper_passages`' (the same split and byte
offsets ``pwc paper find`` uses on its own). Meaning: each paragraph is cut into sentences
(at most :data:`MAX_SENTENCES`, each at most :data:`SENTENCE_CHARS` characters), every sentence
is embedded with :mod:`catalog.search.embeddings`, and a paragraph's meaning score is the best cosine
of its sentences with the query (a whole paragraph's average vector blurs what one sentence
says). The sentence vectors are built once per content version and kept in an LRU of
:data:`VECTOR_CACHE_SIZE` papers (about 1 MB for a 100 KB paper).

A paragraph counts by meaning only when its cosine stands out: at least :data:`MIN_COSINE`,
at least :data:`MIN_Z` standard deviations above the paper's mean, and at least
:data:`RELATIVE_FLOOR` of the best paragraph's; so a query the paper has nothing to say about
("zzqqxx") still finds nothing. Fusion: ``keyword / best keyword + cosine / best cosine``
(each side in [0, 1], a side with no evidence adds 0), ties to the earlier paragraph.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from catalog.search.embeddings import get_embedder
from catalog.store import core as store
from paper_passages import Match, PaperIndex, excerpt, index_for, phrases, query_terms

__all__ = ["MAX_LIMIT", "find_passages", "rank"]

MAX_LIMIT = 20
MIN_COSINE = 0.25
MIN_Z = 3.0
RELATIVE_FLOOR = 0.6
MAX_SENTENCES = 40
SENTENCE_CHARS = 600
VECTOR_CACHE_SIZE = 16

_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n")

_lock = threading.Lock()
_vectors: OrderedDict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]] = OrderedDict()


def _sentence_vectors(version: str, index: PaperIndex) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """(sentence vectors, the paragraph each belongs to) of one content version, cached."""
    with _lock:
        found = _vectors.get(version)
        if found is not None:
            _vectors.move_to_end(version)
            return found
    texts: list[str] = []
    owners: list[int] = []
    for number, paragraph in enumerate(index.paragraphs):
        parts = [s for s in _SENTENCE.split(paragraph.text) if s.strip()] or [paragraph.text]
        for sentence in parts[:MAX_SENTENCES]:
            texts.append(sentence[:SENTENCE_CHARS])
            owners.append(number)
    built = (get_embedder().embed(texts), np.asarray(owners, dtype=np.int64))
    with _lock:
        _vectors[version] = built
        while len(_vectors) > VECTOR_CACHE_SIZE:
            _vectors.popitem(last=False)
    return built


def _meaning(version: str, index: PaperIndex, query: str) -> npt.NDArray[np.float32]:
    """Per paragraph, its best sentence cosine with ``query`` where it stands out, else 0."""
    count = len(index.paragraphs)
    if not count:
        return np.zeros(0, dtype=np.float32)
    matrix, owners = _sentence_vectors(version, index)
    cosines = matrix @ get_embedder().embed([query])[0]
    best = np.full(count, -1.0, dtype=np.float32)
    np.maximum.at(best, owners, cosines)
    top = float(best.max())
    floor = max(MIN_COSINE, float(best.mean() + MIN_Z * best.std()), RELATIVE_FLOOR * top)
    return np.where(best >= floor, best, 0.0).astype(np.float32)


def rank(version: str, index: PaperIndex, query: str, limit: int,
         expansions: Sequence[str] = ()) -> list[dict[str, object]]:
    """The best ``limit`` passages of ``index`` for ``query``: ``{offset, heading, text, score,
    keyword, meaning, matched}``, best first (``text`` the paper's exact text at ``offset``)."""
    terms, phrase = query_terms(query)
    count = len(index.paragraphs)
    keyword: dict[int, Match] = {}
    if terms:
        positions = {p.offset: n for n, p in enumerate(index.paragraphs)}
        for match in index.rank(terms, phrase, count, phrases(expansions)):
            keyword[positions[match.paragraph.offset]] = match
    meaning = _meaning(version, index, query)
    best_keyword = max((m.score for m in keyword.values()), default=0.0) or 1.0
    best_meaning = float(meaning.max()) if meaning.size and meaning.max() > 0 else 1.0
    scored: list[tuple[float, int]] = []
    for number in {*keyword, *(int(i) for i in np.flatnonzero(meaning))}:
        found = keyword.get(number)
        fused = (found.score / best_keyword if found else 0.0) + float(meaning[number]) / best_meaning
        scored.append((fused, number))
    scored.sort(key=lambda item: (-item[0], item[1]))
    passages: list[dict[str, object]] = []
    for fused, number in scored[:limit]:
        paragraph = index.paragraphs[number]
        found = keyword.get(number)
        offset, text = excerpt(paragraph, terms)
        passages.append({"offset": offset, "heading": paragraph.heading, "text": text, "score": round(fused, 3),
                         "keyword": found.score if found else 0.0, "meaning": round(float(meaning[number]), 3),
                         "matched": list(found.matched) if found else []})
    return passages


def find_passages(conn: sqlite3.Connection, ref: str, query: str, limit: int,
                  expansions: Sequence[str] = ()) -> dict[str, object]:
    """The response body of ``research/papers/{ref}/passages``.

    Raises:
        catalog.store.core.NotFound: unknown paper, or no stored Markdown.
    """
    data, version = store.paper_markdown(conn, ref)
    index = index_for("", version, data.decode("utf-8"))
    return {"paper": ref, "query": query, "content_version": version, "total_bytes": len(data),
            "expanded_with": list(expansions), "passages": rank(version, index, query, limit, expansions)}
