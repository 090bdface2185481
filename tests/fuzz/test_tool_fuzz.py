"""Tool arguments drawn from each tool's inputSchema (and mutated), unknown tools, tampered cursors.

Against a real embedded gateway over the sample catalog (chunk size 1 KiB, so
``read_paper`` hands out continuation cursors). Properties: :mod:`tests.fuzz.oracle`.
"""

from __future__ import annotations

import string
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pwc_mcp_core.tools.cursors import CursorCodec
from tests.conftest import TEST_CURSOR_KEY, ServerProcess
from tests.fuzz.conftest import CONCURRENCY_LIMIT, post_json, tool_call
from tests.fuzz.oracle import check_answer
from tests.fuzz.strategies import arguments_for, json_values, mutated_arguments, request_ids

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
PAPER = "1706.03762"
OTHER_PAPER = "1810.04805"
B64URL = string.ascii_letters + string.digits + "-_"


@pytest.fixture(scope="module")
def tools(embedded_gateway: ServerProcess, http: httpx.Client) -> dict[str, dict[str, Any]]:
    """Tool name → inputSchema, from the running gateway's ``tools/list``."""
    response, _ = post_json(http, embedded_gateway.mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    return {tool["name"]: tool["inputSchema"] for tool in response.json()["result"]["tools"]}


def _call(http: httpx.Client, url: str, name: str, arguments: Any, request_id: Any = 1) -> dict[str, Any]:
    response, sent = post_json(http, url, tool_call(name, arguments, request_id))
    body = check_answer(response, sent, request_id)
    assert response.status_code != 429, "a sequential client was throttled: a leaked concurrency slot?"
    return body


def _text(body: dict[str, Any]) -> str:
    return body["result"]["content"][0]["text"]


@FUZZ
@given(data=st.data())
def test_schema_valid_arguments_for_every_tool_get_a_result_or_a_prefixed_tool_error(
        embedded_gateway: ServerProcess, http: httpx.Client, tools: dict[str, dict[str, Any]],
        data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(tools)), label="tool")
    arguments = data.draw(arguments_for(tools[name]), label="arguments")
    body = _call(http, embedded_gateway.mcp_url, name, arguments)
    assert "result" in body or body["error"]["code"] in (-32602, -32603), body
    if body.get("result", {}).get("isError"):
        assert _text(body).split(":", 1)[0] in {"not_found", "ambiguous", "invalid_argument", "upstream_error",
                                                "upstream_timeout", "rate_limited"}, _text(body)


@FUZZ
@given(data=st.data(), request_id=request_ids)
def test_mutated_arguments_are_refused_cleanly(embedded_gateway: ServerProcess, http: httpx.Client,
                                              tools: dict[str, dict[str, Any]], data: st.DataObject,
                                              request_id: Any) -> None:
    name = data.draw(st.sampled_from(sorted(tools)), label="tool")
    arguments = data.draw(mutated_arguments(tools[name]), label="arguments")
    _call(http, embedded_gateway.mcp_url, name, arguments, request_id)


@FUZZ
@given(name=st.one_of(st.text(max_size=40), st.sampled_from(["", " ", "search_papers ", "SEARCH_PAPERS",
                                                              "../search_papers", "search_papers\x00"])),
       arguments=json_values)
def test_unknown_tools_are_refused_cleanly(embedded_gateway: ServerProcess, http: httpx.Client, name: str,
                                           arguments: Any) -> None:
    _call(http, embedded_gateway.mcp_url, name, arguments)


@pytest.fixture(scope="module")
def first_chunk(embedded_gateway: ServerProcess, http: httpx.Client) -> dict[str, Any]:
    """The first ``read_paper`` result for PAPER (its ``next_cursor`` is a real cursor)."""
    body = _call(http, embedded_gateway.mcp_url, "read_paper", {"paper": PAPER})
    result = body["result"]["structuredContent"]
    assert result["next_cursor"], "the sample paper fits one 1 KiB chunk?"
    return result


