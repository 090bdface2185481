"""The catalog importer on real data: evaluation tables, paper Markdown, re-imports, bad input."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from catalog.importer import run_import

REPO_ROOT = Path(__file__).resolve().parents[2]


def _import(db: Path, *sources: Path) -> tuple[int, str]:
    out = io.StringIO()
    code = run_import(db, list(sources), out=out)
    return code, out.getvalue()


def _counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in (
            "papers", "tasks", "datasets", "evaluations", "areas", "paper_markdown",
            "dataset_tasks", "paper_tasks", "authors")}
    finally:
        conn.close()


@pytest.fixture(scope="session")
def tables(pwc_archive: Path) -> Path:
    return pwc_archive / "evaluation-tables.json"


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory, tables: Path) -> Path:
    db = tmp_path_factory.mktemp("real") / "catalog.db"
    code, output = _import(db, tables)
    assert code == 0, output
    return db


@pytest.fixture(scope="module")
def text_db(tmp_path_factory: pytest.TempPathFactory, tables: Path, paper_text: Path) -> Path:
    db = tmp_path_factory.mktemp("text") / "catalog.db"
    code, output = _import(db, tables, paper_text)
    assert code == 0, output
    return db


def _connect(db: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(db)
    yield connection
    connection.close()


@pytest.fixture
def conn(real_db: Path) -> Iterator[sqlite3.Connection]:
    yield from _connect(real_db)


@pytest.fixture
def text_conn(text_db: Path) -> Iterator[sqlite3.Connection]:
    yield from _connect(text_db)


def test_leaderboard_rows_keep_real_metric_strings_and_rank_by_first_metric(conn: sqlite3.Connection) -> None:
    rows = conn.execute(
        "SELECT e.model_name, e.metrics, e.best_metric, e.best_rank, e.paper_title FROM evaluations e "
        "JOIN datasets d ON d.id = e.dataset_id WHERE d.name = 'WMT 2014 EN-DE' "
        "ORDER BY e.best_rank IS NULL, e.best_rank, e.id").fetchall()
    top = rows[0]
    assert top[0] == "Transformer Big + BT (2018)"
    assert json.loads(top[1]) == {"BLEU": "35.0"}
    assert (top[2], top[3]) == ("BLEU", 1)
    assert top[4] == "Understanding Back-Translation at Scale"
    ranks = [r[3] for r in rows if r[3] is not None]
    assert ranks == sorted(ranks)
    # a value that is not a number ("28.5*") is kept as given and left unranked
    assert ("RNMT+ (2018)", '{"BLEU":"28.5*"}', None) in [(r[0], r[1], r[3]) for r in rows]


def test_arxiv_paper_urls_link_rows_to_paper_stubs(conn: sqlite3.Connection) -> None:
    paper = conn.execute("SELECT p.arxiv_id, p.title FROM evaluations e JOIN papers p ON p.id = e.paper_id "
                         "WHERE e.model_name = 'Transformer Big + BT (2018)'").fetchone()
    assert paper == ("1808.09381", "Understanding Back-Translation at Scale")
    unlinked = conn.execute("SELECT paper_id, paper_url FROM evaluations WHERE model_name = 'DeepL'").fetchone()
    assert unlinked == (None, "https://www.deepl.com/press.html")


def test_a_task_lists_its_datasets_and_categories_become_areas(conn: sqlite3.Connection) -> None:
    names = {n for (n,) in conn.execute(
        "SELECT d.name FROM dataset_tasks dt JOIN datasets d ON d.id = dt.dataset_id JOIN tasks t "
        "ON t.id = dt.task_id WHERE t.name = 'Machine Translation'")}
    assert {"WMT 2014 EN-DE", "WMT 2014 EN-FR", "WMT16 (de-en en-de)"} <= names
    areas = {n for (n,) in conn.execute("SELECT name FROM areas")}
    assert {"Computer Vision", "Speech", "NLP"} <= areas


def test_subtasks_become_child_tasks_one_level_down(conn: sqlite3.Connection) -> None:
    child = conn.execute("SELECT t.level, p.name, p.level FROM tasks t JOIN tasks p ON p.id = t.parent_id "
                         "WHERE t.name = 'Sentence Compression'").fetchone()
    assert child == (1, "Summarization", 0)


def test_subdatasets_become_datasets_linked_to_the_parent_task(conn: sqlite3.Connection) -> None:
    row = conn.execute(
        "SELECT t.name, count(e.id) FROM datasets d JOIN dataset_tasks dt ON dt.dataset_id = d.id "
        "JOIN tasks t ON t.id = dt.task_id JOIN evaluations e ON e.dataset_id = d.id "
        "WHERE d.name = 'CoNLL-2014 Shared Task (Restricted)' GROUP BY t.name").fetchone()
    assert row[0] == "Grammatical Error Correction" and row[1] > 0


def test_error_metrics_rank_lower_values_first(conn: sqlite3.Connection) -> None:
    boards = conn.execute(
        "SELECT e.task_id, e.dataset_id FROM evaluations e WHERE e.best_metric = 'Percentage error' "
        "GROUP BY e.task_id, e.dataset_id HAVING count(*) > 2 LIMIT 1").fetchone()
    rows = conn.execute("SELECT metrics, best_rank FROM evaluations WHERE task_id = ? AND dataset_id = ? "
                        "AND best_rank IS NOT NULL ORDER BY best_rank", boards).fetchall()
    values = [float(str(json.loads(m)["Percentage error"]).rstrip("%")) for m, _ in rows]
    assert values == sorted(values)


def test_missing_uses_additional_data_stays_null(conn: sqlite3.Connection) -> None:
    nulls = conn.execute("SELECT count(*) FROM evaluations WHERE uses_additional_data IS NULL").fetchone()[0]
    known = conn.execute("SELECT count(*) FROM evaluations WHERE uses_additional_data IS NOT NULL").fetchone()[0]
    assert nulls > 0 and known > 0


def test_paper_markdown_is_stored_with_its_sha256_content_version(text_conn: sqlite3.Connection,
                                                                  paper_text: Path) -> None:
    index = json.loads((paper_text / "index.json").read_text(encoding="utf-8"))
    expected = next(f["sha256"] for e in index if e["arxiv_id"] == "2412.19437"
                    for f in e["files"] if f["file"] == "2412.19437/2412.19437.md")
    markdown, version = text_conn.execute(
        "SELECT m.markdown, m.content_version FROM paper_markdown m JOIN papers p ON p.id = m.paper_id "
        "WHERE p.arxiv_id = '2412.19437'").fetchone()
    assert version == expected
    assert hashlib.sha256(markdown.encode("utf-8")).hexdigest() == expected
    assert len(markdown.encode("utf-8")) > 64 * 1024


def test_markdown_subfolders_without_an_exact_file_use_their_first_md(text_conn: sqlite3.Connection) -> None:
    arxiv_ids = {a for (a,) in text_conn.execute(
        "SELECT p.arxiv_id FROM paper_markdown m JOIN papers p ON p.id = m.paper_id")}
    assert {"1706.03762", "2203.01017", "2101.03961", "2206.01062"} <= arxiv_ids


def test_reimport_updates_rows_without_duplicates(tmp_path: Path, tables: Path) -> None:
    db = tmp_path / "c.db"
    assert _import(db, tables)[0] == 0
    first = _counts(db)
    code, output = _import(db, tables)
    assert code == 0
    assert _counts(db) == first
    assert "evaluation-tables.json (evaluations): read 307, inserted 0," in output


def _truncated_gz(tmp_path: Path, tables: Path) -> Path:
    data = gzip.compress(tables.read_bytes())
    path = tmp_path / "evaluation-tables.json.gz"
    path.write_bytes(data[: len(data) // 2])
    return path


def _corrupt_gz(tmp_path: Path, tables: Path) -> Path:
    data = bytearray(gzip.compress(tables.read_bytes()))
    data[len(data) // 2:len(data) // 2 + 64] = bytes(64)  # a zeroed run inside the deflate stream
    path = tmp_path / "evaluation-tables.json.gz"
    path.write_bytes(bytes(data))
    return path


def _invalid_json_gz(tmp_path: Path, tables: Path) -> Path:
    text = tables.read_text(encoding="utf-8")
    cut = text.index("},", len(text) // 2) + 2  # between two values: outside any string
    path = tmp_path / "evaluation-tables.json.gz"
    path.write_bytes(gzip.compress((text[:cut] + "@" + text[cut:]).encode()))
    return path


@pytest.mark.parametrize("make_bad", [
    pytest.param(_truncated_gz, id="truncated-gzip"),
    pytest.param(_corrupt_gz, id="corrupt-gzip"),
    pytest.param(_invalid_json_gz, id="invalid-json"),
])
def test_a_bad_dump_is_one_error_line_exit_2_and_the_database_stays_untouched(
        tmp_path: Path, tables: Path, make_bad: Callable[[Path, Path], Path]) -> None:
    db = tmp_path / "c.db"
    assert _import(db, tables)[0] == 0
    before = db.read_bytes()
    bad = make_bad(tmp_path, tables)
    code, output = _import(db, bad)
    assert code == 2
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and output.strip().endswith(errors[0])
    assert str(bad) in errors[0] and "byte" in errors[0] and "record" in errors[0]
    assert "Traceback" not in output
    assert db.read_bytes() == before
    left = sorted(p.name for p in tmp_path.iterdir() if ".vectors" not in p.name)  # search vectors: their own tests
    assert left == ["c.db", bad.name]  # no temporary copy left


def test_gzipped_dump_imports_like_the_plain_file(tmp_path: Path, tables: Path) -> None:
    path = tmp_path / "evaluation-tables.json.gz"
    path.write_bytes(gzip.compress(tables.read_bytes()))
    code, output = _import(tmp_path / "c.db", path)
    assert code == 0, output
    assert _counts(tmp_path / "c.db")["evaluations"] == 250


@pytest.mark.parametrize(("content", "needle"), [
    pytest.param(b'[{"task": "A", "datasets": [], "subtasks": []}, {"task": ', "byte", id="invalid-json"),
    pytest.param(b"[1, 2, 3]", "not a recognised dump format", id="wrong-format"),
    pytest.param(b"hello", "not a recognised dump format", id="not-json"),
    pytest.param(b"\x1f\x8b\x08\x00garbage", "byte", id="bad-gzip"),
])
def test_a_malformed_file_gives_one_error_line_naming_it(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "evaluation-tables.json"
    path.write_bytes(content)
    code, output = _import(tmp_path / "c.db", path)
    assert code == 2
    errors = [line for line in output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and str(path) in errors[0] and needle in errors[0]
    assert "Traceback" not in output
    assert not (tmp_path / "c.db").exists()


def test_malformed_records_are_skipped_counted_and_explained(tmp_path: Path) -> None:
    tables = [
        {"task": "Good Task", "categories": ["Vision"], "description": "d", "subtasks": [], "datasets": [
            {"dataset": "Good Set", "description": "", "sota": {"metrics": ["Accuracy"], "rows": [
                {"model_name": "M1", "metrics": {"Accuracy": "84.4%"}, "paper_title": "P",
                 "paper_url": "https://arxiv.org/abs/2101.00001", "paper_date": None, "code_links": []},
                {"model_name": "", "metrics": {"Accuracy": "1"}},
                {"model_name": "M3", "metrics": ["not", "a", "dict"]},
                "not a row",
                {"model_name": "M2", "metrics": {"Accuracy": 90}, "paper_title": "Q", "paper_url": ""},
            ]}, "subdatasets": []}]},
        {"categories": []},
        42,
    ]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(tables), encoding="utf-8")
    code, output = _import(tmp_path / "c.db", path)
    assert code == 0, output
    assert "skipped 5" in output
    assert "missing 'model_name'" in output and "'metrics' must be an object" in output
    assert "not a JSON object" in output and "missing 'task'" in output
    conn = sqlite3.connect(tmp_path / "c.db")
    rows = conn.execute("SELECT model_name, best_rank, metrics FROM evaluations ORDER BY best_rank").fetchall()
    conn.close()
    assert rows == [("M2", 1, '{"Accuracy":90}'), ("M1", 2, '{"Accuracy":"84.4%"}')]


def test_arxiv_oai_lines_fill_external_metadata_and_bad_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "arxiv-metadata-oai-snapshot.jsonl"
    good = {"id": "2106.09685", "title": "LoRA: Low-Rank Adaptation of\n  Large Language Models",
            "authors": "Edward J. Hu, Yelong Shen", "abstract": " text ", "doi": None,
            "update_date": "2021-10-18", "versions": [{"version": "v1", "created": "Thu, 17 Jun 2021 17:37:18 GMT"}],
            "authors_parsed": [["Hu", "Edward J.", ""], ["Shen", "Yelong", ""]]}
    path.write_text(json.dumps(good) + "\n{broken\n" + json.dumps({"id": "x", "title": "t"}) + "\n",
                    encoding="utf-8")
    code, output = _import(tmp_path / "c.db", path)
    assert code == 0, output
    assert "inserted 1, updated 0, skipped 2" in output
    conn = sqlite3.connect(tmp_path / "c.db")
    row = conn.execute("SELECT title, title_prefix, authors, published, source FROM external_metadata").fetchone()
    conn.close()
    assert row == ("LoRA: Low-Rank Adaptation of Large Language Models", "lora",
                   '["Edward J. Hu","Yelong Shen"]', "2021-06-17", "arxiv")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "catalog", "import", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cli_import_succeeds_and_fails_with_exit_codes_and_no_traceback(tmp_path: Path,
                                                                         tables: Path) -> None:
    db = tmp_path / "c.db"
    ok = _cli("--db", str(db), str(tables))
    assert ok.returncode == 0, ok.stderr
    assert "inserted" in ok.stdout + ok.stderr
    bad = _truncated_gz(tmp_path, tables)
    failed = _cli("--db", str(db), str(bad))
    assert failed.returncode == 2
    assert "Traceback" not in failed.stdout + failed.stderr
    assert str(bad) in failed.stdout + failed.stderr
    missing = _cli("--db", str(db), str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "Traceback" not in missing.stdout + missing.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_progress_bar_and_the_same_summary(tmp_path: Path, tables: Path) -> None:
    out = _Terminal()
    assert run_import(tmp_path / "c.db", [tables], out=out) == 0
    text = out.getvalue()
    assert "importing " not in text  # the bar replaces the plain progress lines
    assert "evaluation-tables.json (evaluations): read 307" in text


def test_markdown_only_papers_are_titled_from_their_heading(text_conn: sqlite3.Connection) -> None:
    titles = dict(text_conn.execute("SELECT arxiv_id, title FROM papers WHERE arxiv_id IN "
                               "('2203.01017', '2412.19437', '2310.06825')"))
    assert titles == {"2203.01017": "TableFormer: Table Structure Understanding with Transformers",
                      "2412.19437": "DeepSeek-V3 Technical Report",
                      "2310.06825": "2310.06825"}  # its first heading is "Abstract": no title
