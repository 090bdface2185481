"""JSON-RPC builders, id splicing, the status table, the `Call` envelope and `classify`."""

from __future__ import annotations

import json

import pytest

from pwc_mcp_core.protocol import jsonrpc
from pwc_mcp_core.protocol.eras import classify, decode_header_value, protocol_label, route
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.tools.registry import tools

TOOL_NAMES = frozenset(tool.name for tool in tools())


@pytest.mark.parametrize(("era", "code", "status"), [
    pytest.param("legacy", -32700, 400, id="legacy-parse"),
    pytest.param("legacy", -32600, 400, id="legacy-invalid-request"),
    pytest.param("legacy", -32601, 200, id="legacy-method-not-found"),
    pytest.param("legacy", -32602, 200, id="legacy-invalid-params"),
    pytest.param("legacy", -32603, 200, id="legacy-internal"),
    pytest.param("legacy", -32002, 200, id="legacy-resource-not-found"),
    pytest.param("modern", -32700, 400, id="modern-parse"),
    pytest.param("modern", -32600, 400, id="modern-invalid-request"),
    pytest.param("modern", -32601, 404, id="modern-method-not-found"),
    pytest.param("modern", -32602, 400, id="modern-invalid-params"),
    pytest.param("modern", -32603, 200, id="modern-internal"),
    pytest.param("modern", -32020, 400, id="modern-header-mismatch"),
    pytest.param("modern", -32021, 400, id="modern-missing-capability"),
    pytest.param("modern", -32022, 400, id="modern-unsupported-version"),
])
def test_the_status_table_maps_each_era_and_code(era: jsonrpc.Era, code: int, status: int) -> None:
    assert jsonrpc.http_status(era, code) == status


@pytest.mark.parametrize("id_", [1, "x", "ü", None, 0])
def test_splice_id_builds_a_complete_response_without_parsing(id_: object) -> None:
    body = jsonrpc.result_body({"a": "é"})
    out = jsonrpc.splice_id(jsonrpc.encode_id(id_), body)
    assert json.loads(out) == {"jsonrpc": "2.0", "id": id_, "result": {"a": "é"}}
    assert "é".encode() in out  # ensure_ascii=False


def test_splice_id_accepts_bodies_with_whitespace() -> None:
    out = jsonrpc.splice_id(b"3", b'{"result": {"x": 1}}')
    assert json.loads(out) == {"jsonrpc": "2.0", "id": 3, "result": {"x": 1}}


def test_error_body_omits_absent_data_and_keeps_given_data() -> None:
    assert json.loads(jsonrpc.error_body(-32601, "Method not found")) == {
        "error": {"code": -32601, "message": "Method not found"}}
    assert json.loads(jsonrpc.error_body(-32002, "nf", {"uri": "u"}))["error"]["data"] == {"uri": "u"}


@pytest.mark.parametrize(("body", "expected"), [
    pytest.param(b'{"result":{}}', {"resultType": "complete"}, id="empty-result"),
    pytest.param(b'{"result": {"a": 1}}', {"resultType": "complete", "a": 1}, id="spaced"),
])
def test_insert_into_result_adds_a_first_member(body: bytes, expected: dict) -> None:
    out = jsonrpc.insert_into_result(body, b'"resultType":"complete"')
    assert json.loads(out)["result"] == expected


def test_a_call_round_trips_through_json() -> None:
    call = Call("tools/call", "get_task", {"name": "ü"}, "modern", "2026-07-28", 123.5)
    assert Call.from_json(call.to_json()) == call


@pytest.mark.parametrize("raw", [b"{", b"[]", b'{"v":2}', b'{"v":1,"kind":"x","name":"a","arguments":{},'
                                 b'"era":"legacy","protocol":"p","deadline":1}'])
def test_a_malformed_call_envelope_is_a_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError):
        Call.from_json(raw)


@pytest.mark.parametrize(("body", "headers", "tool", "semantic"), [
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{}}}', {},
                 "search_papers", True, id="mode-omitted-is-hybrid"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":"hybrid"}}}', {},
                 "search_papers", True, id="hybrid"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":"semantic"}}}', {},
                 "search_papers", True, id="semantic"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":"keyword"}}}', {},
                 "search_papers", False, id="keyword"),
    pytest.param(b'{"method":"tools/call","params":{"name":"get_task"}}', {"Mcp-Name": "search_papers"},
                 "get_task", False, id="body-wins-over-header"),
    pytest.param(b'{"method":"tools/call","params":{}}', {"Mcp-Name": "search_papers"},
                 "search_papers", True, id="header-fallback"),
    pytest.param(b"not json", {"mcp-name": "list_tasks"}, "list_tasks", False, id="non-json-header-only"),
    pytest.param(b'{"method":"tools/call","params":{"name":"s3cr3t"}}', {}, None, False, id="unknown-tool-dropped"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":[]}}}', {},
                 "search_papers", False, id="unhashable-mode-found-by-fuzzing"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":{"a":1}}}}', {},
                 "search_papers", False, id="object-mode"),
    pytest.param(b'{"method":"tools/call","params":{"name":"search_papers","arguments":{"mode":null}}}', {},
                 "search_papers", False, id="null-mode-is-refused-not-hybrid"),
])
def test_classify_finds_the_tool_and_semantic_searches(body: bytes, headers: dict, tool: str | None,
                                                       semantic: bool) -> None:
    info = classify(body, headers, tool_names=TOOL_NAMES)
    assert (info.tool, info.is_semantic_search) == (tool, semantic)


@pytest.mark.parametrize(("header", "era", "label"), [
    pytest.param(None, "legacy", "legacy", id="absent"),
    pytest.param("2025-11-25", "legacy", "2025-11-25", id="latest-legacy"),
    pytest.param("2024-11-05", "legacy", "2024-11-05", id="oldest"),
    pytest.param("2026-07-28", "modern", "2026-07-28", id="modern"),
    pytest.param("s3cr3t", "invalid", "unknown", id="unknown"),
])
def test_classify_labels_the_protocol_without_echoing_unknown_values(header: str | None, era: str, label: str) -> None:
    info = classify(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', {"MCP-Protocol-Version": header} if header else {},
                    tool_names=TOOL_NAMES)
    assert (info.era, info.protocol_label, info.method) == (era, label, "ping")
    assert route(header) == (None if era == "invalid" else era)
    assert protocol_label(header) == label


@pytest.mark.parametrize(("raw", "decoded"), [
    pytest.param("plain", "plain", id="plain"),
    pytest.param("=?base64?aMOp?=", "hé", id="base64"),
    pytest.param("=?base64?***?=", None, id="malformed"),
    pytest.param(None, None, id="absent"),
])
def test_mcp_name_values_are_decoded(raw: str | None, decoded: str | None) -> None:
    assert decode_header_value(raw) == decoded
