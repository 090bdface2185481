"""``pwc paper info | evaluations | read | lineage list`` and title resolution (spec §2.2–§2.4, §2.9, §3.1, §6)."""

from __future__ import annotations

import json

import pytest

from tests.pwc.runner import run_pwc
from tests.pwc.stub import Reply, stub_catalog

TITLE_HIT = {"count": 1, "results": [{"id": "77", "arxiv_id": "2006.16236",
                                      "title": "Transformers are RNNs:  Fast Autoregressive Transformers"}]}
PAPER = {
    "id": "9", "arxiv_id": "2501.01234", "title": "Example Paper", "abstract": "Line one.\r\nLine two.\n",
    "published": "2025-01-02", "authors": ["Ada Researcher", "Grace Scientist"],
    "organizations": [{"id": 1, "name": "Example AI", "slug": "example-ai"}], "citation_count": 42,
    "has_official_implementation": False, "code_repository_count": 2, "url_abs": "https://arxiv.org/abs/2501.01234",
    "predecessor_papers": [], "successor_papers": [],
}


@pytest.mark.parametrize(("argv", "second_path", "second_params", "body"), [
    pytest.param(["info"], "papers/2006.16236", {"include_resources": "false"}, PAPER, id="info"),
    pytest.param(["read"], "research/papers/2006.16236/read", {}, "# Paper", id="read"),
    pytest.param(["related"], "papers/2006.16236/related", {"limit": "4"}, [], id="related"),
    pytest.param(["lineage", "list"], "research/papers/2006.16236/lineage", {}, {"paper": None}, id="lineage"),
])
def test_exact_titles_resolve_through_keyword_search(argv, second_path, second_params, body):
    title = "transformers are rnns: fast autoregressive transformers"
    with stub_catalog({"papers/search": TITLE_HIT, second_path: body}) as stub:
        result = run_pwc(stub.url, "paper", *argv, title)
    assert result.code == 0, result.err
    assert stub.calls == [("papers/search", {"q": title, "page": "1", "page_size": "20", "mode": "keyword"}),
                          (second_path, second_params)]


@pytest.mark.parametrize(("results", "message"), [
    pytest.param([{"arxiv_id": "2501.00001", "title": "A Shared Title"},
                  {"arxiv_id": "2501.00002", "title": "A  shared title"},
                  {"arxiv_id": "2501.00001", "title": "A Shared Title"}],
                 "pwc: Paper title is ambiguous: A Shared Title; A Shared Title (2501.00001); "
                 "A  shared title (2501.00002)\n", id="ambiguous"),
    pytest.param([{"route_identifier": "other", "title": "Other"}, {"title": None}],
                 "pwc: Paper title not found: A Shared Title; closest results: Other (other); "
                 "Untitled (unknown ID)\n", id="not-found-with-closest"),
    pytest.param([], "pwc: Paper title not found: A Shared Title\n", id="not-found"),
])
def test_title_resolution_failures_exit_4(results, message):
    with stub_catalog({"papers/search": {"count": len(results), "results": results}}) as stub:
        result = run_pwc(stub.url, "paper", "info", "A Shared Title")
    assert (result.code, result.out, result.err) == (4, "", message)


@pytest.mark.parametrize("ref", ["2501.01234v2", "123", "cs/0101001", "math.GT/0309136v1"])
def test_identifiers_pass_through_without_search(ref):
    with stub_catalog({}) as stub:
        run_pwc(stub.url, "paper", "read", ref)
    assert len(stub.calls) == 1 and not stub.calls[0][0].startswith("papers/search")


def test_empty_reference_exits_4():
    with stub_catalog({}) as stub:
        result = run_pwc(stub.url, "paper", "info", "  ")
    assert (result.code, result.err, stub.calls) == (4, "pwc: Paper reference cannot be empty\n", [])


def test_missing_paper_is_http_404_exit_3():
    with stub_catalog({}) as stub:
        result = run_pwc(stub.url, "paper", "info", "2501.99999")
    assert result.code == 3 and result.err.startswith("pwc: API request failed (404)")


def test_paper_info_text():
    with stub_catalog({"papers/2501.01234": PAPER}) as stub:
        result = run_pwc(stub.url, "paper", "info", "2501.01234")
    assert result.out == (
        "id: 2501.01234\ntitle: Example Paper\npublished: 2025-01-02\n"
        "authors: Ada Researcher, Grace Scientist\norganizations: Example AI\ncitations: 42\n"
        "official_implementation: false\ncode_repositories: 2\nurl: https://arxiv.org/abs/2501.01234\n"
        "\n## Abstract\n\nLine one.\nLine two.\n"
        "\n## Paper lineage\n\n### Predecessors\n\n- None\n\n### Successors\n\n- None\n")


