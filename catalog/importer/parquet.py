"""Parquet shards of the archive as published on the Hugging Face Hub (``pwc-archive/*``).

Each shard is one :class:`~catalog.importer.sources.Source`. :func:`detect`
reads only the footer: the kind comes from the column names (the file or
dataset folder name breaks ties), required columns and their types are
checked there, so a bad shard is refused before anything is written.
:func:`iter_records` streams record batches (``ParquetFile.iter_batches``,
only the columns the loaders use) and turns every row into the same dict a
JSON dump gives, so both forms go through the loaders of
:mod:`catalog.importer.dumps` and share one validation path.

The shards were written by the ``datasets`` library from the JSON dumps
(see ``tests/catalog/parquet_fixtures.py`` for the evidence), so the schema
is Arrow's inference of the JSON: objects are structs holding the union of
every record's keys (null where a record lacks one). What is undone here:

* A leaderboard row's ``metrics`` struct holds every metric name of the
  file; a row keeps only its non-null fields (a null field is not a metric),
  in the order of the table's ``sota.metrics``. Such structs are read column
  by column in Arrow, never as one Python dict per row and metric name.
* Dates may be strings, ``timestamp``/``date32`` values or epoch numbers
  (seconds, or milli-, micro-, nanoseconds by magnitude): all become
  ``YYYY-MM-DD``.
* Nested objects may be structs, ``map<string, ...>`` values, lists of
  ``{key, value}`` structs or JSON strings; lists may be JSON strings.
* Integers written as floats (``introduced_year`` through pandas) become
  integers again; ``"True"``/``"False"`` strings become booleans.

Columns the loaders do not know are not read, and counted
(``SourceStats.ignored_columns``). A missing required column, a column of an
unusable type, or a shard pyarrow cannot read raises
:class:`~catalog.importer.sources.SourceError` naming the file and column.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from catalog.db.json_types import JsonValue
from catalog.importer import limits
from catalog.importer.sources import Source, SourceError
from catalog.importer.stats import SourceStats

# Dataset folder names on the Hub (note "paper", not "papers", in the links dataset).
DATASET_KINDS = {"papers-with-abstracts": "papers", "links-between-paper-and-code": "links",
                 "links-between-papers-and-code": "links", "evaluation-tables": "evaluations",
                 "methods": "methods", "datasets": "datasets"}
_BATCH = {"evaluations": 32}  # tasks nest whole leaderboards: small batches bound memory
_DEFAULT_BATCH = 8192

# Column → expected shape, per kind: the columns the loaders read.
_TEXT, _LIST, _OBJECT, _DATE, _INT, _BOOL = "text", "list", "object", "date", "int", "bool"
COLUMNS: dict[str, dict[str, str]] = {
    "papers": {"paper_url": _TEXT, "arxiv_id": _TEXT, "title": _TEXT, "abstract": _TEXT,
               "url_abs": _TEXT, "url_pdf": _TEXT, "proceeding": _TEXT, "authors": _LIST,
               "tasks": _LIST, "date": _DATE, "methods": _LIST},
    "links": {"paper_url": _TEXT, "paper_title": _TEXT, "paper_arxiv_id": _TEXT,
              "paper_url_abs": _TEXT, "paper_url_pdf": _TEXT, "repo_url": _TEXT,
              "is_official": _BOOL, "framework": _TEXT, "stars": _INT},
    "methods": {"url": _TEXT, "name": _TEXT, "full_name": _TEXT, "description": _TEXT,
                "paper": _OBJECT, "introduced_year": _INT, "source_url": _TEXT,
                "source_title": _TEXT, "collections": _LIST},
    "datasets": {"url": _TEXT, "name": _TEXT, "full_name": _TEXT, "description": _TEXT,
                 "tasks": _LIST, "variants": _LIST},
    "evaluations": {"task": _TEXT, "categories": _LIST, "description": _TEXT, "datasets": _LIST,
                    "subtasks": _LIST, "synonyms": _LIST},
}
# Published columns the loaders do not use: skipped without being counted as unknown.
_UNUSED: dict[str, set[str]] = {
    "papers": {"nips_id", "openreview_id", "short_abstract", "conference", "conference_url_abs",
               "conference_url_pdf", "reproduces_paper", "id"},
    "links": {"mentioned_in_paper", "mentioned_in_github"},
    "methods": {"code_snippet_url", "num_papers", "main_collection"},
    "datasets": {"homepage", "paper", "introduced_date", "warning", "modalities", "languages",
                 "num_papers", "data_loaders", "dataset_citations", "images"},
    "evaluations": {"source_link"},
}
# At least one column of each group must be present.
REQUIRED: dict[str, tuple[tuple[str, ...], ...]] = {
    "papers": (("title",), ("paper_url", "arxiv_id")),
    "links": (("repo_url",), ("paper_url", "paper_arxiv_id")),
    "methods": (("name",),),
    "datasets": (("name",),),
    "evaluations": (("task",),),
}
# Fields the loaders read inside list-of-struct columns; the others are not converted.
_KEEP_FIELDS = {("papers", "methods"): ("name", "full_name", "description", "introduced_year"),
                ("methods", "collections"): ("collection", "area"),
                ("datasets", "tasks"): ("task",)}


class _RowCounter:
    """Rows read so far, as ``position`` (what the progress display reads)."""

    def __init__(self) -> None:
        self.position = 0


class _BadValue(ValueError):
    """A field that cannot be decoded: the record is skipped (and counted) by the loader."""


def dataset_name(path: Path) -> str:
    """The Hub dataset a shard belongs to: ``<name>`` of ``<name>/data/<shard>``, else the
    parent folder's name."""
    parent = path.parent
    return parent.parent.name if parent.name == "data" else parent.name


