"""The §3.1 error mapping table (docs/tool-contract.md) with its test vectors."""

from __future__ import annotations

import logging

import pytest

from pwc.errors import (
    AmbiguousError,
    HTTPStatusError,
    NotFoundError,
    RequestTimeout,
    ResponseError,
    TransportError,
    UsageError,
)
from pwc_mcp_core.errors import ToolError
from pwc_mcp_core.tools.error_texts import (
    GENERIC_UPSTREAM,
    INTERNAL_ERROR,
    TIMED_OUT,
    error_result,
    tool_error_text,
)


@pytest.mark.parametrize(("exc", "text"), [
    pytest.param(HTTPStatusError(422, '{"detail":"page_size must be <= 100"}\n\x00'),
                 'invalid_argument: page_size must be <= 100', id="422-body-cleaned"),
    pytest.param(HTTPStatusError(422, '{"other": 1}'), "invalid_argument: the catalog rejected the request",
                 id="422-json-without-a-message"),
    pytest.param(HTTPStatusError(400, "\x00\x01  "), "invalid_argument: the catalog rejected the request",
                 id="400-empty-body"),
    pytest.param(HTTPStatusError(400, "x" * 500), "invalid_argument: " + "x" * 200, id="400-cut-to-200"),
    pytest.param(HTTPStatusError(404, "nope"), "not_found: the requested catalog record does not exist",
                 id="404"),
    pytest.param(HTTPStatusError(429, "slow down"),
                 "rate_limited: the Papers With Code catalog is rate limiting; retry later", id="429"),
    pytest.param(HTTPStatusError(500, "boom"), GENERIC_UPSTREAM, id="500-generic"),
    pytest.param(TransportError("API request timed out"),
                 TIMED_OUT, id="timed-out-message"),
    pytest.param(RequestTimeout("API request failed: read"),
                 TIMED_OUT, id="timeout-class"),
    pytest.param(TransportError("API request failed: connection refused"), GENERIC_UPSTREAM, id="transport"),
    pytest.param(ResponseError("Paper not found: 2308.10195"), "not_found: Paper not found: 2308.10195",
                 id="paper-not-found"),
    pytest.param(ResponseError("Task not found: language-modelling; closest results: Language Modeling"),
                 "not_found: Task not found: language-modelling; closest results: Language Modeling",
                 id="task-not-found"),
    pytest.param(ResponseError("Paper title is ambiguous: X; X (1); X (2)"),
                 "ambiguous: Paper title is ambiguous: X; X (1); X (2)", id="ambiguous-title"),
    pytest.param(ResponseError("Papers API did not confirm the requested catalog filters"),
                 "not_found: Papers API did not confirm the requested catalog filters", id="fail-closed"),
    pytest.param(NotFoundError("Something else missing"), "not_found: Something else missing", id="class-nf"),
    pytest.param(AmbiguousError("Two things"), "ambiguous: Two things", id="class-ambiguous"),
    pytest.param(ResponseError("API returned invalid JSON"), GENERIC_UPSTREAM, id="invalid-json"),
    pytest.param(UsageError("unknown metric(s): latency; available metrics: Accuracy"),
                 "invalid_argument: unknown metric(s): latency; available metrics: Accuracy", id="usage"),
    pytest.param(ToolError("no_markdown: no stored Markdown"), "no_markdown: no stored Markdown", id="tool-error"),
    pytest.param(KeyError("x"), INTERNAL_ERROR, id="unexpected"),
])
def test_failures_map_to_the_prefixed_texts_of_the_error_table(exc: BaseException, text: str) -> None:
    assert tool_error_text(exc) == text


def test_generic_upstream_errors_log_only_the_exception_type(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    assert tool_error_text(ResponseError("API returned invalid JSON for secret-query-42")) == GENERIC_UPSTREAM
    assert "secret-query-42" not in caplog.text
    assert "ResponseError" in caplog.text


def test_error_results_are_one_text_block_flagged_is_error() -> None:
    assert error_result("not_found: x") == {"content": [{"type": "text", "text": "not_found: x"}], "isError": True}


@pytest.mark.parametrize(("detail", "parameters", "text"), [
    pytest.param('{"detail":"q has no letters or digits to search for"}', {"query", "limit"},
                 "invalid_argument: query has no letters or digits to search for", id="q-is-query"),
    pytest.param('{"detail":"q must be at most 500 characters"}', {"search"},
                 "invalid_argument: search must be at most 500 characters", id="q-is-search"),
    pytest.param('{"detail":"page_size must be 1-100"}', {"limit"}, "invalid_argument: limit must be 1-100",
                 id="page-size-is-limit"),
    pytest.param('{"detail":"start_date must be on or before end_date"}', {"published_after", "published_before"},
                 "invalid_argument: published_after must be on or before published_before", id="dates"),
    pytest.param('{"detail":"frequency must be high"}', {"query"}, "invalid_argument: frequency must be high",
                 id="no-catalog-name-in-a-word"),
])
def test_catalog_rejections_speak_of_the_tool_parameters_not_the_catalog_json(
        detail: str, parameters: set[str], text: str) -> None:
    assert tool_error_text(HTTPStatusError(422, detail), frozenset(parameters)) == text


def test_catalog_failures_say_when_to_retry() -> None:
    """Like every other error, the catalog's failures carry advice: when to retry, what to ask instead."""
    assert GENERIC_UPSTREAM.startswith("upstream_error: ") and "retry after 5 s" in GENERIC_UPSTREAM
    assert TIMED_OUT.startswith("upstream_timeout: ") and "retry after 5 s" in TIMED_OUT
