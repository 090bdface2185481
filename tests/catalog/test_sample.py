"""The bundled sample catalog: its contents, and every docs/cli-contract.md §4.3 endpoint answers with data."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from catalog.sample import SAMPLE_DIR, build_sample_db
from tests.helpers import request


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    path = tmp_path_factory.mktemp("sample") / "sample.db"
    build_sample_db(path)
    conn = sqlite3.connect(path)
    yield conn
    conn.close()


def _one(conn: sqlite3.Connection, sql: str, *args: object) -> object:
    return conn.execute(sql, args).fetchone()[0]


def test_sample_builds_quickly_into_a_fresh_file(tmp_path: Path) -> None:
    started = time.perf_counter()
    build_sample_db(tmp_path / "s.db")
    # a generous bound: the budget is "well under 2 s" on a loaded 2-core machine
    assert time.perf_counter() - started < 10
    assert (tmp_path / "s.db").stat().st_size > 0
    assert not list(tmp_path.glob("s.db.tmp-*"))


def test_sample_holds_at_least_thirty_papers_with_real_arxiv_ids(sample_db: sqlite3.Connection) -> None:
    assert _one(sample_db, "SELECT count(*) FROM papers") >= 30
    title = _one(sample_db, "SELECT title FROM papers WHERE arxiv_id = '2010.11929'")
    assert title == "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale"
    assert _one(sample_db, "SELECT count(*) FROM papers WHERE arxiv_id IS NULL") >= 1


def test_sample_has_one_markdown_over_64_kib_with_non_ascii_text(sample_db: sqlite3.Connection) -> None:
    rows = sample_db.execute("SELECT markdown FROM paper_markdown").fetchall()
    big = [md for (md,) in rows if len(md.encode("utf-8")) > 64 * 1024]
    assert len(big) == 1
    assert all(ch in big[0] for ch in ("é", "—", "∑", "中文"))


def test_sample_has_papers_known_only_through_external_metadata(sample_db: sqlite3.Connection) -> None:
    external_only = sample_db.execute(
        "SELECT title FROM external_metadata e WHERE NOT EXISTS "
        "(SELECT 1 FROM papers p WHERE p.arxiv_id = e.arxiv_id)").fetchall()
    titles = [t for (t,) in external_only]
    assert len(titles) >= 3
    assert "LoRA: Low-Rank Adaptation of Large Language Models" in titles
    assert _one(sample_db, "SELECT title_prefix FROM external_metadata WHERE arxiv_id = '2106.09685'") == "lora"


@pytest.mark.parametrize(("sql", "minimum"), [
    pytest.param("SELECT count(*) FROM tasks WHERE parent_id IS NOT NULL", 2, id="child-tasks"),
    pytest.param("SELECT count(DISTINCT area_id) FROM tasks", 3, id="areas-with-tasks"),
    pytest.param("SELECT count(*) FROM lineage", 10, id="lineage"),
    pytest.param("SELECT count(*) FROM repositories WHERE is_official = 1", 10, id="official-repos"),
    pytest.param("SELECT count(*) FROM paper_frameworks", 5, id="paper-frameworks"),
    pytest.param("SELECT count(*) FROM evaluations WHERE is_open = 1", 1, id="open-rows"),
    pytest.param("SELECT count(*) FROM evaluations WHERE is_open = 0", 1, id="closed-rows"),
    pytest.param("SELECT count(*) FROM evaluations WHERE is_open IS NULL", 1, id="unknown-open-rows"),
    pytest.param("SELECT count(*) FROM evaluations WHERE num_parameters > 0", 3, id="parameters"),
    pytest.param("SELECT count(*) FROM evaluations WHERE methodology LIKE '%5-shot%'", 1, id="5-shot"),
    pytest.param("SELECT count(*) FROM evaluations WHERE methodology LIKE '%0-shot%'", 1, id="0-shot"),
    pytest.param("SELECT count(*) FROM evaluations WHERE split IS NOT NULL", 1, id="splits"),
    pytest.param("SELECT count(*) FROM organizations WHERE is_featured = 1", 3, id="featured-orgs"),
    pytest.param("SELECT count(*) FROM conferences WHERE start_date IS NOT NULL", 1, id="conference-dates"),
])
def test_sample_covers_every_catalog_feature(sample_db: sqlite3.Connection, sql: str, minimum: int) -> None:
    assert _one(sample_db, sql) >= minimum


def test_sample_has_a_model_ranked_on_one_benchmark_under_two_tasks(sample_db: sqlite3.Connection) -> None:
    scopes = _one(sample_db,
                  "SELECT count(DISTINCT e.task_id) FROM evaluations e JOIN datasets d ON d.id = "
                  "e.dataset_id WHERE d.name = 'COCO test-dev' AND e.model_name = 'Swin-L (HTC++)'")
    assert scopes == 2


def test_sample_leaderboard_ranks_follow_the_reported_figures(sample_db: sqlite3.Connection) -> None:
    rows = sample_db.execute(
        "SELECT e.model_name, e.metrics, e.best_rank FROM evaluations e JOIN datasets d ON "
        "d.id = e.dataset_id JOIN tasks t ON t.id = e.task_id WHERE d.name = 'WMT2014 English-German' "
        "ORDER BY e.best_rank").fetchall()
    assert [(m, json.loads(x)["BLEU score"], r) for m, x, r in rows] == [
        ("Transformer Big", "28.4", 1), ("Transformer Base", "27.3", 2)]


def test_sample_data_files_are_valid_json() -> None:
    for path in SAMPLE_DIR.glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))
    for line in (SAMPLE_DIR / "arxiv-metadata-oai-snapshot.jsonl").read_text(encoding="utf-8").splitlines():
        assert "id" in json.loads(line)


# Every read endpoint of docs/cli-contract.md §4.3 (numbered as there) answers 2xx with data on the sample.
ENDPOINTS = [
    pytest.param("papers/search", {"q": "transformer", "page": 1, "page_size": 10, "mode": "keyword"}, id="1-search"),
    pytest.param("papers/1706.03762", {"include_resources": "true"}, id="2-paper"),
    pytest.param("evaluations/", {"page": 1, "page_size": 100, "paper_id": "{paper_id}",
                                  "ordering": "-benchmark_popularity"}, id="3-evaluations"),
    pytest.param("research/papers/1706.03762/read", {}, id="4-read"),
    pytest.param("papers/", {"page": 1, "page_size": 20, "latest_only": "true", "order_by": "trending",
                             "order_dir": "desc", "include_resources": "false"}, id="5-papers"),
    pytest.param("papers/recent", {"limit": 10}, id="6-recent"),
    pytest.param("papers/trending", {"limit": 20, "max_age_days": 365}, id="7-trending"),
    pytest.param("papers/1810.04805/related", {"limit": 4}, id="8-related"),
    pytest.param("research/papers/1810.04805/lineage", {}, id="9-lineage"),
    pytest.param("areas/", {"page": 1, "page_size": 500, "ordering": "name"}, id="10-areas"),
    pytest.param("areas/with-tasks/", {}, id="11-areas-tasks"),
    pytest.param("areas/with-task-benchmarks/", {"benchmarks_per_task": 3, "min_eval_count": 1}, id="12-areas-benchmarks"),
    pytest.param("tasks/", {"page": 1, "page_size": 50, "ordering": "name"}, id="13-tasks"),
    pytest.param("tasks/{task_id}", {}, id="14-task"),
    pytest.param("tasks/{task_id}/page", {}, id="15-task-page"),
    pytest.param("tasks/{task_id}/trending-benchmarks", {"limit": 100, "min_recent_papers": 0}, id="16-trending-benchmarks"),
    pytest.param("tasks/{task_id}/papers", {"page": 1, "page_size": 100, "order_by": "trending",
                                            "order_dir": "desc", "include_resources": "true"}, id="17-task-papers"),
    pytest.param("methods/", {"page": 1, "page_size": 50}, id="18-methods"),
    pytest.param("methods/transformer", {}, id="19-method"),
    pytest.param("conferences/", {}, id="20-conferences"),
    pytest.param("conferences/neurips-2017", {}, id="21-conference"),
    pytest.param("organizations/", {"featured_only": "false"}, id="22-organizations"),
    pytest.param("organizations/google", {}, id="23-organization"),
    pytest.param("frameworks/", {}, id="24-frameworks"),
    pytest.param("datasets/", {"page": 1, "page_size": 50, "include_descendants": "false"}, id="25-datasets"),
    pytest.param("datasets/{dataset_id}/evaluations/", {"page": 1, "page_size": 100, "ordering": "best_rank"},
                 id="26-dataset-evaluations"),
]


@pytest.fixture(scope="module")
def ids(catalog_url: str) -> dict[str, str]:
    paper = request("GET", f"{catalog_url}/papers/1706.03762", timeout=10).json()
    tasks = request("GET", f"{catalog_url}/tasks/", params={"q": "Image Classification", "page": 1,
                                                        "page_size": 100}, timeout=10).json()
    task = next(t for t in tasks["results"] if t["name"] == "Image Classification")
    datasets = request("GET", f"{catalog_url}/datasets/", params={"q": "ImageNet", "page": 1,
                                                              "page_size": 100}, timeout=10).json()
    dataset = next(d for d in datasets["results"] if d["name"] == "ImageNet")
    return {"paper_id": str(paper["id"]), "task_id": str(task["id"]), "dataset_id": str(dataset["id"])}


def _has_data(body: object) -> bool:
    if isinstance(body, list):
        return bool(body)
    if isinstance(body, dict):
        for key in ("results", "domains", "predecessors", "successors"):
            if key in body:
                return bool(body[key])
        if "task" in body:
            return bool(body["task"])
        return bool(body)
    return False


@pytest.mark.parametrize(("path", "params"), ENDPOINTS)
def test_every_endpoint_returns_data_on_the_sample(catalog_url: str, ids: dict[str, str],
                                                   path: str, params: dict) -> None:
    url = f"{catalog_url}/{path.format(**ids)}"
    response = request("GET", url, params={k: str(v).format(**ids) for k, v in params.items()}, timeout=10)
    assert response.status_code == 200, response.text[:300]
    if path.endswith("/read"):
        assert len(response.content) > 64 * 1024
        return
    assert _has_data(response.json())
