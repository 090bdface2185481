"""The catalog API over HTTP: every read endpoint, pagination, applied_filters and author errors."""

from __future__ import annotations

from typing import Any

import pytest

BASE = "/api/v1"

# (path, params, a check on the JSON body)
ENDPOINTS = [
    pytest.param("papers/search", {"q": "attention", "mode": "keyword"},
                 lambda b: b["results"][0]["arxiv_id"] == "1706.03762", id="1-search"),
    pytest.param("papers/1706.03762", {"include_resources": "true"},
                 lambda b: b["repositories"][0]["is_official"] and b["conference_name"] == "NeurIPS 2017"
                 and b["successor_papers"][0]["route_identifier"] == "1810.04805", id="2-paper"),
    pytest.param("evaluations/", {"paper_id": "1", "ordering": "-benchmark_popularity"},
                 lambda b: b["results"][0]["task_name"] == "Machine Translation"
                 and b["results"][0]["paper_arxiv_id"] == "1706.03762", id="3-evaluations"),
    pytest.param("papers/", {"order_by": "citation_count"},
                 lambda b: b["results"][0]["id"] == "3" and b["applied_filters"]["latest_only"] == "true", id="5-list"),
    pytest.param("papers/recent", {"limit": "2"}, lambda b: [r["id"] for r in b["results"]] == ["7", "6"],
                 id="6-recent"),
    pytest.param("papers/trending", {"limit": "5", "max_age_days": "30"},
                 lambda b: b["results"][0]["id"] == "8" and b["results"][0]["trend_score"] > 0, id="7-trending"),
    pytest.param("papers/1706.03762/related", {"limit": "4"}, lambda b: b["results"][0]["id"] == "2",
                 id="8-related"),
    pytest.param("research/papers/1810.04805/lineage", None,
                 lambda b: b["predecessors"][0]["reference"] == "1706.03762" and b["successors"] == [],
                 id="9-lineage"),
    pytest.param("areas/", {"page": "1", "page_size": "500", "ordering": "name"},
                 lambda b: [a["name"] for a in b["results"]] == ["Computer Vision", "Natural Language Processing"],
                 id="10-areas"),
    pytest.param("areas/with-tasks/", None,
                 lambda b: "hidden-task" not in str(b) and b["results"][0]["tasks"][0]["paper_count"] == 0,
                 id="11-areas-with-tasks"),
    pytest.param("areas/with-task-benchmarks/", {"benchmarks_per_task": "3", "min_eval_count": "1"},
                 lambda b: b["results"][0]["tasks"][0]["benchmarks"][0]["slug"] == "imagenet",
                 id="12-areas-with-task-benchmarks"),
    pytest.param("tasks/", {"q": "image", "area_id": "1", "visible_only": "false", "ordering": "-paper_count"},
                 lambda b: b["results"][0]["slug"] == "image-classification" and b["count"] == 2, id="13-tasks"),
    pytest.param("tasks/10", None, lambda b: (b["paper_count"], b["benchmark_count"], b["evaluation_count"]) == (1, 1, 1),
                 id="14-task"),
    pytest.param("tasks/11/page", None,
                 lambda b: b["parents"][0]["slug"] == "image-classification" and b["task"]["level"] == 1,
                 id="15-task-page"),
    pytest.param("tasks/machine-translation/trending-benchmarks", {"limit": "100", "min_recent_papers": "0"},
                 lambda b: b["results"][0]["best_model_name"] == "Transformer (big)", id="16-trending-benchmarks"),
    pytest.param("tasks/20/papers", {"order_by": "trending", "order_dir": "desc", "include_resources": "true"},
                 lambda b: all("methods" in r for r in b["results"]) and b["count"] == 3, id="17-task-papers"),
    pytest.param("methods/", {"q": "trans", "page_size": "500"},
                 lambda b: b["results"][0]["paper_count"] == 3, id="18-methods"),
    pytest.param("methods/1", None, lambda b: b["source_url"] == "/paper/1706.03762", id="19-method"),
    pytest.param("conferences/", None, lambda b: b["results"][0]["slug"] == "neurips-2017", id="20-conferences"),
    pytest.param("conferences/neurips-2017", None, lambda b: b["tier"] == "a*", id="21-conference"),
    pytest.param("organizations/", {"featured_only": "true"}, lambda b: [o["slug"] for o in b["results"]] == ["google"],
                 id="22-organizations"),
    pytest.param("organizations/google", None, lambda b: b["first_paper_year"] == 2017, id="23-organization"),
    pytest.param("frameworks/", None,
                 lambda b: b["domains"][0]["categories"][0]["frameworks"][0]["platforms"] == ["linux", "apple"],
                 id="24-frameworks"),
    pytest.param("datasets/", {"q": "imagenet", "page": "1", "page_size": "100"},
                 lambda b: b["results"][0]["id"] == "101" and b["results"][0]["paper_count"] == 1, id="25-datasets"),
    pytest.param("datasets/100/evaluations/", {"ordering": "best_rank", "page_size": "100"},
                 lambda b: [r["best_rank"] for r in b["results"]] == [1, 2]
                 and b["results"][1]["paper_title"] == "Convolutional Sequence to Sequence Learning",
                 id="26-dataset-evaluations"),
]


