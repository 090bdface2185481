"""The importer on the archive as published: parquet shards, Hub folders, parity with JSON."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.gen_catalog import generate
from catalog.importer import run_import
from catalog.importer.parquet import date_text
from tests.catalog import parquet_fixtures as fx

# Each test generates or imports whole catalogs in both forms: seconds apiece.
pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared" / "data" / "pwc-archive" / "evaluation-tables.json"
SMALL = REPO_ROOT / "tests" / "fixtures" / "pwc-archive" / "evaluation-tables.json"
# Tables of the catalog the dumps fill; ids included (the same records in the same order
# get the same ids), creation times left out.
_TABLES = ("areas", "conferences", "papers", "repositories", "authors", "paper_authors", "tasks",
           "paper_tasks", "methods", "paper_methods", "datasets", "dataset_tasks", "evaluations",
           "paper_markdown", "entity_aliases")
_SKIP_COLUMNS = {"created_at", "updated_at"}


def _import(db: Path, *sources: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = run_import(db, list(sources), out=out)
    return code, out.getvalue()


def snapshot(db: Path) -> dict[str, list[tuple]]:
    """Every row of the catalog tables, metrics parsed (their key order is not stored in a
    struct), sorted."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for name in _TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({name})")
                    if r[1] not in _SKIP_COLUMNS]
            rows = conn.execute(f"SELECT {', '.join(cols)} FROM {name}").fetchall()
            if name == "evaluations":
                at = cols.index("metrics")
                rows = [r[:at] + (json.loads(r[at]),) + r[at + 1:] for r in rows]
            out[name] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def _assert_same(left: Path, right: Path) -> None:
    a, b = snapshot(left), snapshot(right)
    for name in _TABLES:
        assert len(a[name]) == len(b[name]), name
        assert a[name] == b[name], name


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small generated archive as JSON dumps (with a Markdown folder)."""
    out = tmp_path_factory.mktemp("gen") / "json"
    generate(600, 1500, out, seed=3)
    return out


@pytest.fixture(scope="module")
def json_db(tmp_path_factory: pytest.TempPathFactory, generated: Path) -> Path:
    db = tmp_path_factory.mktemp("jsondb") / "catalog.db"
    code, output = _import(db, *fx.json_paths(generated))
    assert code == 0, output
    return db


def _hub(root: Path, generated: Path, **kw: object) -> Path:
    for kind, records in fx.json_dumps(generated).items():
        fx.hub_folder(root, kind, records, shards=4 if kind == "papers" else 1, **kw)  # type: ignore[arg-type]
    return root


# -- parity -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("metrics", "dates"), [("struct", "timestamp"), ("struct", "string"),
                                                ("map", "date32"), ("kv", "epoch_ms"),
                                                ("json", "epoch_s")])
def test_parquet_in_hub_layout_gives_the_json_catalog(tmp_path: Path, generated: Path,
                                                      json_db: Path, metrics: str,
                                                      dates: str) -> None:
    root = _hub(tmp_path / "hub", generated, metrics=metrics, dates=dates)
    db = tmp_path / "catalog.db"
    code, output = _import(db, root)
    assert code == 0, output
    assert "papers-with-abstracts/train-00003-of-00004.parquet (papers): read" in output
    assert "unknown column" not in output
    assert snapshot(db)["entity_aliases"]  # the generator lists synonyms and variants
    _assert_same(json_db, db)


def test_generator_parquet_form_gives_the_json_catalog(tmp_path: Path, json_db: Path) -> None:
    counts = generate(600, 1500, tmp_path / "pq", seed=3, fmt="parquet")
    shards = sorted(p.relative_to(tmp_path / "pq").as_posix()
                    for p in (tmp_path / "pq").rglob("*.parquet"))
    assert shards == [
        "datasets/data/train-00000-of-00001.parquet",
        *[f"evaluation-tables/data/train-0000{i}-of-00004.parquet" for i in range(4)],
        "links-between-paper-and-code/data/train-00000-of-00001.parquet",
        "methods/data/train-00000-of-00001.parquet",
        *[f"papers-with-abstracts/data/train-0000{i}-of-00004.parquet" for i in range(4)]]
    schema = pq.read_schema(tmp_path / "pq" / "papers-with-abstracts" / "data" /
                            "train-00000-of-00004.parquet")
    assert pa.types.is_timestamp(schema.field("date").type)  # as pandas' convert_dates leaves it
    assert counts["papers"] == 600
    db = tmp_path / "catalog.db"
    code, output = _import(db, tmp_path / "pq")
    assert code == 0, output
    # the JSON catalog was imported without the Markdown folder
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM paper_markdown")
    conn.commit()
    conn.close()
    _assert_same(json_db, db)


def _uniform_metric_types(records: list[dict]) -> list[dict]:
    """The records with every metric name holding one type: strings where a name holds both
    strings and numbers (a struct field has one type, so a publisher had to pick one)."""
    kinds: dict[str, set[bool]] = {}
    for task in records:
        for row in fx._task_rows(task):
            for name, value in (row.get("metrics") or {}).items():
                kinds.setdefault(name, set()).add(isinstance(value, str))
    mixed = {name for name, seen in kinds.items() if len(seen) > 1}
    records = json.loads(json.dumps(records))
    for task in records:
        for row in fx._task_rows(task):
            metrics = row.get("metrics") or {}
            for name in mixed & set(metrics):
                metrics[name] = str(metrics[name])
    return records


def _leaderboard_parity(tmp_path: Path, records: list[dict], metrics: str) -> None:
    tables = tmp_path / "evaluation-tables.json"
    tables.write_text(json.dumps(records), encoding="utf-8")
    data = fx.table("evaluations", records, metrics=metrics, dates="string")
    fx.write_shards(tmp_path / "evaluation-tables", data, shards=4)
    json_db, pq_db = tmp_path / "json.db", tmp_path / "pq.db"
    code, output = _import(json_db, tables)
    assert code == 0, output
    code, output = _import(pq_db, tmp_path / "evaluation-tables")
    assert code == 0, output
    _assert_same(json_db, pq_db)


@pytest.mark.parametrize("metrics", fx.METRICS)
def test_leaderboards_of_the_small_real_copy_are_the_same_from_parquet(tmp_path: Path,
                                                                       metrics: str) -> None:
    records = json.loads(SMALL.read_text(encoding="utf-8"))
    if metrics in ("map", "kv"):  # string values only: map<string, string>
        records = json.loads(json.dumps(records), parse_float=str, parse_int=str)
    _leaderboard_parity(tmp_path, records, metrics)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data/pwc-archive is not present")
@pytest.mark.parametrize("metrics", ["struct", "json"])
def test_real_leaderboards_are_the_same_from_parquet(tmp_path: Path, metrics: str) -> None:
    records = json.loads(SHARED.read_text(encoding="utf-8"))
    if metrics == "struct":  # one metric name holds strings and numbers here
        with pytest.raises(pa.ArrowInvalid):
            fx.table("evaluations", records)
        records = _uniform_metric_types(records)
    _leaderboard_parity(tmp_path, records, metrics)


def test_a_row_keeps_exactly_the_metrics_it_reported(tmp_path: Path) -> None:
    task = {"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Top 1 Accuracy", "Params"], "rows": [
            {"model_name": "A", "metrics": {"Params": "25M", "Top 1 Accuracy": "76.1"}},
            {"model_name": "B", "metrics": {"Top 5 Accuracy": "93"}}]}},
        {"dataset": "CIFAR-10", "sota": {"metrics": ["Error"], "rows": [
            {"model_name": "C", "metrics": {"Error": "3.1"}}]}}]}
    data = fx.table("evaluations", [task], metrics="struct")
    fx.write_shards(tmp_path / "evaluation-tables", data)
    db = tmp_path / "catalog.db"
    code, output = _import(db, tmp_path / "evaluation-tables")
    assert code == 0, output
    conn = sqlite3.connect(db)
    rows = dict(conn.execute("SELECT model_name, metrics FROM evaluations").fetchall())
    best = dict(conn.execute("SELECT model_name, best_metric FROM evaluations").fetchall())
    conn.close()
    # the table's order first (the struct's order is the file's), nulls are not metrics
    assert rows == {"A": '{"Top 1 Accuracy":"76.1","Params":"25M"}',
                    "B": '{"Top 5 Accuracy":"93"}', "C": '{"Error":"3.1"}'}
    assert best == {"A": "Top 1 Accuracy", "B": "Top 5 Accuracy", "C": "Error"}


# -- layout -------------------------------------------------------------------------------------
def test_sources_mix_json_single_shards_folders_and_markdown(tmp_path: Path, generated: Path,
                                                             json_db: Path) -> None:
    dumps = fx.json_dumps(generated)
    hub = tmp_path / "hub"
    fx.hub_folder(hub, "papers", dumps["papers"], shards=4)
    fx.hub_folder(hub, "methods", dumps["methods"])
    single = fx.hub_folder(tmp_path / "one", "links", dumps["links"])
    shard = single / "data" / "train-00000-of-00001.parquet"
    db = tmp_path / "catalog.db"
    code, output = _import(db, generated / "evaluation-tables.json", hub / "papers-with-abstracts",
                           shard, hub / "methods" / "data", generated / "datasets.json")
    assert code == 0, output
    _assert_same(json_db, db)
    code, output = _import(db, generated / "markdown")  # a Markdown folder still is one
    assert code == 0, output
    assert "markdown (markdown): read 40" in output


def test_parent_folder_takes_dumps_under_published_names_and_markdown(tmp_path: Path,
                                                                       generated: Path) -> None:
    root = tmp_path / "archive"
    dumps = fx.json_dumps(generated)
    fx.hub_folder(root, "papers", dumps["papers"], shards=2)
    shutil.copy(generated / "methods.json", root / "jul-28-methods.json")
    shutil.copytree(generated / "markdown", root / "markdown")
    (root / "notes.json").write_text("{}", encoding="utf-8")  # not a dump name: not read
    db = tmp_path / "catalog.db"
    code, output = _import(db, root)
    assert code == 0, output
    assert "jul-28-methods.json (methods): read 300" in output
    assert "markdown (markdown): read 40" in output
    assert "notes.json" not in output


# -- errors -------------------------------------------------------------------------------------
def _old_db(tmp_path: Path) -> tuple[Path, bytes]:
    db = tmp_path / "catalog.db"
    code, output = _import(db, SMALL)
    assert code == 0, output
    return db, db.read_bytes()


def _refused(tmp_path: Path, db: Path, before: bytes, source: Path) -> str:
    code, output = _import(db, source)
    assert code == 2, output
    lines = output.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert errors == lines[-1:], output  # one error line, last (after "importing ..." lines)
    assert "Traceback" not in output
    assert db.read_bytes() == before
    assert not list(db.parent.glob("*.tmp-*"))
    return errors[0]


def test_folder_with_nothing_to_import_is_an_error(tmp_path: Path) -> None:
    db, before = _old_db(tmp_path)
    empty = tmp_path / "download" / "papers-with-abstracts"
    (empty / ".cache" / "huggingface").mkdir(parents=True)
    (empty / "README.md").write_text("# card\n", encoding="utf-8")
    (empty / ".cache" / "huggingface" / "x.parquet").write_bytes(b"PAR1 not read")
    line = _refused(tmp_path, db, before, empty.parent)
    assert str(empty.parent) in line and "no importable files" in line


def _papers_table(generated: Path) -> pa.Table:
    return fx.table("papers", fx.json_dumps(generated)["papers"][:50])


def test_missing_required_column_names_file_and_column(tmp_path: Path, generated: Path) -> None:
    db, before = _old_db(tmp_path)
    shard = tmp_path / "papers-with-abstracts" / "data" / "train-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    pq.write_table(_papers_table(generated).drop_columns(["title"]), shard)
    line = _refused(tmp_path, db, before, shard)
    assert line == f"error: {shard}: missing required column 'title' for papers"


def test_column_of_unusable_type_names_file_and_column(tmp_path: Path, generated: Path) -> None:
    db, before = _old_db(tmp_path)
    data = _papers_table(generated)
    data = data.set_column(data.schema.get_field_index("abstract"), "abstract",
                           pa.array(range(data.num_rows)))
    shard = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(data, shard)
    line = _refused(tmp_path, db, before, shard)
    assert line == f"error: {shard}: column 'abstract' has type int64, expected a string"


def test_truncated_shard_is_refused(tmp_path: Path, generated: Path) -> None:
    db, before = _old_db(tmp_path)
    shard = tmp_path / "papers.parquet"
    pq.write_table(_papers_table(generated), shard)
    shard.write_bytes(shard.read_bytes()[:-100])
    line = _refused(tmp_path, db, before, shard)
    assert line.startswith(f"error: {shard}: not a readable parquet file")


def test_corrupt_data_page_is_refused_naming_the_column(tmp_path: Path, generated: Path) -> None:
    db, before = _old_db(tmp_path)
    shard = tmp_path / "papers.parquet"
    pq.write_table(_papers_table(generated), shard, compression="snappy")
    meta = pq.read_metadata(shard)
    index = meta.schema.to_arrow_schema().get_field_index("abstract")
    chunk = meta.row_group(0).column(index)
    raw = bytearray(shard.read_bytes())
    start = (chunk.dictionary_page_offset or chunk.data_page_offset) + 40  # past the page header
    raw[start:start + 200] = b"\xff" * 200
    shard.write_bytes(bytes(raw))
    line = _refused(tmp_path, db, before, shard)
    assert line.startswith(f"error: {shard}: unreadable parquet data at row 1 in column 'abstract'")


def test_unknown_columns_are_ignored_and_counted(tmp_path: Path, generated: Path) -> None:
    data = _papers_table(generated)
    data = data.append_column("github_stars", pa.array([1] * data.num_rows))
    data = data.append_column("nips_id", pa.array([None] * data.num_rows, pa.string()))
    shard = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(data, shard)
    code, output = _import(tmp_path / "catalog.db", shard)
    assert code == 0, output
    assert "read 50, inserted 50, updated 0, skipped 0, ignored 1 unknown column (github_stars)" \
        in output


def test_a_bad_or_too_deep_json_text_field_skips_that_record_only(tmp_path: Path, generated: Path) -> None:
    records = fx.json_dumps(generated)["papers"][:3]
    data = fx.table("papers", records)
    authors = [json.dumps(r["authors"]) for r in records]
    authors[1] = "[not json"
    authors[2] = "[" * 100_000 + "]" * 100_000  # json.loads would recurse: refused by depth first
    data = data.set_column(data.schema.get_field_index("authors"), "authors", pa.array(authors))
    shard = tmp_path / "papers.parquet"
    pq.write_table(data, shard)
    code, output = _import(tmp_path / "catalog.db", shard)
    assert code == 0, output
    assert "read 3, inserted 1, updated 0, skipped 2" in output
    assert "skipped record 2: invalid JSON text" in output
    assert "skipped record 3: JSON text refused (nesting deeper than 64 levels)" in output


def test_cli_refuses_a_bad_shard_without_traceback(tmp_path: Path) -> None:
    shard = tmp_path / "methods" / "data" / "train-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(b"PAR1" + b"\0" * 64)
    proc = subprocess.run([sys.executable, "-m", "catalog", "import", "--db",
                           str(tmp_path / "c.db"), str(tmp_path / "methods")],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.strip().startswith(f"error: {shard}: not a readable parquet file")


# -- progress and dates -------------------------------------------------------------------------
class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_counts_rows(tmp_path: Path, generated: Path) -> None:
    fx.hub_folder(tmp_path, "papers", fx.json_dumps(generated)["papers"], shards=2)
    out = io.StringIO()
    assert run_import(tmp_path / "a.db", [tmp_path / "papers-with-abstracts"], out=out) == 0
    assert "(papers, parquet, 300 rows)" in out.getvalue()
    tty = _Tty()
    assert run_import(tmp_path / "b.db", [tmp_path / "papers-with-abstracts"], out=tty) == 0
    assert "/300 [" in tty.getvalue() and " rows/s]" in tty.getvalue()


@pytest.mark.parametrize(("value", "expected"), [
    ("2017-06-12", "2017-06-12"), (1497225600, "2017-06-12"), (1497225600000, "2017-06-12"),
    (1497225600000000, "2017-06-12"), (1497225600000000000, "2017-06-12"),
    (1497225600.0, "2017-06-12"), (None, None)])
def test_dates_in_any_encoding(value: object, expected: str | None) -> None:
    assert date_text(value) == expected


def test_metrics_stay_with_their_rows_through_null_and_nested_levels(tmp_path: Path) -> None:
    def row(model: str, **metrics: str) -> dict:
        return {"model_name": model, "metrics": metrics}

    tasks = []
    for n in range(40):  # more tasks than one record batch holds
        tasks.append({"task": f"Task {n}", "datasets": [
            {"dataset": f"D{n}", "sota": None},
            {"dataset": f"E{n}", "sota": {"metrics": ["Acc"], "rows": None}},
            {"dataset": f"F{n}", "sota": {"metrics": ["Acc", "F1"], "rows": [
                row(f"m{n}a", F1=f"{n}.1"), None, row(f"m{n}b", Acc=f"{n}.2")]},
             "subdatasets": [{"subdataset": "val", "sota": {"metrics": ["BLEU"], "rows": [
                 row(f"m{n}c", BLEU=f"{n}.3")]}}]}],
            "subtasks": [{"task": f"Sub {n}", "datasets": [
                {"dataset": f"G{n}", "sota": {"metrics": ["Err"], "rows": [
                    row(f"m{n}d", Err=f"{n}.4", Acc=f"{n}.5")]}}]}] if n % 3 == 0 else None})
    data = fx.table("evaluations", tasks, metrics="struct")
    assert pa.types.is_struct(data.schema.field("datasets").type.value_type.field("sota").type
                              .field("rows").type.value_type.field("metrics").type)
    fx.write_shards(tmp_path / "evaluation-tables", data, row_group_size=7)
    db = tmp_path / "catalog.db"
    code, output = _import(db, tmp_path / "evaluation-tables")
    assert code == 0, output
    conn = sqlite3.connect(db)
    got = dict(conn.execute("SELECT model_name, metrics FROM evaluations").fetchall())
    conn.close()
    want = {}
    for n in range(40):
        want.update({f"m{n}a": {"F1": f"{n}.1"}, f"m{n}b": {"Acc": f"{n}.2"},
                     f"m{n}c": {"BLEU": f"{n}.3"}})
        if n % 3 == 0:
            want[f"m{n}d"] = {"Err": f"{n}.4", "Acc": f"{n}.5"}
    assert {k: json.loads(v) for k, v in got.items()} == want
    assert list(json.loads(got["m0d"])) == ["Err", "Acc"]  # the table's metric first


def test_the_sample_folder_alone_imports_what_its_listed_sources_do(tmp_path: Path) -> None:
    """compose's catalog-import passes its mounted folder as one argument; the bundled sample
    is that folder by default, and must give the catalog its file list gives."""
    from catalog.sample import SAMPLE_DIR, sample_sources

    listed, folder = tmp_path / "listed.db", tmp_path / "folder.db"
    assert run_import(listed, sample_sources(), out=io.StringIO()) == 0
    out = io.StringIO()
    assert run_import(folder, [SAMPLE_DIR], out=out) == 0
    assert "arxiv-metadata-oai-snapshot.jsonl (arxiv)" in out.getvalue()
    _assert_same(listed, folder)


def _summary(output: str, kind: str) -> dict[str, int]:
    line = next(line for line in output.splitlines() if f"({kind}" in line and "read " in line)
    return {word: int(number) for number, word in
            ((part.split()[1], part.split()[0]) for part in line.split(": ", 1)[1].split(", ")[:4])}


def test_a_first_import_inserts_every_leaderboard_and_a_second_updates_them(tmp_path: Path,
                                                                           generated: Path) -> None:
    # The datasets source writes each dataset just before the evaluation tables name it under
    # a task: the task's leaderboard on it is still new to the catalog (was: updated 16,128).
    db = tmp_path / "catalog.db"
    first = [_import(db, *fx.json_paths(generated)) for _ in range(2)]
    assert [code for code, _ in first] == [0, 0], first
    once, twice = (_summary(output, "evaluations") for _, output in first)
    assert once["updated"] == 0 and once["inserted"] == once["read"] - once["skipped"] > 0, once
    assert twice["inserted"] == 0 and twice["updated"] == twice["read"] - twice["skipped"], twice
