"""``GET /docs``: the live tool schemas, as JSON or as a readable HTML page (docs/tool-contract.md §1.5).

JSON (``?format=json``, or an ``Accept`` that does not ask for ``text/html``):
``{"name", "version", "protocol_version", "endpoint": "/mcp", "tools": [{"name", "title",
"description", "inputSchema", "outputSchema", "annotations"}]}`` — the same schemas
``tools/list`` returns. HTML for browsers; every value is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from aiohttp import web
from pwc_mcp_core.version import LATEST_LEGACY_VERSION, SERVER_VERSION

__all__ = ["DocsPage", "docs_document", "render_html"]

_TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


def docs_document(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The docs JSON for the ``tools`` of the ``tools/list`` result."""
    return {
        "name": "Papers With Code MCP",
        "version": SERVER_VERSION,
        "protocol_version": LATEST_LEGACY_VERSION,
        "endpoint": "/mcp",
        "tools": [{key: tool[key] for key in _TOOL_FIELDS if key in tool} for tool in tools],
    }


def render_html(doc: dict[str, Any]) -> str:
    """A self-contained HTML page listing every tool; all text is HTML-escaped."""
    esc = html.escape
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{esc(doc['name'])}</title>",
        "<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
        "pre{background:#f5f5f5;padding:.75rem;overflow:auto}code{font-size:.9em}</style></head><body>",
        f"<h1>{esc(doc['name'])}</h1>",
        f"<p>Version {esc(str(doc['version']))}, MCP protocol {esc(doc['protocol_version'])}. "
        f"Endpoint: <code>POST {esc(doc['endpoint'])}</code>. "
        "Machine-readable: <a href=\"/docs?format=json\">/docs?format=json</a>.</p>",
        "<h2>Tools</h2><ul>",
    ]
    parts += [f"<li><a href=\"#{esc(t['name'])}\">{esc(t['name'])}</a></li>" for t in doc["tools"]]
    parts.append("</ul>")
    for tool in doc["tools"]:
        parts.append(f"<section id=\"{esc(tool['name'])}\"><h3>{esc(tool['name'])}</h3>")
        if tool.get("title"):
            parts.append(f"<p><strong>{esc(str(tool['title']))}</strong></p>")
        parts.append(f"<p>{esc(str(tool.get('description', '')))}</p>")
        for key, label in (("inputSchema", "Input schema"), ("outputSchema", "Output schema")):
            if key in tool:
                text = json.dumps(tool[key], indent=2, ensure_ascii=False)
                parts.append(f"<details><summary>{label}</summary><pre><code>{esc(text)}</code></pre></details>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "".join(parts)


def wants_html(request: web.Request) -> bool:
    """HTML only when not forced to JSON and ``Accept`` names ``text/html`` (browsers)."""
    if request.query.get("format", "").lower() == "json":
        return False
    if request.query.get("format", "").lower() == "html":
        return True
    return "text/html" in request.headers.get("Accept", "").lower()


class DocsPage:
    """``GET /docs``, rendered once at startup from the live tool list."""

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        doc = docs_document(tools)
        self._json = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        self._html = render_html(doc)

    async def handle(self, request: web.Request) -> web.Response:
        if wants_html(request):
            return web.Response(text=self._html, content_type="text/html", charset="utf-8")
        return web.Response(body=self._json, content_type="application/json")
