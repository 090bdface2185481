"""Every tool through ``execute`` against a real HTTP catalog stub (docs/tool-contract.md §3; task brief).

Checks the envelope (``schema_version``, ``data``, projections), that
``structuredContent`` validates against the tool's ``outputSchema``, the text
fallbacks, and the modern-era fields.
"""

from __future__ import annotations

import json
from typing import Any

import fastjsonschema
import pytest

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool, tool_list_result, tools
from tests.core.tools.tools_stub import StubCatalog, runtime, stub  # noqa: F401 - fixtures

ARGUMENTS: dict[str, dict[str, Any]] = {
    "search_papers": {"query": "transformer", "mode": "keyword", "limit": 1},
    "get_paper_info": {"paper": "1706.03762", "include_evaluations": True},
    "get_paper_evaluations": {"paper": "1706.03762", "limit": 5},
    "read_paper": {"paper": "1706.03762"},
    "list_papers": {"limit": 5},
    "list_recent_papers": {},
    "list_trending_papers": {"max_age_days": 30},
    "get_related_papers": {"paper": "1706.03762"},
    "get_paper_lineage": {"paper": "1706.03762"},
    "get_task": {"task": "question-answering"},
    "list_tasks": {"area": "Natural Language Processing"},
    "get_method": {"method": "Transformer"},
    "list_methods": {},
    "get_conference": {"conference": "neurips-2017"},
    "list_conferences": {"year": 2017},
    "get_organization": {"organization": "google"},
    "list_organizations": {},
    "get_framework": {"framework": "pytorch"},
    "list_frameworks": {},
    "get_benchmark": {"benchmark": "squad1-1", "limit": 5},
    "list_benchmarks": {"task": "question-answering"},
    "find_in_paper": {"paper": "1706.03762", "query": "attention"},
    "cite_papers": {"papers": ["1706.03762"]},
    "verify_references": {"references": ["arXiv:1706.03762"]},
    "get_sota_history": {"benchmark": "squad1-1"},
    "get_trends": {"method": "Transformer"},
}




def call_tool(runtime: Runtime, name: str, arguments: Any, *, era: str = "legacy") -> dict[str, Any]:
    body = execute(Call("tools/call", name, arguments, era=era), runtime)
    assert isinstance(body, bytes)
    return json.loads(body)


def _validator(name: str):
    schema = {k: v for k, v in get_tool(name).output_schema.items() if k != "$schema"}
    return fastjsonschema.compile(schema)


# The tools whose structured content carries the CLI payload as ``data`` (docs/tool-contract.md §3.1).
DATA_TOOLS = {"list_tasks", "list_methods", "get_conference", "list_conferences", "get_organization",
              "list_organizations", "get_framework", "list_frameworks", "cite_papers", "verify_references",
              "get_sota_history"}


@pytest.mark.parametrize("name", [pytest.param(tool.name, id=tool.name) for tool in tools()])
def test_every_tool_returns_structured_content_matching_its_output_schema(runtime: Runtime, name: str) -> None:
    result = call_tool(runtime, name, ARGUMENTS[name])["result"]
    assert not result.get("isError"), result["content"][0]["text"]
    content = result["structuredContent"]
    _validator(name)(content)
    # What tools/list publishes, and what SDK clients check the result against.
    fastjsonschema.compile(next(t for t in tool_list_result()["tools"] if t["name"] == name)["outputSchema"])(content)
    assert content["schema_version"] == "v1"
    if name in DATA_TOOLS:
        assert content["data"] is not None  # the CLI payload is the result, or holds what the projections leave out
    else:  # the typed projections are the structured view; the CLI payload stays with `pwc --json`
        assert "data" not in content
    text = result["content"][0]
    assert text["type"] == "text" and text["text"]
    if name not in ("read_paper", "find_in_paper"):  # the text renders the projections' facts, more compactly
        projections = {k: v for k, v in content.items() if k not in ("schema_version", "data")} or content["data"]
        assert len(text["text"].encode()) < len(json.dumps(projections, separators=(",", ":")).encode())


def test_search_returns_summaries_next_page_and_the_payload(runtime: Runtime) -> None:
    result = call_tool(runtime, "search_papers", ARGUMENTS["search_papers"])["result"]
    content = result["structuredContent"]
    assert content["next_page"] == 2
    assert content["items"][0]["title"] == "Attention Is All You Need"
    assert content["total"] == 3
    text = result["content"][0]["text"]
    assert text.startswith("1 of 3 papers.\nNext page: 2 (pass page=2).\n") and "Attention Is All You Need" in text


