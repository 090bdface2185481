"""Search and paper commands end to end against the self-hosted sample catalog over HTTP."""

from __future__ import annotations

import json

import pytest

from pwc.queries import query
from pwc.transport import Client
from tests.pwc.runner import run_pwc


def _data(url: str, *argv: str):
    result = run_pwc(url, *argv, "--json")
    assert (result.code, result.err) == (0, ""), result.err
    lines = result.out.splitlines()
    assert len(lines) == 1
    envelope = json.loads(lines[0])
    assert envelope["schema_version"] == "v1"
    return envelope["data"]


@pytest.fixture(scope="module")
def known_paper(catalog_url: str) -> dict:
    """A paper of the sample that has an arXiv ID and a title."""
    data = _data(catalog_url, "search", "transformer", "--limit", "20")
    papers = [p for p in data["results"] if p.get("arxiv_id") and p.get("title")]
    assert papers, "the sample catalog should hold transformer papers"
    return papers[0]


def test_vision_transformer_search_reads_well_captured_and_on_a_tty(catalog_url):
    captured = run_pwc(catalog_url, "search", "vision transformer", "--limit", "3")
    assert captured.code == 0, captured.err
    lines = captured.out.splitlines()
    assert lines[0] == "id\ttitle\tyear\tcitations\tmatch"
    assert 1 <= len(lines) - 1 <= 3
    for line in lines[1:]:
        ident, title, year, _, match = line.split("\t")
        assert ident and title and (year == "" or year.isdigit()) and match in ("strong", "weak")
    tty = run_pwc(catalog_url, "search", "vision transformer", "--limit", "3", isatty=True)
    assert tty.out.splitlines()[0].startswith("id  ") and "\t" not in tty.out
    assert len(tty.out.splitlines()) == len(lines)


def test_search_json_respects_the_limit(catalog_url):
    data = _data(catalog_url, "search", "vision transformer", "--limit", "3")
    assert len(data["results"]) <= 3


def test_search_modes_and_dates(catalog_url):
    for mode in ("keyword", "semantic", "hybrid"):
        assert run_pwc(catalog_url, "search", "transformer", "--mode", mode).code == 0
    result = run_pwc(catalog_url, "search", "transformer", "--start-date", "2015-01-01", "--end-date", "2030-12-31")
    assert result.code == 0, result.err


def test_paper_info_by_id_and_by_exact_title_agree(catalog_url, known_paper):
    by_id = _data(catalog_url, "paper", "info", known_paper["arxiv_id"])
    by_title = _data(catalog_url, "paper", "info", known_paper["title"].upper())
    assert by_id == by_title
    text = run_pwc(catalog_url, "paper", "info", known_paper["arxiv_id"])
    assert text.code == 0
    assert f"id: {known_paper['arxiv_id']}\n" in text.out and "\n## Paper lineage\n" in text.out
    assert "official_implementation: " in text.out


def test_paper_info_with_resources_and_evaluations(catalog_url, known_paper):
    data = _data(catalog_url, "paper", "info", known_paper["arxiv_id"], "--include-resources", "--include-evals")
    assert data["evaluations"]["count"] == len(data["evaluations"]["results"])
    text = run_pwc(catalog_url, "paper", "info", known_paper["arxiv_id"], "--include-evals")
    assert "\n## Evaluations\n" in text.out


def test_paper_evaluations(catalog_url, known_paper):
    data = _data(catalog_url, "paper", "evaluations", known_paper["arxiv_id"])
    assert set(data) == {"count", "page", "next_page", "results"} and data["page"] == 1
    text = run_pwc(catalog_url, "paper", "evaluations", known_paper["arxiv_id"])
    assert text.code == 0 and text.out.startswith("\n## Evaluations\n")


