"""Argument validation: failures are ``isError`` results naming the field, and make no catalog call;
``execute`` never raises (brief hypothesis fuzz)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import tools
from tests.core.tools.tools_stub import StubCatalog, runtime, stub  # noqa: F401 - fixtures

PARETO_FORM = '; pareto takes 2-10 objectives, each METRIC:higher or METRIC:lower, e.g. ["Top 1 Accuracy:higher", "Params:lower"]'


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    pytest.param("search_papers", {}, "invalid_argument: missing required parameter(s): query", id="missing"),
    pytest.param("search_papers", {"query": "x", "limit": 26}, "invalid_argument: limit must be smaller than or "
                 "equal to 25", id="limit-over-cap"),
    pytest.param("search_papers", {"query": "x", "limit": "5"}, "invalid_argument: limit must be integer",
                 id="wrong-type"),
    pytest.param("search_papers", {"query": "x", "limit": True}, "invalid_argument: limit must be integer",
                 id="bool-is-not-int"),
    pytest.param("search_papers", {"query": "x", "mode": "fuzzy"},
                 "invalid_argument: mode must be one of: hybrid, keyword, semantic", id="enum"),
    pytest.param("search_papers", {"query": "x" * 10_000},
                 "invalid_argument: query must be shorter than or equal to 500 characters", id="huge-string"),
    pytest.param("search_papers", {"query": ""}, "invalid_argument: query must be longer than or equal to 1 "
                 "characters", id="empty-query"),
    pytest.param("search_papers", {"query": "x", "published_after": "2026-13-01"},
                 "invalid_argument: publication dates must use YYYY-MM-DD", id="bad-date"),
    pytest.param("list_papers", {"published_after": "2024-02-01", "published_before": "2024-01-01"},
                 "invalid_argument: published_after must be on or before published_before", id="reversed-dates"),
    pytest.param("list_papers", {"authors": ["a"] * 11}, "invalid_argument: authors must contain less than or "
                 "equal to 10 items", id="too-many-authors"),
    pytest.param("get_benchmark", {"benchmark": "b", "pareto": ["a:higher"]},
                 "invalid_argument: pareto must contain at least 2 items" + PARETO_FORM, id="pareto-one"),
    pytest.param("get_benchmark", {"benchmark": "b", "pareto": ["a:up", "b:lower"]},
                 "invalid_argument: pareto.0 has an invalid format" + PARETO_FORM, id="pareto-dir"),
    pytest.param("get_benchmark", {"benchmark": "b", "minimum_metrics": {"F1": "high"}},
                 "invalid_argument: minimum_metrics.F1 must be number", id="threshold-type"),
    pytest.param("get_paper_info", {"paper": "1706.03762", "repo_limit": 0},
                 "invalid_argument: repo_limit must be bigger than or equal to 1", id="repo-limit"),
])
def test_invalid_arguments_are_is_error_results_without_catalog_calls(
        runtime: Runtime, stub: StubCatalog, name: str, arguments: dict, expected: str) -> None:
    stub.requests.clear()
    body = json.loads(execute(Call("tools/call", name, arguments), runtime))
    assert body["result"]["isError"] is True
    assert body["result"]["content"][0]["text"] == expected
    assert stub.requests == []


def test_unknown_parameters_are_named_with_the_allowed_ones(runtime: Runtime, stub: StubCatalog) -> None:
    stub.requests.clear()
    body = json.loads(execute(Call("tools/call", "list_recent_papers", {"limt": 3, "x" * 300: 1}), runtime))
    text = body["result"]["content"][0]["text"]
    assert text.startswith("invalid_argument: unknown parameter(s): limt, ")
    assert "allowed: limit" in text and "x" * 65 not in text
    assert stub.requests == []


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
                     | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, Any]:
    tool = draw(st.sampled_from(tools()))
    names = list(tool.input_schema["properties"]) + ["unexpected"]
    arguments = draw(st.dictionaries(st.sampled_from(names), _JSON, max_size=4))
    return tool.name, draw(st.one_of(st.just(arguments), _JSON))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=tool_calls(), era=st.sampled_from(["legacy", "modern"]))
def test_execute_never_raises_on_random_arguments(runtime: Runtime, call: tuple[str, Any], era: str) -> None:
    name, arguments = call
    body = json.loads(execute(Call("tools/call", name, arguments, era=era), runtime))
    assert set(body) <= {"result", "error"} and len(body) == 1
    if "result" in body:
        assert body["result"]["content"][0]["type"] == "text"
        assert "internal_error" not in body["result"]["content"][0]["text"]