def _kind_of_columns(names: set[str]) -> str | None:
    if "repo_url" in names:
        return "links"
    if "task" in names and ({"datasets", "subtasks"} & names):
        return "evaluations"
    if "paper_url" in names and ({"abstract", "title"} & names):
        return "papers"
    if {"collections", "code_snippet_url"} & names:
        return "methods"
    if {"modalities", "variants", "homepage"} & names:
        return "datasets"
    return None


def _kind_of_name(path: Path) -> str | None:
    for name in (dataset_name(path), path.parent.name, path.name):
        kind = DATASET_KINDS.get(name.lower())
        if kind:
            return kind
    lowered = f"{dataset_name(path)}/{path.name}".lower()
    return next((kind for hint, kind in DATASET_KINDS.items() if hint in lowered), None)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _is_text(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        return _is_text(t.value_type)
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t)
                or pa.types.is_string_view(t) or pa.types.is_null(t))


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t)
                or pa.types.is_large_list_view(t) or pa.types.is_fixed_size_list(t))


_ACCEPTS: dict[str, tuple[str, Callable[[pa.DataType], bool]]] = {
    _TEXT: ("a string", _is_text),
    _LIST: ("a list (or its JSON text)", lambda t: _is_list(t) or _is_text(t)),
    _OBJECT: ("an object: struct, map or JSON text",
              lambda t: bool(pa.types.is_struct(t) or pa.types.is_map(t) or _is_list(t)
                             or _is_text(t))),
    _DATE: ("a date: string, date, timestamp or epoch number",
            lambda t: bool(_is_text(t) or pa.types.is_timestamp(t) or pa.types.is_date(t)
                           or pa.types.is_integer(t) or pa.types.is_floating(t))),
    _INT: ("an integer", lambda t: bool(pa.types.is_integer(t) or pa.types.is_floating(t)
                                        or _is_text(t))),
    _BOOL: ("a boolean", lambda t: bool(pa.types.is_boolean(t) or _is_text(t))),
}


def detect(path: Path) -> Source:
    """Kind, size and row count of one parquet shard, from its footer.

    Raises:
        SourceError: unreadable footer or schema, no recognisable kind, a missing
            required column or a column of an unusable type.
    """
    try:
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise SourceError(f"{path}: not a readable parquet file (footer or schema): "
                          f"{_reason(exc)}") from None
    names = set(schema.names)
    kind = _kind_of_columns(names) or _kind_of_name(path)
    if kind is None:
        raise SourceError(f"{path}: parquet columns {', '.join(sorted(names)) or '(none)'} "
                          "match no Papers with Code dataset")
    for group in REQUIRED[kind]:
        if not names & set(group):
            raise SourceError(f"{path}: missing required column {' or '.join(map(repr, group))} "
                              f"for {kind}")
    for name, shape in COLUMNS[kind].items():
        if name in names:
            what, accepts = _ACCEPTS[shape]
            if not accepts(schema.field(name).type):
                raise SourceError(f"{path}: column {name!r} has type {schema.field(name).type}, "
                                  f"expected {what}")
    return Source(path, kind, path.stat().st_size, format="parquet", rows=meta.num_rows)