def test_paper_info_lineage_items():
    paper = dict(PAPER, predecessor_papers=[{"title": "Earlier [Paper]", "route_identifier": "2401.00001",
                                            "published": "2024-01-02"}],
                 successor_papers=[{"title": "Later", "route_identifier": "2601.00001", "published": None},
                                   {"title": "Unlinked", "published": "2026-02-02"}])
    with stub_catalog({"papers/2501.01234": paper}) as stub:
        out = run_pwc(stub.url, "paper", "info", "2501.01234").out
    assert "- [Earlier \\[Paper\\]](https://paperswithcode.co/paper/2401.00001) (2024-01-02)\n" in out
    assert "- [Later](https://paperswithcode.co/paper/2601.00001)\n" in out
    assert "- Unlinked (2026-02-02)\n" in out


def test_paper_info_resources():
    paper = dict(PAPER, abstract=None,
                 repositories=[{"url": "https://github.com/u/fork", "is_official": False},
                               "https://github.com/u/plain", {"url": "https://github.com/o/official", "is_official": True},
                               {"is_official": True}],
                 project_pages=["https://example.test/page"],
                 hf_models=["https://hf.co/m"], hf_datasets=["https://hf.co/d"], hf_spaces=["https://hf.co/s"])
    with stub_catalog({"papers/2501.01234": paper}) as stub:
        result = run_pwc(stub.url, "paper", "info", "2501.01234", "--include-resources")
    assert stub.calls == [("papers/2501.01234", {"include_resources": "true"})]
    assert result.out.endswith(
        "\n## Repositories\n\n- **Official:** https://github.com/o/official\n- https://github.com/u/fork\n"
        "- https://github.com/u/plain\n\n## Project pages\n\n- https://example.test/page\n"
        "\n## Hugging Face artifacts\n\n- **Model:** https://hf.co/m\n- **Dataset:** https://hf.co/d\n"
        "- **Space:** https://hf.co/s\n")


EVAL_ONE = {"id": 1, "paper_id": "9", "task_id": "3", "task_name": "Coding Agents", "dataset_id": "42",
            "dataset_name": "SWE-Bench Pro", "model_name": "Agent | One", "metrics": {"Resolved": 55.5},
            "best_metric": "Resolved", "best_rank": 1, "is_open": True, "result_url": "/paper/2607.24653"}
EVAL_TWO = {"id": 2, "paper_id": "9", "task_id": "8", "task_name": "Agents", "dataset_id": "43",
            "dataset_name": "Other", "model_name": "Agent Two", "harness": "verified", "metrics": {"Pass@1": 50},
            "best_rank": None, "is_open": None, "result_url": "https://example.test/result-two"}


def _eval_pages(pages: dict[str, list], count: int):
    def route(params):
        return {"count": count, "results": pages.get(params["page"], []), "next_page": None}
    return route


def test_paper_info_include_evals_fetches_every_page():
    with stub_catalog({"papers/2607.24653": dict(PAPER, abstract=None),
                       "evaluations/": _eval_pages({"1": [EVAL_ONE], "2": [EVAL_TWO]}, 2)}) as stub:
        result = run_pwc(stub.url, "paper", "info", "2607.24653", "--include-evals")
    assert stub.calls == [("papers/2607.24653", {"include_resources": "false"})] + [
        ("evaluations/", {"page": str(p), "page_size": "100", "paper_id": "9", "ordering": "-benchmark_popularity"})
        for p in (1, 2)]
    assert "\n## Evaluations\n\n| Benchmark | Model | Scores | Rank | Task | Open | Source |\n" in result.out
    assert "| SWE-Bench Pro | Agent \\| One | Resolved: 55.5 | 1 | Coding Agents | yes | " \
           "[source](<https://paperswithcode.co/paper/2607.24653>) |" in result.out
    assert "| Other | Agent Two (verified) | Pass@1: 50 | — | Agents | unknown | " \
           "[source](<https://example.test/result-two>) |" in result.out


def test_include_evals_stops_on_an_empty_page():
    with stub_catalog({"papers/1": {"id": "9"}, "evaluations/": _eval_pages({"1": [EVAL_ONE]}, 500)}) as stub:
        result = run_pwc(stub.url, "paper", "info", "1", "--include-evals", "--json")
    assert [p["page"] for _, p in stub.calls[1:]] == ["1", "2"]
    assert json.loads(result.out)["data"]["evaluations"] == {"count": 500, "results": [EVAL_ONE]}


