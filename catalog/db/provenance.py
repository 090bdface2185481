"""Where a catalog's data came from: recorded by every import, read by ``info``, the API and the MCP server.

Stored in ``catalog_meta`` (no schema migration; both values are JSON text):

* ``provenance``: ``{"format": 1, "imports": [IMPORT, ...]}``, oldest first. Every
  ``pwc-catalog import`` **appends** one ``IMPORT`` (the last :data:`MAX_IMPORTS` are kept), so
  the record reflects every import into the database::

      {"imported_at": "2025-08-01T12:00:00+00:00", "origin": "archive"|"sample"|"other",
       "files": [{"name", "kind", "size", "sha256", "dataset", "revision", "checksum_verified",
                  "read", "inserted", "updated", "skipped"}]}

  ``name`` is the path inside the hub dataset when the file came from one
  (``data/train-00000-of-00004.parquet``), else the file name: never a machine path, since the
  API serves the record. ``dataset`` is ``pwc-archive/<name>`` for a file inside a folder named after
  one of the archive's datasets (as ``pwc-catalog download`` and ``hf download --local-dir
  DIR/<name>`` leave it), or the repository id of a hub cache snapshot
  (``datasets--<owner>--<name>/snapshots/<revision>/``); else null. ``revision`` is the commit
  of the hub metadata file (``.cache/huggingface/download/<path>.metadata``, first line) or of
  the snapshot folder. ``checksum_verified`` is true when that metadata's etag (the sha256 of an
  LFS file) equals the file's sha256, false when it differs, null when there is none.
  ``origin`` is ``archive`` when a file is from the Papers With Code archive (a ``pwc-archive/``
  dataset, or a file named like one of its JSON dumps that is not the bundled sample's),
  ``sample`` when the files are the bundled sample's (``SAMPLE_DIR``, or the same bytes copied
  elsewhere), else ``other``.
* ``embedding``: the model of the semantic index, written with every index build (import and
  ``pwc-catalog embed``): ``{"model", "version", "dimension", "papers", "built_at"}``.

:func:`describe` reads both into the one record the CLI (``pwc-catalog info``), the API
(``GET /api/v1/catalog``) and, summarised, the MCP server show. A database imported before
provenance was recorded gets ``"provenance": "unknown"`` with what can still be read (counts,
``imported_at``, the embedding if any).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol, TypedDict

from catalog.db.json_types import JsonObject, JsonValue


class Source(Protocol):
    """What provenance reads of an imported source (``catalog.importer.sources.Source``; the
    database room sits below the importer, so it names only what it reads)."""

    @property
    def path(self) -> Path: ...

    @property
    def kind(self) -> str: ...


class SourceStats(Protocol):
    """What provenance reads of a source's counts (``catalog.importer.stats.SourceStats``)."""

    @property
    def read(self) -> int: ...

    @property
    def inserted(self) -> int: ...

    @property
    def updated(self) -> int: ...

    @property
    def skipped(self) -> int: ...


class HubOrigin(TypedDict):
    """Where a file sits in a hub download (:func:`hub_origin`); unknown values are None."""

    dataset: str | None
    revision: str | None
    name: str
    etag: str | None


class FileEntry(TypedDict):
    """The provenance of one imported file (see the module doc)."""

    name: str
    kind: str
    size: int | None
    sha256: str | None
    dataset: str | None
    revision: str | None
    checksum_verified: bool | None
    read: int | None
    inserted: int | None
    updated: int | None
    skipped: int | None


class ImportEntry(TypedDict):
    """One import as :func:`record_import` writes it (read back, entries are ``JsonObject``)."""

    imported_at: str
    origin: str
    files: list[FileEntry]


class DatasetSummary(TypedDict):
    """One hub dataset as its latest import brought it."""

    id: str
    revision: JsonValue
    imported_at: JsonValue
    files: int


