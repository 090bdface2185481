"""The generated tool catalogue: annotations, schemas, caps and the §3.3 argument-mapping vectors."""

from __future__ import annotations

import json
import re

import fastjsonschema
import pytest

from pwc_mcp_core.tools.registry import ANNOTATIONS, get_tool, tool_list_result, tools

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SHORT_DESTS = {"minimum_metrics": "min", "maximum_metrics": "max", "sort_metric": "sort"}


def test_tools_list_is_deterministic_and_complete() -> None:
    first, second = tool_list_result(), tool_list_result()
    assert first == second
    assert len(first["tools"]) == 26
    assert [tool["name"] for tool in first["tools"]][:3] == ["search_papers", "get_paper_info",
                                                             "get_paper_evaluations"]


CITATION_TOOLS = ("cite_papers", "verify_references")


def test_the_citation_tools_grow_tools_list_by_at_most_ten_percent() -> None:
    """Issue 31: cite_papers and verify_references add at most 10% to the bytes of ``tools/list``."""
    described = tool_list_result()["tools"]

    def size(listed: list[dict[str, object]]) -> int:
        return len(json.dumps({"tools": listed}, separators=(",", ":")).encode("utf-8"))

    without = size([tool for tool in described if tool["name"] not in CITATION_TOOLS])
    assert size(described) <= without * 1.10, (size(described), without)


def test_the_citation_tools_say_when_to_use_which() -> None:
    cite, verify = (get_tool(name) for name in CITATION_TOOLS)
    assert cite is not None and verify is not None
    assert "verify_references" in cite.description and "cite_papers" in verify.description
    assert cite.input_schema["properties"]["papers"]["maxItems"] == 25
    assert verify.input_schema["properties"]["references"]["maxItems"] == 25


@pytest.mark.parametrize("tool", [pytest.param(t, id=t.name) for t in tools()])
def test_every_tool_is_annotated_read_only_and_has_both_schemas(tool) -> None:
    described = tool.describe()
    assert re.fullmatch(r"[A-Za-z0-9_./-]{1,64}", described["name"])
    assert {k: v for k, v in described["annotations"].items() if k != "title"} == ANNOTATIONS
    assert described["title"] and len(described["description"]) > 60
    assert described["inputSchema"]["$schema"] == DIALECT
    assert described["inputSchema"]["additionalProperties"] is False
    # The published outputSchema: no $schema (2020-12 is MCP's default), the strict envelope
    # (no unknown top-level key), nested objects without required/additionalProperties: false.
    published = described["outputSchema"]
    assert "$schema" not in published and published["additionalProperties"] is False
    assert published["type"] == "object" and "schema_version" in published["required"]
    assert tool.output_schema["$schema"] == DIALECT
    for schema in (described["inputSchema"], published, tool.output_schema):
        fastjsonschema.compile({k: v for k, v in schema.items() if k != "$schema"})
    limit = described["inputSchema"]["properties"].get("limit")
    if limit is not None:
        assert limit["maximum"] <= 25


def test_search_papers_defaults_to_hybrid_and_caps_limit_at_25() -> None:
    schema = get_tool("search_papers").input_schema
    assert schema["properties"]["mode"]["enum"] == ["hybrid", "keyword", "semantic"]
    assert schema["properties"]["mode"]["default"] == "hybrid"
    assert schema["properties"]["limit"]["maximum"] == 25
    assert schema["required"] == ["query"]


@pytest.mark.parametrize(("tool", "arguments", "options"), [
    pytest.param("search_papers", {"query": "transformer", "mode": "keyword", "limit": 1},
                 {"query": "transformer", "mode": "keyword", "page": 1, "limit": 1, "start_date": None,
                  "end_date": None, "has_official_implementation": False, "include_abstracts": False,
                  "abstract_chars": 300}, id="search"),
    pytest.param("get_paper_evaluations", {"paper": "1706.03762", "limit": 5},
                 {"paper": "1706.03762", "page": 1, "page_size": 5}, id="paper-evaluations"),
    pytest.param("list_tasks", {"area": "Vision", "level": 1},
                 {"search": None, "area": "Vision", "level": 1, "visible_only": False, "group_by_area": False,
                  "order_by": "name", "order_dir": "asc", "page": 1, "page_size": 25}, id="list-tasks"),
    pytest.param("list_benchmarks", {"task": "image-classification"},
                 {"search": None, "task": "image-classification", "include_descendants": False,
                  "min_eval_count": None, "is_open": None, "group_by_area": False, "area": None,
                  "benchmarks_per_task": 3, "order_by": None, "order_dir": "asc", "page": 1, "page_size": 25},
                 id="list-benchmarks-task"),
    pytest.param("get_benchmark", {"benchmark": "imagenet-1k", "limit": 5, "is_open": True, "max_parameters": "4B",
                                   "minimum_metrics": {"Accuracy": 80}, "sort_metric": "Accuracy:desc"},
                 {"name": "imagenet-1k", "page": 1, "limit": 5, "is_open": True, "max_parameters": "4B",
                  "require_metrics": None, "minimum_metrics": {"Accuracy": 80.0}, "maximum_metrics": None,
                  "sort_metric": "Accuracy:desc", "pareto": None}, id="get-benchmark"),
])
def test_arguments_map_to_cli_options_exactly(tool: str, arguments: dict, options: dict) -> None:
    spec = get_tool(tool)
    dests = {param.dest for param in spec.params}
    # docs/tool-contract.md names the metric selectors' dests minimum_metrics/...; the CLI may call them min/max/sort,
    # and a CLI without `benchmark --page` is paged by the MCP layer instead.
    expected = {(SHORT_DESTS.get(key, key) if key not in dests else key): value for key, value in options.items()
                if key != "page" or "page" in dests}
    assert spec.to_options(arguments) == expected


@pytest.mark.parametrize(("tool", "arguments", "subset"), [
    pytest.param("list_tasks", {"group_by_area": True}, {"page_size": None}, id="grouped-tasks"),
    pytest.param("list_benchmarks", {"area": "Vision", "limit": 10}, {"page_size": None, "area": "Vision"},
                 id="area-grouped"),
    pytest.param("list_benchmarks", {"area": "Vision", "search": "HDR", "limit": 10},
                 {"area": None, "page_size": 10}, id="area-with-filters-dropped"),
    pytest.param("list_benchmarks", {"order_by": "trending"}, {"order_by": None}, id="trending-without-task"),
    pytest.param("get_paper_info", {"paper": "x"}, {"include_resources": True, "include_evals": False},
                 id="info-always-fetches-resources"),
    pytest.param("list_papers", {"authors": []}, {"author": None}, id="empty-authors-omitted"),
])
def test_fallback_rules_shape_the_cli_options(tool: str, arguments: dict, subset: dict) -> None:
    options = get_tool(tool).to_options(arguments)
    assert {key: options[key] for key in subset} == subset


def test_unknown_tools_are_none() -> None:
    assert get_tool("nope") is None
    assert get_tool(None) is None  # type: ignore[arg-type]
