"""``papers/search``: keyword (BM25), semantic (embedding) and hybrid (rank fusion) paper search.

Modes (all deterministic; ties broken by paper id):

* ``keyword``: SQLite FTS5 BM25 over ``title`` (weight 10), ``abstract`` (1)
  and ``authors`` (3). Double-quoted parts of the query are phrases; other
  words are individual terms; all must match (AND). Stop words outside
  phrases are dropped when the query has other words. If the AND query finds
  nothing and has several parts, the parts are OR-ed instead. A query that is
  an arXiv id also matches that paper's ``arxiv_id`` (ranked first). Keyword
  mode pages over the full result set; ``count`` is exact up to
  :data:`COUNT_CAP` matches and capped there (the envelope's ``count_capped`` is then true, so a
  client can say "2000+"). A query matching that many
  papers (a very common word) is ranked by BM25 within its
  :data:`RANK_WINDOW` most recently imported matches: neither counting nor
  ranking walks every match.
* ``semantic``: cosine similarity between the query's embedding and each
  paper's (title + start of abstract), by an exact scan over the int8 vectors
  of :mod:`catalog.search.vectors` (embedder: :mod:`catalog.search.embeddings`). The best
  :data:`CANDIDATES` papers whose cosine reaches the floor are the result: the
  floor is :data:`MIN_COSINE`, or half the best paper's cosine when no paper
  reaches it (a catalog whose text embeds far from every query, e.g. a
  generated one, still answers, with weak matches).
* ``hybrid``: weighted reciprocal-rank fusion ``sum(w / (60 + rank))`` of the
  keyword and semantic candidate lists (:data:`CANDIDATES` each), each weighted
  by the evidence it has for this query (see :func:`_hybrid`), plus the
  catalog's vocabulary: a task, method or dataset the query names
  (:mod:`catalog.search.vocabulary`: "NER", "ViT", "SVHN") adds a BM25 ranking of its
  full name, pulls the query vector toward the name's, and boosts the
  candidates tagged with it.

Every mode reports ``matched_entities``: the entities the query names
(``type``, ``id``, ``slug``, ``name``, ``matched`` words, ``via``, and for
tasks and methods the ``filter`` that narrows ``papers/`` to them).

Every result carries ``match``: ``strong`` when the paper holds every word of
the query (keyword evidence), is close in meaning (cosine at least
:data:`STRONG_COSINE`, measured: the median relevant top-10 paper of
``bench/relevance.py`` has 0.48, queries about nothing in the catalog reach at
most 0.35), is tagged with or named by a task or method the query names, or is
the arXiv id asked for; else ``weak``. ``strong_count`` is the number of strong
results in the whole ranking (0: nothing matched well). ``abstracts=true``
adds each result's ``abstract`` (whole; clients cut it).

Semantic and hybrid results are capped at :data:`CANDIDATES` (``count`` is then
the candidate count). Filters: ``start_date``/``end_date`` (inclusive, on
``published``) and ``has_official_implementation``.

Queries are checked before any work: one without a letter or digit is a 422
naming the problem; one made only of stop words finds nothing (an empty page). FTS5 syntax in the query
(quotes aside: ``*``, ``NEAR``, ``AND``/``OR``/``NOT``, parentheses, ``title:``)
is searched as plain words. When the semantic index is missing or belongs to
another database, semantic and hybrid searches are a 503 naming the fix.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from catalog.search import vectors, vocabulary
from catalog.store.core import (
    Envelope,
    JsonBody,
    Page,
    StoreError,
    envelope,
    find_by_arxiv,
    paper_summaries,
    strip_arxiv_version,
)
from catalog.store.filters import PaperFilters
from catalog.store.fts import _WORD, STOP_WORDS, fts_phrase, keyword_parts, searchable

__all__ = ["CANDIDATES", "MODES", "STOP_WORDS", "SemanticUnavailable", "cosine_floor", "keyword_parts", "rrf",
           "search_papers", "searchable"]

MODES = ("hybrid", "keyword", "semantic")
CANDIDATES = 500
COUNT_CAP = 2_000
RANK_WINDOW = 2_000
MIN_COSINE = 0.15
RELATIVE_FLOOR = 0.5  # semantic floor: min(MIN_COSINE, this share of the best cosine)
STRONG_COSINE = 0.4  # a semantic neighbour this close is a strong match (module doc)
RRF_K = 60
# Evidence weights of hybrid fusion (measured with bench/relevance.py; see _hybrid).
OR_EVIDENCE = 0.3  # keyword side at least, when not all query words occur together in any paper
OR_POWER = 1.0  # ... else (share of the query's words in the best match) ** OR_POWER
ENTITY_KEYWORD = 0.5  # BM25 over the full name of an entity the query names
ENTITY_VECTOR = 2.0  # how far the query vector is pulled toward the named entity's
TAGGED = 0.5  # papers tagged with a named task or method
_BM25 = "bm25(papers_fts, 10.0, 1.0, 3.0)"


class SemanticUnavailable(StoreError):
    """Semantic or hybrid search without a usable semantic index (503)."""

    status = 503


def rrf(rankings: list[list[int]], k: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion: ids by ``sum(1 / (k + rank))`` (rank from 1), ties by smaller id."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for index, pid in enumerate(ranking):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + index + 1)
    return sorted(scores, key=lambda pid: (-scores[pid], pid))


def weighted_rrf(rankings: list[tuple[list[int], float]], k: int = RRF_K) -> list[int]:
    """Reciprocal-rank fusion with a weight per ranking: ids by ``sum(w / (k + rank))``, ties by smaller id."""
    scores: dict[int, float] = {}
    for ranking, weight in rankings:
        if weight <= 0:
            continue
        for index, pid in enumerate(ranking):
            scores[pid] = scores.get(pid, 0.0) + weight / (k + index + 1)
    return sorted(scores, key=lambda pid: (-scores[pid], pid))


def cosine_floor(hits: list[tuple[int, float]]) -> float:
    """The least cosine a semantic hit needs: :data:`MIN_COSINE`, unless no hit reaches it; then
    RELATIVE_FLOOR × the best hit's cosine (a catalog whose text embeds far from every query, such
    as a generated one, still answers, and its results are labelled weak)."""
    best = hits[0][1] if hits else 0.0
    return MIN_COSINE if best >= MIN_COSINE or best <= 0 else RELATIVE_FLOOR * best


def _filters(filters: PaperFilters) -> tuple[str, list[object]]:
    where, args = filters.sql()
    return "".join(f" AND {w}" for w in where), list(args)


def _fts_from(where: str) -> str:
    """FROM/WHERE of a match: the FTS table alone unless filters need ``papers p``.

    Joining ``papers`` reads one (large) table row per match, which costs far
    more than the match itself when a query matches much of the catalog.
    """
    if where:
        return f"FROM papers_fts JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ?{where}"
    return "FROM papers_fts WHERE papers_fts MATCH ?"


def _match_ids(conn: sqlite3.Connection, match: str, where: str, args: list[object], limit: int,
               offset: int = 0, *, common: bool = False) -> list[int]:
    """Ids by BM25 (ties by id). ``common``: rank only the RANK_WINDOW newest matches, so a
    word in a large part of the catalog costs a bounded number of BM25 evaluations."""
    # papers_fts.rowid is papers.id, so the tie-break is the paper id.
    if common:
        sql = (f"SELECT id FROM (SELECT papers_fts.rowid AS id, {_BM25} AS score {_fts_from(where)} "
               f"ORDER BY papers_fts.rowid DESC LIMIT {RANK_WINDOW}) ORDER BY score, id LIMIT ? OFFSET ?")
    else:
        sql = f"SELECT papers_fts.rowid {_fts_from(where)} ORDER BY {_BM25}, papers_fts.rowid LIMIT ? OFFSET ?"
    return [r[0] for r in conn.execute(sql, [match, *args, limit, offset]).fetchall()]


def _match_exists(conn: sqlite3.Connection, match: str, where: str, args: list[object]) -> bool:
    return conn.execute(f"SELECT 1 {_fts_from(where)} LIMIT 1", [match, *args]).fetchone() is not None


def _arxiv_hit(conn: sqlite3.Connection, query: str, where: str, args: list[object]) -> int | None:
    arxiv = strip_arxiv_version(query.strip())
    if arxiv is None:
        return None
    row = find_by_arxiv(conn, "SELECT p.id FROM papers p WHERE", arxiv, where, args)
    return row[0] if row else None


def _keyword_plan(conn: sqlite3.Connection, query: str, where: str, args: list[object]) -> tuple[str | None, bool]:
    """The FTS5 match of ``query`` and whether all its parts occur together (AND) rather than OR-ed."""
    parts = keyword_parts(query)
    if not parts:
        return None, False
    match = " AND ".join(parts)
    if len(parts) > 1 and not _match_exists(conn, match, where, args):
        return " OR ".join(parts), False
    return match, True


def _index(conn: sqlite3.Connection) -> vectors.VectorIndex:
    try:
        return vectors.INDEXES.get(conn)
    except vectors.VectorsUnavailable as exc:
        raise SemanticUnavailable(str(exc)) from None


def _hybrid_keyword(conn: sqlite3.Connection, index: vectors.VectorIndex, query: str,
                    filters: PaperFilters) -> tuple[list[int], float]:
    """BM25 candidates for hybrid mode and the evidence they carry (1: every word of the query occurs
    in them; OR_EVIDENCE: only some do; 0: none). Filters apply to the ranked matches through the
    index's per-row columns, not by joining a large ``papers`` row per FTS match."""
    match, together = _keyword_plan(conn, query, "", [])
    if not match:
        return [], 0.0
    pool = _bm25_pool(conn, index, match, filters)
    if together or not pool:
        return pool, 1.0
    # OR-ed: as much evidence as the best match holds of the query's words (a remembered title with
    # one word wrong keeps most; words the catalog never uses together keep little).
    parts = keyword_parts(query)
    held = sum(1 for part in parts if conn.execute(
        "SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? AND rowid = ?", (part, pool[0])).fetchone())
    return pool, max(OR_EVIDENCE, (held / len(parts)) ** OR_POWER)