class ProvenanceRecord(TypedDict):
    """What :func:`describe` returns (see the module doc)."""

    provenance: Literal["recorded", "unknown"]
    kind: str | None
    title: str | None
    description: str | None
    license: str | None
    license_url: str | None
    source_url: str | None
    imported_at: JsonValue
    latest_paper: str | None
    counts: dict[str, int | None]
    datasets: list[DatasetSummary]
    embedding: JsonObject | None
    imports: list[JsonObject]


__all__ = [
    "ARCHIVE_DATASETS",
    "ARCHIVE_LICENSE",
    "MAX_IMPORTS",
    "SAMPLE_DIR",
    "DatasetSummary",
    "FileEntry",
    "HubOrigin",
    "ImportEntry",
    "ProvenanceRecord",
    "describe",
    "file_entry",
    "hub_origin",
    "read_record",
    "record_embedding",
    "record_import",
    "render_text",
    "sha256_file",
]

logger = logging.getLogger(__name__)

FORMAT = 1
PROVENANCE_KEY = "provenance"
EMBEDDING_KEY = "embedding"
MAX_IMPORTS = 50  # a record stays small however often a database is re-imported
HASH_BLOCK = 1 << 20  # stream files in 1 MiB blocks: the papers shards are 580 MB

# The datasets `paperswithcode/paperswithcode-data` points to since the shutdown (issue 29).
ARCHIVE_OWNER = "pwc-archive"
ARCHIVE_DATASETS = frozenset({"papers-with-abstracts", "links-between-paper-and-code", "evaluation-tables",
                              "methods", "datasets", "files"})
# The archive's JSON dump names (paperswithcode-data), with or without .json/.json.gz.
_ARCHIVE_DUMPS = ("papers-with-abstracts", "links-between-papers-and-code", "evaluation-tables", "methods",
                  "datasets")
ARCHIVE_LICENSE = "CC BY-SA 4.0"
SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample"
"""The bundled sample catalog's files (``catalog/sample/``; ``catalog.sample`` imports them)."""

_ORIGINS: dict[str, dict[str, str | None]] = {
    "archive": {
        "title": "Papers With Code archive",
        "description": "The Papers With Code data as archived after the site's shutdown: papers with "
                       "abstracts, links between papers and code, methods, datasets and evaluation tables.",
        "license": ARCHIVE_LICENSE,
        "license_url": "https://creativecommons.org/licenses/by-sa/4.0/",
        "source_url": "https://huggingface.co/pwc-archive",
    },
    "sample": {
        "title": "Bundled sample catalog",
        "description": "A handful of real-shaped records bundled with pwc-mcp for trying the server "
                       "(see catalog/sample/README.md); not the Papers With Code archive. Bibliographic "
                       "facts and leaderboard figures are public facts; abstracts and Markdown are "
                       "summaries written for the sample; citation counts and popularity are illustrative.",
        "license": "Apache-2.0",
        "license_url": "https://www.apache.org/licenses/LICENSE-2.0",
        "source_url": None,
    },
    "other": {
        "title": "Imported files",
        "description": "Files imported with pwc-catalog import; the catalog does not know their origin "
                       "or license.",
        "license": None,
        "license_url": None,
        "source_url": None,
    },
}
# When imports of several origins went into one database, the record names the first of these.
_ORIGIN_ORDER = ("archive", "sample", "other")
_COUNTED = (("papers", "papers"), ("repositories", "repositories"), ("methods", "methods"),
            ("datasets", "datasets"), ("tasks", "tasks"), ("evaluations", "evaluations"))
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of ``path``, read in 1 MiB blocks (memory stays flat)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _read_hub_metadata(root: Path, relative: str) -> tuple[str | None, str | None]:
    """``(commit, etag)`` from huggingface_hub's ``.cache/huggingface/download/<relative>.metadata``.

    huggingface_hub (``_local_folder.write_download_metadata``) writes three lines: the commit
    hash, the etag, a timestamp. Anything else reads as unknown.
    """
    metadata = root / ".cache" / "huggingface" / "download" / f"{relative}.metadata"
    try:
        with metadata.open(encoding="utf-8") as handle:
            # Bounded reads: a commit hash and an etag are under 100 characters.
            commit, etag = handle.readline(256).strip(), handle.readline(256).strip()
    except (OSError, UnicodeDecodeError):
        return None, None
    return (commit if _COMMIT.fullmatch(commit) else None), (etag.strip('"') or None)


