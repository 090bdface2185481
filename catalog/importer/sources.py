"""Source files: format detection and streaming record readers.

Dump files (``.json`` or ``.json.gz``, detected by magic bytes, not only the
name) are JSON arrays streamed record by record with ``ijson``, so a 560 MB
dump never sits in memory. The arXiv OAI snapshot is JSON-lines (one object
per line). ``catalog-extras.json`` is one small JSON object. A Markdown source
is a folder. Parquet shards of the archive as published on the Hub are
detected and read by :mod:`catalog.importer.parquet`; :func:`expand` turns
folders in the published layout into their shards.

Any file-level problem (bad gzip, truncated stream, invalid JSON, unknown
format) raises :class:`SourceError` naming the file and the position: the
byte offset in the file as stored (compressed bytes for ``.gz``) and the
number of the record being read.

Every reader checks the bytes against the structural bounds of
:mod:`catalog.importer.limits` (nesting depth, string, record and line sizes)
*before* a parser sees them, so a hostile file (``[[[[...``, a 10 GB string)
is refused with a :class:`SourceError` naming the byte (of the decompressed
stream for ``.gz``) instead of growing the process.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import ijson

from catalog.db.json_types import JsonObject, JsonValue
from catalog.importer import limits
from catalog.importer.limits import JsonGuard, LimitError, check_json

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

KINDS = ("papers", "methods", "datasets", "evaluations", "links", "arxiv", "markdown", "extras")
# Import order: entities referenced by later kinds come first.
KIND_ORDER = {kind: index for index, kind in enumerate(KINDS)}

_NAME_HINTS = (
    ("papers-with-abstracts", "papers"),
    ("links-between-papers-and-code", "links"),
    ("evaluation-tables", "evaluations"),
    ("catalog-extras", "extras"),
    ("methods", "methods"),
    ("datasets", "datasets"),
    ("arxiv", "arxiv"),
    ("oai", "arxiv"),
    ("links", "links"),
    ("papers", "papers"),
)
_EXTRAS_KEYS = {"areas", "tasks", "conferences", "organizations", "frameworks", "papers",
                "lineage", "evaluations", "datasets", "methods"}


class SourceError(Exception):
    """A whole source file is unusable; ``str()`` is the one-line message."""


@dataclass
class Source:
    """One import source: its path, detected kind and size in bytes (0 for folders).

    ``format`` is ``"json"`` (dumps, JSON lines, Markdown folders) or ``"parquet"``
    (one shard; ``rows`` is its row count from the footer).
    """

    path: Path
    kind: str
    size: int
    format: str = "json"
    rows: int | None = None

    @property
    def name(self) -> str:
        """Name shown in summaries: the file name; ``<dataset>/<shard>`` for a parquet shard
        (``<dataset>/data/<shard>`` on the Hub: shard names repeat across datasets)."""
        if self.format == "parquet":
            parent = self.path.parent
            return f"{parent.parent.name if parent.name == 'data' else parent.name}/{self.path.name}"
        return self.path.name


class CountingReader(io.RawIOBase):
    """Binary reader that counts the bytes read from the underlying file."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        data = self._raw.read(len(view))
        view[: len(data)] = data
        self.position += len(data)
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


class GuardedReader:
    """File-like ``read`` that passes every chunk through a :class:`JsonGuard` first."""

    def __init__(self, stream: IO[bytes], guard: JsonGuard) -> None:
        self._stream = stream
        self.guard = guard

    def read(self, size: int = -1) -> bytes:
        """Read like ``stream.read``; raise :class:`LimitError` if the bytes pass a bound.

        Inside a long string it reads as much as the string holds so far: yajl lexes
        a token split over reads again from its start on every read, which would
        make a 50 MB string cost minutes; growing reads keep it linear.
        """
        if 0 < size < self.guard.string_bytes and self.guard.in_string:
            size = self.guard.string_bytes
        data = self._stream.read(size)
        self.guard.feed(data)
        return data


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def open_stream(path: Path) -> tuple[IO[bytes], CountingReader]:
    """Open ``path`` for reading decompressed bytes; return (stream, byte counter)."""
    counter = CountingReader(path.open("rb"))
    if _is_gzip(path):
        return gzip.GzipFile(fileobj=counter, mode="rb"), counter  # type: ignore[return-value]
    return io.BufferedReader(counter, buffer_size=1 << 16), counter


_STREAM_ERRORS = (ijson.JSONError, EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError,
                  ValueError, OSError)


