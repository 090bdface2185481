"""SQLite schema of the self-hosted catalog, with numbered migrations.

The database is plain SQLite (stdlib ``sqlite3``) with one FTS5 table. Its
version lives in ``PRAGMA user_version``; ``MIGRATIONS[i]`` upgrades version
``i`` to ``i + 1``, and :func:`migrate` applies the missing ones in order.
Never edit a released migration: append a new one.

Conventions shared by the importer (the only writer) and the store (reader):

* JSON columns hold compact JSON text (``json.dumps``) and are never NULL
  when documented as lists: ``'[]'`` is the empty value.
* Booleans are INTEGER 0/1; nullable booleans use NULL for "unknown".
* Dates are ISO ``YYYY-MM-DD`` text; timestamps ISO 8601 text (UTC).
* ``papers.arxiv_id`` is stored **without** a version suffix
  (``1706.03762``, ``math.GT/0309136``); the store strips ``vN`` from
  references before looking them up.
* Derived columns (``papers.code_repository_count``,
  ``papers.has_official_implementation``, ``papers.trend``,
  ``organizations.*_paper_year``)
  are maintained by the importer; counts shown by the API for tasks,
  methods, datasets and organizations are computed by the store at query time.
* Full-text search: ``papers_fts`` is an external-content FTS5 table over
  ``papers(title, abstract, authors)``, kept in sync by **triggers** on
  ``papers``. Only the importer's bulk-load mode (``catalog.db.bulk``,
  on its private temporary copy) may drop them and secondary indexes; it
  re-creates them and calls :func:`rebuild_fts` before the copy is swapped in.
* Migration 2 (``catalog.db.v2``) adds the indexes the hot read paths
  need (case-insensitive arXiv ids and slugs, covering link indexes).
* Migration 3 (``catalog.db.v3``) adds the derived ``papers.trend`` and
  the covering indexes of paper lists and task benchmarks at archive size.
* Migration 4 (``catalog.db.v4``) adds ``entity_aliases``: the task
  synonyms and dataset variants the archive lists.
* Titles used for exact matching go through :func:`normalize_title`; the
  external-metadata "Name:" prefix through :func:`title_prefix`; Markdown
  versions through :func:`content_version`. Import these helpers instead of
  re-implementing them so the reader and the writer agree.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import unicodedata
from pathlib import Path

from catalog.db.v2 import V2
from catalog.db.v3 import V3
from catalog.db.v4 import V4

logger = logging.getLogger(__name__)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "analyze",
    "content_version",
    "create_db",
    "migrate",
    "normalize_title",
    "rebuild_fts",
    "schema_version",
    "title_prefix",
]

_V1 = """
-- Research areas (Computer Vision, NLP, ...).
CREATE TABLE areas (
    id INTEGER PRIMARY KEY,          -- catalog area id
    name TEXT NOT NULL,              -- display name, unique case-insensitively
    slug TEXT NOT NULL UNIQUE        -- url slug
);

-- Conferences (one row per edition, e.g. NeurIPS 2017).
CREATE TABLE conferences (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,       -- e.g. neurips-2017
    name TEXT NOT NULL,              -- e.g. NeurIPS 2017
    year INTEGER,
    tier TEXT,                       -- e.g. a*, a (the CLI upper-cases it)
    start_date TEXT,                 -- ISO date
    end_date TEXT,                   -- ISO date
    venue TEXT,
    location TEXT,                   -- e.g. "Long Beach, USA"
    description TEXT,
    url TEXT,                        -- official website
    hf_url TEXT                      -- Hugging Face collection/page
);