# -- value conversion -------------------------------------------------------------------------
def _json(value: str) -> JsonValue:
    try:
        limits.check_json(value.encode("utf-8"))  # json.loads recurses: bound the depth first
        decoded: JsonValue = json.loads(value)
        return decoded
    except limits.LimitError as exc:
        raise _BadValue(f"JSON text refused ({exc})") from None
    except ValueError as exc:
        raise _BadValue(f"invalid JSON text ({exc})") from None


def _plain(value: object) -> object:
    """A deep field as the JSON dump has it: JSON text decoded, key/value lists as dicts."""
    if isinstance(value, str):
        stripped = value.lstrip()
        if stripped[:1] in ("{", "["):
            return _json(value)
        return value
    if isinstance(value, list) and value:
        first = value[0]
        if isinstance(first, tuple) and len(first) == 2:
            return dict(value)  # a map read without maps_as_pydicts
        if isinstance(first, dict) and set(first) == {"key", "value"} and all(
                isinstance(item, dict) and set(item) == {"key", "value"} for item in value):
            return {item["key"]: item["value"] for item in value}
    return value


def _as_list(value: object) -> object:
    if isinstance(value, str):
        return _json(value)
    return value


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def date_text(value: object) -> object:
    """``YYYY-MM-DD`` of a date given as date/datetime or epoch number; strings as they are."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        for _ in range(3):  # seconds, else ms, us, ns: 1e11 s is the year 5138
            if abs(seconds) < 1e11:
                break
            seconds /= 1000.0
        try:
            return (_EPOCH + dt.timedelta(seconds=seconds)).date().isoformat()
        except (OverflowError, ValueError):
            return None
    return value


def _int(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def _bool(value: object) -> object:
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower(), value)
    return value


def _project(arr: pa.Array, keep: tuple[str, ...]) -> pa.Array:
    """A list-of-struct column cast down to the struct fields in ``keep`` (cheaper to convert)."""
    t = arr.type
    if not (_is_list(t) and pa.types.is_struct(t.value_type)):
        return arr
    fields = [f for f in t.value_type if f.name in keep]
    if not fields or len(fields) == t.value_type.num_fields:
        return arr
    fields = [pa.field(f.name, pa.int64()) if f.name == "introduced_year"
              and pa.types.is_floating(f.type) else f for f in fields]
    try:
        return arr.cast(pa.list_(pa.struct(fields)))
    except (pa.ArrowException, ValueError):
        return arr


def _py(arr: pa.Array) -> list[object]:
    """``arr.to_pylist()``, several times faster for strings, lists and structs (whose
    children are converted whole, then cut by offsets), the shapes the big shards hold."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return cast("list[object]", arr.to_numpy(zero_copy_only=False).tolist())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = arr.offsets.to_numpy().tolist()  # absolute positions in arr.values
        values = _py(arr.values)
        out: list[object] = [values[a:b] for a, b in itertools.pairwise(offsets)]
    elif pa.types.is_struct(t) and arr.offset == 0 and t.num_fields:
        names = t.names
        out = [dict(zip(names, row, strict=True))
               for row in zip(*(_py(arr.field(i)) for i in range(t.num_fields)), strict=True)]
    else:
        return cast("list[object]", arr.to_pylist(maps_as_pydicts="lossy"))
    if arr.null_count:
        for position in pc.indices_nonzero(arr.is_null()).to_pylist():
            out[position] = None
    return out


def _column(kind: str, name: str, arr: pa.Array) -> list[object]:
    """One batch column as Python values in the JSON dump's shape."""
    shape = COLUMNS[kind][name]
    t = arr.type
    if shape == _DATE and (pa.types.is_timestamp(t) or pa.types.is_date(t)):
        return cast("list[object]", pc.strftime(arr, format="%Y-%m-%d").to_pylist())
    if (kind, name) in _KEEP_FIELDS:
        arr = _project(arr, _KEEP_FIELDS[(kind, name)])
    if kind == "evaluations" and name in ("datasets", "subtasks") and _is_list(t):
        return _leaderboards(arr)
    values = _py(arr)
    if shape == _DATE and not _is_text(t):
        return [date_text(v) for v in values]
    if shape == _INT and not pa.types.is_integer(t):
        return [_int(v) for v in values]
    if shape == _BOOL and _is_text(t):
        return [_bool(v) for v in values]
    if shape in (_LIST, _OBJECT) and _is_text(t):
        texts = cast("list[str | None]", values)  # a text column: strings and nulls
        return [_Deferred(v) if v is not None else None for v in texts]
    return values