def test_paper_info_is_compact_official_first_with_evaluations(runtime: Runtime, stub: StubCatalog) -> None:
    stub.requests.clear()
    content = call_tool(runtime, "get_paper_info", ARGUMENTS["get_paper_info"])["result"]["structuredContent"]
    assert content["paper"]["repositories"] == [
        {"url": "https://github.com/tensorflow/tensor2tensor", "is_official": True, "framework": None}]
    assert content["evaluation_count"] == len(stub.rows)
    info_calls = [q for path, q in stub.requests if path == "papers/1706.03762" and q]
    assert info_calls and all(q.get("include_resources") == "true" for q in info_calls)


def test_leaderboard_rows_keep_scopes_and_directions(runtime: Runtime) -> None:
    result = call_tool(runtime, "get_benchmark", ARGUMENTS["get_benchmark"])["result"]
    content = result["structuredContent"]
    assert len(content["evaluations"]) == 5
    assert len(content["evaluations"][0]["rank_scopes"]) == 2
    assert content["metric_directions"] == {"EM": "higher", "F1": "higher"}
    assert content["next_page"] == 2 and "metric_note" not in content
    assert result["content"][0]["text"].startswith("# SQuAD1.1 (Stanford Question Answering Dataset)\n")
    second = call_tool(runtime, "get_benchmark", {**ARGUMENTS["get_benchmark"], "page": 2})["result"]
    ids = {row["id"] for row in second["structuredContent"]["evaluations"]}
    assert len(ids) == 5 and ids.isdisjoint({row["id"] for row in content["evaluations"]})


def test_a_metric_the_leaderboard_lacks_returns_it_unfiltered_with_a_metric_note(runtime: Runtime) -> None:
    result = call_tool(runtime, "get_benchmark", {"benchmark": "squad1-1", "limit": 3,
                                                   "minimum_metrics": {"Latency": 5}})["result"]
    assert not result.get("isError"), result["content"][0]["text"]
    content = result["structuredContent"]
    _validator("get_benchmark")(content)
    assert len(content["evaluations"]) == 3
    assert "latency" in content["metric_note"].lower() and "EM" in content["metric_note"]


@pytest.mark.parametrize("selector", [{"sort_metric": "BLEU"}, {"sort_metric": "BLEU:asc"},
                                      {"require_metrics": ["BLEU"]}, {"pareto": ["BLEU:higher", "EM:higher"]}])
def test_an_unreported_sort_metric_returns_the_default_leaderboard_best_first(runtime: Runtime,
                                                                            selector: dict[str, Any]) -> None:
    """The seed's "unfiltered leaderboard" is the one the same call without the selector gives:
    the same rows in the same (best-first) order, on every page, plus the note naming the metric
    as the caller spelled it."""
    default = [call_tool(runtime, "get_benchmark", {"benchmark": "squad1-1", "limit": 3, "page": page})
               ["result"]["structuredContent"] for page in (1, 2)]
    noted = [call_tool(runtime, "get_benchmark", {"benchmark": "squad1-1", "limit": 3, "page": page, **selector})
             ["result"]["structuredContent"] for page in (1, 2)]
    for plain, fallback in zip(default, noted, strict=True):
        _validator("get_benchmark")(fallback)
        assert [row["id"] for row in fallback["evaluations"]] == [row["id"] for row in plain["evaluations"]]
        assert "does not report BLEU" in fallback["metric_note"] and "metric_note" not in plain
        assert fallback.get("order") == plain.get("order")


def test_metric_filters_select_rows(runtime: Runtime) -> None:
    content = call_tool(runtime, "get_benchmark", {"benchmark": "squad1-1", "limit": 25,
                                                    "minimum_metrics": {"F1": 94.5}})["result"]["structuredContent"]
    assert content["evaluations"] and all(row["metrics"]["F1"] >= 94.5 for row in content["evaluations"])
    assert content["matched_count"] == len(content["evaluations"])