-- Papers, both arXiv papers and catalog-only ("external") papers.
CREATE TABLE papers (
    id INTEGER PRIMARY KEY,          -- numeric catalog id (API `id`, sent as a string)
    arxiv_id TEXT UNIQUE,            -- arXiv id WITHOUT version suffix; NULL for external papers
    slug TEXT,                       -- PwC-style slug (e.g. attention-is-all-you-need)
    title TEXT NOT NULL,
    abstract TEXT,
    authors TEXT NOT NULL DEFAULT '[]',   -- JSON list of author display names, in order
    published TEXT,                  -- ISO date of publication
    conference_id INTEGER REFERENCES conferences(id),
    citation_count INTEGER NOT NULL DEFAULT 0,
    url_abs TEXT,                    -- abstract page URL
    url_pdf TEXT,                    -- PDF URL
    source_url TEXT,                 -- where the record came from (external papers)
    has_official_implementation INTEGER NOT NULL DEFAULT 0,  -- derived: any official repository
    code_repository_count INTEGER NOT NULL DEFAULT 0,        -- derived: rows in repositories
    popularity REAL NOT NULL DEFAULT 0,   -- stored trend signal (e.g. recent stars/views); >= 0
    is_latest INTEGER NOT NULL DEFAULT 1, -- 0 for superseded versions of a paper
    hf_models TEXT NOT NULL DEFAULT '[]',     -- JSON list of HF model URLs
    hf_datasets TEXT NOT NULL DEFAULT '[]',   -- JSON list of HF dataset URLs
    hf_spaces TEXT NOT NULL DEFAULT '[]',     -- JSON list of HF Space URLs
    project_pages TEXT NOT NULL DEFAULT '[]'  -- JSON list of {url, is_official} or URL strings
);
CREATE INDEX papers_slug ON papers(slug);
CREATE INDEX papers_published ON papers(published);
CREATE INDEX papers_conference ON papers(conference_id);
CREATE INDEX papers_citations ON papers(citation_count);
CREATE INDEX papers_popularity ON papers(popularity);
CREATE INDEX papers_title_nocase ON papers(title COLLATE NOCASE);

-- Code repositories linked to papers.
CREATE TABLE repositories (
    id INTEGER PRIMARY KEY,
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    url TEXT NOT NULL,               -- e.g. https://github.com/owner/name
    is_official INTEGER NOT NULL DEFAULT 0,
    framework TEXT,                  -- free text from the dump (pytorch, tf, jax, none)
    stars INTEGER,                   -- GitHub stars when known
    UNIQUE (paper_id, url)
);
CREATE INDEX repositories_url ON repositories(url);

-- Author index (papers.authors keeps the display list; this table gives ids).
CREATE TABLE authors (
    id INTEGER PRIMARY KEY,          -- numeric author id (API: numeric string)
    name TEXT NOT NULL,              -- display name
    normalized_name TEXT NOT NULL,   -- normalize_title(name): whitespace-collapsed, casefolded
    hf_username TEXT                 -- Hugging Face username without '@', NULL if unknown
);
CREATE INDEX authors_normalized ON authors(normalized_name);
CREATE INDEX authors_hf ON authors(hf_username COLLATE NOCASE);

CREATE TABLE paper_authors (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    author_id INTEGER NOT NULL REFERENCES authors(id) ON DELETE CASCADE,
    position INTEGER NOT NULL DEFAULT 0,  -- 0-based author order
    PRIMARY KEY (paper_id, author_id)
);
CREATE INDEX paper_authors_author ON paper_authors(author_id);

-- Tasks, a hierarchy (parent_id) inside areas.
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT,
    area_id INTEGER REFERENCES areas(id),
    parent_id INTEGER REFERENCES tasks(id),  -- NULL for top-level tasks
    level INTEGER NOT NULL DEFAULT 0,        -- 0 = top level, parent level + 1 below
    research_trends TEXT NOT NULL DEFAULT '[]',  -- JSON list of short trend sentences
    visible INTEGER NOT NULL DEFAULT 1,      -- 0 hides the task from visible_only lists
    created_at TEXT                          -- ISO timestamp (ordering=created_at)
);
CREATE INDEX tasks_area ON tasks(area_id);
CREATE INDEX tasks_parent ON tasks(parent_id);
CREATE INDEX tasks_name_nocase ON tasks(name COLLATE NOCASE);

CREATE TABLE paper_tasks (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    PRIMARY KEY (paper_id, task_id)
);
CREATE INDEX paper_tasks_task ON paper_tasks(task_id);

-- Methods (Transformer, Adam, Dropout, ...).
CREATE TABLE methods (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    full_name TEXT,
    description TEXT,
    area_id INTEGER REFERENCES areas(id),
    introduced_year INTEGER,
    source_paper_id INTEGER REFERENCES papers(id),  -- introducing paper if in the catalog
    source_url TEXT,                 -- may be site-relative, e.g. /paper/1706.03762
    source_title TEXT,               -- label of source_url
    created_at TEXT
);
CREATE INDEX methods_area ON methods(area_id);
CREATE INDEX methods_name_nocase ON methods(name COLLATE NOCASE);

CREATE TABLE paper_methods (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    method_id INTEGER NOT NULL REFERENCES methods(id) ON DELETE CASCADE,
    PRIMARY KEY (paper_id, method_id)
);
CREATE INDEX paper_methods_method ON paper_methods(method_id);

