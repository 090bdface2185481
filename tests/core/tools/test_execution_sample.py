"""Every tool through ``execute`` against the self-hosted sample catalog over HTTP (``catalog_url``).

Entity names and paper ids are discovered from the list tools, so the test
does not depend on the sample's exact content; every successful result must
validate against its ``outputSchema`` and no call may end in ``internal_error``.
"""

from __future__ import annotations

import json
from typing import Any

import fastjsonschema
import pytest

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("sample-secret",)))


def run(runtime: Runtime, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
    text = result["content"][0]["text"]
    assert not text.startswith("internal_error"), (name, text)
    if not result.get("isError"):
        schema = {k: v for k, v in get_tool(name).output_schema.items() if k != "$schema"}
        fastjsonschema.compile(schema)(result["structuredContent"])
    return result


def _first(result: dict[str, Any], *keys: str) -> str | None:
    data = result.get("structuredContent", {}).get("data")
    rows = data.get("results") if isinstance(data, dict) else data
    for row in rows or []:
        for key in keys:
            if isinstance(row, dict) and row.get(key) not in (None, ""):
                return str(row[key])
    return None


def test_every_tool_runs_against_the_sample_catalog(runtime: Runtime) -> None:
    search = run(runtime, "search_papers", {"query": "attention", "mode": "keyword", "limit": 5})
    assert not search.get("isError"), search["content"][0]["text"]
    paper = _first(search, "arxiv_id", "id") or "1706.03762"
    for name in ("get_paper_info", "get_paper_evaluations", "read_paper", "get_related_papers",
                 "get_paper_lineage"):
        run(runtime, name, {"paper": paper})
    for name in ("list_papers", "list_recent_papers", "list_trending_papers", "list_organizations",
                 "list_frameworks", "list_conferences"):
        assert not run(runtime, name, {}).get("isError"), name
    pairs = (("list_tasks", "get_task", "task"), ("list_methods", "get_method", "method"),
             ("list_conferences", "get_conference", "conference"),
             ("list_organizations", "get_organization", "organization"),
             ("list_frameworks", "get_framework", "framework"), ("list_benchmarks", "get_benchmark", "benchmark"))
    for lister, getter, argument in pairs:
        listed = run(runtime, lister, {})
        assert not listed.get("isError"), (lister, listed["content"][0]["text"])
        slug = _first(listed, "slug", "name", "id")
        if slug is not None:
            got = run(runtime, getter, {argument: slug})
            assert not got.get("isError"), (getter, got["content"][0]["text"])
