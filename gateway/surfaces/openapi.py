"""``GET /openapi.json``: an OpenAPI 3.1 document of the REST surface (:mod:`gateway.surfaces.rest`).

Generated from the same tool list as ``tools/list`` (``catalogue.tool_list_result()``):
per tool a ``POST /v1/tools/<name>`` whose request body is the tool's ``inputSchema``
and a ``GET`` whose query parameters are its scalar and array-of-scalar properties;
both answer 200 with the ``outputSchema`` and document every error status with its
``Retry-After`` header. Schemas are the tools' JSON Schema 2020-12, the dialect
OpenAPI 3.1 uses (https://spec.openapis.org/oas/v3.1.0#schema-object).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from typing import Final

import orjson
from aiohttp import web

from gateway.surfaces.compressed import Body, not_modified, respond, wants_gzip
from gateway.surfaces.public_url import PublicUrl
from pwc_mcp_core.protocol.json_types import JsonObject, JsonValue
from pwc_mcp_core.protocol.versions import SERVER_INFO, SERVER_VERSION

__all__ = ["OpenApiDocument", "build_openapi"]

DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_ERROR_STATUSES: Final = {
    "400": "The body is not a JSON object",
    "404": "not_found: no such record, or no such tool",
    "413": "request_too_large: the body is over 2 MiB",
    "421": "invalid_host: the Host header is not allowed",
    "403": "invalid_origin: the Origin header is not allowed",
    "422": "invalid_argument or ambiguous: an argument is wrong; the message says how to fix it",
    "429": "rate_limited: this client's limits are used up; retry after Retry-After seconds",
    "502": "upstream_error: the catalog request failed, retry after Retry-After; or response_too_large: the "
           "answer is over the 2 MiB bound (ask for less, do not retry as is)",
    "503": "unavailable or rate_limited (by the catalog); retry after Retry-After",
    "504": "upstream_timeout: the catalog or the tool call timed out; retry after Retry-After, or ask for less",
}
_QUERY_TYPES: Final = frozenset({"string", "integer", "number", "boolean"})
_MAX_BASES: Final = 64


def _object(value: JsonValue) -> JsonObject:
    """``value`` when it is a JSON object, else ``{}`` (a tool without that schema)."""
    return value if isinstance(value, dict) else {}


def _schema(schema: Mapping[str, JsonValue]) -> JsonObject:
    copied = copy.deepcopy(dict(schema))
    copied.pop("$schema", None)  # the document's jsonSchemaDialect says it once
    return copied


def _scalar(schema: Mapping[str, JsonValue]) -> bool:
    kind = schema.get("type")
    kinds = set(map(str, kind)) if isinstance(kind, list) else {str(kind)}
    return bool(kinds - {"null"}) and kinds - {"null"} <= _QUERY_TYPES


def _query_parameters(input_schema: Mapping[str, JsonValue]) -> list[JsonValue]:
    required_list = input_schema.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    parameters: list[JsonValue] = []
    for name, value in _object(input_schema.get("properties")).items():
        schema = _object(value)
        is_array = schema.get("type") == "array" and _scalar(_object(schema.get("items")))
        if not (_scalar(schema) or is_array):
            continue  # objects do not fit a query string: POST them
        parameter: JsonObject = {"name": name, "in": "query", "required": name in required,
                                 "schema": _schema(schema)}
        if "description" in schema:
            parameter["description"] = schema["description"]
        if is_array:
            parameter.update(style="form", explode=True)
        parameters.append(parameter)
    return parameters


def _responses(output_schema: Mapping[str, JsonValue]) -> JsonObject:
    responses: JsonObject = {"200": {"description": "The tool's structuredContent",
                                     "content": {"application/json": {"schema": _schema(output_schema)}}}}
    responses.update({status: {"$ref": f"#/components/responses/Error{status}"} for status in _ERROR_STATUSES})
    return responses


def build_openapi(tools: Sequence[Mapping[str, JsonValue]]) -> JsonObject:
    """The OpenAPI 3.1 document for ``tools`` (the ``tools/list`` entries)."""
    paths: JsonObject = {"/v1/tools": {"get": {
        "operationId": "list_tools", "summary": "List the tools with their input and output schemas",
        "responses": {"200": {"description": "The tools", "content": {"application/json": {"schema": {
            "type": "object", "required": ["tools"],
            "properties": {"tools": {"type": "array", "items": {"type": "object"}}}}}}},
            "429": {"$ref": "#/components/responses/Error429"},
            "503": {"$ref": "#/components/responses/Error503"}}}}}
    for tool in tools:
        name = str(tool["name"])
        title = str(tool.get("title") or name)
        description = str(tool.get("description") or title)
        input_schema, output_schema = _object(tool.get("inputSchema")), _object(tool.get("outputSchema"))
        common: JsonObject = {"summary": title, "description": description, "tags": ["tools"]}
        paths[f"/v1/tools/{name}"] = {
            "post": {**common, "operationId": name,
                     "requestBody": {"required": False, "content": {"application/json": {
                         "schema": _schema(input_schema)}}},
                     "responses": _responses(output_schema)},
            "get": {**common, "operationId": f"{name}_get", "parameters": _query_parameters(input_schema),
                    "responses": _responses(output_schema)},
        }
    error_schema: JsonObject = {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "string", "description": "prefix: what was wrong and what to do"}}}
    retry_after: JsonObject = {"description": "Seconds to wait before retrying (429, 503)", "schema": {"type": "integer"}}
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": DIALECT,
        "info": {"title": f"{SERVER_INFO['title']} REST API", "version": SERVER_VERSION,
                 "description": SERVER_INFO["description"] + " The same tools as the MCP endpoint /mcp."},
        "paths": paths,
        "components": {
            "schemas": {"Error": error_schema},
            "headers": {"Retry-After": retry_after},
            "responses": {f"Error{status}": {
                "description": text,
                "headers": {"Retry-After": {"$ref": "#/components/headers/Retry-After"}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            } for status, text in _ERROR_STATUSES.items()},
        },
        "tags": [{"name": "tools", "description": "Papers With Code catalog tools"}],
    }


class OpenApiDocument:
    """Serves the document with a ``servers`` entry for the base URL the client used
    (`PublicUrl`), so a generated client needs no base URL by hand.

    Each base's body is serialized once (at most `_MAX_BASES` kept) and carries an ``ETag``:
    a matching ``If-None-Match`` is answered 304 without a body.
    """

    def __init__(self, tools: Sequence[Mapping[str, JsonValue]], public_url: PublicUrl) -> None:
        self._document = build_openapi(tools)
        self._public_url = public_url
        self._bodies: dict[str, tuple[Body, str]] = {}

    def _body(self, base: str) -> tuple[Body, str]:
        cached = self._bodies.get(base)
        if cached is None:
            body = orjson.dumps({**self._document, "servers": [{"url": base}]})
            cached = Body.of(body), hashlib.sha256(body).hexdigest()[:32]
            if len(self._bodies) >= _MAX_BASES:
                self._bodies.clear()
            self._bodies[base] = cached
        return cached

    async def handle(self, request: web.Request) -> web.Response:
        """``GET``/``HEAD /openapi.json``, gzip-compressed when the client accepts it."""
        body, digest = self._body(self._public_url.base(request))
        # Each encoding is its own representation, so its own strong tag (RFC 9110 §8.8.3).
        etag = f'"{digest}-gz"' if wants_gzip(request, body) else f'"{digest}"'
        headers = {"Cache-Control": "public, max-age=3600", "ETag": etag, "Vary": "Host, Accept-Encoding"}
        if not_modified(request, etag):
            return web.Response(status=304, headers=headers)
        return respond(request, body, "application/json", headers={**headers, "Vary": "Host"})
