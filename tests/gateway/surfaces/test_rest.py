"""The REST surface and its OpenAPI document, in one embedded app with a fake executor."""

from __future__ import annotations

import json

import pytest
from multidict import MultiDict
from openapi_spec_validator import validate

from gateway.process.app import create_app
from gateway.surfaces.rest import coerce_query, status_for
from pwc_mcp_core.cluster.admission import LIMITS_UNAVAILABLE, Decision
from pwc_mcp_core.runtime.dispatch import Outcome, Refused, TimedOut, TooLarge, Unavailable
from pwc_mcp_core.tools import registry
from pwc_mcp_core.tools.definitions import TOOL_DEFS
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings


def tool_reply(text: str) -> bytes:
    return json.dumps({"result": {"content": [{"type": "text", "text": text}], "isError": True}}).encode()


@pytest.fixture
async def client(aiohttp_client, fake_dispatcher: FakeDispatcher):
    return await aiohttp_client(create_app(make_settings(request_limit=1000), dispatcher=fake_dispatcher))


async def test_list_tools_gives_the_catalogue(client) -> None:
    response = await client.get("/v1/tools")
    assert response.status == 200
    tools = (await response.json())["tools"]
    assert len(tools) == len(TOOL_DEFS) and {"name", "inputSchema", "outputSchema"} <= set(tools[0])


async def test_post_answers_the_structured_content(client, fake_dispatcher: FakeDispatcher) -> None:
    response = await client.post("/v1/tools/list_tasks", json={"limit": 2})
    assert (response.status, await response.json()) == (200, {"ok": True})
    (call,) = fake_dispatcher.calls
    assert (call.kind, call.name, call.arguments) == ("tools/call", "list_tasks", {"limit": 2})


async def test_get_coerces_the_query_per_input_schema(client, fake_dispatcher: FakeDispatcher) -> None:
    response = await client.get("/v1/tools/search_papers?query=vit&limit=3&has_official_implementation=true")
    assert response.status == 200
    assert fake_dispatcher.calls[0].arguments == {"query": "vit", "limit": 3, "has_official_implementation": True}


def test_query_coercion_of_arrays_numbers_and_bad_values() -> None:
    schema = {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}, "tags": {"type": "array",
              "items": {"type": "string"}}, "flag": {"type": ["boolean", "null"]}}}
    query = MultiDict([("n", "abc"), ("x", "1.5"), ("tags", "a"), ("tags", "b"), ("flag", "0")])
    assert coerce_query(query, schema) == {"n": "abc", "x": 1.5, "tags": ["a", "b"], "flag": False}
    assert coerce_query(MultiDict([("tags", "a,b")]), schema) == {"tags": ["a", "b"]}
    assert coerce_query(MultiDict([("flag", "")]), schema) == {"flag": None}


def test_query_numbers_beyond_64_bits_or_not_finite_never_reach_the_encoder() -> None:
    schema = {"properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}
    coerced = coerce_query(MultiDict([("n", "18446744073709551616"), ("x", "1e400")]), schema)
    assert coerced == {"n": 1.8446744073709552e19, "x": "1e400"}  # as orjson reads a POST body; text
    assert coerce_query(MultiDict([("n", "-9223372036854775808")]), schema) == {"n": -(2**63)}
    assert coerce_query(MultiDict([("n", "1" + "0" * 400)]), schema) == {"n": "1" + "0" * 400}


async def test_error_paths_are_counted(aiohttp_client, fake_dispatcher: FakeDispatcher) -> None:
    client = await aiohttp_client(create_app(make_settings(request_limit=3), dispatcher=fake_dispatcher))
    statuses = [(await client.get("/v1/tools/nope")).status for _ in range(2)]
    statuses.append((await client.post("/v1/tools/list_tasks", data=b"[1]")).status)
    refused = await client.get("/v1/nothing")
    assert statuses == [404, 404, 400]
    assert refused.status == 429 and (await refused.json())["error"].startswith("rate_limited:")


@pytest.mark.parametrize(("text", "status"), [
    ("invalid_argument: limit must be at most 25", 422), ("not_found: Task not found: x", 404),
    ("ambiguous: several papers match", 422), ("upstream_error: the catalog request failed", 502),
    ("upstream_timeout: the catalog timed out", 504), ("rate_limited: retry later", 503),
])
async def test_tool_failures_keep_their_prefix_and_get_a_fitting_status(aiohttp_client, text: str,
                                                                        status: int) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(tool_reply(text)),
                                             tools=FAKE_TOOLS))
    response = await client.post("/v1/tools/list_tasks", json={})
    assert (response.status, await response.json()) == (status, {"error": text})
    assert status_for(text) == status
    if status == 503:
        assert int(response.headers["Retry-After"]) >= 1


