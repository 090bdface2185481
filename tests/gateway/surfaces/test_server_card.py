"""The MCP Server Card and the registry entry ``server.json`` (issue 33 item 20).

Both are validated with fastjsonschema against the published schemas, vendored under
``tests/fixtures/schemas/`` (their sources and checksums: ``tests/fixtures/README.md``). The card
is built per request from the live tool list and transports; ``server.json`` is a committed file,
so these tests hold it to the registry's tools, the gateway's transports and the catalog's data
facts: it cannot drift from them unnoticed. Legacy SSE is labelled deprecated everywhere and
still works.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
import pytest

from gateway.process.app import create_app
from gateway.surfaces.server_card import (
    CARD_PATH,
    CARD_SCHEMA,
    MEDIA_TYPE,
    META_KEY,
    SERVER_NAME,
    SSE_DEPRECATION,
    TRANSPORTS,
    server_card,
)
from pwc_mcp_core.protocol.versions import (
    LEGACY_VERSIONS,
    SERVER_INFO,
    SERVER_VERSION,
    SUPPORTED_VERSIONS,
)
from pwc_mcp_core.tools.data_source import DatasetRevision, DataSource
from pwc_mcp_core.tools.registry import tool_list_result
from tests.gateway.conftest import FAKE_TOOLS, FakeDispatcher, make_settings

REPO_ROOT = Path(__file__).resolve().parents[3]
SCHEMAS = REPO_ROOT / "tests" / "fixtures" / "schemas"
SERVER_JSON: dict[str, Any] = json.loads((REPO_ROOT / "server.json").read_text(encoding="utf-8"))
REGISTRY_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
VENDORED = {"server-card.schema.v1.json": "2c772b51edb367f154771d84ddbae87ddba00a624422c8e46f218a9ac03bf042",
            "server.schema.2025-12-11.json": "d4c163f299ece68b7432f4e44c4108f2fdb663d99dc088c8344142e5b0a4b520"}


def _load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return schema


def card_validator() -> Callable[[object], object]:
    """The published card schema; the card is its ``#/$defs/ServerCard``."""
    schema = _load("server-card.schema.v1.json")
    return fastjsonschema.compile({"$ref": "#/$defs/ServerCard", "$defs": schema["$defs"]}, use_default=False)


def registry_validator() -> Callable[[object], object]:
    """The MCP registry's published ``server.json`` schema (draft-07, rooted at ``ServerDetail``)."""
    return fastjsonschema.compile(_load("server.schema.2025-12-11.json"), use_default=False)


def tool_names() -> list[str]:
    return [str(tool["name"]) for tool in tool_list_result()["tools"]]


@pytest.fixture
async def client(aiohttp_client):
    return await aiohttp_client(create_app(make_settings(), dispatcher=FakeDispatcher(), tools=FAKE_TOOLS))


# ---- the vendored schemas ----

@pytest.mark.parametrize(("name", "digest"), sorted(VENDORED.items()))
def test_the_vendored_schemas_are_the_recorded_copies(name: str, digest: str) -> None:
    assert hashlib.sha256((SCHEMAS / name).read_bytes()).hexdigest() == digest
    readme = (REPO_ROOT / "tests" / "fixtures" / "README.md").read_text(encoding="utf-8")
    assert name in readme and digest in readme


def test_the_schemas_refuse_what_they_should() -> None:
    """The validators are live: each rejects a document that breaks one of its rules."""
    card = server_card("https://h.example", ["a"])
    for broken in ({**card, "name": "no-namespace"}, {**card, "$schema": CARD_SCHEMA.replace("v1", "v2")},
                   {**card, "description": "x" * 101}, {**card, "remotes": [{"type": "ws", "url": "https://h"}]}):
        with pytest.raises(fastjsonschema.JsonSchemaValueException):
            card_validator()(broken)
    for broken in ({**SERVER_JSON, "description": "x" * 101}, {**SERVER_JSON, "remotes": [{"type": "sse", "url": "/sse"}]},
                   {**SERVER_JSON, "websiteUrl": "not a uri"}, {k: v for k, v in SERVER_JSON.items() if k != "version"}):
        with pytest.raises(fastjsonschema.JsonSchemaValueException):
            registry_validator()(broken)