-- Datasets = benchmarks.
CREATE TABLE datasets (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    full_name TEXT,
    description TEXT,
    hf_url TEXT,                     -- Hugging Face dataset URL
    featured_rank INTEGER,           -- lower = more prominent; NULL = not featured
    created_at TEXT
);
CREATE INDEX datasets_name_nocase ON datasets(name COLLATE NOCASE);

CREATE TABLE dataset_tasks (
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    PRIMARY KEY (dataset_id, task_id)
);
CREATE INDEX dataset_tasks_task ON dataset_tasks(task_id);

-- Leaderboard rows: one reported result of a model on (task, dataset).
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    paper_id INTEGER REFERENCES papers(id) ON DELETE SET NULL,  -- NULL when the paper is unknown
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    model_name TEXT NOT NULL,
    harness TEXT,                    -- evaluation harness / variant label
    metrics TEXT NOT NULL DEFAULT '{}',  -- JSON {name: number | numeric string}, values as given
    best_metric TEXT,                -- name of the ranking metric
    best_rank INTEGER,               -- rank within (task, dataset) on best_metric; NULL unknown
    is_open INTEGER,                 -- 1 open weights, 0 closed, NULL unknown
    num_parameters INTEGER,          -- parameter count, NULL unknown
    methodology TEXT,                -- free text, e.g. "5-shot evaluation on the validation split."
    split TEXT,
    split_name TEXT,
    evaluated_on TEXT,
    result_url TEXT,                 -- may be site-relative (/paper/...)
    source_url TEXT,
    external_source_url TEXT,
    code_url TEXT,
    hf_model_url TEXT,
    uses_additional_data INTEGER,    -- NULL when the dump omits it
    updated_at TEXT,                 -- ISO timestamp
    paper_title TEXT,                -- copied from the dump; used when paper_id is NULL
    paper_published_date TEXT,       -- ISO date; used when paper_id is NULL
    paper_url TEXT                   -- paper URL from the dump
);
CREATE INDEX evaluations_paper ON evaluations(paper_id);
CREATE INDEX evaluations_dataset_rank ON evaluations(dataset_id, best_rank);
CREATE INDEX evaluations_task ON evaluations(task_id);

-- Frameworks (PyTorch, vLLM, ...), grouped into domain > category.
CREATE TABLE frameworks (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT,
    domain_slug TEXT NOT NULL,       -- e.g. llm
    domain_name TEXT NOT NULL,       -- e.g. Large Language Models
    category_slug TEXT NOT NULL,     -- e.g. inference
    category_name TEXT NOT NULL,
    platforms TEXT NOT NULL DEFAULT '[]',  -- JSON list, e.g. ["linux", "apple"]
    organization_name TEXT,
    when_to_use TEXT,
    github_url TEXT,
    docs_url TEXT,
    introducing_paper_arxiv_id TEXT  -- arXiv id of the introducing paper, if any
);

CREATE TABLE paper_frameworks (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    framework_id INTEGER NOT NULL REFERENCES frameworks(id) ON DELETE CASCADE,
    PRIMARY KEY (paper_id, framework_id)
);
CREATE INDEX paper_frameworks_framework ON paper_frameworks(framework_id);

-- Organizations (labs, companies, universities).
CREATE TABLE organizations (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT,
    is_featured INTEGER NOT NULL DEFAULT 0,
    trending_rank INTEGER,           -- 1 = most trending; NULL = unranked
    first_paper_year INTEGER,        -- derived from linked papers
    latest_paper_year INTEGER,       -- derived from linked papers
    website_url TEXT,
    github_url TEXT,
    hf_url TEXT
);

CREATE TABLE paper_organizations (
    paper_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    organization_id INTEGER NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    PRIMARY KEY (paper_id, organization_id)
);
CREATE INDEX paper_organizations_org ON paper_organizations(organization_id);

-- Paper lineage: successor builds on predecessor.
CREATE TABLE lineage (
    predecessor_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    successor_id INTEGER NOT NULL REFERENCES papers(id) ON DELETE CASCADE,
    PRIMARY KEY (predecessor_id, successor_id)
);
CREATE INDEX lineage_successor ON lineage(successor_id);

-- Full text of papers as Markdown.
CREATE TABLE paper_markdown (
    paper_id INTEGER PRIMARY KEY REFERENCES papers(id) ON DELETE CASCADE,
    markdown TEXT NOT NULL,
    content_version TEXT NOT NULL    -- content_version(markdown): sha256 hex of the UTF-8 text
);

