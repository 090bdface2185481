"""Provenance (issue 29 item 4): what an import records, ``pwc-catalog info``, ``GET /api/v1/catalog``."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.db import provenance
from catalog.importer import run_import
from catalog.importer.embed import embed_database
from catalog.sample import SAMPLE_DIR, build_sample_db

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hub_download(dest: Path, name: str, filename: str, source: Path, *, commit: str | None,
                  etag: str | None = None) -> Path:
    """Lay ``source`` out as ``hf download pwc-archive/<name> --local-dir dest/<name>`` leaves a file.

    huggingface_hub's ``_local_folder.write_download_metadata`` writes
    ``.cache/huggingface/download/<filename>.metadata``: commit hash, etag, timestamp.
    """
    target = dest / name / filename
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    if commit is not None:
        metadata = dest / name / ".cache" / "huggingface" / "download" / f"{filename}.metadata"
        metadata.parent.mkdir(parents=True, exist_ok=True)
        metadata.write_text(f"{commit}\n{etag or _sha256(target)}\n1754000000.5\n", encoding="utf-8")
    return target


def _import(db: Path, *sources: Path) -> None:
    out = io.StringIO()
    assert run_import(db, list(sources), out=out) == 0, out.getvalue()


def _record(db: Path) -> dict:
    return provenance.read_record(db)


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """JSON dumps in a folder shaped like a hub download, plus one loose dump."""
    dest = tmp_path_factory.mktemp("hub")
    papers = _hub_download(dest, "papers-with-abstracts", "papers-with-abstracts.json",
                           SAMPLE_DIR / "papers-with-abstracts.json", commit=COMMIT)
    # Named after an archive dataset but without hub metadata: the id is known, the revision is not.
    links = _hub_download(dest, "links-between-paper-and-code", "data/links-between-papers-and-code.json",
                          SAMPLE_DIR / "links-between-papers-and-code.json", commit=None)
    loose = dest / "loose" / "methods.json"
    loose.parent.mkdir()
    shutil.copyfile(SAMPLE_DIR / "methods.json", loose)
    return {"dest": dest, "papers": papers, "links": links, "methods": loose}


@pytest.fixture(scope="module")
def hub_db(tmp_path_factory: pytest.TempPathFactory, hub: dict[str, Path]) -> Path:
    db = tmp_path_factory.mktemp("db") / "catalog.db"
    _import(db, hub["papers"], hub["methods"], hub["links"])
    return db


def test_an_import_from_a_hub_download_records_datasets_revisions_files_and_counts(hub_db: Path,
                                                                                    hub: dict[str, Path]) -> None:
    record = _record(hub_db)
    assert record["provenance"] == "recorded" and record["kind"] == "archive"
    assert record["title"] == "Papers With Code archive" and record["license"] == "CC BY-SA 4.0"
    assert record["counts"]["papers"] == 41 and record["latest_paper"] == "2024-12-27"
    assert record["datasets"] == [
        {"id": "pwc-archive/links-between-paper-and-code", "revision": None,
         "imported_at": record["imported_at"], "files": 1},
        {"id": "pwc-archive/papers-with-abstracts", "revision": COMMIT,
         "imported_at": record["imported_at"], "files": 1},
    ]
    (entry,) = record["imports"]
    files = {f["kind"]: f for f in entry["files"]}
    assert files["papers"] == {
        "name": "papers-with-abstracts.json", "kind": "papers", "size": hub["papers"].stat().st_size,
        "sha256": _sha256(hub["papers"]), "dataset": "pwc-archive/papers-with-abstracts", "revision": COMMIT,
        "checksum_verified": True, "read": 41, "inserted": 41, "updated": 0, "skipped": 0}
    # The name inside the dataset, never a machine path.
    assert files["links"]["name"] == "data/links-between-papers-and-code.json"
    assert files["links"]["checksum_verified"] is None and files["links"]["read"] == 34
    assert files["methods"]["dataset"] is None and files["methods"]["name"] == "methods.json"
    assert files["methods"]["sha256"] == _sha256(hub["methods"]) and files["methods"]["read"] == 54
    assert str(hub["dest"]) not in json.dumps(record)
    embedding = record["embedding"]
    assert embedding["model"] == "wordllama-l2_supercat-256" and embedding["dimension"] == 256
    assert embedding["papers"] == 41


def test_a_re_import_appends_and_datasets_show_the_latest_revision(tmp_path: Path, hub: dict[str, Path]) -> None:
    db = tmp_path / "catalog.db"
    _import(db, hub["papers"])
    newer = _hub_download(tmp_path / "newer", "papers-with-abstracts", "papers-with-abstracts.json",
                          SAMPLE_DIR / "papers-with-abstracts.json", commit=OTHER_COMMIT, etag="0" * 64)
    _import(db, newer)
    record = _record(db)
    assert [len(i["files"]) for i in record["imports"]] == [1, 1]
    assert record["imports"][0]["files"][0]["revision"] == COMMIT
    assert record["imports"][1]["files"][0]["inserted"] == 0 and record["imports"][1]["files"][0]["updated"] == 41
    assert record["datasets"] == [{"id": "pwc-archive/papers-with-abstracts", "revision": OTHER_COMMIT,
                                   "imported_at": record["imports"][1]["imported_at"], "files": 1}]
    # An etag that is a sha256 and differs from the file's is reported, not hidden.
    assert record["imports"][1]["files"][0]["checksum_verified"] is False


def test_a_hub_cache_snapshot_names_its_repository_and_revision(tmp_path: Path) -> None:
    snapshot = tmp_path / "datasets--pwc-archive--methods" / "snapshots" / COMMIT / "data"
    snapshot.mkdir(parents=True)
    shutil.copyfile(SAMPLE_DIR / "methods.json", snapshot / "methods.json")
    found = provenance.hub_origin(snapshot / "methods.json")
    assert found == {"dataset": "pwc-archive/methods", "revision": COMMIT, "name": "data/methods.json", "etag": None}


def test_the_sample_says_it_is_the_bundled_sample(tmp_path: Path) -> None:
    db = tmp_path / "sample.db"
    build_sample_db(db)
    record = _record(db)
    assert record["kind"] == "sample" and record["title"] == "Bundled sample catalog"
    assert "not the Papers With Code archive" in record["description"]
    assert record["license"] != provenance.ARCHIVE_LICENSE and record["datasets"] == []


def _copy_without(hub_db: Path, db: Path, *keys: str) -> Path:
    """A copy of ``hub_db`` at ``db`` with the ``catalog_meta`` rows ``keys`` removed."""
    shutil.copyfile(hub_db, db)
    conn = sqlite3.connect(db)
    conn.executemany("DELETE FROM catalog_meta WHERE key = ?", [(key,) for key in keys])
    conn.commit()
    conn.close()
    return db


def test_embed_updates_the_embedding_model(tmp_path: Path, hub_db: Path) -> None:
    db = _copy_without(hub_db, tmp_path / "catalog.db", "embedding")
    assert _record(db)["embedding"] is None
    assert embed_database(db, out=io.StringIO()) == 0
    assert _record(db)["embedding"]["model"] == "wordllama-l2_supercat-256"


def _info(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "catalog", "info", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, check=False)


def test_info_prints_a_summary_and_the_whole_record_as_json(hub_db: Path) -> None:
    text = _info("--db", str(hub_db))
    assert text.returncode == 0, text.stderr
    assert "data: Papers With Code archive (archive), CC BY-SA 4.0" in text.stdout
    assert f"dataset: pwc-archive/papers-with-abstracts @ {COMMIT} (1 files" in text.stdout
    assert "  pwc-archive/papers-with-abstracts/papers-with-abstracts.json (papers):" in text.stdout
    assert "read 41, inserted 41" in text.stdout
    # A hub file is named with its dataset (every shard of every dataset is data/train-…); a loose one is not.
    assert "  pwc-archive/links-between-paper-and-code/data/links-between-papers-and-code.json (links):" in text.stdout
    assert "  methods.json (methods):" in text.stdout
    assert "41 papers" in text.stdout and "embedding: wordllama-l2_supercat-256 (256-d" in text.stdout
    full = _info("--db", str(hub_db), "--json")
    assert full.returncode == 0 and json.loads(full.stdout) == _record(hub_db)


def test_info_on_a_database_without_provenance_says_it_is_unknown(tmp_path: Path, hub_db: Path) -> None:
    db = _copy_without(hub_db, tmp_path / "old.db", "provenance", "embedding")
    text = _info("--db", str(db))
    assert text.returncode == 0, text.stderr
    assert "provenance: unknown" in text.stdout and "41 papers" in text.stdout
    assert "imported: 20" in text.stdout  # imported_at is still known
    record = json.loads(_info("--db", str(db), "--json").stdout)
    assert record["provenance"] == "unknown" and record["kind"] is None and record["imports"] == []


@pytest.mark.parametrize("content", [None, b"not a database at all"], ids=["missing", "not-sqlite"])
def test_info_on_a_bad_file_is_one_error_line_and_exit_2(tmp_path: Path, content: bytes | None) -> None:
    db = tmp_path / "catalog.db"
    if content is not None:
        db.write_bytes(content)
    result = _info("--db", str(db))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


async def test_the_api_serves_the_record(aiohttp_client, hub_db: Path) -> None:  # type: ignore[no-untyped-def]
    from catalog.api.app import create_app

    client = await aiohttp_client(create_app(hub_db))
    for path in ("/api/v1/catalog", "/api/v1/catalog/"):
        response = await client.get(path)
        assert response.status == 200
        assert await response.json() == _record(hub_db)


def test_the_sample_catalog_serves_its_provenance_over_http(catalog_url: str) -> None:
    import httpx

    record = httpx.get(f"{catalog_url}/catalog", timeout=10).json()
    assert record["kind"] == "sample" and record["provenance"] == "recorded"


@pytest.mark.parametrize("where", ["bundled", "copied"])
def test_importing_the_sample_files_yourself_says_it_is_the_sample_not_the_archive(tmp_path: Path,
                                                                                  where: str) -> None:
    """Dump-named files are the archive's only when they are not the bundled sample's bytes: a user
    who runs `pwc-catalog import catalog/sample` (or a copy of it) must not be told it is the archive."""
    folder = SAMPLE_DIR
    if where == "copied":
        folder = tmp_path / "my-sample"
        shutil.copytree(SAMPLE_DIR, folder)
    db = tmp_path / "catalog.db"
    _import(db, folder)
    record = _record(db)
    assert record["kind"] == "sample" and record["license"] != provenance.ARCHIVE_LICENSE


def test_a_dump_named_file_that_is_not_the_samples_is_the_archive(tmp_path: Path) -> None:
    """The sample is recognised by its bytes, not its name: other bytes under a dump's name are
    still read as the archive's JSON dump."""
    dump = tmp_path / "loose" / "methods.json"
    dump.parent.mkdir()
    dump.write_bytes((SAMPLE_DIR / "methods.json").read_bytes() + b"\n")  # same records, other bytes
    db = tmp_path / "catalog.db"
    _import(db, dump)
    assert _record(db)["kind"] == "archive"