@pytest.mark.parametrize(("path", "params", "check"), ENDPOINTS)
async def test_every_read_endpoint_answers_json_in_the_upstream_shape(api, path: str, params: Any, check) -> None:
    response = await api.get(f"{BASE}/{path}", params=params)
    assert response.status == 200, await response.text()
    assert response.content_type == "application/json"
    body = await response.json()
    assert check(body)


@pytest.mark.parametrize("path", [
    "papers", "papers/", "tasks", "tasks/", "datasets/100/evaluations", "datasets/100/evaluations/",
    "areas/with-tasks", "evaluations", "papers/search/?q=x",
])
async def test_list_paths_answer_with_and_without_the_trailing_slash(api, path: str) -> None:
    response = await api.get(f"{BASE}/{path}")
    assert response.status == 200


@pytest.mark.parametrize("ref", [
    pytest.param("1", id="numeric"), pytest.param("1706.03762", id="arxiv"),
    pytest.param("1706.03762v7", id="arxiv-version"), pytest.param("attention-is-all-you-need", id="slug"),
])
async def test_paper_references_resolve_by_id_arxiv_id_or_slug(api, ref: str) -> None:
    body = await (await api.get(f"{BASE}/papers/{ref}")).json()
    assert body["id"] == "1"
    assert "repositories" not in body  # resources only when asked


async def test_a_percent_encoded_legacy_arxiv_id_resolves(api) -> None:
    for path in ("papers/math.GT%2F0309136", "research/papers/math.GT%2F0309136/lineage"):
        response = await api.get(f"{BASE}/{path}")
        assert response.status == 200
    body = await (await api.get(f"{BASE}/papers/math.GT%2F0309136")).json()
    assert body["route_identifier"] == "math.GT/0309136"


async def test_pagination_reports_next_and_previous_pages(api) -> None:
    first = await (await api.get(f"{BASE}/papers/", params={"page_size": "3", "latest_only": "false"})).json()
    assert (first["count"], first["next_page"], first["previous_page"]) == (9, 2, None)
    last = await (await api.get(f"{BASE}/papers/", params={"page_size": "3", "page": "3",
                                                        "latest_only": "false"})).json()
    assert (last["next_page"], last["previous_page"], len(last["results"])) == (None, 2, 3)
    ids = {r["id"] for r in first["results"]} | {r["id"] for r in last["results"]}
    assert len(ids) == 6


