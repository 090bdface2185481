"""What a text-only agent reads on the sample catalog (issue: answers an agent can trust).

Each test pins one promise of the result text through ``execute`` over HTTP against
the bundled sample catalog: every fact in the text, totals that do not mislead,
errors that name the argument and the next step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.tools.execution import Runtime, execute
from pwc_mcp_core.tools.projections.untrusted import unframe


@pytest.fixture(scope="module")
def runtime(catalog_url: str) -> Runtime:
    return Runtime.build(CoreSettings(api_url=catalog_url, cursor_keys=("answers-secret",)))


def call(runtime: Runtime, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str, bool]:
    """``(structuredContent, text, isError)`` of one tool call."""
    result = json.loads(execute(Call("tools/call", name, arguments), runtime))["result"]
    text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
    return result.get("structuredContent") or {}, text, bool(result.get("isError"))


def test_task_benchmarks_name_their_best_model_in_the_text(runtime: Runtime) -> None:
    structured, text, _ = call(runtime, "get_task", {"task": "object-detection"})
    best = {b["name"]: b["best_model"] for b in structured["task"]["benchmarks"]}
    assert best["COCO test-dev"] == "Swin-L (HTC++)" and best["COCO minival"] == "DETR-R101"
    assert "best model" in text
    for name, model in best.items():
        assert any(name in line and model in line for line in text.splitlines()), (name, model)


def test_a_parameter_metric_fills_the_parameter_column(runtime: Runtime) -> None:
    structured, text, _ = call(runtime, "get_benchmark", {"benchmark": "imagenet", "limit": 10})
    swin = next(row for row in structured["evaluations"] if row["model_name"].startswith("Swin-L"))
    assert swin["metrics"].get("Number of params") == "197M" and swin["num_parameters"] == 197_000_000
    line = next(line for line in text.splitlines() if line.startswith("#") and "Swin-L" in line)
    assert "|197M|" in line


def test_read_paper_ends_a_chunk_at_a_line_break_and_states_the_total(runtime: Runtime, catalog_url: str) -> None:
    import httpx

    whole = httpx.get(f"{catalog_url}/research/papers/1706.03762/read", timeout=30).text
    structured, text, _ = call(runtime, "read_paper", {"paper": "1706.03762"})
    chunks = [structured]
    while chunks[-1]["truncated"]:
        chunk = chunks[-1]
        limit = runtime.settings.chunk_bytes
        assert chunk["markdown"].endswith("\n") and chunk["next_offset"] <= chunk["offset"] + limit
        assert chunk["next_offset"] == chunk["offset"] + len(chunk["markdown"].encode())
        chunks.append(call(runtime, "read_paper", {"paper": "1706.03762", "cursor": chunk["next_cursor"]})[0])
    assert "".join(c["markdown"] for c in chunks) == whole
    total = len(whole.encode())
    assert {c["total_bytes"] for c in chunks} == {total}
    assert f"bytes 0-{structured['next_offset']} of {total:,}." in text


@pytest.mark.parametrize(("name", "arguments", "head"), [
    ("search_papers", {"query": "transformer", "mode": "keyword", "limit": 3}, "3 of {count} papers."),
    ("list_papers", {"limit": 3}, "3 of {count} papers."),
    ("list_benchmarks", {"limit": 3}, "3 of {count} benchmarks."),
])
def test_a_list_header_states_the_total_not_only_the_page(runtime: Runtime, name: str, arguments: dict[str, Any],
                                                         head: str) -> None:
    structured, text, _ = call(runtime, name, arguments)
    count = structured["total"]
    assert count > 3 and text.startswith(head.format(count=count)), text[:200]


def test_task_benchmarks_header_says_how_many_the_limit_left_out(runtime: Runtime) -> None:
    _, text, _ = call(runtime, "get_task", {"task": "image-classification", "benchmark_limit": 2})
    assert "## Benchmarks (2 of 3 benchmarks)" in text


def test_benchmark_counts_say_merged_not_matching_without_a_filter(runtime: Runtime) -> None:
    _, text, _ = call(runtime, "get_benchmark", {"benchmark": "coco-test-dev"})
    assert "4 evaluation rows, merged into 2 leaderboard rows" in text and "matching" not in text


def test_one_of_a_thing_is_singular(runtime: Runtime) -> None:
    _, text, _ = call(runtime, "get_paper_info", {"paper": "2005.12872"})
    assert "1 code repository;" in text or text.split("\n")[1].endswith("1 code repository")
    assert "1 code repositories" not in text and "## Repositories (1)" in text


def test_grouped_benchmarks_list_each_benchmark_once_with_its_area_and_tasks(runtime: Runtime) -> None:
    structured, text, _ = call(runtime, "list_benchmarks", {"group_by_area": True})
    ids = [item["id"] for item in structured["items"]]
    assert len(ids) == len(set(ids)) and {"imagenet", "cifar-10", "coco-test-dev", "squad1-1"} <= {
        item["slug"] for item in structured["items"]}
    imagenet = next(item for item in structured["items"] if item["slug"] == "imagenet")
    assert imagenet["paper_count"] in (None, 8)  # never the evaluation count (10)
    line = next(line for line in text.splitlines() if line.startswith("3|imagenet|"))
    assert "Computer Vision: Image Classification, Self-Supervised Image Classification" in line
    assert "|10|" not in line


def test_grouped_benchmarks_honour_limit_and_page(runtime: Runtime) -> None:
    every, _, _ = call(runtime, "list_benchmarks", {"group_by_area": True})
    first, text, _ = call(runtime, "list_benchmarks", {"group_by_area": True, "limit": 2})
    second, _, _ = call(runtime, "list_benchmarks", {"group_by_area": True, "limit": 2, "page": 2})
    assert [i["id"] for i in first["items"] + second["items"]] == [i["id"] for i in every["items"][:4]]
    assert first["next_page"] == 2 and text.startswith(f"2 of {len(every['items'])} benchmarks.")


def test_the_default_leaderboard_order_is_the_primary_metric_best_first(runtime: Runtime) -> None:
    first, text, _ = call(runtime, "get_benchmark", {"benchmark": "imagenet", "limit": 3})
    second, _, _ = call(runtime, "get_benchmark", {"benchmark": "imagenet", "limit": 3, "page": 2})
    scores = [row["metrics"]["Top 1 Accuracy"] for row in first["evaluations"] + second["evaluations"]]
    assert scores == sorted(scores, reverse=True) and first["evaluations"][0]["model_name"] == "ViT-H/14"
    assert "Rows ordered by Top 1 Accuracy (higher first)" in text
    simclr = "#1 in Self-Supervised Image Classification"
    everything, _, _ = call(runtime, "get_benchmark", {"benchmark": "imagenet", "limit": 20})
    row = next(r for r in everything["evaluations"] if r["model_name"].startswith("SimCLR"))
    assert row["rank_scopes"][0]["rank"] == 1 and everything["evaluations"].index(row) > 0 and simclr not in text


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("list_papers", {"task": "no-such-task"}, ["task='no-such-task'", "list_tasks"]),
    ("list_benchmarks", {"task": "object"}, ["task='object'", "closest tasks: object-detection (Object Detection)",
                                             "list_tasks"]),
    ("list_papers", {"organization": "meta"}, ["organization='meta'", "closest organizations: meta-ai (Meta AI)"]),
    ("get_paper_info", {"paper": "No Such Paper Title At All"}, ["Use search_papers"]),
    ("get_benchmark", {"benchmark": "imagenet-1k"}, ["Benchmark not found: imagenet-1k; closest results: ImageNet"]),
    ("get_conference", {"conference": "neurips-2099"}, ["closest results: NeurIPS"]),
    ("get_organization", {"organization": "meta"}, ["closest results: Meta AI,"]),
    ("get_framework", {"framework": "torch"}, ["closest results: PyTorch,"]),
    ("get_benchmark", {"benchmark": "imagenet", "max_parameters": "lots"}, ["invalid_argument: max_parameters: "]),
    ("list_tasks", {"group_by_area": True, "limit": 3}, ["leave out group_by_area"]),
    ("get_benchmark", {"benchmark": "imagenet", "pareto": "Top 1 Accuracy"}, ["METRIC:higher or METRIC:lower"]),
])
def test_an_error_names_what_was_wrong_and_what_to_do(runtime: Runtime, name: str, arguments: dict[str, Any],
                                                       expected: list[str]) -> None:
    _, text, is_error = call(runtime, name, arguments)
    assert is_error and all(part in text for part in expected), text
    assert "--" not in text and "pwc " not in text and "requested catalog record" not in text


def test_an_answer_chosen_among_candidates_says_so(runtime: Runtime) -> None:
    structured, text, _ = call(runtime, "get_paper_info", {"paper": "llama"})
    assert structured["paper"]["arxiv_id"] == "2302.13971"
    assert text.startswith("Note: 'llama' was resolved to LLaMA") and "Llama 2" in text and "2307.09288" in text
    _, exact, _ = call(runtime, "get_paper_info", {"paper": "Attention Is All You Need"})
    assert not exact.startswith("Note:")


def test_a_long_paper_offered_by_completion_reads_as_a_resource(runtime: Runtime) -> None:
    from pwc_mcp_core.tools.completion import catalog_completion, target

    template = {"type": "ref/resource", "uri": "pwc://papers/{paper}/markdown"}
    vocabulary, typed = target({"ref": template, "argument": {"name": "paper", "value": "Attention Is All"}})
    assert vocabulary is not None
    offered = catalog_completion(vocabulary, typed, runtime.client)["values"]
    assert "Attention Is All You Need" in offered
    body = json.loads(execute(Call("resources/read", "pwc://papers/Attention%20Is%20All%20You%20Need/markdown", {}),
                              runtime))
    assert "error" not in body, body
    text = body["result"]["contents"][0]["text"]
    # The first chunk at the default size (it ends at a line break in its second half), then the call that continues.
    (chunk,) = unframe(text)
    assert runtime.settings.chunk_bytes // 2 < len(chunk.encode()) and "] read_paper: truncated; bytes 0-" in text
    assert 'cursor="' in text
    cursor = text.rsplit('cursor="', 1)[1].split('"', 1)[0]
    _, more, is_error = call(runtime, "read_paper", {"paper": "Attention Is All You Need", "cursor": cursor})
    assert not is_error and more


@pytest.mark.parametrize(("sort", "sizes", "way"), [
    ("Number of params", ["632M", "307M", "197M", "86M", "66M"], "largest first"),
    ("Number of params:asc", ["66M", "86M", "197M", "307M", "632M"], "smallest first"),
])
def test_a_leaderboard_sorts_by_a_parameter_metric_as_numbers(runtime: Runtime, sort: str, sizes: list[str],
                                                               way: str) -> None:
    structured, text, is_error = call(runtime, "get_benchmark", {"benchmark": "imagenet", "sort_metric": sort})
    assert not is_error, text
    assert [row["metrics"]["Number of params"] for row in structured["evaluations"]] == sizes
    assert f"Rows ordered by Number of params ({way}, as requested)" in text
    table = [line for line in text.splitlines() if line.startswith("#") and "|" in line]
    assert [next(size for size in sizes if f"|{size}|" in line) for line in table] == sizes


def test_a_parameter_threshold_compares_the_number_a_size_stands_for(runtime: Runtime) -> None:
    structured, _, _ = call(runtime, "get_benchmark", {"benchmark": "imagenet",
                                                      "minimum_metrics": {"Number of params": 100_000_000}})
    assert sorted(row["metrics"]["Number of params"] for row in structured["evaluations"]) == ["197M", "307M", "632M"]


@pytest.mark.parametrize("tool", ["list_tasks", "list_methods", "list_benchmarks"])
def test_an_area_is_named_by_its_slug_as_well_as_its_display_name(runtime: Runtime, tool: str) -> None:
    by_slug, slug_text, slug_error = call(runtime, tool, {"area": "computer-vision"})
    by_name, name_text, name_error = call(runtime, tool, {"area": "Computer Vision"})
    assert not slug_error and not name_error, (slug_text, name_text)
    assert by_slug == by_name and slug_text == name_text
    if tool == "list_tasks":
        slugs = {task["slug"] for task in by_slug["data"]["results"]}
        assert "image-classification" in slugs and "machine-translation" not in slugs


@pytest.mark.parametrize(("area", "closest"), [
    ("computer visio", "closest areas: computer-vision (Computer Vision)"),
    ("nlp", "closest areas: natural-language-processing (Natural Language Processing)"),
    ("zzz", None),
])
def test_an_unknown_area_names_the_argument_the_closest_areas_and_the_choices(runtime: Runtime, area: str,
                                                                             closest: str | None) -> None:
    _, text, is_error = call(runtime, "list_tasks", {"area": area})
    assert is_error and text.startswith(f"not_found: no area matches area={area!r}")
    assert (closest in text) if closest else ("closest" not in text)
    assert text.endswith("Pass an area's slug, name or ID; choose from: computer-vision, general, methodology, "
                         "natural-language-processing.")


def test_reading_the_98_kb_sample_paper_by_its_title_echoes_short_cursors(runtime: Runtime) -> None:
    """Issue 30 item 6: each call's cursor was 320-450 characters (the content hash and the whole title)."""
    arguments: dict[str, Any] = {"paper": "Attention Is All You Need"}
    lengths, markdown = [], ""
    while True:
        structured, text, is_error = call(runtime, "read_paper", arguments)
        assert not is_error, text
        markdown += structured["markdown"]
        if not structured["next_cursor"]:
            break
        lengths.append(len(structured["next_cursor"]))
        arguments = {**arguments, "cursor": structured["next_cursor"]}
    assert len(markdown.encode()) > 90_000 and len(lengths) >= 10
    assert max(lengths) <= 80, lengths
