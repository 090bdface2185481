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


def test_cite_papers_takes_every_reference_form_the_other_paper_tools_take(
        runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    import pwc.queries
    import pwc_mcp_core.tools.citing as citing

    commands: list[object] = []
    monkeypatch.setattr(citing, "query", lambda *a: commands.append(a[0]) or pwc.queries.query(*a))
    forms = {
        "BERT": "1810.04805",  # the unique short name before a title's colon
        "https://paperswithcode.co/paper/mask-r-cnn": "1703.06870",  # a Papers With Code slug URL
        "https://huggingface.co/papers/1706.03762": "1706.03762",
        "https://arxiv.org/pdf/1512.03385v2.pdf": "1512.03385",
        "Dropout: A Simple Way to Prevent Neural Networks from Overfitting": None,  # exact title, no arXiv id
        "1706.03762": "1706.03762",  # the same paper again: cited once
    }
    result = run(runtime, "cite_papers", {"papers": [*forms, "https://example.org/x"]})
    items = result["structuredContent"]["items"]
    assert [i["reference"] for i in items] == [*forms, "https://example.org/x"]
    assert [i["status"] for i in items] == ["ok"] * len(forms) + ["not_found"]
    assert [i["paper"] for i in items if i["status"] == "ok" and forms[i["reference"]]] == [
        v for v in forms.values() if v]
    assert commands == [("paper", "cite")] and result["structuredContent"]["cited"] == 5
    text = result["content"][0]["text"]
    assert text.count("@inproceedings{vaswani2017attention,") == 1
    assert text.rstrip().endswith("% not_found: https://example.org/x: Paper URL not supported: https://example.org/x; "
                                  "only arXiv, Hugging Face, and Papers With Code URLs resolve")


def test_a_short_name_chosen_among_several_titles_says_so_in_its_item(runtime: Runtime) -> None:
    (item,) = run(runtime, "cite_papers", {"papers": ["LLaMA"]})["structuredContent"]["items"]
    assert item["paper"] == "2302.13971" and "Llama 2: Open Foundation" in item["note"]


def test_when_nothing_resolves_no_command_runs_and_every_reference_says_why(runtime: Runtime) -> None:
    result = run(runtime, "cite_papers", {"papers": ["Deep Reinforcement Learning: An Overview", "No Such Paper Title"],
                                          "format": "csl-json"})
    content = result["structuredContent"]
    assert [i["status"] for i in content["items"]] == ["ambiguous", "not_found"] and content["cited"] == 0
    assert "1701.07274" in content["items"][0]["message"] and "1806.08894" in content["items"][0]["message"]
    assert result["content"][0]["text"].startswith("Not cited:\n1. ambiguous: Deep Reinforcement Learning")
