"""Parquet shards in the schema of the published archive (``pwc-archive/*`` on the Hub), made
from JSON dump records with pyarrow, in each plausible encoding.

Evidence for the schema (looked up 2026; nothing here reaches the network):

* Layout. ``https://huggingface.co/datasets/pwc-archive/evaluation-tables/tree/main`` and
  ``.../tree/main/data``: ``README.md`` (191 bytes, ``license: cc-by-sa-4.0``), ``.gitattributes``
  and ``data/train-00000-of-00004.parquet`` .. ``train-00003-of-00004.parquet`` (65.3, 27.4,
  23.1, 21.8 MB), uploaded with "Upload dataset", i.e. ``datasets``' ``push_to_hub``. Public
  loaders fetch ``pwc-archive/methods/resolve/main/data/train-00000-of-00001.parquet`` (one
  shard) and name the snapshot 2025-07-28, CC-BY-SA-4.0.
* Writer. ``huggingface/datasets``, ``src/datasets/packaged_modules/json/json.py``: a JSON file
  that is one array (the dumps are) fails ``pyarrow.json.read_json`` and falls back to
  ``pandas_read_json`` then ``pa.Table.from_pandas(df, preserve_index=False)``. So nested
  objects are inferred by ``pa.array``: structs holding the union of all records' keys, null
  where a record lacks one; pandas' ``convert_dates`` turns the top-level ``date`` column into
  a timestamp; nested dates stay strings (``pyarrow.json`` would make them timestamps too).
* Columns. A public mapping of the datasets (``pwc-archive/methods``, ``links-between-paper-and-code``,
  ``papers-with-abstracts``) lists methods ``url, name, full_name, description, paper{title,url},
  introduced_year, source_url, source_title, code_snippet_url, num_papers,
  collections[{area, area_id, collection}]``; links ``paper_url, paper_title, paper_arxiv_id,
  paper_url_abs, paper_url_pdf, repo_url, is_official, mentioned_in_paper, mentioned_in_github,
  framework``; papers ``paper_url, arxiv_id, title, abstract, url_abs, url_pdf, proceeding,
  authors, tasks, date (datetime), conference, methods``. An extraction guide for
  ``pwc-archive/evaluation-tables`` reads each row as one task: ``task, categories,
  description, subtasks, synonyms, source_link, datasets``; each dataset ``dataset,
  dataset_citations, dataset_links, description, sota{metrics, rows[...]}, subdatasets`` and
  each row ``model_name, paper_url, paper_title, paper_date, metrics, code_links, model_links,
  uses_additional_data`` (the metrics read back as a dict; null entries skipped).
* Deep fields. A public loader of the same shards normalises a row's ``metrics`` "as a dict,
  an arrow map (list of (key, value) pairs), or a JSON string", and drops rows without a
  ``model_name``: the evidence for the other encodings is that loader's caution, not a schema,
  so each is accepted and tested.

Where the evidence is thin the fixtures cover every plausible form: ``metrics`` as struct
(the inference), ``map<string, string>``, a list of ``{key, value}`` structs or JSON text;
dates as strings, ``timestamp``, ``date32`` or epoch numbers.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

METRICS = ("struct", "map", "kv", "json")
DATES = ("string", "timestamp", "date32", "epoch_s", "epoch_ms")
HUB_NAMES = {"papers": "papers-with-abstracts", "links": "links-between-paper-and-code",
             "evaluations": "evaluation-tables", "methods": "methods", "datasets": "datasets"}
_JSON_NAMES = {"papers": "papers-with-abstracts.json", "links": "links-between-papers-and-code.json",
               "evaluations": "evaluation-tables.json", "methods": "methods.json",
               "datasets": "datasets.json"}


def _date(value: Any, dates: str) -> Any:
    if not (isinstance(value, str) and len(value) >= 10):
        return value
    try:
        day = dt.date.fromisoformat(value[:10])
    except ValueError:
        return value
    if dates == "timestamp":
        return dt.datetime(day.year, day.month, day.day)
    if dates == "date32":
        return day
    seconds = int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp())
    return seconds * 1000 if dates == "epoch_ms" else seconds if dates == "epoch_s" else value


def _rows(dataset: dict) -> Iterable[dict]:
    sota = dataset.get("sota")
    if isinstance(sota, dict):
        yield from (r for r in sota.get("rows") or [] if isinstance(r, dict))
    for sub in dataset.get("subdatasets") or []:
        if isinstance(sub, dict):
            yield from _rows(sub)


def _task_rows(task: dict) -> Iterable[dict]:
    for dataset in task.get("datasets") or []:
        if isinstance(dataset, dict):
            yield from _rows(dataset)
    for sub in task.get("subtasks") or []:
        if isinstance(sub, dict):
            yield from _task_rows(sub)


def _encode(kind: str, record: dict, metrics: str, dates: str) -> dict:
    record = json.loads(json.dumps(record))  # a deep copy
    if kind == "papers" and dates != "string":
        record["date"] = _date(record.get("date"), dates)
    if kind == "evaluations":
        for row in _task_rows(record):
            if dates != "string":
                row["paper_date"] = _date(row.get("paper_date"), dates)
            value = row.get("metrics")
            if isinstance(value, dict):
                if metrics == "json":
                    row["metrics"] = json.dumps(value)
                elif metrics in ("map", "kv"):
                    row["metrics"] = [{"key": k, "value": None if v is None else str(v)}
                                      for k, v in value.items()]
    return record


def _as_map(t: pa.DataType) -> pa.DataType:
    """``t`` with every ``metrics: list<struct<key, value>>`` field turned into a map."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_as_map(t.value_type))
    if not pa.types.is_struct(t):
        return t
    fields = []
    for field in t:
        if (field.name == "metrics" and pa.types.is_list(field.type)
                and pa.types.is_struct(field.type.value_type)):
            fields.append(pa.field("metrics", pa.map_(pa.string(), pa.string())))
        else:
            fields.append(pa.field(field.name, _as_map(field.type)))
    return pa.struct(fields)


