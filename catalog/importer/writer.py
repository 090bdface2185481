"""The only code that writes the catalog database: natural-key upserts in batches.

:class:`Writer` loads the natural keys already stored (slugs, arXiv ids,
evaluation keys) into dicts, assigns ids itself for new rows and queues
statements, which are flushed with ``executemany`` in order. Upserts update
in place (``coalesce`` keeps stored values the new record leaves out), so a
re-import never duplicates a row. A row created only because another record
names it (a task named by a paper, a paper named by a leaderboard row) is a
*stub* of this import: the first full record of it reports ``created`` (see
:mod:`catalog.importer.stats`). :meth:`finish` recomputes derived columns
(best_rank of touched leaderboards, repository counts, organization years).
"""

from __future__ import annotations

import itertools
import json
import logging
import operator
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

import orjson

from catalog.db import schema
from catalog.importer.boards import Boards
from catalog.importer.derived import update_derived

logger = logging.getLogger(__name__)

BATCH = 20000
_KIND_RANK = {"DELETE": 0, "INSERT": 1, "UPDATE": 2}  # flush order, see Writer.flush
_PAPER_COLS = ("arxiv_id", "slug", "title", "abstract", "authors", "published", "conference_id",
               "citation_count", "url_abs", "url_pdf", "source_url", "popularity", "is_latest",
               "hf_models", "hf_datasets", "hf_spaces", "project_pages")
EVAL_COLS = ("paper_id", "model_name", "harness", "metrics", "best_metric", "is_open",
             "num_parameters", "methodology", "split", "split_name", "evaluated_on", "result_url",
             "source_url", "external_source_url", "code_url", "hf_model_url",
             "uses_additional_data", "updated_at", "paper_title", "paper_published_date",
             "paper_url")

_FTS_COLS = frozenset(("title", "abstract", "authors"))  # the columns papers_fts indexes
_METRICS = EVAL_COLS.index("metrics")
_FLAGS = (EVAL_COLS.index("is_open"), EVAL_COLS.index("uses_additional_data"))


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_EVAL_PARAMS = operator.itemgetter(*EVAL_COLS)
_EVAL_DEFAULTS = dict.fromkeys(EVAL_COLS)


Fields: TypeAlias = Mapping[str, object]
"""Column -> value of one row a loader hands over (values go to SQLite; lists and dicts as JSON)."""
EvalKey: TypeAlias = tuple[int, int, str, str, str, str, str, str]
"""The natural key of an evaluation row (:func:`eval_key`)."""


def _text(value: object) -> str | None:
    """``value`` when it is a string (the loaders hand over strings or None), else None."""
    return value if isinstance(value, str) else None


def _dumps(value: object) -> str:
    """Compact JSON text (non-ASCII kept), as ``json.dumps(separators=(",", ":"))`` gives."""
    try:
        return orjson.dumps(value).decode()  # several times faster than the stdlib encoder
    except TypeError:  # e.g. an integer beyond 64 bits: the stdlib encoder takes anything
        return _ENCODER.encode(value)


def _update_sql(table: str, cols: Sequence[str]) -> str:
    sets = ", ".join(f"{c} = coalesce(?, {c})" for c in cols)
    return f"UPDATE {table} SET {sets} WHERE id = ?"


def _insert_sql(table: str, cols: Sequence[str]) -> str:
    return f"INSERT INTO {table} (id, {', '.join(cols)}) VALUES ({', '.join('?' * (len(cols) + 1))})"


_EVAL_UPDATE = _update_sql("evaluations", EVAL_COLS)
_EVAL_INSERT = _insert_sql("evaluations", ("task_id", "dataset_id") + EVAL_COLS)