def _bm25_pool(conn: sqlite3.Connection, index: vectors.VectorIndex, match: str,
               filters: PaperFilters) -> list[int]:
    filtered = filters.active
    limit = RANK_WINDOW if filtered else CANDIDATES
    pool = _match_ids(conn, match, "", [], limit, common=_count(conn, match, "", []) >= COUNT_CAP)
    if filtered:
        pool = index.allowed(pool, filters)
    return pool[:CANDIDATES]


def _count(conn: sqlite3.Connection, match: str, where: str, args: list[object]) -> int:
    # Counting stops one past COUNT_CAP: a very common word must not be counted to the end, and
    # COUNT_CAP + 1 tells "exactly COUNT_CAP" from "more".
    sql = f"SELECT count(*) FROM (SELECT 1 {_fts_from(where)} LIMIT {COUNT_CAP + 1})"
    return int(conn.execute(sql, [match, *args]).fetchone()[0])


def _tagged(conn: sqlite3.Connection, matches: list[vocabulary.Match], ids: list[int]) -> set[int]:
    """The ``ids`` tagged with a task or method the query named."""
    out: set[int] = set()
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    for kind, table, column in (("task", "paper_tasks", "task_id"), ("method", "paper_methods", "method_id")):
        chosen = [m.entity.id for m in matches if m.entity.kind == kind]
        if chosen:
            rows = conn.execute(f"SELECT paper_id FROM {table} WHERE {column} IN ({','.join('?' * len(chosen))}) "
                                f"AND paper_id IN ({marks})", [*chosen, *ids])
            out.update(r[0] for r in rows)
    return out