def table(kind: str, records: list[dict], *, metrics: str = "struct",
          dates: str = "timestamp") -> pa.Table:
    """Records as ``datasets`` would store them: Arrow's inference over the whole file.

    ``dates``: how the papers' ``date`` (and leaderboard rows' ``paper_date``) are encoded;
    ``metrics``: how a leaderboard row's metrics are (see :data:`METRICS`).
    """
    encoded = [_encode(kind, r, metrics, dates) for r in records]
    inferred = pa.Table.from_pylist(encoded)
    if metrics != "map" or kind != "evaluations":
        return inferred
    schema = pa.schema([pa.field(f.name, _as_map(f.type)) for f in inferred.schema])
    for task in encoded:
        for row in _task_rows(task):
            if isinstance(row.get("metrics"), list):
                row["metrics"] = [(kv["key"], kv["value"]) for kv in row["metrics"]]
    return pa.Table.from_pylist(encoded, schema=schema)


def write_shards(folder: Path, data: pa.Table, shards: int = 1,
                 row_group_size: int | None = None) -> list[Path]:
    """``folder/data/train-0000N-of-0000M.parquet`` as ``push_to_hub`` lays them out."""
    out = folder / "data"
    out.mkdir(parents=True, exist_ok=True)
    per = -(-data.num_rows // shards) if data.num_rows else 0
    paths = []
    for index in range(shards):
        path = out / f"train-{index:05d}-of-{shards:05d}.parquet"
        pq.write_table(data.slice(index * per, per), path, row_group_size=row_group_size)
        paths.append(path)
    return paths


def hub_folder(root: Path, kind: str, records: list[dict], *, shards: int = 1,
               metrics: str = "struct", dates: str = "timestamp",
               row_group_size: int | None = None) -> Path:
    """``root/<hub name>`` as ``hf download pwc-archive/<name> --local-dir`` leaves it: shards,
    ``README.md``, ``.gitattributes`` and a ``.cache/huggingface`` folder."""
    folder = root / HUB_NAMES[kind]
    write_shards(folder, table(kind, records, metrics=metrics, dates=dates), shards,
                 row_group_size)
    (folder / "README.md").write_text("---\nlicense: cc-by-sa-4.0\n---\n", encoding="utf-8")
    (folder / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n",
                                           encoding="utf-8")
    cache = folder / ".cache" / "huggingface" / "download" / "data"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "train-00000-of-00001.parquet.metadata").write_text("abc\n", encoding="utf-8")
    (cache / "train-00000-of-00001.parquet.lock").write_text("", encoding="utf-8")
    (folder / ".cache" / "huggingface" / ".gitignore").write_text("*\n", encoding="utf-8")
    return folder


def json_dumps(folder: Path) -> dict[str, list[dict]]:
    """The five JSON dumps of a folder (as ``bench/gen_catalog.py`` writes them), by kind."""
    out = {}
    for kind, name in _JSON_NAMES.items():
        path = folder / name
        if path.exists():
            out[kind] = json.loads(path.read_text(encoding="utf-8"))
    return out


def json_paths(folder: Path) -> list[Path]:
    """The JSON dump files of a folder."""
    return [folder / name for name in _JSON_NAMES.values() if (folder / name).exists()]