def _refuse(path: Path, exc: LimitError, offset: int, record: int) -> SourceError:
    """The message of a file refused for passing a bound of :mod:`catalog.importer.limits`."""
    where = "byte" if not _is_gzip(path) else "decompressed byte"
    return SourceError(f"{path}: {exc} at {where} {offset} (record {record}); "
                       "refused: real dumps stay far below this bound")


def _fail(path: Path, counter: CountingReader, record: int, exc: BaseException) -> SourceError:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if isinstance(exc, EOFError):
        reason = "file is truncated (" + reason + ")"
    return SourceError(
        f"{path}: invalid data at byte {counter.position} (record {record}): {reason}")


def iter_array(path: Path) -> Iterator[tuple[int, object, CountingReader]]:
    """Yield ``(record_number, record, counter)`` for each element of a JSON array file.

    Raises:
        SourceError: bad gzip, truncated file, invalid JSON, or not a JSON array.
    """
    stream, counter = open_stream(path)
    number = 0
    guard = JsonGuard(record_depth=1)
    try:
        with stream:
            first = _first_byte(stream)
            if first != b"[":
                raise SourceError(
                    f"{path}: expected a JSON array at byte 0 (record 1), found {first!r}")
            for number, record in enumerate(
                    ijson.items(GuardedReader(stream, guard), "item", use_float=True), start=1):
                yield number, record, counter
    except SourceError:
        raise
    except LimitError as exc:  # the guard reads ahead of the parser: it counts the records
        raise _refuse(path, exc, exc.offset, guard.records + 1) from None
    except _STREAM_ERRORS as exc:
        raise _fail(path, counter, number + 1, exc) from None


def iter_lines(path: Path) -> Iterator[tuple[int, object, CountingReader]]:
    """Yield ``(line_number, parsed_or_error, counter)`` for a JSON-lines file.

    A line that is not valid JSON yields a :class:`ValueError` instance as the
    record (the loader skips and counts it); a bad gzip stream, a line longer
    than ``MAX_LINE_BYTES`` or nested deeper than ``MAX_DEPTH`` raises
    :class:`SourceError`.
    """
    stream, counter = open_stream(path)
    number = offset = 0
    try:
        with stream:
            while True:
                line = stream.readline(limits.MAX_LINE_BYTES + 1)
                if not line:
                    break
                number += 1
                if len(line) > limits.MAX_LINE_BYTES:
                    raise LimitError(f"a line is longer than {limits.MAX_LINE_BYTES} bytes",
                                     offset + len(line))
                try:
                    check_json(line)
                except LimitError as exc:
                    raise LimitError(str(exc), offset + exc.offset) from None
                offset += len(line)
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line), counter
                except ValueError as exc:
                    yield number, ValueError(f"line {number}: invalid JSON ({exc})"), counter
    except LimitError as exc:
        raise _refuse(path, exc, exc.offset, number) from None
    except _STREAM_ERRORS as exc:
        raise _fail(path, counter, number + 1, exc) from None


def load_object(path: Path) -> JsonObject:
    """Parse a small whole-JSON-object file (catalog-extras.json).

    Raises:
        SourceError: invalid JSON, not an object, larger than ``MAX_OBJECT_BYTES``
            or nested deeper than ``MAX_DEPTH``.
    """
    stream, counter = open_stream(path)
    try:
        with stream:
            raw = stream.read(limits.MAX_OBJECT_BYTES + 1)
            if len(raw) > limits.MAX_OBJECT_BYTES:
                raise LimitError(f"the file is larger than {limits.MAX_OBJECT_BYTES} bytes",
                                 limits.MAX_OBJECT_BYTES)
            check_json(raw)
            data: JsonValue = json.loads(raw.decode("utf-8"))
    except LimitError as exc:
        raise _refuse(path, exc, exc.offset, 1) from None
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: invalid JSON at byte {exc.pos} (record 1): {exc.msg}") from None
    except _STREAM_ERRORS as exc:
        raise _fail(path, counter, 1, exc) from None
    if not isinstance(data, dict):
        raise SourceError(f"{path}: expected a JSON object at byte 0 (record 1)")
    return data


def _first_byte(stream: IO[bytes]) -> bytes:
    """Peek the first non-whitespace byte of a buffered stream without consuming it."""
    peek = stream.peek(64) if hasattr(stream, "peek") else b""
    stripped = peek.lstrip(b" \t\r\n\xef\xbb\xbf")
    return stripped[:1]


def _kind_of_record(record: object) -> str | None:
    if not isinstance(record, dict):
        return None
    keys = set(record)
    if "repo_url" in keys:
        return "links"
    if "task" in keys and ("datasets" in keys or "subtasks" in keys):
        return "evaluations"
    if "versions" in keys or "authors_parsed" in keys:
        return "arxiv"
    if "paper_url" in keys and ("abstract" in keys or "title" in keys):
        return "papers"
    if "collections" in keys or "code_snippet_url" in keys or "/method/" in str(record.get("url")):
        return "methods"
    if {"modalities", "variants", "homepage"} & keys or "/dataset/" in str(record.get("url")):
        return "datasets"
    return None