def test_list_benchmarks_falls_back_and_explains(runtime: Runtime) -> None:
    result = call_tool(runtime, "list_benchmarks", {"area": "Natural Language Processing", "limit": 10})["result"]
    assert result["content"][0]["text"].startswith("1 benchmark.")
    result = call_tool(runtime, "list_benchmarks", {"order_by": "trending"})["result"]
    assert result["structuredContent"]["notes"] == ["order_by=trending needs task; ordered by name instead"]
    assert "\nNote: order_by=trending needs task; ordered by name instead\n" in result["content"][0]["text"]


def test_a_paper_outside_the_catalog_returns_public_metadata(runtime: Runtime) -> None:
    result = call_tool(runtime, "get_paper_info", {"paper": "2401.99999"})["result"]
    content = result["structuredContent"]
    _validator("get_paper_info")(content)
    assert content["in_catalog"] is False
    assert content["available_at"] == [{"label": "arXiv", "url": "https://arxiv.org/abs/2401.99999"}]
    related = call_tool(runtime, "get_related_papers", {"paper": "2401.99999"})["result"]["structuredContent"]
    _validator("get_related_papers")(related)
    assert related["in_catalog"] is False and related["items"][0]["title"] == "Attention Is All You Need"
    lineage = call_tool(runtime, "get_paper_lineage", {"paper": "2401.99999"})["result"]
    assert lineage["isError"] and lineage["content"][0]["text"].startswith("not_found: ")


def test_catalog_failures_become_prefixed_is_error_results(runtime: Runtime) -> None:
    result = call_tool(runtime, "get_task", {"task": "no-such-task"})["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("not_found: Task not found: no-such-task")
    assert "structuredContent" not in result


def test_a_blank_query_is_an_invalid_argument_named_as_the_tool_names_it(runtime: Runtime, stub: StubCatalog) -> None:
    before = len(stub.requests)
    result = call_tool(runtime, "search_papers", {"query": "   "})["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid_argument: the query must not be empty")
    assert len(stub.requests) == before  # refused before any catalog request


def test_unknown_tools_are_invalid_params_errors(runtime: Runtime) -> None:
    body = call_tool(runtime, "no_such_tool", {})
    assert body["error"]["code"] == -32602 and "no_such_tool" in body["error"]["message"]


def test_modern_results_carry_result_type_and_server_info(runtime: Runtime) -> None:
    result = call_tool(runtime, "list_conferences", {}, era="modern")["result"]
    assert result["resultType"] == "complete"
    assert "io.modelcontextprotocol/serverInfo" in result["_meta"]
    failed = call_tool(runtime, "get_task", {"task": 5}, era="modern")["result"]
    assert failed["isError"] and failed["resultType"] == "complete"


def test_results_over_the_response_bound_drop_data_then_fail_cleanly(stub: StubCatalog) -> None:
    def bounded(max_body_bytes: int) -> Runtime:
        settings = CoreSettings(api_url=stub.base_url, cursor_keys=("k",), max_body_bytes=max_body_bytes)
        return Runtime.build(settings)

    # One byte short of the whole answer: only without its CLI payload does it fit.
    area = {"area": "Natural Language Processing"}
    whole = execute(Call("tools/call", "list_tasks", area), bounded(1 << 20))
    result = call_tool(bounded(4096 + len(whole) - 1), "list_tasks", area)["result"]
    content = result["structuredContent"]
    _validator("list_tasks")(content)
    assert content["data"] is None and content["data_note"].startswith("data omitted")
    failed = call_tool(bounded(4096 + 200), "get_paper_info", {"paper": "1706.03762"})["result"]
    assert failed["isError"] and failed["content"][0]["text"].startswith("upstream_error: the result is too large")


@pytest.mark.parametrize(("tool", "arguments"), [("list_tasks", {"area": "Natural Language Processing"}),
                                                 ("list_methods", {})])
def test_task_and_method_lists_name_the_area(runtime: Runtime, tool: str, arguments: dict[str, Any]) -> None:
    """The text names each row's area (it showed only the number), from the CLI's ``area_name``."""
    result = call_tool(runtime, tool, arguments)["result"]
    rows = result["structuredContent"]["data"]["results"]
    named = [row for row in rows if row.get("area_name")]
    assert named, rows
    text = result["content"][0]["text"]
    header = next(line for line in text.splitlines() if line.startswith("id|"))
    assert "|area|" in header and "area id" not in header
    for row in named:
        assert any(f"|{row['area_name']}|" in line and row["name"] in line for line in text.splitlines())
