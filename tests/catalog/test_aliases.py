"""Task synonyms and dataset variants: imported from JSON and parquet, migrated in, and read by the vocabulary."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from catalog.db import schema
from catalog.importer import limits, run_import
from catalog.search import papers as search
from catalog.search import vocabulary
from catalog.search.embeddings import get_embedder
from catalog.store.core import Page
from tests.catalog import parquet_fixtures as fx

SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "pwc-archive" / "evaluation-tables.json"
# Other names, as the archive lists them, of tasks of the small real copy (one a subtask).
SYNONYMS = {"Named entity recognition": ["NER", "entity tagging", "tagging people and places in text"],
            "Speech Recognition": ["ASR", "automatic speech recognition", "speech-to-text"],
            "Sentence Compression": ["deletion-based compression"]}
DATASETS: list[dict[str, Any]] = [
    {"url": "https://paperswithcode.com/dataset/cifar-10", "name": "CIFAR-10", "full_name": "CIFAR-10",
     "description": "Tiny images.", "tasks": [{"task": "Image Classification"}],
     "variants": ["CIFAR-10", "CIFAR-10 (with augmentation)", "CIFAR10"]},
    {"url": "https://paperswithcode.com/dataset/squad", "name": "SQuAD", "full_name": "Stanford Question Answering Dataset",
     "description": "Reading comprehension.", "tasks": [{"task": "Question Answering"}],
     "variants": ["SQuAD1.1", "SQuAD1.1 dev", "SQuAD2.0"]},
    {"url": "https://paperswithcode.com/dataset/mnist", "name": "MNIST", "description": "Digits.", "tasks": []},
]


def _tables(synonyms: dict[str, list[str]] = SYNONYMS) -> list[dict]:  # type: ignore[type-arg]
    records = json.loads(SMALL.read_text(encoding="utf-8"))

    def put(task: dict) -> None:  # type: ignore[type-arg]
        if task["task"] in synonyms:
            task["synonyms"] = synonyms[task["task"]]
        for sub in task.get("subtasks") or []:
            put(sub)
    for task in records:
        put(task)
    return records  # type: ignore[no-any-return]


def _import(db: Path, *sources: Path) -> str:
    out = io.StringIO()
    assert run_import(db, list(sources), out=out) == 0, out.getvalue()
    return out.getvalue()


def _json_sources(folder: Path, tables: list[dict] | None = None) -> list[Path]:  # type: ignore[type-arg]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "evaluation-tables.json").write_text(json.dumps(tables or _tables()), encoding="utf-8")
    (folder / "datasets.json").write_text(json.dumps(DATASETS), encoding="utf-8")
    return [folder / "evaluation-tables.json", folder / "datasets.json"]


def _aliases(db: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(
            "SELECT a.entity_type, coalesce(t.name, d.name), a.alias FROM entity_aliases a "
            "LEFT JOIN tasks t ON a.entity_type = 'task' AND t.id = a.entity_id "
            "LEFT JOIN datasets d ON a.entity_type = 'dataset' AND d.id = a.entity_id").fetchall())
    finally:
        conn.close()


EXPECTED = sorted([("task", task, alias) for task, names in SYNONYMS.items() for alias in names]
                  + [("dataset", d["name"], v) for d in DATASETS for v in d.get("variants", [])])


@pytest.fixture(scope="module")
def json_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("aliases")
    db = folder / "catalog.db"
    _import(db, *_json_sources(folder / "json"))
    return db


def _ro(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


# -- import ---------------------------------------------------------------------------------------
def test_json_import_stores_task_synonyms_and_dataset_variants(json_db: Path) -> None:
    assert _aliases(json_db) == EXPECTED
    conn = sqlite3.connect(json_db)
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    conn.close()
    assert "entity_aliases_alias_nocase" in indexes  # restored after the bulk load


def test_parquet_import_stores_the_same_aliases(tmp_path: Path, json_db: Path) -> None:
    fx.hub_folder(tmp_path / "hub", "evaluations", _tables(), shards=2, metrics="struct", dates="string")
    fx.hub_folder(tmp_path / "hub", "datasets", DATASETS)
    db = tmp_path / "pq.db"
    output = _import(db, tmp_path / "hub")
    assert "unknown column" not in output
    assert _aliases(db) == _aliases(json_db) == EXPECTED


def test_synonyms_as_json_text_in_parquet_are_read(tmp_path: Path) -> None:
    records = _tables()
    for task in records:
        task["synonyms"] = json.dumps(task.get("synonyms") or [])
    fx.hub_folder(tmp_path / "hub", "evaluations", records, metrics="json", dates="string")
    db = tmp_path / "pq.db"
    _import(db, tmp_path / "hub")
    tasks = {(t, a) for kind, t, a in _aliases(db) if kind == "task"}
    assert ("Speech Recognition", "ASR") in tasks and ("Sentence Compression", "deletion-based compression") in tasks


def test_reimport_is_idempotent_and_replaces_a_changed_list(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    sources = _json_sources(tmp_path / "json")
    _import(db, *sources)
    _import(db, *sources)
    assert _aliases(db) == EXPECTED
    changed = dict(SYNONYMS, **{"Speech Recognition": ["ASR", "voice recognition"]})
    _import(db, *_json_sources(tmp_path / "json2", _tables(changed)))
    speech = [a for kind, t, a in _aliases(db) if t == "Speech Recognition"]
    assert speech == ["ASR", "voice recognition"]
    assert ("task", "Named entity recognition", "NER") in _aliases(db)  # others kept


def test_overlong_aliases_are_cut_and_counted(tmp_path: Path) -> None:
    long = "x" * (limits.SHORT_TEXT + 5)
    records = [{"task": "Toy Task", "synonyms": [long, "  toy  ", "", 7], "datasets": []}]
    path = tmp_path / "evaluation-tables.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "c.db"
    output = _import(db, path)
    assert "cut 1 oversized field" in output
    assert f"an item of 'synonyms' has {len(long)} characters, cut to {limits.SHORT_TEXT}" in output
    assert sorted(len(a) for _, _, a in _aliases(db)) == [3, limits.SHORT_TEXT]


def test_a_mistyped_variants_field_skips_that_record_only(tmp_path: Path) -> None:
    path = tmp_path / "datasets.json"
    path.write_text(json.dumps([{"name": "Bad", "variants": "B"}, {"name": "Good", "variants": ["G"]}]),
                    encoding="utf-8")
    db = tmp_path / "c.db"
    output = _import(db, path)
    assert "skipped 1" in output
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM datasets")] == ["Good"]
    conn.close()
    assert _aliases(db) == [("dataset", "Good", "G")]


# -- migration ---------------------------------------------------------------------------------------
def test_a_version_3_catalog_gains_the_table_keeps_its_rows_and_is_searchable_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "v3.db"
    conn = sqlite3.connect(path)
    for version, script in enumerate(schema.MIGRATIONS[:3], start=1):
        conn.executescript(f"BEGIN;\n{script}\nPRAGMA user_version = {version};\nCOMMIT;")
    conn.execute("INSERT INTO tasks (id, slug, name) VALUES (1, 'speech-recognition', 'Speech Recognition')")
    conn.commit()
    conn.close()
    # served before the next import migrates it: names still match, no aliases
    ro = _ro(path)
    found = vocabulary.match(vocabulary.load(ro), "speech recognition", search.STOP_WORDS)
    assert [m.via for m in found] == ["name"]
    ro.close()
    conn = sqlite3.connect(path)
    assert schema.migrate(conn) == schema.SCHEMA_VERSION >= 4
    assert conn.execute("SELECT name FROM tasks").fetchall() == [("Speech Recognition",)]
    assert conn.execute("SELECT count(*) FROM entity_aliases").fetchone() == (0,)
    conn.close()
    _import(path, *_json_sources(tmp_path / "json"))
    assert ("task", "Speech Recognition", "ASR") in _aliases(path)


# -- vocabulary ----------------------------------------------------------------------------------------
def _match(db: Path, query: str) -> list[tuple[str, str, str]]:
    conn = _ro(db)
    try:
        return [(m.entity.name, m.via, m.text) for m in
                vocabulary.match(vocabulary.load(conn), query, search.STOP_WORDS)]
    finally:
        conn.close()


def test_a_task_synonym_names_the_task(json_db: Path) -> None:
    assert _match(json_db, "tagging people and places in text") == [
        ("Named entity recognition", "synonym", "tagging people and places in text")]
    assert _match(json_db, "entity tagging for tweets")[0][:2] == ("Named entity recognition", "synonym")
    assert _match(json_db, "automatic speech recognition") == [
        ("Speech Recognition", "synonym", "automatic speech recognition")]
    assert _match(json_db, "deletion-based compression") == [
        ("Sentence Compression", "synonym", "deletion based compression")]


def test_a_capitalised_one_word_synonym_needs_capitals(json_db: Path) -> None:
    assert _match(json_db, "ASR") == [("Speech Recognition", "synonym", "ASR")]
    assert _match(json_db, "asr") == []


def test_a_dataset_variant_names_the_dataset(json_db: Path) -> None:
    assert _match(json_db, "CIFAR-10 (with augmentation)") == [("CIFAR-10", "variant", "CIFAR 10 with augmentation")]
    assert _match(json_db, "CIFAR-10")[0][:2] == ("CIFAR-10", "name")
    assert _match(json_db, "SQuAD1.1 dev") == [("SQuAD", "variant", "SQuAD1 1 dev")]
    assert _match(json_db, "squad1.1 dev") == [("SQuAD", "variant", "squad1 1 dev")]
    assert _match(json_db, "SQuAD1.1")[0][:2] == ("SQuAD1.1", "name")  # a leaderboard dataset's own name wins


def test_the_name_wins_over_another_entity_s_alias(tmp_path: Path) -> None:
    tables = _tables({"Speech Recognition": ["Machine Translation"]})
    db = tmp_path / "c.db"
    _import(db, *_json_sources(tmp_path / "json", tables))
    assert _match(db, "machine translation") == [("Machine Translation", "name", "machine translation")]


def test_search_reports_the_match_via_its_synonym(json_db: Path) -> None:
    conn = _ro(json_db)
    try:
        body = search.search_papers(conn, "tagging people and places in text", Page(1, 10), mode="keyword",
                                    start_date=None, end_date=None, has_official_implementation=None)
    finally:
        conn.close()
    entity = body["matched_entities"][0]
    assert (entity["name"], entity["via"], entity["filter"]) == (
        "Named entity recognition", "synonym", {"task": "named-entity-recognition"})


def test_a_task_synonym_is_embedded_beside_the_task_names(tmp_path: Path) -> None:
    tables = _tables({"Speech Recognition": ["transcribing audio recordings"]})  # without it: no match
    db = tmp_path / "c.db"
    _import(db, *_json_sources(tmp_path / "json", tables))
    embedder = get_embedder()
    conn = _ro(db)
    try:
        vocab = vocabulary.load(conn)
        query = "transcription of recorded audio"
        found = vocabulary.match(vocab, query, search.STOP_WORDS, embedder.embed([query])[0], embedder)
    finally:
        conn.close()
    assert [(m.entity.name, m.via) for m in found] == [("Speech Recognition", "embedding")]