def hub_origin(path: Path) -> HubOrigin:
    """Where ``path`` sits in a hub download: ``{"dataset", "revision", "name", "etag"}``.

    Recognises a ``--local-dir`` download (an ancestor holding the file's
    ``.cache/huggingface/download/<path>.metadata``),
    a hub cache snapshot (``datasets--<owner>--<name>/snapshots/<revision>/``) and a folder named
    after one of the archive's datasets (``DIR/<name>/`` or ``DIR/<name>/data/``). ``name`` is the
    file's path inside the dataset (POSIX), else its file name; unknown values are None.
    """
    resolved = path.resolve()
    for ancestor in list(resolved.parents)[:6]:
        parent = ancestor.parent
        if parent.name == "snapshots" and parent.parent.name.startswith("datasets--"):
            owner, _, name = parent.parent.name.removeprefix("datasets--").partition("--")
            return {"dataset": f"{owner}/{name}" if owner and name else None,
                    "revision": ancestor.name if _COMMIT.fullmatch(ancestor.name) else None,
                    "name": resolved.relative_to(ancestor).as_posix(), "etag": None}
        relative = resolved.relative_to(ancestor).as_posix()
        if (ancestor / ".cache" / "huggingface" / "download" / f"{relative}.metadata").is_file():
            commit, etag = _read_hub_metadata(ancestor, relative)
            return {"dataset": f"{ARCHIVE_OWNER}/{ancestor.name}" if ancestor.name in ARCHIVE_DATASETS else None,
                    "revision": commit, "name": relative, "etag": etag}
    folder = resolved.parent.parent if resolved.parent.name == "data" else resolved.parent
    if folder.name in ARCHIVE_DATASETS:
        return {"dataset": f"{ARCHIVE_OWNER}/{folder.name}", "revision": None,
                "name": resolved.relative_to(folder).as_posix(), "etag": None}
    return {"dataset": None, "revision": None, "name": path.name, "etag": None}


def _is_archive_dump(name: str) -> bool:
    stem = name.lower().removesuffix(".gz").removesuffix(".json")
    return stem in _ARCHIVE_DUMPS


def file_entry(source: Source, stats: SourceStats | None) -> FileEntry:
    """The provenance of one imported source: name, size, sha256, hub dataset and row counts."""
    where = hub_origin(source.path)
    is_file = source.path.is_file()
    digest = sha256_file(source.path) if is_file else None
    etag = where["etag"]
    verified = None if etag is None or not _SHA256.fullmatch(etag) else etag == digest
    return {
        "name": where["name"] if is_file else source.path.name,
        "kind": source.kind,
        "size": source.path.stat().st_size if is_file else None,
        "sha256": digest,
        "dataset": where["dataset"],
        "revision": where["revision"],
        "checksum_verified": verified,
        "read": stats.read if stats is not None else None,
        "inserted": stats.inserted if stats is not None else None,
        "updated": stats.updated if stats is not None else None,
        "skipped": stats.skipped if stats is not None else None,
    }


@functools.cache
def _sample_digests() -> frozenset[str]:
    """The sha256 of every bundled sample file (a few hundred KB, hashed once per process)."""
    return frozenset(sha256_file(path) for path in SAMPLE_DIR.rglob("*") if path.is_file())


