"""The catalog's own vocabulary in a search query: task, method and dataset names.

:func:`match` finds the entities a query names, longest phrase first:

* ``name``: a task, method or dataset name, or a method's or dataset's full
  name, or a name without its parenthesised part ("Street View House Numbers");
* ``synonym`` / ``variant``: another name the archive lists for a task (its
  ``synonyms``) or a dataset (its ``variants``), stored in ``entity_aliases``;
  with or without its parenthesised part ("CIFAR-10 (with augmentation)").
  A one-word alias written in capitals ("NER") only matches a query word
  written in capitals, as acronyms do;
* ``abbreviation``: the parenthesised part of a name ("SVHN" in
  "Street View House Numbers (SVHN)"), or a method/dataset name whose full
  name differs ("ViT" for "Vision Transformer"); case-insensitive;
* ``acronym``: the initials of a task or dataset name ("NER" for Named Entity
  Recognition, "POS" for Part-Of-Speech Tagging); only for a query word
  written in capitals, so "re" or "set" never turn into an acronym;
* ``embedding``: the query's embedding is close to a task's name
  ("recognizing spoken words" near Speech Recognition); only when no name
  matched, the query has at most :data:`EMBEDDING_WORDS` non-stop words and
  the cosine reaches :data:`EMBEDDING_MATCH` (task synonyms are embedded
  beside the names).

An alias shared by several entities goes to the one with most catalog links
(papers tagged, leaderboard datasets). Each match carries its ``coverage``:
the share of the query's non-stop words it explains, so a method called
"Attention" barely counts in "attention is all you need".

The vocabulary is loaded once per database (and re-loaded when the database
file changes); the name embeddings are computed on first semantic use
(~0.5 s for 28k names).
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from catalog.db.schema import normalize_title
from catalog.search.embeddings import Embedder

__all__ = ["EMBEDDING_MATCH", "Entity", "Match", "Vocabulary", "get_vocabulary", "match"]

EMBEDDING_MATCH = 0.4  # measured: 0.4-0.45 helps paraphrases, lower drifts
EMBEDDING_WORDS = 5  # longer queries (remembered titles) carry their own words
MAX_NGRAM = 8
MAX_MATCHES = 3
_WORD = re.compile(r"\w+", re.UNICODE)
_PAREN = re.compile(r"\s*\(([^()]*)\)\s*")
_VERSION = re.compile(r"[\W_]*v?\d[\d.]*$")
_SPLIT = re.compile(r"[\s\-_/]+")
_SKIP_INITIAL = frozenset(["of", "and", "the", "for", "in", "on", "a", "an", "to", "with"])
# Strength of each kind of match: how much ranking may lean on it.
STRENGTH = {"name": 1.0, "synonym": 1.0, "variant": 1.0, "abbreviation": 1.0, "acronym": 0.8,
            "embedding": 0.5}
# The kind of alias each entity type's entity_aliases rows are.
ALIAS_VIA = {"task": "synonym", "dataset": "variant"}


@dataclass(frozen=True)
class Entity:
    """A task, method or dataset of the catalog."""

    kind: str  # "task" | "method" | "dataset"
    id: int
    slug: str
    name: str
    full_name: str | None
    weight: int  # catalog links: tagged papers (+ datasets of a task)


@dataclass(frozen=True)
class Match:
    """One entity a query names, how, and how much of the query it explains."""

    entity: Entity
    text: str  # the query's words that matched
    via: str  # name | synonym | variant | abbreviation | acronym | embedding
    coverage: float  # share of the query's non-stop words, 0-1

    @property
    def strength(self) -> float:
        """How far ranking may lean on this match (0-1)."""
        return STRENGTH[self.via] * self.coverage

    @property
    def phrase(self) -> str:
        """The entity's words to search for: its full name when it has one, else its name."""
        base = self.entity.full_name or self.entity.name
        return _PAREN.sub(" ", base).strip() or base

    def as_json(self) -> dict[str, Any]:
        """The match as the ``matched_entities`` item of ``papers/search``."""
        item: dict[str, Any] = {"type": self.entity.kind, "id": str(self.entity.id), "slug": self.entity.slug,
                                "name": self.entity.name, "matched": self.text, "via": self.via}
        if self.entity.kind in ("task", "method"):
            item["filter"] = {self.entity.kind: self.entity.slug}
        return item