# ---- the card ----

def test_the_card_validates_and_says_what_the_server_says_at_runtime() -> None:
    data = DataSource("archive", license="CC BY-SA 4.0", latest_paper="2025-07-24",
                      datasets=(DatasetRevision("pwc-archive/methods", "a" * 40),))
    card = server_card("https://mcp.example.org", tool_names(), data)
    card_validator()(card)
    assert (card["$schema"], card["name"], card["version"]) == (CARD_SCHEMA, SERVER_NAME, SERVER_VERSION)
    assert (card["title"], card["websiteUrl"]) == (SERVER_INFO["title"], SERVER_INFO["websiteUrl"])
    assert card["remotes"] == [
        {"type": "streamable-http", "url": "https://mcp.example.org/mcp",
         "supportedProtocolVersions": list(SUPPORTED_VERSIONS)},
        {"type": "sse", "url": "https://mcp.example.org/sse", "supportedProtocolVersions": list(LEGACY_VERSIONS)},
    ]
    meta = card["_meta"][META_KEY]
    assert meta["tools"] == tool_names()
    assert meta["data"] == data.summary()
    assert meta["documentation_url"] == "https://mcp.example.org/docs"
    sse = next(t for t in meta["transports"] if t["type"] == "sse")
    assert sse["status"] == "deprecated" and sse["use_instead"] == "streamable-http"
    assert next(t for t in meta["transports"] if t["type"] == "streamable-http")["status"] == "current"


async def test_the_served_card_uses_the_allowlisted_host_and_the_live_tools(client) -> None:
    response = await client.get(CARD_PATH)
    assert response.status == 200
    assert response.headers["Content-Type"] == f"{MEDIA_TYPE}; charset=utf-8"
    card = await response.json(content_type=None)
    card_validator()(card)
    base = f"http://{client.host}:{client.port}"
    assert [remote["url"] for remote in card["remotes"]] == [f"{base}/mcp", f"{base}/sse"]
    assert card["_meta"][META_KEY]["tools"] == [tool["name"] for tool in FAKE_TOOLS]
    assert card["_meta"][META_KEY]["data"] == (await (await client.get("/.well-known/mcp")).json())["data"]
    discovery = await (await client.get("/.well-known/mcp")).json()
    assert discovery["server_card_url"] == f"{base}{CARD_PATH}"
    # A forged Host is never echoed: the allowlist's fallback stands in.
    forged = await (await client.get(CARD_PATH, headers={"Host": "evil.example.com"})).json(content_type=None)
    assert "evil" not in json.dumps(forged)
    # Behind a trusted proxy (loopback here): its scheme and port.
    proxied = await (await client.get(CARD_PATH, headers={"Host": "localhost", "X-Forwarded-Proto": "https",
                                                          "X-Forwarded-Port": "8443"})).json(content_type=None)
    assert proxied["remotes"][0]["url"] == "https://localhost:8443/mcp"


async def test_card_caching_cors_head_and_plain_json(client) -> None:
    got = await client.get(CARD_PATH)
    body = await got.read()
    assert got.headers["Cache-Control"] == "public, max-age=3600"
    assert got.headers["Access-Control-Allow-Origin"] == "*"
    etag = got.headers["ETag"]
    revalidated = await client.get(CARD_PATH, headers={"If-None-Match": f'W/{etag}, "other"'})
    assert (revalidated.status, await revalidated.read()) == (304, b"")
    head = await client.head(CARD_PATH)
    assert (head.status, await head.read()) == (200, b"")
    assert int(head.headers["Content-Length"]) == len(body) and head.headers["ETag"] == etag
    plain = await client.get(CARD_PATH, headers={"Accept": "application/json"})
    assert plain.headers["Content-Type"] == "application/json; charset=utf-8" and await plain.read() == body
    preflight = await client.options(CARD_PATH, headers={"Origin": "https://any.example",
                                                         "Access-Control-Request-Method": "GET"})
    assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "If-None-Match" in preflight.headers["Access-Control-Allow-Headers"]


