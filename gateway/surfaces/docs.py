"""``GET /docs``: how to connect, and the live tool schemas, as JSON or as a readable HTML page.

JSON (``?format=json``, or an ``Accept`` that does not ask for ``text/html``)::

    {"name", "version", "protocol_version", "protocol_versions", "supported_protocol_versions",
     "endpoint": "/mcp", "endpoint_url", "docs_url", "server_card_url", "transports",
     "configurations", "limits", "data",
     "resources", "resource_templates", "prompts",
     "tools": [{"name", "title", "description", "inputSchema", "outputSchema", "annotations",
                "example"}]}

``tools`` carries the same schemas ``tools/list`` returns; ``example`` is the arguments
of one working call. ``transports`` lists each HTTP transport with its absolute URL, protocol
versions and status (`server_card.TRANSPORTS`: legacy SSE is ``deprecated``). ``data`` says what the catalog serves (`DataSource.summary`, or
``{"provenance": "unknown"}``). ``endpoint_url`` is absolute, built from the request's allowlisted
``Host`` and scheme (`public_url`). The HTML page (`docs_html`) shows the same facts for a
person: every value is escaped. Both are rendered (and gzip-compressed, sent so to a client
that accepts it, `compressed`) once per base URL and data source and kept (a small LRU).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from aiohttp import web

from gateway.surfaces.compressed import Body, respond
from gateway.surfaces.docs_html import render_html
from gateway.surfaces.public_url import PublicUrl
from gateway.surfaces.server_card import CARD_PATH, TRANSPORTS
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.protocol.versions import (
    LATEST_LEGACY_VERSION,
    MODERN_VERSIONS,
    SERVER_VERSION,
    SUPPORTED_VERSIONS,
)
from pwc_mcp_core.runtime.core_settings import DEFAULT_API_URL, CoreSettings
from pwc_mcp_core.tools.data_source import UNKNOWN_SUMMARY, DataSource
from pwc_mcp_core.tools.definitions import LIMIT_CAP
from pwc_mcp_core.tools.examples import EXAMPLE_CALLS
from pwc_mcp_core.tools.prompts import prompts_list_result
from pwc_mcp_core.tools.templates import RESOURCE_TEMPLATES

__all__ = ["DocsPage", "configurations", "docs_document", "example_arguments", "render_html"]

_TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
SERVER_NAME: Final = "pwc"

def example_arguments(tool: Mapping[str, JsonValue]) -> JsonObject:
    """`tools.examples.EXAMPLE_CALLS` for a known tool; otherwise its required parameters with a
    default, first enum value or a typed placeholder."""
    known = EXAMPLE_CALLS.get(str(tool.get("name")))
    if known is not None:
        return dict(known)
    schema = tool.get("inputSchema")
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    arguments: JsonObject = {}
    for name in required if isinstance(required, list) else []:
        if not isinstance(name, str):
            continue
        spec = properties.get(name)
        spec = spec if isinstance(spec, dict) else {}
        enum = spec.get("enum")
        if "default" in spec:
            arguments[name] = spec["default"]
        elif isinstance(enum, list) and enum:
            arguments[name] = enum[0]
        else:
            placeholders: JsonObject = {"integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
            arguments[name] = placeholders.get(str(spec.get("type")), f"<{name}>")
    return arguments


def _limits(core: CoreSettings) -> JsonObject:
    return {
        "requests_per_minute": core.request_limit,
        "semantic_searches_per_minute": core.semantic_limit,
        "concurrent_requests_per_client": core.concurrency_limit,
        "concurrent_requests_total": core.global_concurrency_limit,
        "max_body_bytes": core.max_body_bytes,
        "call_deadline_s": core.call_deadline_s,
        "read_paper_chunk_bytes": min(core.chunk_bytes, 65536),
        "rows_per_list_call": LIMIT_CAP,
    }


def docs_document(tools: Sequence[Mapping[str, JsonValue]], core: CoreSettings | None = None) -> JsonObject:
    """The request-independent part of the docs JSON for the ``tools`` of ``tools/list``."""
    core = core if core is not None else CoreSettings()
    return {
        "name": "Papers With Code MCP",
        "version": SERVER_VERSION,
        "protocol_version": LATEST_LEGACY_VERSION,
        "protocol_versions": [LATEST_LEGACY_VERSION, *MODERN_VERSIONS],
        "supported_protocol_versions": [*sorted(SUPPORTED_VERSIONS, reverse=True)],
        "endpoint": "/mcp",
        "limits": _limits(core),
        "resources": [],
        "resource_templates": [dict(t) for t in RESOURCE_TEMPLATES],
        "prompts": prompts_list_result()["prompts"],
        "tools": [{**{key: tool[key] for key in _TOOL_FIELDS if key in tool}, "example": example_arguments(tool)}
                  for tool in tools],
    }


def configurations(endpoint_url: str) -> JsonObject:
    """Copy-paste client configurations for ``endpoint_url`` (values are JSON objects or commands)."""
    stdio: JsonObject = {"command": "uv", "args": ["run", "--directory", "/path/to/pwc-mcp", "pwc-mcp", "stdio"],
             "env": {"PWC_API_URL": DEFAULT_API_URL}}
    return {
        "streamable_http": {"mcpServers": {SERVER_NAME: {"type": "http", "url": endpoint_url}}},
        "claude_code_command": f"claude mcp add --transport http {SERVER_NAME} {endpoint_url}",
        "stdio": {"mcpServers": {SERVER_NAME: stdio}},
        "claude_desktop": {"mcpServers": {SERVER_NAME: {"command": "npx",
                                                        "args": ["-y", "mcp-remote", endpoint_url]}}},
        "vscode": {"servers": {SERVER_NAME: {"type": "http", "url": endpoint_url}}},
        "inspector_command": f"npx @modelcontextprotocol/inspector --cli {endpoint_url} --transport http "
                             "--method tools/list",
        "inspector_ui_command": "npx @modelcontextprotocol/inspector",
    }


class DocsPage:
    """``GET /docs``: the static part built once at startup, the rest once per base URL.

    Args:
        tools: the ``tools/list`` tools.
        core: settings for the limits (defaults when omitted).
        public_url: builds the absolute base URL of a request; default: ``localhost``
            with the default Host allowlist.
        data: reads the current `DataSource` (None: provenance unknown).
    """

    def __init__(self, tools: Sequence[Mapping[str, JsonValue]], core: CoreSettings | None = None,
                 public_url: PublicUrl | None = None, data: Callable[[], DataSource | None] = lambda: None) -> None:
        from gateway.admission.security import SecurityPolicy

        core = core if core is not None else CoreSettings()
        self._doc = docs_document(tools, core)
        self._public_url = public_url or PublicUrl(
            SecurityPolicy.from_lists(core.allowed_hosts, core.allowed_origins), (), core.port)
        self._data = data
        self._render = functools.lru_cache(maxsize=16)(self._render_for)

    def _render_for(self, base: str, data: DataSource | None = None) -> tuple[Body, Body]:
        endpoint_url = f"{base}/mcp"
        doc = {**self._doc, "endpoint_url": endpoint_url, "docs_url": f"{base}/docs",
               "server_card_url": f"{base}{CARD_PATH}",
               "transports": [transport.describe(base) for transport in TRANSPORTS],
               "configurations": configurations(endpoint_url),
               "data": data.summary() if data is not None else dict(UNKNOWN_SUMMARY)}
        return Body.of(json.dumps(doc, ensure_ascii=False).encode("utf-8")), Body.of(render_html(doc).encode("utf-8"))

    def document(self, base: str) -> JsonObject:
        """The full docs JSON for the base URL ``base`` (``scheme://host``)."""
        document: JsonObject = json.loads(self._render(base, self._data())[0].plain)
        return document

    async def handle(self, request: web.Request) -> web.Response:
        """``GET``/``HEAD /docs``: HTML for a browser, else JSON (`wants_html`), compressed when accepted."""
        body, page = self._render(self._public_url.base(request), self._data())
        if wants_html(request):
            return respond(request, page, "text/html", charset="utf-8", headers={"Vary": "Accept"})
        return respond(request, body, "application/json", headers={"Vary": "Accept"})


def wants_html(request: web.Request) -> bool:
    """HTML only when not forced to JSON and ``Accept`` names ``text/html`` (browsers)."""
    if request.query.get("format", "").lower() == "json":
        return False
    if request.query.get("format", "").lower() == "html":
        return True
    return "text/html" in request.headers.get("Accept", "").lower()