@pytest.mark.parametrize("argv", [
    pytest.param(["paper", "list"], id="list"),
    pytest.param(["paper", "list", "--order-by", "citation_count", "--page-size", "5"], id="list-ordered"),
    pytest.param(["paper", "recent", "--limit", "5"], id="recent"),
    pytest.param(["paper", "trending", "--limit", "5", "--max-age-days", "365"], id="trending"),
])
def test_paper_listings_print_the_paper_table(catalog_url, argv):
    captured = run_pwc(catalog_url, *argv)
    assert captured.code == 0, captured.err
    assert captured.out.splitlines()[0] == "id\ttitle\tyear\tcitations"
    data = _data(catalog_url, *argv)
    assert isinstance(data, (list, dict))


def test_paper_related_and_lineage(catalog_url, known_paper):
    ref = known_paper["arxiv_id"]
    related = run_pwc(catalog_url, "paper", "related", ref, "--limit", "2")
    assert related.code == 0, related.err
    assert len(related.out.splitlines()) <= 3
    lineage = run_pwc(catalog_url, "paper", "lineage", "list", ref)
    assert lineage.code == 0, lineage.err
    assert lineage.out.startswith("# Paper lineage\n\n## Paper\n\n")
    assert "\n## Predecessors\n" in lineage.out and "\n## Successors\n" in lineage.out


def test_paper_read_prints_the_stored_markdown_with_non_ascii_text(catalog_url):
    text = run_pwc(catalog_url, "paper", "read", "1706.03762")
    assert text.code == 0 and text.out.startswith("# Attention Is All You Need")
    assert "Résumé" in text.out and text.out.endswith("\n")
    raw = run_pwc(catalog_url, "paper", "read", "1706.03762", "--json").out
    assert "Résumé" in raw  # UTF-8 kept, not \u-escaped
    assert json.loads(raw)["data"]["paper"] == "1706.03762"


def test_vision_transformer_search_finds_vit(catalog_url):
    data = _data(catalog_url, "search", "vision transformer", "--limit", "3")
    assert "2010.11929" in [paper["arxiv_id"] for paper in data["results"]]


def test_lowercase_exact_title_resolves(catalog_url):
    data = _data(catalog_url, "paper", "info", "attention   is all you need")
    assert data["arxiv_id"] == "1706.03762"


def test_catalog_confirms_author_and_task_filters(catalog_url):
    by_author = run_pwc(catalog_url, "paper", "list", "--author", "ashish  vaswani")
    assert by_author.code == 0, by_author.err
    assert "1706.03762\tAttention Is All You Need" in by_author.out
    by_task = _data(catalog_url, "paper", "list", "--task", "Image Classification")
    assert "2010.11929" in [paper["arxiv_id"] for paper in by_task["results"]]


def test_vit_evaluations_are_listed(catalog_url):
    text = run_pwc(catalog_url, "paper", "evaluations", "2010.11929")
    assert "| ImageNet | ViT-H/14 | Top 1 Accuracy: 88.55%" in text.out


def test_lineage_of_attention(catalog_url):
    text = run_pwc(catalog_url, "paper", "lineage", "list", "1706.03762").out
    assert "- [BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding]" \
           "(https://paperswithcode.co/paper/1810.04805) (`1810.04805`)" in text


def test_unknown_title_and_unknown_id(catalog_url):
    missing = run_pwc(catalog_url, "paper", "info", "A Title That Surely Does Not Exist Anywhere")
    assert missing.code == 4 and missing.err.startswith("pwc: Paper title not found: ")
    unknown = run_pwc(catalog_url, "paper", "info", "2999.99999")
    assert (unknown.code, unknown.out) == (3, "") and "(404)" in unknown.err


def test_query_layer_matches_json_output(catalog_url, capsys):
    printed = _data(catalog_url, "search", "vision transformer", "--limit", "3")
    capsys.readouterr()
    with Client(catalog_url) as client:
        assert query(("search",), {"query": "vision transformer", "limit": 3}, client) == printed
    assert capsys.readouterr().out == ""
