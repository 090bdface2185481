"""cite_papers and verify_references through ``execute`` (the code a worker runs) on the sample catalog."""

from __future__ import annotations

import json
from typing import Any

import fastjsonschema
import pytest

from pwc_mcp_core.protocol.eras import is_semantic_search
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.registry import get_tool


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("sample-secret",)))


def run(runtime: Runtime, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
    assert not result.get("isError"), result["content"][0]["text"]
    tool = get_tool(name)
    assert tool is not None
    fastjsonschema.compile({k: v for k, v in tool.output_schema.items() if k != "$schema"})(
        result["structuredContent"])
    return result


def test_cite_papers_text_is_the_citation_and_items_keep_their_order(runtime: Runtime) -> None:
    result = run(runtime, "cite_papers", {"papers": ["1706.03762", "No Such Paper Title", "Mask R-CNN"]})
    text, content = result["content"][0]["text"], result["structuredContent"]
    assert text.startswith("@inproceedings{vaswani2017attention,") and "% not_found: No Such Paper Title" in text
    assert [i["status"] for i in content["items"]] == ["ok", "not_found", "ok"] and content["cited"] == 2


def test_cite_papers_ris_lists_what_was_not_cited_after_the_records(runtime: Runtime) -> None:
    text = run(runtime, "cite_papers", {"papers": ["1706.03762", "No Such Paper Title"], "format": "ris"})[
        "content"][0]["text"]
    assert text.startswith("TY  - CONF")
    assert "ER  -\n\nNot cited:\n2. not_found: No Such Paper Title: Paper title not found" in text


def test_verify_references_gives_each_reference_a_status(runtime: Runtime) -> None:
    result = run(runtime, "verify_references", {"references": [
        "Vaswani et al. (2017). Attention is all you need. NeurIPS", "Deep residual networks for speech recognition",
        "Deep Reinforcement Learning: An Overview"]})
    content = result["structuredContent"]
    assert [i["status"] for i in content["items"]] == ["verified", "not_found", "ambiguous"]
    assert content["summary"] == {"verified": 1, "ambiguous": 1, "not_found": 1, "lookup_failed": 0}
    assert result["content"][0]["text"].startswith("1 verified, 1 ambiguous, 1 not_found\n1. verified:")


def test_more_than_25_references_is_refused_before_any_lookup(runtime: Runtime) -> None:
    result = json.loads(execute(Call("tools/call", "verify_references", {"references": ["x"] * 26}), runtime))
    assert result["result"]["isError"] and result["result"]["content"][0]["text"].startswith("invalid_argument")


def test_the_citation_tools_never_count_as_semantic_searches() -> None:
    assert not is_semantic_search("verify_references", {"references": ["x"]})
    assert not is_semantic_search("cite_papers", {"papers": ["x"]})