@dataclass
class Vocabulary:
    """Entities and their aliases (normalized text -> entity indexes by kind of alias)."""

    entities: list[Entity]
    names: dict[str, int]
    abbreviations: dict[str, int]
    acronyms: dict[str, int]
    aliases: dict[str, int] = field(default_factory=dict)  # synonyms and variants
    capital_aliases: frozenset[str] = frozenset()  # one-word aliases to be typed in capitals
    synonyms: list[tuple[int, str]] = field(default_factory=list)  # (task index, synonym)
    _vectors: tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def vectors(self, embedder: Embedder) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """Unit embeddings of the task names and synonyms (computed once) and their entity
        indexes."""
        cached = self._vectors
        if cached is None:
            with self._lock:
                cached = self._vectors
                if cached is None:
                    chosen = [i for i, e in enumerate(self.entities) if e.kind == "task"]
                    texts = [_PAREN.sub(" ", self.entities[i].name).strip() for i in chosen]
                    for index, synonym in self.synonyms:
                        chosen.append(index)
                        texts.append(_PAREN.sub(" ", synonym).strip() or synonym)
                    cached = self._vectors = (embedder.embed(texts), np.asarray(chosen, dtype=np.int64))
        return cached


def _initials(words: list[str], skip: bool = True) -> str:
    return "".join(w[0] for w in words if w and not (skip and w.casefold() in _SKIP_INITIAL))


def _put(table: dict[str, int], key: str, index: int, entities: list[Entity]) -> None:
    """Map ``key`` to ``index`` unless an entity with more links already holds it."""
    if not key:
        return
    held = table.get(key)
    if held is None or entities[index].weight > entities[held].weight:
        table[key] = index


def load(conn: sqlite3.Connection) -> Vocabulary:
    """Read every task, method and dataset of the catalog and index their aliases."""
    entities: list[Entity] = []
    rows = conn.execute(
        "SELECT 'task', t.id, t.slug, t.name, NULL, "
        "(SELECT count(*) FROM paper_tasks pt WHERE pt.task_id = t.id) + "
        "(SELECT count(*) FROM dataset_tasks dt WHERE dt.task_id = t.id) FROM tasks t "
        "UNION ALL SELECT 'method', m.id, m.slug, m.name, m.full_name, "
        "(SELECT count(*) FROM paper_methods pm WHERE pm.method_id = m.id) FROM methods m "
        "UNION ALL SELECT 'dataset', d.id, d.slug, d.name, d.full_name, "
        "(SELECT count(*) FROM dataset_tasks dt WHERE dt.dataset_id = d.id) FROM datasets d").fetchall()
    for kind, eid, slug, name, full_name, weight in rows:
        if name:
            full = full_name if full_name and normalize_title(full_name) != normalize_title(name) else None
            entities.append(Entity(kind, int(eid), slug, name, full, int(weight or 0)))
    names: dict[str, int] = {}
    abbreviations: dict[str, int] = {}
    acronyms: dict[str, int] = {}
    for index, entity in enumerate(entities):
        for text in filter(None, (entity.name, entity.full_name)):
            _put(names, normalize_title(text), index, entities)
            inner = _PAREN.findall(text)
            outer = _PAREN.sub(" ", text).strip()
            if inner:
                _put(names, normalize_title(outer), index, entities)
                for part in inner:
                    _put(abbreviations, normalize_title(part), index, entities)
            # "CIFAR-10" -> "cifar10", "SQuAD1.1" -> "squad": the ways a name is typed short
            _put(abbreviations, normalize_title(outer).replace(" ", ""), index, entities)
            head = outer.split()[0] if outer.split() else ""
            if any(c.isdigit() for c in head):
                _put(abbreviations, normalize_title(head).replace(" ", ""), index, entities)
                _put(abbreviations, normalize_title(_VERSION.sub("", head)), index, entities)
        if entity.full_name and len(entity.name) <= 12:
            _put(abbreviations, normalize_title(entity.name), index, entities)
        if entity.kind != "method":
            words = [w for w in _SPLIT.split(_PAREN.sub(" ", entity.name)) if w]
            if len(words) >= 2:
                for skip in (True, False):  # "NER"; "POS" keeps the "of" of Part-Of-Speech
                    _put(acronyms, _initials(words, skip).casefold(), index, entities)
                    for cut in range(2, len(words)):
                        prefix = _initials(words[:cut], skip)
                        if len(prefix) >= 3:
                            _put(acronyms, prefix.casefold(), index, entities)
    aliases: dict[str, int] = {}
    capitals: set[str] = set()
    lower_case: set[str] = set()  # keys some alias spells in lower case: typeable so
    synonyms: list[tuple[int, str]] = []
    by_key = {(e.kind, e.id): i for i, e in enumerate(entities)}
    for kind, eid, alias in _aliases(conn):
        owner = by_key.get((kind, int(eid)))
        if owner is None or not isinstance(alias, str):
            continue
        outer = _PAREN.sub(" ", alias).strip()
        for text in {alias, outer}:
            key = normalize_title(text)
            _put(aliases, key, owner, entities)
            if " " not in key:
                (capitals if text.isupper() else lower_case).add(key)
        if kind == "task" and normalize_title(alias) != normalize_title(entities[owner].name):
            synonyms.append((owner, alias))
    return Vocabulary(entities, names, abbreviations, acronyms, aliases, frozenset(capitals - lower_case),
                      synonyms)


