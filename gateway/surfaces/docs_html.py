"""The HTML form of ``/docs``: a self-contained page for a person connecting a client.

Sections: endpoint, the data the catalog serves, copy-paste configurations (Streamable HTTP, stdio, Claude Desktop,
VS Code, MCP Inspector, curl), protocol versions, limits, resources, resource templates
and prompts, the other surfaces (REST JSON with its OpenAPI document, legacy HTTP+SSE),
an example leaderboard chart (what ``get_sota_history`` returns for the sample ImageNet board,
inlined as a ``data:`` image from ``gateway/static``), then every tool with a parameter table,
one example call and its schemas.

The page is the Jinja2 template ``templates/docs.html.j2`` rendered with autoescape on:
every value from the document is HTML-escaped, in text and in attributes alike; literal
markup lives only in the template. The page has no script.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Final

import jinja2

from pwc_mcp_core.tools.apps import TOOL_VIEWS

__all__ = ["EXAMPLE_CHART_CALL", "example_chart", "parameter_rows", "render_html"]

_LIMIT_LABELS: Final[Mapping[str, str]] = {
    "requests_per_minute": "Requests per client per minute",
    "semantic_searches_per_minute": "Semantic or hybrid searches per client per minute",
    "concurrent_requests_per_client": "Concurrent requests per client",
    "concurrent_requests_total": "Concurrent requests, all clients",
    "max_body_bytes": "Request and response body bound (bytes)",
    "call_deadline_s": "Tool call deadline (seconds)",
    "read_paper_chunk_bytes": "read_paper chunk (bytes)",
    "rows_per_list_call": "Rows per list call",
}


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _curl(endpoint_url: str, body: Mapping[str, object]) -> str:
    payload = json.dumps(body, ensure_ascii=False).replace("'", "'\\''")
    return (f"curl -s {endpoint_url} -H 'Content-Type: application/json' "
            f"-H 'Accept: application/json, text/event-stream' \\\n  -d '{payload}'")


def _example_call(name: str, tool: Mapping[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": tool.get("example", {})}}


def _type_text(spec: Mapping[str, object]) -> str:
    kind = spec.get("type", "any")
    text = " | ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    items = spec.get("items")
    if text == "array" and isinstance(items, Mapping) and items.get("type"):
        text = f"array of {items['type']}"
    return text


def _constraints(spec: Mapping[str, object]) -> str:
    parts = []
    enum = spec.get("enum")
    if enum and isinstance(enum, list):
        parts.append("one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in enum))
    if "minimum" in spec or "maximum" in spec:
        parts.append(f"{spec.get('minimum', '…')}–{spec.get('maximum', '…')}")
    if "maxLength" in spec:
        parts.append(f"at most {spec['maxLength']} characters")
    if "maxItems" in spec:
        parts.append(f"at most {spec['maxItems']} items")
    if "pattern" in spec:
        parts.append(f"pattern {spec['pattern']}")
    return "; ".join(parts)


def parameter_rows(schema: object) -> list[dict[str, str]]:
    """One row per input parameter: ``name``, ``type``, ``required`` (yes/no), ``default``,
    ``description`` (with the schema's constraints appended)."""
    if not isinstance(schema, Mapping):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required_list = schema.get("required")
    required = set(required_list) if isinstance(required_list, list) else set()
    rows = []
    for name, value in properties.items():
        spec: Mapping[str, object] = value if isinstance(value, Mapping) else {}
        description = str(spec.get("description", ""))
        constraints = _constraints(spec)
        rows.append({
            "name": str(name),
            "type": _type_text(spec),
            "required": "yes" if name in required else "no",
            "default": json.dumps(spec["default"], ensure_ascii=False) if "default" in spec else "",
            "description": f"{description} ({constraints})" if constraints and description else
            description or constraints,
        })
    return rows


def _base_url(endpoint_url: str) -> str:
    """The server's base URL: the endpoint URL without its ``/mcp`` path."""
    return endpoint_url[:-len("/mcp")] if endpoint_url.endswith("/mcp") else endpoint_url


def _sequence(value: object) -> Sequence[object]:
    return value if isinstance(value, list | tuple) else []


_ENVIRONMENT: Final = jinja2.Environment(
    loader=jinja2.PackageLoader("gateway", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENVIRONMENT.filters["pretty_json"] = _json
_ENVIRONMENT.globals.update(curl=_curl, example_call=_example_call, parameter_rows=parameter_rows,
                            limit_labels=_LIMIT_LABELS)
_TEMPLATE: Final = _ENVIRONMENT.get_template("docs.html.j2")


EXAMPLE_CHART_CALL: Final[tuple[str, Mapping[str, str]]] = ("get_sota_history", {"benchmark": "ImageNet"})
"""The call whose chart ``static/sota-history-imagenet.png`` is, on the bundled sample catalog."""


@functools.cache
def example_chart() -> str:
    """The example chart as a ``data:`` URI, so the page stays one self-contained document."""
    png = resources.files("gateway").joinpath("static", "sota-history-imagenet.png").read_bytes()
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(doc: Mapping[str, object]) -> str:
    """The whole page for a docs document (`docs.docs_document` plus the per-request fields)."""
    endpoint_url = str(doc.get("endpoint_url") or doc.get("endpoint", "/mcp"))
    versions = list(_sequence(doc.get("protocol_versions")) or [doc.get("protocol_version", "")])
    configs = doc.get("configurations")
    limits = doc.get("limits")
    data = doc.get("data")
    return _TEMPLATE.render(
        doc=doc,
        endpoint_url=endpoint_url,
        base_url=_base_url(endpoint_url),
        configs=configs if isinstance(configs, Mapping) else {},
        list_call={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        versions=versions,
        supported=list(_sequence(doc.get("supported_protocol_versions")) or versions),
        limits=limits if isinstance(limits, Mapping) else {},
        data=data if isinstance(data, Mapping) else {},
        resources=_sequence(doc.get("resources")),
        resource_templates=_sequence(doc.get("resource_templates")),
        prompts=_sequence(doc.get("prompts")),
        tools=_sequence(doc.get("tools")),
        chart_src=example_chart(),
        chart_call={"name": EXAMPLE_CHART_CALL[0], "arguments": dict(EXAMPLE_CHART_CALL[1])},
        apps_view=TOOL_VIEWS.get(EXAMPLE_CHART_CALL[0], ""),
    )
