"""Edge hardening of the gateway, unit-sized (issue 15; the end-to-end proof is
tests/ops/test_production_path.py): refused encodings, SDK-readable refusals, combined
X-Forwarded-For lines, content-free server and gunicorn log lines."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import httpx2
import pytest
from aiohttp.http_exceptions import BadStatusLine
from aiohttp.test_utils import TestServer
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from multidict import CIMultiDict

from gateway.admission.identity import resolve_client
from gateway.admission.limits import Decision, LimitsUnavailable
from gateway.process.app import create_app
from gateway.process.serving import IDLE_TIMEOUT_S, gunicorn_logger_class, server_options
from pwc_mcp_core.protocol.refusals import REFUSALS, refusal_body
from pwc_mcp_core.runtime.logs import BatchingStreamHandler, ContentFreeFilter, LineFormatter
from tests.gateway.conftest import (
    FAKE_TOOLS,
    JSON_HEADERS,
    FakeDispatcher,
    make_settings,
    rpc,
)
from tests.helpers import refusal_error


class RefusingLimiter:
    """A limiter that refuses every request with ``kind`` (or is unreachable)."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind

    async def acquire(self, client_hash: str, *, semantic: bool, lease: bool = True) -> Decision:
        if self.kind is None:
            raise LimitsUnavailable("down")
        return Decision(False, self.kind, 7)

    async def release(self, lease: Any) -> None:
        return None

    def deferred(self, client_hash: str, *, semantic: bool) -> None:
        return None

    async def ping(self) -> bool:
        return self.kind is not None

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd", "x-gzip", "identity, gzip"])
async def test_any_content_encoding_but_identity_is_refused_415_unread(aiohttp_client, encoding: str) -> None:
    # Served as the entry points serve it: with aiohttp's decompression off (gateway.process.serving).
    server = TestServer(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    await server.start_server(auto_decompress=False)
    client = await aiohttp_client(server)
    response = await client.post("/mcp", data=b"\x1f\x8b\x08\x00garbage", headers={
        **JSON_HEADERS, "Content-Encoding": encoding})
    assert response.status == 415
    body = await response.json()
    assert refusal_error(body) == "unsupported_content_encoding" and body["id"] is None
    assert "install" not in body["error"]["message"]


async def test_identity_encoding_is_served(aiohttp_client) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))
    response = await client.post("/mcp", data=rpc("ping"), headers={**JSON_HEADERS, "Content-Encoding": "identity"})
    assert response.status == 200


@pytest.mark.parametrize(("kind", "status", "error", "retry"), [
    ("requests", 429, "rate_limit_exceeded", 7), ("semantic", 429, "rate_limit_exceeded", 7),
    ("concurrency", 429, "rate_limit_exceeded", 7), ("global", 503, "server_saturated", 1),
    (None, 503, "limits_unavailable", 1)])
async def test_limit_refusals_are_jsonrpc_errors_with_the_request_id(aiohttp_client, kind: str | None, status: int,
                                                                   error: str, retry: int) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), limiter=RefusingLimiter(kind),
                                             tools=FAKE_TOOLS))
    response = await client.post("/mcp", data=rpc("tools/list", request_id=41), headers=JSON_HEADERS)
    assert response.status == status and response.headers["Retry-After"] == str(retry)
    body = await response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == 41
    assert body["error"]["data"] == {"error": error, "retry_after_s": retry, **({"limit": kind} if status == 429 else {})}
    assert f"retry after {retry} s" in body["error"]["message"]


@pytest.mark.parametrize(("kind", "says", "never"), [
    ("requests", ["(requests per client per minute)", "every request counts, keyword searches and every other tool "
                  "included", "retry after 7 s"], ["mode=keyword or any other tool"]),
    ("semantic", ["(semantic searches per client per minute)", "search_papers without mode=keyword",
                  "retry after 7 s for another such search", "go on now with search_papers mode=keyword or any other tool"], []),
    ("concurrency", ["(concurrent requests per client)", "too many requests in progress",
                     "wait until one of them returns and retry after 7 s"], ["keyword"]),
    ("global", ["Server saturated", "from all clients together", "not this client's own", "retry after 1 s"],
     ["keyword"]),
])
async def test_each_limit_says_which_limit_refused_and_what_the_agent_can_do(aiohttp_client, kind: str,
                                                                             says: list[str],
                                                                             never: list[str]) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), limiter=RefusingLimiter(kind),
                                             tools=FAKE_TOOLS))
    mcp = (await (await client.post("/mcp", data=rpc("tools/list", request_id=3), headers=JSON_HEADERS)).json())
    rest = (await (await client.get("/v1/tools/list_tasks")).json())["error"]
    message = mcp["error"]["message"]
    assert rest.endswith(message) and rest.startswith("rate_limited: " if kind != "global" else "unavailable: ")
    assert all(part in message for part in says), message
    assert not any(part in message for part in never), message
    others = {other: json.loads(refusal_body("rate_limit_exceeded", retry_after_s=7, limit_bytes=1, limit=other))
              for other in ("requests", "semantic", "concurrency")}
    assert len({body["error"]["message"] for body in others.values()}) == 3  # each limit its own text


