"""``pwc search`` against a real local stub (docs/cli-contract.md §2.1, §6 cases 7, 8, 42, 43, 53)."""

from __future__ import annotations

import json

import pytest

from tests.pwc.runner import run_pwc
from tests.pwc.stub import stub_catalog

PAPER = {"id": "9", "arxiv_id": "2501.01234", "title": "Line one\nline two", "published": "2025-01-02",
         "citation_count": 42, "has_official_implementation": True, "code_repository_count": 3}


def test_captured_search_is_tsv_with_escaped_newlines():
    with stub_catalog({"papers/search": {"count": 1, "results": [PAPER]}}) as stub:
        result = run_pwc(stub.url, "search", "vision")
    assert (result.code, result.err) == (0, "")
    assert result.out == "id\ttitle\tyear\tcitations\n2501.01234\tLine one\\nline two\t2025\t42\n"
    assert stub.calls == [("papers/search", {"q": "vision", "page": "1", "page_size": "10", "mode": "hybrid"})]


def test_implementation_coverage_adds_two_columns():
    with stub_catalog({"papers/search": {"count": 1, "results": [PAPER]}}) as stub:
        result = run_pwc(stub.url, "search", "vision", "--implementation-coverage")
    header, row = result.out.splitlines()
    assert header.split("\t")[-2:] == ["official_implementation", "code_repositories"]
    assert row.split("\t")[-2:] == ["true", "3"]


def test_tty_search_is_aligned():
    with stub_catalog({"papers/search": {"count": 1, "results": [dict(PAPER, title="T")]}}) as stub:
        result = run_pwc(stub.url, "search", "vision", isatty=True)
    assert result.out.splitlines() == ["id          title  year  citations", "2501.01234  T      2025         42"]


@pytest.mark.parametrize(("applied", "code"), [
    pytest.param({}, 4, id="unconfirmed"),
    pytest.param({"has_official_implementation": "true"}, 0, id="confirmed-string"),
    pytest.param({"has_official_implementation": True}, 0, id="confirmed-bool"),
])
def test_official_implementation_filter_fails_closed(applied, code):
    body = {"count": 0, "results": [], "applied_filters": applied}
    with stub_catalog({"papers/search": body}) as stub:
        result = run_pwc(stub.url, "search", "vision", "--has-official-implementation")
    assert stub.calls[0][1]["has_official_implementation"] == "true"
    assert result.code == code
    if code:
        assert "did not confirm has_official_implementation" in result.err and result.out == ""


def test_dates_are_sent_as_iso_dates():
    with stub_catalog({"papers/search": {"count": 0, "results": []}}) as stub:
        result = run_pwc(stub.url, "search", "date filtering", "--start-date", "2026-08-01",
                         "--end-date", "2026-08-21")
    assert result.code == 0
    assert (stub.calls[0][1]["start_date"], stub.calls[0][1]["end_date"]) == ("2026-08-01", "2026-08-21")


def test_reversed_dates_are_a_usage_error_without_a_request():
    with stub_catalog({}) as stub:
        result = run_pwc(stub.url, "search", "x", "--start-date", "2026-08-21", "--end-date", "2026-08-01")
    assert (result.code, result.err) == (2, "pwc: start date must be on or before end date\n")
    assert stub.calls == []


def test_json_mode_prints_the_raw_body_and_no_hint():
    body = {"count": 50, "results": [PAPER], "applied_filters": {}}
    with stub_catalog({"papers/search": body}) as stub:
        result = run_pwc(stub.url, "search", "none", "--json")
    assert result.err == ""
    assert json.loads(result.out) == {"schema_version": "v1", "data": body}
    assert result.out.count("\n") == 1


def test_pagination_hint_in_text_mode():
    with stub_catalog({"papers/search": {"count": 50, "results": [PAPER]}}) as stub:
        result = run_pwc(stub.url, "search", "x", "--limit", "10", "--page", "2")
    assert result.err == "# more: rerun with --page 3\n"


def test_query_starting_with_dash_after_double_dash():
    with stub_catalog({"papers/search": {"count": 0, "results": []}}) as stub:
        result = run_pwc(stub.url, "search", "--", "-vit")
    assert result.code == 0 and stub.calls[0][1]["q"] == "-vit"


LONG = ("Transformers dominate sequence modelling. " * 3 + "We study one word at a time in great detail "
        "without any sentence end for a very long stretch of text that keeps going on and on " * 3)


def test_abstracts_are_asked_for_cut_at_a_sentence_end_and_counted():
    body = {"count": 2, "strong_count": 2, "results": [dict(PAPER, abstract=LONG, match="strong"),
                                                       dict(PAPER, id="8", arxiv_id=None, abstract="Short.",
                                                            match="weak")]}
    with stub_catalog({"papers/search": body}) as stub:
        result = run_pwc(stub.url, "search", "vision", "--abstracts", "--abstract-chars", "150", "--json")
    assert stub.calls[0][1]["abstracts"] == "true"
    data = json.loads(result.out)["data"]
    first, second = data["results"]
    assert len(first["abstract"]) <= 150 and first["abstract"].endswith("modelling. …")
    assert second["abstract"] == "Short."
    assert (data["abstract_chars"], data["abstracts_cut"]) == (150, 1)


def test_the_table_says_match_and_abstract_and_hints_name_the_entity_and_weak_results():
    body = {"count": 1, "strong_count": 0, "results": [dict(PAPER, title="T", abstract="A.", match="weak")],
            "matched_entities": [{"type": "task", "id": "1", "slug": "named-entity-recognition",
                                  "name": "Named Entity Recognition", "matched": "NER", "via": "acronym",
                                  "filter": {"task": "named-entity-recognition"}}]}
    with stub_catalog({"papers/search": body}) as stub:
        result = run_pwc(stub.url, "search", "NER", "--abstracts")
    assert result.out.splitlines() == ["id\ttitle\tyear\tcitations\tmatch\tabstract", "2501.01234\tT\t2025\t42\tweak\tA."]
    assert "# matched task: Named Entity Recognition (narrow: pwc paper list --task named-entity-recognition)" in result.err
    assert "# No strong match" in result.err


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_a_usage_error_before_any_request(query: str) -> None:
    with stub_catalog({"papers/search": {"count": 0, "results": []}}) as stub:
        result = run_pwc(stub.url, "search", query)
    assert (result.code, result.out) == (2, "")
    assert result.err == "pwc: the query must not be empty: give a title, topic, author or arXiv ID\n"
    assert stub.calls == []
