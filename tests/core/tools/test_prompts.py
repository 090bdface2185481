"""The three prompts: exact texts (docs/tool-contract.md §7) and argument errors."""

from __future__ import annotations

import pytest

from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.tools.prompts import get_prompt, prompts_list_result


@pytest.mark.parametrize(("name", "arguments", "text"), [
    pytest.param("find_papers", {"topic": "vision transformers"},
                 "Find papers about 'vision transformers'. Use semantic search for concepts, then inspect the most "
                 "relevant papers and cite their canonical URLs.", id="find-papers"),
    pytest.param("compare_leaderboard", {"benchmark": "imagenet-1k"},
                 "Inspect the 'imagenet-1k' benchmark. Explain metric direction and evaluation settings, and do not "
                 "compare ranks from different task scopes.", id="compare-leaderboard"),
    pytest.param("survey_task", {"task": "image-classification"},
                 "Survey the 'image-classification' task. Resolve its slug, inspect high-coverage benchmarks, then "
                 "summarize representative papers and methods.", id="survey-task"),
    pytest.param("find_papers", {"topic": "it's"},
                 "Find papers about \"it's\". Use semantic search for concepts, then inspect the most relevant papers "
                 "and cite their canonical URLs.", id="python-repr-quoting"),
])
def test_prompts_render_one_user_message_with_the_exact_text(name: str, arguments: dict, text: str) -> None:
    result = get_prompt({"name": name, "arguments": arguments})
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": text}}]
    assert result["description"]


def test_prompts_list_names_each_prompt_with_one_required_argument() -> None:
    listed = prompts_list_result()["prompts"]
    assert [(p["name"], p["title"], [a["name"] for a in p["arguments"]]) for p in listed] == [
        ("find_papers", "Find papers", ["topic"]),
        ("compare_leaderboard", "Compare a leaderboard", ["benchmark"]),
        ("survey_task", "Survey a research task", ["task"]),
    ]
    assert all(a["required"] for p in listed for a in p["arguments"])


@pytest.mark.parametrize("params", [
    pytest.param({"name": "unknown"}, id="unknown-prompt"),
    pytest.param({}, id="no-name"),
    pytest.param({"name": "survey_task"}, id="no-arguments"),
    pytest.param({"name": "survey_task", "arguments": {"topic": "x"}}, id="wrong-argument"),
    pytest.param({"name": "survey_task", "arguments": {"task": 3}}, id="non-string-argument"),
    pytest.param({"name": "survey_task", "arguments": {"task": "  "}}, id="blank-argument"),
    pytest.param({"name": "survey_task", "arguments": ["x"]}, id="arguments-not-object"),
])
def test_bad_prompt_requests_are_invalid_params(params: dict) -> None:
    with pytest.raises(ProtocolError) as info:
        get_prompt(params)
    assert info.value.code == -32602