def test_every_refusal_has_a_message_that_says_what_to_do() -> None:
    for error, kind in REFUSALS.items():
        body = json.loads(refusal_body(error, id_json=b'"x"', retry_after_s=3, limit_bytes=2 * 1024 * 1024))
        assert body["id"] == "x" and body["error"]["code"] == kind.code and body["error"]["data"]["error"] == error
        assert "retry" in body["error"]["message"]


@pytest.mark.parametrize(("kind", "error"), [("requests", "rate_limit_exceeded"), ("global", "server_saturated"),
                                             (None, "limits_unavailable"), ("ok", "response_too_large")])
async def test_the_python_sdk_raises_mcp_error_with_the_refusal_message_and_data(aiohttp_server, kind: str | None,
                                                                                error: str) -> None:
    if kind == "ok":  # admitted, then the answer exceeds the bound
        app = create_app(make_settings(max_body_bytes=64 * 1024),
                         dispatcher=FakeDispatcher(b'{"result":{"content":[{"type":"text","text":"' + b"x" * 70000
                                               + b'"}]}}', max_response_bytes=64 * 1024), tools=FAKE_TOOLS)
    else:
        app = create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS)
    server = await aiohttp_server(app)
    async with Client(streamable_http_client(f"http://127.0.0.1:{server.port}/mcp",
                                             http_client=httpx2.AsyncClient(timeout=10)), mode="legacy") as client:
        if kind != "ok":  # swap the limiter in after initialize succeeded
            from gateway.surfaces.streamable_http import McpEndpoint  # noqa: F401 - the endpoint reads admission.limiter

            endpoint = next(r.handler.__self__ for r in app.router.routes()  # type: ignore[attr-defined]
                            if getattr(r, "method", "") == "POST" and r.resource.canonical == "/mcp")
            object.__setattr__(endpoint.admission, "limiter", RefusingLimiter(kind))
            object.__setattr__(endpoint.gate, "limiter", endpoint.admission.limiter)
        with pytest.raises(MCPError) as refused:
            await client.call_tool("list_tasks", {})
    assert refused.value.error.data["error"] == error
    assert refused.value.error.message == json.loads(refusal_body(
        error, retry_after_s=refused.value.error.data["retry_after_s"],
        limit_bytes=64 * 1024 if kind == "ok" else 2 * 1024 * 1024, limit=kind))["error"]["message"]


def test_forwarded_for_lines_are_combined_before_the_right_most_rule() -> None:
    headers = CIMultiDict([("X-Forwarded-For", "198.51.100.1, 198.51.100.2"), ("X-Forwarded-For", "203.0.113.9")])
    assert resolve_client("127.0.0.1", headers) == "203.0.113.9"
    behind_proxy = CIMultiDict([("X-Forwarded-For", "198.51.100.1"), ("x-forwarded-for", "203.0.113.9")])
    assert resolve_client("10.0.0.2", behind_proxy, trusted=(__import__("ipaddress").ip_network("10.0.0.0/8"),)) \
        == "203.0.113.9"


def test_the_server_options_disable_decompression_and_outlast_nginx_keepalive() -> None:
    options = server_options()
    assert options["auto_decompress"] is False and options["access_log"] is None
    assert options["keepalive_timeout"] == IDLE_TIMEOUT_S > 60  # nginx/pwc-mcp.conf upstream keepalive_timeout 60s


def _line(record: logging.LogRecord) -> str:
    stream = io.StringIO()
    handler = BatchingStreamHandler(stream, interval_s=60)
    handler.setFormatter(LineFormatter())
    handler.addFilter(ContentFreeFilter())
    handler.handle(record)
    handler.close()
    return stream.getvalue()


def _record(name: str, msg: str, args: tuple[Any, ...], exc: BaseException | None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, exc_info)


def test_aiohttp_error_records_lose_the_address_and_the_traceback() -> None:
    try:
        raise BadStatusLine("GARBAGE 198.51.100.7")
    except BadStatusLine as exc:
        line = _line(_record("aiohttp.server", "Error handling request from %s", ("198.51.100.7",), exc))
    assert "198.51.100.7" not in line and "Traceback" not in line
    assert " INFO aiohttp.server Error handling request from - error=BadStatusLine" in line
    try:
        raise KeyError("secret-value")
    except KeyError as exc:
        line = _line(_record("aiohttp.web", "Error handling request from %s", ("198.51.100.7",), exc))
    assert " ERROR " in line and "error=KeyError at=test_edge_hardening.py:" in line and "secret" not in line
    line = _line(_record("asyncio", "Exception in callback <Handle secret-value>: boom", (), None))
    assert "secret" not in line and "Exception in callback" in line


def test_a_record_that_cannot_be_formatted_is_one_content_free_line() -> None:
    line = _line(logging.LogRecord("gunicorn.error", logging.INFO, __file__, 1, "%d from %s",
                                   (None, "198.51.100.7"), None))
    assert line.count("\n") == 1 and "198.51.100.7" not in line and "logging_error logger=gunicorn.error" in line


def test_gunicorn_records_propagate_to_the_root_handler() -> None:
    from gunicorn.config import Config

    logger = gunicorn_logger_class()(Config())
    assert logger.error_log.handlers == [] and logger.error_log.propagate
    assert logger.access_log.disabled
