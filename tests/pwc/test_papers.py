"""``pwc paper list | recent | trending | related`` against a real local stub (spec §2.5–§2.8, §3.3, §6)."""

from __future__ import annotations

import json

import pytest

from tests.pwc.runner import run_pwc
from tests.pwc.stub import Reply, stub_catalog

FILTERS = ["--task", "Image Classification", "--method", "Vision Transformer", "--conference", "CVPR 2026",
           "--framework", "vLLM", "--organization", "Qwen"]
AUTHORS = [{"id": "264", "name": "Kaiming He"}, {"id": "26405", "name": "Yilun Du", "hf_username": "yilundu"}]
ROW = {"id": "5", "arxiv_id": "2601.00005", "title": "A", "published": "2026-01-05", "citation_count": 1}


def _listing(applied: dict | None, results: list | None = None, count: int = 1) -> dict:
    body = {"count": count, "results": results if results is not None else [ROW]}
    if applied is not None:
        body["applied_filters"] = applied
    return body


def test_paper_list_sends_every_filter_and_accepts_a_full_echo():
    applied = {"task": "Image Classification", "method": "Vision Transformer", "conference": "CVPR 2026",
               "framework": "vLLM", "organization": "Qwen", "authors": AUTHORS}
    with stub_catalog({"papers/": _listing(applied)}) as stub:
        result = run_pwc(stub.url, "paper", "list", *FILTERS, "--author", "Kaiming He", "--author", "@yilundu")
    assert (result.code, result.err) == (0, "")
    assert stub.calls == [("papers/", {
        "page": "1", "page_size": "20", "task": "Image Classification", "method": "Vision Transformer",
        "conference": "CVPR 2026", "framework": "vLLM", "organization": "Qwen",
        "author": ["Kaiming He", "@yilundu"], "latest_only": "true", "order_by": "trending",
        "order_dir": "desc", "include_resources": "false"})]
    assert result.out.splitlines()[1] == "2601.00005\tA\t2026\t1"


def test_more_than_ten_authors_is_a_usage_error_without_request():
    argv = [arg for i in range(11) for arg in ("--author", f"A{i}")]
    with stub_catalog({}) as stub:
        result = run_pwc(stub.url, "paper", "list", *argv)
    assert result.code == 2 and "at most 10 author filters" in result.err and stub.calls == []


def test_dates_are_sent_and_must_be_confirmed():
    applied = {"start_date": "2026-08-01", "end_date": "2026-08-21"}
    with stub_catalog({"papers/": _listing(applied)}) as stub:
        result = run_pwc(stub.url, "paper", "list", "--start-date", "2026-08-01", "--end-date", "2026-08-21")
    assert result.code == 0
    assert stub.calls[0][1]["start_date"] == "2026-08-01" and stub.calls[0][1]["end_date"] == "2026-08-21"


@pytest.mark.parametrize(("argv", "body", "message"), [
    pytest.param(["--organization", "Qwen"], {"count": 20, "results": []}, "server must be upgraded",
                 id="no-applied-filters"),
    pytest.param(["--organization", "Qwen"], _listing({"organization": "Alibaba"}), "catalog filters",
                 id="different-value"),
    pytest.param(["--has-official-implementation"], _listing({}), "catalog filters", id="official-unconfirmed"),
    pytest.param(["--author", "Kaiming He"], _listing({}), "did not confirm", id="author-unconfirmed"),
    pytest.param(["--author", "Kaiming He", "--author", "@yilundu"], _listing({"authors": AUTHORS[:1]}),
                 "did not confirm", id="second-author-missing"),
    pytest.param(["--author", "Kaiming He"], _listing({"authors": [{"id": "x", "name": "Kaiming He"}]}),
                 "did not confirm", id="author-id-not-numeric"),
])
def test_unconfirmed_filters_fail_closed_with_exit_4(argv, body, message):
    with stub_catalog({"papers/": body}) as stub:
        result = run_pwc(stub.url, "paper", "list", *argv)
    assert (result.code, result.out) == (4, "")
    assert message in result.err


@pytest.mark.parametrize("argv", [
    pytest.param(["--author", "000264"], id="numeric-id"),
    pytest.param(["--author", "  kaiming   he "], id="normalised-name"),
    pytest.param(["--has-official-implementation"], id="official"),
])
def test_confirmed_filters_pass(argv):
    applied = {"authors": AUTHORS, "has_official_implementation": True}
    with stub_catalog({"papers/": _listing(applied)}) as stub:
        result = run_pwc(stub.url, "paper", "list", *argv)
    assert (result.code, result.err) == (0, "")
    if "--has-official-implementation" in argv:
        assert stub.calls[0][1]["has_official_implementation"] == "true"


