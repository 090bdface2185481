"""Hostile dumps: refused (one error line, exit 2, old database intact, no temporary file)
or imported with their oversized fields cut, always in bounded memory."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalog.importer import limits, run_import
from catalog.importer.limits import JsonGuard, LimitError
from catalog.search.embeddings import ABSTRACT_CHARS, TITLE_CHARS, document_text

REPO_ROOT = Path(__file__).resolve().parents[2]
HEADROOM = 768 << 20  # address space allowed above the interpreter's, after its imports

# Runs pwc-catalog in a child whose address space is capped a fixed amount above what
# the interpreter holds once the importer and the embedder are loaded: a bomb that grew
# with the file (22 GB for 200 KB of brackets before the bound) dies, a bounded one not.
_BOUNDED = """
import resource, sys
import catalog.cli, catalog.importer.run, catalog.search.embeddings
catalog.search.embeddings.get_embedder()
size = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize:"))
limit = size * 1024 + int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.exit(catalog.cli.main(sys.argv[2:]))
"""

PAPER = {"paper_url": "https://paperswithcode.com/paper/attention", "arxiv_id": "1706.03762",
         "title": "Attention Is All You Need", "abstract": "The Transformer.",
         "authors": ["Ashish Vaswani"], "tasks": ["Machine Translation"], "date": "2017-06-12",
         "url_abs": "https://arxiv.org/abs/1706.03762", "url_pdf": "https://arxiv.org/pdf/1706.03762"}


def _bounded(*args: str) -> subprocess.CompletedProcess:
    """``pwc-catalog ARGS`` under the address-space cap; stdout+stderr captured."""
    return subprocess.run([sys.executable, "-c", _BOUNDED, str(HEADROOM), *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)


def _import(db: Path, *sources: Path) -> tuple[int, str]:
    out = io.StringIO()
    return run_import(db, list(sources), out=out), out.getvalue()


def _digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def _state(db: Path) -> tuple[str, list[str]]:
    """The database's bytes and the files beside it (vectors included)."""
    return _digest(db), sorted(p.name for p in db.parent.iterdir())


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name or (
        ".vectors-" in p.name and p.suffix == ".json"))


@pytest.fixture()
def old_db(tmp_path: Path) -> Path:
    """A catalog holding one paper, imported from a valid dump."""
    dump = tmp_path / "seed" / "papers-with-abstracts.json"
    dump.parent.mkdir()
    dump.write_text(json.dumps([PAPER]))
    db = tmp_path / "catalog.db"
    assert _import(db, dump)[0] == 0
    return db


def _assert_refused(db: Path, before: tuple[str, list[str]], result: tuple[int, str] | subprocess.CompletedProcess,
                    source: Path, reason: str, where: str) -> str:
    """Exit 2, one ``error: <file>: <reason> at <where>`` line, ``db`` unchanged, nothing left."""
    if isinstance(result, subprocess.CompletedProcess):
        code, output = result.returncode, result.stdout + result.stderr
    else:
        code, output = result
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    assert errors[0].startswith(f"error: {source}: {reason}"), errors[0]
    assert f" at {where}" in errors[0], errors[0]
    assert "Traceback" not in output
    assert _state(db) == before  # same database, no temporary copy or vector file left
    return errors[0]


# -- nesting depth -------------------------------------------------------------------
@pytest.mark.slow
def test_a_bracket_bomb_is_refused_while_sniffing_in_bounded_memory(tmp_path: Path, old_db: Path) -> None:
    bomb = tmp_path / "bomb.json"
    bomb.write_bytes(b"[" * 200_000)
    before = _state(old_db)
    result = _bounded("import", "--db", str(old_db), str(bomb))
    _assert_refused(old_db, before, result, bomb, "nesting deeper than 64 levels", "byte 64 (record 1)")


@pytest.mark.slow
def test_a_deep_record_after_good_ones_is_refused_while_streaming(tmp_path: Path, old_db: Path) -> None:
    deep = dict(PAPER, arxiv_id="1810.04805", paper_url="https://paperswithcode.com/paper/bert")
    # more than the first 64 KiB read while sniffing the format: the streaming reader refuses
    head = json.dumps([PAPER] * 400)[:-1].encode() + b", "
    assert len(head) > 1 << 16
    dump = tmp_path / "papers-with-abstracts.json"
    body = json.dumps(deep)[:-1].encode() + b', "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]"
    dump.write_bytes(head + body)
    before = _state(old_db)
    result = _bounded("import", "--db", str(old_db), str(dump))
    first_bracket = len(head) + body.index(b'"extra": ') + len(b'"extra": ')
    # the array is level 1, the record 2, "extra" 3: the 63rd bracket passes 64
    _assert_refused(old_db, before, result, dump, "nesting deeper than 64 levels",
                    f"byte {first_bracket + 62} (record 401)")


