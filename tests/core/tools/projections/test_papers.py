"""Typed projections of CLI payloads (docs/tool-contract.md §3.2)."""

from __future__ import annotations

import pytest

from pwc_mcp_core.tools.projections.entities import (
    benchmark_items,
    benchmark_summary,
    method_detail,
    task_detail,
)
from pwc_mcp_core.tools.projections.papers import (
    lineage_result,
    paper_detail,
    paper_items,
    paper_summary,
)
from pwc_mcp_core.tools.projections.results import search_page
from tests.core.tools.tools_stub import BENCHMARK, METHOD, PAPER


def test_paper_summaries_fall_back_to_documented_defaults() -> None:
    summary = paper_summary({"id": 5, "date_published": "2020-01-01", "source_url": "https://x",
                             "has_official_implementation": "yes"})
    assert summary == {"id": "5", "arxiv_id": None, "title": "Untitled paper", "authors": [],
                       "published": "2020-01-01", "citation_count": None, "url": "https://x",
                       "has_official_implementation": False, "code_repository_count": 0}


@pytest.mark.parametrize("payload", [
    pytest.param([{"id": "a"}, "junk"], id="bare-list"),
    pytest.param({"results": [{"id": "a"}]}, id="results"),
    pytest.param({"items": [{"id": "a"}]}, id="items"),
])
def test_paper_pages_accept_bare_lists_and_envelopes(payload: object) -> None:
    assert [item["id"] for item in paper_items(payload)] == ["a"]


def test_paper_detail_is_compact_and_official_first() -> None:
    compact = paper_detail(PAPER, include_resources=False, repo_limit=5)
    assert compact["repositories"] == [{"url": "https://github.com/tensorflow/tensor2tensor", "is_official": True,
                                      "framework": None}]
    assert compact["project_pages"] == [] and compact["hf_models"] == []
    full = paper_detail(PAPER, include_resources=True, repo_limit=2)
    assert [repo["is_official"] for repo in full["repositories"]] == [True, False]
    assert full["project_pages"] == ["https://example.org/attention"]
    assert compact["tasks"] == [{"id": "1", "name": "Machine Translation", "slug": "machine-translation"}]


def test_lineage_ids_are_strings_and_a_missing_paper_is_an_error() -> None:
    result = lineage_result({"paper": {"id": 900, "arxiv_id": "1706.03762", "title": "T"}, "predecessors": [],
                             "successors": [{"id": 1, "reference": "r", "title": "S"}]})
    assert result["paper"] == {"id": "900", "reference": "1706.03762", "title": "T"}
    assert result["coverage"] == "explicit_catalog_links_only"
    with pytest.raises(TypeError):
        lineage_result({"predecessors": []})


def test_benchmark_summaries_fall_back_through_paper_counts() -> None:
    assert benchmark_summary({"slug": "s", "all_time_paper_count": 4})["paper_count"] == 4
    assert benchmark_summary({"evaluation_count": 2}) | {} == {**benchmark_summary({}), "paper_count": None}
    assert benchmark_summary({"evaluation_count": 2})["name"] == "Unknown benchmark"
    grouped = {"results": [{"name": "A", "tasks": [{"benchmarks": [BENCHMARK, BENCHMARK]}]}]}
    assert len(benchmark_items(grouped, grouped=True)) == 1  # one benchmark, listed once


def test_task_and_method_details_project_their_payloads() -> None:
    task = task_detail({"task": {"id": 1, "name": "T", "slug": "t"}, "paper_count": 7, "area": {"id": 2, "name": "A"},
                        "benchmarks": [BENCHMARK] * 12}, benchmark_limit=10)
    assert task["paper_count"] == 7 and len(task["benchmarks"]) == 10 and task["area"] == {"id": "2", "name": "A"}
    method = method_detail({"method": METHOD, "area": {"id": 2, "name": "NLP"}})
    assert method["source_url"] == "https://paperswithcode.co/paper/1706.03762" and method["area"] == "NLP"


@pytest.mark.parametrize(("capped", "head"), [(True, "1 of 2000+ papers."), (False, "1 of 2000 papers.")])
def test_a_capped_search_count_is_shown_as_a_lower_bound(capped: bool, head: str) -> None:
    """The catalog stops counting keyword matches at 2,000 (`count_capped`): an agent must not read
    that as the exact number."""
    payload = {"count": 2000, "count_capped": capped, "strong_count": 1, "next_page": 2,
               "results": [{**PAPER, "match": "strong"}]}
    structured, text = search_page(payload, {"page": 1, "limit": 1}, [])
    assert structured.get("total_capped", False) is capped and structured["total"] == 2000
    assert text.startswith(head)