async def test_paper_list_echoes_every_applied_filter(api) -> None:
    params = [("task", "Machine Translation"), ("method", "transformer"), ("conference", "NeurIPS 2017"),
              ("organization", "Google"), ("start_date", "2017-01-01"), ("end_date", "2017-12-31"),
              ("has_official_implementation", "true"), ("author", "000001"), ("author", "Noam Shazeer")]
    body = await (await api.get(f"{BASE}/papers/", params=params)).json()
    assert [r["id"] for r in body["results"]] == ["1"]
    applied = body["applied_filters"]
    assert applied["task"] == "Machine Translation" and applied["conference"] == "NeurIPS 2017"
    assert applied["start_date"] == "2017-01-01" and applied["has_official_implementation"] == "true"
    assert applied["authors"] == [{"id": "1", "name": "Ashish Vaswani", "hf_username": None},
                                  {"id": "2", "name": "Noam Shazeer", "hf_username": None}]


async def test_author_filter_accepts_an_hf_username(api) -> None:
    body = await (await api.get(f"{BASE}/papers/", params={"author": "@YilunDu"})).json()
    assert body["applied_filters"]["authors"][0]["id"] == "26405"
    assert [r["id"] for r in body["results"]] == ["2"]


@pytest.mark.parametrize(("params", "status", "fragment"), [
    pytest.param({"author": "Nobody Here"}, 404, "Author not found", id="unknown"),
    pytest.param({"author": "  "}, 422, "author reference", id="blank"),
    pytest.param([("author", str(i)) for i in range(11)], 422, "at most 10", id="too-many"),
    pytest.param({"task": "No Such Task"}, 404, "Task not found", id="unknown-task"),
])
async def test_paper_list_filter_errors_are_json_details(api, params: Any, status: int, fragment: str) -> None:
    response = await api.get(f"{BASE}/papers/", params=params)
    assert response.status == status
    assert fragment in (await response.json())["detail"]


async def test_an_ambiguous_author_gets_409_with_candidates(api) -> None:
    response = await api.get(f"{BASE}/papers/", params={"author": "Alex Kim"})
    assert response.status == 409
    detail = (await response.json())["detail"]
    assert detail["code"] == "ambiguous_author" and detail["reference"] == "Alex Kim"
    assert detail["candidates"] == [{"id": "41", "name": "Alex Kim", "hf_username": "alex-one"},
                                    {"id": "72", "name": "Alex Kim", "hf_username": None}]


async def test_evaluations_parameter_mode_reports_coverage_and_filters(api) -> None:
    params = {"dataset_id": "100", "ordering": "best_rank", "max_parameters_exclusive": "300000000"}
    body = await (await api.get(f"{BASE}/evaluations/", params=params)).json()
    assert (body["parameter_coverage_known"], body["parameter_coverage_total"]) == (1, 2)
    assert [r["model_name"] for r in body["results"]] == ["Transformer (big)"]
    body = await (await api.get(f"{BASE}/evaluations/", params={**params, "max_parameters_exclusive": "2"})).json()
    assert body["results"] == [] and body["parameter_coverage_total"] == 2


async def test_is_open_filters_evaluation_rows(api) -> None:
    body = await (await api.get(f"{BASE}/datasets/101/evaluations/", params={"is_open": "false"})).json()
    assert body["count"] == 2 and all(r["is_open"] is False for r in body["results"])
    body = await (await api.get(f"{BASE}/datasets/100/evaluations/", params={"is_open": "true"})).json()
    assert [r["is_open"] for r in body["results"]] == [True]


async def test_trending_honours_max_age_and_min_velocity_relative_to_the_newest_paper(api) -> None:
    body = await (await api.get(f"{BASE}/papers/trending", params={"max_age_days": "1"})).json()
    assert {r["id"] for r in body["results"]} == {"7", "6"}  # newest date is 2025-01-02
    body = await (await api.get(f"{BASE}/papers/trending", params={"max_age_days": "365", "min_velocity": "10"})).json()
    assert [r["id"] for r in body["results"]] == ["8"]