def test_depth_64_is_accepted_and_65_refused(tmp_path: Path) -> None:
    def dump(depth: int) -> Path:
        extra = depth - 2  # levels below the array (1) and the record (2)
        path = tmp_path / f"d{depth}" / "papers-with-abstracts.json"
        path.parent.mkdir()
        text = json.dumps([PAPER])[:-2] + ', "extra": ' + "[" * extra + "]" * extra + "}]"
        path.write_text(text)
        return path

    db = tmp_path / "c.db"
    assert _import(db, dump(64))[0] == 0
    code, output = _import(db, dump(65))
    assert code == 2 and "nesting deeper than 64 levels" in output


def test_a_deep_gzip_dump_names_the_decompressed_byte(tmp_path: Path, old_db: Path) -> None:
    dump = tmp_path / "papers-with-abstracts.json.gz"
    dump.write_bytes(gzip.compress(b"[" * 100_000))
    before = _state(old_db)
    _assert_refused(old_db, before, _import(old_db, dump), dump, "nesting deeper than 64 levels",
                    "decompressed byte 64 (record 1)")


def test_deep_nesting_in_extras_is_refused_with_file_and_byte(tmp_path: Path, old_db: Path) -> None:
    extras = tmp_path / "catalog-extras.json"
    # several lines, so format sniffing (first line) passes and the object loader decides
    extras.write_bytes(b'{\n"areas": [{"name": "Vision"}],\n"tasks": ' + b"[" * 50_000
                       + b"]" * 50_000 + b"\n}\n")
    before = _state(old_db)
    line = _assert_refused(old_db, before, _import(old_db, extras), extras,
                           "nesting deeper than 64 levels", "byte ")
    assert "(record 1)" in line


def test_deep_nesting_in_an_arxiv_line_is_refused_with_file_line_and_byte(
        tmp_path: Path, old_db: Path) -> None:
    good = json.dumps({"id": "1706.03762", "title": "Attention", "authors": "A. Vaswani"}) + "\n"
    bad = '{"id": "1810.04805", "title": "BERT", "x": ' + "[" * 5000 + "]" * 5000 + "}\n"
    source = tmp_path / "arxiv-metadata-oai-snapshot.jsonl"
    source.write_text(good + bad)
    before = _state(old_db)
    # line 2's object is level 1, "x" 2: the 64th bracket of "x" passes 64
    where = f"byte {len(good) + bad.index('[') + 63} (record 2)"
    _assert_refused(old_db, before, _import(old_db, source), source,
                    "nesting deeper than 64 levels", where)


def test_an_arxiv_line_longer_than_its_bound_is_refused(tmp_path: Path, old_db: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1 << 20)
    good = json.dumps({"id": "1706.03762", "title": "Attention", "authors": "A. Vaswani"}) + "\n"
    long = json.dumps({"id": "1810.04805", "title": "B" * (2 << 20)}) + "\n"
    source = tmp_path / "arxiv.jsonl"
    source.write_text(good + long)
    before = _state(old_db)
    _assert_refused(old_db, before, _import(old_db, source), source,
                    "a line is longer than 1048576 bytes", "byte ")