def test_include_evals_json_with_zero_evaluations():
    with stub_catalog({"papers/1": {"id": "9"}, "evaluations/": {"count": 0, "results": []}}) as stub:
        result = run_pwc(stub.url, "paper", "info", "1", "--include-evals", "--json")
    assert json.loads(result.out)["data"] == {"id": "9", "evaluations": {"count": 0, "results": []}}
    assert stub.paths()[-1] == "evaluations/"


def test_include_evals_needs_a_paper_id():
    with stub_catalog({"papers/1": {"title": "x"}}) as stub:
        result = run_pwc(stub.url, "paper", "info", "1", "--include-evals")
    assert (result.code, result.err) == (4, "pwc: Paper response did not contain an ID\n")


def test_paper_evaluations_merges_one_page():
    twin = dict(EVAL_ONE, id=3, task_id="9", task_name="Other Scope", best_rank=4)
    body = {"count": 3, "next_page": 2, "results": [EVAL_ONE, twin, EVAL_TWO]}
    with stub_catalog({"papers/2607.24653": {"id": "9"}, "evaluations/": body}) as stub:
        as_json = run_pwc(stub.url, "paper", "evaluations", "2607.24653", "--page-size", "3", "--json")
        as_text = run_pwc(stub.url, "paper", "evaluations", "2607.24653")
    data = json.loads(as_json.out)["data"]
    assert (data["count"], data["page"], data["next_page"], len(data["results"])) == (3, 1, 2, 2)
    assert [s["rank"] for s in data["results"][0]["rank_scopes"]] == [1, 4]
    assert stub.calls[1] == ("evaluations/", {"page": "1", "page_size": "3", "paper_id": "9",
                                              "ordering": "-benchmark_popularity"})
    assert as_text.out.startswith("\n## Evaluations\n\n| Benchmark |") and as_text.err == ""


def test_paper_evaluations_without_rows():
    with stub_catalog({"papers/1": {"id": "9"}, "evaluations/": {"count": 0, "results": []}}) as stub:
        result = run_pwc(stub.url, "paper", "evaluations", "1")
    assert result.out == "\n## Evaluations\n\nNo evaluations found.\n"


@pytest.mark.parametrize(("body", "expected"), [
    pytest.param("# Paper\n\nBody", "# Paper\n\nBody\n", id="newline-added"),
    pytest.param("# Paper\n", "# Paper\n", id="newline-kept"),
    pytest.param("", "", id="empty"),
])
def test_paper_read_prints_the_markdown(body, expected):
    with stub_catalog({"research/papers/2501.01234/read": body}) as stub:
        result = run_pwc(stub.url, "paper", "read", "2501.01234")
    assert result.out == expected
    assert stub.calls == [("research/papers/2501.01234/read", {})]


def test_paper_read_json_keeps_the_body_as_received():
    with stub_catalog({"research/papers/2501.01234/read": Reply(b"# Paper\n\nBody\xff")}) as stub:
        result = run_pwc(stub.url, "paper", "read", "2501.01234", "--json")
    assert result.out == '{"schema_version":"v1","data":{"paper":"2501.01234","markdown":"# Paper\\n\\nBody\ufffd"}}\n'


LINEAGE = {"paper": {"id": "1", "reference": "2307.09288", "title": "Llama 2: Open [Foundation]"},
           "predecessors": [{"reference": "2302.13971", "title": "LLaMA"}, {"title": "No ref"}], "successors": []}


def test_lineage_list_text():
    with stub_catalog({"research/papers/2307.09288/lineage": LINEAGE}) as stub:
        result = run_pwc(stub.url, "paper", "lineage", "list", "2307.09288")
    assert result.out == (
        "# Paper lineage\n\n## Paper\n\n"
        "- [Llama 2: Open \\[Foundation\\]](https://paperswithcode.co/paper/2307.09288) (`2307.09288`)\n"
        "\n## Predecessors\n\n- [LLaMA](https://paperswithcode.co/paper/2302.13971) (`2302.13971`)\n- No ref\n"
        "\n## Successors\n\n- None\n")
    assert stub.calls == [("research/papers/2307.09288/lineage", {})]


def test_lineage_json_is_raw():
    with stub_catalog({"research/papers/2307.09288/lineage": LINEAGE}) as stub:
        result = run_pwc(stub.url, "paper", "lineage", "list", "2307.09288", "--json")
    assert json.loads(result.out)["data"] == LINEAGE
