"""`completion/complete` over prompt arguments and resource-template variables."""

from __future__ import annotations

import pytest

from pwc_mcp_core.completion import MAX_VALUES, complete, suggest
from pwc_mcp_core.errors import ProtocolError


@pytest.mark.parametrize(("ref", "argument", "value", "expected"), [
    pytest.param({"type": "ref/prompt", "name": "survey_task"}, "task", "image-c", "image-classification",
                 id="prompt-task"),
    pytest.param({"type": "ref/prompt", "name": "compare_leaderboard"}, "benchmark", "IMAGENET", "imagenet",
                 id="prompt-benchmark-case-insensitive"),
    pytest.param({"type": "ref/prompt", "name": "find_papers"}, "topic", "transf", "transformer", id="prompt-topic"),
    pytest.param({"type": "ref/resource", "uri": "pwc://tasks/{task}"}, "task", "object", "object-detection",
                 id="template-task"),
    pytest.param({"type": "ref/resource", "uri": "pwc://benchmarks/{benchmark}"}, "benchmark", "coco", "coco",
                 id="template-benchmark"),
    pytest.param({"type": "ref/resource", "uri": "pwc://papers/{paper}"}, "paper", "1706", "1706.03762",
                 id="template-paper"),
])
def test_completion_suggests_matching_values_first_by_prefix(ref: dict, argument: str, value: str,
                                                             expected: str) -> None:
    result = complete({"ref": ref, "argument": {"name": argument, "value": value}})["completion"]
    assert result["values"][0] == expected
    assert result["total"] >= len(result["values"]) and result["hasMore"] is False


def test_substring_matches_follow_prefix_matches() -> None:
    values = complete({"ref": {"type": "ref/prompt", "name": "survey_task"},
                       "argument": {"name": "task", "value": "segmentation"}})["completion"]["values"]
    assert "semantic-segmentation" in values and all("segmentation" in v for v in values)


def test_an_argument_the_ref_does_not_take_completes_to_nothing() -> None:
    result = complete({"ref": {"type": "ref/prompt", "name": "survey_task"}, "argument": {"name": "x", "value": ""}})
    assert result == {"completion": {"values": [], "total": 0, "hasMore": False}}


def test_suggestions_are_capped_at_100_with_has_more() -> None:
    result = suggest(tuple(f"v{i}" for i in range(150)), "v")
    assert len(result["values"]) == MAX_VALUES and result["total"] == 150 and result["hasMore"] is True


@pytest.mark.parametrize("params", [
    pytest.param({}, id="empty"),
    pytest.param({"ref": {"type": "ref/prompt", "name": 7}, "argument": {"name": "a", "value": ""}},
                 id="non-string-prompt"),
    pytest.param({"ref": {"type": "ref/resource", "uri": None}, "argument": {"name": "x", "value": ""}},
                 id="non-string-uri"),
    pytest.param({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}}, id="unknown-ref-type"),
    pytest.param({"ref": {"type": "ref/prompt", "name": "survey_task"}, "argument": {"name": "task", "value": 3}},
                 id="non-string-value"),
])
def test_malformed_completion_requests_are_invalid_params(params: dict) -> None:
    with pytest.raises(ProtocolError) as info:
        complete(params)
    assert info.value.code == -32602


@pytest.mark.parametrize("ref", [
    pytest.param({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, id="unknown-prompt"),
    pytest.param({"type": "ref/resource", "uri": "pwc://nope/{x}"}, id="unknown-template"),
])
def test_an_unknown_prompt_or_template_completes_to_no_values(ref: dict) -> None:
    # The conformance suite completes its own fixture prompt and only requires an answer.
    assert complete({"ref": ref, "argument": {"name": "arg1", "value": "a"}}) == {
        "completion": {"values": [], "total": 0, "hasMore": False}}