async def test_the_card_counts_against_the_request_limit_like_docs(aiohttp_client) -> None:
    client = await aiohttp_client(create_app(make_settings(request_limit=2), dispatcher=FakeDispatcher(),
                                             tools=FAKE_TOOLS))
    statuses = [(await client.get(CARD_PATH)).status for _ in range(2)]
    refused = await client.get(CARD_PATH)
    assert statuses == [200, 200] and refused.status == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert (await refused.json())["error"].startswith("rate_limited: ")


# ---- legacy SSE: labelled deprecated, still working ----

async def test_docs_label_legacy_sse_deprecated(client) -> None:
    docs = await (await client.get("/docs", params={"format": "json"})).json()
    by_type = {transport["type"]: transport for transport in docs["transports"]}
    assert by_type["sse"] == {**TRANSPORTS[1].describe(docs["endpoint_url"][:-4]), **SSE_DEPRECATION}
    assert by_type["streamable-http"]["status"] == "current"
    assert docs["server_card_url"].endswith(CARD_PATH)
    page = await (await client.get("/docs", headers={"Accept": "text/html"})).text()
    assert 'id="sse-deprecated"><strong>Deprecated:</strong>' in page
    assert "REST, OpenAPI and legacy SSE (deprecated)" in page and CARD_PATH in page


async def test_a_legacy_sse_stream_still_opens_and_says_it_is_deprecated(client) -> None:
    response = await client.get("/sse")
    try:
        assert response.status == 200
        assert response.headers["Deprecation"] == "@1742947200"  # 2025-03-26, RFC 9745
        assert response.headers["Link"] == f'<{SSE_DEPRECATION["reference"]}>; rel="deprecation"'
        first = await response.content.readline()
        assert first == b"event: endpoint\n"
    finally:
        response.close()


def test_readme_labels_legacy_sse_deprecated_and_names_the_card() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Legacy HTTP+SSE clients (MCP 2024-11-05, deprecated)" in readme
    assert f"`GET`/`HEAD {CARD_PATH}`" in readme and "`server.json`" in readme


# ---- server.json, the MCP registry entry ----

def test_server_json_validates_against_the_registry_schema() -> None:
    registry_validator()(SERVER_JSON)
    assert SERVER_JSON["$schema"] == REGISTRY_SCHEMA_URL == _load("server.schema.2025-12-11.json")["$id"]


def test_server_json_names_the_server_as_the_card_does() -> None:
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        version = tomllib.load(handle)["project"]["version"]
    card = server_card("https://h.example", tool_names())
    assert SERVER_JSON["version"] == version == card["version"]
    for key in ("name", "title", "description", "websiteUrl"):
        assert SERVER_JSON[key] == card[key], key


def test_server_json_lists_the_live_tools_and_transports() -> None:
    meta = SERVER_JSON["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]
    assert meta["tools"] == tool_names()
    assert [(remote["type"], remote["url"]) for remote in SERVER_JSON["remotes"]] == \
        [(transport.type, "https://{host}" + transport.path) for transport in TRANSPORTS]
    http = [t for t in meta["transports"] if t["type"] != "stdio"]
    assert http == [{"type": t.type, "path": t.path, "protocolVersions": list(t.versions),
                     **(dict(t.deprecation) if t.deprecation else {"status": "current"})} for t in TRANSPORTS]
    assert {"type": "stdio", "command": "pwc-mcp stdio", "status": "current"} in meta["transports"]
    assert meta["serverCard"] == CARD_PATH


def test_server_json_states_the_data_source_and_license() -> None:
    from catalog.db.provenance import ARCHIVE_LICENSE
    from catalog.importer.download import DATASETS, LICENSE, LICENSE_URL, NAMESPACE
    from pwc_mcp_core.runtime.core_settings import DEFAULT_API_URL

    data = SERVER_JSON["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["data"]
    assert data["license"] == LICENSE == ARCHIVE_LICENSE
    assert data["licenseUrl"] == LICENSE_URL
    assert data["archive"] == [f"{NAMESPACE}/{name}" for name in DATASETS]
    assert data["defaultApi"] == DEFAULT_API_URL
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        assert SERVER_JSON["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["license"] == \
            tomllib.load(handle)["project"]["license"]
