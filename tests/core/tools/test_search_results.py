"""``search_papers`` against the sample catalog over HTTP: match strength, named entities, cut abstracts,
and errors in the tool's words (issue 30 items 2, 3, 7)."""

from __future__ import annotations

import json
from typing import Any

import fastjsonschema
import pytest

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool, tool_list_result

SCHEMA = fastjsonschema.compile({k: v for k, v in get_tool("search_papers").output_schema.items() if k != "$schema"})


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("sample-secret",)))


def search(runtime: Runtime, **arguments: Any) -> tuple[dict[str, Any], str]:
    result = json.loads(execute(Call("tools/call", "search_papers", arguments), runtime))["result"]
    text = result["content"][0]["text"]
    assert not result.get("isError"), text
    SCHEMA(result["structuredContent"])
    return result["structuredContent"], text


def test_nothing_relevant_is_said_in_both_views(runtime: Runtime) -> None:
    content, text = search(runtime, query="zzqqxx nonexistent topic")
    assert content["items"] and content["strong_count"] == 0
    assert {item["match"] for item in content["items"]} == {"weak"}
    assert content["note"].startswith("No strong match")
    assert text.splitlines()[0] == f"{len(content['items'])} papers. {content['note']}"


def test_a_good_query_has_no_note_and_marks_only_the_weak_rows(runtime: Runtime) -> None:
    content, text = search(runtime, query="attention", mode="keyword")
    assert content["strong_count"] > 0 and "note" not in content
    assert "No strong match" not in text
    assert all(item["match"] == "strong" for item in content["items"])
    assert "|match" not in text  # no weak row: no column


def test_the_named_task_and_its_filter_are_in_both_views(runtime: Runtime) -> None:
    content, text = search(runtime, query="image classification", limit=3)
    assert {"type": "task", "name": "Image Classification", "slug": "image-classification",
            "filter": {"task": "image-classification"}} in content["matched_entities"]
    assert ("Matched task: Image Classification — narrow with list_papers task=image-classification."
            in text.splitlines())


def test_abstracts_are_cut_to_the_budget_and_the_header_says_so(runtime: Runtime) -> None:
    content, text = search(runtime, query="image classification", limit=5, include_abstracts=True,
                           abstract_chars=80)
    abstracts = [item["abstract"] for item in content["items"]]
    assert abstracts and all(a is None or len(a) <= 80 for a in abstracts)
    cut = sum(1 for a in abstracts if a and a.endswith(" …"))
    assert content["abstracts_cut"] == cut > 0
    assert f"Abstracts cut to 80 characters, at a sentence end where one fits: {cut} of {len(abstracts)}" in text
    assert text.splitlines()[-len(abstracts) - 1] == "Abstracts:"
    plain, plain_text = search(runtime, query="image classification", limit=5)
    assert "abstract" not in plain["items"][0] and "Abstracts" not in plain_text


def test_a_query_without_letters_is_refused_in_the_tools_words(runtime: Runtime) -> None:
    result = json.loads(execute(Call("tools/call", "search_papers", {"query": "😀🚀"}), runtime))["result"]
    assert result["isError"]
    assert result["content"][0]["text"] == "invalid_argument: query has no letters or digits to search for"


def test_search_papers_stays_lean_in_tools_list() -> None:
    described = next(t for t in tool_list_result()["tools"] if t["name"] == "search_papers")
    # Issue 30 added match, matched_entities, strong_count, note, abstracts: about 900 bytes.
    assert len(json.dumps(described, separators=(",", ":")).encode()) <= 3_500
