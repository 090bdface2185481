"""``papers/search``: keyword, semantic (offline stand-in) and hybrid paper search.

Modes (all deterministic; ties broken by paper id):

* ``keyword``: SQLite FTS5 BM25 over ``title`` (weight 10), ``abstract`` (1)
  and ``authors`` (3). Double-quoted parts of the query are phrases; other
  words are individual terms; all must match (AND). If the AND query finds
  nothing and has several parts, the parts are OR-ed instead. A query that
  is an arXiv id also matches that paper's ``arxiv_id`` (ranked first).
  Keyword mode pages over the full result set.
* ``semantic``: an offline stand-in for embedding search. Every query word
  (minus a small stop-word list) is reduced to a crude stem (common English
  suffixes stripped, at least 4 letters kept) and searched as an FTS5 prefix
  term ``stem*``, OR-ed, over title and abstract. The best 500 BM25
  candidates are re-ranked by *coverage* (distinct query stems the paper
  matches / query stems), then BM25.
* ``hybrid``: reciprocal-rank fusion ``sum(1 / (60 + rank))`` of the keyword
  and semantic candidate lists (500 each).

Semantic and hybrid results are capped at 500 candidates (``count`` is then
the candidate count). Filters: ``start_date``/``end_date`` (inclusive, on
``published``) and ``has_official_implementation``.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from catalog.store import Page, envelope, find_by_arxiv, paper_summaries, strip_arxiv_version

__all__ = ["MODES", "search_papers"]

MODES = ("hybrid", "keyword", "semantic")
CANDIDATES = 500
RRF_K = 60
_BM25 = "bm25(papers_fts, 10.0, 1.0, 3.0)"
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset("a an and are as at be by for from in into is it of on or that the this to with via using "
                  "we our its their than".split())
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "ed", "ly", "s")


def _fts_phrase(words: list[str]) -> str:
    return '"' + " ".join(words) + '"'


def keyword_parts(query: str) -> list[str]:
    """Split a query into FTS5-safe parts: quoted phrases and single words, each double-quoted."""
    parts = []
    for phrase, word in _TOKEN.findall(query):
        words = _WORD.findall(phrase if phrase else word)
        if words:
            parts.append(_fts_phrase(words))
    return parts


def stem(word: str) -> str:
    """A crude English stem: strip one common suffix while keeping at least 4 letters."""
    word = word.casefold()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def semantic_stems(query: str) -> list[str]:
    """Distinct stems of the non-stop-words of ``query``, in order."""
    stems: list[str] = []
    for word in _WORD.findall(query.casefold()):
        if word in _STOP:
            continue
        item = stem(word)
        if item not in stems:
            stems.append(item)
    return stems


def _filters(start_date: str | None, end_date: str | None, official: bool | None) -> tuple[str, list[Any]]:
    where, args = [], []
    if start_date:
        where.append("p.published >= ?")
        args.append(start_date)
    if end_date:
        where.append("p.published <= ?")
        args.append(end_date)
    if official is not None:
        where.append(f"p.has_official_implementation = {1 if official else 0}")
    return "".join(f" AND {w}" for w in where), args


def _fts_from(where: str) -> str:
    """FROM/WHERE of a match: the FTS table alone unless filters need ``papers p``.

    Joining ``papers`` reads one (large) table row per match, which costs far
    more than the match itself when a query matches much of the catalog.
    """
    if where:
        return f"FROM papers_fts JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ?{where}"
    return "FROM papers_fts WHERE papers_fts MATCH ?"


def _match_ids(conn: sqlite3.Connection, match: str, where: str, args: list[Any], limit: int,
               offset: int = 0) -> list[int]:
    # papers_fts.rowid is papers.id, so the tie-break is the paper id.
    rows = conn.execute(f"SELECT papers_fts.rowid {_fts_from(where)} ORDER BY {_BM25}, papers_fts.rowid "
                        f"LIMIT ? OFFSET ?", [match, *args, limit, offset]).fetchall()
    return [r[0] for r in rows]


def _match_count(conn: sqlite3.Connection, match: str, where: str, args: list[Any]) -> int:
    return conn.execute(f"SELECT count(*) {_fts_from(where)}", [match, *args]).fetchone()[0]


def _match_exists(conn: sqlite3.Connection, match: str, where: str, args: list[Any]) -> bool:
    return conn.execute(f"SELECT 1 {_fts_from(where)} LIMIT 1", [match, *args]).fetchone() is not None


def _arxiv_hit(conn: sqlite3.Connection, query: str, where: str, args: list[Any]) -> int | None:
    arxiv = strip_arxiv_version(query.strip())
    if arxiv is None:
        return None
    row = find_by_arxiv(conn, "SELECT p.id FROM papers p WHERE", arxiv, where, args)
    return row[0] if row else None


def _keyword_match(conn: sqlite3.Connection, query: str, where: str, args: list[Any]) -> str | None:
    parts = keyword_parts(query)
    if not parts:
        return None
    match = " AND ".join(parts)
    if len(parts) > 1 and not _match_exists(conn, match, where, args):
        match = " OR ".join(parts)
    return match


def _semantic_ids(conn: sqlite3.Connection, query: str, where: str, args: list[Any]) -> list[int]:
    stems = semantic_stems(query)
    if not stems:
        return []
    match = " OR ".join(f'{{title abstract}} : "{s}" *' for s in stems)
    candidates = _match_ids(conn, match, where, args, CANDIDATES)
    if not candidates:
        return []
    marks = ",".join("?" * len(candidates))
    texts = {r[0]: f"{r[1]} {r[2] or ''}".casefold() for r in conn.execute(
        f"SELECT id, title, abstract FROM papers WHERE id IN ({marks})", candidates)}
    # stem(w) is a prefix of w, so only words starting with a query stem can match:
    # stemming just those (a C-level startswith filter) gives the same coverage as
    # stemming every word of 500 abstracts, at a fraction of the cost.
    prefixes = tuple(stems)
    coverage = {}
    for pid in candidates:
        matched: set[str] = set()
        for word in set(_WORD.findall(texts.get(pid, ""))):
            if word.startswith(prefixes):
                word_stem = stem(word)
                matched.update(s for s in stems if word_stem.startswith(s))
        coverage[pid] = len(matched) / len(stems)
    bm25_rank = {pid: index for index, pid in enumerate(candidates)}
    return sorted(candidates, key=lambda pid: (-coverage[pid], bm25_rank[pid]))


def search_papers(conn: sqlite3.Connection, query: str, page: Page, *, mode: str,
                  start_date: str | None, end_date: str | None,
                  has_official_implementation: bool | None) -> dict[str, Any]:
    """Run ``papers/search`` and return the list envelope with ``applied_filters``.

    ``applied_filters`` echoes exactly the filters applied: ``start_date``,
    ``end_date`` (ISO strings) and ``has_official_implementation``
    (``"true"``/``"false"``), each only when given.
    """
    where, args = _filters(start_date, end_date, has_official_implementation)
    applied: dict[str, Any] = {}
    if start_date:
        applied["start_date"] = start_date
    if end_date:
        applied["end_date"] = end_date
    if has_official_implementation is not None:
        applied["has_official_implementation"] = "true" if has_official_implementation else "false"
    pinned = _arxiv_hit(conn, query, where, args)
    if mode == "keyword":
        match = _keyword_match(conn, query, where, args)
        if pinned is None:
            count = _match_count(conn, match, where, args) if match else 0
            ids = _match_ids(conn, match, where, args, page.size, page.offset) if page.offset < count else []
        else:
            # An arXiv-id query pins that paper first; the rest is capped at CANDIDATES.
            rest = _match_ids(conn, match, where, args, CANDIDATES) if match else []
            ranked = [pinned] + [i for i in rest if i != pinned]
            count = len(ranked)
            ids = ranked[page.offset: page.offset + page.size]
    else:
        semantic = _semantic_ids(conn, query, where, args)
        if mode == "semantic":
            ranked = semantic
        else:
            match = _keyword_match(conn, query, where, args)
            keyword = _match_ids(conn, match, where, args, CANDIDATES) if match else []
            scores: dict[int, float] = {}
            for ranking in (keyword, semantic):
                for index, pid in enumerate(ranking):
                    scores[pid] = scores.get(pid, 0.0) + 1.0 / (RRF_K + index + 1)
            ranked = sorted(scores, key=lambda pid: (-scores[pid], pid))
        if pinned is not None:
            ranked = [pinned] + [i for i in ranked if i != pinned]
        count = len(ranked)
        ids = ranked[page.offset: page.offset + page.size]
    return envelope(paper_summaries(conn, ids), count, page, applied_filters=applied, mode=mode)
