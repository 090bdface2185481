"""The HTML form of ``/docs``: a self-contained page for a person connecting a client.

Sections: endpoint, copy-paste configurations (Streamable HTTP, stdio, Claude Desktop,
VS Code, MCP Inspector, curl), protocol versions, limits, resources, resource templates
and prompts, the other surfaces (REST JSON with its OpenAPI document, legacy HTTP+SSE),
then every tool with a parameter table, one example call and its schemas.
Every value from the document is HTML-escaped (``html.escape`` with quotes), in text and
in attributes alike; the page has no script.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["parameter_rows", "render_html"]

_STYLE: Final = (
    "body{font-family:system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
    "pre{background:#f5f5f5;padding:.75rem;overflow:auto}code{font-size:.9em}"
    "table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.3rem .5rem;"
    "text-align:left;vertical-align:top}th{background:#f0f0f0}td code{white-space:nowrap}section.tool{border-top:1px solid #ddd;"
    "margin-top:1.5rem}"
)


def _esc(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _pre(text: str, cls: str = "") -> str:
    attribute = f' class="{_esc(cls)}"' if cls else ""
    return f"<pre{attribute}><code>{_esc(text)}</code></pre>"


def _table(cls: str, headers: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A table whose cells are already-escaped HTML."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{_esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _type_text(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type", "any")
    text = " | ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    items = spec.get("items")
    if text == "array" and isinstance(items, Mapping) and items.get("type"):
        text = f"array of {items['type']}"
    return text


def _constraints(spec: Mapping[str, Any]) -> str:
    parts = []
    if spec.get("enum"):
        parts.append("one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in spec["enum"]))
    if "minimum" in spec or "maximum" in spec:
        parts.append(f"{spec.get('minimum', '…')}–{spec.get('maximum', '…')}")
    if "maxLength" in spec:
        parts.append(f"at most {spec['maxLength']} characters")
    if "maxItems" in spec:
        parts.append(f"at most {spec['maxItems']} items")
    if "pattern" in spec:
        parts.append(f"pattern {spec['pattern']}")
    return "; ".join(parts)


def parameter_rows(schema: Any) -> list[dict[str, str]]:
    """One row per input parameter: ``name``, ``type``, ``required`` (yes/no), ``default``,
    ``description`` (with the schema's constraints appended)."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    required = set(schema.get("required") or [])
    rows = []
    for name, spec in schema["properties"].items():
        spec = spec if isinstance(spec, Mapping) else {}
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


def _curl(endpoint_url: str, body: Mapping[str, Any]) -> str:
    payload = json.dumps(body, ensure_ascii=False).replace("'", "'\\''")
    return (f"curl -s {endpoint_url} -H 'Content-Type: application/json' "
            f"-H 'Accept: application/json, text/event-stream' \\\n  -d '{payload}'")


def _connect(doc: Mapping[str, Any]) -> list[str]:
    configs = doc.get("configurations") or {}
    url = str(doc.get("endpoint_url") or doc.get("endpoint", "/mcp"))
    parts = ['<section id="connect"><h2>Connect a client</h2>',
             f'<p>Endpoint (Streamable HTTP, stateless, no session): <code id="endpoint-url">{_esc(url)}</code></p>']
    blocks = [
        ("config-http", "Streamable HTTP (Claude Code <code>.mcp.json</code>, Cursor and other clients)",
         "streamable_http", "claude_code_command"),
        ("config-stdio", ("stdio (the client starts <code>pwc-mcp stdio</code> itself; "
                          "a cursor key is created once in your user state directory)"), "stdio", None),
        ("config-claude-desktop", ("Claude Desktop (<code>claude_desktop_config.json</code>, through "
                                   "<code>mcp-remote</code>; or Settings → Connectors → Add custom connector "
                                   "with the endpoint URL)"), "claude_desktop", None),
        ("config-vscode", "VS Code (<code>.vscode/mcp.json</code>)", "vscode", None),
        ("config-inspector", "MCP Inspector", None, "inspector_ui_command"),
    ]
    for anchor, label, key, command in blocks:
        parts.append(f'<h3 id="{anchor}">{label}</h3>')
        if key in configs:
            parts.append(_pre(_json(configs[key]), "config"))
        if key is None:
            parts.append(f"<p>Start it, choose Transport Type <em>Streamable HTTP</em>, enter the URL "
                         f"<code>{_esc(url)}</code> and connect. Or call one method from its CLI:</p>")
        if command and command in configs:
            parts.append(_pre(str(configs[command]), "command"))
    if "inspector_command" in configs:
        parts.append(_pre(str(configs["inspector_command"]), "command"))
    parts.append('<h3 id="config-curl">curl</h3>')
    parts.append(_pre(_curl(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), "command"))
    parts.append("</section>")
    return parts


def _protocols(doc: Mapping[str, Any]) -> list[str]:
    versions = list(doc.get("protocol_versions") or [doc.get("protocol_version", "")])
    notes = {
        "2025-11-25": "handshake era: clients may call <code>initialize</code> first; every request "
                      "is answered on its own (no session)",
        "2026-07-28": "stateless era: each request names its version in <code>_meta</code> and the "
                      "<code>MCP-Protocol-Version</code> header; <code>server/discover</code> lists capabilities",
    }
    rows = [[f"<code>{_esc(v)}</code>", notes.get(str(v), "")] for v in versions]
    supported = ", ".join(_esc(v) for v in doc.get("supported_protocol_versions") or versions)
    return ['<section id="protocols"><h2>Protocol versions</h2>',
            _table("protocols", ["Version", "How"], rows),
            f"<p>Accepted <code>MCP-Protocol-Version</code> values: {supported}.</p></section>"]


def _limits(doc: Mapping[str, Any]) -> list[str]:
    labels = {
        "requests_per_minute": "Requests per client per minute",
        "semantic_searches_per_minute": "Semantic or hybrid searches per client per minute",
        "concurrent_requests_per_client": "Concurrent requests per client",
        "concurrent_requests_total": "Concurrent requests, all clients",
        "max_body_bytes": "Request and response body bound (bytes)",
        "call_deadline_s": "Tool call deadline (seconds)",
        "read_paper_chunk_bytes": "read_paper chunk (bytes)",
        "rows_per_list_call": "Rows per list call",
    }
    limits = doc.get("limits") or {}
    if not limits:
        return []
    rows = [[_esc(labels.get(key, key)), f"<code>{_esc(value)}</code>"] for key, value in limits.items()]
    return ['<section id="limits"><h2>Limits</h2>', _table("limits", ["Limit", "Value"], rows),
            "<p>A refused request gets HTTP 413, 429 or 503 with <code>Retry-After</code>.</p></section>"]


def _catalogue(doc: Mapping[str, Any]) -> list[str]:
    parts = ['<section id="resources"><h2>Resources</h2>']
    resources = doc.get("resources") or []
    if resources:
        parts.append(_table("resources", ["URI", "Name"],
                            [[f"<code>{_esc(r.get('uri', ''))}</code>", _esc(r.get("name", ""))] for r in resources]))
    else:
        parts.append("<p>No fixed resources: read papers, tasks and benchmarks through the templates below.</p>")
    parts.append('</section><section id="resource-templates"><h2>Resource templates</h2>')
    parts.append(_table("resource-templates", ["URI template", "Name", "Type", "Description"], [
        [f"<code>{_esc(t.get('uriTemplate', ''))}</code>", _esc(t.get("name", "")), _esc(t.get("mimeType", "")),
         _esc(t.get("description", ""))] for t in doc.get("resource_templates") or []]))
    parts.append('</section><section id="prompts"><h2>Prompts</h2>')
    parts.append(_table("prompts", ["Prompt", "Arguments", "Description"], [
        [f"<code>{_esc(p.get('name', ''))}</code>",
         ", ".join(f"<code>{_esc(a.get('name', ''))}</code>" + (" (required)" if a.get("required") else "")
                   for a in p.get("arguments") or []),
         _esc(p.get("description", ""))] for p in doc.get("prompts") or []]))
    parts.append("<p><code>completion/complete</code> suggests prompt arguments and template variables from "
                 "the catalog.</p></section>")
    return parts


def _base_url(endpoint_url: str) -> str:
    """The server's base URL: the endpoint URL without its ``/mcp`` path."""
    return endpoint_url[:-len("/mcp")] if endpoint_url.endswith("/mcp") else endpoint_url


def _surfaces(endpoint_url: str) -> list[str]:
    """REST, OpenAPI and the legacy SSE transport, next to the MCP view."""
    base = _esc(_base_url(endpoint_url))
    return ['<section id="other-surfaces"><h2>REST, OpenAPI and legacy SSE</h2>',
            f"<p>The same tools as plain JSON: <code>GET {base}/v1/tools</code> lists them; "
            f"<code>POST {base}/v1/tools/{{name}}</code> takes the arguments as a JSON object, and "
            f"<code>GET {base}/v1/tools/{{name}}?arg=value</code> takes them in the query string. A call answers "
            "the tool's <code>structuredContent</code>; a failure answers <code>{\"error\": \"invalid_argument: "
            "…\"}</code> with a 4xx or 5xx status. The same admission and limits apply as on the MCP endpoint.</p>",
            f'<p>OpenAPI 3.1 document of every operation: <a href="{base}/openapi.json">{base}/openapi.json</a> '
            "(import it into any OpenAPI client or GPT action).</p>",
            f"<p>MCP clients that speak only the 2024-11-05 HTTP+SSE transport connect to "
            f"<code>{base}/sse</code>; messages go to the per-session URL its <code>endpoint</code> event names.</p>",
            "</section>"]


def _tool(tool: Mapping[str, Any], endpoint_url: str) -> list[str]:
    name = str(tool.get("name", ""))
    parts = [f'<section class="tool" id="tool-{_esc(name)}"><h3>{_esc(name)}</h3>']
    if tool.get("title"):
        parts.append(f"<p><strong>{_esc(tool['title'])}</strong></p>")
    parts.append(f"<p>{_esc(tool.get('description', ''))}</p>")
    rows = parameter_rows(tool.get("inputSchema"))
    if rows:
        parts.append(_table("params", ["Parameter", "Type", "Required", "Default", "Description"], [
            [f"<code>{_esc(r['name'])}</code>", _esc(r["type"]), _esc(r["required"]),
             f"<code>{_esc(r['default'])}</code>" if r["default"] else "", _esc(r["description"])] for r in rows]))
    else:
        parts.append("<p>No parameters.</p>")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": tool.get("example", {})}}
    parts.append("<p>Example call:</p>")
    parts.append(_pre(_json(call), "example"))
    parts.append(_pre(_curl(endpoint_url, call), "command"))
    parts.append(f"<p>REST: <code>POST {_esc(_base_url(endpoint_url))}/v1/tools/{_esc(name)}</code> "
                 "with the arguments object as the body.</p>")
    for key, label in (("inputSchema", "Input schema"), ("outputSchema", "Output schema")):
        if key in tool:
            parts.append(f"<details><summary>{label}</summary>{_pre(_json(tool[key]))}</details>")
    parts.append("</section>")
    return parts


def render_html(doc: Mapping[str, Any]) -> str:
    """The whole page for a docs document (`docs.docs_document` plus the per-request fields)."""
    endpoint_url = str(doc.get("endpoint_url") or doc.get("endpoint", "/mcp"))
    tools = list(doc.get("tools") or [])
    parts = [
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(doc.get('name', ''))}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_esc(doc.get('name', ''))}</h1>",
        (f"<p>Version {_esc(doc.get('version', ''))}. Anonymous, read-only MCP server for the Papers With Code "
         f"catalog. Endpoint: <code>POST {_esc(endpoint_url)}</code>. Machine-readable: "
         '<a href="/docs?format=json">/docs?format=json</a>.</p>'),
        ('<nav><a href="#connect">Connect</a> · <a href="#protocols">Protocol versions</a> · '
         '<a href="#limits">Limits</a> · <a href="#resource-templates">Resources</a> · '
         '<a href="#prompts">Prompts</a> · <a href="#other-surfaces">REST and SSE</a> · '
         '<a href="#tools">Tools</a></nav>'),
    ]
    parts += _connect(doc) + _protocols(doc) + _limits(doc) + _catalogue(doc) + _surfaces(endpoint_url)
    parts.append(f'<section id="tools"><h2>Tools ({len(tools)})</h2><ul>')
    parts += [f'<li><a href="#tool-{_esc(t.get("name", ""))}">{_esc(t.get("name", ""))}</a></li>' for t in tools]
    parts.append("</ul>")
    for tool in tools:
        parts += _tool(tool, endpoint_url)
    parts.append("</section></body></html>")
    return "".join(parts)