# -- sizes -------------------------------------------------------------------------------
def test_a_string_longer_than_its_bound_is_refused(tmp_path: Path, old_db: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_STRING_BYTES", 1 << 20)
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_text(json.dumps([PAPER, dict(PAPER, abstract="x" * (3 << 20))]))
    before = _state(old_db)
    _assert_refused(old_db, before, _import(old_db, dump), dump,
                    "a string is longer than 1048576 bytes", "byte ")


def test_a_huge_number_is_refused(tmp_path: Path, old_db: Path) -> None:
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_bytes(json.dumps([PAPER]).encode()[:-1] + b", " + b"1" * 100_000 + b"]")
    before = _state(old_db)
    _assert_refused(old_db, before, _import(old_db, dump), dump,
                    f"a number or literal is longer than {limits.MAX_LITERAL_BYTES} bytes", "byte ")


def test_a_record_larger_than_its_bound_is_refused(tmp_path: Path, old_db: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_RECORD_BYTES", 1 << 20)
    dump = tmp_path / "evaluation-tables.json"
    rows = [{"model_name": f"m{i}", "metrics": {"Accuracy": str(i)}} for i in range(40_000)]
    dump.write_text(json.dumps([{"task": "Image Classification", "datasets": [
        {"dataset": "ImageNet", "sota": {"metrics": ["Accuracy"], "rows": rows}}]}]))
    before = _state(old_db)
    _assert_refused(old_db, before, _import(old_db, dump), dump,
                    "a record is larger than 1048576 bytes", "byte ")


@pytest.mark.slow
def test_oversized_fields_are_cut_or_dropped_counted_and_imported_in_bounded_memory(
        tmp_path: Path) -> None:
    big = dict(PAPER, title="T" * (3 << 20), abstract="A" * (3 << 20),
               url_pdf="https://example.org/" + "p" * 5000, authors=["N" * 1000, "Ada Lovelace"])
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_text(json.dumps([big]))
    db = tmp_path / "c.db"
    result = _bounded("import", "--db", str(db), str(dump))
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("papers-with-abstracts.json (papers): read 1, inserted 1, updated 0, skipped 0; "
            "cut 4 oversized fields") in result.stdout
    assert f"  cut record 1: 'title' has {3 << 20} characters, cut to {limits.SHORT_TEXT}" in result.stdout
    assert "'url_pdf' has 5020 characters, dropped" in result.stdout
    conn = sqlite3.connect(db)
    try:
        title, abstract, url_pdf, authors = conn.execute(
            "SELECT title, abstract, url_pdf, authors FROM papers").fetchone()
    finally:
        conn.close()
    assert (len(title), len(abstract), url_pdf) == (limits.SHORT_TEXT, limits.LONG_TEXT, None)
    assert [len(a) for a in json.loads(authors)] == [limits.AUTHOR_NAME, len("Ada Lovelace")]
    assert _leftovers(tmp_path) == []


def test_the_embedding_input_is_bounded_whatever_the_database_holds() -> None:
    text = document_text("t" * (50 << 20), "a" * (50 << 20))
    assert len(text) == TITLE_CHARS + 2 + ABSTRACT_CHARS


def test_a_markdown_file_larger_than_its_bound_is_skipped(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_MARKDOWN_BYTES", 1000)
    folder = tmp_path / "markdown"
    folder.mkdir()
    (folder / "1706.03762.md").write_text("# Attention\n" + "x" * 2000)
    (folder / "1810.04805.md").write_text("# BERT\n")
    code, output = _import(tmp_path / "c.db", folder)
    assert code == 0
    assert "read 2, inserted 1, updated 0, skipped 1" in output
    assert "skipped file 1706.03762.md: " in output


# -- guard unit checks -------------------------------------------------------------------------
@pytest.mark.parametrize("split", [1, 2, 3, 7, 64])
def test_the_guard_ignores_brackets_and_escaped_quotes_inside_strings(split: int) -> None:
    value = {"a": "[[[[{{{{ \\\" \"" * 40, "b": [[["x\\\\"]]], "c": '\\"[' * 30}
    data = json.dumps([value, value]).encode()
    guard = JsonGuard(max_depth=5)
    for start in range(0, len(data), split):
        guard.feed(data[start:start + split])
    assert (guard.depth, guard.in_string) == (0, False)


def test_the_guard_reports_the_byte_that_passes_the_bound() -> None:
    guard = JsonGuard(max_depth=3)
    with pytest.raises(LimitError) as caught:
        guard.feed(b'[{"a": "[[[[", "b": [[1]]}]')
    assert caught.value.offset == 21  # the second "[" after "b"


# -- keys and counters -------------------------------------------------------------------------
def test_records_sharing_a_paper_url_with_other_arxiv_ids_are_kept_apart(tmp_path: Path) -> None:
    shared = "https://paperswithcode.com/paper/shared-title"
    papers = [dict(PAPER, paper_url=shared, arxiv_id="2501.00001", title="Shared Title"),
              dict(PAPER, paper_url=shared, arxiv_id="2501.00002v2", title="Shared Title"),
              dict(PAPER, paper_url=shared, arxiv_id=None, title="Shared Title")]
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_text(json.dumps(papers))
    links = tmp_path / "links-between-papers-and-code.json"
    links.write_text(json.dumps([{"paper_url": shared, "paper_arxiv_id": "2501.00002",
                                  "paper_title": "Shared Title", "repo_url": "https://github.com/x/y",
                                  "is_official": True, "framework": "pytorch"}]))
    db = tmp_path / "c.db"
    code, output = _import(db, dump, links)
    assert code == 0, output
    assert ("papers-with-abstracts.json (papers): read 3, inserted 2, updated 1, skipped 0; "
            "1 papers kept apart (their paper_url names a paper with another arXiv id)") in output
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT arxiv_id, slug FROM papers ORDER BY id").fetchall()
        repo = conn.execute("SELECT p.arxiv_id FROM repositories r JOIN papers p "
                            "ON p.id = r.paper_id").fetchall()
    finally:
        conn.close()
    assert rows == [("2501.00001", "shared-title"), ("2501.00002", "shared-title")]
    assert repo == [("2501.00002",)]


def test_a_fresh_import_counts_rows_first_named_by_papers_as_inserted(tmp_path: Path) -> None:
    paper = dict(PAPER, methods=[{"name": "Adam"}, {"name": "Dropout"}])
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_text(json.dumps([paper]))
    methods = tmp_path / "methods.json"
    methods.write_text(json.dumps([
        {"url": "https://paperswithcode.com/method/adam", "name": "Adam", "full_name": "Adam",
         "description": "An optimizer.", "collections": [{"collection": "Optimizers", "area": "General"}]},
        {"url": "https://paperswithcode.com/method/dropout", "name": "Dropout",
         "description": "A regularizer."},
        {"url": "https://paperswithcode.com/method/relu", "name": "ReLU"}]))
    tables = tmp_path / "evaluation-tables.json"
    tables.write_text(json.dumps([{"task": "Machine Translation", "categories": ["NLP"],
                                   "datasets": [], "subtasks": []}]))
    db = tmp_path / "c.db"
    code, output = _import(db, dump, methods, tables)
    assert code == 0, output
    assert "methods.json (methods): read 3, inserted 3, updated 0, skipped 0" in output
    # the task was first named by the paper; the table describes it
    assert "evaluation-tables.json (evaluations): read 1, inserted 1, updated 0" in output
    code, output = _import(db, dump, methods, tables)
    assert "methods.json (methods): read 3, inserted 0, updated 3, skipped 0" in output



def test_a_list_field_that_is_not_a_list_skips_its_record_and_the_import_goes_on(tmp_path: Path) -> None:
    methods = tmp_path / "methods.json"
    methods.write_text(json.dumps([{"name": "Adam", "collections": 5}, {"name": "Dropout"}]))
    tables = tmp_path / "evaluation-tables.json"
    tables.write_text(json.dumps([{"task": "Machine Translation", "datasets": 5},
                                  {"task": "Summarization", "datasets": [], "subtasks": []}]))
    code, output = _import(tmp_path / "c.db", methods, tables)
    assert code == 0, output
    assert "methods.json (methods): read 2, inserted 1, updated 0, skipped 1" in output
    assert "evaluation-tables.json (evaluations): read 2, inserted 1, updated 0, skipped 1" in output
    assert "'collections' must be a list" in output and "'datasets' must be a list" in output

# -- interruption ------------------------------------------------------------------------------
@pytest.mark.slow
def test_sigterm_during_an_import_leaves_no_temporary_file(tmp_path: Path, old_db: Path) -> None:
    dump = tmp_path / "papers-with-abstracts.json"
    dump.write_text(json.dumps([dict(PAPER, arxiv_id=f"2101.{i:05d}", title=f"Paper {i}",
                                     paper_url=f"https://paperswithcode.com/paper/p{i}")
                                for i in range(60_000)]))
    before = _state(old_db)
    with subprocess.Popen([sys.executable, "-m", "catalog", "import", "--db", str(old_db), str(dump)],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # the temporary copy exists once a source is being imported
            if line.startswith("importing "):
                break
        deadline = time.monotonic() + 30
        while not _leftovers(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _leftovers(tmp_path), "the import ended before it could be interrupted"
        os.kill(proc.pid, signal.SIGTERM)
        output = proc.stdout.read()
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM, output
    assert _state(old_db) == before
