"""`completion/complete` from the catalog: shape checks, ranking, and look-ups against the
self-hosted sample catalog over HTTP (issue 12 item 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pwc.cache import TAXONOMY_TTL_S
from pwc.transport import Client
from pwc_mcp_core.errors import ProtocolError
from pwc_mcp_core.runtime.caches import MemoryCache
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.completion import (
    EMPTY,
    MAX_VALUES,
    catalog_completion,
    fixed_completion,
    rank,
    target,
)
from pwc_mcp_core.tools.execution import Runtime, execute


class RecordingCache:
    """MemoryCache that remembers the TTL asked for each key."""

    def __init__(self) -> None:
        self.inner, self.ttls = MemoryCache(), {}

    def fetch(self, key: str, ttl_s: float, loader: Any) -> bytes:
        self.ttls[key] = ttl_s
        return self.inner.fetch(key, ttl_s, loader)


@pytest.fixture
def client(catalog_url: str) -> Client:
    with Client(catalog_url, timeout=10, cache=MemoryCache()) as client:
        yield client


@pytest.mark.parametrize(("ref", "argument", "expected"), [
    pytest.param({"type": "ref/prompt", "name": "survey_task"}, "task", "task", id="prompt-task"),
    pytest.param({"type": "ref/prompt", "name": "compare_leaderboard"}, "benchmark", "benchmark", id="benchmark"),
    pytest.param({"type": "ref/prompt", "name": "find_papers"}, "topic", "topic", id="topic"),
    pytest.param({"type": "ref/resource", "uri": "pwc://papers/{paper}"}, "paper", "paper", id="template-paper"),
    pytest.param({"type": "ref/resource", "uri": "pwc://papers/{paper}/markdown"}, "paper", "paper",
                 id="template-markdown"),
    pytest.param({"type": "ref/resource", "uri": "pwc://papers/{paper}/citation{?format}"}, "paper", "paper",
                 id="template-citation-paper"),
    pytest.param({"type": "ref/resource", "uri": "pwc://papers/{paper}/citation{?format}"}, "format", "format",
                 id="template-citation-format"),
])
def test_target_names_the_vocabulary_of_the_argument(ref: dict, argument: str, expected: str | None) -> None:
    assert target({"ref": ref, "argument": {"name": argument, "value": " Img "}}) == (
        expected, "Img" if expected else " Img ")


@pytest.mark.parametrize(("ref", "argument", "named"), [
    pytest.param({"type": "ref/prompt", "name": "survey_task"}, "x", "takes the argument 'task'",
                 id="argument-not-taken"),
    pytest.param({"type": "ref/prompt", "name": "no-such-prompt"}, "task", "unknown prompt; known: compare_leaderboard",
                 id="unknown-prompt"),
    pytest.param({"type": "ref/resource", "uri": "pwc://nowhere/{x}"}, "x", "unknown resource template; known: pwc://",
                 id="unknown-template"),
])
def test_an_unknown_prompt_template_or_argument_is_invalid_params(ref: dict, argument: str, named: str) -> None:
    with pytest.raises(ProtocolError) as info:
        target({"ref": ref, "argument": {"name": argument, "value": "x"}})
    assert info.value.code == -32602 and named in str(info.value)


def test_the_citation_format_completes_from_its_fixed_values_without_the_catalog() -> None:
    assert fixed_completion("format", "r") == {"values": ["ris"], "total": 1, "hasMore": False}
    assert fixed_completion("format", "")["values"] == ["bibtex", "ris", "csl-json"]
    assert fixed_completion("paper", "r") is None
    with pytest.raises(ProtocolError, match="takes the argument 'paper'"):
        target({"ref": {"type": "ref/resource", "uri": "pwc://papers/{paper}/markdown"},
                "argument": {"name": "format", "value": ""}})


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
        target(params)
    assert info.value.code == -32602


def test_prefix_matches_come_before_substring_matches_without_duplicates() -> None:
    result = rank(["Semantic Segmentation", "segmentation maps", "Segment Anything", "SEGMENTATION MAPS"], "segm")
    assert result == {"values": ["segmentation maps", "Segment Anything", "Semantic Segmentation"], "total": 3,
                      "hasMore": False}


def test_values_are_capped_at_100_and_a_truncated_page_has_more() -> None:
    result = rank([f"v{i}" for i in range(150)], "v")
    assert len(result["values"]) == MAX_VALUES and result["total"] == 150 and result["hasMore"] is True
    partial = rank(["v1"], "v", more=True)
    assert partial == {"values": ["v1"], "hasMore": True}


@pytest.mark.parametrize(("vocabulary", "typed", "first"), [
    pytest.param("task", "Constituency Parsin", "Constituency Parsing", id="task-prefix"),
    pytest.param("task", "segmentation", "Semantic Segmentation", id="task-substring"),
    pytest.param("benchmark", "imagen", "ImageNet", id="benchmark-case-insensitive"),
    pytest.param("topic", "multi-head", "Multi-Head Attention", id="topic-method"),
    pytest.param("topic", "language mod", "Language Modelling", id="topic-task"),
    pytest.param("paper", "attention is all", "Attention Is All You Need", id="paper-title"),
    pytest.param("paper", "1706.03762", "1706.03762", id="paper-arxiv-id"),
    pytest.param("topic", "object-d", "object-detection", id="task-slug-prefix"),
    pytest.param("task", "image-c", "image-classification", id="task-slug-prefix-2"),
    pytest.param("paper", "1706", "1706.03762", id="arxiv-month-prefix"),
    pytest.param("paper", "1706.03", "1706.03762", id="arxiv-id-prefix"),
])
def test_the_catalog_completes_names_it_holds(client: Client, vocabulary: str, typed: str, first: str) -> None:
    result = catalog_completion(vocabulary, typed, client)
    assert first in result["values"]
    if first.lower().startswith(typed.lower()):
        assert result["values"][0] == first
    assert all(typed.lower() in v.lower() for v in result["values"])


@pytest.mark.parametrize(("vocabulary", "typed"), [
    pytest.param("task", "text-to-video-generation", id="old-vocabulary-task"),
    pytest.param("benchmark", "humaneval", id="old-vocabulary-benchmark"),
    pytest.param("topic", "lora", id="old-vocabulary-method"),
])
def test_names_the_catalog_lacks_are_never_offered(client: Client, vocabulary: str, typed: str) -> None:
    assert catalog_completion(vocabulary, typed, client) == {"values": [], "total": 0, "hasMore": False}


def test_an_empty_value_offers_the_first_names_of_the_catalog(client: Client) -> None:
    result = catalog_completion("task", "", client)
    assert "Constituency Parsing" in result["values"] and result["hasMore"] is False
    assert result["total"] == len(result["values"]) >= 12


def test_answers_are_cached_with_the_taxonomy_ttl(catalog_url: str) -> None:
    cache = RecordingCache()
    with Client(catalog_url, timeout=10, cache=cache) as client:
        first = catalog_completion("task", "constituency", client)
        assert catalog_completion("task", "CONSTITUENCY", client)["values"] == first["values"]
    completion_keys = {k: v for k, v in cache.ttls.items() if k.startswith("COMPLETE:")}
    assert len(completion_keys) == 1 and set(completion_keys.values()) == {TAXONOMY_TTL_S}


def test_execute_answers_a_completion_call_and_a_catalog_failure_is_no_values(catalog_url: str) -> None:
    def run(api_url: str) -> dict:
        runtime = Runtime.build(CoreSettings(api_url=api_url, cursor_keys=("k",), catalog_timeout_s=2), MemoryCache())
        call = Call("completion/complete", "task", {"value": "Constituency"}, deadline=1e12)
        return json.loads(execute(call, runtime))["result"]["completion"]

    assert run(catalog_url)["values"] == ["Constituency Parsing"]
    assert run("http://127.0.0.1:9/api/v1") == EMPTY
