"""`McpServer.handle` on the handshake era (2025-11-25) and the shared JSON-RPC rules."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pwc_mcp_core.cluster.admission import Decision
from pwc_mcp_core.mcp_server.server import McpServer, Reply
from pwc_mcp_core.runtime.call import Call
from pwc_mcp_core.runtime.core_settings import CoreSettings
from pwc_mcp_core.runtime.dispatch import (
    Answer,
    Deferred,
    Outcome,
    PoolState,
    Refused,
    TimedOut,
    TooLarge,
    Unavailable,
)
from pwc_mcp_core.tools.instructions import SERVER_INSTRUCTIONS
from tests.helpers import refusal_error

FAKE_TOOLS = [
    {"name": "search_papers", "description": "Search", "inputSchema": {"type": "object"}},
    {"name": "get_task", "description": "Task", "inputSchema": {"type": "object"}},
]
TOOL_RESULT = b'{"result": {"content": [{"type": "text", "text": "ok"}], "isError": false}}'


class FakeDispatcher:
    """A dispatcher that records calls; answers with ``body``, ``outcome``, or raises ``error``."""

    runs_admission = False
    live_workers = 1

    def __init__(self, body: bytes = TOOL_RESULT, error: Exception | None = None,
                 outcome: Outcome | None = None) -> None:
        self.body, self.error, self.outcome = body, error, outcome
        self.calls: list[Call] = []
        self.admissions: list[Deferred | None] = []

    def pool_state(self) -> PoolState:
        return PoolState(1, 0, 0)

    async def dispatch(self, call: Call, admission: Deferred | None = None) -> Outcome:
        self.calls.append(call)
        self.admissions.append(admission)
        if self.error is not None:
            raise self.error
        return self.outcome if self.outcome is not None else Answer(self.body)

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None


def make_server(executor: FakeDispatcher | None = None, **settings: Any) -> McpServer:
    return McpServer(CoreSettings(cursor_keys=("k",), **settings), executor or FakeDispatcher(), tools=FAKE_TOOLS)


def request(method: str, params: dict[str, Any] | None = None, id_: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


async def call(body: bytes, headers: dict[str, str] | None = None, server: McpServer | None = None) -> tuple[Reply, Any]:
    reply = await (server or make_server()).handle(body, headers or {})
    return reply, (json.loads(reply.body) if reply.body else None)


@pytest.mark.parametrize(("body", "code"), [
    pytest.param(b"{bad", -32700, id="invalid-json"),
    pytest.param(b"\xff\xfe", -32700, id="not-utf8"),
    pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, id="batch"),
    pytest.param(b'"ping"', -32600, id="not-an-object"),
    pytest.param(b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, id="bad-jsonrpc"),
    pytest.param(b'{"id":1,"method":"ping"}', -32600, id="missing-jsonrpc"),
    pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, id="null-id"),
    pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, id="float-id"),
    pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, id="bool-id"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":7}', -32600, id="non-string-method"),
    pytest.param(b'{"jsonrpc":"2.0","id":1}', -32600, id="no-method-no-result"),
])
@pytest.mark.parametrize("version", [None, "2025-11-25", "2026-07-28"])
async def test_malformed_messages_get_400_with_the_jsonrpc_error(body: bytes, code: int, version: str | None) -> None:
    reply, data = await call(body, {"MCP-Protocol-Version": version} if version else {})
    assert reply.status == 400
    assert data["error"]["code"] == code
    assert data["jsonrpc"] == "2.0"
    if code == -32700 or body.startswith(b"["):
        assert data["id"] is None


@pytest.mark.parametrize("body", [
    pytest.param(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', id="initialized"),
    pytest.param(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}', id="cancelled"),
    pytest.param(b'{"jsonrpc":"2.0","id":5,"result":{}}', id="client-response"),
    pytest.param(b'{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"no"}}', id="client-error-response"),
])
@pytest.mark.parametrize("version", [None, "2025-11-25", "2026-07-28"])
async def test_notifications_and_client_responses_are_accepted_with_202_and_no_body(body: bytes, version: str | None) -> None:
    reply = await make_server().handle(body, {"mcp-protocol-version": version} if version else {})
    assert (reply.status, reply.body) == (202, None)


@pytest.mark.parametrize("id_", [pytest.param(0, id="zero"), pytest.param(-7, id="negative"),
                                 pytest.param("abc", id="string"), pytest.param("", id="empty-string"),
                                 pytest.param("é\"\\", id="escapes"), pytest.param(2**70, id="big-int")])
async def test_request_ids_are_echoed_exactly(id_: Any) -> None:
    reply, data = await call(request("ping", id_=id_))
    assert reply.status == 200
    assert data == {"jsonrpc": "2.0", "id": id_, "result": {}}


@pytest.mark.parametrize(("requested", "answered"), [
    pytest.param("2025-11-25", "2025-11-25", id="latest"),
    pytest.param("2025-06-18", "2025-06-18", id="older"),
    pytest.param("2025-03-26", "2025-03-26", id="oldest-streamable"),
    pytest.param("2024-11-05", "2024-11-05", id="first"),
    pytest.param("2026-07-28", "2025-11-25", id="modern-asked-in-initialize"),
    pytest.param("1999-01-01", "2025-11-25", id="unknown"),
    pytest.param(None, "2025-11-25", id="missing"),
])
async def test_initialize_echoes_a_supported_version_else_answers_the_latest(requested: str | None, answered: str) -> None:
    params = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if requested is not None:
        params["protocolVersion"] = requested
    reply, data = await call(request("initialize", params))
    result = data["result"]
    assert reply.status == 200
    assert result["protocolVersion"] == answered
    assert result["serverInfo"]["name"] == "pwc" and result["serverInfo"]["title"] == "Papers With Code"
    assert result["serverInfo"]["websiteUrl"] == "https://paperswithcode.co"
    assert result["capabilities"]["resources"] == {"subscribe": False, "listChanged": False}
    assert set(result["capabilities"]) == {"tools", "resources", "prompts", "completions", "logging"}
    assert result["instructions"] == SERVER_INSTRUCTIONS
    assert "Mcp-Session-Id" not in reply.headers


@pytest.mark.parametrize(("method", "params", "expected"), [
    pytest.param("ping", None, {}, id="ping"),
    pytest.param("tools/list", None, {"tools": FAKE_TOOLS}, id="tools-list"),
    pytest.param("tools/list", {"cursor": None}, {"tools": FAKE_TOOLS}, id="tools-list-null-cursor"),
    pytest.param("resources/list", {}, {"resources": []}, id="resources-list"),
    pytest.param("resources/subscribe", {"uri": "pwc://tasks/x"}, {}, id="subscribe"),
    pytest.param("resources/unsubscribe", {"uri": "pwc://tasks/x"}, {}, id="unsubscribe"),
    pytest.param("logging/setLevel", {"level": "debug"}, {}, id="set-level-debug"),
    pytest.param("logging/setLevel", {"level": "emergency"}, {}, id="set-level-emergency"),
])
@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_legacy_static_methods_answer_200(method: str, params: Any, expected: Any, version: str | None) -> None:
    reply, data = await call(request(method, params), {"MCP-Protocol-Version": version} if version else {})
    assert reply.status == 200
    assert reply.headers["Content-Type"] == "application/json"
    assert data["result"] == expected


async def test_templates_and_prompts_are_listed_on_the_legacy_era() -> None:
    _, templates = await call(request("resources/templates/list"))
    _, prompts = await call(request("prompts/list"))
    assert [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]] == [
        "pwc://papers/{paper}", "pwc://papers/{paper}/markdown", "pwc://papers/{paper}/citation{?format}",
        "pwc://tasks/{task}", "pwc://benchmarks/{benchmark}"]
    assert [p["name"] for p in prompts["result"]["prompts"]] == ["find_papers", "compare_leaderboard", "survey_task"]
    assert "resultType" not in templates["result"] and "ttlMs" not in prompts["result"]


@pytest.mark.parametrize(("method", "params", "code"), [
    pytest.param("no/such", {}, -32601, id="unknown-method"),
    pytest.param("server/discover", {}, -32601, id="discover-without-modern-header"),
    pytest.param("tools/list", {"cursor": "abc"}, -32602, id="invalid-cursor"),
    pytest.param("logging/setLevel", {"level": "verbose"}, -32602, id="bad-log-level"),
    pytest.param("logging/setLevel", {}, -32602, id="missing-log-level"),
    pytest.param("prompts/get", {"name": "nope"}, -32602, id="unknown-prompt"),
    pytest.param("prompts/get", {"name": "find_papers"}, -32602, id="missing-prompt-argument"),
    pytest.param("tools/call", {"arguments": {}}, -32602, id="tool-name-missing"),
    pytest.param("tools/call", {"name": 3}, -32602, id="tool-name-not-string"),
    pytest.param("tools/call", {"name": "get_task", "arguments": [1]}, -32602, id="arguments-not-object"),
    pytest.param("tools/call", {"name": "delete_everything"}, -32602, id="unknown-tool"),
    pytest.param("resources/read", {}, -32602, id="resource-uri-missing"),
    pytest.param("completion/complete", {"ref": {"type": "ref/prompt", "name": 7},
                                         "argument": {"name": "a", "value": ""}}, -32602, id="completion-bad-ref"),
    pytest.param("ping", [1, 2], -32602, id="params-not-object"),
])
async def test_legacy_protocol_errors_travel_with_http_200_and_keep_the_id(method: str, params: Any, code: int) -> None:
    executor = FakeDispatcher()
    reply, data = await call(request(method, params, id_="r-1"), server=make_server(executor))
    assert reply.status == 200
    assert data["id"] == "r-1"
    assert data["error"]["code"] == code
    assert executor.calls == []


async def test_unknown_tool_is_named_in_the_error_without_calling_the_executor() -> None:
    executor = FakeDispatcher()
    _, data = await call(request("tools/call", {"name": "nope", "arguments": {}}), server=make_server(executor))
    assert data["error"] == {"code": -32602, "message": "Unknown tool: nope"}
    assert executor.calls == []


@pytest.mark.parametrize(("method", "params", "expected"), [
    pytest.param("tools/call", {"name": "get_task", "arguments": {"name": "x"}},
                 ("tools/call", "get_task", {"name": "x"}), id="tool"),
    pytest.param("tools/call", {"name": "search_papers"}, ("tools/call", "search_papers", {}), id="tool-no-arguments"),
    pytest.param("resources/read", {"uri": "pwc://tasks/image-classification"},
                 ("resources/read", "pwc://tasks/image-classification", {}), id="resource"),
])
async def test_executed_methods_hand_a_call_to_the_executor_and_splice_its_body(
        method: str, params: dict[str, Any], expected: tuple[str, str, dict[str, Any]]) -> None:
    executor = FakeDispatcher()
    reply, data = await call(request(method, params, id_=9), {"mcp-protocol-version": "2025-06-18"},
                             server=make_server(executor, call_deadline_s=30.0))
    assert reply.status == 200
    assert data == {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "ok"}], "isError": False}}
    (sent,) = executor.calls
    assert (sent.kind, sent.name, sent.arguments) == expected
    assert (sent.era, sent.protocol) == ("legacy", "2025-06-18")
    assert sent.deadline > 0


async def test_executor_error_bodies_are_spliced_with_their_legacy_status() -> None:
    body = b'{"error":{"code":-32002,"message":"Resource not found","data":{"uri":"pwc://x"}}}'
    reply, data = await call(request("resources/read", {"uri": "pwc://x"}, id_=4), server=make_server(FakeDispatcher(body)))
    assert reply.status == 200
    assert data == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32002, "message": "Resource not found",
                                                           "data": {"uri": "pwc://x"}}}


@pytest.mark.parametrize(("outcome", "status", "expected"), [
    pytest.param(Unavailable("redis down at 10.0.0.1"), 503, -32603, id="unavailable"),
    pytest.param(TimedOut(), 200, -32603, id="timeout"),
    pytest.param(RuntimeError("secret detail"), 200, -32603, id="unexpected"),
    pytest.param(TooLarge(), 503, None, id="too-large"),
])
async def test_dispatch_outcomes_become_clear_errors_without_leaking_detail(
        outcome: Outcome | Exception, status: int, expected: int | None) -> None:
    executor = FakeDispatcher(error=outcome) if isinstance(outcome, Exception) else FakeDispatcher(outcome=outcome)
    reply, data = await call(request("tools/call", {"name": "get_task", "arguments": {}}),
                             server=make_server(executor))
    assert reply.status == status
    assert b"secret" not in reply.body and b"10.0.0.1" not in reply.body
    if expected is None:
        assert refusal_error(data) == "response_too_large"
    else:
        assert data["error"]["code"] == expected and data["id"] == 1
    if isinstance(outcome, Unavailable):
        assert reply.headers["Retry-After"] == "1"
    if isinstance(outcome, TimedOut):
        assert data["error"]["message"] == "the tool call timed out"


@pytest.mark.parametrize(("kind", "retry", "status", "error"), [
    pytest.param("requests", 12, 429, "rate_limit_exceeded", id="per-client"),
    pytest.param("global", 7, 503, "server_saturated", id="global"),
    pytest.param("limits_unavailable", 1, 503, "limits_unavailable", id="store-down"),
])
async def test_a_refused_outcome_is_the_limits_refusal_with_the_request_id(
        kind: str, retry: int, status: int, error: str) -> None:
    executor = FakeDispatcher(outcome=Refused(Decision(False, kind, retry)))  # type: ignore[arg-type]
    reply, data = await call(request("tools/call", {"name": "get_task"}, id_="r"), server=make_server(executor))
    assert (reply.status, refusal_error(data), data["id"]) == (status, error, "r")
    assert reply.headers["Retry-After"] == (str(retry) if status == 429 else "1")


@pytest.mark.parametrize("version", [pytest.param("2099-01-01", id="future"), pytest.param("garbage", id="garbage"),
                                     pytest.param("", id="empty"), pytest.param("2025-11-25 ", id="padded")])
async def test_an_unsupported_version_without_a_modern_envelope_gets_a_non_modern_400(version: str) -> None:
    reply, data = await call(request("server/discover", {}), {"MCP-Protocol-Version": version})
    assert reply.status == 400
    assert data["error"]["code"] == -32600  # not -32022/-32020/-32021: dual-era clients fall back to initialize
    assert data["id"] == 1


async def test_an_unsupported_version_with_a_modern_envelope_gets_32022_naming_the_supported_versions() -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}
    reply, data = await call(request("server/discover", {"_meta": meta}, id_="d"),
                             {"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "server/discover"})
    assert reply.status == 400
    assert data["id"] == "d"
    assert data["error"]["code"] == -32022
    assert data["error"]["data"]["requested"] == "2099-01-01"
    # Exactly what server/discover advertises (the conformance suite checks they agree).
    assert data["error"]["data"]["supported"] == ["2026-07-28"]


async def test_header_names_are_matched_case_insensitively() -> None:
    reply, data = await call(request("server/discover", {}), {"mcp-PROTOCOL-version": "2026-07-28"})
    assert reply.status == 400 and data["error"]["code"] == -32602  # routed modern: the envelope is missing