def _aliases(conn: sqlite3.Connection) -> list[tuple[str, int, str]]:
    """The task synonyms and dataset variants (none in a catalog older than migration 4)."""
    try:
        return conn.execute("SELECT entity_type, entity_id, alias FROM entity_aliases "
                            "ORDER BY entity_type, entity_id, alias").fetchall()
    except sqlite3.OperationalError:  # served before the next import migrates it
        return []


def match(vocabulary: Vocabulary, query: str, stop_words: frozenset[str],
          query_vector: npt.NDArray[np.float32] | None = None, embedder: Embedder | None = None) -> list[Match]:
    """The entities ``query`` names, strongest first (at most :data:`MAX_MATCHES`)."""
    tokens = _WORD.findall(query)
    content = [t for t in tokens if t.casefold() not in stop_words]
    if not content:
        return []
    found: list[Match] = []
    used = [False] * len(tokens)
    seen: set[int] = set()
    for size in range(min(MAX_NGRAM, len(tokens)), 0, -1):
        for start in range(len(tokens) - size + 1):
            if any(used[start:start + size]):
                continue
            window = tokens[start:start + size]
            words = [w for w in window if w.casefold() not in stop_words]
            if not words:
                continue
            key = normalize_title(" ".join(window))
            hit: tuple[int, str] | None = None
            if key in vocabulary.names:
                hit = vocabulary.names[key], "name"
            elif key in vocabulary.aliases and (size > 1 or key not in vocabulary.capital_aliases
                                                or window[0].isupper()):
                index = vocabulary.aliases[key]
                hit = index, ALIAS_VIA.get(vocabulary.entities[index].kind, "synonym")
            elif key in vocabulary.abbreviations:
                hit = vocabulary.abbreviations[key], "abbreviation"
            elif size == 1 and len(window[0]) >= 2 and window[0].isupper() and key in vocabulary.acronyms:
                hit = vocabulary.acronyms[key], "acronym"
            if hit is None or hit[0] in seen:
                continue
            seen.add(hit[0])
            used[start:start + size] = [True] * size
            found.append(Match(vocabulary.entities[hit[0]], " ".join(window), hit[1],
                               min(1.0, len(words) / len(content))))
    if (not found and len(content) <= EMBEDDING_WORDS and query_vector is not None and embedder is not None
            and vocabulary.entities):
        vectors, indexes = vocabulary.vectors(embedder)
        if len(indexes):
            cosines = vectors @ query_vector
            best = int(np.argmax(cosines))
            if float(cosines[best]) >= EMBEDDING_MATCH:
                found.append(Match(vocabulary.entities[int(indexes[best])], query.strip(), "embedding", 1.0))
    found.sort(key=lambda m: -m.strength)
    return found[:MAX_MATCHES]


class _Cache:
    """Process-wide vocabularies by database file, re-loaded when the file changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, tuple[tuple[int, int], Vocabulary]] = {}

    def get(self, conn: sqlite3.Connection) -> Vocabulary:
        path = str(conn.execute("PRAGMA database_list").fetchone()[2])
        try:
            stat = os.stat(path)
            version = (stat.st_mtime_ns, stat.st_size)
        except OSError:  # in-memory or vanished: never cached across calls
            return load(conn)
        cached = self._by_path.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        with self._lock:
            cached = self._by_path.get(path)
            if cached is None or cached[0] != version:
                cached = version, load(conn)
                self._by_path[path] = cached
            return cached[1]


_CACHE = _Cache()


def get_vocabulary(conn: sqlite3.Connection) -> Vocabulary:
    """The vocabulary of the database behind ``conn`` (loaded once per file version)."""
    return _CACHE.get(conn)
