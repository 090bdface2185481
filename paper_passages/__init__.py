"""Passages of one paper for a query: paragraphs ranked by BM25 (``docs/cli-contract.md`` §2.21).

The one owner of how a paper's Markdown splits into paragraphs and how they rank by keyword,
shared by ``pwc paper find`` (its own ranking, against an upstream without the catalog's
passages endpoint) and the catalog's ``research/papers/{ref}/passages`` (which adds meaning),
so both give the same paragraphs at the same byte offsets. It imports nothing but the standard
library: the MCP workers load no compiled search stack. A paragraph is a run of text
between blank lines; a Markdown heading line starts a new paragraph and names the section of
those after it. Words are folded to lower case and to a light stem (plural, ``-ing``, ``-ed``,
``-ly``, ``-ation``/``-ization``), so ``smoothed`` finds ``smoothing``. The query's words weigh
1. BM25 with ``k1 = 1.2`` and ``b = 0.75`` over the paper's paragraphs, each paragraph's
section heading counted as one more occurrence of its words; a paragraph that holds every
query word gets :data:`ALL_WORDS_BONUS` more, and one that holds the query as a phrase
:data:`PHRASE_BONUS`. An expansion (the full name of an abbreviation the catalog knows, say)
counts only where the paragraph holds it as a phrase, at :data:`EXPANSION_WEIGHT` times the
idf of its words. Heading lines are not passages themselves. Ties go to the earlier paragraph.

An index (paragraphs, their stems and the document statistics) is built once per content
version and kept in a small in-process LRU (:data:`INDEX_CACHE_SIZE`), as chunks are.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Match",
    "PaperIndex",
    "Paragraph",
    "excerpt",
    "index_for",
    "mark",
    "phrases",
    "query_terms",
    "search",
    "stem",
]

K1 = 1.2
B = 0.75
EXPANSION_WEIGHT = 0.6
ALL_WORDS_BONUS = 0.25
PHRASE_BONUS = 0.5
INDEX_CACHE_SIZE = 16
MAX_PASSAGE_CHARS = 1200
"""A passage longer than this is cut at a word boundary around its best-matching words."""

_WORD = re.compile(r"[^\W_]+")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_BLANK = re.compile(r"\n[ \t]*\n+")
_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "that", "the", "this", "to", "with", "via", "using", "we", "our", "its", "their", "than", "not", "no", "does", "do", "where", "what", "which", "how", "when", "who", "why", "many", "much", "have", "has", "paper", "discuss", "discusses"])
_SUFFIXES = (("izations", "ize"), ("ization", "ize"), ("ations", "ate"), ("ation", "ate"), ("ies", "y"),
             ("ing", ""), ("ed", ""), ("ly", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A light English stem of a lower-case word (``smoothing`` → ``smooth``, ``layers`` → ``layer``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: len(word) - len(suffix)] + replacement
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # "stopped" → "stop"
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                base = word[:-1]  # "layers"… but "changes" → "change"
            return base
    return word


def _stems(text: str) -> list[str]:
    return [stem(word) for word in _WORD.findall(text.casefold())]


@dataclass(frozen=True)
class Paragraph:
    """One paragraph: its UTF-8 byte ``offset`` in the paper, exact ``text`` and section ``heading``."""

    offset: int
    text: str
    heading: str | None


@dataclass(frozen=True)
class Match:
    """A ranked paragraph: ``score`` and the query words (as the query wrote them) it holds."""

    paragraph: Paragraph
    score: float
    matched: tuple[str, ...]


class PaperIndex:
    """The paragraphs of one document with their term counts (built once per content version)."""

    def __init__(self, markdown: str) -> None:
        self.paragraphs: list[Paragraph] = []
        self._counts: list[Counter[str]] = []
        self._lengths: list[int] = []
        self._stems: list[list[str]] = []
        heading: str | None = None
        at = 0  # character position; byte offsets are counted as we go
        byte = 0
        for piece in _split(markdown):
            start = markdown.index(piece, at)
            byte += len(markdown[at:start].encode("utf-8"))
            at = start
            first = piece.split("\n", 1)[0]
            found = _HEADING.match(first)
            if found:
                heading = found.group(1) or heading
                continue
            stems = _stems(piece)
            if stems:
                self.paragraphs.append(Paragraph(byte, piece, heading))
                self._counts.append(Counter(stems + (_stems(heading) if heading else [])))
                self._lengths.append(len(stems))
                self._stems.append(stems)
        self._frequency: Counter[str] = Counter()
        for counts in self._counts:
            self._frequency.update(counts.keys())
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0

    def idf(self, term: str) -> float:
        """BM25's idf (Lucene's non-negative form)."""
        n, df = len(self.paragraphs), self._frequency.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def rank(self, terms: dict[str, str], phrase: Sequence[str], limit: int,
             expansions: Sequence[tuple[str, list[str]]] = ()) -> list[Match]:
        """The best ``limit`` paragraphs for ``terms`` (stem → the query's word) and ``expansions``
        ((text, its stems) phrases); paragraphs that match nothing are left out."""
        idf = {term: self.idf(term) for term in {*terms, *(t for _text, stems in expansions for t in stems)}}
        scored: list[tuple[float, int, tuple[str, ...]]] = []
        for index, counts in enumerate(self._counts):
            score, hits = 0.0, []
            norm = K1 * (1 - B + B * self._lengths[index] / self._average)
            for term, surface in terms.items():
                tf = counts.get(term, 0)
                if tf:
                    score += idf[term] * tf * (K1 + 1) / (tf + norm)
                    hits.append(surface)
            for text, stems in expansions:
                if stems and all(counts.get(t) for t in stems) and _holds_phrase(self._stems[index], stems):
                    score += EXPANSION_WEIGHT * sum(idf[t] for t in stems)
                    hits.append(text)
            if not score:
                continue
            if len(terms) > 1 and all(counts.get(term) for term in terms):
                score *= 1 + ALL_WORDS_BONUS
                if len(phrase) > 1 and _holds_phrase(self._stems[index], phrase):
                    score *= 1 + PHRASE_BONUS
            scored.append((score, index, tuple(dict.fromkeys(hits))))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [Match(self.paragraphs[i], round(score, 3), hits) for score, i, hits in scored[:limit]]


def _split(markdown: str) -> Iterable[str]:
    """Paragraphs in order: blank-line separated, a heading line its own paragraph."""
    for block in _BLANK.split(markdown):
        lines: list[str] = []
        for line in block.split("\n"):
            if _HEADING.match(line):
                if lines:
                    yield "\n".join(lines)
                    lines = []
                yield line
            else:
                lines.append(line)
        if lines and "\n".join(lines).strip():
            yield "\n".join(lines)


def _holds_phrase(stems: list[str], phrase: Sequence[str]) -> bool:
    width = len(phrase)
    return any(stems[i:i + width] == list(phrase) for i in range(len(stems) - width + 1))


def query_terms(query: str) -> tuple[dict[str, str], list[str]]:
    """(stem → the query's word, the query's phrase as stems). Stop words are dropped unless
    nothing else is left."""
    words = _WORD.findall(query.casefold())
    kept = [w for w in words if w not in _STOP] or words
    terms: dict[str, str] = {}
    for word in kept:
        terms.setdefault(stem(word), word)
    return terms, [stem(w) for w in kept]


def phrases(texts: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Expansion texts with their stems (an expansion matches only as a phrase)."""
    return [(text, _stems(text)) for text in texts if _stems(text)]


def mark(text: str, terms: Iterable[str]) -> str:
    """``text`` with each word whose stem is in ``terms`` wrapped in ``==`` (Markdown's highlight)."""
    wanted = set(terms)
    return _WORD.sub(lambda m: f"=={m.group(0)}==" if stem(m.group(0).casefold()) in wanted else m.group(0), text)


def excerpt(paragraph: Paragraph, terms: Iterable[str], limit: int = MAX_PASSAGE_CHARS) -> tuple[int, str]:
    """(byte offset, text) of the passage shown for ``paragraph``: whole when short, else the
    ``limit`` characters around its first matching word, cut at whitespace."""
    text = paragraph.text
    if len(text) <= limit:
        return paragraph.offset, text
    wanted = set(terms)
    first = next((m.start() for m in _WORD.finditer(text) if stem(m.group(0).casefold()) in wanted), 0)
    start = max(0, first - limit // 4)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < first else start
    end = min(len(text), start + limit)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return paragraph.offset + len(text[:start].encode("utf-8")), text[start:end]


_lock = threading.Lock()
_indexes: OrderedDict[tuple[str, str], PaperIndex] = OrderedDict()


def index_for(paper: str, version: str, markdown: str) -> PaperIndex:
    """The index of ``markdown`` (``paper`` at content ``version``), built once and kept in an LRU."""
    key = (paper, version)
    with _lock:
        found = _indexes.get(key)
        if found is not None:
            _indexes.move_to_end(key)
            return found
    built = PaperIndex(markdown)
    with _lock:
        _indexes[key] = built
        while len(_indexes) > INDEX_CACHE_SIZE:
            _indexes.popitem(last=False)
    return built


def search(index: PaperIndex, query: str, limit: int, expansions: Iterable[str] = ()) -> list[Match]:
    """The best ``limit`` paragraphs of ``index`` for ``query`` (and its expansions)."""
    terms, phrase = query_terms(query)
    return index.rank(terms, phrase, limit, phrases(expansions)) if terms else []