async def test_bad_bodies_and_unknown_tools(client) -> None:
    not_object = await client.post("/v1/tools/list_tasks", data=b"[1,2]")
    assert not_object.status == 400 and (await not_object.json())["error"].startswith("invalid_argument:")
    unknown = await client.post("/v1/tools/no_such_tool", json={})
    assert unknown.status == 404 and (await unknown.json())["error"].startswith("not_found:")
    too_large = await client.post("/v1/tools/list_tasks", data=b" " * (2 * 1024 * 1024 + 1))
    assert too_large.status == 413 and (await too_large.json())["error"].startswith("request_too_large:")
    compressed = await client.post("/v1/tools/list_tasks", data=b"\x1f\x8b\x08\x00garbage",
                                   headers={"Content-Encoding": "gzip"})
    assert compressed.status == 415
    assert (await compressed.json())["error"] == ("invalid_argument: Unsupported Content-Encoding: send the request "
                                                  "body uncompressed (identity); do not retry it compressed")


async def test_limits_answer_429_with_retry_after(aiohttp_client, fake_dispatcher: FakeDispatcher) -> None:
    client = await aiohttp_client(create_app(make_settings(request_limit=2), dispatcher=fake_dispatcher,
                                             tools=FAKE_TOOLS))
    statuses = [(await client.get("/v1/tools/list_tasks")).status for _ in range(2)]
    refused = await client.get("/v1/tools/list_tasks")
    assert statuses == [200, 200]
    assert refused.status == 429 and int(refused.headers["Retry-After"]) >= 1
    error = (await refused.json())["error"]
    assert error.startswith("rate_limited: Rate limit exceeded") and f"retry after {refused.headers['Retry-After']} s" in error


async def test_host_allowlist_applies(client) -> None:
    assert (await client.get("/v1/tools/list_tasks", headers={"Host": "evil.example"})).status == 421


async def test_openapi_document_is_valid_3_1_and_covers_every_tool(client) -> None:
    response = await client.get("/openapi.json")
    assert response.status == 200
    document = await response.json()
    validate(document)  # raises on any violation of the OpenAPI 3.1 schema
    assert document["openapi"].startswith("3.1")
    for tool in registry.tool_list_result()["tools"]:
        path = document["paths"][f"/v1/tools/{tool['name']}"]
        assert path["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"] == \
            tool["inputSchema"]["properties"]
        assert {"200", "404", "422", "429", "502", "503", "504"} <= set(path["get"]["responses"])
    search = {p["name"] for p in document["paths"]["/v1/tools/search_papers"]["get"]["parameters"]}
    assert {"query", "limit", "mode"} <= search


async def test_cors_preflight_for_an_allowlisted_origin(client) -> None:
    response = await client.options("/v1/tools/list_tasks", headers={"Origin": "https://claude.ai",
                                                                     "Access-Control-Request-Method": "POST"})
    assert response.status == 200 and "POST" in response.headers["Access-Control-Allow-Methods"]
    called = await client.post("/v1/tools/list_tasks", json={}, headers={"Origin": "https://claude.ai"})
    assert called.headers["Access-Control-Allow-Origin"] == "https://claude.ai"


@pytest.mark.parametrize(("outcome", "status", "prefix", "retry_after"), [
    pytest.param(TooLarge(), 502, "response_too_large: ", None, id="too-large"),
    pytest.param(TimedOut(), 504, "upstream_timeout: ", None, id="timed-out"),
    pytest.param(Unavailable("no worker is alive"), 503, "unavailable: ", "1", id="unavailable"),
    pytest.param(Refused(Decision(False, "concurrency", 1)), 429, "rate_limited: Rate limit exceeded", "1",
                 id="refused"),
    pytest.param(Refused(LIMITS_UNAVAILABLE), 503, "unavailable: Rate limits unavailable", "1", id="store-down"),
])
async def test_each_dispatch_outcome_has_its_rest_status_and_prefix(aiohttp_client, outcome: Outcome, status: int,
                                                                     prefix: str, retry_after: str | None) -> None:
    client = await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(outcome=outcome),
                                             tools=FAKE_TOOLS))
    for response in (await client.post("/v1/tools/list_tasks", json={}), await client.get("/v1/tools/list_tasks")):
        assert response.status == status
        assert (await response.json())["error"].startswith(prefix)
        assert response.headers.get("Retry-After") == retry_after


async def test_an_answer_over_the_bound_is_response_too_large_not_retry_shortly(aiohttp_client) -> None:
    big = b'{"result":{"content":[],"structuredContent":{"x":"' + b"x" * 5000 + b'"},"isError":false}}'
    client = await aiohttp_client(create_app(make_settings(max_body_bytes=4096),
                                             dispatcher=FakeDispatcher(big, max_response_bytes=4096), tools=FAKE_TOOLS))
    response = await client.post("/v1/tools/list_tasks", json={})
    error = (await response.json())["error"]
    assert response.status == 502 and "Retry-After" not in response.headers
    assert error.startswith("response_too_large: ") and "4096" in error and "retry shortly" not in error


def test_every_refusal_code_has_a_rest_prefix_or_is_a_transport_or_stream_refusal() -> None:
    """A refusal code REST cannot name would be a KeyError, a 500: each is mapped, or answered by
    status (Host, Origin) or never reaches REST (the SSE stream cap)."""
    from gateway.surfaces.rest import _REFUSAL_PREFIX
    from pwc_mcp_core.protocol.refusals import REFUSALS

    assert set(REFUSALS) - set(_REFUSAL_PREFIX) == {"invalid_host", "invalid_origin", "too_many_streams"}