def eval_key(task_id: int, dataset_id: int, model_name: str, paper_url: str | None,
             paper_title: str | None, harness: str | None, split: str | None,
             methodology: str | None) -> EvalKey:
    """Natural key of an evaluation row (stable across re-imports)."""
    return (task_id, dataset_id, model_name.strip().casefold(), paper_url or "",
            "" if paper_url else (paper_title or "").strip().casefold(),
            harness or "", split or "", methodology or "")


class Writer:
    """Batched natural-key upserts into one open catalog connection (see module docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._pending: dict[str, list[tuple[object, ...]]] = {}
        self._pending_count = 0
        # True once a paper's title, abstract or authors may have changed: the import
        # runs without the FTS triggers and must then rebuild papers_fts (run.py).
        self.fts_dirty = False
        # table -> ids created by this import as bare references, not yet described in full
        self.stubs: dict[str, set[int]] = {}
        self.kept_apart = 0  # papers not merged: their slug's paper has another arXiv id
        self._has_arxiv = bytearray()  # by paper id: 1 when the paper has an arXiv id
        self._load_keys()

    # -- key maps -----------------------------------------------------------
    def _slug_map(self, table: str) -> dict[str, int]:
        return {slug: rid for rid, slug in self.conn.execute(f"SELECT id, slug FROM {table}")}

    def _next_id(self, table: str) -> itertools.count[int]:
        top = self.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
        return itertools.count(int(top) + 1)

    def _load_keys(self) -> None:
        c = self.conn
        self.areas = self._slug_map("areas")
        self.conferences = self._slug_map("conferences")
        self.datasets = self._slug_map("datasets")
        self.methods = self._slug_map("methods")
        self.organizations = self._slug_map("organizations")
        self.frameworks = self._slug_map("frameworks")
        self.tasks: dict[str, int] = {}
        self.task_info: dict[int, tuple[int, int | None]] = {}  # id -> (level, area_id)
        for rid, slug, level, area_id in c.execute("SELECT id, slug, level, area_id FROM tasks"):
            self.tasks[slug] = rid
            self.task_info[rid] = (level, area_id)
        self.papers_by_arxiv: dict[str, int] = {}
        self.papers_by_slug: dict[str, int] = {}
        for rid, arxiv_id, slug in c.execute("SELECT id, arxiv_id, slug FROM papers"):
            if arxiv_id:
                self.papers_by_arxiv[arxiv_id] = rid
                self._mark_arxiv(rid)
            if slug:
                self.papers_by_slug.setdefault(slug, rid)
        self.authors = {n: rid for rid, n in c.execute("SELECT id, normalized_name FROM authors")}
        self.repos = {(p, u) for p, u in c.execute("SELECT paper_id, url FROM repositories")}
        self.markdown = {p for (p,) in c.execute("SELECT paper_id FROM paper_markdown")}
        self.external = {a: rid for rid, a in c.execute(
            "SELECT id, arxiv_id FROM external_metadata WHERE source = 'arxiv'")}
        # A dump may hold several rows with one natural key (e.g. one model on two data
        # variants); they are told apart by their order of appearance in the source.
        self.evaluations: dict[EvalKey, list[int]] = {}
        for row in c.execute("SELECT id, task_id, dataset_id, model_name, paper_url, paper_title, "
                             "harness, split, methodology FROM evaluations ORDER BY id"):
            self.evaluations.setdefault(eval_key(*row[1:]), []).append(row[0])
        self.boards = Boards(key[:2] for key in self.evaluations)
        # (entity_type, entity_id) with aliases stored before this import: replaced, not merged
        self._stored_aliases = set(c.execute("SELECT DISTINCT entity_type, entity_id FROM entity_aliases"))
        self._seen: dict[EvalKey, int] = {}
        self._linked: set[tuple[str, int, int]] = set()
        self._board_links = set(c.execute("SELECT dataset_id, task_id FROM dataset_tasks"))
        # (table, raw name) -> id for names loaders resolve over and over (tasks, methods)
        self.by_name: dict[tuple[str, str], int] = {}
        self._author_ids: dict[str, int | None] = {}  # raw author name -> id (None: unusable)
        self.ids = {t: self._next_id(t) for t in (
            "areas", "conferences", "datasets", "methods", "organizations", "frameworks", "tasks",
            "papers", "authors", "evaluations", "external_metadata", "repositories")}

    def start_source(self) -> None:
        """Reset per-source state (the occurrence counter of evaluation keys)."""
        self._seen = {}

    # -- statement queue ------------------------------------------------------
    def queue(self, sql: str, params: tuple[object, ...]) -> None:
        """Queue one statement; equal statements run together as one executemany."""
        self._pending.setdefault(sql, []).append(params)
        self._pending_count += 1
        if self._pending_count >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Run every queued statement: DELETEs, then INSERTs, then UPDATEs.

        Within a kind, statements run in order of first appearance and each
        statement's rows in queue order. The kind order is what keeps batching
        correct: a replaced author list is deleted before it is re-inserted,
        and a row inserted in this batch exists before an update touches it.
        Foreign keys are off during imports, so INSERT groups need no order.
        """
        pending, self._pending, self._pending_count = self._pending, {}, 0
        for sql in sorted(pending, key=lambda s: _KIND_RANK.get(s.split(" ", 1)[0], 1)):
            self.conn.executemany(sql, pending[sql])

    # -- stubs ------------------------------------------------------------------
    def _filled(self, table: str, rid: int) -> bool:
        """Whether ``rid`` was a stub of this import (it is one no longer)."""
        stubs = self.stubs.get(table)
        if stubs and rid in stubs:
            stubs.discard(rid)
            return True
        return False

    def reference(self, table: str, slug: str, fields: Fields) -> int:
        """Id of the slug-keyed row ``slug``; created as a stub from ``fields`` when missing."""
        mapping: dict[str, int] = getattr(self, table)
        rid = mapping.get(slug)
        if rid is not None:
            return rid
        rid, _ = self.upsert_simple(table, slug, fields)
        self.stubs.setdefault(table, set()).add(rid)
        return rid

    # -- simple slug entities -------------------------------------------------
    def upsert_simple(self, table: str, slug: str, fields: Fields) -> tuple[int, bool]:
        """Upsert a slug-keyed row (areas, conferences, datasets, methods, organizations,
        frameworks); ``fields`` maps column → value (None keeps the stored value).
        Returns (id, created); created is also true for a stub of this import filled now."""
        mapping: dict[str, int] = getattr(self, table)
        cols = tuple(sorted(fields))
        values = tuple(_dumps(v) if isinstance(v, (list, dict)) else v for v in
                       (fields[c] for c in cols))
        rid = mapping.get(slug)
        if rid is not None:
            if cols:
                self.queue(_update_sql(table, cols), values + (rid,))
            return rid, self._filled(table, rid)
        rid = next(self.ids[table])
        mapping[slug] = rid
        self.queue(_insert_sql(table, ("slug",) + cols), (rid, slug) + values)
        return rid, True

    def area(self, name: str, slug: str) -> int:
        """Id of the area ``slug``, created with ``name`` when missing."""
        return self.reference("areas", slug, {"name": name})

    # -- tasks ----------------------------------------------------------------
    def upsert_task(self, slug: str, name: str, *, description: str | None = None,
                    area_id: int | None = None, parent_id: int | None = None,
                    research_trends: list[str] | None = None, visible: bool | None = None,
                    created_at: str | None = None, stub: bool = False) -> tuple[int, bool]:
        """Upsert a task; ``level`` follows the parent (parent level + 1, else 0).

        ``stub``: the task is only named by another record (see :meth:`reference`).
        """
        if parent_id is not None:
            parent_level, parent_area = self.task_info.get(parent_id, (0, None))
            level: int | None = parent_level + 1
            area_id = area_id if area_id is not None else parent_area
        else:
            level = None
        rid = self.tasks.get(slug)
        trends = _dumps(research_trends) if research_trends is not None else None
        vis = None if visible is None else int(bool(visible))
        if rid is not None:
            old_level, old_area = self.task_info[rid]
            self.queue("UPDATE tasks SET name = ?, description = coalesce(?, description), "
                       "area_id = coalesce(?, area_id), parent_id = coalesce(?, parent_id), "
                       "level = coalesce(?, level), research_trends = coalesce(?, research_trends), "
                       "visible = coalesce(?, visible) WHERE id = ?",
                       (name, description, area_id, parent_id, level, trends, vis, rid))
            self.task_info[rid] = (level if level is not None else old_level,
                                   area_id if area_id is not None else old_area)
            return rid, self._filled("tasks", rid)
        rid = next(self.ids["tasks"])
        if stub:
            self.stubs.setdefault("tasks", set()).add(rid)
        self.tasks[slug] = rid
        self.task_info[rid] = (level or 0, area_id)
        self.queue("INSERT INTO tasks (id, slug, name, description, area_id, parent_id, level, "
                   "research_trends, visible, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (rid, slug, name, description, area_id, parent_id, level or 0, trends or "[]",
                    1 if vis is None else vis, created_at))
        return rid, True

    # -- papers ---------------------------------------------------------------
    def _mark_arxiv(self, rid: int) -> None:
        if rid >= len(self._has_arxiv):
            self._has_arxiv.extend(bytes(rid + 1 - len(self._has_arxiv) + 4096))
        self._has_arxiv[rid] = 1

    def find_paper(self, arxiv_id: str | None = None, slug: str | None = None) -> int | None:
        """Catalog id of a paper by arXiv id (preferred) or slug, else None.

        A paper found by ``slug`` that carries another arXiv id than ``arxiv_id``
        is another paper (two records share a paper_url): None.
        """
        if arxiv_id:
            rid = self.papers_by_arxiv.get(arxiv_id)
            if rid is not None:
                return rid
        if slug:
            rid = self.papers_by_slug.get(slug)
            if rid is not None and arxiv_id and rid < len(self._has_arxiv) and self._has_arxiv[rid]:
                return None
            return rid
        return None

    def upsert_paper(self, fields: Fields, *, stub: bool = False) -> tuple[int, bool]:
        """Upsert a paper keyed by ``arxiv_id``, else ``slug``.

        ``fields`` uses the papers column names (``authors`` a list). A ``stub``
        (a paper only named by a leaderboard row or a link) never overwrites an
        existing paper. Returns (id, created).
        """
        arxiv_id, slug = _text(fields.get("arxiv_id")), _text(fields.get("slug"))
        rid = self.find_paper(arxiv_id, slug)
        if rid is None and arxiv_id and slug and slug in self.papers_by_slug:
            self.kept_apart += 1  # a new paper beside the slug's, which has another arXiv id
        if rid is not None and stub:
            return rid, False
        self.fts_dirty = True
        authors = fields.get("authors")
        row = dict(fields)
        if authors is not None:
            row["authors"] = _dumps(authors)
        for key in ("hf_models", "hf_datasets", "hf_spaces", "project_pages"):
            if row.get(key) is not None:
                row[key] = _dumps(row[key])
        values = tuple(row.get(c) for c in _PAPER_COLS)
        new_row = rid is None
        created = rid is None or self._filled("papers", rid)
        if rid is None:
            rid = next(self.ids["papers"])
            defaults = {"authors": "[]", "citation_count": 0, "popularity": 0, "is_latest": 1,
                        "hf_models": "[]", "hf_datasets": "[]", "hf_spaces": "[]",
                        "project_pages": "[]"}
            values = tuple(defaults.get(c) if v is None else v for c, v in zip(_PAPER_COLS, values, strict=True))
            self.queue(_insert_sql("papers", _PAPER_COLS), (rid,) + values)
            if stub:
                self.stubs.setdefault("papers", set()).add(rid)
        else:
            self.queue(_update_sql("papers", _PAPER_COLS), values + (rid,))
        if arxiv_id:
            self.papers_by_arxiv[arxiv_id] = rid
            self._mark_arxiv(rid)
        if slug:
            self.papers_by_slug.setdefault(slug, rid)
        if authors and isinstance(authors, list):
            self._link_authors(rid, authors, replace=not new_row)
        return rid, created

    def update_paper(self, paper_id: int, fields: Fields) -> None:
        """Update some columns of an existing paper (None values keep the stored ones)."""
        cols = tuple(c for c in sorted(fields) if fields[c] is not None)
        if _FTS_COLS.intersection(cols):
            self.fts_dirty = True
        if cols:
            values = tuple(_dumps(fields[c]) if isinstance(fields[c], (list, dict)) else fields[c]
                           for c in cols)
            self.queue(f"UPDATE papers SET {', '.join(c + ' = ?' for c in cols)} WHERE id = ?",
                       values + (paper_id,))

    def _link_authors(self, paper_id: int, names: Iterable[str], *, replace: bool) -> None:
        if replace:
            self.queue("DELETE FROM paper_authors WHERE paper_id = ?", (paper_id,))
        for position, name in enumerate(names):
            author_id = self._author_ids.get(name, 0)
            if author_id == 0:
                author_id = self._author(name)
                self._author_ids[name] = author_id
            if author_id is None:
                continue
            self.queue("INSERT OR IGNORE INTO paper_authors (paper_id, author_id, position) "
                       "VALUES (?, ?, ?)", (paper_id, author_id, position))

    def _author(self, name: str) -> int | None:
        """Id of the author ``name`` (matched by normalized name), created when new."""
        normalized = schema.normalize_title(name)
        if not normalized:
            return None
        author_id = self.authors.get(normalized)
        if author_id is None:
            author_id = next(self.ids["authors"])
            self.authors[normalized] = author_id
            self.queue("INSERT INTO authors (id, name, normalized_name) VALUES (?, ?, ?)",
                       (author_id, name.strip(), normalized))
        return author_id

    def link(self, table: str, left: str, right: str, left_id: int, right_id: int) -> None:
        """Insert a many-to-many pair if absent (paper_tasks, dataset_tasks, lineage, ...)."""
        key = (table, left_id, right_id)
        if key in self._linked:  # leaderboards repeat (paper, task) pairs a lot
            return
        self._linked.add(key)
        self.queue(f"INSERT OR IGNORE INTO {table} ({left}, {right}) VALUES (?, ?)",
                   (left_id, right_id))

    def link_board(self, dataset_id: int, task_id: int) -> bool:
        """Link a dataset to a task (a leaderboard); True when the catalog did not hold the link."""
        self.link("dataset_tasks", "dataset_id", "task_id", dataset_id, task_id)
        if (dataset_id, task_id) in self._board_links:
            return False
        self._board_links.add((dataset_id, task_id))
        return True

    def set_aliases(self, entity_type: str, entity_id: int, aliases: Iterable[str]) -> None:
        """Store the other names of a task (``"task"``, its synonyms) or dataset (``"dataset"``,
        its variants). The first record of an entity in an import replaces its stored aliases;
        later records of the same entity add theirs, so a re-import gives the same rows."""
        key = (entity_type, entity_id)
        if key in self._stored_aliases:
            self._stored_aliases.discard(key)
            self.queue("DELETE FROM entity_aliases WHERE entity_type = ? AND entity_id = ?", key)
        for alias in aliases:
            self.queue("INSERT OR IGNORE INTO entity_aliases (entity_type, entity_id, alias) "
                       "VALUES (?, ?, ?)", (entity_type, entity_id, alias))

    def upsert_repository(self, paper_id: int, url: str, is_official: bool,
                          framework: str | None, stars: int | None = None) -> bool:
        """Upsert a code repository of a paper; returns created."""
        created = (paper_id, url) not in self.repos
        self.repos.add((paper_id, url))
        self.queue("INSERT INTO repositories (paper_id, url, is_official, framework, stars) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (paper_id, url) DO UPDATE SET "
                   "is_official = excluded.is_official, framework = coalesce(excluded.framework, "
                   "framework), stars = coalesce(excluded.stars, stars)",
                   (paper_id, url, int(bool(is_official)), framework, stars))
        return created

    def upsert_markdown(self, paper_id: int, markdown: str) -> bool:
        """Store a paper's Markdown with its sha256 content version; returns created."""
        created = paper_id not in self.markdown
        self.markdown.add(paper_id)
        self.queue("INSERT OR REPLACE INTO paper_markdown (paper_id, markdown, content_version) "
                   "VALUES (?, ?, ?)", (paper_id, markdown, schema.content_version(markdown)))
        return created

    def upsert_external(self, fields: Fields) -> bool:
        """Upsert an arXiv external-metadata record keyed by arxiv_id; returns created."""
        cols = ("source", "arxiv_id", "doi", "hf_id", "title", "normalized_title", "title_prefix",
                "authors", "abstract", "published", "links")
        title = str(fields["title"])
        row = dict(fields, source="arxiv", normalized_title=schema.normalize_title(title),
                   title_prefix=schema.title_prefix(title),
                   authors=_dumps(fields.get("authors") or []),
                   links=_dumps(fields.get("links") or []))
        values = tuple(row.get(c) for c in cols)
        rid = self.external.get(fields["arxiv_id"])
        if rid is None:
            rid = next(self.ids["external_metadata"])
            self.external[fields["arxiv_id"]] = rid
            self.queue(_insert_sql("external_metadata", cols), (rid,) + values)
            return True
        self.queue(_update_sql("external_metadata", cols), values + (rid,))
        return False

    # -- evaluations ----------------------------------------------------------
    def upsert_evaluation(self, task_id: int, dataset_id: int, row: Fields) -> bool:
        """Upsert one leaderboard row (``row`` uses evaluations column names; ``metrics`` a
        dict). Returns created. The (task, dataset) board is re-ranked in :meth:`finish`."""
        key = eval_key(task_id, dataset_id, str(row["model_name"]), _text(row.get("paper_url")),
                       _text(row.get("paper_title")), _text(row.get("harness")), _text(row.get("split")),
                       _text(row.get("methodology")))
        params = list(_EVAL_PARAMS({**_EVAL_DEFAULTS, **row}))  # hot path: C-level column pick
        if params[_METRICS] is not None:
            params[_METRICS] = _dumps(params[_METRICS])
        for index in _FLAGS:
            if params[index] is not None:
                params[index] = int(bool(params[index]))
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        stored = self.evaluations.setdefault(key, [])
        if occurrence < len(stored):
            self.boards.updated((task_id, dataset_id))
            params.append(stored[occurrence])
            self.queue(_EVAL_UPDATE, tuple(params))
            return False
        rid = next(self.ids["evaluations"])
        stored.append(rid)
        metrics = row.get("metrics")
        self.boards.inserted((task_id, dataset_id), rid, metrics if isinstance(metrics, dict) else None,
                             _text(row.get("best_metric")))
        if params[_METRICS] is None:
            params[_METRICS] = "{}"
        self.queue(_EVAL_INSERT, (rid, task_id, dataset_id, *params))
        return True

    # -- derived columns --------------------------------------------------------
    def rank_new_boards(self) -> None:
        """Flush, then write best_rank of the boards created by this import (no index needed)."""
        self.flush()
        self.boards.rank_memoized(self.conn)

    def finish(self) -> None:
        """Flush, then recompute best_rank of touched boards and derived counts."""
        self.rank_new_boards()
        self.boards.rank_stale(self.conn)
        update_derived(self.conn)
