"""Every endpoint answers with non-empty data on the bundled sample catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

BASE = "/api/v1"


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from catalog.sample import build_sample_db

    path = tmp_path_factory.mktemp("sample") / "sample.db"
    build_sample_db(path)
    return path


@pytest.fixture
async def sample_api(aiohttp_client, sample_db: Path):  # type: ignore[no-untyped-def]
    from catalog.api.app import create_app

    return await aiohttp_client(create_app(sample_db))


async def _json(client, path: str, **params):  # type: ignore[no-untyped-def]
    response = await client.get(f"{BASE}/{path}", params=params)
    assert response.status == 200, f"{path}: {response.status} {await response.text()}"
    return await response.json()


async def test_every_endpoint_serves_non_empty_data_on_the_sample(sample_api) -> None:
    papers = await _json(sample_api, "papers/", page_size="100", order_by="citation_count")
    assert papers["count"] >= 30
    paper = papers["results"][0]["route_identifier"]
    assert (await _json(sample_api, "papers/search", q="attention", mode="keyword"))["results"]
    assert (await _json(sample_api, f"papers/{paper}", include_resources="true"))["title"]
    assert (await _json(sample_api, "papers/recent"))["results"]
    assert (await _json(sample_api, "papers/trending", max_age_days="365"))["results"]
    assert (await _json(sample_api, f"papers/{paper}/related"))["results"]
    assert "paper" in await _json(sample_api, f"research/papers/{paper}/lineage")
    assert (await _json(sample_api, "areas/", page_size="500"))["results"]
    assert (await _json(sample_api, "areas/with-tasks/"))["results"]
    assert (await _json(sample_api, "areas/with-task-benchmarks/", min_eval_count="1"))["results"]
    tasks = (await _json(sample_api, "tasks/", page_size="100", ordering="-evaluation_count"))["results"]
    task = tasks[0]["id"]
    assert (await _json(sample_api, f"tasks/{task}"))["evaluation_count"] > 0
    assert (await _json(sample_api, f"tasks/{task}/page"))["benchmarks"]
    assert (await _json(sample_api, f"tasks/{task}/trending-benchmarks", limit="100"))["results"]
    assert (await _json(sample_api, f"tasks/{task}/papers"))["results"]
    methods = (await _json(sample_api, "methods/", page_size="500"))["results"]
    assert (await _json(sample_api, f"methods/{methods[0]['id']}"))["name"]
    conferences = (await _json(sample_api, "conferences/"))["results"]
    assert (await _json(sample_api, f"conferences/{conferences[0]['slug']}"))["name"]
    organizations = (await _json(sample_api, "organizations/"))["results"]
    assert (await _json(sample_api, f"organizations/{organizations[0]['slug']}"))["name"]
    assert (await _json(sample_api, "frameworks/"))["domains"]
    datasets = (await _json(sample_api, "datasets/", page_size="100", ordering="-evaluation_count"))["results"]
    assert (await _json(sample_api, f"datasets/{datasets[0]['id']}/evaluations/"))["results"]
    evaluations = await _json(sample_api, "evaluations/", dataset_id=datasets[0]["id"], max_parameters_exclusive="10")
    assert evaluations["parameter_coverage_total"] > 0


async def test_the_sample_holds_a_long_markdown_readable_in_chunks(sample_api) -> None:
    response = await sample_api.get(f"{BASE}/research/papers/1706.03762/read", params={"offset": 0, "limit": 65536})
    assert response.status == 200
    assert response.headers["x-pwc-content-version"]