AMBIGUOUS = {"detail": {"code": "ambiguous_author", "reference": "Alex Kim", "candidates": [
    {"id": 41, "name": "Alex Kim", "hf_username": "alex-one"}, {"id": 72, "name": "Alex Kim", "hf_username": None},
    {"id": "x", "name": "Skipped"}]}}


@pytest.mark.parametrize(("status", "body", "message"), [
    pytest.param(409, AMBIGUOUS, "pwc: Alex Kim is ambiguous; retry with --author 41 (Alex Kim, @alex-one) "
                 "or --author 72 (Alex Kim)\n", id="ambiguous"),
    pytest.param(404, {"detail": "Author not found: Alex Kim"}, "pwc: Author not found: Alex Kim\n", id="string"),
    pytest.param(422, "not json", "pwc: author filter request failed (422)\n", id="unparsable"),
])
def test_author_http_errors_become_usage_errors(status, body, message):
    with stub_catalog({"papers/": Reply(body, status=status)}) as stub:
        result = run_pwc(stub.url, "paper", "list", "--author", "Alex Kim")
    assert (result.code, result.err) == (2, message)


def test_http_error_without_author_stays_exit_3():
    with stub_catalog({"papers/": Reply({"detail": "x"}, status=409)}) as stub:
        result = run_pwc(stub.url, "paper", "list")
    assert result.code == 3


def test_paper_list_json_is_the_raw_body_and_hint_uses_page_size():
    body = _listing({}, count=45)
    with stub_catalog({"papers/": body}) as stub:
        as_json = run_pwc(stub.url, "paper", "list", "--json")
        as_text = run_pwc(stub.url, "paper", "list", "--page", "2", "--all-versions", "--order-by", "citation_count")
    assert json.loads(as_json.out)["data"] == body and as_json.err == ""
    assert as_text.err == "# more: rerun with --page 3\n"
    assert stub.calls[1][1]["latest_only"] == "false" and stub.calls[1][1]["order_by"] == "citation_count"


@pytest.mark.parametrize(("argv", "path", "params", "body"), [
    pytest.param(["recent"], "papers/recent", {"limit": "10"}, [ROW], id="recent-bare-list"),
    pytest.param(["trending", "--min-velocity", "1.5"], "papers/trending",
                 {"limit": "20", "max_age_days": "180", "min_velocity": "1.5"}, {"count": 1, "results": [ROW]},
                 id="trending"),
    pytest.param(["related", "2501.01234"], "papers/2501.01234/related", {"limit": "4"}, [ROW], id="related"),
    pytest.param(["related", "cs/0101001", "--limit", "2"], "papers/cs%2F0101001/related", {"limit": "2"},
                 {"results": [ROW]}, id="related-legacy-id-encoded"),
])
def test_paper_listings_call_their_endpoint_and_print_the_paper_table(argv, path, params, body):
    with stub_catalog({path: body}) as stub:
        result = run_pwc(stub.url, "paper", *argv)
        as_json = run_pwc(stub.url, "paper", *argv, "--json")
    assert (result.code, result.err) == (0, "")
    assert stub.calls[0] == (path, params)
    assert result.out == "id\ttitle\tyear\tcitations\n2601.00005\tA\t2026\t1\n"
    assert json.loads(as_json.out)["data"] == body


@pytest.mark.parametrize("argv", [pytest.param(["recent", "--limit", "1"], id="recent"),
                                  pytest.param(["trending", "--limit", "1"], id="trending"),
                                  pytest.param(["related", "1", "--limit", "1"], id="related")])
def test_listings_without_a_page_flag_never_suggest_one(argv):
    body = {"count": 30, "results": [ROW]}
    with stub_catalog({"papers/recent": body, "papers/trending": body, "papers/1/related": body}) as stub:
        result = run_pwc(stub.url, "paper", *argv)
    assert (result.code, result.err) == (0, "")


def test_malformed_listing_exits_4():
    with stub_catalog({"papers/recent": {"count": 1}}) as stub:
        result = run_pwc(stub.url, "paper", "recent")
    assert (result.code, result.err) == (4, "pwc: API response did not contain a result list\n")