class _Deferred:
    """JSON text decoded when the record is built, so a bad value skips one record only."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


# -- leaderboards: wide metric structs, read column by column ---------------------------------
class _StructMetrics(dict[str, object]):
    """Metrics read from a struct: field order is the file's, re-ordered by the table."""


def _row_paths(t: pa.DataType, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths (struct field names; lists are stepped through) to leaderboard-row structs whose
    ``metrics`` is a struct."""
    while _is_list(t):
        t = t.value_type
    if not pa.types.is_struct(t):
        return []
    index = t.get_field_index("metrics")
    if index >= 0 and pa.types.is_struct(t.field(index).type) and "model_name" in t.names:
        return [path]
    out: list[tuple[str, ...]] = []
    for field in t:
        out.extend(_row_paths(field.type, path + (field.name,)))
    return out


def _strip(t: pa.DataType, paths: list[tuple[str, ...]], path: tuple[str, ...] = ()) -> pa.DataType:
    """``t`` without the ``metrics`` field of the row structs at ``paths``."""
    if _is_list(t):
        return pa.list_(_strip(t.value_type, paths, path))
    if not pa.types.is_struct(t):
        return t
    fields = []
    for field in t:
        if path in paths and field.name == "metrics":
            continue
        fields.append(pa.field(field.name, _strip(field.type, paths, path + (field.name,)),
                               field.nullable))
    return pa.struct(fields)


def _flat(arr: pa.Array) -> pa.Array:
    while _is_list(arr.type):
        arr = arr.flatten()  # drops null lists' slots, as the Python values do
    return arr


def _rows_at(arr: pa.Array, path: tuple[str, ...]) -> pa.Array:
    arr = _flat(arr)
    for name in path:
        arr = _flat(arr.flatten()[arr.type.get_field_index(name)])  # parent nulls carried down
    return arr


def _struct_dicts(arr: pa.StructArray) -> list[_StructMetrics | None]:
    """Per element: the non-null fields of a struct as a dict (None for a null struct)."""
    out: list[_StructMetrics | None] = [_StructMetrics() for _ in range(len(arr))]
    for index, field in enumerate(arr.type):
        child = arr.field(index)
        if child.null_count == len(child):
            continue
        valid = child.is_valid()
        positions = pc.indices_nonzero(valid).to_pylist()
        values = child.filter(valid).to_pylist(maps_as_pydicts="lossy")
        name = field.name
        for position, value in zip(positions, values, strict=True):
            out[position][name] = value
    if arr.null_count:
        for position in pc.indices_nonzero(arr.is_null()).to_pylist():
            out[position] = None
    return out


def _attach(value: object, t: pa.DataType, path: tuple[str, ...], metrics: Iterator[object]) -> None:
    """Give the row dicts at ``path`` (in Arrow's flattening order) their metrics back."""
    if _is_list(t):
        for item in value if isinstance(value, list) else ():  # a list, or None for a null list
            _attach(item, t.value_type, path, metrics)
        return
    if not path:
        row_metrics = next(metrics)
        if isinstance(value, dict):
            value["metrics"] = row_metrics
        return
    if isinstance(value, dict):
        _attach(value.get(path[0]), t.field(path[0]).type, path[1:], metrics)


def _leaderboards(arr: pa.Array) -> list[object]:
    paths = _row_paths(arr.type)
    if not paths:
        return _py(arr)
    per_path = [_struct_dicts(_rows_at(arr, path).field("metrics")) for path in paths]
    # Struct field access ignores the row struct's validity; _struct_dicts' None marks null
    # metrics only, and rows that are null themselves are skipped by _attach.
    values = _py(arr.cast(_strip(arr.type, paths)))
    for path, dicts in zip(paths, per_path, strict=True):
        it = iter(dicts)
        for value in values:
            _attach(value, arr.type, path, it)
    return values


# -- evaluation-tables records: the deep fields in the dump's shape ---------------------------
def _metrics(value: object, names: list[object]) -> object:
    if isinstance(value, _StructMetrics):
        ordered = {name: value[name] for name in names if isinstance(name, str) and name in value}
        ordered.update(value)
        return ordered
    return _plain(value)


def _dataset(rec: object) -> object:
    rec = _plain(rec)
    if not isinstance(rec, dict):
        return rec
    sota = _plain(rec.get("sota"))
    if isinstance(sota, dict):
        names = _as_list(sota.get("metrics"))
        sota["metrics"] = names
        rows = _as_list(sota.get("rows"))
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict):
                row["metrics"] = _metrics(row.get("metrics"), names if isinstance(names, list)
                                          else [])
                row["paper_date"] = date_text(row.get("paper_date"))
                row["uses_additional_data"] = _bool(row.get("uses_additional_data"))
                row["code_links"] = _as_list(row.get("code_links"))
        sota["rows"] = rows
    rec["sota"] = sota
    subs = _as_list(rec.get("subdatasets"))
    rec["subdatasets"] = [_dataset(sub) for sub in subs] if isinstance(subs, list) else subs
    return rec


def _task(rec: object) -> object:
    rec = _plain(rec)
    if not isinstance(rec, dict):
        return rec
    rec["categories"] = _as_list(rec.get("categories"))
    rec["synonyms"] = _as_list(rec.get("synonyms"))
    datasets = _as_list(rec.get("datasets"))
    rec["datasets"] = [_dataset(d) for d in datasets] if isinstance(datasets, list) else datasets
    subtasks = _as_list(rec.get("subtasks"))
    rec["subtasks"] = [_task(s) for s in subtasks] if isinstance(subtasks, list) else subtasks
    return rec


def _finish(kind: str, record: dict[str, object]) -> object:
    for key, value in record.items():
        if isinstance(value, _Deferred):
            record[key] = _json(value.text)
    if kind == "evaluations":
        return _task(record)
    if kind == "methods":
        record["paper"] = _plain(record.get("paper"))
    return record


# -- streaming ----------------------------------------------------------------------------------
def _failing_column(path: Path, columns: list[str]) -> str | None:
    """The first column whose data pyarrow cannot read (only called after a failure)."""
    try:
        handle = pq.ParquetFile(path)
        for group in range(handle.num_row_groups):
            for name in columns:
                try:
                    handle.read_row_group(group, columns=[name])
                except (pa.ArrowException, OSError, ValueError):
                    return name
    except (pa.ArrowException, OSError, ValueError):
        return None
    return None


def iter_records(source: Source, stats: SourceStats) -> Iterator[tuple[int, object, _RowCounter]]:
    """Yield ``(row_number, record, counter)`` for each row of a parquet shard.

    A row whose deep field is not valid JSON text is yielded as a :class:`ValueError`
    (the loader skips and counts it). Unknown columns are recorded in
    ``stats.ignored_columns``.

    Raises:
        SourceError: the shard's data cannot be read (corrupt or truncated), naming the
            row and, where it can be found, the column.
    """
    path, kind = source.path, source.kind
    counter = _RowCounter()
    number = 0
    columns: list[str] = []
    try:
        handle = pq.ParquetFile(path)
        present = handle.schema_arrow.names
        known = set(COLUMNS[kind]) | _UNUSED[kind]
        stats.ignored_columns = [name for name in present if name not in known]
        columns = [name for name in COLUMNS[kind] if name in present]
        schema = handle.schema_arrow
        # JSON text to decode, or deep fields to reshape: else the dict is the record as is.
        finish = kind in ("evaluations", "methods") or any(
            COLUMNS[kind][c] in (_LIST, _OBJECT) and _is_text(schema.field(c).type)
            for c in columns)
        batches = handle.iter_batches(batch_size=_BATCH.get(kind, _DEFAULT_BATCH),
                                      columns=columns)
        for batch in batches:
            values = [_column(kind, name, batch.column(name)) for name in columns]
            for row in zip(*values, strict=True):
                number += 1
                counter.position = number
                fields: dict[str, object] = dict(zip(columns, row, strict=True))
                record: object = fields
                if finish:
                    try:
                        record = _finish(kind, fields)
                    except _BadValue as exc:
                        record = ValueError(str(exc))
                yield number, record, counter
    except (pa.ArrowException, OSError, ValueError) as exc:
        column = _failing_column(path, columns)
        where = f" in column {column!r}" if column else ""
        raise SourceError(f"{path}: unreadable parquet data at row {number + 1}{where}: "
                          f"{_reason(exc)}") from None
