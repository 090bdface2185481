"""`McpServer.handle` on the 2026-07-28 era: envelope, header rules, statuses, result fields (§6.1–§6.3)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pwc_mcp_core.protocol.versions import SERVER_INFO
from tests.core.mcp_server.test_server import FAKE_TOOLS, FakeDispatcher, make_server

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


def modern(method: str, params: dict[str, Any] | None = None, *, id_: Any = 1, meta: Any = META,
           headers: dict[str, str] | None = None, name: str | None = None) -> tuple[bytes, dict[str, str]]:
    """A modern request body and the headers a conforming client sends with it."""
    params = dict(params or {})
    if meta is not None:
        params["_meta"] = meta
    body = json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode()
    sent = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        sent["Mcp-Name"] = name
    sent.update(headers or {})
    return body, sent


async def send(body: bytes, headers: dict[str, str], executor: FakeDispatcher | None = None) -> tuple[int, Any]:
    reply = await make_server(executor).handle(body, headers)
    return reply.status, json.loads(reply.body) if reply.body else None


async def test_server_discover_advertises_the_modern_version_capabilities_and_cache_hints() -> None:
    status, data = await send(*modern("server/discover"))
    result = data["result"]
    assert status == 200
    assert result["supportedVersions"] == [MODERN]
    assert result["resultType"] == "complete"
    assert (result["ttlMs"], result["cacheScope"]) == (3_600_000, "public")
    assert result["_meta"][SERVER_INFO_KEY] == dict(SERVER_INFO)
    assert set(result["capabilities"]) == {"tools", "resources", "prompts", "completions"}
    assert result["instructions"]


@pytest.mark.parametrize(("method", "key"), [
    pytest.param("tools/list", "tools", id="tools"),
    pytest.param("prompts/list", "prompts", id="prompts"),
    pytest.param("resources/list", "resources", id="resources"),
    pytest.param("resources/templates/list", "resourceTemplates", id="templates"),
])
async def test_modern_list_results_carry_result_type_server_info_and_an_hour_of_public_cache(method: str, key: str) -> None:
    status, data = await send(*modern(method))
    result = data["result"]
    assert status == 200
    assert key in result
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 3_600_000, "public")
    assert result["_meta"][SERVER_INFO_KEY]["name"] == "pwc"
    if method == "tools/list":
        assert result["tools"] == FAKE_TOOLS


@pytest.mark.parametrize(("method", "params", "name"), [
    pytest.param("prompts/get", {"name": "survey_task", "arguments": {"task": "x"}}, "survey_task", id="prompt"),
    pytest.param("completion/complete", {"ref": {"type": "ref/prompt", "name": "survey_task"},
                                         "argument": {"name": "task", "value": "image"}}, None, id="completion"),
])
async def test_modern_dynamic_results_carry_result_type_and_server_info(method: str, params: Any, name: str | None) -> None:
    status, data = await send(*modern(method, params, name=name))
    assert status == 200
    assert data["result"]["resultType"] == "complete"
    assert SERVER_INFO_KEY in data["result"]["_meta"]


@pytest.mark.parametrize("meta", [
    pytest.param(None, id="no-meta"),
    pytest.param("x", id="meta-not-object"),
    pytest.param({"io.modelcontextprotocol/clientCapabilities": {}}, id="missing-protocol-version"),
    pytest.param({"io.modelcontextprotocol/protocolVersion": MODERN}, id="missing-client-capabilities"),
    pytest.param({"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": []}, id="capabilities-not-object"),
])
@pytest.mark.parametrize("method", ["server/discover", "tools/list", "initialize", "tools/call"])
async def test_a_missing_meta_envelope_is_400_invalid_params_keeping_the_id(meta: Any, method: str) -> None:
    status, data = await send(*modern(method, {"name": "get_task"}, id_="m", meta=meta, name="get_task"))
    assert status == 400
    assert data["error"]["code"] == -32602
    assert data["id"] == "m"


async def test_client_info_is_optional_in_the_envelope() -> None:
    meta = {k: v for k, v in META.items() if not k.endswith("clientInfo")}
    status, _ = await send(*modern("tools/list", meta=meta))
    assert status == 200


@pytest.mark.parametrize(("method", "params", "headers"), [
    pytest.param("tools/list", {}, {"Mcp-Method": "prompts/list"}, id="method-header-differs"),
    pytest.param("tools/list", {}, {"Mcp-Method": ""}, id="method-header-empty"),
    pytest.param("tools/call", {"name": "get_task"}, {"Mcp-Name": "search_papers"}, id="name-header-differs"),
    pytest.param("tools/call", {"name": "get_task"}, {}, id="name-header-missing"),
    pytest.param("prompts/get", {"name": "survey_task"}, {"Mcp-Name": "find_papers"}, id="prompt-name-differs"),
    pytest.param("resources/read", {"uri": "pwc://tasks/a"}, {"Mcp-Name": "pwc://tasks/b"}, id="uri-differs"),
    pytest.param("tools/call", {"name": "get_task"}, {"Mcp-Name": "=?base64?!!!?="}, id="malformed-base64"),
])
async def test_headers_that_disagree_with_the_body_are_400_header_mismatch(method: str, params: Any,
                                                                           headers: dict[str, str]) -> None:
    executor = FakeDispatcher()
    body, sent = modern(method, params)
    sent.pop("Mcp-Name", None)
    sent.update(headers)
    status, data = await send(body, sent, executor)
    assert status == 400
    assert data["error"]["code"] == -32020
    assert data["id"] == 1
    assert executor.calls == []


async def test_a_protocol_header_that_differs_from_the_envelope_is_a_header_mismatch() -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    status, data = await send(*modern("tools/list", meta=meta))
    assert (status, data["error"]["code"]) == (400, -32020)


async def test_a_base64_encoded_mcp_name_is_decoded_before_comparing() -> None:
    uri = "pwc://papers/Attention Is All You Need — ünïcode"
    encoded = "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
    executor = FakeDispatcher(b'{"result":{"contents":[]}}')
    status, data = await send(*modern("resources/read", {"uri": uri}, name=encoded), executor)
    assert status == 200
    assert executor.calls[0].name == uri and executor.calls[0].era == "modern"
    assert data["result"]["resultType"] == "complete"


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe",
                                    "resources/unsubscribe", "no/such/method"])
async def test_legacy_only_and_unknown_methods_are_404_method_not_found(method: str) -> None:
    status, data = await send(*modern(method, {"level": "info", "uri": "pwc://x"},
                                      name="pwc://x" if "subscribe" in method else None))
    assert status == 404
    assert data["error"]["code"] == -32601
    assert data["id"] == 1


@pytest.mark.parametrize(("method", "params", "name", "code", "status"), [
    pytest.param("tools/call", {"name": "nope"}, "nope", -32602, 400, id="unknown-tool"),
    pytest.param("tools/call", {"name": "get_task", "arguments": 5}, "get_task", -32602, 400, id="bad-arguments"),
    pytest.param("prompts/get", {"name": "nope"}, "nope", -32602, 400, id="unknown-prompt"),
    pytest.param("tools/list", {"cursor": "zzz"}, None, -32602, 400, id="invalid-cursor"),
])
async def test_modern_invalid_params_are_400(method: str, params: Any, name: str | None, code: int, status: int) -> None:
    got_status, data = await send(*modern(method, params, name=name))
    assert (got_status, data["error"]["code"]) == (status, code)


async def test_a_modern_tool_call_reaches_the_executor_and_gains_result_type() -> None:
    executor = FakeDispatcher()
    status, data = await send(*modern("tools/call", {"name": "search_papers", "arguments": {"query": "q"}},
                                      id_=77, name="search_papers"), executor)
    assert status == 200
    assert data["id"] == 77
    assert data["result"]["resultType"] == "complete"
    assert data["result"]["content"][0]["text"] == "ok"
    (sent,) = executor.calls
    assert (sent.era, sent.protocol, sent.arguments) == ("modern", MODERN, {"query": "q"})


async def test_a_modern_body_that_already_has_result_type_is_passed_through_unchanged() -> None:
    body = b'{"result":{"resultType":"complete","contents":[],"ttlMs":300000,"cacheScope":"public"}}'
    status, data = await send(*modern("resources/read", {"uri": "pwc://x"}, name="pwc://x"), FakeDispatcher(body))
    assert status == 200 and data["result"] == json.loads(body)["result"]


async def test_a_modern_resource_not_found_from_the_executor_is_400() -> None:
    body = b'{"error":{"code":-32602,"message":"Resource not found","data":{"uri":"pwc://x"}}}'
    status, data = await send(*modern("resources/read", {"uri": "pwc://x"}, name="pwc://x"), FakeDispatcher(body))
    assert (status, data["error"]["code"], data["id"]) == (400, -32602, 1)