def _hybrid(conn: sqlite3.Connection, index: vectors.VectorIndex, query: str,
            filters: PaperFilters) -> tuple[list[int], list[vocabulary.Match], set[int]]:
    """Hybrid ranking: weighted reciprocal-rank fusion of what each side knows about this query.

    * BM25 weighs 1 when every query word occurs in its matches, OR_EVIDENCE when they were OR-ed
      (words the catalog never uses together: lean on the vectors), 0 without a match.
    * A task, method or dataset the query names (:mod:`catalog.search.vocabulary`) adds a BM25 ranking of its
      full name, pulls the query vector toward the name's, and ranks the candidates tagged with it,
      each weighted by how much of the query the name explains.

    Returns the ranking, the named entities and the strong matches among the ranked (module doc).
    """
    embedder = index.embedder
    qvec = embedder.embed([query])[0]
    matches = vocabulary.match(vocabulary.get_vocabulary(conn), query, STOP_WORDS, qvec, embedder)
    vector = qvec.copy()
    if matches:
        phrases = embedder.embed([m.phrase for m in matches])
        for m, row in zip(matches, phrases, strict=True):
            vector += ENTITY_VECTOR * m.strength * row
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector /= norm
    hits = index.search_vector(vector, CANDIDATES, filters)
    floor = cosine_floor(hits)
    semantic = [pid for pid, cosine in hits if cosine >= floor]
    strong = {pid for pid, cosine in hits if cosine >= STRONG_COSINE}
    keyword, evidence = _hybrid_keyword(conn, index, query, filters)
    if evidence >= 1.0:  # every query word occurs together in these
        strong.update(keyword)
    rankings = [(keyword, evidence), (semantic, 1.0)]
    for m in matches:
        words = _WORD.findall(m.phrase)
        if words and m.via != "embedding" and m.text.casefold() != m.phrase.casefold():
            pool = _bm25_pool(conn, index, fts_phrase(words), filters)
            rankings.append((pool, ENTITY_KEYWORD * m.strength))
            if m.strength >= 0.5:  # the query mostly names this entity, and these papers name it in full
                strong.update(pool)
    fused = weighted_rrf(rankings)
    if matches and TAGGED > 0:
        tagged = _tagged(conn, matches, fused[:CANDIDATES])
        if tagged:
            strength = max(m.strength for m in matches)
            fused = weighted_rrf([(fused, 1.0), ([i for i in fused if i in tagged], TAGGED * strength)])
            if strength >= 0.5:
                strong.update(tagged)
    ranked = fused[:CANDIDATES]
    return ranked, matches, strong.intersection(ranked)