-- Metadata of papers the catalog may not hold (public-metadata endpoints).
CREATE TABLE external_metadata (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL CHECK (source IN ('arxiv', 'crossref', 'huggingface')),
    arxiv_id TEXT,                   -- without version suffix
    doi TEXT,                        -- lower-cased, without https://doi.org/
    hf_id TEXT,                      -- Hugging Face Papers id (usually the arXiv id)
    title TEXT NOT NULL,
    normalized_title TEXT NOT NULL,  -- normalize_title(title)
    title_prefix TEXT,               -- title_prefix(title): normalized "Name" before ':'; NULL if none
    authors TEXT NOT NULL DEFAULT '[]',   -- JSON list of names
    abstract TEXT,
    published TEXT,                  -- ISO date
    links TEXT NOT NULL DEFAULT '[]'      -- JSON list of extra {label, url}
);
CREATE INDEX external_metadata_arxiv ON external_metadata(arxiv_id);
CREATE INDEX external_metadata_doi ON external_metadata(doi);
CREATE INDEX external_metadata_hf ON external_metadata(hf_id);
CREATE INDEX external_metadata_title ON external_metadata(normalized_title);
CREATE INDEX external_metadata_prefix ON external_metadata(title_prefix);

-- Free-form key/value facts about the database (e.g. imported_at).
CREATE TABLE catalog_meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

-- Keyword search over papers; external content, synced by the triggers below.
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors,
    content='papers', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER papers_fts_insert AFTER INSERT ON papers BEGIN
    INSERT INTO papers_fts(rowid, title, abstract, authors)
    VALUES (new.id, new.title, coalesce(new.abstract, ''), new.authors);
END;
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors)
    VALUES ('delete', old.id, old.title, coalesce(old.abstract, ''), old.authors);
END;
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, authors ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors)
    VALUES ('delete', old.id, old.title, coalesce(old.abstract, ''), old.authors);
    INSERT INTO papers_fts(rowid, title, abstract, authors)
    VALUES (new.id, new.title, coalesce(new.abstract, ''), new.authors);
END;
"""

# MIGRATIONS[i] takes the database from user_version i to i + 1.
MIGRATIONS: tuple[str, ...] = (_V1, V2, V3, V4)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    """Return ``PRAGMA user_version`` (0 for a new, empty database)."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the missing migrations in order and return the resulting version.

    Each migration runs in its own transaction together with its
    ``user_version`` bump, so a failure leaves the previous version intact.

    Raises:
        RuntimeError: the database is newer than this code knows.
        sqlite3.Error: a migration failed (rolled back).
    """
    current = schema_version(conn)
    if current > SCHEMA_VERSION:
        raise RuntimeError(
            f"catalog database schema v{current} is newer than supported v{SCHEMA_VERSION}")
    for version in range(current, SCHEMA_VERSION):
        script = MIGRATIONS[version]
        # executescript commits any pending transaction first; wrap explicitly.
        conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version + 1};\nCOMMIT;")
        logger.info("catalog schema migrated to v%d", version + 1)
    return schema_version(conn)


def create_db(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) a writable catalog database and migrate it.

    Sets ``journal_mode=WAL`` and ``foreign_keys=ON``. The caller owns and
    closes the connection.
    """
    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    migrate(conn)
    return conn


def analyze(conn: sqlite3.Connection) -> None:
    """Refresh the query planner's statistics (``sqlite_stat1``) after a load.

    ``analysis_limit`` samples each index instead of reading it whole, so this
    takes seconds even at the archive's size.
    """
    conn.execute("PRAGMA analysis_limit = 1000")
    conn.execute("ANALYZE")


def rebuild_fts(conn: sqlite3.Connection) -> None:
    """Rebuild ``papers_fts`` from ``papers`` (idempotent; use after bulk loads)."""
    conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")


_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


def normalize_title(text: str) -> str:
    """Normalize a title or name for exact matching.

    NFKC, casefold, every run of non-word characters (punctuation, spaces)
    becomes one space, stripped. ``"Attention Is  All You Need!"`` →
    ``"attention is all you need"``.
    """
    folded = unicodedata.normalize("NFKC", text).casefold().replace("_", " ")
    return _NON_WORD.sub(" ", folded).strip()


def title_prefix(title: str) -> str | None:
    """Return the normalized short name before the first ``:``, or None.

    ``"LLaMA: Open and Efficient Foundation Language Models"`` → ``"llama"``.
    Titles without a colon, or with nothing before it, give None.
    """
    head, sep, _ = title.partition(":")
    if not sep:
        return None
    normalized = normalize_title(head)
    return normalized or None


def content_version(markdown: str) -> str:
    """Return the sha256 hex digest of ``markdown`` encoded as UTF-8 (64 chars)."""
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()
