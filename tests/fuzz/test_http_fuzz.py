"""Bad bytes, bad JSON-RPC and bad headers against a real embedded gateway: no 5xx, no leaks, ids kept.

Properties: :mod:`tests.fuzz.oracle`. Example counts are in RELIABILITY.md.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ServerProcess
from tests.fuzz.conftest import BASE_HEADERS, post_json, tool_call
from tests.fuzz.oracle import NO_ID, check_answer
from tests.fuzz.strategies import HEADER_NAMES, header_values, json_values, request_ids

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MIB = 1024 * 1024
VALID = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'

BAD_BODIES = [
    pytest.param(b"", NO_ID, id="empty"),
    pytest.param(b"{", NO_ID, id="truncated-object"),
    pytest.param(b"null", NO_ID, id="null"),
    pytest.param(b"[]", NO_ID, id="empty-batch"),
    pytest.param(b"[" + VALID + b"," + VALID + b"]", NO_ID, id="batch-of-two"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', NO_ID, id="trailing-garbage"),
    pytest.param(b'\xff\xfe{"jsonrpc":"2.0"}', NO_ID, id="invalid-utf8-prefix"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping\xc3\x28"}', NO_ID, id="invalid-utf8-inside-string"),
    # A lone surrogate is a legal JSON escape: the id is echoed back exactly as sent.
    pytest.param(b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', "\ud800", id="lone-surrogate-id"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"\\udfff"}', 1, id="lone-surrogate-method"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task",'
                 b'"arguments":{"task":"\\ud800"}}}', 1, id="lone-surrogate-argument"),
    pytest.param(b"[" * 10_000 + b"]" * 10_000, NO_ID, id="10000-nested-arrays"),
    pytest.param(b'{"a":' * 10_000 + b"1" + b"}" * 10_000, NO_ID, id="10000-nested-objects"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":'
                 + b"[" * 5000 + b"]" * 5000 + b"}}", 1, id="deep-arguments"),
    pytest.param(b'{"jsonrpc":"2.0","id":1e308,"method":"ping"}', NO_ID, id="id-1e308"),
    pytest.param(b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}', NO_ID, id="id-overflowing-float"),
    pytest.param(b'{"jsonrpc":"2.0","id":' + b"9" * 1000 + b',"method":"ping"}', 10**1000 - 1,
                 id="id-10-pow-1000"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":'
                 b'{"limit":' + b"9" * 5000 + b"}}}", 1, id="arg-5000-digit-integer"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_papers","arguments":'
                 b'{"query":"x","limit":NaN}}}', 1, id="arg-NaN"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_papers","arguments":'
                 b'{"query":"x","limit":-Infinity}}}', 1, id="arg-minus-Infinity"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * MIB + b'"}}', 1,
                 id="1MiB-string"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_papers","arguments":'
                 b'{"query":"' + b"q" * MIB + b'"}}}', 1, id="1MiB-query"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (3 * MIB) + b'"}}',
                 NO_ID, id="3MiB-body"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', 2, id="duplicate-keys"),
    pytest.param(b'{"jsonrpc":"1.0","id":1,"method":"ping"}', 1, id="wrong-jsonrpc-version"),
    pytest.param(b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"list_tasks"}}', NO_ID,
                 id="notification"),
]


@pytest.mark.parametrize(("body", "request_id"), BAD_BODIES)
def test_a_bad_body_is_answered_with_a_4xx_or_a_jsonrpc_error(embedded_gateway: ServerProcess,
                                                              http: httpx.Client, body: bytes,
                                                              request_id: object) -> None:
    response = http.post(embedded_gateway.mcp_url, content=body, headers=BASE_HEADERS)
    check_answer(response, body, request_id)


@FUZZ
@given(body=st.one_of(st.binary(max_size=2048), st.text(max_size=512).map(lambda t: t.encode("utf-8")),
                      st.builds(lambda v, junk: json.dumps(v).encode() + junk, json_values, st.binary(max_size=8))))
def test_random_bytes_never_give_a_5xx_or_a_leak(embedded_gateway: ServerProcess, http: httpx.Client,
                                                 body: bytes) -> None:
    check_answer(http.post(embedded_gateway.mcp_url, content=body, headers=BASE_HEADERS), body)


@FUZZ
@given(request_id=st.one_of(request_ids, json_values),
       method=st.one_of(st.sampled_from(["initialize", "ping", "tools/list", "tools/call", "resources/read",
                                         "resources/list", "resources/templates/list", "prompts/list",
                                         "prompts/get", "completion/complete", "logging/setLevel",
                                         "server/discover", "notifications/initialized"]),
                        st.text(max_size=30), json_values),
       params=st.one_of(json_values, st.fixed_dictionaries({}, optional={
           "name": st.one_of(st.text(max_size=30), json_values), "arguments": json_values,
           "uri": st.one_of(st.text(max_size=60), json_values), "cursor": json_values,
           "_meta": json_values, "protocolVersion": json_values, "level": json_values})),
       drop=st.sets(st.sampled_from(["jsonrpc", "id", "method", "params"]), max_size=2))
def test_wrong_types_in_every_envelope_field_never_give_a_5xx_and_keep_the_id(
        embedded_gateway: ServerProcess, http: httpx.Client, request_id: Any, method: Any, params: Any,
        drop: set[str]) -> None:
    payload = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    for key in drop:
        payload.pop(key)
    valid_id = "id" in payload and (isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)))
    response, sent = post_json(http, embedded_gateway.mcp_url, payload)
    check_answer(response, sent, request_id if valid_id else NO_ID)


@FUZZ
@given(headers=st.dictionaries(st.sampled_from(HEADER_NAMES), header_values, max_size=5),
       name=st.sampled_from(["list_tasks", "get_task", "nope"]), request_id=request_ids)
def test_random_transport_headers_never_give_a_5xx_or_a_leak(embedded_gateway: ServerProcess, http: httpx.Client,
                                                            headers: dict[str, str], name: str,
                                                            request_id: Any) -> None:
    payload = tool_call(name, {"limit": 1} if name == "list_tasks" else {"task": "image-classification"},
                        request_id)
    response, sent = post_json(http, embedded_gateway.mcp_url, payload,
                               headers={k: v.encode("latin-1") for k, v in headers.items()})
    check_answer(response, sent, request_id)


def test_the_gateway_survived_and_no_concurrency_slot_leaked(embedded_gateway: ServerProcess) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from tests.fuzz.conftest import CONCURRENCY_LIMIT

    def one(i: int) -> int:
        payload = {"jsonrpc": "2.0", "id": i, "method": "tools/list"}
        return httpx.post(embedded_gateway.mcp_url, json=payload, headers=BASE_HEADERS, timeout=30).status_code

    assert embedded_gateway.proc.poll() is None
    with ThreadPoolExecutor(max_workers=CONCURRENCY_LIMIT) as pool:
        assert list(pool.map(one, range(CONCURRENCY_LIMIT))) == [200] * CONCURRENCY_LIMIT