def _origin_of(source: Source, entry: FileEntry) -> str:
    """One imported file's origin: a hub archive dataset, the bundled sample (its folder or its
    bytes: a dump-named copy of the sample is not the archive), an archive dump name, or other."""
    if (entry["dataset"] or "").startswith(f"{ARCHIVE_OWNER}/"):
        return "archive"
    if source.path.resolve().is_relative_to(SAMPLE_DIR) or (entry["sha256"] or "") in _sample_digests():
        return "sample"
    if _is_archive_dump(entry["name"].rsplit("/", 1)[-1]):
        return "archive"
    return "other"


def _load_json(conn: sqlite3.Connection, key: str) -> JsonValue:
    row = conn.execute("SELECT value FROM catalog_meta WHERE key = ?", (key,)).fetchone()
    if row is None or row[0] is None:
        return None
    try:
        value: JsonValue = json.loads(row[0])
        return value
    except ValueError:
        logger.warning("catalog_meta.%s is not JSON; ignored", key)
        return None


def _store_json(conn: sqlite3.Connection, key: str, value: object) -> None:
    conn.execute("INSERT OR REPLACE INTO catalog_meta (key, value) VALUES (?, ?)",
                 (key, json.dumps(value, separators=(",", ":"), ensure_ascii=False)))


def _imports(conn: sqlite3.Connection) -> list[JsonObject]:
    stored = _load_json(conn, PROVENANCE_KEY)
    imports = stored.get("imports") if isinstance(stored, dict) else None
    return [entry for entry in imports if isinstance(entry, dict)] if isinstance(imports, list) else []


def record_import(conn: sqlite3.Connection, sources: Sequence[tuple[Source, SourceStats]]) -> ImportEntry:
    """Append this import's provenance to ``catalog_meta`` (inside the caller's transaction).

    Hashes every source file (1 MiB blocks). Returns the import entry written.
    """
    files = [file_entry(source, stats) for source, stats in sources]
    origins = {_origin_of(source, file) for (source, _), file in zip(sources, files, strict=True)}
    origin = next((o for o in _ORIGIN_ORDER if o in origins), "other")
    entry: ImportEntry = {"imported_at": _now(), "origin": origin, "files": files}
    imports = [*_imports(conn), entry][-MAX_IMPORTS:]
    _store_json(conn, PROVENANCE_KEY, {"format": FORMAT, "imports": imports})
    return entry


def record_embedding(conn: sqlite3.Connection, *, model: str, version: str, dimension: int, papers: int) -> None:
    """Record the model of the semantic index just built (``catalog.importer.embed.build_vectors``)."""
    _store_json(conn, EMBEDDING_KEY, {"model": model, "version": version, "dimension": dimension,
                                      "papers": papers, "built_at": _now()})


