"""``run_import``: detect sources, import into a temporary copy, replace atomically."""

from __future__ import annotations

import gc
import io
import logging
import os
import secrets
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Protocol, TextIO, cast

from catalog.db import provenance, schema
from catalog.db.bulk import BulkLoad, is_empty
from catalog.importer import dumps, embed, others
from catalog.importer import sources as srcs
from catalog.importer.extras import load_extras
from catalog.importer.stats import SourceStats
from catalog.importer.writer import Writer

if TYPE_CHECKING:
    from tqdm import tqdm

logger = logging.getLogger(__name__)

PLAIN_EVERY = 100_000  # records between plain progress lines
_LOADERS = {"papers": dumps.load_papers, "links": dumps.load_links,
            "methods": dumps.load_methods, "datasets": dumps.load_datasets,
            "evaluations": dumps.load_evaluations, "arxiv": others.load_arxiv}


class _Counter(Protocol):
    """Where a source's reader is: bytes read (a JSON source) or rows read (a parquet shard)."""

    @property
    def position(self) -> int: ...


class _Progress:
    """tqdm bar on a terminal (over source bytes; over rows for a parquet shard, whose row
    count the footer gives, so the bar has a rate and an ETA); plain lines otherwise."""

    def __init__(self, out: TextIO, source: srcs.Source) -> None:
        self.out, self.source = out, source
        self.bar: tqdm[NoReturn] | None = None
        isatty = getattr(out, "isatty", None)
        if callable(isatty) and isatty():
            from tqdm import tqdm

            if source.rows is not None:
                self.bar = tqdm(total=source.rows, unit=" rows", unit_scale=True, file=out,
                                desc=source.name, leave=False)
            else:
                self.bar = tqdm(total=source.size or None, unit="B", unit_scale=True, file=out,
                                desc=source.name, leave=False)
        else:
            rows = f", {source.rows} rows" if source.rows is not None else ""
            print(f"importing {source.path} ({source.kind}, {source.format}{rows})", file=out,
                  flush=True)

    def track(self, items: Iterator[tuple[int, object, _Counter]]) -> Iterator[tuple[int, object]]:
        """Re-yield ``(number, record)`` while updating the progress display."""
        for number, record, counter in items:
            if number % 2000 == 0:
                if self.bar is not None:
                    self.bar.update(counter.position - self.bar.n)
                elif number % PLAIN_EVERY == 0:
                    print(f"  {self.source.name}: {number} records", file=self.out, flush=True)
            yield number, record

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Discard(io.TextIOBase):
    """A text sink that is not a terminal and keeps nothing (the progress of a quiet import)."""

    def write(self, text: str) -> int:
        return len(text)


def _import_source(writer: Writer, source: srcs.Source, stats: SourceStats, out: TextIO,
                   quiet: bool = False) -> None:
    progress = _Progress(cast(TextIO, _Discard()) if quiet else out, source)
    writer.start_source()
    kept_apart = writer.kept_apart
    try:
        if source.kind == "markdown":
            others.load_markdown(writer, source.path, stats)
        elif source.kind == "extras":
            load_extras(writer, srcs.load_object(source.path), stats)
        elif source.format == "parquet":
            from catalog.importer import parquet

            _LOADERS[source.kind](writer, progress.track(parquet.iter_records(source, stats)),
                                  stats)
        else:
            reader = srcs.iter_lines if source.kind == "arxiv" else srcs.iter_array
            _LOADERS[source.kind](writer, progress.track(reader(source.path)), stats)
        writer.flush()
    finally:
        progress.close()
        dumps.CONTEXT.stats = None
    stats.kept_apart = writer.kept_apart - kept_apart


def _detect(path: Path) -> srcs.Source:
    """A parquet shard's kind from its footer (pyarrow only then); any other source's by
    :func:`catalog.importer.sources.detect`."""
    if path.suffix.lower() == ".parquet" or (path.is_file() and _starts_with(path, b"PAR1")):
        from catalog.importer import parquet

        return parquet.detect(path)
    return srcs.detect(path)


def _starts_with(path: Path, magic: bytes) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def _temp_name(db: Path) -> Path:
    return db.with_name(f"{db.name}.tmp-{secrets.token_hex(4)}")