@pytest.fixture(scope="module")
def second_chunk(embedded_gateway: ServerProcess, http: httpx.Client, first_chunk: dict[str, Any]) -> dict:
    body = _call(http, embedded_gateway.mcp_url, "read_paper", {"paper": PAPER, "cursor": first_chunk["next_cursor"]})
    return body["result"]["structuredContent"]


@FUZZ
@given(data=st.data())
def test_a_tampered_cursor_is_refused_or_decodes_to_the_same_session(
        embedded_gateway: ServerProcess, http: httpx.Client, first_chunk: dict[str, Any],
        second_chunk: dict[str, Any], data: st.DataObject) -> None:
    cursor: str = first_chunk["next_cursor"]
    flips = data.draw(st.lists(st.integers(0, len(cursor) - 1), min_size=1, max_size=3, unique=True), label="at")
    tampered = list(cursor)
    for index in flips:
        if tampered[index] != ".":
            tampered[index] = data.draw(st.sampled_from(B64URL).filter(lambda c, o=cursor[index]: c != o))
    body = _call(http, embedded_gateway.mcp_url, "read_paper", {"paper": PAPER, "cursor": "".join(tampered)})
    result = body["result"]
    if result.get("isError"):
        assert _text(body).startswith("invalid_argument:"), _text(body)
    else:  # base64 ignores the unused low bits of the last character: same bytes, same signature
        assert result["structuredContent"]["markdown"] == second_chunk["markdown"]


def test_a_cursor_signed_with_another_key_is_refused(embedded_gateway: ServerProcess, http: httpx.Client,
                                                    first_chunk: dict[str, Any]) -> None:
    state = CursorCodec(TEST_CURSOR_KEY).decode(first_chunk["next_cursor"], PAPER)
    forged = CursorCodec("an-attacker-key-that-is-not-ours-0000").encode(state)
    body = _call(http, embedded_gateway.mcp_url, "read_paper", {"paper": PAPER, "cursor": forged})
    assert body["result"]["isError"] and _text(body).startswith("invalid_argument:"), body


def test_a_cursor_for_another_paper_is_refused(embedded_gateway: ServerProcess, http: httpx.Client,
                                              first_chunk: dict[str, Any]) -> None:
    body = _call(http, embedded_gateway.mcp_url, "read_paper",
                 {"paper": OTHER_PAPER, "cursor": first_chunk["next_cursor"]})
    assert body["result"]["isError"] and _text(body).startswith("invalid_argument:"), body
    assert "different paper" in _text(body)


@pytest.mark.parametrize("cursor", [
    pytest.param("a" * 5000 + ".b", id="over-long"),
    pytest.param("x.y", id="token-shaped-garbage"),
    pytest.param("..", id="dots"),
    pytest.param(12345, id="integer"),
    pytest.param(["a.b"], id="list"),
    pytest.param("\u202e.\u202e", id="bidi"),
])
def test_malformed_cursors_are_refused_cleanly(embedded_gateway: ServerProcess, http: httpx.Client,
                                               cursor: Any) -> None:
    _call(http, embedded_gateway.mcp_url, "read_paper", {"paper": PAPER, "cursor": cursor})


def test_after_the_tool_fuzz_one_client_still_gets_its_full_concurrency(embedded_gateway: ServerProcess) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tests.fuzz.conftest import BASE_HEADERS

    def one(i: int) -> int:
        return httpx.post(embedded_gateway.mcp_url, json=tool_call("list_tasks", {"limit": 1}, i),
                          headers=BASE_HEADERS, timeout=30).status_code

    assert embedded_gateway.proc.poll() is None
    with ThreadPoolExecutor(max_workers=CONCURRENCY_LIMIT) as pool:
        assert list(pool.map(one, range(CONCURRENCY_LIMIT))) == [200] * CONCURRENCY_LIMIT