def _count(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # table names are fixed above
    except sqlite3.Error:
        return None


def _datasets(imports: Sequence[JsonObject]) -> list[DatasetSummary]:
    """Each hub dataset as its latest import brought it: id, revision, that import's time, file count."""
    latest: dict[str, DatasetSummary] = {}
    for entry in imports:
        here: dict[str, DatasetSummary] = {}
        files = entry.get("files") or []
        for file in files if isinstance(files, list) else []:
            if not isinstance(file, dict):
                continue
            dataset = file.get("dataset")
            if not isinstance(dataset, str) or not dataset:
                continue
            seen = here.setdefault(dataset, {"id": dataset, "revision": None,
                                             "imported_at": entry.get("imported_at"), "files": 0})
            seen["files"] += 1
            seen["revision"] = seen["revision"] or file.get("revision")
        latest.update(here)
    return sorted(latest.values(), key=lambda d: d["id"])


def describe(conn: sqlite3.Connection) -> ProvenanceRecord:
    """The provenance record of the database behind ``conn`` (read-only; see the module doc).

    Raises:
        sqlite3.Error: not a catalog database.
    """
    imports = _imports(conn)
    embedding = _load_json(conn, EMBEDDING_KEY)
    row = conn.execute("SELECT value FROM catalog_meta WHERE key = 'imported_at'").fetchone()
    origins = {str(entry.get("origin")) for entry in imports}
    kind = next((o for o in _ORIGIN_ORDER if o in origins), None)
    facts = _ORIGINS.get(kind or "", {})
    latest = conn.execute("SELECT max(published) FROM papers").fetchone()[0]
    return {
        "provenance": "recorded" if imports else "unknown",
        "kind": kind,
        "title": facts.get("title"),
        "description": facts.get("description"),
        "license": facts.get("license"),
        "license_url": facts.get("license_url"),
        "source_url": facts.get("source_url"),
        "imported_at": row[0] if row else (imports[-1].get("imported_at") if imports else None),
        "latest_paper": latest,
        "counts": {name: _count(conn, table) for name, table in _COUNTED},
        "datasets": _datasets(imports),
        "embedding": embedding if isinstance(embedding, dict) else None,
        "imports": imports,
    }


def _size(value: object) -> str:
    if not isinstance(value, int):
        return "-"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"


def _number(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "-"


def render_text(record: ProvenanceRecord, db: Path) -> str:
    """The compact human summary ``pwc-catalog info`` prints (``--json`` prints ``record`` whole)."""
    counts = record.get("counts") or {}
    lines = [f"catalog: {db}"]
    if record.get("provenance") == "unknown":
        lines.append("provenance: unknown (imported before provenance was recorded; re-import to record it)")
    else:
        licence = record.get("license") or "license unknown"
        lines.append(f"data: {record.get('title')} ({record.get('kind')}), {licence}")
        if record.get("description"):
            lines.append(f"about: {record['description']}")
        if record.get("source_url"):
            lines.append(f"source: {record['source_url']}")
    lines.append(f"imported: {record.get('imported_at') or 'unknown'}; latest paper: "
                 f"{record.get('latest_paper') or '-'}")
    lines.append("counts: " + ", ".join(f"{_number(value)} {name}" for name, value in counts.items()))
    for dataset in record.get("datasets") or []:
        revision = dataset.get("revision") or "revision unknown"
        lines.append(f"dataset: {dataset.get('id')} @ {revision} ({dataset.get('files')} files, "
                     f"imported {dataset.get('imported_at')})")
    imports = record.get("imports") or []
    if imports:
        last = imports[-1]
        more = f"; {len(imports) - 1} earlier in --json" if len(imports) > 1 else ""
        lines.append(f"files of the last import ({last.get('imported_at')}{more}):")
        files = last.get("files") or []
        for file in files if isinstance(files, list) else []:
            if not isinstance(file, dict):
                continue
            digest, verified = file.get("sha256"), file.get("checksum_verified")
            checked = ", matches the hub" if verified is True else ", DIFFERS from the hub" if verified is False else ""
            # A hub file's name is its path inside the dataset (every shard is data/train-…): say whose.
            where = f"{file['dataset']}/" if isinstance(file.get("dataset"), str) else ""
            lines.append(f"  {where}{file.get('name')} ({file.get('kind')}): {_size(file.get('size'))}, "
                         f"sha256 {digest[:16] + '…' if isinstance(digest, str) else '-'}{checked}; "
                         f"read {_number(file.get('read'))}, inserted {_number(file.get('inserted'))}, "
                         f"updated {_number(file.get('updated'))}, skipped {_number(file.get('skipped'))}")
    embedding = record.get("embedding")
    if embedding:
        lines.append(f"embedding: {embedding.get('model')} ({embedding.get('dimension')}-d, "
                     f"{_number(embedding.get('papers'))} papers, built {embedding.get('built_at')})")
    else:
        lines.append("embedding: none (build it with `pwc-catalog embed --db FILE`)")
    return "\n".join(lines)


def read_record(db: Path) -> ProvenanceRecord:
    """Open ``db`` read-only and :func:`describe` it.

    Raises:
        FileNotFoundError: no such file.
        sqlite3.Error: not a catalog database (or unreadable).
    """
    if not db.is_file():
        raise FileNotFoundError(f"catalog database not found: {db}")
    conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
    try:
        return describe(conn)
    finally:
        conn.close()
