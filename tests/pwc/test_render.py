"""Output primitives (docs/cli-contract.md §1.2, §1.3, §4.2)."""

from __future__ import annotations

import io

import pytest

from pwc.errors import ResponseError
from pwc.render import (
    Output,
    clean_cell,
    entity_link,
    format_table,
    heading,
    json_envelope,
    md_escape,
    open_cell,
    pagination_hint,
    paper_url,
    render_paper_table,
    result_list,
    result_total,
    site_url,
    thousands,
)


def _out(isatty: bool = False) -> Output:
    return Output(io.StringIO(), io.StringIO(), isatty)


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(None, "", id="none-empty"),
    pytest.param("a\\b", "a\\\\b", id="backslash"),
    pytest.param("a\tb", "a\\tb", id="tab"),
    pytest.param("a\r\nb", "a\\nb", id="crlf"),
    pytest.param(42, "42", id="int"),
])
def test_clean_cell_escapes_table_breaking_characters(value, expected):
    assert clean_cell(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param(None, "—", id="none"),
    pytest.param("", "—", id="empty"),
    pytest.param(0, "0", id="zero-is-a-value"),
    pytest.param("a|b\\c\nd", "a\\|b\\\\c d", id="pipe-backslash-newline"),
])
def test_md_escape_marks_missing_values_with_an_em_dash(value, expected):
    assert md_escape(value) == expected


@pytest.mark.parametrize(("row", "expected"), [
    pytest.param({"is_open": True}, "yes", id="true"),
    pytest.param({"is_open": False}, "no", id="false"),
    pytest.param({"is_open": None}, "unknown", id="null-is-unknown"),
    pytest.param({}, "yes", id="missing-key"),
])
def test_open_cell_shows_null_as_unknown(row, expected):
    assert open_cell(row) == expected


def test_format_table_is_tsv_when_not_aligned():
    text = format_table(["id", "title"], [["1", "a\tb"]], aligned=False)
    assert text == "id\ttitle\n1\ta\\tb\n"


def test_format_table_aligns_with_two_spaces_right_columns_and_unpadded_last_column():
    text = format_table(["name", "year", "location"], [["CVPR 2025", 2025, "Nashville, USA"], ["N", 7, "X"]],
                        right=["year"], aligned=True)
    assert text.splitlines() == ["name       year  location", "CVPR 2025  2025  Nashville, USA",
                                 "N             7  X"]


def test_heading_and_link_follow_the_output_mode():
    assert heading("A|B", _out()) == "# A\\|B"
    assert heading(None, _out(True)) == "Unnamed"
    assert entity_link("View", "https://x", _out()) == "[View](https://x)"
    assert entity_link("View", "https://x", _out(True)) == "View: https://x"


def test_site_urls_percent_encode_references():
    assert paper_url("cs/0101001") == "https://paperswithcode.co/paper/cs%2F0101001"
    assert site_url("task", "scene-text", 3) == "https://paperswithcode.co/tasks/scene-text"
    assert site_url("organization", None, 7) == "https://paperswithcode.co/orgs/7"


def test_json_envelope_is_compact_utf8():
    assert json_envelope({"t": "é"}) == '{"schema_version":"v1","data":{"t":"é"}}'


def test_thousands_separators():
    assert thousands(13086) == "13,086"
    assert thousands(None) == "None"


@pytest.mark.parametrize(("payload", "total"), [
    pytest.param({"count": 30, "results": []}, 30, id="count"),
    pytest.param({"count": 0, "total": 12, "results": []}, 12, id="total-when-count-zero"),
    pytest.param([], None, id="bare-list"),
])
def test_result_total_prefers_count_then_total(payload, total):
    assert result_total(payload) == total


@pytest.mark.parametrize(("payload", "message"), [
    pytest.param("x", "unexpected response shape", id="scalar"),
    pytest.param({"count": 1}, "did not contain a result list", id="no-list"),
])
def test_result_list_rejects_bad_shapes(payload, message):
    with pytest.raises(ResponseError, match=message):
        result_list(payload)


def test_result_list_reads_items_and_skips_non_objects():
    assert result_list({"items": [{"id": 1}, 3]}) == [{"id": 1}]


def test_pagination_hint_only_when_more_rows_exist():
    out = _out()
    pagination_hint(out, {"count": 21}, page=1, page_size=20)
    pagination_hint(out, {"count": 20}, page=1, page_size=20)
    assert out.stderr.getvalue() == "# more: rerun with --page 2\n"


def test_pagination_hint_at_the_last_reachable_page_says_to_narrow_instead():
    out = _out()
    pagination_hint(out, {"count": 5000}, page=100, page_size=3)
    assert out.stderr.getvalue() == "# more: 5000 in all; --page stops at 100: narrow the filters, or show more rows per page\n"


def test_paper_table_with_implementation_coverage():
    out = _out()
    render_paper_table(out, {"results": [{"id": "9", "arxiv_id": "2501.01234", "title": "Line one\nline two",
                                          "published": "2025-01-02", "citation_count": 42,
                                          "has_official_implementation": True, "code_repository_count": 3}]},
                       coverage=True)
    assert out.stdout.getvalue() == ("id\ttitle\tyear\tcitations\tofficial_implementation\tcode_repositories\n"
                                     "2501.01234\tLine one\\nline two\t2025\t42\ttrue\t3\n")