def search_papers(conn: sqlite3.Connection, query: str, page: Page, *, mode: str,
                  start_date: str | None, end_date: str | None,
                  has_official_implementation: bool | None, abstracts: bool = False) -> Envelope:
    """Run ``papers/search`` and return the list envelope with ``applied_filters``.

    ``applied_filters`` echoes exactly the filters applied: ``start_date``,
    ``end_date`` (ISO strings) and ``has_official_implementation``
    (``"true"``/``"false"``), each only when given. Each result has ``match``
    (and ``abstract`` with ``abstracts``); the envelope ``strong_count`` (module doc).

    Raises:
        Invalid: the query has no letter or digit (see module doc).
        SemanticUnavailable: semantic/hybrid mode without a matching semantic index.
    """
    nothing = not searchable(query)
    filters = PaperFilters(start_date, end_date, has_official_implementation)
    where, args = _filters(filters)
    applied: JsonBody = dict(filters.applied())
    if nothing:  # only stop words: every paper would match and none better than another
        return envelope([], 0, page, applied_filters=applied, mode=mode, matched_entities=[], strong_count=0,
                        count_capped=False)
    matches: list[vocabulary.Match] = []
    pinned = _arxiv_hit(conn, query, where, args)
    if mode == "keyword":
        match, together = _keyword_plan(conn, query, where, args)
        if pinned is None:
            counted = _count(conn, match, where, args) if match else 0
            count, common = min(counted, COUNT_CAP), counted >= COUNT_CAP
            capped = counted > COUNT_CAP  # more match than the count says
            ids = (_match_ids(conn, match, where, args, page.size, page.offset, common=common)
                   if match and page.offset < count else [])
            strong = set(ids) if together else set()
            strong_count = count if together else 0
        else:
            # An arXiv-id query pins that paper first; the rest is capped at CANDIDATES.
            rest = _match_ids(conn, match, where, args, CANDIDATES,
                              common=_count(conn, match, where, args) >= COUNT_CAP) if match else []
            ranked = [pinned] + [i for i in rest if i != pinned]
            count = len(ranked)
            capped = count >= CANDIDATES  # a full pool: more may match
            ids = ranked[page.offset: page.offset + page.size]
            strong = set(ranked) if together else {pinned}
            strong_count = len(strong)
    else:
        index = _index(conn)
        if mode == "semantic":
            hits = index.search(query, CANDIDATES, filters)
            floor = cosine_floor(hits)
            ranked = [pid for pid, cosine in hits if cosine >= floor]
            strong = {pid for pid, cosine in hits if cosine >= STRONG_COSINE}
        else:
            ranked, matches, strong = _hybrid(conn, index, query, filters)
        if pinned is not None:
            ranked = [pinned] + [i for i in ranked if i != pinned]
            strong.add(pinned)
        count = len(ranked)
        capped = count >= CANDIDATES  # a full pool: more may match
        ids = ranked[page.offset: page.offset + page.size]
        strong_count = len(strong)
    if mode != "hybrid":  # reported in every mode; only hybrid ranks by it
        matches = vocabulary.match(vocabulary.get_vocabulary(conn), query, STOP_WORDS)
    results = paper_summaries(conn, ids)
    found: dict[str, str | None] = {}
    if abstracts and ids:
        marks = ",".join("?" * len(ids))
        found = {str(pid): text for pid, text in
                 conn.execute(f"SELECT id, abstract FROM papers WHERE id IN ({marks})", ids)}
    strong_here = {str(pid) for pid in ids if pid in strong}  # summaries carry string ids
    for item in results:
        item["match"] = "strong" if item["id"] in strong_here else "weak"
        if abstracts:
            item["abstract"] = found.get(str(item["id"])) or None
    return envelope(results, count, page, applied_filters=applied, mode=mode,
                    matched_entities=[m.as_json() for m in matches], strong_count=strong_count,
                    count_capped=capped)
