"""FTS5 query text: a user's query as quoted phrases and words, with stop words dropped.

The paper list's ``search`` filter and keyword search both read a query this way.
"""

from __future__ import annotations

import re

from catalog.store.core import Invalid

__all__ = ["STOP_WORDS", "fts_phrase", "keyword_parts", "searchable"]

_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "that", "the", "this", "to", "with", "via", "using", "we", "our", "its", "their", "than", "not", "no", "near"])


def fts_phrase(words: list[str]) -> str:
    """``words`` as one double-quoted FTS5 phrase."""
    return '"' + " ".join(words) + '"'


def keyword_parts(query: str) -> list[str]:
    """Split a query into FTS5-safe parts: quoted phrases and single words, each double-quoted.

    Single stop words are dropped when anything else is left.
    """
    parts: list[str] = []
    stops: list[str] = []
    for phrase, word in _TOKEN.findall(query):
        if phrase:
            words = _WORD.findall(phrase)
            if words:
                parts.append(fts_phrase(words))
            continue
        for item in _WORD.findall(word):
            (stops if item.casefold() in STOP_WORDS else parts).append(fts_phrase([item]))
    return parts or stops


def searchable(query: str) -> bool:
    """Whether ``query`` has a word that is not a stop word (only then is anything searched).

    Raises:
        Invalid: the query has no letter or digit at all (e.g. only emoji or punctuation).
    """
    words = _WORD.findall(query)
    if not words:
        raise Invalid("q has no letters or digits to search for")
    return not all(w.casefold() in STOP_WORDS for w in words)