def _prepare_temp(db: Path, temp: Path) -> None:
    """Copy the current database (if any) to ``temp`` with SQLite's backup API."""
    if db.exists():
        src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        dst = sqlite3.connect(str(temp))
        try:
            src.backup(dst)
        finally:
            src.close()
            dst.close()


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def run_import(db: Path, sources: list[Path], *, out: TextIO, quiet: bool = False) -> int:
    """Import ``sources`` into the catalog database ``db``; return the exit code.

    ``sources`` are dump files, parquet shards, Markdown folders, or folders in the
    Hub's published layout (expanded by :func:`catalog.importer.sources.expand`).
    0 on success (a summary line per source is printed to ``out``); 2 when a
    source is unusable (missing, corrupt or truncated gzip or parquet, invalid JSON,
    not a dump, a folder with nothing to import, a parquet shard missing a required
    column) and 1 when the database cannot be written: one ``error:`` line names
    the file and position, and ``db`` is left exactly as it was (the import
    builds a temporary copy beside it and renames it over ``db`` only at the end).
    Sources are imported in dependency order (papers, methods, datasets,
    evaluation tables, links, arXiv metadata, Markdown, extras), each in one
    transaction, into a temporary copy that replaces ``db`` atomically.
    The copy is loaded in the bulk-load mode of :mod:`catalog.db.bulk`
    (no FTS triggers; on a first import no secondary indexes either); indexes,
    ``papers_fts`` and the triggers are rebuilt in the last transaction,
    before the swap. Progress (a bar on a terminal, a line per stage otherwise)
    goes to ``out`` too; ``quiet`` leaves only errors and the summary.
    Every exit (an error, Ctrl-C, SIGTERM) removes the
    temporary copy and unpublished vector files; SIGTERM exits with 143.
    """
    # The import allocates millions of long-lived containers (key maps, parsed records)
    # and no reference cycles; automatic collections kept re-scanning them all and cost
    # ~40 % of a 500,000-row import. Collected once at the end instead: the young generation
    # only, which holds everything the import allocated (a full collection would also rescan
    # the older heap of a long-lived caller, ~0.1 s in a test process, for nothing).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    previous = None
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (docker stop, systemd) would end the process without the cleanup below.
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run_import(db, sources, out, quiet)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if gc_was_enabled:
            gc.enable()
        gc.collect(0)


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _run_import(db: Path, sources: list[Path], out: TextIO, quiet: bool) -> int:
    started = time.perf_counter()
    temp: Path | None = None
    conn: sqlite3.Connection | None = None
    pending: embed.PendingVectors | None = None
    try:
        paths = [found for p in sources for found in srcs.expand(Path(p))]
        detected = sorted(map(_detect, paths), key=lambda s: srcs.KIND_ORDER[s.kind])
        if not detected:
            print("error: no sources given", file=out)
            return 2
        db = Path(db)
        temp = _temp_name(db)  # named first, so a failing copy is removed too
        _prepare_temp(db, temp)
        conn = sqlite3.connect(str(temp), isolation_level=None)
        conn.execute("PRAGMA journal_mode=MEMORY")  # the temp copy is discarded on failure
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA foreign_keys=OFF")  # ids are assigned and checked by the Writer
        conn.execute("PRAGMA cache_size=-65536")
        schema.migrate(conn)
        # Bulk-load mode (catalog.db.bulk): no FTS trigger per paper row and, on a
        # first import, no index updates per row; rebuilt once at the end instead.
        # Safe because only this process sees the temp copy until the atomic swap.
        bulk = BulkLoad(conn)
        bulk.begin(drop_indexes=is_empty(conn))
        writer = Writer(conn)
        all_stats: list[SourceStats] = []
        for source in detected:
            stats = SourceStats(source.name, source.kind)
            conn.execute("BEGIN")
            _import_source(writer, source, stats, out, quiet)
            conn.execute("COMMIT")
            all_stats.append(stats)
        # The finishing stages take minutes at the archive's size: one line each, so a log
        # (or a terminal, once the bars are gone) shows where the import is.
        def stage(text: str) -> None:
            if not quiet:
                print(text, file=out, flush=True)

        conn.execute("BEGIN")
        stage("ranking leaderboards")
        writer.rank_new_boards()  # by row id, before the indexes exist: no index upkeep
        stage("building indexes and the full-text index")
        bulk.restore_indexes()  # re-ranking other boards looks them up by (task, dataset)
        writer.finish()
        bulk.finish(rebuild=writer.fts_dirty)
        conn.execute("INSERT OR REPLACE INTO catalog_meta (key, value) VALUES ('imported_at', ?)",
                      (datetime.now(UTC).isoformat(timespec="seconds"),))
        stage(f"recording provenance (sha256 of {len(detected)} sources)")
        provenance.record_import(conn, list(zip(detected, all_stats, strict=True)))
        conn.execute("COMMIT")
        # The semantic index, stamped into the copy; unchanged papers keep the vectors of the db replaced.
        pending = embed.build_vectors(conn, db, out=out, quiet=quiet, previous=db)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
        conn = None
        os.replace(temp, db)
        temp = None
        pending.publish()
    except srcs.SourceError as exc:
        print(f"error: {exc}", file=out)
        return 2
    except (sqlite3.Error, OSError) as exc:
        print(f"error: cannot write catalog database {db}: {exc}", file=out)
        return 1
    finally:
        if conn is not None:
            conn.close()
        if temp is not None:
            _remove(temp)
        if pending is not None:
            pending.discard()
    elapsed = time.perf_counter() - started
    total = sum(s.read for s in all_stats)
    for stats in all_stats:
        print(stats.summary(), file=out)
        for reason in stats.reasons:
            print(f"  skipped {reason}", file=out)
        for reason in stats.cut_reasons:
            print(f"  cut {reason}", file=out)
    print(f"imported {total} records from {len(all_stats)} sources into {db} in {elapsed:.2f} s "
          f"({total / elapsed if elapsed > 0 else 0:.0f} records/s)", file=out, flush=True)
    logger.info("catalog import finished: %d records, %d sources", total, len(all_stats))
    return 0
