"""Parity: the tool schemas and the `pwc` parser must not drift (seed "Public contract").

Every research flag of every research command is a tool parameter (modulo the
documented renames), every parameter is a flag (modulo the documented
MCP-only parameters), and the tools are exactly ``RESEARCH_COMMANDS``.
"""

from __future__ import annotations

import pytest

from pwc.queries import RESEARCH_COMMANDS, query_options
from pwc_mcp_core.tools.registry import tools

SEED_TOOLS = {
    "search_papers": ("search",), "get_paper_info": ("paper", "info"),
    "get_paper_evaluations": ("paper", "evaluations"), "read_paper": ("paper", "read"),
    "list_papers": ("paper", "list"), "list_recent_papers": ("paper", "recent"),
    "list_trending_papers": ("paper", "trending"), "get_related_papers": ("paper", "related"),
    "get_paper_lineage": ("paper", "lineage", "list"), "get_task": ("task",), "list_tasks": ("task", "list"),
    "get_method": ("method",), "list_methods": ("method", "list"), "get_conference": ("conference",),
    "list_conferences": ("conference", "list"), "get_organization": ("organization",),
    "list_organizations": ("organization", "list"), "get_framework": ("framework",),
    "list_frameworks": ("framework", "list"), "get_benchmark": ("benchmark",),
    "list_benchmarks": ("benchmark", "list"),
    "find_in_paper": ("paper", "find"),
    # issue 31: citations and reference checks
    "cite_papers": ("paper", "cite"), "verify_references": ("paper", "verify"),
    # issue 32: state of the art over time
    "get_sota_history": ("benchmark", "history"),
    # issue 32: papers per year
    "get_trends": ("trends",),
}
# Seed README renames (CLI dest → MCP parameter).
RENAMES = {"start_date": "published_after", "end_date": "published_before", "author": "authors",
           "order_dir": "order_direction", "min_eval_count": "minimum_evaluations",
           "include_evals": "include_evaluations", "min": "minimum_metrics", "max": "maximum_metrics",
           "sort": "sort_metric"}
ENTITY = {"get_task": "task", "get_method": "method", "get_conference": "conference",
          "get_organization": "organization", "get_framework": "framework", "get_benchmark": "benchmark",
          "get_sota_history": "benchmark"}
MCP_ONLY = {("read_paper", "cursor"), ("get_paper_info", "repo_limit"), ("get_task", "benchmark_limit")}
TERMINAL_ONLY = {"json", "implementation_coverage", "flat", "chart"}


def _expected_name(tool: str, dest: str, dests: set[str]) -> str:
    if dest == "name" and tool in ENTITY:
        return ENTITY[tool]
    if dest == "page_size" and "limit" not in dests:
        return "limit"
    return RENAMES.get(dest, dest)


def test_the_tools_are_exactly_the_research_commands() -> None:
    generated = {tool.name: tool.command for tool in tools()}
    assert generated == SEED_TOOLS
    assert sorted(generated.values()) == sorted(RESEARCH_COMMANDS)
    assert len(RESEARCH_COMMANDS) == 26


@pytest.mark.parametrize("tool", [pytest.param(name, id=name) for name in SEED_TOOLS])
def test_every_research_flag_is_a_parameter_and_every_parameter_a_flag(tool: str) -> None:
    spec = next(t for t in tools() if t.name == tool)
    dests = set(query_options(spec.command))
    expected = {_expected_name(tool, dest, dests) for dest in dests}
    parameters = set(spec.input_schema["properties"])
    extras = {name for owner, name in MCP_ONLY if owner == tool}
    if tool == "get_benchmark" and "page" not in dests:
        extras.add("page")  # leaderboards paginate in the MCP layer when the CLI has no --page
    assert parameters == expected | extras
    assert not parameters & TERMINAL_ONLY


@pytest.mark.parametrize("tool", [pytest.param(name, id=name) for name in SEED_TOOLS])
def test_every_parameter_maps_back_to_its_cli_destination(tool: str) -> None:
    spec = next(t for t in tools() if t.name == tool)
    dests = set(query_options(spec.command))
    mapped = {param.dest for param in spec.params if param.dest is not None}
    assert mapped == dests
    for param in spec.params:
        if param.dest is not None:
            assert param.name == _expected_name(tool, param.dest, dests)