def _kind_by_content(path: Path) -> str | None:
    stream, counter = open_stream(path)
    guard = JsonGuard(record_depth=1)  # reads ahead of the parser; counts the records
    try:
        with stream:
            first = _first_byte(stream)
            if first == b"[":
                items = ijson.items(GuardedReader(stream, guard), "item")
                record = next(iter(items), None)
                if record is not None and not isinstance(record, dict):
                    return "invalid"  # every dump is an array of objects
                return _kind_of_record(record)
            if first == b"{":
                line = stream.readline(limits.MAX_LINE_BYTES + 1)
                if len(line) > limits.MAX_LINE_BYTES:
                    return "extras"  # not JSON lines; load_object applies its own bounds
                check_json(line)
                try:
                    record = json.loads(line)
                except ValueError:
                    return "extras"  # a multi-line object: catalog-extras.json
                if isinstance(record, dict) and set(record) & _EXTRAS_KEYS and "id" not in record:
                    return "extras"
                return _kind_of_record(record)
            return "invalid"  # neither a JSON array nor JSON object(s)
    except LimitError as exc:
        raise _refuse(path, exc, exc.offset, guard.records + 1) from None
    except _STREAM_ERRORS as exc:
        raise _fail(path, counter, 1, exc) from None


def detect(path: Path) -> Source:
    """Detect the kind of one source path.

    Content decides (first record's keys); the file name breaks ties.

    Raises:
        SourceError: missing path, unreadable file or unknown format.
    """
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if path.is_dir():
        return Source(path, "markdown", 0)
    name = path.name.lower()
    by_name = next((kind for hint, kind in _NAME_HINTS if hint in name), None)
    if name.endswith((".jsonl", ".jsonl.gz")) and by_name is None:
        by_name = "arxiv"
    by_content = _kind_by_content(path)
    kind = by_content or by_name
    if kind is None or kind == "invalid":
        raise SourceError(f"{path}: not a recognised dump format at byte 0 (record 1)")
    return Source(path, kind, path.stat().st_size)



# JSON dumps found in a folder: the published names, possibly dated ("jul-28-methods.json.gz").
_DUMP_FILE = re.compile(r"(^|[-_.])((papers-with-abstracts|links-between-papers-and-code|"
                        r"evaluation-tables|methods|datasets|catalog-extras)\.json|"
                        r"arxiv-metadata-oai-snapshot\.jsonl?)(\.gz)?$")
_MAX_DEPTH = 3  # DIR/<dataset>/data/<shard>
_SHARD = re.compile(r"-(\d+)-of-(\d+)\.parquet$")


def _shard_key(path: Path) -> tuple[int, str]:
    """``train-00002-of-00004`` before ``train-00010-of-00012``."""
    match = _SHARD.search(path.name)
    return (int(match.group(1)) if match else 0, path.name)


def expand(path: Path) -> list[Path]:
    """The source paths one command-line argument stands for.

    A file is itself. A folder of paper Markdown (``<arxiv_id>.md`` files, told
    apart by content) is one source. Any other folder is searched (three levels
    deep, hidden folders such as ``.cache/huggingface`` skipped) for parquet
    shards, dumps under their published names (the arXiv OAI snapshot too) and
    Markdown folders, so both a
    dataset folder as ``hf download pwc-archive/<name> --local-dir DIR/<name>``
    leaves it and ``DIR`` itself work.

    Raises:
        SourceError: a missing path, or a folder holding nothing importable.
    """
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if not path.is_dir():
        return [path]
    from catalog.importer.others import markdown_files

    if markdown_files(path):
        return [path]
    found: list[Path] = []

    def walk(folder: Path, depth: int) -> None:
        entries = sorted(folder.iterdir())
        shards = [e for e in entries if e.is_file() and e.name.lower().endswith(".parquet")]
        found.extend(sorted(shards, key=_shard_key))
        found.extend(e for e in entries if e.is_file() and _DUMP_FILE.search(e.name.lower()))
        for entry in entries:
            if not entry.is_dir() or entry.name.startswith("."):
                continue
            if markdown_files(entry):
                found.append(entry)
            elif depth < _MAX_DEPTH:
                walk(entry, depth + 1)

    walk(path, 1)
    if not found:
        raise SourceError(f"{path}: no importable files in this folder (parquet shards, "
                          "JSON dumps or paper Markdown)")
    return found
